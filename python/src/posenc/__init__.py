"""posenc from Python: the certified vectors' cases as numpy arrays or torch tensors, and the
verdict on your outputs from posenc's own judge (the CLI's `posenc serve`, SPEC.md section 10).

    import posenc
    with posenc.Session(profile="standard") as s:
        for case in s.cases("rope/none", formats=["f32"]):
            ...  # run your code on case.inputs("f32"), then
            s.judge(case, "f32", outputs).check()

pytest: @posenc.cases("rope/*", formats=["f32", "bf16"], profile="standard") (posenc.pytest_plugin).
"""
from .case import Case, load_cases
from .errors import PosencError
from .formats import FORMATS
from .hf import generate_hf_vectors
from .results import ResultsWriter
from .session import Session, Summary
from .verdict import Element, Verdict


def cases(pattern, formats=None, profile="strict", **options):
    """pytest: parametrize a test over the cases `pattern` selects, in each format it is judged in
    among `formats` (see posenc.pytest_plugin)."""
    from .pytest_plugin import cases as _cases
    return _cases(pattern, formats=formats, profile=profile, **options)


__all__ = ["Case", "Element", "FORMATS", "PosencError", "ResultsWriter", "Session", "Summary", "Verdict", "cases",
           "generate_hf_vectors", "load_cases"]
