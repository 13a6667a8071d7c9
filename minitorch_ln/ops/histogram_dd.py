"""``histogramdd``: the histogram of points in ``D`` dimensions (``torch.histogramdd``), on ``histogram``'s rules.

Each of the ``D`` coordinates is binned as ``torch.histogram`` bins one dimension (``histogram.py``: equal-width
bins over the range or the data's min and max, PyTorch's division then its local search among the
neighbouring bins, the last bin closed on the right; or given edges), and a point is counted in the cell of
its ``D`` bins when every coordinate falls inside. ``density`` divides by the total and by each cell's volume.
No gradient (counts), as PyTorch.
"""

from __future__ import annotations

import numbers
from collections import namedtuple

import numpy as np

from ..backend import get_array_module
from ..tensor import Tensor
from .histogram import _check_bins, _check_input, _data_range, _edges, _linear_bins

__all__ = ["histogramdd"]

HistogramddResult = namedtuple("histogramdd", ["hist", "bin_edges"])


def _bin_one_dim(a, bins, lo_hi, d: int):
    """``(positions (-1 outside), edges, number of bins)`` of the coordinates ``a`` ``(N,)`` of dimension ``d``."""
    xp = get_array_module(a)
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.numel() < 1:
            raise RuntimeError(f"torch.histogramdd(): bins[{d}] must be a 1-D tensor of edges, got shape "
                               f"{tuple(bins.shape)}")
        edges = bins.array.astype(a.dtype)  # (B + 1,)
        n = edges.shape[0] - 1
        inside = (a >= edges[0]) & (a <= edges[-1])
        pos = xp.minimum(xp.searchsorted(edges, a, side="right") - 1, max(n - 1, 0))
        return xp.where(inside, pos, -1), edges, n
    n = _check_bins(bins)
    if lo_hi is not None:
        lo, hi = lo_hi
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                               f"dimension {d}")
    else:
        lo, hi = (float(a.min()), float(a.max())) if a.size else (0.0, 1.0)
    lo, hi = _data_range(a, lo, hi, 0.5)
    edges = _edges(xp, lo, hi, n, a.dtype)  # (B + 1,)
    pos = _linear_bins(a, lo, hi, n)
    ok = pos >= 0  # PyTorch's local search among the found bin and its neighbours
    p = xp.where(ok, pos, 0)
    p = xp.where(ok & (p > 0) & (a < edges[p]), p - 1, p)
    p = xp.where(ok & (p < n - 1) & (a >= edges[xp.minimum(p + 1, n)]), p + 1, p)
    return xp.where(ok, p, -1), edges, n


def histogramdd(input: Tensor, bins=10, *, range=None, weight=None, density: bool = False) -> HistogramddResult:  # noqa: A002
    """``(hist, bin_edges)`` of the points ``input`` ``(..., D)``: ``bins`` an int (each dim), a list of ``D`` ints,
    or a list of ``D`` 1-D edge tensors; ``range`` ``[min_0, max_0, ..., min_(D-1), max_(D-1)]``; ``weight``
    ``input.shape[:-1]``. ``hist`` ``(B_0, ..., B_(D-1))`` and the ``D`` edge tensors are in ``input``'s dtype.

    Raises NotImplementedError for integer input, RuntimeError for ``bins``/``range``/``weight`` of the wrong
    length or shape, or non-positive bin counts. Edges whose last is below their first hold nothing (PyTorch's).
    """
    _check_input(input, "histogramdd")
    if input.ndim < 1:
        raise RuntimeError("torch.histogramdd(): input should have at least 1 dimension (the last holds the points' "
                           "coordinates)")
    D = input.shape[-1]
    pts = input.array.reshape(-1, D)  # (N, D)
    xp = get_array_module(pts)
    per_dim = [bins] * D if isinstance(bins, numbers.Integral) else list(bins)
    if len(per_dim) != D:
        raise RuntimeError(f"torch.histogramdd(): expected {D} sequences of bin edges or bin counts for each of the "
                           f"{D} dimensions, got {len(per_dim)}")
    if range is not None and len(range) != 2 * D:
        raise RuntimeError(f"torch.histogramdd(): range should have {2 * D} elements (min and max per dimension), "
                           f"got {len(range)}")
    w = None
    if weight is not None:
        if not isinstance(weight, Tensor) or tuple(weight.shape) != tuple(input.shape[:-1]):
            got = tuple(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
            raise RuntimeError(f"torch.histogramdd(): weight should have the shape {tuple(input.shape[:-1])}, got {got}")
        w = weight.array.reshape(-1).astype(pts.dtype)  # (N,)
    found = [_bin_one_dim(xp.ascontiguousarray(pts[:, d]), b,
                          None if range is None else (float(range[2 * d]), float(range[2 * d + 1])), d)
             for d, b in enumerate(per_dim)]
    sizes = tuple(n for _, _, n in found)
    keep = xp.ones(pts.shape[0], dtype=bool)
    cell = xp.zeros(pts.shape[0], dtype=np.int64)  # (N,) row-major cell index
    for pos, _, n in found:
        keep &= pos >= 0
        cell = cell * n + xp.maximum(pos, 0)
    total_cells = int(np.prod(sizes, dtype=np.int64))
    if w is None:
        hist = xp.bincount(cell[keep], minlength=total_cells)[:total_cells].astype(pts.dtype)
    else:
        hist = xp.zeros(total_cells, dtype=pts.dtype)
        xp.add.at(hist, cell[keep], w[keep])  # in order, in the input's dtype
    hist = hist.reshape(sizes)  # (B_0, ..., B_(D-1))
    if density:
        volume = xp.ones((), dtype=pts.dtype)
        for d, (_, edges, _) in enumerate(found):
            shape = [1] * D
            shape[d] = -1
            volume = volume * xp.diff(edges).reshape(shape)
        hist = (hist / hist.sum() / volume).astype(pts.dtype)
    return HistogramddResult(Tensor._from_op(hist), [Tensor._from_op(e) for _, e, _ in found])
