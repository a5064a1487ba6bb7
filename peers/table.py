"""The peers' table (docs/peers.md) from their JSON reports: peers/table.py OUTDIR [FILTER] > peers.md.

Reads what peers/run.sh left in OUTDIR: ROW.PROFILE.json (posenc verify --report, SPEC.md section
9), NAME.rows.json (each row's framework, version and dtype), NAME.unsupported.txt, NAME.skipped,
timings.txt. Per row, vector file and format, under each
profile: the verdict (pass: every judged check passed; FAIL: one failed; not judged: none was),
the worst margin with its case and position (`worstMarginByFormat`) and the accurate context
(`accurateContext`'s `upTo`: every judged check up to that |position| passes; it ends at a failure
or at the last judged position). Nothing here is typed by hand.
"""
import glob
import json
import os
import platform
import subprocess
import sys

import attention_table  # peers/attention_table.py, beside this file

PROFILES = ("standard", "strict")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def load(out):
    """{row: {profile: report}}"""
    rows = {}
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        base = os.path.basename(path)[:-5]
        row, _, profile = base.rpartition(".")
        if profile in PROFILES:
            with open(path) as f:
                rows.setdefault(row, {})[profile] = json.load(f)
    return rows


def load_rows(out):
    """{row: {framework, version, dtype}} from every NAME.rows.json."""
    columns = {}
    for path in sorted(glob.glob(os.path.join(out, "*.rows.json"))):
        with open(path) as f:
            columns.update(json.load(f))
    return columns


def number(v):
    if v is None:
        return "none"
    if isinstance(v, str):
        return v
    if v != v or v in (float("inf"), float("-inf")):
        return "inf"
    if v >= 1e4 or (0 < v < 1e-3):
        return f"{v:.3g}"
    return f"{v:.3f}".rstrip("0").rstrip(".") if v != int(v) or v < 1 else f"{int(v):,}"


def position(v):
    return "n/a" if v is None else f"{int(v):,}"


def cell(group, fmt):
    """(verdict, worst margin at, accurate up to) of one file in one format."""
    judged = [group[part]["judged"].get(fmt, {"passed": 0, "failed": 0}) for part in ("accuracy", "validation")]
    failed, passed = sum(j["failed"] for j in judged), sum(j["passed"] for j in judged)
    verdict = f"**FAIL** ({failed:,} of {failed + passed:,})" if failed else f"pass ({passed:,})" if passed \
        else "not judged"
    worst = group["worstMarginByFormat"].get(fmt)
    at = "" if not worst else f"{number(worst['value'])} (tcId {worst['tcId']}, position {position(worst['position'])})"
    context = group["accurateContext"].get(fmt)
    return verdict, at, "" if context is None else position(context["upTo"])


def formats_of(group):
    fmts = set(group["worstMarginByFormat"])
    for part in ("accuracy", "validation"):
        fmts |= set(group[part]["judged"])
    return [f for f in ("f64", "f32", "bf16", "f16") if f in fmts]


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    distro = ""
    try:
        with open("/etc/os-release") as f:
            distro = next((line.split("=", 1)[1].strip().strip('"') for line in f
                           if line.startswith("PRETTY_NAME")), "")
    except OSError:
        pass
    return f"{platform.machine()}, {cpu or 'unknown CPU'}, {os.cpu_count()} cores, {distro or platform.system()}"


def commit():
    run = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True)
    return run.stdout.strip() or "unknown"


def short(v):
    """A config value with long lists shortened (LongRoPE's factors)."""
    if isinstance(v, dict):
        return {k: short(x) for k, x in v.items()}
    if isinstance(v, list) and len(v) > 4:
        return f"[{len(v)} values: {v[0]!r}, ..., {v[-1]!r}]"
    return v


def print_configs(out):
    """The config each test group became (NAME.configs.json, written by a peer that has configs)."""
    for path in sorted(glob.glob(os.path.join(out, "*.configs.json"))):
        with open(path) as f:
            doc = json.load(f)
        print(f"\n## The configs ({doc['peer']})\n")
        print("Each test group ran as this config (the keyword arguments of the peer's config class, module "
              "or call; `seqLen`: the case's seq_len, which the forward makes), groups of one file with the same "
              "config together; the full lists are in the run's " + os.path.basename(path) + ".\n")
        print("| file | groups | rotary module | rotation | config | seqLen |")
        print("|---|---|---|---|---|---|")
        seen = {}
        for g in doc["groups"]:
            key = (g["file"], g["module"], g["apply"], json.dumps(g["config"], sort_keys=True), g["seqLen"])
            seen.setdefault(key, []).append(str(g["group"]))
        for (file, module, apply, cfg, seq_len), groups in seen.items():
            text = json.dumps(short(json.loads(cfg))).replace("|", "\\|")
            print(f"| {file} | {', '.join(groups)} | {module} | {apply} | `{text}` | "
                  f"{seq_len if seq_len is not None else ''} |")
        for r in doc.get("refusals", []):
            ids = ", ".join(map(str, r["tcIds"]))
            print(f"\n- {r['file']} tcIds {ids}: {r['how']} (answered invalid: the peer refused it)")


def verdict_kind(group, fmt):
    """pass, FAIL or not judged: a cell's verdict without its counts."""
    return cell(group, fmt)[0].split(" (")[0].strip("*") if group else "not judged"


