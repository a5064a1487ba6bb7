"""MLX's mx.fast.scaled_dot_product_attention after mx.fast.rope, as a posenc attention peer (CPU).

What runs, as an mlx-lm model's attention runs it (mlx_lm/models/llama.py, Attention.__call__):
- RoPE: the module mlx_lm.models.rope_utils.initialize_rope(dims, base, traditional,
  scaling_config, max_position_embeddings) builds from the case's rope as a Hugging Face config
  (Case.hf_rope_config()): nn.RoPE (mx.fast.rope with base, and scale 1/factor for linear),
  Llama3RoPE, YarnRoPE (mx.fast.rope with mlx's own float32 frequencies); called on q and on k,
  shaped [1, heads, tokens, head_dim], with `offset` the first token's position (mlx-lm's cache
  offset), so each side's positions must be consecutive.
- attention: mx.fast.scaled_dot_product_attention(q, k, v, scale=..., mask=...) with k and v of
  kv_heads heads (MLX groups query heads as posenc does); mask: None for a decode row that sees
  every key (mlx-lm's single-token step), "causal" for a square causal block, a boolean
  [queries, keys] array for an explicit mask (True: attend).
The CPU has no fused kernel: MLX runs the op's fallback (mlx/fast.cpp), q·scale in the dtype,
matmul(q, kᵀ) in the dtype, softmax(precise=True) (float32 inside, the result in the dtype), then
matmul(P, v) in the dtype. So in bfloat16 and float16 the scores and the probabilities are rounded
to the dtype: declared S and P bf16 or f16 (the scale, rounded to the dtype, is a score rounding
too). O alone is judged (the op returns no L).
"""
import sys

import mlx.core as mx
import numpy as np
from mlx_lm.models.rope_utils import initialize_rope

import attention_driver
from attention_driver import Row, Unsupported

try:
    from importlib.metadata import version as _version
    MLX_LM_VERSION = _version("mlx-lm")
except Exception:  # noqa: BLE001 (a version string only)
    MLX_LM_VERSION = "unknown"
DTYPES = {"f32": mx.float32, "bf16": mx.bfloat16, "f16": mx.float16}
ROUNDED = {"f32": None, "bf16": "bf16", "f16": "f16"}
# The rope_types and keys initialize_rope reads here (mlx_lm/models/rope_utils.py); the others are
# unsupported rather than passed where mlx-lm would ignore them.
READ = {
    "default": set(),
    "linear": {"factor"},
    "llama3": {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
    "yarn": {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim"},
}


def rope_module(case):
    p = case.params["rope"]
    hf = case.hf_rope_config()
    rp = dict(hf["rope_parameters"])
    rope_type, base = rp.pop("rope_type"), rp.pop("rope_theta")
    if rope_type not in READ:
        raise Unsupported(f"rope_type '{rope_type}': not run here (its length-dependent or per-axis inputs)")
    if p.get("mrope_section") or p["partial"] != "standard":
        raise Unsupported("M-RoPE or proportional rotary: not an initialize_rope of one position per token")
    if rope_type == "yarn" and rp.get("truncate") is True:
        del rp["truncate"]
    extra = set(rp) - READ[rope_type] - {"partial_rotary_factor"}
    if extra:
        raise Unsupported(f"rope_type '{rope_type}' with {', '.join(sorted(extra))}: not read by initialize_rope")
    scaling = None if rope_type == "default" else {"rope_type": rope_type, **rp}
    return initialize_rope(p["rotary_dim"], base, p["layout"] == "interleaved", scaling, None)


def first_of_consecutive(positions, side):
    first = [t[0] for t in positions]
    if first != list(range(first[0], first[0] + len(first))):
        raise Unsupported(f"{side} positions that are not consecutive: mx.fast.rope takes an offset")
    return first[0]


class MlxSdpaPeer:
    name = "mlx_sdpa"

    def __init__(self):
        version = f"mlx {mx.__version__}, mlx-lm {MLX_LM_VERSION}"
        self.rows = {fmt: Row(fmt=fmt, framework="MLX mx.fast.scaled_dot_product_attention after mx.fast.rope",
                              version=version, dtype=str(DTYPES[fmt]).split(".")[-1],
                              score_format=ROUNDED[fmt], probability_format=ROUNDED[fmt],
                              describe=f"mx.fast.scaled_dot_product_attention, {version}, CPU, dtype {fmt}")
                     for fmt in DTYPES}

    @staticmethod
    def tensor(x, dtype):
        return mx.array(np.ascontiguousarray(np.swapaxes(np.asarray(x, dtype=np.float32), 0, 1))[None]).astype(dtype)

    def attend(self, case, row):
        p = case.params
        dtype = DTYPES[row]
        if p.get("rope_table_given"):
            raise Unsupported("a given cos/sin table: mx.fast.rope computes its own")
        if "alibi" in p:
            raise Unsupported("ALiBi: mlx-lm's attention has no ALiBi bias")
        q, k, v = (self.tensor(case.inputs(row)[n], dtype) for n in ("q", "k", "v"))  # [1, heads, tokens, dim]
        if "rope" in p:
            rope = rope_module(case)
            pos = case.positions()
            q = rope(q, offset=first_of_consecutive(pos["queryPositions"], "query"))
            k = rope(k, offset=first_of_consecutive(pos["keyPositions"], "key"))
        nq, nk = q.shape[2], k.shape[2]
        mask = None
        if p["mask"] == "causal" and nq > 1:
            if nq != nk:
                raise Unsupported("a causal block of fewer queries than keys: not a call mlx-lm makes")
            mask = "causal"
        elif p["mask"] == "explicit":
            mask = mx.array(attention_driver.visible(case))
        o = mx.fast.scaled_dot_product_attention(q, k, v, scale=attention_driver.softmax_scale(case), mask=mask)
        o = np.array(o[0].astype(mx.float32))  # [H, nq, dv], values of the dtype
        return np.swapaxes(o, 0, 1), None


def main():
    """mlx_sdpa_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]"""
    cli, out, profile = sys.argv[1:4]
    filter_ = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    mx.set_default_device(mx.cpu)
    attention_driver.run(MlxSdpaPeer(), cli, out, profile, filter_)


if __name__ == "__main__":
    main()
