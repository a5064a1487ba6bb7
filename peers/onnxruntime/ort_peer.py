"""ONNX Runtime's RotaryEmbedding as a posenc peer, driven through the Python package (python/).

Two ops, each in a one-node model built with onnx.helper and run on the CPU execution provider:
- `com.microsoft` RotaryEmbedding (contrib op, domain com.microsoft, opset 1), inputs (input,
  position_ids, cos_cache, sin_cache);
- the standard RotaryEmbedding (ONNX opset 23), inputs (X, cos_cache, sin_cache, position_ids).

Their contract (ONNX Runtime 1.31.1, onnx 1.23.2 operator docs: contrib_ops/ContribOperators.md
and Operators.md RotaryEmbedding), and what this adapter passes:
- input: [batch, seq, num_heads * head_dim] (3-D); here batch 1, seq = the group's cases (one token
  each), num_heads 1.
- cos_cache, sin_cache: [max_position_id + 1, rotary_embedding_dim / 2], the input's dtype (f32
  or f16: both are the op's T). The op only gathers rows and rotates: the angles, the frequencies,
  every scaling and the attention factor live in the cache, which the caller computes. So the
  cache is the row's choice (two rows, below), and what is judged of ORT itself is the gather and
  the rotation arithmetic in the storage format (ORT's CPU kernel computes in T).
- position_ids: int64 [batch, seq], each in [0, cache rows): a row index, never a position value
  (outside it both ops fail the run: "position_ids value 2 at index 1 is out of range [0, 2)",
  INVALID_ARGUMENT, measured with 1.31.1). The adapter builds one cache row per token, for its position, and passes position_ids 0..seq-1,
  so any int64 position (negative, past 2^31) is mapped without a cache of 2^31 rows.
- interleaved: 1 for posenc's `interleaved` layout (pairs (2i, 2i+1)), 0 for `half` (pairs (i,
  i + rotary_dim/2) within the rotated span).
- rotary_embedding_dim: posenc's rotated span (rotary_dim, or head_dim for `proportional`, whose
  pairs past rotary_dim/2 get frequency 0, i.e. cos 1, sin 0 in the cache), given with num_heads
  (both ops require num_heads when the input is 3-D and rotary_embedding_dim is set); elements past
  it are copied.
- scale (contrib op only, a float attribute "custom scale", default 1.0): not set.
- inverse: the cache's sin negated (R(-t) = the transpose), as a backward pass would pass it.

Rows (peers/onnxruntime/run.sh writes one report per row):
- `framework`: the cache as transformers' rotary-embedding modules (and ORT's own model builders)
  compute it, in float32 with torch: inv_freq = 1 / base^(arange(0, D, 2) / D) (divided by factor
  for linear), angle = float32(position) * inv_freq in float32, cos/sin in float32, times the
  attention factor, then cast to the storage dtype. Only scaling none and linear: the framework way
  of the other scalings is transformers' rope-init functions, the transformers peer's business; they
  are unsupported in this row.
- `accurate`: the reference's certified table row (`posenc eval rope` without --x: m cos t_i,
  m sin t_i correctly rounded to the storage format), for every scaling, M-RoPE and proportional.
Not supported in either row: f64 (not a type T of either op: the model is refused, "Type
'tensor(double)' of input parameter (x) of operator (RotaryEmbedding)"), bf16 (the CPU execution
provider has no bf16 implementation: "Could not find an implementation for RotaryEmbedding(1)"
for the contrib op; for the standard one, "... for Mul(14)": with no bf16 kernel ORT falls back
to the op's ONNX function body, whose Mul has none either; both measured with 1.31.1), the cases whose output is not a rotation (tables, frequencies, logits: the op outputs a
rotated tensor only) and the invalid cases (the op takes a cache, not posenc's parameters).
"""
import functools
import json
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import TensorProto, helper

import posenc

OPS = ("contrib", "standard")
ROWS = ("framework", "accurate")
FORMATS = ("f32", "f16")
_ONNX_TYPE = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16}
_NUMPY = {"f32": np.float32, "f16": np.float16}


def span_of(params):
    """posenc's rotated span (SPEC.md 2.3): rotary_dim, or head_dim for proportional."""
    return params["head_dim"] if params["partial"] == "proportional" else params["rotary_dim"]


