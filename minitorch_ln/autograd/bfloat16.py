"""bfloat16 and float16 as storage dtypes: ops compute in float32 and round their result back once.

NumPy knows bfloat16 only through ``ml_dtypes``, whose ufuncs round after every elementary step and
whose reductions accumulate in bfloat16 (``np.ones(1000, bfloat16).sum()`` is 256). NumPy's float16
rounds each ufunc's result too, so an op made of several ufuncs rounds several times: ``sinc`` of a
float16 was off by half its value near its zeros, ``sigmoid`` and ``silu`` by 2-3 units in the last place.
PyTorch's CPU kernels instead load bfloat16 or float16, compute in float32 ("opmath") and round once when
they store. So does minitorch_ln, in one place: :meth:`Function.apply
<minitorch_ln.autograd.function.Function.apply>` hands a forward float32 copies of its bfloat16 and
float16 inputs and rounds its float32 outputs back when the result dtype is bfloat16 or float16 by
PyTorch's promotion (:func:`upcast`). Backward is made of Tensor ops, so gradients take the same path
and come out in the input's dtype. (The fast paths of ``autograd/recorded.py`` and
``autograd/unrecorded.py`` leave both dtypes to this general path.)

Ops that only move memory (views, casts, clones, device copies) keep bfloat16 and float16 as they are: they are
registered here by ``ops/bfloat16_storage.py`` (so that a view still shares memory, and a cast to
float32 really gives float32).
"""

from __future__ import annotations

import numpy as np

from ..backend import BFLOAT16

__all__ = ["register_storage_ops", "register_float16_native_ops", "STORAGE_OPS", "FLOAT16_NATIVE", "upcast",
           "round_back"]

FLOAT16 = np.dtype(np.float16)

STORAGE_OPS: set = set()
FLOAT16_NATIVE: set = set()


def register_storage_ops(*classes) -> None:
    """Let these Function classes see bfloat16 and float16 arrays as they are (memory moves: exact in any dtype)."""
    STORAGE_OPS.update(classes)


def register_float16_native_ops(*classes) -> None:
    """Let these Function classes see float16 arrays as they are: they compute float16 in float32 themselves
    and take float32 parameters with float16 input (the normalizations: float32 statistics and weight
    gradients, float16 output and input gradient, as PyTorch's mixed-precision norms)."""
    FLOAT16_NATIVE.update(classes)


def upcast(raw: list, float16: bool = True):
    """Replace the bfloat16 and (unless ``float16`` is False) float16 arrays of ``raw`` by float32 copies, in
    place; return the dtype the
    op's float32 results are rounded to (PyTorch's promotion of the inputs), or None to keep float32.

    That dtype is the one half-precision dtype of the dimensioned float arrays, when no dimensioned array
    has another float dtype (``bf16 * f32`` is float32, ``bf16 * f16`` float32); with no dimensioned float
    array, the one half dtype of the 0-d ones, if no 0-d array has another float dtype (an int tensor
    times a 0-d float16 tensor is float16; a 0-d float16 plus a 0-d float32 is float32).
    """
    dim_half = zero_half = None
    mixed = zero_other = False
    for i, a in enumerate(raw):
        dt = getattr(a, "dtype", None)
        if dt is None:
            continue
        if dt == BFLOAT16 or (float16 and dt == FLOAT16):
            raw[i] = a.astype(np.float32)
            if getattr(a, "ndim", 0):
                mixed = mixed or (dim_half is not None and dim_half != dt)
                dim_half = dt
            else:
                zero_half = dt if zero_half in (None, dt) else False  # two half dtypes, 0-d: float32
        elif dt.kind == "f" and not isinstance(a, np.generic):  # a float32/float64 array (not a NumPy scalar)
            if a.ndim:
                mixed = True
            else:
                zero_other = True
    if mixed:
        return None
    if dim_half is not None:
        return dim_half
    return None if zero_other else (zero_half or None)


def round_back(out, dtype):
    """``out`` (an array or a tuple of them) with its float32 arrays rounded to ``dtype`` (bfloat16 or
    float16), once: the one rounding of PyTorch's "opmath" kernels."""
    if isinstance(out, tuple):
        return tuple(round_back(o, dtype) for o in out)
    if getattr(out, "dtype", None) == np.float32:
        if dtype == FLOAT16:  # beyond ±65504 is ±inf, as PyTorch's store, without NumPy's overflow warning
            with np.errstate(over="ignore"):
                return out.astype(dtype)
        return out.astype(dtype)
    return out
