"""Softmax and log-softmax along a dim, stable for huge logits.

Both subtract the row maximum first, so huge logits never overflow ``exp``. A row that is entirely
``-inf`` (a fully masked attention row) has no maximum to subtract; there ``softmax`` returns zeros
and ``log_softmax`` returns ``-inf`` instead of PyTorch's NaN, so that a masked row contributes
nothing and no NaN enters the graph (forward or backward): a deliberate difference, because
PyTorch's NaN there is an artefact (``-inf - (-inf)``) that poisons a whole attention layer's
gradients through one fully padded query. A row holding ``+inf`` has no finite probabilities
(``inf / inf``) and is NaN throughout, as in PyTorch.

Backward (``y`` the output, ``dy`` the upstream gradient, sums along ``dim``)::

    softmax:      dx = y ⊙ (dy - Σ dy ⊙ y)
    log_softmax:  dx = dy - exp(y) · Σ dy

each its own node (:class:`SoftmaxBackward`): on the GPU one fused kernel, elsewhere the formula on
arrays; its own backward differentiates the formula in Tensor ops.
"""

from __future__ import annotations

import numpy as np

from ..kernels import softmax_dispatch
from ..autograd.function import Function
from ..autograd.composed import double_backward
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import axis_alias, normalize_dim, require_float
from .autocast_policies import autocast

__all__ = ["log_softmax", "softmax"]

# ==================================================================================================
# softmax, log_softmax
# ==================================================================================================


def _shifted(x, axis):
    """``x - max(x)`` along ``axis`` and the sum of its exponentials; an all ``-inf`` row shifts by 0,
    a row holding ``+inf`` (or NaN) gives NaN sums.

    ``z`` is -inf where the shift overflows (float16 logits 6e4 apart); an empty ``axis`` sums to 0.
    """
    xp = get_array_module(x)
    with np.errstate(over="ignore", invalid="ignore"):
        if x.shape[axis] == 0:  # no entries to take a maximum of
            m = xp.zeros(x.shape[:axis % x.ndim] + (1,) + x.shape[axis % x.ndim + 1:], dtype=x.dtype)
        else:
            m = x.max(axis=axis, keepdims=True)  # (..., 1, ...)
            # only an all -inf row is shifted by 0 (see the module docstring); a +inf maximum is
            # subtracted, so its row is NaN (inf - inf, then NaN / NaN), as PyTorch
            m = xp.where(m == -xp.inf, 0, m).astype(x.dtype, copy=False)
        z = x - m
        e = xp.exp(z)
    return z, e, e.sum(axis=axis, keepdims=True)