def why_unsupported(case, fmt, row):
    """None when the case can be run, else the reason."""
    if case.type != "rope_rotate":
        return f"{case.type}: the op outputs a rotated tensor only"
    if fmt not in FORMATS:
        return f"{fmt}: the ops run in float and float16 only on ORT's CPU execution provider"
    if row == "framework" and case.params["scaling"]["kind"] not in ("none", "linear"):
        return (f"scaling {case.params['scaling']['kind']}: its framework-way cache is transformers' rope-init "
                "function (the transformers peer)")
    if row == "framework" and (case.params.get("mrope_section") or case.params["partial"] == "proportional"):
        return "M-RoPE and proportional: their framework-way caches are transformers' (the transformers peer)"
    return None


def framework_rows(params, positions, fmt):
    """cos and sin cache rows as transformers' default/linear rotary embedding computes them
    (modeling_rope_utils._compute_default_rope_parameters, _compute_linear_scaling_rope_parameters,
    and the model's RotaryEmbedding.forward: float32 matmul of inv_freq by float32 positions, cos
    and sin in float32, times attention_scaling 1, cast to the dtype)."""
    dim = params["rotary_dim"]
    inv_freq = 1.0 / (params["base"] ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    if params["scaling"]["kind"] == "linear":
        inv_freq = inv_freq / params["scaling"]["factor"]
    t = torch.tensor(positions, dtype=torch.int64).float()
    freqs = t[:, None] @ inv_freq[None, :]  # [tokens, dim/2], float32
    cos, sin = freqs.cos(), freqs.sin()
    if params["inverse"]:
        sin = -sin
    dtype = torch.float32 if fmt == "f32" else torch.float16
    return cos.to(dtype).numpy(), sin.to(dtype).numpy()


def eval_args(params):
    """posenc eval rope's options for the case's parameters (floats as repr: exact round trip)."""
    args = ["--head-dim", str(params["head_dim"]), "--rotary-dim", str(params["rotary_dim"]),
            "--base", repr(params["base"]), "--layout", params["layout"], "--partial", params["partial"]]
    if params.get("mrope_section"):
        args += ["--mrope-section", ",".join(str(int(v)) for v in params["mrope_section"])]
    s = params["scaling"]
    args += ["--scaling", s["kind"]]
    for key, value in s.items():
        if key == "kind":
            continue
        flag = "--" + key.replace("_", "-")
        if isinstance(value, list):
            args += [flag, ",".join(repr(float(v)) for v in value)]
        elif isinstance(value, bool):
            args += [flag, "true" if value else "false"]
        else:
            args += [flag, repr(value) if isinstance(value, float) else str(value)]
    return args


@functools.lru_cache(maxsize=None)
def certified_row(cli, args, where):
    """`posenc eval rope ARGS --position WHERE --json`'s values, every format's rounding: one run
    per parameters and position, shared by both ops and both formats (each run is a process)."""
    out = subprocess.run([cli, "eval", "rope", *args, "--position", where, "--json"], check=True,
                         capture_output=True, text=True).stdout
    return tuple(json.loads(out)["values"])


def accurate_rows(cli, params, positions, fmt):
    """The reference's table rows (certified, correctly rounded to fmt); sin negated for inverse."""
    n = span_of(params) // 2
    cos = np.empty((len(positions), n), dtype=_NUMPY[fmt])
    sin = np.empty_like(cos)
    args = tuple(eval_args(params))
    for k, pos in enumerate(positions):
        row = certified_row(cli, args, ",".join(str(int(p)) for p in np.atleast_1d(pos)))
        values = [float.fromhex(v[fmt]) for v in row]
        cos[k], sin[k] = values[:n], values[n:]
    if params["inverse"]:
        sin = -sin
    return cos, sin


def session(op, fmt, head_dim, span, interleaved):
    """A one-node model of op over [1, S, head_dim] inputs, as an ORT CPU session."""
    t = _ONNX_TYPE[fmt]
    x = helper.make_tensor_value_info("x", t, [1, None, head_dim])
    pos = helper.make_tensor_value_info("pos", TensorProto.INT64, [1, None])
    cos = helper.make_tensor_value_info("cos", t, [None, span // 2])
    sin = helper.make_tensor_value_info("sin", t, [None, span // 2])
    attrs = {"interleaved": int(interleaved), "num_heads": 1}
    if span != head_dim:
        attrs["rotary_embedding_dim"] = span
    if op == "contrib":
        node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain="com.microsoft", **attrs)
        inputs, opsets = [x, pos, cos, sin], [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    else:
        node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], **attrs)
        inputs, opsets = [x, cos, sin, pos], [helper.make_opsetid("", 23)]
    graph = helper.make_graph([node], "rope", inputs, [helper.make_tensor_value_info("y", t, [1, None, head_dim])])
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def rotate(cli, op, row, fmt, cases):
    """ORT's outputs for cases of one group (same parameters), one token each: [len(cases), head_dim]."""
    params = cases[0].params
    positions = [c.positions()["position"] for c in cases]
    axes = [p if params.get("mrope_section") else int(np.atleast_1d(p)[0]) for p in positions]
    if row == "framework":
        cos, sin = framework_rows(params, axes, fmt)
    else:
        cos, sin = accurate_rows(cli, params, axes, fmt)
    x = np.stack([c.x(fmt) for c in cases]).astype(_NUMPY[fmt])[None]
    s = session(op, fmt, params["head_dim"], span_of(params), params["layout"] == "interleaved")
    feeds = {"x": x, "pos": np.arange(len(cases), dtype=np.int64)[None], "cos": cos, "sin": sin}
    return s.run(None, feeds)[0][0]


def run(cli, op, row, profile, report, filter=None):
    """Judges op in one row under profile through posenc serve; writes report; returns the lines of
    unsupported cases (file, the reason, how many)."""
    unsupported = {}
    implementation = f"onnxruntime {ort.__version__} RotaryEmbedding ({op} op, {row} cache)"
    with posenc.Session(profile=profile, formats=list(FORMATS), implementation=implementation,
                        report=report, checks="accuracy") as s:
        by_file = {}
        for case in s.cases(filter):
            by_file.setdefault(case.file, []).append(case)
        for file, cases in by_file.items():
            for fmt in FORMATS:
                answers, groups = [], {}
                for c in cases:
                    if fmt not in c.formats:
                        continue
                    why = why_unsupported(c, fmt, row)
                    if why:
                        answers.append((c, None, "unsupported"))
                        key = (file, why)
                        unsupported[key] = unsupported.get(key, 0) + 1
                    else:
                        groups.setdefault(c.group, []).append(c)
                for group in groups.values():
                    y = rotate(cli, op, row, fmt, group)
                    answers += [(c, y[k], "ok") for k, c in enumerate(group)]
                if answers:
                    s.submit_file(file, fmt, answers)
        summary = s.finish(filter=filter)
    lines = [f"{file}: {n} checks unsupported: {why}" for (file, why), n in sorted(unsupported.items())]
    lines.append("validation (the invalid cases): not checked: the op takes a cache, not posenc's parameters")
    return summary, lines


def main():
    """ort_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]: every op and row, in one process (one import
    of torch and onnxruntime): OUTDIR/onnxruntime-OP-ROW.PROFILE.json and .txt,
    OUTDIR/onnxruntime.unsupported.txt and OUTDIR/onnxruntime.rows.json."""
    cli, outdir, profile = sys.argv[1:4]
    filter = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    posenc_filter = filter.replace(",", " ").split() if filter else None
    with open(f"{outdir}/onnxruntime.rows.json", "w") as rows:  # the table's columns (peers/README.md)
        json.dump({f"onnxruntime-{op}-{row}": {"framework": f"ONNX Runtime RotaryEmbedding ({op} op, {row} cache)",
                                               "version": f"{ort.__version__} (onnx {onnx.__version__})",
                                               "dtype": "float32, float16"} for op in OPS for row in ROWS}, rows, indent=1)
    with open(f"{outdir}/onnxruntime.unsupported.txt", "w") as unsupported:
        for op in OPS:
            for row in ROWS:
                name = f"{outdir}/onnxruntime-{op}-{row}.{profile}"
                summary, lines = run(cli, op, row, profile, f"{name}.json", posenc_filter)
                unsupported.write("".join(f"{op}-{row}: {line}\n" for line in lines))
                with open(f"{name}.txt", "w") as text:
                    text.write(summary.text)


if __name__ == "__main__":
    main()
