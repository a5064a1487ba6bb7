"""Runs Hugging Face transformers' RoPE (hf_rope.py) on posenc's vectors and has posenc judge it.

run_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]: one row per model dtype (transformers-f32,
transformers-bf16, transformers-f16), each a results file (SPEC.md section 7) judged by
`posenc verify --report OUTDIR/transformers-ROW.PROFILE.json`. Also writes
OUTDIR/transformers.unsupported.txt (what was reported as unsupported, and why) and
OUTDIR/transformers.configs.json (the transformers config each test group became, and how
transformers refused the invalid cases it refused).
"""
import collections
import json
import os
import subprocess
import sys

import posenc
from posenc.errors import PosencError

import hf_rope

ROWS = ("f32", "bf16", "f16")
# transformers keeps inv_freq in float32 and the attention factor as a Python float whatever the
# model dtype, so the frequencies are judged once, in the f32 row.
FREQUENCIES_ROW = "f32"


def run_row(cases, fmt, models, reasons, refusals):
    writer = posenc.ResultsWriter(f"transformers-{fmt}: {hf_rope.describe()}, model dtype {hf_rope.DTYPES[fmt]}",
                                  fmt, working_format="f32")
    for case in cases:
        if fmt not in case.formats:
            continue
        if case.type == "rope_frequencies" and fmt != FREQUENCIES_ROW:
            reasons[(case.file, f"frequencies in {fmt}: transformers keeps inv_freq in float32 whatever the "
                     "model dtype (judged in the f32 row)")].add(case.tc_id)
            writer.add(case, status="unsupported")
            continue
        model = models.get((case.file, case.group))
        if isinstance(model, str):
            reasons[(case.file, model)].add(case.tc_id)
            writer.add(case, status="unsupported")
            continue
        if model is None:  # transformers refused the config (an invalid case)
            writer.add(case, status="invalid")
            continue
        try:
            values = hf_rope.outputs(case, model, fmt)
        except hf_rope.Unsupported as e:
            reasons[(case.file, str(e))].add(case.tc_id)
            writer.add(case, status="unsupported")
            continue
        except Exception as e:  # transformers refused the case at run time
            if case.valid:
                raise
            refusals[(case.file, f"refused at run time: {type(e).__name__}: {e}")].add(case.tc_id)
            writer.add(case, status="invalid")
            continue
        writer.add(case, values)
    return writer


def build_models(cases, refusals):
    """(file, group) -> hf_rope.Model, or the reason it cannot be built; plus the configs written down."""
    models, configs = {}, []
    for case in cases:
        key = (case.file, case.group)
        if key in models:
            continue
        try:
            kind, cfg, seq_len = hf_rope.model_config(case)
        except hf_rope.Unsupported as e:
            models[key] = str(e)
            continue
        except PosencError as e:  # the CLI writes no config for these parameters (case.hf_rope_config)
            why = str(e).split(": no Hugging Face-style rope config: ")[-1]
            models[key] = why if case.valid else f"no Hugging Face config is written for invalid parameters: {why}"
            continue
        try:
            models[key] = hf_rope.Model(kind, cfg, seq_len)
        except Exception as e:  # transformers' own validation refused the config
            if case.valid:
                models[key] = f"transformers refused the config: {type(e).__name__}: {e}"
            else:
                refusals[(case.file, f"refused the config: {type(e).__name__}: {e}")].add(case.tc_id)
                models[key] = None
        configs.append({"file": case.file, "group": case.group, "comment": case.group_comment, "module": kind,
                        "apply": hf_rope.apply_function(kind, case.params["layout"]), "config": cfg,
                        "seqLen": seq_len})
    return models, configs


def main(cli, out, profile, filter_=None):
    os.makedirs(out, exist_ok=True)
    files = (filter_ or "rope").split(",")
    with posenc.Session(profile=profile, cli=cli) as s:
        cases = s.cases(files, formats=list(ROWS), valid=None)
    refusals = collections.defaultdict(set)  # the invalid cases transformers refused, and how
    models, configs = build_models(cases, refusals)
    reasons = collections.defaultdict(set)
    for fmt in ROWS:
        row = f"transformers-{fmt}"
        results = os.path.join(out, f"{row}.{profile}.results.json")
        run_row(cases, fmt, models, reasons, refusals).write(results)
        args = [cli, "verify", "--results", results, "--profile", profile, "--formats", fmt,
                "--report", os.path.join(out, f"{row}.{profile}.json"), "--filter", ",".join(files)]
        run = subprocess.run(args, capture_output=True, text=True)
        if run.returncode not in (0, 1):
            sys.exit(f"{' '.join(args)}: status {run.returncode}: {run.stderr.strip()}")
        with open(os.path.join(out, f"{row}.{profile}.txt"), "w") as f:
            f.write(run.stdout)
    with open(os.path.join(out, "transformers.unsupported.txt"), "w") as f:
        for (file, why), ids in sorted(reasons.items()):
            f.write(f"{file}: {len(ids)} cases: {why}\n")
    with open(os.path.join(out, "transformers.configs.json"), "w") as f:
        json.dump({"peer": hf_rope.describe(), "groups": configs,
                   "refusals": [{"file": file, "how": how, "tcIds": sorted(ids)}
                                for (file, how), ids in sorted(refusals.items())]}, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:])
