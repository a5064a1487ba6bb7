"""examples/python/test_hf_rope.py through the pytest plugin has the outcomes the README states:
Hugging Face's float32 RoPE passes `standard` and fails `strict`, its failures giving tcId,
element, got, expected, margin and position and the session summary its accurate context; the
float64 variant passes `standard`. Usage: hf_rope_outcomes.py TEST_FILE (POSENC_CLI and
PYTHONPATH set by CTest)."""
import os
import re
import subprocess
import sys

test_file = sys.argv[1]
failures = 0


def pytest(profile, select):
    env = dict(os.environ, POSENC_PROFILE=profile)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "posenc.pytest_plugin",
                          test_file, "-k", select], capture_output=True, text=True, env=env)
    return run.returncode, run.stdout + run.stderr


def check(what, ok, output=""):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        print(output[-3000:])
        failures += 1


status, out = pytest("standard", "float32")
check("float32 passes standard", status == 0 and re.search(r"\d+ passed", out) and not re.search(r"\d+ failed", out), out)
check("float32 standard summary: CONFORMANT in f32 with its accurate context",
      re.search(r"^CONFORMANT: .*f32", out, re.M) and re.search(r"f32 margin [0-9.e+-]+, standard up to position \d+", out), out)
status, out = pytest("standard", "float64")
check("float64 passes standard", status == 0 and not re.search(r"\d+ failed", out) and re.search(r"^CONFORMANT: .*f64", out, re.M), out)

status, out = pytest("strict", "float32")
check("float32 fails strict", status == 1 and re.search(r"\d+ failed", out), out)
fields = [r"posenc: rope/none\.json tcId \d+ in f32 under strict: fail", r"Mismatched element: \d+ of \d+",
          r"Got: +0x[0-9a-f.]+p[+-]\d+", r"Expected: 0x[0-9a-f.]+p[+-]\d+", r"Margin: +[0-9.e+]+ \(error / bound",
          r"Position: position=\d+\n"]
for f in fields:
    check(f"strict failure message has /{f}/", re.search(f, out), out)
check("strict summary: float32 is strict only up to a small position (its accurate context)",
      re.search(r"f32 margin [0-9.e+]+, strict up to position \d\b", out) and "NOT CONFORMANT" in out, out)
check("test ids are file-tcId-format", re.search(r"test_hf_rope_float32\[rope/none-\d+-f32\]", out), out)

print("failures:", failures)
sys.exit(1 if failures else 0)
