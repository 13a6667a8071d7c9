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
from .reduction import _count, _dim_alias, _keepdim_shape, mean
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
    """``Σ (x - x̄)² / dof`` over ``axes`` (its square root with ``take_sqrt``); ``dx = dy · 2 (x - x̄) / dof``.

    float32 (and float16/bfloat16, which arrive here as float32: ``autograd/bfloat16.py``) is computed
    in float64, two-pass (the mean, then the squared deviations), and rounded once, square root
    included: a float16 std of ``[6e4, 5e4, 4e4]`` is 1e4, not the inf of a variance rounded to float16
    first. PyTorch also accumulates in double (Welford per row; over all elements, deviations from
    the float32 mean). Both round a double once, so they agree bit for bit unless the two doubles
    straddle a float32 rounding boundary (none in 13500 measured rows; tests/test_reductions_s7.py
    holds them equal on exact-sum and random float32 data). float64 scales
    the deviations by their largest magnitude ``s`` first, ``var = s · (Σ (c/s)² / dof) · s``, so
    that squares of 1e160 do not overflow where the variance itself is finite.
    """

    @staticmethod
    def forward(ctx, x, axes, keepdim, dof, take_sqrt=False):
        xp = get_array_module(x)
        ctx.save_for_backward(x)
        ctx.axes, ctx.dof, ctx.take_sqrt = axes, dof, take_sqrt
        keep = _keepdim_shape(x.shape, axes)
        n = _count(x.shape, axes)
        with np.errstate(all="ignore"):
            if n == 0:  # no elements: NaN (as PyTorch)
                v = xp.full(keep, np.nan, dtype=np.float64)
            elif x.dtype.itemsize < 8:  # float32 data: its squares cannot overflow float64
                a = x.astype(np.float64)
                c = a - a.sum(axis=axes, keepdims=True) / n  # (..., N, ...)
                v = (c * c).sum(axis=axes, keepdims=True) / builtins.max(dof, 0)  # (..., 1, ...)
            else:
                c = x - x.sum(axis=axes, keepdims=True) / n  # (..., N, ...)
                s = xp.abs(c).max(axis=axes, keepdims=True)  # (..., 1, ...)
                s = xp.where((s == 0) | ~xp.isfinite(s), 1, s).astype(x.dtype, copy=False)
                r = c / s
                v = s * ((r * r).sum(axis=axes, keepdims=True) / x.dtype.type(builtins.max(dof, 0))) * s
            v = (xp.sqrt(v) if take_sqrt else v).astype(x.dtype)
        return v if keepdim else v.reshape(tuple(n for i, n in enumerate(x.shape) if i not in axes))

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        dy = reshape(dy, _keepdim_shape(x.shape, ctx.axes))  # (..., 1, ...)
        if ctx.take_sqrt:  # d sqrt(v) = dv / (2 sqrt v), 0 where std is 0 (PyTorch's std_backward), not inf·0
            # the std again, as a Tensor op of x, so that a second derivative sees it depend on x
            y = Var.apply(x, ctx.axes, True, ctx.dof, True)  # (..., 1, ...)
            zero = y == 0
            dy = where(zero, 0.0, dy / (2.0 * where(zero, 1.0, y)))
        centered = x - mean(x, ctx.axes, keepdim=True)  # (..., N, ...)
        # Σ centered is 0 only up to the rounding of the mean: project it out (as the chain rule
        # through x - mean(x) does), so a constant input gets exactly 0, not rounding noise
        centered = centered - mean(centered, ctx.axes, keepdim=True)
        # no degrees of freedom: var is 0/0 or c/0, with no derivative (NaN; PyTorch: NaN or inf)
        factor = 2.0 / ctx.dof if ctx.dof > 0 else float("nan")
        return dy * centered * factor, None, None, None, None


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
    return _var_std(x, dim, unbiased, keepdim, correction, "var")


def _var_std(x, dim, unbiased, keepdim, correction, op):
    require_float(x, op)
    c = _correction(unbiased, correction, op)
    axes = normalize_dims(dim, x.ndim, op, empty_is_all=True)
    return Var.apply(x, axes, keepdim, _count(x.shape, axes) - c, op == "std")


class _SqrtOfVar(Function):
    """``sqrt(v)`` of a complex input's (real) variance, whose gradient is 0 where ``v = 0`` (PyTorch's
    ``std_backward``), not inf·0 = NaN."""

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
    """Standard deviation, ``sqrt(var(x, ...))`` with the same arguments; zero gradient where it is 0.

    One op with the variance (:class:`Var`): the variance is not rounded to the result dtype before
    its square root (a float16 std up to 65504 does not overflow, as PyTorch).
    """
    dim = dim if axis is None else _dim_alias(dim, axis, "std")
    dim, unbiased = bool_dim(dim, unbiased, keepdim, correction, "std")
    if isinstance(x, Tensor) and x.dtype.kind == "c":  # complex: sqrt(var), var as above
        return _SqrtOfVar.apply(var(x, dim, unbiased, keepdim, correction=correction))
    return _var_std(x, dim, unbiased, keepdim, correction, "std")
