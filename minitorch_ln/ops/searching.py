"""Where entries are: ``nonzero``, ``argwhere``, ``searchsorted``, ``bucketize`` (integer results, no
gradient)."""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..backend import get_array_module
from ..tensor import Tensor
from .index_checks import index_array

__all__ = ["argwhere", "bucketize", "nonzero", "searchsorted"]

# ==================================================================================================
# nonzero, argwhere, searchsorted, bucketize (integer results, no gradient)
# ==================================================================================================


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """The indices of the non-zero entries of ``input`` (NaN counts as non-zero), in row-major order.

    Returns an int64 tensor of shape ``(n, input.ndim)``, or with ``as_tuple=True`` a tuple of
    ``input.ndim`` 1-D tensors (one for a 0-d input, as PyTorch). No gradient.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"nonzero(): expected input to be a Tensor, got {type(input).__name__}")
    xp = get_array_module(input.array)
    a = input.array
    if as_tuple:
        return tuple(Tensor._from_op(i.astype(np.int64)) for i in xp.nonzero(a.reshape(a.shape or (1,))))
    if a.ndim == 0:
        return Tensor._from_op(xp.zeros((int(a != 0), 0), dtype=np.int64))  # (1, 0) or (0, 0), as PyTorch
    return Tensor._from_op(xp.argwhere(a).astype(np.int64))  # (n, ndim)


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: an int64 ``(n, input.ndim)`` tensor of the indices of the non-zero entries."""
    return nonzero(input)


def _binary_search(seq, values, right):
    """PyTorch's lower/upper bound: the first ``i`` with ``seq[i] >= v`` (``> v`` for ``right``), per row of ``seq``.

    ``seq`` is ``(n,)`` or ``(*B, n)`` with ``values`` ``(*B, m)``. Written as PyTorch's loop
    (``if not seq[mid] >= v: lo = mid + 1``) so that NaN lands where PyTorch puts it.
    """
    xp = get_array_module(values)
    n = seq.shape[-1]
    lo = xp.zeros(values.shape, dtype=np.int64)
    hi = xp.full(values.shape, n, dtype=np.int64)
    for _ in range(int(n).bit_length() + 1):
        mid = (lo + hi) // 2
        at = xp.minimum(mid, max(n - 1, 0))
        mid_val = seq[at] if seq.ndim == 1 else xp.take_along_axis(seq, at, axis=-1)
        go_up = ~(mid_val > values) if right else ~(mid_val >= values)
        active = lo < hi
        lo = xp.where(active & go_up, mid + 1, lo)
        hi = xp.where(active & ~go_up, mid, hi)
    return lo


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side=None, sorter=None) -> Tensor:
    """The indices at which ``input`` would be inserted into ``sorted_sequence`` to keep it sorted (its last dim).

    ``sorted_sequence`` is ``(n,)`` or ``(*B, n)`` with ``input`` ``(*B, m)``; ``input`` may be a
    number (a 0-d result). ``right=True`` or ``side='right'`` gives the last such index. ``sorter``
    (int64, ``sorted_sequence``'s shape) sorts an unsorted sequence. Results are int64 (int32 with
    ``out_int32``) and have no gradient.

    Raises:
        RuntimeError: a 0-d sequence, leading dims that differ, side and right opposed, a bad sorter.
        ValueError (also a RuntimeError here): side not 'left'/'right'.
    """
    seq = sorted_sequence
    if not isinstance(seq, Tensor):
        raise TypeError(f"searchsorted(): expected sorted_sequence to be a Tensor, got {type(seq).__name__}")
    if side is not None:
        if side not in ("left", "right"):
            raise _BadOption(f"searchsorted(): side can only be 'left' or 'right', got {side!r}")
        if side == "left" and right:
            raise RuntimeError("searchsorted(): side and right can't be set to opposites: got side='left' and right=True")
        right = side == "right"
    xp = get_array_module(seq.array)
    if seq.ndim == 0:
        raise RuntimeError("searchsorted(): sorted_sequence must have at least one dimension, got a 0-d tensor")
    if isinstance(input, Tensor):
        values = backend.to_device(input.array, seq.device)
    elif isinstance(input, (numbers.Number, np.generic)):
        values = xp.asarray(input)
    else:
        raise TypeError(f"searchsorted(): expected input to be a Tensor or a number, got {type(input).__name__}")
    s = seq.array
    if s.ndim > 1 and (values.ndim != s.ndim or values.shape[:-1] != s.shape[:-1]):
        raise RuntimeError(f"searchsorted(): sorted_sequence should be 1-D or have input's leading dims: got "
                           f"sorted_sequence {tuple(s.shape)} and input {tuple(values.shape)}")
    if sorter is not None:
        srt = index_array(sorter, seq, "searchsorted", dtypes=("int64",), name="sorter")
        if srt.shape != s.shape:
            raise RuntimeError(f"searchsorted(): sorter must have sorted_sequence's shape {tuple(s.shape)}, got "
                               f"{tuple(srt.shape)}")
        if srt.size and (int(srt.min()) < 0 or int(srt.max()) >= s.shape[-1]):
            raise IndexError(f"searchsorted(): sorter index out of range [0, {s.shape[-1]})")
        s = xp.take_along_axis(s, srt, axis=-1)
    out = _binary_search(s, values, bool(right)) if s.shape[-1] else xp.zeros(values.shape, dtype=np.int64)
    return Tensor._from_op(out.astype(np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each entry of ``input`` (any shape, or a number): ``i`` with ``boundaries[i-1] < x <= boundaries[i]``.

    ``right=True``: ``boundaries[i-1] <= x < boundaries[i]``. ``boundaries`` is 1-D and sorted.
    Int64 results (int32 with ``out_int32``) of ``input``'s shape, no gradient. Raises
    RuntimeError when ``boundaries`` is not 1-D.
    """
    if not isinstance(boundaries, Tensor) or boundaries.ndim != 1:
        got = f"shape {tuple(boundaries.shape)}" if isinstance(boundaries, Tensor) else type(boundaries).__name__
        raise RuntimeError(f"bucketize(): boundaries must be a 1-D Tensor, got {got}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


class _BadOption(RuntimeError, ValueError):
    """A bad option string: PyTorch raises RuntimeError, Python would say ValueError."""
