"""Reductions: sum, mean, var/std, max/min, logsumexp, arg-reductions, topk.

Backward of a reduction broadcasts the upstream gradient back over the reduced axes (re-inserting
them with size 1 first when ``keepdim=False``).
"""

from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import normalize_dims
from .shape import broadcast_to, reshape


def _keepdim_shape(shape, axes) -> tuple:
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


class Sum(Function):
    @staticmethod
    def forward(ctx, x, axes, keepdim):
        ctx.in_shape, ctx.axes = x.shape, axes
        return x.sum(axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, dy):
        dy = reshape(dy, _keepdim_shape(ctx.in_shape, ctx.axes))  # (..., 1, ...)
        return broadcast_to(dy, ctx.in_shape), None, None


def sum(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001 - PyTorch's name
    """Sum over ``dim`` (an int, a tuple, or None for all). Integer and bool inputs sum to int64."""
    axes = normalize_dims(dim, x.ndim, "sum")
    if x.dtype.kind in "bui":
        return Tensor._from_op(x.data.sum(axis=axes, keepdims=keepdim).astype("int64"))
    return Sum.apply(x, axes, keepdim)


def mean(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Mean over ``dim``; floating point inputs only (as PyTorch)."""
    if x.dtype.kind != "f":
        raise TypeError(f"mean: expected a floating point tensor, got dtype {x.dtype}; convert with .float() first")
    axes = normalize_dims(dim, x.ndim, "mean")
    n = 1
    for a in axes:
        n *= x.shape[a]
    return sum(x, dim, keepdim) * (1.0 / n) if n else sum(x, dim, keepdim) * float("nan")
