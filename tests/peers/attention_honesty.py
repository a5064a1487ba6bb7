"""Is an attention peer's adapter honest? Its raw float32 outputs (the adapter's attend(), no judge in
between) on the small RoPE decode and prefill cases (attention/decode groups 0 and 3, attention/prefill
group 0; at most 32 keys, positions at most 256), against the vectors' certified f64 O (Session.cases(expected=True)):
an element fails when it is off by more than 2^-12 of the largest |v| of its case. A wrong layout,
position, head grouping or mask moves O by a sizeable share of v; float32 arithmetic and float32
angles at these positions by far less. The same run shows the comparison can fail: with every key
rotated one position later, and with the KV heads' values swapped, the outputs must be off.

Usage: attention_honesty.py PEER POSENC_CLI, PEER one of sdpa, mlx_sdpa, ort_attention, jax_attention
(PYTHONPATH: python/src, peers, peers/onnxruntime and peers/PEER)."""
import importlib
import sys
from dataclasses import replace

import numpy as np

import posenc

# peer: (module, adapter class, rows compared, the row the deliberate breaks run in: GroupQueryAttention
# refuses keys moved off the queries' positions, so ORT's breaks run in the opset-23 row)
PEERS = {"sdpa": ("sdpa_peer", "SdpaPeer", ["math-f32", "flash-f32", "hf_eager-f32", "hf_sdpa-f32"], "math-f32"),
         "mlx_sdpa": ("mlx_sdpa_peer", "MlxSdpaPeer", ["f32"], "f32"),
         "ort_attention": ("ort_attention_peer", "OrtAttentionPeer", ["gqa-accurate-f32", "attention23-accurate-f32",
                                                                       "gqa-framework-f32"], "attention23-accurate-f32"),
         "jax_attention": ("jax_attention_peer", "JaxAttention", ["f32"], "f32")}
TOLERANCE = 2.0**-12


def small_cases(session):
    out = []
    for c in session.cases(["attention/decode", "attention/prefill"], expected=True):
        positions = [int(x) for x in c.raw["queryPositions"] + c.raw["keyPositions"]]
        small = c.attention_shapes()["k"][0] <= 32 and max(positions) <= 256 and "rope" in c.params
        if small and ((c.file == "attention/decode.json" and c.group in (0, 3)) or
                      (c.file == "attention/prefill.json" and c.group == 0)):
            out.append(c)
    return out


def broken(case, how):
    """The case with every key one position later, or its KV heads' values swapped."""
    if how == "position":
        raw = dict(case.raw, keyPositions=[str(int(p) + 1) for p in case.raw["keyPositions"]])
        return replace(case, raw=raw)
    v = case.v("f32")
    swapped = np.ascontiguousarray(v[:, ::-1, :]).reshape(-1)
    return replace(case, raw=dict(case.raw, v=[float(x).hex() for x in swapped]))


def compare(adapter, row, cases, how=None):
    """(compared, off, first off) over the cases."""
    compared, off, first = 0, 0, ""
    for c in cases:
        want = c.expected("f64")[: int(np.prod(c.attention_shapes()["O"]))]
        run = broken(c, how) if how else c
        try:
            o, _ = adapter.attend(run, row)
        except adapter_module.Unsupported:
            continue
        got = np.asarray(o.float() if hasattr(o, "float") else o, dtype=np.float64).reshape(-1)
        err = np.abs(got - want).max()
        compared += 1
        if err > TOLERANCE * np.abs(c.v("f32")).max():
            off += 1
            first = first or f"{c.file} tcId {c.tc_id} ({row}): max error {err:.3g}"
    return compared, off, first


def main():
    global adapter_module
    name, cli = sys.argv[1], sys.argv[2]
    module_name, cls, rows, break_row = PEERS[name]
    try:
        adapter_module = importlib.import_module(module_name)
    except ImportError as e:  # the framework cannot be had here: a skip, never a pass or a fail
        print(f"SKIPPED: {name}: {e} (scripts/requirements-peers.txt)")
        return 77
    adapter = getattr(adapter_module, cls)(cli) if name == "ort_attention" else getattr(adapter_module, cls)()
    with posenc.Session(profile="standard", cli=cli, formats=["f32"]) as s:
        cases = small_cases(s)
    problems = []
    for row in rows:
        n, off, first = compare(adapter, row, cases)
        print(f"{name} {row}: {n} small cases compared, {off} off")
        if off or n < 5:
            problems.append(f"{row}: {off} of {n} off ({first})" if off else f"{row}: only {n} compared")
    for how in ("position", "heads"):
        n, off, _ = compare(adapter, break_row, cases, how)
        print(f"deliberate break ({how}): {off} of {n} off")
        if not off:
            problems.append(f"a deliberately broken case ({how}) passed every comparison")
    for p in problems:
        print("PROBLEM " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
