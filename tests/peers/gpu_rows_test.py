"""peers/gpu/run.sh on the CPU (device cpu; Triton under TRITON_INTERPRET=1): the script a GPU
machine runs works end to end (export here, the rows, verify here), its rows pass `standard` on
rope/none as their CPU peers do, and a Triton kernel off by one position fails, so the Triton
row's pass is earned. Usage: gpu_rows_test.py POSENC (the tests' .venv; PYTHONPATH as CTest sets)."""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
run_sh = os.path.join(here, "..", "..", "peers", "gpu", "run.sh")
cli = sys.argv[1]
failures = 0


def check(what, ok, detail=""):
    global failures
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f"\n{detail}"))
    failures += not ok


def sh(*args, env=None):
    return subprocess.run(["bash", run_sh, *args], capture_output=True, text=True,
                          env=dict(os.environ, PYTHON=sys.executable, **(env or {})))


with tempfile.TemporaryDirectory() as out:
    # peers/run.sh calls every peer as run.sh POSENC OUTDIR PROFILE [FILTER] (peers/README.md).
    r = sh(cli, out, "standard")
    check("the peers' contract call skips it (needs a GPU)", r.returncode == 0 and os.path.exists(f"{out}/gpu.skipped"),
          r.stdout + r.stderr)
    r = sh("export", cli, out, "rope/none")
    check("export writes the cases", r.returncode == 0 and os.path.getsize(f"{out}/cases.jsonl") > 0, r.stderr)
    r = sh("device", f"{out}/cases.jsonl", "cpu", out)
    check("the rows run on the device (cpu)", r.returncode == 0, r.stdout + r.stderr)
    env = json.load(open(f"{out}/environment.json"))
    check("environment.json says the device and versions", env["device"] == "cpu" and "triton" in env, str(env))
    r = sh("verify", cli, out)
    lines = dict(line.split(": ", 1) for line in r.stdout.splitlines() if ": " in line)
    for precision in ("highest", "high"):
        for fmt in ("f32", "bf16", "f16"):
            row = f"transformers-cpu-{precision}-{fmt} standard"
            check(f"{row}: CONFORMANT", lines.get(row, "").startswith("CONFORMANT"), r.stdout + r.stderr)
    for fmt in ("f32", "bf16", "f16"):
        verdict = lines.get(f"triton-{fmt} standard", "")
        check(f"triton-{fmt} standard: CONFORMANT, with checks judged",
              verdict.startswith("CONFORMANT: ") and not verdict.startswith("CONFORMANT: 0 "), r.stdout)

    # A Triton kernel that rotates by the position after the case's: the row must fail.
    sys.path[:0] = [os.path.join(here, "..", "..", "peers", d) for d in ("", "gpu")]
    os.environ["TRITON_INTERPRET"] = "1"
    import peer_driver
    import posenc
    import torch
    import triton_rope

    class OffByOne(triton_rope.TritonRope):
        name = "triton-off-by-one"

        def outputs(self, case, base, row):
            x = case.inputs(row, torch=True)["x"]
            return triton_rope.rope(x[None, :], torch.tensor([case.positions()["position"][0] + 1]), base)[0]

    broken = os.path.join(out, "broken")
    os.makedirs(broken)
    files = peer_driver.write_results(OffByOne("cpu"), posenc.load_cases(f"{out}/cases.jsonl"), broken)
    r = subprocess.run([cli, "verify", "--results", files["f32"], "--profile", "standard", "--filter", "rope/none",
                        "--formats", "f32"], capture_output=True, text=True)
    check("a Triton kernel off by one position fails standard", r.returncode == 1 and "NOT CONFORMANT" in r.stdout,
          r.stdout[-2000:] + r.stderr)

print("failures:", failures)
sys.exit(1 if failures else 0)
