#!/usr/bin/python3
"""The mutation campaign (docs/mutation.md, `make mutation`): every mutant of mutants.py judged on
the shipped vectors under `standard`, and the score.

  campaign.py run BUILD_DIR [--jobs N] [--only TEXT]   judge every built mutant (ids containing
                                                       TEXT), write BUILD_DIR/tests/mutation/results.json,
                                                       print the score and every survivor
  campaign.py gaps BUILD_DIR                           for each killed mutant whose killing case
                                                       carries a gap flag: judge it on every file
                                                       and record whether only gap groups kill it
  campaign.py doc BUILD_DIR                            rewrite docs/mutation.md's tables from it

A mutant is judged in f32 on its family's files first and stops at the first file with a failed
check (killed there); one that passes every file in f32 is judged on every file in f64 too
(SPEC.md section 5: a binary64 working format's allowance is 2^29 times smaller, so a small error
shows there first). A mutant that does not compile is stillborn and not counted; one whose
implementation crashes (an index out of bounds stops it, _GLIBCXX_ASSERTIONS) or runs past the
timeout is counted as killed, apart. A survivor that tests/mutation/equivalent.json explains is
equivalent (the reason says why no input can tell it from the original); any other survivor is
reported as such. Run with Debian's /usr/bin/python3: standard library only.
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import mutants as mutants_module  # noqa: E402

TIMEOUT = 600
DOC = os.path.join(ROOT, "docs", "mutation.md")
EQUIVALENT = os.path.join(HERE, "equivalent.json")

# The flags of the groups that kill mutants no other group killed (SPEC.md section 4, each named by
# the branch or constant it decides). Those groups come last in their files, so a file whose first
# failed case carries one of these flags fails no other group.
GAP_FLAGS = ("RampGuard", "ClampedRange", "SmallFactor", "LowFreqFactor", "GivenAttentionFactor", "SmallDModel",
             "GivenScale", "ScaleDenominator", "MultiAxisPrefill", "HugeLogitRange", "RopeWithAlibi", "UniformWeights")

# The vector files a mutant's file feeds first (the others follow).
FAMILY_FILES = [
    ("alibi", ["alibi/", "attention/alibi.json"]),
    ("learned", ["learned/"]),
    ("attention", ["attention/"]),
    ("sinusoidal", ["sinusoidal/"]),
    ("rope", ["rope/", "attention/"]),
]


def vector_files():
    out = []
    for line in open(os.path.join(ROOT, "vectors", "MANIFEST")):
        if line.startswith("#") or not line.strip():
            continue
        out.append(line.split()[2])
    return out


def ordered_files(path, files):
    name = os.path.basename(path)
    for key, prefixes in FAMILY_FILES:
        if key in name:
            first = [f for p in prefixes for f in files if f.startswith(p)]
            first = list(dict.fromkeys(first))
            return first + [f for f in files if f not in first]
    return files


def library(build, mutant_id):
    name = "".join(c if c.isalnum() else "_" for c in mutant_id)
    return os.path.join(build, "tests", "mutation", f"posenc_mutant_{name}.so")


def judge(build, lib, files, formats, keep_going=False):
    command = [os.path.join(build, "tests", "mutation", "posenc_mutation_judge"), "--mutant", lib, "--vectors",
               os.path.join(ROOT, "vectors"), "--profile", "standard", "--formats", formats]
    if keep_going:
        command.append("--keep-going")
    start = time.monotonic()
    try:
        r = subprocess.run(command + files, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": time.monotonic() - start, "output": ""}
    seconds = time.monotonic() - start
    lines = r.stdout.strip().splitlines()
    if r.returncode == 0:
        return {"status": "passed", "seconds": seconds, "output": r.stdout}
    if r.returncode == 1:
        failing = next((line for line in lines if ", first failure: " in line), lines[-1] if lines else "")
        return {"status": "failed", "seconds": seconds, "line": failing}
    if r.returncode < 0:
        return {"status": "crashed", "seconds": seconds,
                "line": (lines[-1] if lines else "") + f" [signal {-r.returncode}] " + r.stderr.strip()[-300:]}
    return {"status": "error", "seconds": seconds, "line": r.stderr.strip()[-500:]}


def judge_mutant(build, m, files, failed_builds):
    lib = library(build, m["id"])
    entry = {k: m[k] for k in ("id", "path", "function", "operator", "line", "before", "after")}
    # A library left from an earlier build of a mutant that no longer compiles is not judged.
    if not os.path.exists(lib) or target(m["id"]) in failed_builds:
        entry["status"] = "stillborn"
        return entry
    total = 0.0
    for formats in ("f32", "f64"):
        r = judge(build, lib, ordered_files(m["path"], files), formats)
        total += r["seconds"]
        if r["status"] != "passed":
            entry["status"] = {"failed": "killed"}.get(r["status"], r["status"])
            entry["format"] = formats
            entry["failure"] = r.get("line", "")
            break
    else:
        entry["status"] = "survived"
    entry["seconds"] = round(total, 2)
    return entry


def target(mutant_id):
    return "posenc_mutant_" + "".join(c if c.isalnum() else "_" for c in mutant_id)


def build_all(build, jobs, mutants):
    """Builds the judge, the control and the mutants (configured with POSENC_MUTATION_CAMPAIGN=ON),
    going on past those that do not compile. Returns the seconds it took and the targets that
    failed to build."""
    cache = open(os.path.join(build, "CMakeCache.txt")).read()
    if "POSENC_MUTATION_CAMPAIGN:BOOL=ON" not in cache:
        raise SystemExit("campaign: configure BUILD_DIR with -DPOSENC_MUTATION_CAMPAIGN=ON first (make mutation does)")
    keep_going = ["-k", "0"] if "CMAKE_GENERATOR:INTERNAL=Ninja" in cache else ["-k"]
    log = os.path.join(build, "tests", "mutation", "build.log")
    targets = ["posenc_mutants"] if mutants is None else [target(m["id"]) for m in mutants]
    start = time.monotonic()
    with open(log, "w") as out:
        subprocess.run(["cmake", "--build", build, "-j", str(jobs), "--target", "posenc_mutation_judge",
                        "posenc_mutant_baseline"] + targets + ["--"] + keep_going, stdout=out, stderr=out)
    seconds = time.monotonic() - start
    failed = set(re.findall(r"CMakeFiles/(posenc_mutant_\w+)\.dir/\S*\] Error", open(log).read()))
    print(f"built the mutants in {seconds:.0f} s, {len(failed)} do not compile (log: {log})", flush=True)
    return seconds, failed


def run(build, jobs, only):
    """Judges the mutants whose ids contain `only` (every one when None) and merges them into
    results.json: a campaign may run in parts, each adding its build and judge time."""
    files = vector_files()
    mutants = [m for m in mutants_module.all_mutants() if only is None or only in m["id"]]
    build_seconds, failed_builds = build_all(build, jobs, None if only is None else mutants)
    baseline = os.path.join(build, "tests", "mutation", "posenc_mutant_baseline.so")
    start = time.monotonic()
    control = judge(build, baseline, files, "f32,f64", keep_going=True)
    if control["status"] != "passed":
        print(f"campaign: the unmutated implementation fails `standard`: {control}", file=sys.stderr)
        return 1
    print(f"control (no mutant): passes standard on {len(files)} files in f32 and f64 "
          f"({control['seconds']:.0f} s)")
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for n, entry in enumerate(pool.map(lambda m: judge_mutant(build, m, files, failed_builds), mutants), 1):
            results.append(entry)
            print(f"[{n}/{len(mutants)}] {entry['id']}: {entry['status']}"
                  + (f" ({entry.get('format')}) {entry.get('failure', '')[:160]}" if entry["status"] != "survived" else ""),
                  flush=True)
    seconds = time.monotonic() - start
    path = os.path.join(build, "tests", "mutation", "results.json")
    out = {"build_seconds": 0.0, "judge_seconds": 0.0, "parts": [], "mutants": []}
    if only is not None and os.path.exists(path):
        out = json.load(open(path))
    # Entries of mutants the enumeration no longer lists are dropped; this part's replace theirs.
    ids = {m["id"] for m in mutants_module.all_mutants()}
    judged = {m["id"] for m in results}
    kept = [m for m in out["mutants"] if m["id"] in ids and m["id"] not in judged]
    order = {m["id"]: n for n, m in enumerate(mutants_module.all_mutants())}
    out["mutants"] = sorted(kept + results, key=lambda m: order[m["id"]])
    out["parts"] = out.get("parts", []) + [{"only": only, "mutants": len(results), "build_seconds": round(build_seconds, 1),
                                            "judge_seconds": round(seconds, 1)}]
    out["build_seconds"] = round(sum(p["build_seconds"] for p in out["parts"]), 1)
    out["judge_seconds"] = round(sum(p["judge_seconds"] for p in out["parts"]), 1)
    out["control_seconds"] = round(control["seconds"], 1)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print_score(out)
    print(f"results: {path}")
    return 0


def failing_case(line):
    """(file, tcId) of a judge line 'FILE: N passed, M failed, first failure: tcId T ...'."""
    if ", first failure: tcId " not in line:
        return None
    path = line.split(":", 1)[0]
    return path, int(line.split(", first failure: tcId ", 1)[1].split()[0])


def case_flags(path, tc_id, cache={}):
    if path not in cache:
        data = json.load(open(os.path.join(ROOT, "vectors", path)))
        cache[path] = {t["tcId"]: t.get("flags", []) for g in data["testGroups"] for t in g["tests"]}
    return cache[path].get(tc_id, [])


def gaps(build):
    """Marks each killed mutant whose killing case carries a gap flag with the flags of every
    file's first failed case, judged on every file in the format that killed it, and with
    whether those are all gap cases (no group without a gap flag kills it)."""
    path = os.path.join(build, "tests", "mutation", "results.json")
    results = json.load(open(path))
    files = vector_files()
    for m in results["mutants"]:
        m.pop("gap", None)
        where = failing_case(m.get("failure", "")) if m["status"] == "killed" else None
        if where is None or not set(case_flags(*where)) & set(GAP_FLAGS):
            continue
        command = [os.path.join(build, "tests", "mutation", "posenc_mutation_judge"), "--mutant",
                   library(build, m["id"]), "--vectors", os.path.join(ROOT, "vectors"), "--profile", "standard",
                   "--formats", m["format"], "--keep-going"] + files
        r = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
        killers = []
        for line in r.stdout.splitlines():
            case = failing_case(line)
            if case is not None:
                flags = [f for f in case_flags(*case) if f in GAP_FLAGS]
                killers.append({"file": case[0], "tcId": case[1], "gap_flags": flags})
        m["gap"] = {"killers": killers, "only_gap": all(k["gap_flags"] for k in killers)}
        print(f"{m['id']}: killed by " + "; ".join(f"{k['file']} tcId {k['tcId']} {k['gap_flags'] or '(no gap flag)'}"
                                                   for k in killers), flush=True)
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    return 0


def equivalents():
    return json.load(open(EQUIVALENT)) if os.path.exists(EQUIVALENT) else {}


def classify(results):
    eq = equivalents()
    classes = {"killed": [], "crashed": [], "timeout": [], "equivalent": [], "survived": [], "stillborn": [],
               "error": []}
    for m in results["mutants"]:
        status = m["status"]
        if status == "survived" and m["id"] in eq:
            status = "equivalent"
        classes[status].append(m)
    stale = [i for i in eq if any(m["id"] == i and m["status"] != "survived" for m in results["mutants"])]
    return classes, stale


def score(classes):
    killed = len(classes["killed"]) + len(classes["crashed"]) + len(classes["timeout"])
    counted = killed + len(classes["survived"]) + len(classes["equivalent"])
    return killed, counted


def print_score(results):
    classes, stale = classify(results)
    killed, counted = score(classes)
    non_equivalent = counted - len(classes["equivalent"])
    print(f"mutants: {sum(len(v) for v in classes.values())} ({len(classes['stillborn'])} do not compile)")
    print(f"killed {killed} of {counted} ({len(classes['crashed'])} by a crash, {len(classes['timeout'])} by the "
          f"timeout): score {killed / counted:.3f}; {len(classes['equivalent'])} equivalent; "
          f"killed {killed} of {non_equivalent} non-equivalent")
    for m in classes["survived"]:
        print(f"SURVIVED {m['id']}  {m['path']}:{m['line']}  {m['before']}  ->  {m['after']}")
    for m in classes["error"]:
        print(f"ERROR {m['id']}: {m.get('failure', '')}")
    for i in stale:
        print(f"equivalent.json lists {i}, which is killed")


def cell(text):
    """A table cell's text: its | escaped (GitHub tables split cells at | even inside code)."""
    return text.replace("|", "\\|")


