"""Hugging Face transformers' RoPE run on one posenc vector case (the peer's computation, no judging).

Everything numeric here is transformers' own code, called as its models call it:
- the config: the model's config class built from the case's `rope_parameters` (transformers'
  own standardization and validation run on it);
- frequencies and cos/sin: a model's rotary-embedding module constructed from that config (its
  `compute_default_rope_parameters` for rope_type default, else
  `modeling_rope_utils.ROPE_INIT_FUNCTIONS[rope_type]`) and called with (x, position_ids), which
  runs `dynamic_rope_update` (dynamic NTK's recompute, LongRoPE's short/long switch);
  LlamaRotaryEmbedding, GPTNeoXRotaryEmbedding (standard partial rotary: Llama's default
  frequencies ignore partial_rotary_factor, GPT-NeoX's read it), Phi3RotaryEmbedding (longrope),
  Qwen2VLRotaryEmbedding (M-RoPE), Gemma4TextRotaryEmbedding (proportional: Gemma 4's
  full-attention layers);
- rotation: the model's apply_rotary_pos_emb (Llama's; GPT-NeoX's and Phi-3's, which rotate
  x[..., :rotary_dim] and copy the rest; Gemma 4's), or GPT-J's (interleaved layout, fed the first
  half of the module's cos/sin: GPT-J's own create_sinusoidal_positions knows only base 10000 and no
  scaling; its attention rotates x[..., :rotary_dim] and copies the rest, done here as it does).
Dynamic NTK and LongRoPE take seq_len as max(position_ids) + 1 of the forward (SPEC.md 2.4), so
their forward's position_ids hold seq_len - 1 too. The model dtype (float32 as shipped, bfloat16,
float16) is the dtype of x, q and k; the module keeps inv_freq in float32 (as
from_pretrained(dtype=...) leaves a non-persistent buffer) and casts cos/sin to x's dtype, as
transformers does.
"""
import copy

import torch

import peer_driver
import transformers
from transformers import GPTNeoXConfig, LlamaConfig, Phi3Config
from transformers.models.gemma4.configuration_gemma4 import Gemma4TextConfig
from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding
from transformers.models.gemma4.modeling_gemma4 import apply_rotary_pos_emb as gemma4_apply_rotary_pos_emb
from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding
from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb as neox_apply_rotary_pos_emb
from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb as gptj_apply_rotary_pos_emb
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_apply_rotary_pos_emb
from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding
from transformers.models.phi3.modeling_phi3 import apply_rotary_pos_emb as phi3_apply_rotary_pos_emb
from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig
from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding
from transformers.models.qwen2_vl.modeling_qwen2_vl import apply_rotary_pos_emb as qwen2_vl_apply_rotary_pos_emb
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

VERSION = transformers.__version__
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
# Gemma 4's layer type whose rope_parameters are proportional (Gemma4TextConfig's default).
GEMMA4_LAYER = "full_attention"


Unsupported = peer_driver.Unsupported  # a case this version of transformers has no code for


