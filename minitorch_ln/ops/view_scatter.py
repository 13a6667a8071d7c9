"""The view-scatter ops: ``diagonal_scatter``, ``select_scatter``, ``slice_scatter``, ``as_strided_scatter``.

Each returns a copy of ``input`` whose elements under one view (``diagonal``, ``select``, a slice,
``as_strided``) are replaced by ``src``, which must have that view's shape exactly (PyTorch's rule). The
body is the definition itself: a clone of ``input``, the view taken of it, ``copy_(src)`` into the view. The
in-place copy through a view is recorded as PyTorch records it (``CopySlices``, docs/autograd.md), so
``d input`` is the upstream gradient with the view's elements zeroed and ``d src`` is the gradient under the
view, both differentiable again.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ShapeError
from ..tensor import Tensor
from ._util import normalize_dim
from .strided_views import _strided_positions, as_strided
from .view_ops import diagonal, select

__all__ = ["as_strided_scatter", "diagonal_scatter", "select_scatter", "slice_scatter"]


def _scatter_into_view(op: str, input: Tensor, src: Tensor, view_of) -> Tensor:
    for name, t in (("input", input), ("src", src)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(t).__name__}")
    out = input.clone()  # (*input.shape)
    view = view_of(out)
    if tuple(view.shape) != tuple(src.shape):
        raise ShapeError(f"{op}(): expected src to have a size equal to the slice of self, {tuple(view.shape)}, "
                         f"but got {tuple(src.shape)}")
    if src.dtype != input.dtype:
        src = src.to(input.dtype)  # PyTorch copies src into input's dtype
    view.copy_(src)
    return out


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``input`` with ``diagonal(input, offset, dim1, dim2)`` replaced by ``src`` (that diagonal's shape).

    Raises ShapeError for a ``src`` of another shape, and as :func:`diagonal` for bad dims.
    """
    return _scatter_into_view("diagonal_scatter", input, src, lambda t: diagonal(t, offset, dim1, dim2))


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """``input`` with ``input.select(dim, index)`` replaced by ``src`` (``input``'s shape without ``dim``).

    Raises ShapeError for a ``src`` of another shape, IndexError for ``dim`` or ``index`` out of range.
    """
    return _scatter_into_view("select_scatter", input, src, lambda t: select(t, dim, index))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    """``input`` with ``input[..., start:end:step, ...]`` (along ``dim``) replaced by ``src`` (that slice's shape).

    ``start``/``end`` follow Python's slicing (negative counts from the end, clipped to the size).
    Raises ShapeError for a ``src`` of another shape, ValueError for ``step < 1``, IndexError for a bad ``dim``.
    """
    if not isinstance(step, numbers.Integral) or step < 1:
        raise ValueError(f"slice_scatter(): slice step must be a positive integer, got {step!r}")
    d = normalize_dim(dim, input.ndim if isinstance(input, Tensor) else 0, "slice_scatter()")
    index = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into_view("slice_scatter", input, src, lambda t: t[index])


def as_strided_scatter(input: Tensor, src: Tensor, size, stride, storage_offset=None) -> Tensor:
    """``input`` with the elements of ``as_strided(input, size, stride, storage_offset)`` replaced by ``src``.

    ``size``/``stride`` count elements of ``input``'s contiguous layout. A view whose elements overlap is
    refused with ShapeError (which element wins would be arbitrary), as is a ``src`` of another shape.
    """
    def view_of(t):
        v = as_strided(t, size, stride, storage_offset)
        positions = _strided_positions(tuple(v.shape), tuple(stride), storage_offset or 0, np)  # (*size)
        if np.unique(positions).size != positions.size:
            raise ShapeError(f"as_strided_scatter(): the view of size {tuple(size)} and stride {tuple(stride)} "
                             "overlaps itself; scattering into it is ambiguous")
        return v

    return _scatter_into_view("as_strided_scatter", input, src, view_of)
