"""``index_reduce`` and ``put``: index-based writes PyTorch defines through the scatter family.

- ``index_reduce(input, dim, index, source, reduce, include_self=True)``: for each ``i``, the slice
  ``source.select(dim, i)`` is reduced (``prod``, ``mean``, ``amax``, ``amin``) into
  ``input.select(dim, index[i])``. It is ``scatter_reduce`` with ``index`` spread over ``source``'s shape
  (each slice's elements go to the same target slice), so values, ties and gradients are
  ``scatter_reduce``'s (PyTorch's ``index_reduce`` documents the same definition).
- ``put(input, index, source, accumulate=False)``: ``input`` seen flat, ``flat[index] = source``
  (``+=`` when ``accumulate``), i.e. ``index_put`` on the flattened tensor; negative indices count from
  the end.
"""

from __future__ import annotations

from ..errors import ShapeError
from ..tensor import Tensor
from ._util import normalize_dim
from .scatter import scatter_reduce
from .view_ops import index_put

__all__ = ["index_reduce", "put"]

_REDUCES = ("prod", "mean", "amax", "amin")


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """``input`` with ``source``'s slices along ``dim`` reduced into the slices ``index`` names: ``index`` 1-D
    int64/int32 of length ``source.shape[dim]``, ``source`` ``input``'s shape except at ``dim``.

    Raises ValueError for a ``reduce`` other than prod/mean/amax/amin, ShapeError for shapes that do not
    fit, TypeError for a non-integer index, IndexError for an index out of range (from ``scatter_reduce``).
    """
    for name, t in (("input", input), ("index", index), ("source", source)):
        if not isinstance(t, Tensor):
            raise TypeError(f"index_reduce(): argument '{name}' must be a Tensor, not {type(t).__name__}")
    if reduce not in _REDUCES:
        raise ValueError(f"index_reduce(): reduce argument must be either prod, mean, amax or amin, got {reduce!r}")
    if index.dtype.kind not in "iu":
        raise TypeError(f"index_reduce(): index must be an integer tensor, got {index.dtype}")
    d = normalize_dim(dim, input.ndim, "index_reduce")
    if index.ndim > 1:
        raise ShapeError(f"index_reduce(): index must be a vector (1-D), got shape {tuple(index.shape)}")
    src_shape = tuple(source.shape) if source.ndim else (1,)
    in_shape = tuple(input.shape) if input.ndim else (1,)
    if len(src_shape) != len(in_shape) or any(a != b for i, (a, b) in enumerate(zip(src_shape, in_shape)) if i != d):
        raise ShapeError(f"index_reduce(): source of shape {tuple(source.shape)} must match input's shape "
                         f"{tuple(input.shape)} except in dim {d}")
    if index.numel() != src_shape[d]:
        raise ShapeError(f"index_reduce(): index has {index.numel()} entries, source has {src_shape[d]} slices "
                         f"along dim {d}")
    view = [1] * len(src_shape)
    view[d] = -1
    spread = index.reshape(view).expand(*src_shape)  # (*source.shape): index[i] for every element of slice i
    x = input.reshape(in_shape)
    out = scatter_reduce(x, d, spread.to("int64"), source.reshape(src_shape), reduce, include_self=include_self)
    return out.reshape(tuple(input.shape))


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``input`` (any shape) with ``flat[index] = source`` (``+=`` when ``accumulate``), ``index`` and ``source``
    of equal size. Raises ShapeError for sizes that differ, TypeError for a non-integer index, IndexError for
    an index outside ``[-numel, numel)``."""
    for name, t in (("input", input), ("index", index), ("source", source)):
        if not isinstance(t, Tensor):
            raise TypeError(f"put(): argument '{name}' must be a Tensor, not {type(t).__name__}")
    if index.dtype.kind not in "iu":
        raise TypeError(f"put(): index must be an integer tensor, got {index.dtype}")
    if index.numel() != source.numel():
        raise ShapeError(f"put(): expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = input.numel()
    flat_index = index.reshape(-1)
    if flat_index.numel() and (int(flat_index.max().item()) >= n or int(flat_index.min().item()) < -n):
        raise IndexError(f"put(): index out of range for a tensor of {n} elements")
    src = source.reshape(-1)
    src = src.to(input.dtype) if src.dtype != input.dtype else src
    flat = index_put(input.reshape(-1), (flat_index,), src, accumulate)  # (numel,)
    return flat.reshape(tuple(input.shape))


def _index_reduce_(self: Tensor, dim, index, source, reduce, *, include_self: bool = True) -> Tensor:
    """``Tensor.index_reduce_``: :func:`index_reduce` written into ``self`` (in place, version bumped)."""
    return self._inplace("index_reduce_", lambda s: index_reduce(s, dim, index, source, reduce,
                                                                 include_self=include_self), source)


def _put_(self: Tensor, index, source, accumulate: bool = False) -> Tensor:
    """``Tensor.put_``: :func:`put` written into ``self`` (in place, version bumped)."""
    return self._inplace("put_", lambda s: put(s, index, source, accumulate), source)
