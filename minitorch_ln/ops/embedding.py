"""Embedding lookup: gather rows of a ``(V, D)`` table; the backward scatter-adds into the table.

A token id that occurs several times in a batch uses its row several times, so its gradient is the
*sum* of the gradients of every occurrence: ``kernels.scatter.scatter_add`` (``np.add.at`` /
``cupyx.scatter_add``), never ``dweight[ids] = dy``, which would keep only one of them.
"""

from __future__ import annotations

import numbers

from .. import backend
from ..errors import DtypeError
from ..autograd.function import Function
from ..backend import get_array_module
from ..kernels.scatter import scatter_add
from ..tensor import Tensor
from ._util import require_float

__all__ = ["embedding"]


class Embedding(Function):
    @staticmethod
    def forward(ctx, ids, weight, padding_idx, scale_grad_by_freq=False):
        ctx.ids, ctx.num_embeddings, ctx.padding_idx = ids, weight.shape[0], padding_idx
        ctx.scale_grad_by_freq = scale_grad_by_freq
        return weight[ids]  # (*ids.shape, D)

    @staticmethod
    def backward(ctx, dy):
        if ctx.scale_grad_by_freq:  # each occurrence's gradient divided by how often its id occurs
            xp = get_array_module(ctx.ids)
            counts = xp.bincount(ctx.ids.reshape(-1), minlength=ctx.num_embeddings)  # (V,)
            dy = dy * Tensor._from_op((1.0 / counts[ctx.ids])[..., None].astype(dy.dtype))  # (*ids.shape, 1)
        return None, EmbeddingBackward.apply(dy, ctx.ids, ctx.num_embeddings, ctx.padding_idx), None, None


class EmbeddingBackward(Function):
    """``dweight`` ``(V, D)``: zeros with ``dy[..., :]`` added at each id's row; the padding row stays zero."""

    @staticmethod
    def forward(ctx, dy, ids, num_embeddings, padding_idx):
        xp = get_array_module(dy)
        ctx.ids, ctx.padding_idx = ids, padding_idx
        dweight = xp.zeros((num_embeddings, dy.shape[-1]), dtype=dy.dtype)  # (V, D)
        scatter_add(dweight, ids.reshape(-1), dy.reshape(-1, dy.shape[-1]))
        if padding_idx is not None:
            dweight[padding_idx] = 0
        return dweight

    @staticmethod
    def backward(ctx, ddweight):
        # the adjoint of a scatter-add is the gather; positions holding the padding id got nothing
        ddy = Embedding.apply(Tensor._from_op(ctx.ids), ddweight, None)
        if ctx.padding_idx is not None:
            ddy = ddy.masked_fill(Tensor._from_op((ctx.ids == ctx.padding_idx)[..., None]), 0.0)
        return ddy, None, None, None


def _renorm_rows_(weight: Tensor, ids, max_norm: float, norm_type: float) -> None:
    """PyTorch's ``embedding_renorm_``: each row of ``weight`` looked up by ``ids`` whose ``norm_type``-norm
    exceeds ``max_norm`` is scaled by ``max_norm / (norm + 1e-7)``, in place and outside the graph."""
    xp = get_array_module(weight.array)
    rows = xp.unique(ids.reshape(-1))  # (U,) each looked-up row once
    w = weight.array
    norms = xp.linalg.norm(w[rows].astype(xp.float64), ord=norm_type, axis=1)  # (U,)
    over = norms > max_norm
    w[rows[over]] *= (max_norm / (norms[over] + 1e-7)).astype(w.dtype)[:, None]
    weight._bump_version()  # changed in place: a graph that saved the old rows refuses to backward


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """Rows of ``weight`` ``(V, D)`` at the ids ``input`` ``(*)`` → ``(*, D)`` (``F.embedding``).

    ``scale_grad_by_freq``: each lookup's gradient is divided by how often its id occurs in ``input``.
    ``sparse=True`` is accepted and gives the same gradient values as a dense tensor (no sparse layout).

    ``padding_idx`` (negative counts from the end, as PyTorch): that row receives no gradient.
    ``max_norm``: first, every looked-up row whose ``norm_type``-norm exceeds it is rescaled to norm
    ``max_norm`` *in the weight itself*, without a gradient (as PyTorch's ``embedding_renorm_``).

    Raises:
        TypeError: ``input`` is not an integer tensor, or ``weight`` is not a float 2-D tensor.
        IndexError: an id outside ``[0, V)`` (naming the id and V), or ``padding_idx`` outside ``[-V, V)``.
    """
    if not isinstance(input, Tensor) or input.dtype.kind not in "iu":
        got = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise DtypeError(f"embedding: input must be an integer tensor of token ids (int64), got {got}")
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        got = tuple(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise TypeError(f"embedding: weight must be a 2-D tensor (num_embeddings, embedding_dim), got {got}")
    require_float(weight, "embedding")
    vocab = weight.shape[0]
    if input.numel():
        lo, hi = int(input.array.min()), int(input.array.max())
        if lo < 0 or hi >= vocab:
            bad = lo if lo < 0 else hi
            raise IndexError(f"embedding: token id {bad} is out of range for a vocabulary of size {vocab} "
                             f"(ids must be in [0, {vocab - 1}])")
    if padding_idx is not None:
        if not isinstance(padding_idx, numbers.Integral) or not -vocab <= padding_idx < vocab:
            raise IndexError(f"embedding: padding_idx {padding_idx!r} must be an int in [{-vocab}, {vocab - 1}]")
        padding_idx = int(padding_idx) % vocab
    if max_norm is not None:
        _renorm_rows_(weight, input.array, float(max_norm), float(norm_type))
    return Embedding.apply(input, weight, padding_idx, bool(scale_grad_by_freq))
