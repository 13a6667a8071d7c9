"""Conversions: ``cast`` (dtype), ``to_device``, ``clone``. Each is differentiable between float dtypes
and devices: the gradient goes back to the input's dtype and device.
"""

from __future__ import annotations

from .. import backend
from ..autograd.function import Function
from ..tensor import Tensor
from ._fperr import Quiet

__all__ = ["clone"]


class Cast(Function):
    """A dtype conversion. Complex to real keeps the real part (as PyTorch, which warns); so the gradient
    of a real input promoted to complex is the real part of the complex gradient (PyTorch's
    ``handle_r_to_c``), and that of a complex input cast to real is the real gradient as complex."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.in_dtype = x.dtype
        # float64 -> float16/bfloat16 is rounded once, to the nearest (IEEE 754). PyTorch rounds twice, through
        # float32 (its Half/BFloat16 are built from float): 1 + 2**-11 + 2**-40 becomes 1 + 2**-11 in float32,
        # a tie, and then 1.0 in float16, where the correctly rounded value is 1 + 2**-10 (the number lies above
        # the midpoint 1 + 2**-11). The single rounding is kept on purpose (the math decides where PyTorch is
        # wrong): the two differ only for float64 values within half a float32 ulp (about 2**-24 relative) of a
        # float16/bfloat16 midpoint, by one unit in its last place. tests/test_op_edges_s7.py works the example out.
        with Quiet():  # float64 -> float16 overflow gives inf silently, as PyTorch
            return (x.real if x.dtype.kind == "c" and dtype.kind != "c" else x).astype(dtype)

    @staticmethod
    def backward(ctx, dy):
        return (cast(dy, ctx.in_dtype) if backend.is_floating(ctx.in_dtype) or ctx.in_dtype.kind == "c" else None), None


def cast(x: Tensor, dtype) -> Tensor:
    """``x`` converted to ``dtype`` (differentiable between float and complex dtypes)."""
    dtype = backend.as_dtype(dtype)
    if x.dtype == dtype:
        return x
    if not backend.is_floating(dtype) and dtype.kind != "c":  # integer and bool results carry no gradient (as PyTorch)
        # NaN, inf or an out-of-range float has no integer value: the result is the hardware's (INT_MIN on x86,
        # PyTorch's too), without NumPy's "invalid value encountered in cast" warning, which PyTorch does not give
        with Quiet():
            return Tensor._from_op((x.array.real if x.dtype.kind == "c" else x.array).astype(dtype))
    return Cast.apply(x, dtype)


class ToDevice(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, dev):
        ctx.in_device = backend.device_of(x)
        return backend.to_device(x, dev)

    @staticmethod
    def backward(ctx, dy):
        return to_device(dy, ctx.in_device), None


def to_device(x: Tensor, dev) -> Tensor:
    """``x`` copied to device ``dev`` (differentiable: the gradient comes back to ``x``'s device)."""
    return ToDevice.apply(x, backend.device(dev))


class Clone(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x):
        return x.copy()

    @staticmethod
    def backward(ctx, dy):
        return dy


def clone(x: Tensor) -> Tensor:
    """A copy of ``x`` (same shape and dtype) with its own memory; differentiable (the gradient passes unchanged)."""
    return Clone.apply(x)