def model_config(case):
    """The transformers config a case becomes: (kind, config kwargs as plain JSON, seq_len or None).
    kind names the model whose rotary module and apply function run it: llama, gpt_neox, phi3,
    qwen2_vl or gemma4. Raises Unsupported."""
    p = case.params
    hf = case.hf_rope_config()  # raises for inverse and ntk (no config can say them)
    rp = dict(hf["rope_parameters"])
    rope_type = rp["rope_type"]
    head_dim = hf["head_dim"]
    if rope_type != "default" and rope_type not in ROPE_INIT_FUNCTIONS:
        raise Unsupported(f"rope_type '{rope_type}': not in ROPE_INIT_FUNCTIONS of transformers {VERSION}")
    if p["layout"] == "interleaved" and "mrope_section" in p:
        raise Unsupported("M-RoPE in the interleaved layout: Qwen2-VL's rotation is rotate_half (half layout)")
    if "partial_rotary_factor" in rp and int(head_dim * rp["partial_rotary_factor"]) != p["rotary_dim"]:
        raise Unsupported(f"rotary_dim {p['rotary_dim']}: int(head_dim * partial_rotary_factor) = "
                          f"{int(head_dim * rp['partial_rotary_factor'])} for the factor {rp['partial_rotary_factor']!r}")
    if rope_type in ("dynamic", "longrope") and "seq_len" not in p["scaling"]:
        raise Unsupported(f"{rope_type} without seq_len: in transformers seq_len is the forward's "
                          "max(position_ids) + 1, not a config key, so no config lacks it")
    seq_len = int(p["scaling"]["seq_len"]) if rope_type in ("dynamic", "longrope") else None
    # max_position_embeddings: dynamic NTK's L0 (the fragment's top level); for the others it is
    # only the module's cache length, read by no rope function but validated against
    # original_max_position_embeddings (llama3 warns unless it is larger, yarn unless factor
    # times it): the extended length, as a long-context model's config has it.
    orig = rp.get("original_max_position_embeddings")
    if "max_position_embeddings" in hf:
        max_positions = int(hf["max_position_embeddings"])
    elif orig is not None and "factor" in rp:
        max_positions = max(int(orig) + 1, int(float(rp["factor"]) * int(orig)))
    else:
        max_positions = 4096
    cfg = {"num_attention_heads": 1, "max_position_embeddings": max_positions}
    if "mrope_section" in p:
        if len(p["mrope_section"]) != 3:
            raise Unsupported(f"M-RoPE with {len(p['mrope_section'])} sections: Qwen2-VL's "
                              "recomposition_frequencies has three axes (section i takes axis i % 3)")
        if rope_type == "longrope":
            raise Unsupported("M-RoPE with longrope: no model runs LongRoPE's factors with Qwen2-VL's module")
        kind = "qwen2_vl"
    elif rope_type == "proportional":
        kind = "gemma4"
    elif rope_type == "longrope":
        kind = "phi3"
        # Phi-3's config: original_max_position_embeddings at the top level, which
        # standardize_rope_params copies into rope_parameters (over the one there).
        cfg["original_max_position_embeddings"] = int(orig)
    elif p["rotary_dim"] != head_dim:
        kind = "gpt_neox"
    else:
        kind = "llama"
    if kind == "gpt_neox":
        cfg["hidden_size"] = head_dim  # GPT-NeoX's head_dim is hidden_size / num_attention_heads
    else:
        cfg.update(hidden_size=head_dim, head_dim=head_dim)
    if kind == "gemma4":
        cfg.update(layer_types=[GEMMA4_LAYER], num_hidden_layers=1, global_head_dim=head_dim,
                   rope_parameters={GEMMA4_LAYER: rp})
    else:
        cfg["rope_parameters"] = rp
    return kind, cfg, seq_len


_CONFIG_CLASS = {"llama": LlamaConfig, "gpt_neox": GPTNeoXConfig, "phi3": Phi3Config, "qwen2_vl": Qwen2VLTextConfig,
                 "gemma4": Gemma4TextConfig}
_MODULE_CLASS = {"llama": LlamaRotaryEmbedding, "gpt_neox": GPTNeoXRotaryEmbedding, "phi3": Phi3RotaryEmbedding,
                 "qwen2_vl": Qwen2VLRotaryEmbedding, "gemma4": Gemma4TextRotaryEmbedding}
_APPLY = {"llama": llama_apply_rotary_pos_emb, "gpt_neox": neox_apply_rotary_pos_emb, "phi3": phi3_apply_rotary_pos_emb,
          "qwen2_vl": qwen2_vl_apply_rotary_pos_emb}


