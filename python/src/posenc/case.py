"""One vector case as `posenc serve` sends it, with its inputs in numpy or torch."""
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from . import formats as F

# The case's input fields in the vector files (SPEC.md section 4), by kind.
_POSITION_FIELDS = ("position", "positions", "qPosition", "kPosition", "queryPosition", "keyPosition")
_VALUE_FIELDS = ("x", "q", "k")
# An attention case's tensors as `posenc serve` sends them (SPEC.md section 10), flat.
_ATTENTION_VALUES = ("q", "k", "v", "table")


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

        - an attention case's "queryPositions" and "keyPositions": a tuple per token of its
          coordinates (one, ALiBi's and plain RoPE's, or M-RoPE's axes), so
          torch.tensor(case.positions()["keyPositions"]) is [keys, axes].

        Cases without positions (rope_frequencies, alibi_slopes) give {}."""
        if self.type == "attention":
            axes = len(self.params["rope"]["mrope_section"]) if "mrope_section" in self.params.get("rope", {}) else 1
            return {name: tuple(tuple(int(p) for p in self.raw[name][i:i + axes])
                                for i in range(0, len(self.raw[name]), axes))
                    for name in ("queryPositions", "keyPositions")}
        out = {}
        for name in _POSITION_FIELDS:
            if name in self.raw:
                v = self.raw[name]
                out[name] = int(v) if isinstance(v, str) else tuple(int(p) for p in v)
        if "head" in self.raw:
            out["head"] = int(self.raw["head"])
        return out

    def inputs(self, fmt, torch=False, device=None):
        """The value inputs (x, or q and k; a learned table; attention's q, k, v, and its mask
        and cos/sin table when the case has them) in fmt: numpy arrays (bf16 as float32 holding
        bf16 values), or torch tensors of fmt's dtype on `device`. Attention's are shaped as
        attention_shapes() says (q [queries, query_heads, head_dim], ...; the mask is bool, True
        where a query sees a key). Refused for a format the case is not judged in (its inputs are
        not fmt values)."""
        F.check_format(fmt)
        if fmt not in self.formats:
            raise F.PosencError(f"{self.file} tcId {self.tc_id}: not judged in {fmt} (judged in: "
                                f"{', '.join(self.formats) or 'none'}), so it has no {fmt} inputs")
        convert = (lambda v: F.to_torch(fmt, v, device)) if torch else (lambda v: F.to_numpy(fmt, v))
        if self.type == "attention":
            return self._attention_inputs(convert, torch, device)
        out = {name: convert(F.from_hex(self.raw[name])) for name in _VALUE_FIELDS if name in self.raw}
        if self.table is not None:
            out["table"] = convert(self.table)
        return out

    def attention_shapes(self):
        """An attention case's tensor shapes (SPEC.md section 2.7): q [queries, query_heads,
        head_dim], k [keys, kv_heads, head_dim], v [keys, kv_heads, value_dim], O [queries,
        query_heads, value_dim], L [queries, query_heads]; mask [queries, keys] and table
        [queries + keys, 2 x rotated pairs] when the case has them."""
        if self.type != "attention":
            raise F.PosencError(f"{self.file} tcId {self.tc_id}: a {self.type} case, not attention")
        p, nq, nk = self.params, self.raw["queries"], self.raw["keys"]
        shapes = {"q": (nq, p["query_heads"], p["head_dim"]), "k": (nk, p["kv_heads"], p["head_dim"]),
                  "v": (nk, p["kv_heads"], p["value_dim"]), "O": (nq, p["query_heads"], p["value_dim"]),
                  "L": (nq, p["query_heads"])}
        if "mask" in self.raw:
            shapes["mask"] = (nq, nk)
        if "table" in self.raw:
            shapes["table"] = (nq + nk, len(self.raw["table"]) // (nq + nk))
        return shapes

    def _attention_inputs(self, convert, torch, device):
        shapes = self.attention_shapes()
        out = {}
        for name in _ATTENTION_VALUES:
            if name in self.raw:
                out[name] = _shaped(convert(F.from_hex(self.raw[name])), shapes[name])
        if "mask" in self.raw:
            import numpy as np
            mask = _shaped(np.asarray(self.raw["mask"], dtype=bool), shapes["mask"])
            if torch:
                import torch as t
                mask = t.from_numpy(mask).to(device=device)
            out["mask"] = mask
        return out

    def q(self, fmt, torch=False, device=None):
        return self.inputs(fmt, torch, device)["q"]

    def k(self, fmt, torch=False, device=None):
        return self.inputs(fmt, torch, device)["k"]

    def v(self, fmt, torch=False, device=None):
        return self.inputs(fmt, torch, device)["v"]

    def expected(self, fmt, torch=False, device=None):
        """The correctly rounded outputs in fmt (asked for with Session.cases(expected=True)),
        flat in the vector's element order (attention: O, then L)."""
        if "expected" not in self.raw:
            raise F.PosencError(f"{self.file} tcId {self.tc_id}: no expected values (Session.cases(expected=True) "
                                "fetches them)")
        values = F.from_hex(self.raw["expected"][F.check_format(fmt)])
        return F.to_torch(fmt, values, device) if torch else F.to_numpy(fmt, values)

    def x(self, fmt, torch=False, device=None):
        return self.inputs(fmt, torch, device)["x"]

    def hf_rope_config(self):
        """The parameters (an attention case's: its rope's) as a Hugging Face-style config fragment: {"head_dim", "rope_parameters":
        {"rope_type", "rope_theta", ...}} in transformers' key names.

        The CLI writes it (models/hf_rope_dict.hpp) in the group header `posenc serve` sends, the
        field "hfRopeConfig" (SPEC.md section 10); Python keeps no mapping of its own. Parameters a
        config cannot say (the backward rotation, NTK scaling) come with the reason instead."""
        if self.hf is None:
            why = self.hf_error or "not a RoPE case"
            raise F.PosencError(f"{self.file} tcId {self.tc_id}: no Hugging Face-style rope config: {why}")
        return self.hf


