#!/usr/bin/env python3
"""Validates every shipped vector file against its JSON Schema (vectors/schema), and shows that the
schemas reject broken files.

Run with the project's test venv (.venv, made by scripts/python-venv.sh from Debian's python3 with
the pinned packages of scripts/requirements-test.txt): jsonschema-rs validates the ~35 MB of
vectors in seconds, where the pure-Python jsonschema took two minutes of CI time per run.

Usage: validate_vectors.py VECTORS_DIR
"""
import copy
import hashlib
import json
import math
import pathlib
import struct
import sys

import jsonschema_rs

root = pathlib.Path(sys.argv[1])
schemas = {}
for path in sorted((root / "schema").glob("*.schema.json")):
    schema = json.loads(path.read_text())
    jsonschema_rs.meta.validate(schema)  # each schema is itself valid Draft 2020-12
    schemas[schema["$id"]] = schema
# The schemas refer to each other by $id (common.schema.json's definitions).
registry = jsonschema_rs.Registry(list(schemas.items()))
validators = {
    schema_id.rsplit("/", 1)[1]: jsonschema_rs.validator_for(schema, registry=registry)
    for schema_id, schema in schemas.items()
}

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def validate(path):
    """Problems of one file, or None."""
    document = json.loads(path.read_text())
    name = document.get("schema", "").rsplit("/", 1)[-1]
    validator = validators.get(name)
    if validator is None:
        return f"{path}: no schema {name}"
    errors = list(validator.iter_errors(document))
    return f"{path}: " + "; ".join(e.message[:200] for e in errors[:3]) if errors else None


files = sorted(p for p in root.rglob("*.json") if p.parent.name != "schema")
check(len(files) > 0, "no vector files found")
for path in files:
    problem = validate(path)
    check(problem is None, problem)
first_of_family = {}
for path in files:
    if path.stat().st_size < 2_000_000:  # a small file with valid cases per family is enough
        document = json.loads(path.read_text())
        if any(t["result"] == "valid" for g in document["testGroups"] for t in g["tests"]):
            first_of_family.setdefault(document["family"], (path, document))

# The schemas must have teeth: each of these corruptions of a real file must be rejected.
def first_valid(d):
    return next(t for g in d["testGroups"] for t in g["tests"] if t["result"] == "valid")


check(len(first_of_family) == 5, "a file with valid cases for each of the 5 families")
corruptions = {
    "a missing tcId": lambda d: first_valid(d).pop("tcId"),
    "a decimal instead of a hex float": lambda d: first_valid(d)["expected"]["f32"].__setitem__(0, "1.5"),
    "an exact value with too few digits": lambda d: first_valid(d)["expected"]["exact"].__setitem__(0, "1.5e+00"),
    "an unknown top-level field": lambda d: d.__setitem__("extra", 1),
    "an unknown test field": lambda d: first_valid(d).__setitem__("tolerance", "0x1p-20"),
    "a valid case without expected values": lambda d: first_valid(d).pop("expected"),
    "an unsupported version": lambda d: d.__setitem__("version", 2),
    "a JSON number where data must be a string": lambda d: d.__setitem__("seed", 4001),
}
# An attention file keeps its expected values in its tensor file: its own corruptions instead of
# those of the JSON's expected values.
expected_corruptions = {"a decimal instead of a hex float", "an exact value with too few digits",
                        "a valid case without expected values"}
attention_corruptions = {
    "expected values in the JSON": lambda d: first_valid(d).__setitem__("expected", {}),
    "no tensor file": lambda d: d.pop("tensors"),
    "a tensor file in another folder": lambda d: d["tensors"].__setitem__("file", "../x.safetensors"),
    "a case without its key count": lambda d: first_valid(d).pop("keys"),
}
for family, (path, document) in sorted(first_of_family.items()):
    validator = validators[document["schema"].rsplit("/", 1)[1]]
    chosen = dict(corruptions)
    if family == "attention":
        chosen = {w: c for w, c in corruptions.items() if w not in expected_corruptions} | attention_corruptions
    for what, corrupt in chosen.items():
        broken = copy.deepcopy(document)
        corrupt(broken)
        check(not validator.is_valid(broken), f"{path}: schema accepted a file with {what}")


def read_safetensors(path):
    """{name: (dtype, shape, bytes)} of a safetensors file (SPEC.md section 4), with the standard library."""
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    body = data[8 + length:]
    return {name: (t["dtype"], t["shape"], body[t["data_offsets"][0]:t["data_offsets"][1]]) for name, t in header.items()}


# Each attention file's tensor file: the SHA-256 its JSON records, and every case's tensors with
# the dtypes and shapes SPEC.md section 4 gives.
float_dtypes = {"F64", "F32", "BF16", "F16"}
for path in files:
    document = json.loads(path.read_text())
    if document["family"] != "attention":
        continue
    tensor_path = path.parent / document["tensors"]["file"]
    check(hashlib.sha256(tensor_path.read_bytes()).hexdigest() == document["tensors"]["sha256"],
          f"{tensor_path}: SHA-256 differs from {path}'s")
    tensors = read_safetensors(tensor_path)
    sizes = {"F64": 8, "F32": 4, "BF16": 2, "F16": 2, "I64": 8, "U8": 1}
    for name, (dtype, shape, raw) in tensors.items():
        check(len(raw) == math.prod(shape) * sizes[dtype], f"{tensor_path}: {name} has {len(raw)} bytes for {shape}")
    for group in document["testGroups"]:
        p = group["params"]
        axes = len(p["rope"].get("mrope_section", [])) or 1 if "rope" in p else 1
        for t in group["tests"]:
            if t["result"] != "valid":
                continue
            n_q, n_k, h, g = t["queries"], t["keys"], p["query_heads"], p["kv_heads"]
            outputs = n_q * h * (p["value_dim"] + 1)
            want = {"q": (float_dtypes, [n_q, h, p["head_dim"]]), "k": (float_dtypes, [n_k, g, p["head_dim"]]),
                    "v": (float_dtypes, [n_k, g, p["value_dim"]]), "query_positions": ({"I64"}, [n_q, axes]),
                    "key_positions": ({"I64"}, [n_k, axes]), "f64": ({"F64"}, [outputs]), "f32": ({"F32"}, [outputs]),
                    "bf16": ({"BF16"}, [outputs]), "f16": ({"F16"}, [outputs]), "residual": ({"F64"}, [outputs]),
                    "kappa": ({"F64"}, [n_q, h, p["value_dim"]]), "pv": ({"F64"}, [n_q, h, p["value_dim"]]),
                    "logit_range": ({"F64"}, [n_q, h])}
            if p["mask"] == "explicit":
                want["mask"] = ({"U8"}, [n_q, n_k])
            if p.get("rope_table_given"):
                rope = p["rope"]
                pairs = (rope["head_dim"] if rope.get("partial") == "proportional" else rope["rotary_dim"]) // 2
                want["table"] = (float_dtypes, [n_q + n_k, 2 * pairs])
            for what, (dtypes, shape) in want.items():
                name = f"tc{t['tcId']}.{what}"
                got = tensors.get(name)
                check(got is not None and got[0] in dtypes and got[1] == shape,
                      f"{tensor_path}: {name} is {got[:2] if got else 'missing'}, expected {sorted(dtypes)} {shape}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
