"""MLX's RoPE as a posenc peer: mx.fast.rope, through mlx-lm's RoPE classes, on the CPU.

mlx_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]: one row per dtype (mlx-f32, mlx-bf16, mlx-f16;
peers/peer_driver.py writes the reports). Each test group becomes what an mlx-lm model builds from
a Hugging Face config: `mlx_lm.models.rope_utils.initialize_rope(dims, base, traditional,
scaling_config, max_position_embeddings)` (mlx 0.32.4, mlx-lm 0.32.2), which returns
- nn.RoPE for default and linear (mx.fast.rope with base, and scale = 1/factor for linear),
- DynamicNTKScalingRoPE (dynamic: base from max(rows + offset, max_position_embeddings)),
- Llama3RoPE, YarnRoPE, SuScaledRoPE (longrope), ProportionalRoPE: mx.fast.rope with `freqs`
  (their wavelengths 1/theta, computed in float32 by mlx) and, for YaRN and LongRoPE, the input
  multiplied by the attention factor before the rotation;
and the model calls it on x of shape (batch, heads, tokens, head_dim) with `offset` the first
token's position. Here: batch 1, heads 1, one token at offset = the case's position (dynamic:
seq_len - position tokens, the case's x first, so that rows + offset is the case's seq_len).
dims is rotary_dim (standard partial rotary: mx.fast.rope rotates the first dims elements and
copies the rest, as mlx-lm's partial-rotary models call it) or head_dim (proportional);
traditional is the interleaved layout. The model dtype is x's (float32, bfloat16, float16).

Outputs: rotations; logits (the rotated q and k multiplied with mx.matmul in the dtype, as the
attention's q @ k.T); table rows as the kernel forms them: mx.fast.rope of the vector with 1 in
each pair's first element and 0 in its second gives y_a = m cos t_i, y_b = m sin t_i (x_a cos -
x_b sin with x_b = 0, exactly). Not supported: frequencies (mx.fast.rope takes them in and gives
rotations out), the backward rotation, ntk scaling, M-RoPE with distinct axes (mlx-lm's mrope is
nn.RoPE of one position per token), config keys initialize_rope does not read (they are listed).
"""
import math
import sys

import mlx.core as mx
import numpy as np
from mlx_lm.models.rope_utils import initialize_rope

import peer_driver
from peer_driver import Unsupported

MLX_VERSION = mx.__version__
try:
    from importlib.metadata import version as _version
    MLX_LM_VERSION = _version("mlx-lm")
except Exception:  # noqa: BLE001 (a version string only)
    MLX_LM_VERSION = "unknown"
