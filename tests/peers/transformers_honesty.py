"""Is the transformers adapter honest? transformers' raw float32 outputs (peers/transformers/hf_rope.py,
and run_peer.py, before any results file or verdict) on a few small cases of each rope file it runs, compared here
with the vectors' own f64 expected values (the certified reference's), element by element.

Tolerance, from float32 (u = 2^-24) as transformers computes: inv_freq = 1/base^(2i/D) in float32
(the exponent an exact small fraction rounded once, pow and the division: within 4u relative,
plus the |ln θ|·u that pow's argument error carries), the angle t = p·θ one product more (|δt| ≤
(5 + |ln θ|)·u·|t|), cos/sin within 2u, the attention factor's product and the output's
rounding 2u more: a table entry is within ((5 + |ln θ|)·|t| + 4)·u·m, a rotated element
(two such products and a sum) within ((5 + |ln θ|)·|t| + 6)·u·m·‖(x_a, x_b)‖, a copied element
(partial rotary's tail) exactly, a frequency within (4 + |ln θ|)·u·θ. The test allows 4 times that (the scaling's blends add a few u: SPEC.md 5,
"Scalings' intermediates"), still about 10^-6 relative at these positions: a wrong layout, a
swapped cos/sin, a wrong base, a missing attention factor or a position off by one is off by
1e-3 or more.

transformers_honesty.py POSENC_CLI: exit 0 when every compared element is within tolerance, 1
(naming the case and element) otherwise, 77 (CTest's SKIP_RETURN_CODE) when transformers cannot
be imported.
"""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "peers", "transformers"), os.path.join(HERE, "..", "..", "peers")]
try:
    import hf_rope
    import run_peer
except ImportError as e:
    print(f"SKIPPED: transformers or torch cannot be imported here ({e}); scripts/python-venv.sh peers")
    sys.exit(77)

import numpy as np  # noqa: E402

import posenc  # noqa: E402

U = 2.0 ** -24
SLACK = 4.0
FILES = ["rope/none", "rope/linear", "rope/dynamic", "rope/yarn", "rope/llama3", "rope/longrope", "rope/mrope",
         "rope/partial"]
MAX_POSITION = 4096  # small cases: a float32 angle is still accurate to ~1e-6 there
PER_TYPE = 3  # cases of each type and layout per file


def position_of(case):
    return max(abs(int(a)) for a in (case.raw["position"] if isinstance(case.raw["position"], list)
                                       else [case.raw["position"]]))


def tolerance(case, model, want):
    """Per element, the float32 tolerance above (numpy float64 array). θ and m are the reference's
    for a frequencies case; for the others the peer's (only the tolerance's scale: its frequencies
    are themselves compared, in each file's frequencies cases)."""
    freqs = want if case.type == "rope_frequencies" else model.frequencies().double().numpy()
    theta, m = freqs[:-1], freqs[-1]
    lnt = np.abs(np.log(theta))
    if case.type == "rope_frequencies":
        return SLACK * np.concatenate([(4 + lnt) * U * theta, [4 * U * m]])
    t = position_of(case) * theta
    if case.type == "rope_table":
        per_pair = SLACK * ((5 + lnt) * t + 4) * U * m
        return np.concatenate([per_pair, per_pair])
    x = np.asarray(case.inputs("f32")["x"], dtype=np.float64)
    n, half = model.rotary_dim, model.rotary_dim // 2
    pairs = [(i, i + half) if case.params["layout"] == "half" else (2 * i, 2 * i + 1) for i in range(half)]
    tol = np.zeros_like(x)  # copied elements (the partial-rotary tail) are the input's bits
    for i, (a, b) in enumerate(pairs):
        norm = math.hypot(x[a], x[b])
        tol[a] = tol[b] = SLACK * ((5 + lnt[i]) * t[i] + 6) * U * m * norm
    return tol[: max(n, len(x))]


def picked(cases):
    """A few small cases of each type per file, among those the adapter runs."""
    count, out = {}, []
    for case in cases:
        if case.type not in ("rope_frequencies", "rope_table", "rope_rotate") or "f32" not in case.formats:
            continue
        if case.type != "rope_frequencies" and position_of(case) > MAX_POSITION:
            continue
        key = (case.file, case.type, case.params["layout"])  # both layouts where a file has them
        if count.get(key, 0) >= PER_TYPE:
            continue
        try:
            model = hf_rope.build(case)
        except (hf_rope.Unsupported, posenc.PosencError):
            continue
        count[key] = count.get(key, 0) + 1
        out.append((case, model))
    return out


def main(cli):
    with posenc.Session(profile="standard", cli=cli) as s:
        cases = s.cases(FILES, formats=["f32"], expected=True)
    checked, bad, runs = 0, [], picked(cases)
    for case, model in runs:
        got = run_peer.Transformers().outputs(case, model, "f32").double().numpy()
        want = case.expected("f64").astype(np.float64)
        tol = tolerance(case, model, want)
        for i, (g, w, e) in enumerate(zip(got, want, tol)):
            checked += 1
            if not abs(g - w) <= e:
                bad.append(f"{case.file} tcId {case.tc_id} ({case.type}, {case.group_comment[:60]}): element {i} "
                           f"= {g!r}, reference {w!r}, |difference| {abs(g - w):.3g} > tolerance {e:.3g}")
    files = sorted({c.file for c, _ in runs})
    layouts = sorted({(c.type, c.params["layout"], model.kind) for c, model in runs})
    print("compared: " + ", ".join(f"{t} {lay} ({kind})" for t, lay, kind in layouts))
    print(f"transformers {hf_rope.VERSION}: {checked} float32 elements of {len(files)} files compared with the "
          f"reference's f64 values: {len(bad)} beyond the float32 tolerance")
    for line in bad[:10]:
        print("  " + line)
    if len(files) < len(FILES):
        print(f"  files without a compared case: {sorted(set(FILES) - {f[:-5] for f in files})}")
        return 1
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