class Model:
    """A case's config as transformers objects: the config and its rotary module."""

    def __init__(self, kind, cfg, seq_len, rotary_dim):
        self.kind, self.cfg, self.seq_len = kind, cfg, seq_len
        self.config = _CONFIG_CLASS[kind](**copy.deepcopy(cfg))
        self.module = _MODULE_CLASS[kind](config=self.config)
        self.span = 2 * self._inv_freq().shape[0]  # the rotated span: rotary_dim, or head_dim (proportional)
        self.rotary_dim = rotary_dim
        if kind != "gemma4" and self.span != rotary_dim:
            raise Unsupported(f"rotary_dim {rotary_dim}: {type(self.module).__name__} computes "
                              f"{self.span // 2} frequencies (its default ignores partial_rotary_factor)")
        self.mrope_section = cfg["rope_parameters"].get("mrope_section") if kind == "qwen2_vl" else None

    def _inv_freq(self):
        return getattr(self.module, f"{GEMMA4_LAYER}_inv_freq" if self.kind == "gemma4" else "inv_freq")

    def _attention_scaling(self):
        if self.kind == "gemma4":
            return getattr(self.module, f"{GEMMA4_LAYER}_attention_scaling")
        return self.module.attention_scaling

    def frequencies(self):
        """[inv_freq..., attention factor] as the module holds them after the case's forward
        (dynamic NTK and LongRoPE: one with seq_len - 1 among its positions)."""
        self.module_cos_sin([[0] * (3 if self.kind == "qwen2_vl" else 1)], torch.float32)
        return torch.cat([self._inv_freq().float(), torch.tensor([float(self._attention_scaling())])])

    def module_cos_sin(self, positions, dtype):
        """The rotary module's (cos, sin) for one forward over positions (a list of per-axis
        position lists), x of dtype: (batch 1, P, span), M-RoPE's already recomposed per section.
        Dynamic NTK and LongRoPE add seq_len - 1 to the forward's positions (the forward that makes
        seq_len, SPEC.md 2.4) and drop it from the answer."""
        axes = 3 if self.kind == "qwen2_vl" else 1
        if any(len(p) != axes for p in positions):
            raise Unsupported(f"a position of {len(positions[0])} coordinates for a model of {axes} axis(es): "
                              "position_ids hold exactly that many per token, so no forward says it")
        ids = [list(p) for p in positions]
        if self.seq_len is not None:
            ids.append([self.seq_len - 1] * axes)
        x = torch.zeros(1, dtype=dtype)
        if self.kind == "qwen2_vl":
            cos, sin = self.module(x, torch.tensor(ids, dtype=torch.int64).T[:, None, :])
        elif self.kind == "gemma4":
            cos, sin = self.module(x, torch.tensor([i[0] for i in ids], dtype=torch.int64)[None, :], GEMMA4_LAYER)
        else:
            cos, sin = self.module(x, torch.tensor([i[0] for i in ids], dtype=torch.int64)[None, :])
        return cos[:, :len(positions), :], sin[:, :len(positions), :]

    def table(self, position, dtype):
        """[m cos t_i..., m sin t_i...] over the span/2 pairs at one position."""
        cos, sin = self.module_cos_sin([position], dtype)
        n = self.span // 2
        return torch.cat([cos.reshape(-1)[:n], sin.reshape(-1)[:n]])

    def rotate(self, x, position, layout, dtype):
        """x (head_dim values, a tensor of dtype) rotated at position, as the attention does it:
        q of shape (batch 1, heads 1, seq 1, head_dim) (GPT-J: (batch, seq, heads, head_dim))."""
        cos, sin = self.module_cos_sin([position], dtype)
        q = x.reshape(1, 1, 1, -1)
        if layout == "interleaved":
            n = self.span
            rot = gptj_apply_rotary_pos_emb(q[..., :n], sin[..., : n // 2], cos[..., : n // 2])
            return torch.cat([rot, q[..., n:]], dim=-1).reshape(-1)
        if self.kind == "gemma4":
            return gemma4_apply_rotary_pos_emb(q, cos, sin).reshape(-1)
        rot, _ = _APPLY[self.kind](q, q, cos, sin)
        return rot.reshape(-1)


def build(case):
    """The Model of a case (raises Unsupported, or what transformers raises for its config)."""
    kind, cfg, seq_len = model_config(case)
    return Model(kind, cfg, seq_len, case.params["rotary_dim"])


def apply_function(kind, layout):
    """The name of the apply function a case's rotation runs (see rotate)."""
    return f"{'gptj' if layout == 'interleaved' else kind}.apply_rotary_pos_emb"


def describe():
    return f"transformers {VERSION} (torch {torch.__version__})"
