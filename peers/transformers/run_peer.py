"""Runs Hugging Face transformers' RoPE (hf_rope.py) on posenc's vectors and has posenc judge it.

run_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]: one row per model dtype (transformers-f32,
transformers-bf16, transformers-f16), each a results file (SPEC.md section 7) judged by
`posenc verify --report OUTDIR/transformers-ROW.PROFILE.json` (peers/peer_driver.py). Also writes
OUTDIR/transformers.unsupported.txt (what was reported as unsupported, and why),
OUTDIR/transformers.configs.json (the transformers config each test group became, and how
transformers refused the invalid cases it refused) and OUTDIR/transformers.rows.json. With
transformers 4.x first on PYTHONPATH (run.sh does it for 4.49.0), the same as transformers-4.49.

The outputs of a case are the model's (hf_rope.py, hf_rope_4.py): its frequencies, cos/sin table and
rotation; a logit is torch.matmul of the rotated q and k in the model dtype, as the attention's
`query_states @ key_states.transpose(2, 3)`.
"""
import sys

import torch
import transformers

import peer_driver

# transformers 5's API (hf_rope.py), or 4.x's for the 4.49.0 rows kept beside it (hf_rope_4.py).
if int(transformers.__version__.split(".")[0]) >= 5:
    import hf_rope
    NAME = "transformers"
else:
    import hf_rope_4 as hf_rope
    NAME = "transformers-" + ".".join(transformers.__version__.split(".")[:2])


def axes(v):
    """A case's position field as a list of per-axis ints."""
    return [int(a) for a in v] if isinstance(v, (list, tuple)) else [int(v)]


class Transformers:
    name = NAME
    framework = "Hugging Face transformers"
    version = f"{hf_rope.VERSION} (torch {torch.__version__})"
    rows = {"f32": ("f32", "float32"), "bf16": ("bf16", "bfloat16"), "f16": ("f16", "float16")}
    working_format = "f32"  # transformers forms its angles in float32 in every dtype

    def describe(self, row):
        return f"{NAME}-{row}: {hf_rope.describe()}, model dtype {hf_rope.DTYPES[row]}"

    def prepare(self, case, group):
        return hf_rope.build(case)

    def outputs(self, case, model, row):
        # inv_freq is a float32 buffer and the attention factor a Python float whatever the model
        # dtype, so the frequencies are judged once, in the f32 row.
        if case.type == "rope_frequencies" and row != "f32":
            raise peer_driver.Unsupported(f"frequencies in {row}: transformers keeps inv_freq in float32 whatever "
                                          "the model dtype (judged in the f32 row)")
        dtype = hf_rope.DTYPES[row]
        layout = case.params["layout"]
        raw = case.raw
        if case.type == "rope_frequencies":
            return model.frequencies()
        if case.type == "rope_table":
            return model.table(axes(raw["position"]), dtype)
        if case.type == "rope_rotate":
            return model.rotate(case.inputs(row, torch=True)["x"], axes(raw["position"]), layout, dtype)
        if case.type == "rope_dot":
            v = case.inputs(row, torch=True)
            q = model.rotate(v["q"], axes(raw["qPosition"]), layout, dtype)
            k = model.rotate(v["k"], axes(raw["kPosition"]), layout, dtype)
            # The attention's logit: `query_states @ key_states.transpose(2, 3)`, in the model dtype.
            return torch.matmul(q[None, :], k[:, None]).reshape(-1)
        raise peer_driver.Unsupported(f"case type {case.type}")

    def config(self, case, model):
        return {"module": type(model.module).__name__, "apply": hf_rope.apply_function(model.kind, case.params["layout"]),
                "config": model.cfg, "seqLen": model.seq_len}


if __name__ == "__main__":
    peer_driver.run(Transformers(), *sys.argv[1:])
