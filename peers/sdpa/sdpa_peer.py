"""PyTorch's scaled_dot_product_attention, and transformers' own attention functions, after Hugging
Face's RoPE, as a posenc attention peer.

What runs, all of it the frameworks' own code, called as a Llama-style model's attention calls it:
- RoPE: transformers' LlamaRotaryEmbedding built from the case's rope as a config
  (Case.hf_rope_config(): rope_parameters, head_dim), called with (x, position_ids): inv_freq from
  its rope-init function, angles float32(position) · inv_freq in float32 with autocast off, cos and
  sin times the attention scaling, cast to the model dtype; then modeling_llama.apply_rotary_pos_emb
  (rotate_half) in the model dtype. q and k go through one forward whose position_ids hold the
  queries', the keys' and, for dynamic NTK and LongRoPE, seq_len - 1 (their frequencies follow the
  forward's largest position; SPEC.md 2.7 rotates every token with those of seq_len).
- ALiBi: transformers' BLOOM build_alibi_tensor (slopes in float32, the key-only form slope · key
  index, cast to the model dtype), added to the mask; it numbers keys 0 .. n-1, so only cases whose
  keys are at 0 .. n-1 are run.
- attention: torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask, scale,
  enable_gqa=True) on [1, heads, tokens, dim] tensors of the model dtype, inside
  torch.nn.attention.sdpa_kernel(SDPBackend.MATH) or (SDPBackend.FLASH_ATTENTION) (the CPU flash
  kernel); the mask a boolean [queries, keys] (True: attend), bottom-right causal as posenc
  defines it (SDPA's is_causal aligns top-left), with ALiBi a float mask of the model dtype
  (-inf where masked). scale: Hugging Face's head_dim ** -0.5 as a Python float (DeepSeek-V2's
  mscale² folded in as its attention does).

- transformers' attention functions, as a model with `attn_implementation="eager"` or `"sdpa"`
  calls them through ALL_ATTENTION_FUNCTIONS: modeling_llama.eager_attention_forward (repeat_kv,
  `matmul(q, kᵀ) * scaling` in the model dtype, the additive float mask of masking_utils.eager_mask:
  0 where a query sees a key, torch.finfo(dtype).min elsewhere, ALiBi's bias added to it; softmax
  in float32 cast back to the model dtype; `matmul(P, v)` in the model dtype), and
  integrations.sdpa_attention.sdpa_attention_forward (GQA by enable_gqa, repeat_kv or pack_gqa as
  it chooses; the boolean mask of masking_utils.sdpa_mask, or the float mask with ALiBi, so
  is_causal is off; the backend torch's dispatcher picks). The module they read is a stub with the
  attention's num_key_value_groups, is_causal and training off (dropout 0).

SDPA and these functions return O only, so O is judged alone (L is not exposed by the public call).

The declared formats (peers/sdpa/README.md says where in torch's source each comes from): the math
backend upcasts bf16/f16 q, k, v to float32 and computes everything in float32 (W f32, S and P
undeclared); the CPU flash kernel accumulates QKᵀ, the softmax and PV in float32 but converts P
to the input dtype before the PV gemm (P declared bf16 or f16 in those rows). transformers' eager
function rounds the scores to the model dtype (the matmul's output, then the product by scaling)
and the probabilities (the softmax's cast): S and P declared bf16 or f16; its sdpa function runs
the CPU flash kernel where the dispatcher can, else math: P declared as flash's (a declared
rounding the math backend does not make only widens the bound).
"""
import sys

import numpy as np
import torch
import transformers
from torch.nn.attention import SDPBackend, sdpa_kernel
from transformers import LlamaConfig
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.models.bloom.modeling_bloom import build_alibi_tensor
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb, eager_attention_forward

