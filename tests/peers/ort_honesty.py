"""Is the ONNX Runtime adapter honest? ORT's raw RotaryEmbedding outputs (peers/onnxruntime/ort_peer.py's
rotate, no judge in between), for both ops and both cache rows, on the small rotation cases of
rope/none and rope/partial (|position| <= 16, one group per session run), against the vectors'
certified expected values (Session.cases(expected=True)): an element fails when it is off by more
than 2^-12 (f32) or 2^-9 (f16) of the expected vector's norm. A wrong layout, span, cache row or
position moves an element by a sizeable share of its pair's norm; float32 angles at these
positions by far less. Each run also shows the comparison can fail: the same cases with the
interleaved attribute flipped, and with the cache rows shifted by one position, must fail.
(The first 2 small cases of each group: each accurate cache row is one `posenc eval` process.)
Usage: ort_honesty.py POSENC_CLI (PYTHONPATH: python/src and peers/onnxruntime)."""
import sys
from dataclasses import replace

import numpy as np

import posenc

try:
    import ort_peer  # imports onnx, onnxruntime and torch
except ImportError as e:  # the peer cannot be had here: a skip, never a pass or a fail
    print(f"SKIPPED: onnxruntime peer: {e} (scripts/requirements-peers.txt)")
    sys.exit(77)  # CTest's SKIP_RETURN_CODE

TOLERANCE = {"f32": 2.0**-12, "f16": 2.0**-9}


def small_cases(session, files):
    """The first 2 small rotation cases of each group (so every parameter set, inverse and partial
    ones too; each accurate cache row is one `posenc eval`)."""
    out, per_group = [], {}
    for c in session.cases(files, expected=True):
        key = (c.file, c.group)
        if c.type == "rope_rotate" and np.all(np.abs(c.positions()["position"]) <= 16) and per_group.get(key, 0) < 2:
            per_group[key] = per_group.get(key, 0) + 1
            out.append(c)
    return out


def compare(cli, op, row, cases, brk=None):
    """(compared, failed, first failure) over cases, grouped as the adapter groups them."""
    compared, failed, first = 0, 0, ""
    for fmt in ort_peer.FORMATS:
        groups = {}
        for c in cases:
            if fmt in c.formats and not ort_peer.why_unsupported(c, fmt, row):
                groups.setdefault((c.file, c.group), []).append(c)
        for group in groups.values():
            if brk == "layout":
                flip = {"interleaved": "half", "half": "interleaved"}
                group = [replace(c, params=dict(c.params, layout=flip[c.params["layout"]])) for c in group]
            if brk == "position":
                group = [replace(c, raw=dict(c.raw, position=[str(int(p) + 1) for p in c.raw["position"]]))
                         for c in group]
            y = ort_peer.rotate(cli, op, row, fmt, group)
            for k, c in enumerate(group):
                want = c.expected(fmt).astype(np.float64)
                err = np.abs(y[k].astype(np.float64) - want)
                compared += 1
                if not np.all(err <= TOLERANCE[fmt] * np.linalg.norm(want)):
                    failed += 1
                    first = first or f"{c.file} tcId {c.tc_id} {fmt} ({op}, {row}): max error {err.max():.3g}"
    return compared, failed, first


def main():
    cli = sys.argv[1]
    problems = []
    with posenc.Session(profile="standard", formats=list(ort_peer.FORMATS)) as s:
        cases = small_cases(s, ["rope/none", "rope/partial"])
    for op in ort_peer.OPS:
        for row in ort_peer.ROWS:
            n, bad, first = compare(cli, op, row, cases)
            print(f"{op} {row}: {n} small cases compared, {bad} off")
            if bad or n < 40:
                problems.append(f"{op} {row}: {bad} of {n} off ({first})" if bad else f"{op} {row}: only {n} compared")
    for brk in ("layout", "position"):
        n, bad, _ = compare(cli, "contrib", "accurate", cases, brk)
        print(f"deliberate break ({brk}): {bad} of {n} off")
        if not bad:
            problems.append(f"a deliberately broken call ({brk}) passed every comparison")
    if problems:
        print("FAIL:\n" + "\n".join(problems))
        sys.exit(1)
    print("onnxruntime adapter: raw outputs match the vectors on small cases")


if __name__ == "__main__":
    main()
