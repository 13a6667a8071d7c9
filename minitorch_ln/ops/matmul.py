"""Matrix product with batch broadcasting and 1-D operands (``torch.matmul``'s rules).

For 2-D ``C = A @ B``: ``dA = dC @ Bᵀ`` and ``dB = Aᵀ @ dC``. Batch dimensions broadcast, so the
gradients are summed back over them; a 1-D operand is treated as a matrix with a temporary axis
(prepended for the left, appended for the right), removed again from the result.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import promote
from .elementwise import unbroadcast
from .shape import reshape, transpose, unsqueeze, squeeze


class MatMul(Function):
    """``a @ b`` for operands with at least 2 dimensions."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return get_array_module(a).matmul(a, b)

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        da = unbroadcast(matmul(dc, transpose(b, -1, -2)), a.shape) if ctx.needs_input_grad[0] else None
        db = unbroadcast(matmul(transpose(a, -1, -2), dc), b.shape) if ctx.needs_input_grad[1] else None
        return da, db


def matmul(a, b) -> Tensor:
    """Matrix product: ``(..., n, k) @ (..., k, m) -> (..., n, m)``, batch dims broadcast.

    Raises:
        ValueError: when the inner sizes differ or the batch dims do not broadcast (naming both shapes).
    """
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        a, b = promote(a, b, "matmul")
    elif a.dtype != b.dtype:
        a, b = promote(a, b, "matmul")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: both operands need at least 1 dimension, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.ndim >= 2 else b.shape[0]
    if k_a != k_b:
        raise ValueError(
            f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied "
            f"({k_a} columns on the left, {k_b} rows on the right)"
        )
    try:
        import numpy as np  # noqa: PLC0415

        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(
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


del reshape
