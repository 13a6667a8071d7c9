"""``embedding_bag`` (``torch.nn.functional``): the sum, mean or max of the embeddings of each bag of ids,
without materializing the per-bag ``(B, L, D)`` lookups' padding.

Composed of Tensor ops: the rows of ``weight`` at every id (:func:`~minitorch_ln.ops.embedding.embedding`),
weighted by ``per_sample_weights`` (``'sum'``), then added into
their bags (``index_add``); ``'mean'`` divides by each bag's count; ``'max'`` gathers, per bag and
feature, the first maximal row (ATen's CPU rule: a later row must be strictly larger), so its gradient
goes to that one row. Ids equal to ``padding_idx`` take no part in any bag; an empty bag is zeros.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..autograd.grad_mode import is_grad_enabled
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import require_float
from .creation import zeros
from .embedding import _renorm_rows_, embedding

__all__ = ["embedding_bag"]


def _bags(input, offsets, include_last_offset):  # noqa: A002
    """Flat ids ``(K,)`` (NumPy), the bag of each ``(K,)`` and the number of bags."""
    ids = np.asarray(input.detach().cpu().array).astype(np.int64)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences.")
        B, L = ids.shape
        return ids.reshape(-1), np.repeat(np.arange(B), L), B
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if not isinstance(offsets, Tensor) or offsets.ndim != 1:
        raise ValueError(f"offsets has to be a 1D Tensor, got {getattr(offsets, 'shape', type(offsets).__name__)}")
    off = np.asarray(offsets.detach().cpu().array).astype(np.int64)
    K = ids.shape[0]
    if include_last_offset:
        if off.size == 0:
            raise RuntimeError("include_last_offset: number of offsets should be at least 1")
        off = off[:-1] if off.size else off
    if off.size and off[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {off[0]}")
    if off.size and (off[-1] > K or np.any(np.diff(off) < 0)):
        raise RuntimeError(f"offsets must be non-decreasing and at most the number of ids ({K}), got {off.tolist()}")
    bag = np.searchsorted(off, np.arange(K), side="right") - 1  # (K,)
    return ids, bag, off.size


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2, scale_grad_by_freq: bool = False,  # noqa: A002
                  mode: str = "mean", sparse: bool = False, per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx=None) -> Tensor:
    """Bags of ids → ``(B, D)``: ``input (B, L)`` (each row a bag), or ``input (K,)`` with ``offsets (B,)``
    (bag ``b`` is ``input[offsets[b]:offsets[b+1]]``; ``include_last_offset``: ``offsets`` has ``B + 1``
    entries); ``weight (V, D)`` float; ``mode`` ``'sum'``, ``'mean'`` or ``'max'``; ``per_sample_weights``
    (``input``'s shape, ``'sum'`` only) scale each row. ``max_norm`` renormalizes the looked-up rows of
    ``weight`` in place first; ``sparse=True`` gives the dense gradient's values.

    Raises ValueError (PyTorch's messages) for offsets with a 2-D input, a missing or non-1-D
    ``offsets``, an unknown mode, ``per_sample_weights`` with another mode or shape; RuntimeError for
    offsets not starting at 0 or decreasing; IndexError for an id outside ``[0, V)``.
    """
    if not isinstance(input, Tensor) or input.dtype.kind not in "iu":
        raise TypeError(f"embedding_bag: input must be an integer tensor of ids, got "
                        f"{getattr(input, 'dtype', type(input).__name__)}")
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise TypeError(f"embedding_bag: weight must be a 2-D tensor (num_embeddings, embedding_dim), got "
                        f"{getattr(weight, 'shape', type(weight).__name__)}")
    require_float(weight, "embedding_bag")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                      "on GitHub.")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, "
                             f"then it must have the same shape as the input ({tuple(input.shape)})")
    if scale_grad_by_freq and weight.requires_grad and is_grad_enabled():
        # it changes the gradient only, and PyTorch's counts there are not the ids' frequencies (a gradient
        # of half was measured for an id that occurs once): refused rather than guessed; forward-only is exact
        raise NotImplementedError("embedding_bag: scale_grad_by_freq=True with a weight that requires grad is not "
                                  "supported by minitorch_ln (docs/torch_compat.md)")
    ids, bag, B = _bags(input, offsets, include_last_offset)
    V, D = weight.shape
    if padding_idx is not None:
        if not isinstance(padding_idx, numbers.Integral) or not -V <= padding_idx < V:
            raise IndexError(f"embedding_bag: padding_idx {padding_idx!r} must be an int in [{-V}, {V - 1}]")
        padding_idx = int(padding_idx) % V
    if max_norm is not None:
        _renorm_rows_(weight, ids, float(max_norm), float(norm_type))
    xp = get_array_module(weight.array)
    keep = np.ones(ids.shape, dtype=bool) if padding_idx is None else ids != padding_idx  # (K,)
    rows = embedding(Tensor._from_op(xp.asarray(ids)), weight, padding_idx)  # (K, D)
    if mode == "max":
        return _bag_max(rows, ids, bag, keep, B, D, xp)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1).to(weight.dtype)
    sel = np.nonzero(keep)[0]
    kept = rows.index_select(0, Tensor._from_op(xp.asarray(sel))) if sel.size < ids.size else rows  # (K', D)
    bag_t = Tensor._from_op(xp.asarray(bag[sel]))
    total = zeros(B, D, dtype=weight.dtype, device=weight.device).index_add(0, bag_t, kept)  # (B, D)
    if mode == "sum":
        return total
    count = np.bincount(bag[sel], minlength=B).astype(weight.dtype)  # (B,)
    return total / Tensor._from_op(xp.asarray(np.maximum(count, 1).reshape(B, 1)))


def _bag_max(rows, ids, bag, keep, B, D, xp):
    """Per bag and feature, the first maximal kept row (gathered: its gradient goes to that row alone)."""
    vals = np.asarray(rows.detach().cpu().array)  # (K, D)
    pick = np.zeros((B, D), dtype=np.int64)
    empty = np.ones(B, dtype=bool)
    for b in range(B):
        members = np.nonzero((bag == b) & keep)[0]
        if members.size:
            empty[b] = False
            pick[b] = members[np.argmax(vals[members], axis=0)]  # first maximum
    if rows.shape[0] == 0:  # no ids at all: every bag is empty (zeros, still in the graph, as PyTorch's)
        return zeros(B, D, dtype=rows.dtype, device=rows.device) + rows.sum() * 0
    out = rows.gather(0, Tensor._from_op(xp.asarray(pick)))  # (B, D)
    if empty.any():
        out = out.masked_fill(Tensor._from_op(xp.asarray(np.broadcast_to(empty[:, None], (B, D)).copy())), 0.0)
    return out