DTYPES = {"f32": mx.float32, "bf16": mx.bfloat16, "f16": mx.float16}
# The keys of rope_parameters that initialize_rope passes on, per rope_type (mlx_lm/models/rope_utils.py).
READ = {
    "default": set(),
    "linear": {"factor"},
    "dynamic": {"factor"},
    "llama3": {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
    "yarn": {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim"},
    "longrope": {"short_factor", "long_factor", "original_max_position_embeddings", "factor"},  # factor: below
    "proportional": {"partial_rotary_factor", "factor"},
}
# Dynamic NTK takes seq_len from the call's rows (x.shape[-2] + offset): a forward of more rows than
# this (seq_len - position) is not run here (memory), and is listed as unsupported.
MAX_ROWS = 16384


class Mlx:
    name = "mlx"
    framework = "MLX (mlx-lm RoPE classes, mx.fast.rope)"
    version = f"mlx {MLX_VERSION}, mlx-lm {MLX_LM_VERSION}"
    rows = {"f32": ("f32", "float32"), "bf16": ("bf16", "bfloat16"), "f16": ("f16", "float16")}
    working_format = "f32"  # mx.fast.rope forms its angles in float32 in every dtype

    def describe(self, row):
        return f"mlx-{row}: mlx {MLX_VERSION} mx.fast.rope via mlx-lm {MLX_LM_VERSION} initialize_rope, CPU, dtype {row}"

    def prepare(self, case, group):
        p = case.params
        if p["inverse"]:
            raise Unsupported("the backward rotation: mx.fast.rope and mlx-lm's classes rotate forward only")
        if p["scaling"]["kind"] == "ntk":
            raise Unsupported("ntk: no rope_type of mlx-lm's initialize_rope says it")
        hf = case.hf_rope_config()  # raises for invalid parameters
        rp = dict(hf["rope_parameters"])
        rope_type, base = rp.pop("rope_type"), rp.pop("rope_theta")
        if "mrope_section" in rp:
            raise Unsupported("M-RoPE: mlx-lm's mrope (initialize_rope) is nn.RoPE of one position per token, "
                              "so no call says distinct positions per axis")
        if rope_type not in READ:
            raise Unsupported(f"rope_type '{rope_type}': not in mlx-lm's initialize_rope")
        if rope_type == "yarn" and rp.get("truncate") is True:
            del rp["truncate"]  # YarnRoPE always floors and ceils the correction range (truncate false: unsupported)
        extra = set(rp) - READ[rope_type] - ({"partial_rotary_factor"} if p["partial"] == "standard" else set())
        if extra:
            said = ", ".join(f"{k} {rp[k]!r}" for k in sorted(extra))
            raise Unsupported(f"rope_type '{rope_type}' with {said}: not read by mlx-lm's initialize_rope")
        if rope_type in ("dynamic", "longrope") and "seq_len" not in p["scaling"]:
            raise Unsupported(f"{rope_type} without seq_len (mlx-lm takes it from the call)")
        dims = p["head_dim"] if p["partial"] == "proportional" else p["rotary_dim"]
        scaling = None if rope_type == "default" else {"rope_type": rope_type, **rp}
        max_positions = None
        if rope_type == "dynamic":
            max_positions = int(hf["max_position_embeddings"])  # dynamic NTK's L0
        if rope_type == "longrope":
            # SuScaledRoPE takes the factor as max_position_embeddings / original_max_position_embeddings.
            extended = float(p["scaling"]["factor"]) * int(rp["original_max_position_embeddings"])
            if extended != int(extended):
                raise Unsupported(f"longrope factor {p['scaling']['factor']!r}: SuScaledRoPE takes it as "
                                  "max_position_embeddings / original_max_position_embeddings, and that product "
                                  "is not an integer")
            max_positions = int(extended)
        rope = initialize_rope(dims, base, p["layout"] == "interleaved", scaling, max_positions)
        rope.posenc_config = {"dims": dims, "base": base, "traditional": p["layout"] == "interleaved",
                              "scaling_config": scaling, "max_position_embeddings": max_positions}
        return rope

    def config(self, case, rope):
        return {"module": type(rope).__name__, "apply": "mx.fast.rope", "config": rope.posenc_config,
                "seqLen": case.params["scaling"].get("seq_len")}

    def outputs(self, case, rope, row):
        dtype = DTYPES[row]
        raw = case.raw
        if case.type == "rope_rotate":
            return self.rotate(case, rope, case.inputs(row)["x"], raw["position"], dtype)
        if case.type == "rope_table":
            return self.table(case, rope, raw["position"], dtype)
        if case.type == "rope_dot":
            v = case.inputs(row)
            q = self.rotate(case, rope, v["q"], raw["qPosition"], dtype, as_numpy=False)
            k = self.rotate(case, rope, v["k"], raw["kPosition"], dtype, as_numpy=False)
            return self.numpy(mx.matmul(q[None, :], k[:, None]).reshape(-1))
        raise Unsupported(f"{case.type}: mx.fast.rope takes the frequencies in and gives rotations out")

    @staticmethod
    def numpy(a):
        return np.array(a.astype(mx.float32)) if a.dtype == mx.bfloat16 else np.array(a)

    def rotate(self, case, rope, x, position, dtype, as_numpy=True):
        axes = position if isinstance(position, list) else [position]
        if len(axes) != 1:
            raise Unsupported("a position of several axes")
        p = int(axes[0])
        rows = 1
        seq_len = case.params["scaling"].get("seq_len")
        if case.params["scaling"]["kind"] == "dynamic":
            rows = int(seq_len) - p
            if not 1 <= rows <= MAX_ROWS:
                raise Unsupported(f"dynamic at seq_len - position outside [1, {MAX_ROWS}]: the forward whose rows + "
                                  "offset make the case's seq_len is not run here (memory)")
        a = np.zeros((1, 1, rows, len(x)), dtype=np.float32)
        a[0, 0, 0] = np.asarray(x, dtype=np.float32)  # exact: the inputs are values of the format
        y = rope(mx.array(a).astype(dtype), offset=p)[0, 0, 0]
        mx.eval(y)
        return self.numpy(y) if as_numpy else y

    def table(self, case, rope, position, dtype):
        """[m cos t_i..., m sin t_i...] over the span's pairs: the rotation of the vector with 1 in
        each pair's first element (layout half: 0..n/2-1; interleaved: the even ones)."""
        p = case.params
        n = p["head_dim"] if p["partial"] == "proportional" else p["rotary_dim"]
        e = np.zeros(p["head_dim"], dtype=np.float32)
        first = np.arange(n // 2) if p["layout"] == "half" else 2 * np.arange(n // 2)
        second = first + n // 2 if p["layout"] == "half" else first + 1
        e[first] = 1.0
        y = self.rotate(case, rope, e, position, dtype)
        return np.concatenate([y[first], y[second]])


if __name__ == "__main__":
    peer_driver.run(Mlx(), *sys.argv[1:])
