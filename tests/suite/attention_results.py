#!/usr/bin/python3
"""Writes a results file (SPEC.md section 7) for the attention vectors from their own expected
values in one format, as code in any language would write its outputs: O then L per case, or
with --without-lse O alone. --perturb O|L moves the first element of O or of L of the first case
by 1/8 of its magnitude (a wrong answer); --score-format and --probability-format add the
declarations. Reads the JSON and its safetensors file with the standard library (Debian's
/usr/bin/python3; no package needed).

Usage: attention_results.py VECTORS FORMAT [--without-lse] [--perturb O|L] [--score-format F]
                            [--probability-format F] > results.json
"""
import argparse
import json
import pathlib
import struct

UNPACK = {"F64": ("<d", 8), "F32": ("<f", 4)}


def read_safetensors(path):
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    body = data[8 + length:]
    return {name: (t["dtype"], body[t["data_offsets"][0]:t["data_offsets"][1]]) for name, t in header.items()}


def values(dtype, raw):
    """A tensor's values as Python floats: F64 and F32 unpacked, BF16 and F16 widened exactly."""
    if dtype in UNPACK:
        fmt, size = UNPACK[dtype]
        return [struct.unpack(fmt, raw[i:i + size])[0] for i in range(0, len(raw), size)]
    halves = struct.unpack(f"<{len(raw) // 2}H", raw)
    if dtype == "BF16":
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]
    return [struct.unpack("<e", struct.pack("<H", h))[0] for h in halves]


def exact_in(fmt, x):
    """Whether the float x is a value of the format (what a caller storing its inputs in it needs)."""
    if fmt == "f64":
        return True
    if fmt == "f16":
        try:
            return struct.unpack("<e", struct.pack("<e", x))[0] == x
        except OverflowError:
            return False
    try:
        bits = struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:
        return False
    return struct.unpack("<f", struct.pack("<I", bits))[0] == x and (fmt == "f32" or bits & 0xFFFF == 0)


INPUTS = ("q", "k", "v", "table")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vectors", type=pathlib.Path)
    parser.add_argument("format", choices=["f64", "f32", "bf16", "f16"])
    parser.add_argument("--without-lse", action="store_true")
    parser.add_argument("--perturb", choices=["O", "L"])
    parser.add_argument("--score-format")
    parser.add_argument("--probability-format")
    args = parser.parse_args()
    results = []
    perturbed = False
    for path in sorted((args.vectors / "attention").glob("*.json")):
        doc = json.loads(path.read_text())
        tensors = read_safetensors(path.with_suffix(".safetensors"))
        for group in doc["testGroups"]:
            p = group["params"]
            for case in group["tests"]:
                if case["result"] != "valid":
                    # What code that validates its arguments answers (SPEC.md section 7).
                    results.append({"file": f"attention/{path.name}", "tcId": case["tcId"], "status": "invalid"})
                    continue
                inputs = (tensors.get(f"tc{case['tcId']}.{name}") for name in INPUTS)
                if not all(exact_in(args.format, x) for t in inputs if t for x in values(*t)):
                    continue  # a FormatSubset case: its inputs are not values of this format
                out = values(*tensors[f"tc{case['tcId']}.{args.format}"])
                o_count = case["queries"] * p["query_heads"] * p["value_dim"]
                if args.without_lse:
                    out = out[:o_count]
                if args.perturb and not perturbed:
                    perturbed = True
                    at = 0 if args.perturb == "O" else o_count
                    out[at] = 2 * out[at] if out[at] != 0 else 1.0
                entry = {"file": f"attention/{path.name}", "tcId": case["tcId"], "values": [v.hex() for v in out]}
                results.append(entry)
    document = {"implementation": "attention vectors' own values", "format": args.format}
    if args.score_format:
        document["scoreFormat"] = args.score_format
    if args.probability_format:
        document["probabilityFormat"] = args.probability_format
    document["results"] = results
    print(json.dumps(document))


if __name__ == "__main__":
    main()