def print_version_changes(rows, columns):
    """Where rows of one framework and dtype but different versions (NAME.rows.json) disagree: per
    file, format and profile, each version's verdict. The causes are the peer's README's to say."""
    families = {}
    for row in rows:
        c = columns.get(row)
        if c:
            families.setdefault((c["framework"], c["dtype"]), []).append(row)
    lines = []
    for (framework, dtype), members in sorted(families.items()):
        if len({columns[r]["version"] for r in members}) < 2:
            continue
        members.sort(key=lambda r: columns[r]["version"])
        groups = {r: {p: {g["file"]: g for g in rep["groups"]} for p, rep in rows[r].items()} for r in members}
        files = sorted(set().union(*[set(g) for r in members for g in groups[r].values()]))
        for file in files:
            for profile in PROFILES:
                fmts = sorted(set().union(*[set(formats_of(groups[r][profile][file])) for r in members
                                            if file in groups[r].get(profile, {})]),
                              key=("f64", "f32", "bf16", "f16").index)
                for fmt in fmts:
                    cells = [cell(groups[r][profile][file], fmt)[0] if file in groups[r].get(profile, {})
                             else "not judged" for r in members]
                    kinds = {verdict_kind(groups[r].get(profile, {}).get(file), fmt) for r in members}
                    if len(kinds) > 1:
                        said = "; ".join(f"{columns[r]['version'].split(' (')[0]}: {v}" for r, v in zip(members, cells))
                        lines.append(f"| {framework} | {dtype} | {file} | {fmt} | {profile} | {said} |")
    if lines:
        print("\n## Verdicts that differ between versions\n")
        print("Rows of the same framework and dtype in different versions, per file, format and profile where "
              "their verdicts differ (pass, FAIL or not judged); each peer's README says which release "
              "changed what, and why.\n")
        print("| framework | dtype | file | format | profile | verdicts |")
        print("|---|---|---|---|---|---|")
        for line in lines:
            print(line)


def main(out, filter_=""):
    rows = load(out)
    timings = {}
    if os.path.exists(os.path.join(out, "timings.txt")):
        with open(os.path.join(out, "timings.txt")) as f:
            for line in f:
                name, profile, ms, avg = line.split()
                timings[(name, profile)] = (int(ms) / 1000, avg)
    print("<!-- Generated by `make peers` (peers/run.sh, peers/table.py) from the peers' JSON reports: "
          "do not edit by hand. -->")
    print("# How known implementations fare\n")
    print("Each peer (peers/README.md) ran on posenc's vectors" + (f" (files {filter_})" if filter_ else "") +
          " and was judged by `posenc verify` under `standard` and `strict` (conformance/SPEC.md section 5). "
          "Per row, vector file and format: the verdict (checks passed, or failed of judged), the worst "
          "margin (error / bound; above 1 fails) with its case and position, and the accurate context "
          "(every judged check up to that |position| passes: it ends at the first failure or at the last judged "
          "position, and a check not judged for a vacuous bound does not end it; `none`: a check at the smallest "
          "judged position fails). "
          "A check the peer does not support is not judged and listed below, never counted as a pass.\n")
    print(f"- command: `make peers` (`peers/run.sh build/posenc build/peers`), posenc {commit()}")
    print(f"- machine: {machine()}")
    for row, by_profile in rows.items():
        impl = next(iter(by_profile.values()))["implementation"].split(" (results ")[0].split(": ", 1)[-1]
        print(f"- `{row}`: {impl}")
    for (name, profile), (s, avg) in sorted(timings.items()):
        print(f"- {name} under {profile}: {s:.1f} s wall, every row (1-minute load average {avg} at its start)")
    columns = load_rows(out)
    print("\n## Summary\n")
    print("| row | framework | version | dtype | profile | verdict | checks judged | failed | not judged | "
          "why not conformant |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row, by_profile in rows.items():
        c = columns.get(row, {})
        for profile in PROFILES:
            r = by_profile.get(profile)
            if r:
                s = r["summary"]
                v = r["verdict"]
                why = [f"{part}: {x}" for part in ("accuracy", "validation") for x in v[part]["reasons"]]
                why += v["coverage"]
                print(f"| `{row}` | {c.get('framework', '')} | {c.get('version', '')} | {c.get('dtype', '')} | "
                      f"{profile} | {'CONFORMANT' if r['conformant'] else 'NOT CONFORMANT'} | "
                      f"{s['passed'] + s['failed']:,} | {s['failed']:,} | {sum(s['notJudged'].values()):,} | "
                      f"{'; '.join(why)} |")
    print("\n## Per file and format\n")
    print("| row | file | format | standard | worst margin (standard) | accurate to (standard) | strict | "
          "worst margin (strict) | accurate to (strict) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row, by_profile in rows.items():
        groups = {p: {g["file"]: g for g in r["groups"]} for p, r in by_profile.items()}
        files = sorted(set().union(*[set(g) for g in groups.values()]))
        for file in files:
            fmts = sorted(set().union(*[set(formats_of(g[file])) for g in groups.values() if file in g]),
                          key=("f64", "f32", "bf16", "f16").index)
            for fmt in fmts or ["-"]:
                cells = []
                for p in PROFILES:
                    g = groups.get(p, {}).get(file)
                    cells += list(cell(g, fmt)) if g and fmt != "-" else ["not judged", "", ""]
                print(f"| `{row}` | {file} | {fmt} | " + " | ".join(cells) + " |")
    print_version_changes(rows, columns)
    print_configs(out)
    print()
    attention_table.main(out)  # the attention rows, one line per row and format
    print("\n## Not supported, and skipped\n")
    for path in sorted(glob.glob(os.path.join(out, "*.skipped"))):
        with open(path) as f:
            print(f"- {os.path.basename(path)[:-8]}: skipped: {f.read().strip()}")
    for path in sorted(glob.glob(os.path.join(out, "*.unsupported.txt"))):
        print(f"\n{os.path.basename(path)[:-16]} (reported to the judge as unsupported, so not judged):\n")
        with open(path) as f:
            for line in f:
                print(f"- {line.strip()}")


if __name__ == "__main__":
    main(*sys.argv[1:])
