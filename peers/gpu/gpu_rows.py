"""The RoPE people run on a GPU, on the cases a CPU machine exported: Hugging Face transformers'
rotary code (peers/transformers/hf_rope.py, the CPU peer's computation, unchanged) in each model
dtype under torch.set_float32_matmul_precision "highest" and "high" (TF32 for float32 matmuls on
Ampere and later: `inv_freq @ position_ids`, the mechanism of transformers #48428), and a Triton
RoPE kernel (triton_rope.py). Each row's outputs go to a results file (SPEC.md section 7), judged
by `posenc verify` where the CLI runs (peers/gpu/run.sh verify).

gpu_rows.py CASES DEVICE OUTDIR: CASES is the file posenc.Session.cases(save=...) wrote
(run.sh export); DEVICE a torch device (cuda, or cpu to check the script anywhere: Triton then
runs under TRITON_INTERPRET=1). Writes OUTDIR/NAME-ROW.results.json, NAME.unsupported.txt,
NAME.rows.json per row set, and OUTDIR/environment.json (device, driver and library versions).
"""
import json
import os
import platform
import sys

import torch

import posenc
import peer_driver


def environment(device):
    env = {"device": device, "python": platform.python_version(), "torch": torch.__version__}
    if device.startswith("cuda"):
        env.update(gpu=torch.cuda.get_device_name(device), cuda=torch.version.cuda,
                   capability=".".join(map(str, torch.cuda.get_device_capability(device))))
        try:
            import subprocess
            env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True).stdout.strip()
        except OSError:
            env["driver"] = "unknown (no nvidia-smi)"
    for name in ("transformers", "triton"):
        try:
            env[name] = __import__(name).__version__
        except ImportError as e:
            env[name] = f"not importable: {e}"
    return env


def main(cases_file, device, out):
    os.makedirs(out, exist_ok=True)
    env = environment(device)
    with open(os.path.join(out, "environment.json"), "w") as f:
        json.dump(env, f, indent=1)
    torch.set_default_device(device)  # hf_rope's modules, positions and inputs are made on it
    cases = posenc.load_cases(cases_file)
    import run_peer  # peers/transformers
    for precision in ("highest", "high"):
        torch.set_float32_matmul_precision(precision)

        class OnDevice(run_peer.Transformers):
            name = f"transformers-{device.split(':')[0]}-{precision}"
            version = f"{run_peer.Transformers.version}, {env.get('gpu', device)}, float32 matmul precision {precision}"

            def describe(self, row):
                return f"{self.name}-{row}: {super().describe(row)}, {env.get('gpu', device)}, matmul precision {precision}"

        peer_driver.write_results(OnDevice(), cases, out)
    torch.set_float32_matmul_precision("highest")
    if device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported
    import triton_rope
    peer_driver.write_results(triton_rope.TritonRope(env.get("gpu", device)), cases, out)
    print(f"gpu_rows: results in {out} ({env.get('gpu', device)})")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