def _shaped(values, shape):
    """values in shape; an invalid case's tensor that does not fit its parameters stays flat."""
    n = 1
    for d in shape:
        n *= d
    return values.reshape(shape) if values.reshape(-1).shape[0] == n else values


def attention_values(case, fmt, o, lse=None):
    """O, then L when given, flat as the judge reads them (SPEC.md section 7: O then L, or O
    alone). O must be [queries, query_heads, value_dim] and L [queries, query_heads] (leading
    axes of size 1, a batch of one, may come first; flat is taken as already in that order): a
    tensor in another layout is refused rather than read in the wrong order."""
    shapes = case.attention_shapes()
    where = f"{case.file} tcId {case.tc_id} in {fmt}"
    out = [_in_order(o, shapes["O"], "O", where)]
    if lse is not None:
        out.append(_in_order(lse, shapes["L"], "L (lse)", where))
    import numpy as np
    return np.concatenate(out)


def _in_order(values, shape, name, where):
    v = F.as_float64(values)
    got = tuple(getattr(values, "shape", ()))
    while len(got) > len(shape) and got[0] == 1:
        got = got[1:]
    n = 1
    for d in shape:
        n *= d
    if v.shape[0] != n or (len(got) > 1 and got != tuple(shape)):
        raise F.PosencError(
            f"{where}: {name} has shape {tuple(getattr(values, 'shape', (v.shape[0],)))}, expected {tuple(shape)} "
            f"({'[queries, query_heads, value_dim]' if name == 'O' else '[queries, query_heads]'}; from "
            f"scaled_dot_product_attention's [batch, heads, queries, dim], .transpose(-3, -2))")
    return v


def load_cases(path):
    """The cases a Session.cases(save=path) wrote, with the formats that session judged them in:
    for running code where the CLI does not run; its outputs (a ResultsWriter's file) are then
    judged by `posenc verify` where it does."""
    import json
    with open(path) as f:
        return [c for line in f if line.strip() for c in cases_from_message(json.loads(line)) if c.formats]


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
