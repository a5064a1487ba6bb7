#!/usr/bin/python3
"""The numpy RoPE of seed 003 turned into a results writer for `posenc verify`.

It rotates the inputs of every rope_rotate and rope_dot case of vectors/rope/none.json that the
seed's code can express (interleaved pairs, rotary_dim = head_dim, no inverse) and writes their
binary64 outputs as hex floats:

    python3 examples/python/seed003_results.py > seed003.json
    build/posenc verify --results seed003.json --profile standard   # passes
    build/posenc verify --results seed003.json --profile strict     # fails at long context
"""
import json
import sys

import numpy as np

np.seterr(over="ignore", invalid="ignore")  # the huge-input cases overflow binary64, as the exact results do

VECTORS = sys.argv[1] if len(sys.argv) > 1 else "vectors"
doc = json.load(open(f"{VECTORS}/rope/none.json"))


def rope(v, pos, inv):
    """The seed's rope(): rotate each pair of neighbouring dimensions by pos * frequency."""
    ang = pos * inv
    c, s = np.cos(ang), np.sin(ang)
    out = np.empty_like(v)
    out[0::2] = v[0::2] * c - v[1::2] * s
    out[1::2] = v[0::2] * s + v[1::2] * c
    return out


results = []
for group in doc["testGroups"]:
    p = group["params"]
    if p["layout"] != "interleaved" or p["rotary_dim"] != p["head_dim"] or p["inverse"]:
        continue
    hd, base = p["head_dim"], float.fromhex(p["base"])
    inv = 1.0 / (base ** (np.arange(0, hd, 2) / hd))
    for t in group["tests"]:
        if t["result"] != "valid":
            continue
        if group["type"] == "rope_rotate":
            y = rope(np.array([float.fromhex(v) for v in t["x"]]), int(t["position"][0]), inv)
            values = [float(v).hex() for v in y]
        elif group["type"] == "rope_dot":
            q = rope(np.array([float.fromhex(v) for v in t["q"]]), int(t["qPosition"][0]), inv)
            k = rope(np.array([float.fromhex(v) for v in t["k"]]), int(t["kPosition"][0]), inv)
            values = [float(q @ k).hex()]
        else:
            continue
        results.append({"file": "rope/none.json", "tcId": t["tcId"], "values": values})

json.dump({"implementation": "seed 003 numpy RoPE", "format": "f64", "results": results}, sys.stdout, indent=1)
