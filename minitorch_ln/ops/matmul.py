"""Matrix product with batch broadcasting and 1-D operands (``torch.matmul``'s rules), and ``linear``.

For 2-D ``C = A @ B``: ``dA = dC @ Bᵀ`` and ``dB = Aᵀ @ dC``. Batch dimensions broadcast, so the
gradients are summed back over them; a 1-D operand is treated as a matrix with a temporary axis
(prepended for the left, appended for the right), removed again from the result.

``linear`` (``y = x Wᵀ + b``) is one fused node: one GEMM with the bias added in place, and a
backward of two GEMMs and a column sum (``dx = dy W``, ``dW = dyᵀ x``, ``db = Σ_rows dy``), in a node
of its own (``LinearBackward``) whose backward gives the second derivatives.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import ShapeError
from ..tensor import Tensor
from ._util import promote
from .autocast_policies import autocast
from .complex_parts import cj
from .shape import unbroadcast
from .shape import reshape, transpose, unsqueeze, squeeze

__all__ = ["linear", "matmul"]


class MatMul(Function):
    """``a @ b`` for operands with at least 2 dimensions."""

    supports_complex = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return get_array_module(a).matmul(a, b)

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        da = unbroadcast(matmul(dc, transpose(cj(b), -1, -2)), a.shape) if ctx.needs_input_grad[0] else None
        db = unbroadcast(matmul(transpose(cj(a), -1, -2), dc), b.shape) if ctx.needs_input_grad[1] else None
        return da, db


@autocast("matmul")
def matmul(a, b) -> Tensor:
    """Matrix product: ``(..., n, k) @ (..., k, m) -> (..., n, m)``, batch dims broadcast.

    Raises:
        ShapeError (a RuntimeError, as PyTorch's, and a ValueError): a 0-d operand, inner sizes that
            differ, or batch dims that do not broadcast (naming both shapes).
    """
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        a, b = promote(a, b, "matmul")
    elif a.dtype != b.dtype:
        a, b = promote(a, b, "matmul")
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: both operands need at least 1 dimension, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.ndim >= 2 else b.shape[0]
    if k_a != k_b:
        raise ShapeError(
            f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied "
            f"({k_a} columns on the left, {k_b} rows on the right)"
        )
    try:
        import numpy as np  # noqa: PLC0415

        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ShapeError(
            f"matmul: the batch dimensions of shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast"
        ) from None
    a2 = unsqueeze(a, 0) if a.ndim == 1 else a
    b2 = unsqueeze(b, -1) if b.ndim == 1 else b
    out = MatMul.apply(a2, b2)
    if a.ndim == 1:
        out = squeeze(out, -2)
    if b.ndim == 1:
        out = squeeze(out, -1)
    return out


class Linear(Function):
    """``y = x Wᵀ + b`` for ``x`` ``(N, in)``, ``W`` ``(out, in)``, ``b`` ``(out,)`` or None → ``(N, out)``.

    One node instead of matmul, transpose and a broadcast add: the bias is added into the GEMM's
    output in place (no second ``(N, out)`` array). The backward is :class:`LinearBackward`.
    """

    @staticmethod
    def forward(ctx, x, weight, bias):
        need_x, need_w, _ = ctx.needs_input_grad
        ctx.save_for_backward(x if need_w else None, weight if need_x else None)
        y = get_array_module(x).matmul(x, weight.T)  # (N, out)
        if bias is not None:
            y += bias
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        grads = iter(_as_tuple(LinearBackward.apply(dy, x, weight, need_x, need_w, need_b)))
        return tuple(next(grads) if need else None for need in (need_x, need_w, need_b))


def _as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


class LinearBackward(Function):
    """``(dy, x, W) -> dx = dy W, dW = dyᵀ x, db = Σ_rows dy`` (those asked for), on the arrays:
    ``Wᵀ`` and ``dyᵀ`` are transposed views that BLAS reads as they are, with no copy.

    Its own backward (second derivatives) is the vector-Jacobian product of the same three
    products, written with :func:`matmul`: for cotangents ``(ddx, ddW, ddb)``,
    ``d(dy) = ddx Wᵀ + x ddWᵀ + ddb``, ``d(x) = dy ddW``, ``d(W) = ddxᵀ dy``.
    """

    @staticmethod
    def forward(ctx, dy, x, weight, need_x, need_w, need_b):
        ctx.save_for_backward(dy, x, weight)
        ctx.needs = (need_x, need_w, need_b)
        grads = (dy @ weight if need_x else None,  # dx (N, in)
                 dy.T @ x if need_w else None,     # dW (out, in)
                 dy.sum(axis=0) if need_b else None)   # db (out,)
        out = tuple(g for g in grads if g is not None)
        return out if len(out) > 1 else out[0]

    @staticmethod
    def backward(ctx, *cotangents):
        dy, x, weight = ctx.saved_tensors
        it = iter(cotangents)
        ddx, ddw, ddb = (next(it) if need else None for need in ctx.needs)
        ddy = x_grad = w_grad = None
        if ctx.needs_input_grad[0]:
            terms = [t for t in (matmul(ddx, weight.transpose(0, 1)) if ddx is not None else None,
                                 matmul(x, ddw.transpose(0, 1)) if ddw is not None else None,
                                 ddb) if t is not None]
            ddy = terms[0]
            for t in terms[1:]:
                ddy = ddy + t
            if ddy.shape != dy.shape:                                  # only ddb: one row, repeated
                ddy = ddy.expand(*dy.shape)
        if ctx.needs_input_grad[1] and ddw is not None:
            x_grad = matmul(dy, ddw)                                   # (N, in)
        if ctx.needs_input_grad[2] and ddx is not None:
            w_grad = matmul(dy.transpose(0, 1), ddx)                   # (out, in)
        return ddy, x_grad, w_grad, None, None, None


@autocast("linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias``: ``(*, in)`` with ``(out, in)`` and ``(out,)`` → ``(*, out)``.

    The leading dimensions are flattened, so a 3-D input is one 2-D GEMM (NumPy's batched matmul
    against a transposed 2-D weight skips BLAS and is about ten times slower).

    Raises:
        ShapeError (a RuntimeError and a ValueError): when ``input``'s last dimension is not ``weight``'s second.
    """
    if input.shape[-1:] != weight.shape[-1:]:
        raise ShapeError(
            f"linear: input of shape {tuple(input.shape)} has {input.shape[-1] if input.ndim else 0} features, "
            f"but the weight of shape {tuple(weight.shape)} expects {weight.shape[-1]}"
        )
    if (weight.ndim != 2 or input.ndim == 0 or input.dtype != weight.dtype or input.dtype.kind == "c"
            or (bias is not None and (bias.dtype != weight.dtype or bias.shape != weight.shape[:1]))):
        # the general case (1-D weight, mixed dtypes, a bias that broadcasts, complex: matmul's backward
        # conjugates, the fused LinearBackward does not): composed, with promotion
        out = matmul(input, transpose(weight, 0, -1))
        return out + bias if bias is not None else out
    x2 = input if input.ndim == 2 else reshape(input, -1, input.shape[-1])  # (N, in)
    out = Linear.apply(x2, weight, bias)  # (N, out)
    return out if input.ndim == 2 else reshape(out, *input.shape[:-1], weight.shape[0])  # (*, out)
