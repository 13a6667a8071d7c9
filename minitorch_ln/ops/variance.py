"""Variance and standard deviation (``torch.var``, ``torch.std``), overflow-safe, with PyTorch's
``unbiased``/``correction`` forms (a positional bool is ``unbiased``, not ``dim``).

Backward: ``dx = dy · 2 (x - x̄) / dof`` for the variance; ``std`` is the square root of it with a zero
gradient where it is 0 (PyTorch's ``std_backward``).
"""

from __future__ import annotations

import builtins

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import bool_dim, keepdims_alias, normalize_dims, require_float
from .complex_parts import imag, real
from .reduction import _acc, _count, _dim_alias, _keepdim_shape, mean
from .selection import where
from .shape import reshape

__all__ = ["std", "var"]


def _correction(unbiased, correction, op) -> float:
    if unbiased is not None and correction is not None:
        raise ValueError(f"{op}: give either unbiased or correction, not both")
    if correction is not None:
        return float(correction)
    if unbiased is None:
        return 1.0
    if not isinstance(unbiased, bool):
        raise TypeError(f"{op}: unbiased must be a bool, got {unbiased!r} (did you mean dim=?)")
    return 1.0 if unbiased else 0.0


class Var(Function):
    """``Σ (x - x̄)² / dof`` over ``axes``; ``dx = dy · 2 (x - x̄) / dof``.

    The forward scales the deviations by their largest magnitude ``s`` first,
    ``var = s · (Σ (c/s)² / dof) · s``, so that squares of 1e19 (float32) or 300 (float16) do not
    overflow where the variance itself is finite; float16 works in float32 (as PyTorch).
    """

    @staticmethod
    def forward(ctx, x, axes, keepdim, dof):
        xp = get_array_module(x)
        ctx.save_for_backward(x)
        ctx.axes, ctx.dof = axes, dof
        a = x.astype(_acc(x.dtype), copy=False)
        keep = _keepdim_shape(x.shape, axes)
        with np.errstate(all="ignore"):
            if _count(x.shape, axes) == 0:  # no elements: NaN (as PyTorch)
                v = xp.full(keep, np.nan, dtype=a.dtype)
            else:
                n = _count(x.shape, axes)  # the mean as :func:`mean` (and the backward) forms it
                c = a - a.sum(axis=axes, keepdims=True) * a.dtype.type(1.0 / n)  # (..., N, ...)
                s = xp.abs(c).max(axis=axes, keepdims=True)  # (..., 1, ...)
                s = xp.where((s == 0) | ~xp.isfinite(s), 1, s).astype(a.dtype, copy=False)
                r = c / s
                v = s * ((r * r).sum(axis=axes, keepdims=True) / a.dtype.type(builtins.max(dof, 0))) * s
            v = v.astype(x.dtype)
        return v if keepdim else v.reshape(tuple(n for i, n in enumerate(x.shape) if i not in axes))

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        dy = reshape(dy, _keepdim_shape(x.shape, ctx.axes))  # (..., 1, ...)
        centered = x - mean(x, ctx.axes, keepdim=True)  # (..., N, ...)
        # Σ centered is 0 only up to the rounding of the mean: project it out (as the chain rule
        # through x - mean(x) does), so a constant input gets exactly 0, not rounding noise
        centered = centered - mean(centered, ctx.axes, keepdim=True)
        # no degrees of freedom: var is 0/0 or c/0, with no derivative (NaN; PyTorch: NaN or inf)
        factor = 2.0 / ctx.dof if ctx.dof > 0 else float("nan")
        return dy * centered * factor, None, None, None


@keepdims_alias  # keepdims=, NumPy's name, as PyTorch accepts it
def var(x: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None, axis=None) -> Tensor:
    """Variance ``Σ (x - mean)² / max(0, N - correction)`` over ``dim`` (``torch.var``).

    ``correction`` defaults to 1 (Bessel's correction); ``unbiased=False`` means 0. With no degrees
    of freedom left (``N <= correction``) the result is NaN (or inf), as PyTorch; over no elements
    NaN. Computed without overflowing squares (see :class:`Var`), float16 in float32.

    Raises:
        TypeError: integer input. IndexError: ``dim`` out of range. ValueError: both
            ``unbiased`` and ``correction`` given.
    """
    dim = dim if axis is None else _dim_alias(dim, axis, "var")
    dim, unbiased = bool_dim(dim, unbiased, keepdim, correction, "var")
    if isinstance(x, Tensor) and x.dtype.kind == "c":  # E|z - mean|² = var(Re z) + var(Im z), real (as PyTorch)
        return var(real(x), dim, unbiased, keepdim, correction=correction) + var(imag(x), dim, unbiased, keepdim,
                                                                                 correction=correction)
    require_float(x, "var")
    c = _correction(unbiased, correction, "var")
    axes = normalize_dims(dim, x.ndim, "var")
    return Var.apply(x, axes, keepdim, _count(x.shape, axes) - c)


class _SqrtOfVar(Function):
    """``sqrt(v)`` whose gradient is 0 where ``v = 0`` (PyTorch's ``std_backward``), not inf·0 = NaN."""

    @staticmethod
    def forward(ctx, v):
        with np.errstate(invalid="ignore"):
            y = get_array_module(v).sqrt(v)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        zero = y == 0
        return where(zero, 0.0, dy / (2.0 * where(zero, 1.0, y)))


@keepdims_alias  # keepdims=, NumPy's name, as PyTorch accepts it
def std(x: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None, axis=None) -> Tensor:
    """Standard deviation, ``sqrt(var(x, ...))`` with the same arguments; zero gradient where it is 0."""
    dim = dim if axis is None else _dim_alias(dim, axis, "std")
    dim, unbiased = bool_dim(dim, unbiased, keepdim, correction, "std")
    if not (isinstance(x, Tensor) and x.dtype.kind == "c"):  # complex: sqrt(var), var as above
        require_float(x, "std")
    return _SqrtOfVar.apply(var(x, dim, unbiased, keepdim, correction=correction))
