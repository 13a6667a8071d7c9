"""Distances and normalization: ``normalize``, ``cosine_similarity``, ``pairwise_distance``, ``cdist``, ``pdist``.

All are compositions of Tensor ops over ``linalg_vector_norm`` (``Tensor.norm``), whose gradient
is 0 where the norm is 0, following PyTorch's composite definitions (``aten/.../Distance.cpp``,
``torch/nn/functional.py``):

- ``normalize(x) = x / max(‖x‖_p, eps)``: the clamp is differentiable (no gradient through the
  norm once it is below ``eps``).
- ``cosine_similarity(x1, x2) = Σ (x1/max(‖x1‖, eps)) · (x2/max(‖x2‖, eps))``: PyTorch's current
  formula (each vector scaled first, so the result stays in [-1, 1]); PyTorch clamps the norms in
  place under ``no_grad``, so the gradient flows as if unclamped. We reproduce that.
- ``pairwise_distance(x1, x2) = ‖x1 - x2 + eps‖_p`` over the last dimension.
- ``pdist(x)``: ``‖x[i] - x[j]‖_p`` for ``i < j``; a ``Function`` whose backward is ATen's
  ``pdist_backward`` written in Tensor ops (for ``p = inf`` every tied maximum gets the full gradient,
  which a composed ``amax`` would split).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import broadcast_shape, normalize_dim, promote
from .autocast_policies import autocast
from .loss_regression import check_tensors, clamp_min_straight_through
from .shape import broadcast_to, unsqueeze

__all__ = ["cdist", "cosine_similarity", "normalize", "pairwise_distance", "pdist"]


def _p(p, op, allow_negative=True):
    if not isinstance(p, numbers.Real) or isinstance(p, bool):
        raise TypeError(f"{op}: p must be a number, got {type(p).__name__}")
    if not allow_negative and p < 0:
        raise RuntimeError(f"{op} only supports non-negative p values, got p={p}")
    return float(p)


@autocast("normalize")
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:  # noqa: A002
    """``input / max(‖input‖_p, eps)`` along ``dim``: ``(*)`` → ``(*)``, same float dtype.

    Raises:
        TypeError: a non-Tensor or integer input, or ``out=`` (not supported).
        IndexError: ``dim`` out of range.
    """
    check_tensors("normalize", input=input)
    if out is not None:
        raise TypeError("normalize: out= is not supported; use the returned tensor")
    if not (backend.is_floating(input.dtype) or input.dtype.kind == "c"):  # complex: |z|'s norm, z / it
        raise TypeError(f"normalize: expected a floating point or complex input, got {input.dtype}")
    p = _p(p, "normalize")
    d = normalize_dim(dim, input.ndim, "normalize")
    denom = input.norm(p, d, keepdim=True).clamp(min=float(eps))  # (..., 1, ...)
    return input / denom


@autocast("cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine similarity along ``dim`` of ``x1`` and ``x2`` broadcast together: ``(*, D, *)`` → ``(*, *)``.

    Integer inputs are accepted when their common dtype is floating (as PyTorch). A zero vector
    gives 0.

    Raises:
        TypeError: non-Tensors. RuntimeError: a common dtype that is not floating (PyTorch's
        message) or shapes that do not broadcast. IndexError: ``dim`` out of range.
    """
    check_tensors("cosine_similarity", x1=x1, x2=x2)
    a, b = promote(x1, x2, "cosine_similarity")
    if not backend.is_floating(a.dtype):
        raise RuntimeError(f"cosine_similarity: expected common dtype to be floating point, yet common dtype is {a.dtype}")
    shape = broadcast_shape(a.shape, b.shape, "cosine_similarity")
    a = a if a.shape == shape else broadcast_to(a, shape)
    b = b if b.shape == shape else broadcast_to(b, shape)
    d = normalize_dim(dim, len(shape), "cosine_similarity")
    na = clamp_min_straight_through(a.norm(2, d, keepdim=True), eps)  # (..., 1, ...)
    nb = clamp_min_straight_through(b.norm(2, d, keepdim=True), eps)
    return ((a / na) * (b / nb)).sum(d)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``‖x1 - x2 + eps‖_p`` over the last dimension: ``(N, D)``/``(D,)`` broadcast → ``(N,)``/``()``.

    The output has ``max(x1.ndim, x2.ndim) - 1`` dims (``keepdim`` keeps the last as 1). ``eps``
    keeps the gradient finite at ``x1 = x2``.

    Raises:
        TypeError: non-Tensors or a common integer dtype. RuntimeError: shapes that do not broadcast.
    """
    check_tensors("pairwise_distance", x1=x1, x2=x2)
    a, b = promote(x1, x2, "pairwise_distance")
    if not (backend.is_floating(a.dtype) or a.dtype.kind == "c"):  # complex: the (real) norm of |x1 - x2 + eps|
        raise TypeError(f"pairwise_distance: expected floating point or complex inputs, got {x1.dtype} and {x2.dtype}")
    broadcast_shape(a.shape, b.shape, "pairwise_distance")
    diff = a - b + eps  # (N, D)
    return diff.norm(_p(p, "pairwise_distance"), -1, keepdim=keepdim)


@autocast("cdist")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """All pairwise ``p``-norm distances: ``(B, P, M)``, ``(B, R, M)`` → ``(B, P, R)`` (batch dims broadcast).

    Computed directly as ``‖x1[..., :, None, :] - x2[..., None, :, :]‖_p`` (memory ``B·P·R·M``);
    PyTorch's matrix-product shortcut for ``p = 2`` (``compute_mode``) is not used, so results are
    at least as accurate as PyTorch's. The gradient is 0 at a zero distance (as PyTorch).

    Raises:
        RuntimeError: inputs under 2-D, different numbers of columns, ``p < 0``, or batch shapes
        that do not broadcast (PyTorch's messages). TypeError: non-float inputs. ValueError: a bad
        ``compute_mode``.
    """
    check_tensors("cdist", x1=x1, x2=x2)
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"cdist: {compute_mode!r} is not a valid value for compute_mode; expected one of {modes}")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if not backend.is_floating(x1.dtype) or not backend.is_floating(x2.dtype):
        raise TypeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype}, X2 got: {x2.dtype}")
    p = _p(p, "cdist", allow_negative=False)
    broadcast_shape(x1.shape[:-2], x2.shape[:-2], "cdist")
    a, b = promote(x1, x2, "cdist")
    diff = unsqueeze(a, -2) - unsqueeze(b, -3)  # (B, P, R, M)
    if diff.shape[-1] == 0:
        return diff.sum(-1)  # no columns: every distance is 0
    return diff.norm(p, -1)


class Pdist(Function):
    """``y[k] = ‖x[i_k] - x[j_k]‖_p`` over the pairs ``i < j`` in row-major order: ``(N, M)`` → ``(N(N-1)/2,)``."""

    @staticmethod
    def forward(ctx, x, p):
        xp = get_array_module(x)
        i, j = np.triu_indices(x.shape[0], 1)
        ctx.save_for_backward(x)
        ctx.p, ctx.pairs = p, (i, j)
        d = np.abs(x[i] - x[j]) if xp is np else xp.abs(x[xp.asarray(i)] - x[xp.asarray(j)])  # (P, M)
        if p == 0:
            return (d != 0).sum(axis=1).astype(x.dtype)
        if p == np.inf:
            return d.max(axis=1, initial=0).astype(x.dtype)
        if p == 1:
            return d.sum(axis=1)
        if p == 2:
            return xp.sqrt((d * d).sum(axis=1))
        return ((d ** p).sum(axis=1) ** (1 / p)).astype(x.dtype)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        p, (i, j) = ctx.p, ctx.pairs
        xp = get_array_module(x.array)
        it, jt = Tensor._from_op(xp.asarray(i.astype(np.int64))), Tensor._from_op(xp.asarray(j.astype(np.int64)))
        diff = x.index_select(0, it) - x.index_select(0, jt)  # (P, M)
        dist = Pdist.apply(x, p).unsqueeze(1)  # (P, 1), differentiable
        zero = diff * 0
        if p == 0:
            return x * 0, None
        if p == 1:
            coef = diff.sign()
        elif p == 2:
            coef = diff / dist
        elif p == np.inf:
            coef = diff.sign() * Tensor._from_op(xp.asarray(np.abs(diff.array) == dist.array).astype(x.dtype))
        elif p < 2:
            coef = diff.sign() * diff.abs().pow(p - 1) / dist.pow(p - 1)
            if p < 1:
                coef = _where_const(diff.array == 0, zero, coef)
        else:
            coef = diff * diff.abs().pow(p - 2) / dist.pow(p - 1)
        rows = _where_const(xp.broadcast_to(dist.array == 0, diff.shape), zero, coef) * dy.unsqueeze(1)  # (P, M)
        dx = (x * 0).index_add(0, it, rows).index_add(0, jt, -rows)  # (N, M)
        return dx, None


def _where_const(mask, a, b):
    from .selection import where  # noqa: PLC0415 - selection imports the comparison ops; kept local

    return where(Tensor._from_op(mask), a, b)


@autocast("pdist")
def pdist(input: Tensor, p: float = 2) -> Tensor:  # noqa: A002
    """The ``p``-norm distance between every pair of rows ``i < j`` of ``input (N, M)`` → ``(N(N-1)/2,)``,
    in row-major pair order, as ``torch.nn.functional.pdist`` (``p = 0`` counts differing entries,
    ``p = inf`` is the largest difference). The gradient is 0 where a distance is 0 (ATen's rule).

    Raises RuntimeError for an input that is not 2-D or a negative ``p``; TypeError for integers.
    """
    check_tensors("pdist", input=input)
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    p = _p(p, "pdist", allow_negative=False)
    if input.dtype.kind != "f":
        raise TypeError(f"pdist only supports floating-point dtypes, got {input.dtype}")
    return Pdist.apply(input, p)
