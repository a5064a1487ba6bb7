"""The four formats of posenc (binary64, binary32, bfloat16, binary16) in numpy and torch.

numpy has no bfloat16: bf16 values are given as float32 arrays (every bf16 value is a float32
value). torch has all four (torch.bfloat16). Outputs are checked to be values of the case's
format before they are sent: the judge reads the format's bits, so nothing is rounded here.
"""

import re

import numpy as np

from .errors import PosencError

FORMATS = ("f64", "f32", "bf16", "f16")
NUMPY_DTYPES = {"f64": np.float64, "f32": np.float32, "bf16": np.float32, "f16": np.float16}
_TORCH_DTYPE_NAMES = {"f64": "float64", "f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def check_format(fmt):
    if fmt not in FORMATS:
        raise PosencError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return fmt


def torch_dtype(fmt):
    import torch  # only when asked for: numpy alone needs no torch
    return getattr(torch, _TORCH_DTYPE_NAMES[check_format(fmt)])


def to_numpy(fmt, values):
    """values (binary64 numbers exact in fmt) as numpy in fmt (bf16: float32)."""
    return np.asarray(values, dtype=np.float64).astype(NUMPY_DTYPES[check_format(fmt)])


def to_torch(fmt, values, device=None):
    import torch
    # Through float64 (exact): the values are fmt values, so the cast to fmt is exact too.
    return torch.tensor(np.asarray(values, dtype=np.float64)).to(dtype=torch_dtype(fmt), device=device)


def as_float64(outputs):
    """Outputs (numpy, torch on any device, or a sequence) as a flat float64 numpy array; every
    value of the four formats is a binary64 value, so this is exact."""
    if hasattr(outputs, "detach"):  # a torch tensor, on any device
        t = outputs.detach().to("cpu")
        if str(t.dtype) in ("torch.bfloat16", "torch.float16", "torch.float32"):
            t = t.float()
        return t.double().numpy().reshape(-1)
    return np.asarray(outputs, dtype=np.float64).reshape(-1)


def representable(fmt, v):
    """Whether the binary64 numpy array v holds fmt values (NaN and infinities are accepted)."""
    if fmt == "f64":
        return np.ones(v.shape, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        if fmt == "f16":
            back = v.astype(np.float16).astype(np.float64)
        else:
            f32 = v.astype(np.float32)
            back = f32.astype(np.float64)
            if fmt == "bf16":
                # bf16 is float32 with the low 16 bits of the significand zero.
                bits = f32.view(np.uint32)
                back = np.where((bits & 0xFFFF) == 0, back, np.nan)
    return (back == v) | np.isnan(v)


def hex_values(fmt, outputs, where):
    """Outputs as the hex floats the judge reads; a value that is not a fmt value is refused,
    naming `where` (file and tcId) and the element."""
    v = as_float64(outputs)
    ok = representable(fmt, v)
    if not ok.all():
        j = int(np.argmin(ok))
        raise PosencError(
            f"{where}: output element {j} = {float(v[j])!r} ({float(v[j]).hex()}) is not a {fmt} value; "
            f"outputs are judged as {fmt} bits, so give the {fmt} result your code computes "
            f"(numpy: astype({NUMPY_DTYPES[fmt].__name__}), torch: .to(torch.{_TORCH_DTYPE_NAMES[fmt]}))")
    return [float.hex(x) for x in v.tolist()]


def from_hex(texts):
    return [float.fromhex(t) for t in texts]


_INTEGER = re.compile(r"-?[0-9]+")


def _is_real(text):
    return text.startswith(("0x", "-0x")) or text in ("inf", "-inf", "nan")


def decode(value, reals=float.fromhex):
    """A vector file's parameter value, recursively: integers (lengths such as
    original_max_positions, which the files write as decimal strings, and JSON integers) as int,
    reals (hex floats in the files) as reals(text): float by default, which is exact (every real
    there is a binary64 value), or str to keep the hex text; names (layout, kind) stay strings."""
    if isinstance(value, str):
        if _is_real(value):
            return reals(value)
        if _INTEGER.fullmatch(value):
            return int(value)
        return value
    if isinstance(value, list):
        return [decode(v, reals) for v in value]
    if isinstance(value, dict):
        return {k: decode(v, reals) for k, v in value.items()}
    return value


def json_number(v):
    """The protocol's numbers: infinities and NaN come as strings."""
    return float(v) if isinstance(v, str) else v


__all__ = ["FORMATS", "to_numpy", "to_torch", "hex_values", "torch_dtype"]
