#!/usr/bin/python3
"""conformance/SPEC.md §6 shows examples/python/read_vectors.py and examples/cpp/read_vectors.cpp
verbatim, and both run on the shipped vectors, printing one line per checked case.

Usage: spec_examples_test.py SOURCE_DIR CPP_EXAMPLE_BINARY
"""
import pathlib
import re
import subprocess
import sys

source, cpp_binary = pathlib.Path(sys.argv[1]), sys.argv[2]
section = (source / "conformance/SPEC.md").read_text().split("## 6. Reading the vectors", 1)[1]
passed = failed = 0


def check(ok, what):
    global passed, failed
    passed, failed = passed + ok, failed + (not ok)
    print(("ok: " if ok else "FAIL: ") + what)


for language, path in (("python", "examples/python/read_vectors.py"), ("cpp", "examples/cpp/read_vectors.cpp")):
    shown = re.search(rf"```{language}\n(.*?)```", section, re.S)
    check(shown is not None and shown.group(1) == (source / path).read_text(), f"SPEC shows {path} verbatim")

for name, command in (("python", [sys.executable, "examples/python/read_vectors.py"]), ("cpp", [cpp_binary])):
    run = subprocess.run(command, cwd=source, capture_output=True, text=True, timeout=300)
    lines = [l for l in run.stdout.splitlines() if "max abs error" in l]
    check(run.returncode == 0 and len(lines) > 100, f"{name} example runs ({len(lines)} cases checked)")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
