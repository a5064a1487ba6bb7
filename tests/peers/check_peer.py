"""Runs one peer (peers/NAME/run.sh) and checks its verdicts against the committed expectation.

check_peer.py NAME POSENC_CLI OUTDIR PROFILE FILTER EXPECTED: runs the peer on FILTER's vector
files under PROFILE, then compares, per row and vector file, the verdict of its JSON reports
(pass: judged checks and none failed; fail: a check failed; not judged: nothing judged) with the
lines "ROW FILE VERDICT" of EXPECTED. Any difference fails the test, so a change to a bound, a
vector or the peer that flips a verdict is seen at once (and is explained in the commit that
updates EXPECTED). Status 77 (CTest's SKIP_RETURN_CODE) when the peer wrote NAME.skipped.
"""
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def verdicts(out, name, profile):
    """{(row, file): verdict} from the peer's reports in out."""
    found = {}
    for path in sorted(glob.glob(os.path.join(out, f"{name}*.{profile}.json"))):
        row = os.path.basename(path)[: -len(f".{profile}.json")]
        with open(path) as f:
            report = json.load(f)
        for g in report["groups"]:
            found[(row, g["file"])] = "fail" if g["failed"] else "pass" if g["passed"] else "not-judged"
    return found


def main(name, cli, out, profile, filter_, expected_path):
    run = subprocess.run(["bash", os.path.join(ROOT, "peers", name, "run.sh"), cli, out, profile, filter_])
    if run.returncode != 0:
        print(f"peers/{name}/run.sh: status {run.returncode}")
        return 1
    skipped = os.path.join(out, f"{name}.skipped")
    if os.path.exists(skipped):
        with open(skipped) as f:
            print(f"SKIPPED: {name}: {f.read().strip()}")
        return 77
    got = verdicts(out, name, profile)
    with open(expected_path) as f:
        want = {(r, fl): v for r, fl, v in (line.split() for line in f if line.strip() and not line.startswith("#"))}
    wrong = [f"{r} {fl}: {got.get((r, fl), 'absent')}, expected {v}" for (r, fl), v in sorted(want.items())
             if got.get((r, fl)) != v]
    wrong += [f"{r} {fl}: {v}, not in {expected_path}" for (r, fl), v in sorted(got.items()) if (r, fl) not in want]
    for (r, fl), v in sorted(got.items()):
        print(f"{r} {fl} {v}")
    for line in wrong:
        print("MISMATCH " + line)
    return 1 if wrong or not got else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