import attention_driver
from attention_driver import Row, Unsupported

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
BACKENDS = {"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION}
# The CPU flash kernel's declared probability format per storage format (see the docstring).
FLASH_P = {"f32": None, "bf16": "bf16", "f16": "f16"}
# transformers' attention functions (ALL_ATTENTION_FUNCTIONS' "eager" and "sdpa").
HF_FUNCTIONS = {"hf_eager": eager_attention_forward, "hf_sdpa": sdpa_attention_forward}


class AttentionModule(torch.nn.Module):
    """What transformers' attention functions read of the attention module calling them."""

    def __init__(self, groups):
        super().__init__()
        self.num_key_value_groups = groups
        self.is_causal = True
        self.eval()  # training off: dropout is not applied


def rotary(case):
    """transformers' rotary module for the case's rope, and the seq_len its forward must reach."""
    p = case.params["rope"]
    hf = case.hf_rope_config()  # raises for what no config can say
    rp = hf["rope_parameters"]
    if p["layout"] != "half" or hf.get("rope_interleave"):
        raise Unsupported("interleaved layout: Llama's apply_rotary_pos_emb rotates halves (rotate_half)")
    if p.get("mrope_section"):
        raise Unsupported("M-RoPE: Llama's rotary module has one position axis")
    if p["rotary_dim"] != p["head_dim"] or p["partial"] != "standard":
        raise Unsupported("partial rotary: Llama's rotary module rotates the whole head")
    seq_len = int(p["scaling"]["seq_len"]) if rp["rope_type"] in ("dynamic", "longrope") else None
    if rp["rope_type"] in ("dynamic", "longrope") and seq_len is None:
        raise Unsupported(f"{rp['rope_type']} without seq_len")
    extra = {k: v for k, v in hf.items() if k not in ("head_dim", "rope_parameters", "rope_interleave")}
    original = rp.get("original_max_position_embeddings", extra.get("max_position_embeddings", 4096))
    extra.setdefault("max_position_embeddings", int(original * rp.get("factor", 1)))
    config = LlamaConfig(head_dim=hf["head_dim"], hidden_size=hf["head_dim"], num_attention_heads=1,
                         rope_parameters=dict(rp), **extra)
    return LlamaRotaryEmbedding(config), seq_len


def rotate(case, q, k):
    """q [1, H, nq, d] and k [1, G, nk, d] rotated as a Llama model's attention does."""
    module, seq_len = rotary(case)
    pos = case.positions()
    positions = [t[0] for t in pos["queryPositions"]] + [t[0] for t in pos["keyPositions"]]
    if seq_len is not None:
        if max(positions) >= seq_len:
            raise Unsupported("a position at or past seq_len")
        positions.append(seq_len - 1)
    if max(abs(x) for x in positions) >= 2 ** 63:
        raise Unsupported("positions past int64")
    position_ids = torch.tensor([positions], dtype=torch.int64)
    cos, sin = module(q, position_ids)
    nq = q.shape[2]
    qr, _ = apply_rotary_pos_emb(q, q, cos[:, :nq], sin[:, :nq])
    _, kr = apply_rotary_pos_emb(k, k, cos[:, nq:nq + k.shape[2]], sin[:, nq:nq + k.shape[2]])
    return qr, kr


def alibi_bias(case, dtype):
    """BLOOM's ALiBi [H, 1, nk] (slope · key index), or None."""
    if "alibi" not in case.params:
        return None
    keys = [t[0] for t in case.positions()["keyPositions"]]
    if keys != list(range(len(keys))) or case.params["alibi"]["mode"] != "causal":
        raise Unsupported("ALiBi other than causal with keys at 0 .. n-1: BLOOM's build_alibi_tensor numbers keys "
                          "from the attention mask")
    ones = torch.ones((1, len(keys)), dtype=torch.int64)
    return build_alibi_tensor(ones, case.params["query_heads"], dtype)  # [H, 1, nk]


class SdpaPeer:
    name = "sdpa"

    def __init__(self):
        version = f"torch {torch.__version__.split('+')[0]}, transformers {transformers.__version__}"
        self.rows = {}
        for backend in BACKENDS:
            for fmt in DTYPES:
                p = FLASH_P[fmt] if backend == "flash" else None
                self.rows[f"{backend}-{fmt}"] = Row(
                    fmt=fmt, framework=f"PyTorch SDPA ({backend} backend) after HF RoPE", version=version,
                    dtype=str(DTYPES[fmt]), probability_format=p,
                    describe=f"scaled_dot_product_attention {backend} backend, {version}, dtype {DTYPES[fmt]}")
        for function in HF_FUNCTIONS:
            for fmt in DTYPES:
                reduced = FLASH_P[fmt]
                self.rows[f"{function}-{fmt}"] = Row(
                    fmt=fmt, framework=f"transformers {HF_FUNCTIONS[function].__name__} after HF RoPE",
                    version=version, dtype=str(DTYPES[fmt]), probability_format=reduced,
                    score_format=reduced if function == "hf_eager" else None,
                    describe=f"transformers {HF_FUNCTIONS[function].__name__}, {version}, dtype {DTYPES[fmt]}")

    def attend(self, case, row):
        backend, fmt = row.split("-")
        dtype = DTYPES[fmt]
        p = case.params
        if p.get("rope_table_given"):
            raise Unsupported("a given cos/sin table: the model computes its own")
        q = case.q(fmt, torch=True).transpose(0, 1)[None]  # [1, H, nq, d]
        k = case.k(fmt, torch=True).transpose(0, 1)[None]
        v = case.v(fmt, torch=True).transpose(0, 1)[None]
        if "rope" in p:
            q, k = rotate(case, q, k)
        mask = torch.from_numpy(attention_driver.visible(case))
        bias = alibi_bias(case, dtype)
        scale = attention_driver.softmax_scale(case)
        if backend in HF_FUNCTIONS:
            if backend == "hf_eager" or bias is not None:
                # masking_utils.eager_mask: 0 where visible, the dtype's smallest value elsewhere
                mask = torch.where(mask, torch.zeros((), dtype=dtype), torch.finfo(dtype).min)
                if bias is not None:
                    mask = mask[None] + bias  # [H, nq, nk]
            mask = mask.reshape(1, -1, *mask.shape[-2:])  # [1, 1 or H, nq, nk]
            module = AttentionModule(p["query_heads"] // p["kv_heads"])
            o, _ = HF_FUNCTIONS[backend](module, q, k, v, mask, scaling=scale, dropout=0.0)
            return o[0], None  # [nq, H, dv]
        if bias is not None:
            # [1, H, nq, nk]: the CPU flash kernel takes a 2-D or 4-D mask
            mask = (torch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, float("-inf"))[None] + bias)[None]
        with sdpa_kernel(BACKENDS[backend]):
            try:
                o = torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, attn_mask=mask, scale=scale, enable_gqa=True)
            except RuntimeError as e:
                if "No available kernel" in str(e):
                    raise Unsupported(f"{backend} backend refused the call (head_dim {p['head_dim']}, value_dim "
                                      f"{p['value_dim']}): {str(e).splitlines()[0]}") from None
                raise
        return o[0].transpose(0, 1), None  # [nq, H, dv]


def main():
    """sdpa_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]"""
    cli, out, profile = sys.argv[1:4]
    filter_ = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    torch.set_num_threads(1)
    attention_driver.run(SdpaPeer(), cli, out, profile, filter_)


if __name__ == "__main__":
    main()
