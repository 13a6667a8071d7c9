"""bfloat16 as a storage dtype: ops compute in float32 and round their result back to bfloat16.

NumPy knows bfloat16 only through ``ml_dtypes``, whose ufuncs round after every elementary step and
whose reductions accumulate in bfloat16 (``np.ones(1000, bfloat16).sum()`` is 256). PyTorch's CPU
kernels instead load bfloat16, compute in float32 ("opmath") and round once when they store. So does
minitorch_ln, in one place: :meth:`Function.apply <minitorch_ln.autograd.function.Function.apply>`
hands a forward float32 copies of its bfloat16 inputs and rounds its float32 outputs back to
bfloat16 when the result dtype is bfloat16 by PyTorch's promotion -- no input is a dimensioned
float16/float32/float64 array (bfloat16 with float16 or float32 gives float32). Backward is made of
Tensor ops, so gradients take the same path and come out bfloat16.

Ops that only move memory (views, casts, clones, device copies) keep bfloat16 as it is: they are
registered here by ``ops/bfloat16_storage.py`` (so that a view still shares memory, and a cast to
float32 really gives float32).
"""

from __future__ import annotations

import numpy as np

from ..backend import BFLOAT16

__all__ = ["register_storage_ops", "STORAGE_OPS", "upcast", "round_back"]

STORAGE_OPS: set = set()


def register_storage_ops(*classes) -> None:
    """Let these Function classes see bfloat16 arrays as they are (memory moves: exact in any dtype)."""
    STORAGE_OPS.update(classes)


def upcast(raw: list) -> bool:
    """Replace the bfloat16 arrays of ``raw`` by float32 copies, in place; whether the op's float32
    results should be rounded back to bfloat16 (no dimensioned non-bfloat16 float array among them)."""
    keep = True
    for i, a in enumerate(raw):
        dt = getattr(a, "dtype", None)
        if dt is None:
            continue
        if dt == BFLOAT16:
            raw[i] = a.astype(np.float32)
        elif dt.kind == "f" and getattr(a, "ndim", 0):
            keep = False
    return keep


def round_back(out):
    """``out`` (an array or a tuple of them) with its float32 arrays rounded to bfloat16."""
    if isinstance(out, tuple):
        return tuple(round_back(o) for o in out)
    if getattr(out, "dtype", None) == np.float32:
        return out.astype(BFLOAT16)
    return out
