"""The judge's answer for one case in one format, and the failure message tests show."""
from dataclasses import dataclass, field
from typing import List, Optional

from .formats import json_number


@dataclass(frozen=True)
class Element:
    index: int
    got: str        # hex float of the output
    expected: str   # hex float of the correctly rounded value in the format
    margin: float   # error / bound: above 1 fails
    scaled_error: float
    bound: float
    ulp: float
    vacuous: bool = False  # under a bound that admits any value: not judged

    @staticmethod
    def of(j):
        if j is None:
            return None
        return Element(j["element"], j["got"], j["expected"], json_number(j["margin"]),
                       json_number(j["scaledError"]), json_number(j["bound"]), json_number(j["ulp"]),
                       j.get("vacuous", False))


@dataclass(frozen=True)
class Verdict:
    file: str
    tc_id: int
    format: str
    profile: str
    verdict: str               # "pass", "fail" or "not judged"
    margin: Optional[float]    # the worst judged element's (None: nothing measured)
    message: str               # the judge's own words (the reports print the same)
    position: Optional[float]  # max |position| of the case
    worst: Optional[Element]
    failure: Optional[Element]  # the first failing element
    outputs: int
    inputs: str = ""  # the case's positions, as the vector file gives them
    elements: List[Element] = field(default_factory=list, repr=False)

    @property
    def passed(self):
        return self.verdict == "pass"

    def describe(self):
        """A failure as torch.testing.assert_close words it: what, which element, got, expected."""
        head = f"posenc: {self.file} tcId {self.tc_id} in {self.format} under {self.profile}: {self.verdict}"
        lines = [head if not self.message else f"{head}: {self.message}"]
        e = self.failure or self.worst
        if e is not None:
            lines += [
                f"Mismatched element: {e.index} of {self.outputs} (first failing)" if self.failure else
                f"Worst element: {e.index} of {self.outputs}",
                f"Got:      {e.got} ({float.fromhex(e.got)!r})",
                f"Expected: {e.expected} ({float.fromhex(e.expected)!r})",
                f"Margin:   {e.margin:.6g} (error / bound; scaled error {e.scaled_error:.6g}, bound {e.bound:.6g}, {e.ulp:.3g} ulp)",
            ]
        if self.inputs:
            lines.append(f"Position: {self.inputs}")
        if self.failure is not None and self.worst is not None and self.worst.index != self.failure.index:
            lines.append(f"Worst element: {self.worst.index}, margin {self.worst.margin:.6g}")
        return "\n".join(lines)

    def check(self):
        """Raises AssertionError (with describe()) when the case failed."""
        __tracebackhide__ = True
        if self.verdict == "fail":
            raise AssertionError(self.describe())
        return self


def verdict_from(case, profile, j):
    # As the judge's messages name them: position=5,6,7 (one value per axis).
    inputs = ", ".join(f"{k}={','.join(map(str, v)) if isinstance(v, tuple) else v}" for k, v in case.positions().items())
    if case.type == "attention":  # thousands of keys: their range (the first axis), not each
        p = case.positions()
        ranges = []
        for name, side in (("queryPositions", "queries"), ("keyPositions", "keys")):
            first = [t[0] for t in p[name]]
            ranges.append(f"{len(first)} {side} at {min(first)}..{max(first)}" if first else f"no {side}")
        inputs = ", ".join(ranges)
    return Verdict(file=case.file, inputs=inputs, tc_id=j["tcId"], format=j["format"], profile=profile, verdict=j["verdict"],
                   margin=json_number(j["margin"]) if j.get("margin") is not None else None,
                   message=j.get("message", ""), position=j.get("position"), worst=Element.of(j.get("worst")),
                   failure=Element.of(j.get("failure")), outputs=case.outputs,
                   elements=[Element.of(e) for e in j.get("elements", [])])
