"""The run of an attention peer (peers/README.md's contract) through the Python package's route:
the cases of the attention files come from `posenc serve` (posenc.Session), each row answers them
in its storage format, and the session judges them (Session.submit_file, then finish() writes the
row's JSON report, as `posenc verify --report` would).

A row is a storage format and what the peer declares of its arithmetic there: the working format
(`working_format`), and the formats it rounds attention's scores S and probabilities P to
(`score_format`, `probability_format`; SPEC.md section 5, "Attention"). A declaration is how a
kernel that rounds P to bf16 passes honestly; it is taken from the framework's source, and the
peer's README says where.

An adapter is an object with
- `name`: the peer's name (OUTDIR/NAME-ROW.PROFILE.json);
- `rows`: {row: Row};
- `attend(case, row)`: (O, L or None) for a valid case: O [queries, query_heads, value_dim] and L
  [queries, query_heads] (numpy or torch, values of the row's format), or raises Unsupported.
What is unsupported goes to the judge as unsupported and to OUTDIR/NAME.unsupported.txt (file,
row, count and reason), never dropped. Only accuracy is judged (`checks="accuracy"`): the
frameworks take tensors, not posenc's parameters, so attention/invalid.json's refusals are not
theirs to make.
"""
import collections
import dataclasses
import json
import os
from typing import Optional

import posenc


class Unsupported(Exception):
    """A case the peer has no code for; the message is the reason."""


@dataclasses.dataclass(frozen=True)
class Row:
    fmt: str  # the storage format: f64, f32, bf16 or f16
    framework: str  # the table's columns (OUTDIR/NAME.rows.json)
    version: str
    dtype: str
    describe: str  # the report's implementation line
    working_format: Optional[str] = None
    score_format: Optional[str] = None
    probability_format: Optional[str] = None


def run(adapter, cli, out, profile, filter_=None):
    """Every row of adapter under profile on the attention files filter_ selects (comma- or
    space-separated; default every attention file; none: nothing is run or written):
    OUTDIR/NAME-ROW.PROFILE.json and .txt, NAME.unsupported.txt and NAME.rows.json."""
    os.makedirs(out, exist_ok=True)
    files = [f for f in (filter_ or "attention").replace(",", " ").split() if f.startswith("attention")]
    if not files:  # peers/run.sh's FILTER names no attention file: this peer has nothing to run
        return
    reasons = collections.defaultdict(int)
    for row_name, row in adapter.rows.items():
        name = f"{adapter.name}-{row_name}.{profile}"
        declared = {key: f"{row.fmt}={value}" for key, value in (
            ("working_format", row.working_format), ("score_format", row.score_format),
            ("probability_format", row.probability_format)) if value is not None}
        with posenc.Session(profile=profile, cli=cli, formats=[row.fmt], implementation=row.describe,
                            report=os.path.join(out, f"{name}.json"), checks="accuracy", **declared) as s:
            by_file = collections.defaultdict(list)
            for case in s.cases(files, valid=True):
                if row.fmt in case.formats and case.type == "attention":
                    by_file[case.file].append(case)
            for file, cases in by_file.items():
                answers = []
                for case in cases:
                    try:
                        o, lse = adapter.attend(case, row_name)
                    except Unsupported as e:
                        reasons[(file, row_name, str(e))] += 1
                        answers.append((case, None, "unsupported"))
                        continue
                    answers.append((case, o, "ok", lse))
                s.submit_file(file, row.fmt, answers)
            summary = s.finish(filter=files)
        with open(os.path.join(out, f"{name}.txt"), "w") as f:
            f.write(summary.text)
    with open(os.path.join(out, f"{adapter.name}.unsupported.txt"), "w") as f:
        for (file, row_name, why), n in sorted(reasons.items()):
            f.write(f"{file}: {row_name}: {n} cases: {why}\n")
        f.write("attention/invalid.json: not checked: the framework takes tensors, not posenc's parameters\n")
    with open(os.path.join(out, f"{adapter.name}.rows.json"), "w") as f:
        json.dump({f"{adapter.name}-{r}": {"framework": row.framework, "version": row.version, "dtype": row.dtype,
                                           "declared": declared_text(row)}
                   for r, row in adapter.rows.items()}, f, indent=1)


def declared_text(row):
    """What a row declares, as the table shows it: 'W f32, S -, P bf16'."""
    return ", ".join(f"{k} {v or '-'}" for k, v in (("W", row.working_format), ("S", row.score_format),
                                                     ("P", row.probability_format)))


def visible(case):
    """The case's mask as a boolean [queries, keys] array, True where a query sees a key (SPEC.md
    section 2.7): causal is bottom-right aligned (row i sees keys 0 .. i + keys - queries)."""
    import numpy as np
    shapes = case.attention_shapes()
    nq, nk = shapes["q"][0], shapes["k"][0]
    mask = case.params["mask"]
    if mask == "none":
        return np.ones((nq, nk), dtype=bool)
    if mask == "causal":
        return np.arange(nk)[None, :] <= np.arange(nq)[:, None] + (nk - nq)
    return np.asarray(case.inputs(case.formats[0])["mask"], dtype=bool)


def softmax_scale(case):
    """The case's softmax scale as a binary64 value, as a framework's caller forms it (SPEC.md
    section 2.7): `scale`; else scale_denominator ** -0.5 (head_dim's by default: Hugging Face's
    `self.scaling = self.head_dim**-0.5`); DeepSeek-V2's correction multiplies that by
    yarn_get_mscale(factor, mscale_all_dim) squared, with yarn_get_mscale(s, m) = 0.1·m·ln(s) + 1
    for s > 1, else 1 (modeling_deepseek_v2.py, DeepseekV2Attention.__init__)."""
    import math
    p = case.params
    if "scale" in p:
        return float(p["scale"])
    scale = float(p.get("scale_denominator", p["head_dim"])) ** -0.5
    if "scale_mscale_all_dim" in p:
        s = float(p["rope"]["scaling"]["factor"])
        g = 0.1 * p["scale_mscale_all_dim"] * math.log(s) + 1.0 if s > 1 else 1.0
        scale = scale * g * g
    return scale
