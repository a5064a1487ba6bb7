"""Is a peer's adapter honest? Its raw float32 outputs (peers/NAME/*_peer.py's `outputs`, before any
results file or verdict) on the small rotation and table cases of a few files (those where the
peer's conventions are posenc's at small positions: the differences SPEC.md 2.4.3 names, such as
YaRN's attention factor, are the verdicts' business), compared here with
the vectors' certified expected values (Session.cases(expected=True)), element by element.

An element fails when it is off by more than 2^-12 of the expected vector's norm (the ONNX Runtime
adapter's test uses the same): at |position| <= 16 a float32 angle and rotation are off by a few
2^-24 at most, while a wrong layout, base, pair order or position moves an element by a sizeable
share of its pair's norm. Each run also shows the comparison can fail: the same cases broken
deliberately (the position shifted by one; the layout flipped, or for a peer with one layout the
base doubled) must fail.

adapter_honesty.py NAME POSENC_CLI: NAME one of mlx, keras, vllm, torchtune,
rotary_embedding_torch. Exit 0 when every compared element is within tolerance and every break
fails, 1 otherwise (naming the case), 77 (CTest's SKIP_RETURN_CODE) when the peer's packages
cannot be imported. PYTHONPATH: python/src, peers and peers/NAME.
"""
import dataclasses
import importlib
import os
import sys

import numpy as np

import posenc
from peer_driver import Unsupported

ADAPTERS = {  # module, class, files, the breaks that must fail
    "mlx": ("mlx_peer", "Mlx", ["rope/none", "rope/partial", "rope/linear", "rope/llama3", "rope/proportional"],
            ("position", "layout")),
    "keras": ("keras_peer", "Keras", ["rope/none", "rope/partial", "rope/linear", "rope/llama3", "rope/proportional"],
              ("position", "base")),
    "vllm": ("vllm_peer", "Vllm", ["rope/none", "rope/partial", "rope/llama3", "rope/yarn", "rope/mrope"],
             ("position", "layout")),
    "torchtune": ("torchtune_peer", "Torchtune", ["rope/none", "rope/llama3"], ("position", "layout")),
    "rotary_embedding_torch": ("ret_peer", "RotaryEmbeddingTorch", ["rope/none", "rope/partial", "rope/linear"],
                               ("position", "base")),
}
TOLERANCE = 2.0**-12
PER_GROUP = 2  # small cases of each group


def small(case):
    key = "position"
    v = case.raw.get(key)
    axes = v if isinstance(v, list) else [v]
    return case.type in ("rope_rotate", "rope_table") and all(abs(int(a)) <= 16 for a in axes)


def broken(case, how):
    if how == "position":
        v = case.raw["position"]
        moved = [str(int(a) + 1) for a in v] if isinstance(v, list) else str(int(v) + 1)
        return dataclasses.replace(case, raw=dict(case.raw, position=moved))
    if how == "layout":
        flip = {"interleaved": "half", "half": "interleaved"}
        return dataclasses.replace(case, params=dict(case.params, layout=flip[case.params["layout"]]))
    if how == "base":
        return dataclasses.replace(case, params=dict(case.params, base=2 * case.params["base"]))
    raise ValueError(how)


def compare(adapter, cases, groups, how=None):
    """(compared, failed, first failure) of adapter's f32 outputs on cases (broken as how says)."""
    compared, failed, first, prepared_groups = 0, 0, "", {}
    for case in cases:
        c = broken(case, how) if how else case
        key = (case.file, case.group)
        if key not in prepared_groups:  # once per group, as the peer's run prepares it
            try:
                prepared_groups[key] = adapter.prepare(c, groups[key])
            except Exception:  # noqa: BLE001 (unsupported, or refused by the framework: the verdicts list it)
                prepared_groups[key] = None
        prepared = prepared_groups[key]
        if prepared is None:
            continue
        try:
            got = adapter.outputs(c, prepared, "f32")
        except Unsupported:
            continue
        except Exception:  # noqa: BLE001 (a break the framework refuses is not a comparison)
            if how:
                continue
            raise
        got = np.asarray(got.float() if hasattr(got, "float") else got, dtype=np.float64).reshape(-1)
        want = case.expected("f32").astype(np.float64)
        err = np.abs(got - want)
        compared += 1
        if not np.all(err <= TOLERANCE * np.linalg.norm(want)):
            failed += 1
            first = first or (f"{case.file} tcId {case.tc_id} ({case.type}, {case.group_comment[:50]}): "
                              f"max error {err.max():.3g}, element {int(err.argmax())}")
    return compared, failed, first


def main(name, cli):
    module, cls, files, breaks = ADAPTERS[name]
    try:
        adapter = getattr(importlib.import_module(module), cls)()
    except ImportError as e:  # the peer cannot be had here: a skip, never a pass or a fail
        print(f"SKIPPED: {name} cannot be imported here ({e}); scripts/python-venv.sh peers")
        return 77
    with posenc.Session(profile="standard", cli=cli) as s:
        every = s.cases(files, formats=["f32"], expected=True)
    groups, picked = {}, []
    for c in every:
        key = (c.file, c.group)
        if small(c) and len(groups.get(key, [])) < PER_GROUP:
            groups.setdefault(key, []).append(c)  # a group of the picked cases: caches sized for them
            picked.append(c)
    problems = []
    n, bad, first = compare(adapter, picked, groups)
    judged_files = sorted({c.file for c in picked})
    print(f"{name}: {n} small cases of {len(judged_files)} files compared with the reference's values: {bad} off")
    if bad:
        problems.append(f"{bad} of {n} off; first: {first}")
    if n < 10:
        problems.append(f"only {n} cases compared")
    for how in breaks:
        n_b, bad_b, _ = compare(adapter, picked, groups, how)
        print(f"deliberate break ({how}): {bad_b} of {n_b} off")
        if not bad_b:
            problems.append(f"a deliberately broken call ({how}) passed every comparison")
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems))
        return 1
    print(f"{name} adapter: raw outputs match the vectors on small cases")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ADAPTERS:
        sys.exit(f"usage: adapter_honesty.py {{{','.join(ADAPTERS)}}} POSENC_CLI")
    os.environ.setdefault("KERAS_BACKEND", "jax")
    sys.exit(main(*sys.argv[1:]))
