"""The run of a Python peer (peers/README.md's contract), shared by the peers whose adapter answers
one case at a time: the cases come from `posenc serve` (posenc.Session), each row's outputs go to
a results file (posenc.ResultsWriter, SPEC.md section 7) that `posenc verify --report` judges.

An adapter is an object with
- `name`: the peer's name (NAME of OUTDIR/NAME-ROW.PROFILE.json);
- `rows`: {row: (fmt, dtype name)}, one results file per row, in format fmt;
- `framework`, `version`: what OUTDIR/NAME.rows.json says of every row (the table's columns);
- `describe(row)`: the implementation line of a row's results file;
- `prepare(case, group)`: what a test group runs as (its config, built once per group from its
  first case; group: every case of that group, for what depends on all of them): a value, or
  raises Unsupported (the reason), or any other exception when the framework refuses the
  parameters (an invalid case refused: answered invalid; a valid one: unsupported, with how);
- `outputs(case, prepared, row)`: the outputs (numpy or torch, values of the row's format), or
  raises Unsupported;
- optionally `config(case, prepared)`: the group's config for OUTDIR/NAME.configs.json (module,
  apply, config, seqLen).
What is unsupported goes to the judge as unsupported and to OUTDIR/NAME.unsupported.txt (file,
count and reason), never dropped.
"""
import collections
import json
import os
import subprocess
import sys

import posenc
from posenc.errors import PosencError


class Unsupported(Exception):
    """A case the peer has no code for; the message is the reason."""


def _prepare_all(adapter, cases, refusals):
    """(file, group) -> prepared value, the Unsupported reason (str), or None (refused, invalid)."""
    prepared, configs, groups = {}, [], collections.defaultdict(list)
    for case in cases:
        groups[(case.file, case.group)].append(case)
    for case in cases:
        key = (case.file, case.group)
        if key in prepared:
            continue
        try:
            value = adapter.prepare(case, groups[key])
        except Unsupported as e:
            prepared[key] = str(e)
            continue
        except PosencError as e:  # the CLI writes no config for these parameters (Case.hf_rope_config)
            why = str(e).split(": no Hugging Face-style rope config: ")[-1]
            prepared[key] = why if case.valid else f"no Hugging Face config is written for invalid parameters: {why}"
            continue
        except Exception as e:  # the framework refused the parameters
            if case.valid:
                prepared[key] = f"{adapter.name} refused the parameters: {type(e).__name__}: {e}"
            else:
                refusals[(case.file, f"refused the parameters: {type(e).__name__}: {e}")].add(case.tc_id)
                prepared[key] = None
            continue
        prepared[key] = value
        if hasattr(adapter, "config"):
            configs.append({"file": case.file, "group": case.group, "comment": case.group_comment,
                            **adapter.config(case, value)})
    return prepared, configs


def _rows(adapter, cases, prepared, reasons, refusals):
    """{row: ResultsWriter}: every case in every row, a case's rows one after the other (so that
    what an adapter builds per group and dtype is built once per group)."""
    writers = {row: posenc.ResultsWriter(adapter.describe(row), fmt, working_format=getattr(adapter, "working_format", None))
               for row, (fmt, _) in adapter.rows.items()}
    for case in cases:
        for row, (fmt, _) in adapter.rows.items():
            if fmt not in case.formats:
                continue
            writer = writers[row]
            value = prepared[(case.file, case.group)]
            if isinstance(value, str):
                reasons[(case.file, value)].add(case.tc_id)
                writer.add(case, status="unsupported")
                continue
            if value is None:
                writer.add(case, status="invalid")
                continue
            try:
                outputs = adapter.outputs(case, value, row)
            except Unsupported as e:
                reasons[(case.file, str(e))].add(case.tc_id)
                writer.add(case, status="unsupported")
                continue
            except Exception as e:  # the framework refused the case at run time
                if case.valid:
                    raise
                refusals[(case.file, f"refused at run time: {type(e).__name__}: {e}")].add(case.tc_id)
                writer.add(case, status="invalid")
                continue
            writer.add(case, outputs)
    return writers


def run(adapter, cli, out, profile, filter_=None):
    """Every row of adapter under profile on the files filter_ selects (comma-separated; default
    every rope file): OUTDIR/NAME-ROW.PROFILE.json (and .txt, .results.json), NAME.unsupported.txt,
    NAME.rows.json and, with configs, NAME.configs.json."""
    files = (filter_ or "rope").replace(" ", ",").split(",")
    fmts = sorted({fmt for fmt, _ in adapter.rows.values()})
    with posenc.Session(profile=profile, cli=cli) as s:
        cases = s.cases(files, formats=fmts, valid=None)
    for row, results in write_results(adapter, cases, out, f".{profile}").items():
        name = f"{adapter.name}-{row}.{profile}"
        args = [cli, "verify", "--results", results, "--profile", profile, "--formats", adapter.rows[row][0],
                "--report", os.path.join(out, f"{name}.json"), "--filter", ",".join(files)]
        run_ = subprocess.run(args, capture_output=True, text=True)
        if run_.returncode not in (0, 1):
            sys.exit(f"{' '.join(args)}: status {run_.returncode}: {run_.stderr.strip()}")
        with open(os.path.join(out, f"{name}.txt"), "w") as f:
            f.write(run_.stdout)


def write_results(adapter, cases, out, suffix=""):
    """Every row of adapter on `cases` (from a Session, or posenc.load_cases where no CLI runs):
    OUTDIR/NAME-ROW{suffix}.results.json per row, NAME.unsupported.txt, NAME.rows.json and, with
    configs, NAME.configs.json. Returns {row: results file}; `posenc verify` judges them."""
    os.makedirs(out, exist_ok=True)
    refusals = collections.defaultdict(set)
    prepared, configs = _prepare_all(adapter, cases, refusals)
    reasons = collections.defaultdict(set)
    writers = _rows(adapter, cases, prepared, reasons, refusals)
    files = {}
    for row in adapter.rows:
        files[row] = os.path.join(out, f"{adapter.name}-{row}{suffix}.results.json")
        writers[row].write(files[row])
    with open(os.path.join(out, f"{adapter.name}.unsupported.txt"), "w") as f:
        for (file, why), ids in sorted(reasons.items()):
            f.write(f"{file}: {len(ids)} cases: {why}\n")
    write_rows(out, adapter.name, {f"{adapter.name}-{row}": (adapter.framework, adapter.version, dtype)
                                   for row, (_, dtype) in adapter.rows.items()})
    if hasattr(adapter, "config"):
        with open(os.path.join(out, f"{adapter.name}.configs.json"), "w") as f:
            json.dump({"peer": adapter.describe(next(iter(adapter.rows))).split(", model dtype")[0],
                       "groups": configs,
                       "refusals": [{"file": file, "how": how, "tcIds": sorted(ids)}
                                    for (file, how), ids in sorted(refusals.items())]}, f, indent=1)
    return files


def write_rows(out, name, rows):
    """OUTDIR/NAME.rows.json: {row: {framework, version, dtype}}, the table's columns per row."""
    with open(os.path.join(out, f"{name}.rows.json"), "w") as f:
        json.dump({row: {"framework": fw, "version": v, "dtype": d} for row, (fw, v, d) in rows.items()}, f, indent=1)
