"""One vector case as `posenc serve` sends it, with its inputs in numpy or torch."""
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from . import formats as F

# The case's input fields in the vector files (SPEC.md section 4), by kind.
_POSITION_FIELDS = ("position", "positions", "qPosition", "kPosition", "queryPosition", "keyPosition")
_VALUE_FIELDS = ("x", "q", "k")


@dataclass(frozen=True)
class Case:
    """A vector case. params: posenc's parameter names (SPEC.md section 2), integers as int and
    reals as float (exact: every real parameter is a binary64 value); params_hex: the same with
    every real as the hex-float text the vector file writes. formats: those the judge puts this
    case in (its inputs are exact there), as the CLI says."""
    file: str
    tc_id: int
    group: int
    type: str
    comment: str
    group_comment: str
    params: Dict[str, Any]
    input_format: str
    formats: Tuple[str, ...]
    outputs: int
    valid: bool
    error: Optional[str]
    flags: Tuple[str, ...]
    raw: Dict[str, Any] = field(repr=False)  # the case's JSON as the vector file has it
    table: Optional[Tuple[float, ...]] = field(default=None, repr=False)  # learned_lookup's table
    hf: Optional[Dict[str, Any]] = field(default=None, repr=False)  # see hf_rope_config
    hf_error: Optional[str] = field(default=None, repr=False)
    params_hex: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def id(self):
        return f"{self.file[:-5] if self.file.endswith('.json') else self.file}-{self.tc_id}"

    def positions(self):
        """The integer inputs by field name, as Python ints, shaped as the vector file has them
        (SPEC.md section 4):

        - a single position is an int: "position" of sinusoidal_row/embed and learned_lookup,
          alibi_bias's "queryPosition" and "keyPosition", and its "head";
        - RoPE's positions are per axis, a tuple of ints with one per axis (one, or M-RoPE's
          len(params["mrope_section"])): "position" of rope_table/rope_rotate, and rope_dot's
          query and key sides, "qPosition" and "kPosition" (so case.positions()["position"][0]
          is the position of a RoPE case with one axis);
        - "positions": sinusoidal_dot's two positions (a, b), a tuple of two ints.

        Cases without positions (rope_frequencies, alibi_slopes) give {}."""
        out = {}
        for name in _POSITION_FIELDS:
            if name in self.raw:
                v = self.raw[name]
                out[name] = int(v) if isinstance(v, str) else tuple(int(p) for p in v)
        if "head" in self.raw:
            out["head"] = int(self.raw["head"])
        return out

    def inputs(self, fmt, torch=False, device=None):
        """The value inputs (x, or q and k; a learned table) in fmt: numpy arrays (bf16 as
        float32 holding bf16 values), or torch tensors of fmt's dtype on `device`. Refused for a
        format the case is not judged in (its inputs are not fmt values)."""
        F.check_format(fmt)
        if fmt not in self.formats:
            raise F.PosencError(f"{self.file} tcId {self.tc_id}: not judged in {fmt} (judged in: "
                                f"{', '.join(self.formats) or 'none'}), so it has no {fmt} inputs")
        convert = (lambda v: F.to_torch(fmt, v, device)) if torch else (lambda v: F.to_numpy(fmt, v))
        out = {name: convert(F.from_hex(self.raw[name])) for name in _VALUE_FIELDS if name in self.raw}
        if self.table is not None:
            out["table"] = convert(self.table)
        return out

    def expected(self, fmt, torch=False, device=None):
        """The correctly rounded outputs in fmt (asked for with Session.cases(expected=True))."""
        if "expected" not in self.raw:
            raise F.PosencError(f"{self.file} tcId {self.tc_id}: no expected values (Session.cases(expected=True) "
                                "fetches them)")
        values = F.from_hex(self.raw["expected"][F.check_format(fmt)])
        return F.to_torch(fmt, values, device) if torch else F.to_numpy(fmt, values)

    def x(self, fmt, torch=False, device=None):
        return self.inputs(fmt, torch, device)["x"]

    def hf_rope_config(self):
        """The parameters as a Hugging Face-style config fragment: {"head_dim", "rope_parameters":
        {"rope_type", "rope_theta", ...}} in transformers' key names.

        The CLI writes it (models/hf_rope_dict.hpp) in the group header `posenc serve` sends, the
        field "hfRopeConfig" (SPEC.md section 10); Python keeps no mapping of its own. Parameters a
        config cannot say (the backward rotation, NTK scaling) come with the reason instead."""
        if self.hf is None:
            why = self.hf_error or "not a RoPE case"
            raise F.PosencError(f"{self.file} tcId {self.tc_id}: no Hugging Face-style rope config: {why}")
        return self.hf


def cases_from_message(message):
    """The cases of one "cases" answer line (one vector file)."""
    out = []
    for g in message["groups"]:
        params, params_hex = F.decode(g["params"]), F.decode(g["params"], reals=str)
        table = tuple(F.from_hex(g["table"])) if "table" in g else None
        for t in g["tests"]:
            out.append(Case(
                file=message["file"], tc_id=t["tcId"], group=g["group"], type=g["type"], comment=t["comment"],
                group_comment=g["comment"], params=params, input_format=g["inputFormat"],
                formats=tuple(t["formats"]), outputs=t["outputs"], valid=t["result"] == "valid",
                error=t.get("error"), flags=tuple(t["flags"]), raw=t, table=table, hf=g.get("hfRopeConfig"),
                hf_error=g.get("hfRopeConfigError"), params_hex=params_hex))
    return out
