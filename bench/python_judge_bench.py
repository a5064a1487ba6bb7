"""Speed of judging every shipped vector from Python (the posenc package through `posenc serve`)
against `posenc verify` on the same outputs (the target: at most 2x). Not a test: run it by
hand on an idle machine, `python bench/python_judge_bench.py build/posenc [WORK_DIR]` with the
package on PYTHONPATH (python/src). The outputs are the correct roundings in every format the
case is judged in (what a correct implementation returns), under `standard`, accuracy only (the
valid cases: the invalid ones have no outputs to judge).

Timed, for the Python route: fetching the cases with their inputs, turning each case's outputs
into the format's hex floats, the judge requests (a file's cases in one message per format) and
finish; CPU seconds of this process and of the CLI child, and wall time. For verify: the four
runs (a results file holds one format), each timed the same way, after the results files are
written (not timed). Measured numbers: python/README.md ("Why the judge stays in C++")."""
import os
import resource
import subprocess
import sys
import tempfile
import time

import posenc

cli = sys.argv[1]
work = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
FORMATS = posenc.FORMATS


def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def python_route(verdicts):
    start_wall, start_self, start_children = time.perf_counter(), cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
    s = posenc.Session(profile="standard", cli=cli, implementation="bench", checks="accuracy")
    cases = s.cases(valid=True, expected=True)
    by_file = {}
    for c in cases:
        by_file.setdefault(c.file, []).append(c)
    judged = failed = 0
    for file, file_cases in by_file.items():
        for f in FORMATS:
            answers = [(c, c.expected(f)) for c in file_cases if f in c.formats]
            if not answers:
                continue
            if verdicts:
                out = s.judge_file(file, f, answers)
                failed += sum(v.verdict == "fail" for v in out)
            else:
                s.submit_file(file, f, answers)
            judged += len(answers)
    summary = s.finish()
    wall = time.perf_counter() - start_wall
    return wall, cpu(resource.RUSAGE_SELF) - start_self, cpu(resource.RUSAGE_CHILDREN) - start_children, judged, failed, summary


def write_results():
    s = posenc.Session(profile="standard", cli=cli)
    writers = {f: posenc.ResultsWriter("bench", f) for f in FORMATS}
    for c in s.cases(valid=True, expected=True):
        for f in c.formats:
            writers[f].add(c, c.expected(f))
    s.close()
    paths = {}
    for f, w in writers.items():
        paths[f] = os.path.join(work, f"results_{f}.json")
        w.write(paths[f])
    return paths


def verify_route(paths):
    start_wall, start_children = time.perf_counter(), cpu(resource.RUSAGE_CHILDREN)
    summaries = []
    for f, path in paths.items():
        run = subprocess.run([cli, "verify", "--results", path, "--profile", "standard", "--formats", f, "--checks", "accuracy"],
                             capture_output=True, text=True)
        if run.returncode not in (0, 1):
            sys.exit(f"verify failed: {run.stderr}")
        summaries.append(run.stdout)
    return time.perf_counter() - start_wall, cpu(resource.RUSAGE_CHILDREN) - start_children, summaries


paths = write_results()
v_wall, v_cpu, _ = verify_route(paths)
print(f"posenc verify, 4 results files (one per format): wall {v_wall:.2f} s, CPU {v_cpu:.2f} s")
for verdicts in (True, False):
    wall, py_cpu, cli_cpu, judged, failed, summary = python_route(verdicts)
    mode = "a verdict per case (judge_file)" if verdicts else "verdicts at finish only (submit_file)"
    print(f"python, {mode}: {judged} checks, {failed} failed; wall {wall:.2f} s ({wall / v_wall:.2f}x verify), "
          f"CPU {py_cpu + cli_cpu:.2f} s = python {py_cpu:.2f} + posenc serve {cli_cpu:.2f} "
          f"({(py_cpu + cli_cpu) / v_cpu:.2f}x verify); {'CONFORMANT' if summary.conformant else 'NOT CONFORMANT'}")