def _f32(x):
    """float16 arrays as float32 (softmax and its backward compute in float32, as PyTorch)."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _last_axis(x, dim) -> bool:
    """Whether a softmax along ``dim`` of ``x`` is one over the rows of its last axis (and not empty)."""
    return x.size > 0 and dim % x.ndim == x.ndim - 1


def _fused_rows(x, dim):
    """The fused CUDA kernels module when ``x`` is a CuPy array reduced along its last, contiguous axis."""
    if get_array_module(x) is np or dim != x.ndim - 1 or not x.flags.c_contiguous or x.size == 0:
        return None
    from ..kernels import cuda_softmax  # noqa: PLC0415 - only reached with CuPy arrays

    return cuda_softmax


def _softmax_backward_composed(dy: Tensor, y: Tensor, dim: int, log: bool) -> Tensor:
    """The backward of :class:`Softmax` (``log=False``) or :class:`LogSoftmax`, in Tensor ops."""
    if log:
        return dy - y.exp() * dy.sum(dim, keepdim=True)           # dx = dy - softmax · Σ dy
    return y * (dy - (dy * y).sum(dim, keepdim=True))              # the Jacobian diag(y) - y yᵀ applied to dy


class SoftmaxBackward(Function):
    """``(dy, y) -> dx`` of softmax (``log=False``) or log-softmax along ``dim``, as one node."""

    @staticmethod
    def forward(ctx, dy, y, dim, log):
        xp = get_array_module(y)
        ctx.dim, ctx.log = dim, log
        ctx.save_for_backward(dy, y)
        fused = _fused_rows(y, dim)
        if fused is not None and dy.dtype == y.dtype:  # GPU: one kernel (kernels/cuda_softmax.py)
            C = y.shape[-1]
            return fused.softmax_bwd(xp.ascontiguousarray(dy).reshape(-1, C), y.reshape(-1, C), log=log).reshape(y.shape)
        dy32, y32 = _f32(dy), _f32(y)
        if log:
            dx = dy32 - xp.exp(y32) * dy32.sum(axis=dim, keepdims=True)
        elif _last_axis(y, dim) and dy32.shape == y32.shape:  # the row kernels, in place on a copy of dy
            dx = softmax_dispatch.softmax_bwd_rows_for(y32)(dy32.copy(), xp.ascontiguousarray(y32))
        else:
            dx = y32 * (dy32 - (dy32 * y32).sum(axis=dim, keepdims=True))
        return dx.astype(y.dtype, copy=False)

    @staticmethod
    def backward(ctx, ddx):
        dy, y = ctx.saved_tensors
        dim, log = ctx.dim, ctx.log
        grads = double_backward(lambda dy_, y_: (_softmax_backward_composed(dy_, y_, dim, log),), (dy, y), (ddx,))
        return (*grads, None, None)


class Softmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        xp = get_array_module(x)
        ctx.dim = dim
        fused = _fused_rows(x, dim)
        if fused is not None:  # GPU: one kernel (kernels/cuda_softmax.py), same numerics
            y = fused.softmax_fwd(x.reshape(-1, x.shape[-1])).reshape(x.shape)
        elif _last_axis(x, dim):  # rows: the row kernels (kernels/softmax.py; compiled on the CPU), in place on a copy
            x32 = _f32(x)
            y = softmax_dispatch.softmax_rows_for(x32)(x32 if x32 is not x else x32.copy()).astype(x.dtype, copy=False)
        else:
            x32 = _f32(x)
            _, e, s = _shifted(x32, dim)
            y = (e / xp.where(s == 0, 1, s).astype(x32.dtype, copy=False)).astype(x.dtype, copy=False)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return SoftmaxBackward.apply(dy, y, ctx.dim, False), None


@autocast("softmax")
@axis_alias
def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """``exp(x) / Σ exp(x)`` along ``dim``; same shape and dtype as ``input`` (cast to ``dtype`` first
    when given, as PyTorch).

    Stable for huge logits; a row of all ``-inf`` gives zeros (PyTorch gives NaN).

    Raises:
        TypeError: integer input. IndexError: ``dim`` out of range.
    """
    input = input if dtype is None else input.to(dtype)
    require_float(input, "softmax")
    dim = normalize_dim(dim, input.ndim, "softmax")
    if input.ndim == 0:  # one element (dim 0 or -1, as PyTorch): a one-entry row, 1
        return Softmax.apply(input.reshape(1), 0).reshape(())
    return Softmax.apply(input, dim)


class LogSoftmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        xp = get_array_module(x)
        ctx.dim = dim
        fused = _fused_rows(x, dim)
        if fused is not None:  # GPU: one kernel (kernels/cuda_softmax.py), same numerics
            y = fused.softmax_fwd(x.reshape(-1, x.shape[-1]), log=True).reshape(x.shape)
            ctx.save_for_backward(y)
            return y
        z, _, s = _shifted(_f32(x), dim)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y = z - xp.log(s)
            y = xp.where(s == 0, -xp.inf, y).astype(x.dtype, copy=False)  # all -inf row: log 0
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return SoftmaxBackward.apply(dy, y, ctx.dim, True), None


@autocast("log_softmax")
@axis_alias
def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """``x - logsumexp(x)`` along ``dim``, computed stably; same shape and dtype as ``input`` (cast to
    ``dtype`` first when given, as PyTorch).

    A row of all ``-inf`` gives ``-inf`` (PyTorch gives NaN).

    Raises:
        TypeError: integer input. IndexError: ``dim`` out of range.
    """
    input = input if dtype is None else input.to(dtype)
    require_float(input, "log_softmax")
    dim = normalize_dim(dim, input.ndim, "log_softmax")
    if input.ndim == 0:  # one element (dim 0 or -1, as PyTorch): a one-entry row, 0
        return LogSoftmax.apply(input.reshape(1), 0).reshape(())
    return LogSoftmax.apply(input, dim)
