"""The number formats the framework code paths compute in, for numpy: binary32 arithmetic is numpy's
float32; bf16, TF32 and f16 values are float32 values with fewer significand bits, produced by
rounding to nearest even, as a cast (`tensor.to(torch.bfloat16)`, a TF32 tensor-core operand) does.

Written here rather than taken from ml_dtypes so that the zoo runs on Debian's numpy alone (the
CTest test uses /usr/bin/python3)."""
import numpy as np

F32 = np.float32


def f32(values):
    """Values rounded to binary32 (numpy's cast rounds to nearest even)."""
    return np.asarray(values, dtype=np.float32)


def _keep_bits(values, dropped):
    """binary32 values rounded to nearest even with the low `dropped` significand bits cleared
    (finite values only: the zoo never rounds an inf or NaN)."""
    a = np.ascontiguousarray(f32(values))
    bits = a.view(np.uint32).astype(np.uint64)
    bits = (bits + ((1 << (dropped - 1)) - 1) + ((bits >> dropped) & 1)) >> dropped << dropped
    return bits.astype(np.uint32).view(np.float32).reshape(a.shape)


def bf16(values):
    """bfloat16: 8 significand bits (2^8 = 256 is the last integer step of 1)."""
    return _keep_bits(values, 16)


def tf32(values):
    """TensorFloat-32, the operand format of a tensor-core float32 GEMM: 11 significand bits, so
    2048 is the last integer step of 1 (2049 rounds to 2048)."""
    return _keep_bits(values, 13)


def f16(values):
    """IEEE binary16, as float32 values."""
    return np.asarray(values, dtype=np.float16).astype(np.float32)


ROUNDERS = {"f32": f32, "bf16": bf16, "tf32": tf32, "f16": f16}


def rounder(fmt):
    """The rounding function of a format name (f32, bf16, tf32, f16)."""
    if fmt not in ROUNDERS:
        raise ValueError(f"format {fmt!r}: must be one of {', '.join(ROUNDERS)}")
    return ROUNDERS[fmt]