def doc(build):
    results = json.load(open(os.path.join(build, "tests", "mutation", "results.json")))
    classes, stale = classify(results)
    if classes["survived"] or classes["error"] or stale:
        print("campaign.py doc: survivors without a reason, errors or stale equivalents; run `campaign.py run` "
              "and explain or kill every survivor first", file=sys.stderr)
        return 1
    killed, counted = score(classes)
    eq = equivalents()
    by_file = {}
    for status, ms in classes.items():
        for m in ms:
            by_file.setdefault(m["path"], {}).setdefault(status, 0)
            by_file[m["path"]][status] += 1
    lines = ["| file | mutants | killed | of which by a crash | equivalent | do not compile |", "|---|---|---|---|---|---|"]
    for path in [t[0] for t in mutants_module.TARGETS]:
        c = by_file.get(path, {})
        total = sum(c.values())
        k = c.get("killed", 0) + c.get("crashed", 0) + c.get("timeout", 0)
        lines.append(f"| `{path}` | {total} | {k} | {c.get('crashed', 0) + c.get('timeout', 0)} | "
                     f"{c.get('equivalent', 0)} | {c.get('stillborn', 0)} |")
    total = sum(len(v) for v in classes.values())
    lines.append(f"| all | {total} | {killed} | {len(classes['crashed']) + len(classes['timeout'])} | "
                 f"{len(classes['equivalent'])} | {len(classes['stillborn'])} |")
    lines += ["", f"Score: {killed} killed of {counted} mutants that compile ({killed / counted:.3f}); "
              f"{killed} of {counted - len(classes['equivalent'])} non-equivalent (every one).", "",
              "The equivalent mutants (tests/mutation/equivalent.json), each with why no input can tell it from "
              "the original:", "", "| mutant | line | edit | why equivalent |", "|---|---|---|---|"]
    for m in sorted(classes["equivalent"], key=lambda m: m["id"]):
        lines.append(f"| `{m['id']}` | `{m['path']}:{m['line']}` | `{cell(m['before'])}` → `{cell(m['after'])}` | {eq[m['id']]} |")
    gap = [m for m in classes["killed"] if m.get("gap", {}).get("only_gap")]
    lines += ["", f"The {len(gap)} mutants that only the groups with a gap flag kill (SPEC.md section 4; `campaign.py "
              "gaps` judges each on every file and finds no other group that fails it), with the first case of each "
              "file that does:", "", "| mutant | line | edit | killed by |", "|---|---|---|---|"]
    for m in gap:
        killers = "; ".join(f"`{k['file']}` tcId {k['tcId']} ({', '.join(k['gap_flags'])})" for k in m["gap"]["killers"])
        lines.append(f"| `{m['id']}` | `{m['path']}:{m['line']}` | `{cell(m['before'])}` → `{cell(m['after'])}` | {killers} |")
    begin, end = "<!-- BEGIN tests/mutation/campaign.py doc -->", "<!-- END tests/mutation/campaign.py doc -->"
    text = open(DOC).read()
    a, b = text.index(begin) + len(begin), text.index(end)
    with open(DOC, "w") as f:
        f.write(text[:a] + "\n" + "\n".join(lines) + "\n" + text[b:])
    return 0


def main(argv):
    if len(argv) < 3 or argv[1] not in ("run", "gaps", "doc"):
        print(__doc__, file=sys.stderr)
        return 2
    build = os.path.abspath(argv[2])
    if argv[1] == "doc":
        return doc(build)
    if argv[1] == "gaps":
        return gaps(build)
    jobs, only = 2, None
    rest = argv[3:]
    while rest:
        if rest[0] == "--jobs" and len(rest) > 1:
            jobs = int(rest[1])
        elif rest[0] == "--only" and len(rest) > 1:
            only = rest[1]
        else:
            print(__doc__, file=sys.stderr)
            return 2
        rest = rest[2:]
    return run(build, jobs, only)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
