"""posenc serve judges as posenc verify does: the same outputs, submitted case by case through the
Python package and written by its ResultsWriter, get the same per-case verdicts and the same
summary (all but the implementation's name), and verify accepts the written results file.

Usage: serve_matches_verify.py POSENC_CLI WORK_DIR. The outputs are the correct roundings with
some elements moved by a few ulp (so strict fails some, passes others), some valid cases answered
"invalid" (a fail) or "unsupported" (not judged) and the invalid cases answered "invalid"."""
import json
import subprocess
import sys

import numpy as np

import posenc

cli, work = sys.argv[1], sys.argv[2]
FILES = ["rope/none", "rope/yarn", "rope/invalid", "sinusoidal/paper", "alibi/slopes", "learned/lookup"]
PROFILE = "strict"
failures = 0


def check(what, ok, detail=""):
    global failures
    print(("ok   " if ok else "FAIL ") + what + (f": {detail}" if detail and not ok else ""))
    failures += not ok


def nudged(fmt, values, steps):
    """values moved up by `steps` ulp of fmt at element 0 (bf16: 2^16 float32 ulp)."""
    v = np.array(values, dtype=np.float64)
    if steps == 0 or v.size == 0 or not np.isfinite(v[0]):
        return v
    if fmt == "f64":
        v[:1] = (v[:1].view(np.int64) + steps).view(np.float64)  # the next doubles (same sign: away from 0)
    else:
        x = v[:1].astype(np.float32)
        v[0] = float((x.view(np.int32) + steps * (1 << 16 if fmt == "bf16" else 1)).view(np.float32)[0])
    return v


for fmt in ("f32", "bf16"):
    session = posenc.Session(profile=PROFILE, cli=cli, implementation="check")
    writer = posenc.ResultsWriter("check", fmt)
    verdicts = {}
    for file in FILES:
        cases = [c for c in session.cases(filter=file, formats=[fmt], valid=None, expected=True) if fmt in c.formats]
        answers = []
        for c in cases:
            if not c.valid:
                answer = (c, None, "invalid")
            elif c.tc_id % 11 == 0:
                answer = (c, None, "invalid")  # refusing valid parameters: a fail
            elif c.tc_id % 13 == 0:
                answer = (c, None, "unsupported")
            else:
                answer = (c, nudged(fmt, c.expected(fmt), c.tc_id % 5), "ok")
            answers.append(answer)
            writer.add(*answer)
        for v in session.judge_file(cases[0].file, fmt, answers):
            verdicts[(v.file, v.tc_id)] = (v.verdict, v.message)
    summary = session.finish(filter=FILES, formats=[fmt])
    results = f"{work}/results_{fmt}.json"
    writer.write(results)
    report = f"{work}/verify_{fmt}.json"
    run = subprocess.run([cli, "verify", "--results", results, "--profile", PROFILE, "--formats", fmt,
                          "--report", report] + [a for f in FILES for a in ("--filter", f)],
                         capture_output=True, text=True)
    check(f"{fmt}: verify accepts the ResultsWriter's file (status 0 or 1)", run.returncode in (0, 1), run.stderr)
    strip = lambda text: [l for l in text.splitlines() if not l.startswith("implementation:")]
    check(f"{fmt}: serve's summary is verify's", strip(summary.text) == strip(run.stdout),
          "\n--- serve\n" + summary.text + "\n--- verify\n" + run.stdout)
    check(f"{fmt}: same status", summary.status == run.returncode, f"{summary.status} vs {run.returncode}")
    check(f"{fmt}: same accurate context", summary.accurate_context == json.load(open(report))["accurateContext"],
          f"{summary.accurate_context} vs {json.load(open(report))['accurateContext']}")
    failed = {(f["file"], x["tcId"]): x["message"] for f in json.load(open(report))["groups"] for x in f["failures"]}
    served = {k: v[1] for k, v in verdicts.items() if v[0] == "fail"}
    check(f"{fmt}: the cases serve failed one by one are those verify fails ({len(failed)})", set(served) == set(failed),
          f"serve only {sorted(set(served) - set(failed))[:5]}, verify only {sorted(set(failed) - set(served))[:5]}")
    check(f"{fmt}: with the same messages", served == failed,
          str([(k, served[k], failed.get(k)) for k in served if served[k] != failed.get(k)][:3]))
    check(f"{fmt}: some pass and some fail", 0 < len(failed) < len(verdicts), f"{len(failed)} of {len(verdicts)}")

print("failures:", failures)
sys.exit(1 if failures else 0)
