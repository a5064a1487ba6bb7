"""Hugging Face's RoPE (hf_rope.py) checked against posenc's vectors through the pytest plugin:
`pytest -p posenc.pytest_plugin examples/python/test_hf_rope.py` (POSENC_PROFILE picks the
profile: standard by default; the float32 code fails strict at long context, which is the point
of strict)."""
import os
import sys

import torch

import posenc

sys.path.insert(0, os.path.dirname(__file__))
from hf_rope import hf_rope  # noqa: E402

PROFILE = os.environ.get("POSENC_PROFILE", "standard")


def hf_expressible(case):
    """What this code does: one head, the half layout, full rotary, no scaling, not inverse."""
    p = case.params
    return (case.type == "rope_rotate" and p["layout"] == "half" and p["rotary_dim"] == p["head_dim"]
            and not p["inverse"] and p["scaling"]["kind"] == "none" and "mrope_section" not in p)


@posenc.cases("rope/none", formats=["f32"], profile=PROFILE, where=hf_expressible)
def test_hf_rope_float32(case):
    x = case.x(torch=True)
    return hf_rope(x, case.positions()["position"][0], case.params["base"], torch.float32)


@posenc.cases("rope/none", formats=["f64"], profile=PROFILE, where=hf_expressible)
def test_hf_rope_float64(case):
    x = case.x(torch=True)
    return hf_rope(x, case.positions()["position"][0], case.params["base"], torch.float64)
