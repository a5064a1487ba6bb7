"""Hugging Face transformers 4.x's RoPE run on one posenc vector case (the peer's computation, no
judging): the adapter of transformers 4.49.0, whose API (rope_scaling, ROPE_INIT_FUNCTIONS with
"default", Qwen2-VL's apply_multimodal_rotary_pos_emb) transformers 5 replaced (hf_rope.py). It
runs beside 5.x because its verdicts differ (peers/transformers/README.md says where).

Everything numeric here is transformers' own code, called as its models call it:
- frequencies: modeling_rope_utils.ROPE_INIT_FUNCTIONS[rope_type](config, device, seq_len);
- cos/sin: a model's rotary-embedding module, constructed from the config and called with
  (x, position_ids): LlamaRotaryEmbedding (every rope_type but longrope), Phi3RotaryEmbedding
  (longrope: Phi-3 is the model that runs it, and only its module switches the short and long
  factors by the forward's seq_len, `_longrope_frequency_update`), Qwen2VLRotaryEmbedding (M-RoPE);
- rotation: Llama's apply_rotary_pos_emb (half layout), Qwen2-VL's apply_multimodal_rotary_pos_emb
  (M-RoPE), GPT-J's apply_rotary_pos_emb (interleaved layout, fed the first half of the module's
  cos/sin: GPT-J's own create_sinusoidal_positions knows only base 10000 and no scaling).
The only glue is the partial-rotary split (GPT-NeoX's and Phi's attention: rotate x[..., :rotary_dim],
copy the rest) and the forward that carries seq_len: dynamic NTK and LongRoPE take seq_len as
max(position_ids) + 1 of the forward (SPEC.md 2.4), so their forward's position_ids hold seq_len - 1
too. The model dtype (float32 as shipped, bfloat16, float16) is the dtype of x, q and k; the module
keeps inv_freq in float32 (as from_pretrained(torch_dtype=...) leaves a non-persistent buffer) and
casts cos/sin to x's dtype, as transformers does.
"""
import copy

import torch

import peer_driver
import transformers
from transformers import LlamaConfig, Phi3Config, Qwen2VLConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb as gptj_apply_rotary_pos_emb
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_apply_rotary_pos_emb
from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding
from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding, apply_multimodal_rotary_pos_emb

VERSION = transformers.__version__
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


Unsupported = peer_driver.Unsupported  # a case this version of transformers has no code for


