"""Reductions that skip NaN: ``nansum`` and ``nanmean`` (``torch.nansum``, ``torch.nanmean``).

Both are composed from ``where``, ``sum`` and a division, so their gradients come from those ops:
a NaN entry gets a zero gradient (it was replaced by 0 before summing), every other entry ``dy`` for
``nansum`` and ``dy / count`` for ``nanmean``, where ``count`` is the number of non-NaN entries in
its slice -- PyTorch's ``nansum_backward`` and ``nanmean`` (defined as ``nansum / count``).
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..errors import DtypeError
from ..tensor import Tensor
from .comparison import isnan
from .reduction import sum  # noqa: A004 - PyTorch's name
from .selection import where

__all__ = ["nanmean", "nansum"]


def _need_tensor(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): expected input to be a Tensor, got {type(x).__name__}")


def _zero_nan(x: Tensor) -> Tensor:
    """``x`` with its NaN replaced by 0 (integer and bool tensors have none and are returned as they are)."""
    if not (backend.is_floating(x.dtype) or x.dtype.kind == "c"):
        return x
    return where(isnan(x), 0.0, x)


def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """The sum over ``dim`` treating NaN as zero (``torch.nansum``); a slice of only NaN sums to 0.

    Shapes as :func:`sum` (``dim`` an int, a tuple, or None for all; ``keepdim`` keeps size-1 dims).
    Integer and bool inputs sum to int64, as :func:`sum`; ``dtype`` casts the input first.
    Gradient: ``dy`` where the entry is not NaN, 0 where it is.

    Raises:
        TypeError: an input that is not a Tensor. IndexError: ``dim`` out of range.
    """
    _need_tensor(input, "nansum")
    if dtype is not None:
        input = input.to(dtype)
    return sum(_zero_nan(input), dim, keepdim)


def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """The mean over ``dim`` of the non-NaN entries (``torch.nanmean``): ``nansum / count``.

    A slice of only NaN gives NaN (0 / 0), as PyTorch. Same shape rules as :func:`nansum`; the input
    (after ``dtype``, if given) must be a floating dtype. Gradient: ``dy / count`` at non-NaN entries,
    0 at NaN.

    Raises:
        DtypeError (a TypeError and RuntimeError): an integer or bool input or ``dtype``.
    """
    _need_tensor(input, "nanmean")
    if dtype is not None:
        if not np.issubdtype(backend.as_dtype(dtype), np.inexact):
            raise DtypeError(f"nanmean(): could not infer output dtype. Optional dtype must be either a floating "
                             f"point or complex dtype. Got: {dtype}")
        input = input.to(dtype)
    if not (backend.is_floating(input.dtype) or input.dtype.kind == "c"):
        raise DtypeError(f"nanmean(): expected input to have floating point or complex dtype but got {input.dtype}")
    count = sum(~isnan(input), dim, keepdim)  # int64, the non-NaN entries of each slice
    with np.errstate(invalid="ignore", divide="ignore"):
        return nansum(input, dim, keepdim) / count.to(input.dtype)
