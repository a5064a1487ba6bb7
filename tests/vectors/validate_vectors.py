#!/usr/bin/env python3
"""Validates every shipped vector file against its JSON Schema (vectors/schema), and shows that the
schemas reject broken files.

Run with the project's test venv (.venv, made by scripts/python-venv.sh from Debian's python3 with
the pinned packages of scripts/requirements-test.txt): jsonschema-rs validates the ~35 MB of
vectors in seconds, where the pure-Python jsonschema took two minutes of CI time per run.

Usage: validate_vectors.py VECTORS_DIR
"""
import copy
import json
import pathlib
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


check(len(first_of_family) == 4, "a file with valid cases for each of the 4 families")
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
for family, (path, document) in sorted(first_of_family.items()):
    validator = validators[document["schema"].rsplit("/", 1)[1]]
    for what, corrupt in corruptions.items():
        broken = copy.deepcopy(document)
        corrupt(broken)
        check(not validator.is_valid(broken), f"{path}: schema accepted a file with {what}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