# Keys of rope_parameters that this version's rope functions read, per rope_type (modeling_rope_utils.py,
# _compute_*_parameters and the _validate_* functions); any other key the case needs is a parameter
# this version cannot be told.
_READ = {
    "default": set(),
    "linear": {"factor"},
    "dynamic": {"factor", "original_max_position_embeddings"},
    "yarn": {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "attention_factor"},
    "llama3": {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
    "longrope": {"factor", "original_max_position_embeddings", "short_factor", "long_factor", "attention_factor"},
}


def model_config(case):
    """The transformers config a case becomes: (kind, config kwargs as plain JSON, seq_len or None).
    kind names the rotary module: llama, phi3 or qwen2_vl. Raises Unsupported."""
    p = case.params
    hf = case.hf_rope_config()  # raises for inverse and ntk (no config can say them)
    rp = dict(hf["rope_parameters"])
    rope_type = rp.pop("rope_type")
    theta = rp.pop("rope_theta")
    head_dim = hf["head_dim"]
    if p["partial"] != "standard":
        raise Unsupported(f"partial rotary '{p['partial']}': transformers {VERSION} has no proportional RoPE "
                          "(its rope functions take dim = head_dim * partial_rotary_factor, the standard convention)")
    if p["layout"] == "interleaved" and "mrope_section" in p:
        raise Unsupported("M-RoPE in the interleaved layout: Qwen2-VL's apply_multimodal_rotary_pos_emb is half layout")
    if rope_type not in _READ:
        raise Unsupported(f"rope_type '{rope_type}': not in ROPE_INIT_FUNCTIONS of transformers {VERSION}")
    if rope_type == "yarn" and rp.get("truncate") is True:
        del rp["truncate"]  # this version always truncates (floor/ceil in find_correction_range)
    extra = set(rp) - _READ[rope_type] - {"mrope_section", "partial_rotary_factor"}
    if extra:
        said = ", ".join(f"{k} {rp[k]!r}" for k in sorted(extra))
        raise Unsupported(f"rope_type '{rope_type}' with {said}: not read by transformers "
                          f"{VERSION}'s _compute_{rope_type}_parameters")
    cfg = {"hidden_size": head_dim, "num_attention_heads": 1, "head_dim": head_dim, "rope_theta": theta}
    prf = hf.get("partial_rotary_factor", rp.pop("partial_rotary_factor", None))
    if prf is not None:
        if int(head_dim * prf) != p["rotary_dim"]:
            raise Unsupported(f"rotary_dim {p['rotary_dim']}: int(head_dim * partial_rotary_factor) = "
                              f"{int(head_dim * prf)} for the factor {prf!r}")
        cfg["partial_rotary_factor"] = prf
    seq_len = None
    scaling = {"rope_type": rope_type, **rp}
    # This version's dynamic and yarn functions take L0 from config.max_position_embeddings (they read no
    # original_max_position_embeddings), so the model config's max_position_embeddings is L0.
    # (dynamic: the fragment has L0 as the top-level max_position_embeddings already.)
    orig = rp.get("original_max_position_embeddings", hf.get("max_position_embeddings"))
    if orig is not None:
        cfg["max_position_embeddings"] = int(orig)
    if rope_type == "yarn":
        del scaling["original_max_position_embeddings"]
    if rope_type == "llama3":  # not read by llama3; past L0 as in Llama 3.1's config (else validation warns)
        cfg["max_position_embeddings"] = 2 * int(orig)
    if rope_type in ("dynamic", "longrope"):
        if "seq_len" not in p["scaling"]:
            raise Unsupported(f"{rope_type} without seq_len: in transformers seq_len is the forward's "
                              "max(position_ids) + 1, not a config key, so no config lacks it")
        seq_len = int(p["scaling"]["seq_len"])
    kind = "llama"
    if "mrope_section" in p:
        if rope_type == "longrope":
            raise Unsupported("M-RoPE with longrope: Qwen2VLRotaryEmbedding does not switch LongRoPE's short and "
                              "long factors (only Phi-3's module does)")
        if len(p["mrope_section"]) != 3:
            raise Unsupported(f"M-RoPE with {len(p['mrope_section'])} sections: Qwen2-VL's "
                              "apply_multimodal_rotary_pos_emb has three axes (section i takes axis i % 3)")
        kind = "qwen2_vl"
        scaling = dict(scaling, mrope_section=list(p["mrope_section"]))
        if rope_type == "default":
            scaling = {"type": "mrope", "mrope_section": list(p["mrope_section"])}
    if rope_type == "longrope":
        # Phi-3's config: max_position_embeddings the extended length, original_max_position_embeddings
        # at the top level; _compute_longrope_parameters then takes their ratio as the factor (a
        # rope_scaling factor is not read when the config has original_max_position_embeddings).
        kind = "phi3"
        factor = float(rp["factor"])
        extended = factor * int(orig)
        if extended != int(extended):
            raise Unsupported(f"longrope factor {factor!r}: transformers {VERSION} takes the factor as "
                              f"max_position_embeddings / original_max_position_embeddings, and {factor!r} * {orig} "
                              "is not an integer")
        cfg["max_position_embeddings"] = int(extended)
        cfg["original_max_position_embeddings"] = int(orig)
        scaling = {"type": "longrope", **{k: rp[k] for k in ("short_factor", "long_factor", "attention_factor")
                                          if k in rp}}
    if not (rope_type == "default" and kind == "llama"):
        cfg["rope_scaling"] = scaling
    return kind, cfg, seq_len


_CONFIG_CLASS = {"llama": LlamaConfig, "phi3": Phi3Config, "qwen2_vl": Qwen2VLConfig}
_MODULE_CLASS = {"llama": LlamaRotaryEmbedding, "phi3": Phi3RotaryEmbedding, "qwen2_vl": Qwen2VLRotaryEmbedding}


class Model:
    """A case's config as transformers objects: the config, its rotary module and its frequencies."""

    def __init__(self, kind, cfg, seq_len):
        self.kind, self.cfg, self.seq_len = kind, cfg, seq_len
        self.config = _CONFIG_CLASS[kind](**copy.deepcopy(cfg))
        self.module = _MODULE_CLASS[kind](config=self.config)
        self.rotary_dim = 2 * self.module.inv_freq.shape[0]
        self.mrope_section = cfg.get("rope_scaling", {}).get("mrope_section")

    def frequencies(self):
        """[inv_freq..., attention factor] from ROPE_INIT_FUNCTIONS, called with the forward's seq_len
        as the modules pass it: dynamic, a tensor max(position_ids) + 1 (`_dynamic_frequency_update`);
        longrope, an int (`_longrope_frequency_update` passes original + 1 for the long factors, none
        for the short ones, which select as seq_len itself does)."""
        rope_type = self.module.rope_type
        seq_len = self.seq_len
        if rope_type == "dynamic":
            seq_len = torch.tensor(seq_len)
        inv_freq, attention = ROPE_INIT_FUNCTIONS[rope_type](self.config, None, seq_len=seq_len)
        return torch.cat([inv_freq.float(), torch.tensor([float(attention)], dtype=torch.float32)])

    def module_cos_sin(self, positions, dtype):
        """The rotary module's (cos, sin) for one forward over positions (a list of per-axis
        position lists), x of dtype: as the module returns them, (batch 1, P, rotary_dim), M-RoPE
        (3, 1, P, rotary_dim). Dynamic NTK and LongRoPE add seq_len - 1 to the forward's positions
        (the forward that makes seq_len, SPEC.md 2.4) and drop it from the answer."""
        axes = 3 if self.kind == "qwen2_vl" else 1
        if any(len(p) != axes for p in positions):
            raise Unsupported(f"a position of {len(positions[0])} coordinates for a model of {axes} axis(es): "
                              "position_ids hold exactly that many per token, so no forward says it")
        ids = [list(p) for p in positions]
        if self.seq_len is not None:
            ids.append([self.seq_len - 1] * len(ids[0]))
        x = torch.zeros(1, dtype=dtype)
        if self.kind == "qwen2_vl":
            cos, sin = self.module(x, torch.tensor(ids, dtype=torch.int64).T[:, None, :])
        else:
            cos, sin = self.module(x, torch.tensor([i[0] for i in ids], dtype=torch.int64)[None, :])
        return cos[..., :len(positions), :], sin[..., :len(positions), :]

    def table(self, position, dtype):
        """[m cos t_i..., m sin t_i...] over the rotary_dim/2 pairs at one position (M-RoPE: each
        pair's axis picked as apply_multimodal_rotary_pos_emb picks it)."""
        cos, sin = self.module_cos_sin([position], dtype)
        if self.kind == "qwen2_vl":
            sections = self.mrope_section * 2
            cos = torch.cat([m[i % 3] for i, m in enumerate(cos.split(sections, dim=-1))], dim=-1)
            sin = torch.cat([m[i % 3] for i, m in enumerate(sin.split(sections, dim=-1))], dim=-1)
        n = self.rotary_dim // 2
        return torch.cat([cos.reshape(-1)[:n], sin.reshape(-1)[:n]])

    def rotate(self, x, position, layout, dtype):
        """x (head_dim values, a tensor of dtype) rotated at position, as the attention does it:
        q of shape (batch 1, heads 1, seq 1, head_dim) (GPT-J: (batch, seq, heads, head_dim)),
        x[..., :rotary_dim] rotated and the rest copied (GPT-NeoX's and Phi's partial rotary)."""
        cos, sin = self.module_cos_sin([position], dtype)
        n = self.rotary_dim
        q = x.reshape(1, 1, 1, -1)
        rot, rest = q[..., :n], q[..., n:]
        if self.kind == "qwen2_vl":
            rot, _ = apply_multimodal_rotary_pos_emb(rot, rot, cos, sin, self.mrope_section)
        elif layout == "half":
            rot, _ = llama_apply_rotary_pos_emb(rot, rot, cos, sin)
        else:
            rot = gptj_apply_rotary_pos_emb(rot, sin[..., : n // 2], cos[..., : n // 2])
        return torch.cat([rot, rest], dim=-1).reshape(-1)


def build(case):
    """The Model of a case (raises Unsupported, or what transformers raises for its config)."""
    return Model(*model_config(case))


def apply_function(kind, layout):
    """The name of the apply function a case's rotation runs (see rotate)."""
    if kind == "qwen2_vl":
        return "qwen2_vl.apply_multimodal_rotary_pos_emb"
    return "llama.apply_rotary_pos_emb" if layout == "half" else "gptj.apply_rotary_pos_emb"


def describe():
    return f"transformers {VERSION} (torch {torch.__version__})"
