"""``histc`` and ``histogram``: counts of values in bins, as PyTorch's (not differentiable).

Binning follows PyTorch's CPU kernel (aten/src/ATen/native/cpu/HistogramKernel.cpp): with ``bins``
equal-width bins over ``[min, max]`` an element goes to bin ``int((x - min) * bins / (max - min))``
computed in the input's dtype; ``histogram`` then moves it one bin left or right where that formula
disagrees with the bin edges it returns (``linspace(min, max, bins + 1)``); the last bin includes
its right edge; elements outside ``[min, max]`` (and NaN) are not counted. Counts are exact; sums of
float32 ``weight`` may differ from PyTorch's in the last bits (PyTorch adds per-thread partial
histograms).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import backend
from ..backend import get_array_module
from ..tensor import Tensor

__all__ = ["histc", "histogram"]

HistogramResult = namedtuple("histogram", ["hist", "bin_edges"])  # torch.return_types.histogram


def _check_input(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if not backend.is_floating(x.dtype):
        raise NotImplementedError(f'"{op}" not implemented for {x.dtype}: expected a floating-point tensor '
                                  f"(convert it first: x.float())")


def _check_bins(bins) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"bins must be an int or a 1-D tensor of bin edges, got {type(bins).__name__}")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    return int(bins)


def _data_range(a, lo: float, hi: float, widen: float):
    """``(lo, hi)``, or the finite data's min and max when both are 0 (``histc``) / None (``histogram``);
    an empty range is widened by ``widen`` each side, as PyTorch."""
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - widen, hi + widen
    return lo, hi


def _linear_bins(a, lo: float, hi: float, bins: int):
    """The bin of each element (``-1`` outside ``[lo, hi]``) by PyTorch's division, in ``a``'s dtype."""
    xp = get_array_module(a)
    dt = a.dtype.type
    inside = (a >= dt(lo)) & (a <= dt(hi))  # NaN is never inside
    with np.errstate(invalid="ignore", over="ignore"):
        pos = (a - dt(lo)) * dt(bins) / (dt(hi) - dt(lo))  # (N,) in the input's dtype
    pos = xp.where(inside, pos, 0).astype(np.int64)
    pos = xp.minimum(pos, bins - 1)  # the last bin includes its right edge
    return xp.where(inside, pos, -1)


def _count(xp, pos, bins: int, weight, dtype):
    keep = pos >= 0
    if weight is None:
        return xp.bincount(pos[keep], minlength=bins)[:bins].astype(dtype)
    hist = xp.zeros(bins, dtype=dtype)  # (B,)
    xp.add.at(hist, pos[keep], weight[keep])  # in order, in the input's dtype, as PyTorch's loop adds
    return hist


def _edges(xp, lo: float, hi: float, bins: int, dtype):
    """``bins + 1`` edges from ``lo`` to ``hi`` as PyTorch's ``linspace`` makes them in ``dtype``: the
    first half counted up from ``lo``, the second half down from ``hi``."""
    dt = np.dtype(dtype).type
    step = (dt(hi) - dt(lo)) / dt(bins)
    # PyTorch's vectorized loop uses a fused multiply-add; in float64 a float32 product is exact, so
    # one rounding to float32 afterwards gives the same edges (float64 edges: nearly always, in long double)
    wide = np.float64 if np.dtype(dtype).itemsize < 8 else np.longdouble if xp is np else dt
    i = xp.arange(bins + 1)  # (B + 1,)
    up = wide(dt(lo)) + wide(step) * i.astype(wide)
    down = wide(dt(hi)) - wide(step) * (bins - i).astype(wide)
    return xp.where(i < (bins + 1) // 2, up, down).astype(dtype)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *, out=None) -> Tensor:  # noqa: A002
    """Counts of ``input``'s elements in ``bins`` equal-width bins over ``[min, max]``, shape ``(bins,)``,
    in ``input``'s (floating) dtype, as ``torch.histc``. ``min = max = 0`` uses the data's range.

    Raises:
        NotImplementedError: an integer or bool input (as PyTorch).
        RuntimeError: ``bins <= 0``, ``min > max``, or a range that is not finite.
    """
    _check_input(input, "histc")
    bins = _check_bins(bins)
    if out is not None:
        raise TypeError("histc(): out= is not supported here; use the returned tensor")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    a = input.array.reshape(-1)  # (N,)
    lo, hi = _data_range(a, float(min), float(max), 1.0)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    xp = get_array_module(a)
    return Tensor._from_op(_count(xp, _linear_bins(a, lo, hi, bins), bins, None, a.dtype))


def histogram(input: Tensor, bins=100, *, range=None, weight=None, density: bool = False,  # noqa: A002
              out=None) -> HistogramResult:
    """``(hist, bin_edges)`` as ``torch.histogram``: ``bins`` an int (equal-width bins over ``range``,
    default the data's min and max) or a 1-D tensor of increasing edges; ``weight`` (the shape of
    ``input``) adds its values instead of 1; ``density`` divides by the total and the bin widths.
    ``hist`` has shape ``(bins,)`` and ``bin_edges`` ``(bins + 1,)``, both in ``input``'s dtype.

    Raises:
        NotImplementedError: an integer or bool input.
        RuntimeError: ``bins <= 0``, ``range`` with min > max, a ``weight`` of another shape, or edges
            that are not a 1-D tensor.
    """
    _check_input(input, "histogram")
    if out is not None:
        raise TypeError("histogram(): out= is not supported here; use the returned tensors")
    a = input.array.reshape(-1)  # (N,)
    xp = get_array_module(a)
    w = None
    if weight is not None:
        if not isinstance(weight, Tensor) or tuple(weight.shape) != tuple(input.shape):
            got = tuple(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
            raise RuntimeError(f"torch.histogram(): weight should have the same shape as input {tuple(input.shape)}, "
                               f"got {got}")
        w = weight.array.reshape(-1)  # (N,)
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.numel() < 1:
            raise RuntimeError(f"torch.histogram(): bins must be a 1-D tensor of edges, got shape {tuple(bins.shape)}")
        edges = bins.array.astype(a.dtype)  # (B + 1,)
        n = edges.shape[0] - 1
        inside = (a >= edges[0]) & (a <= edges[-1])
        pos = xp.minimum(xp.searchsorted(edges, a, side="right") - 1, max(n - 1, 0))
        pos = xp.where(inside, pos, -1)
    else:
        n = _check_bins(bins)
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
            if lo > hi:
                raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} "
                                   "for dimension 0")
        else:
            lo, hi = (float(a.min()), float(a.max())) if a.size else (0.0, 1.0)  # empty: [0, 1], as PyTorch
        lo, hi = _data_range(a, lo, hi, 0.5)
        edges = _edges(xp, lo, hi, n, a.dtype)  # (B + 1,)
        pos = _linear_bins(a, lo, hi, n)
        # PyTorch's local search: the bin whose edges hold x, among the one found and its neighbours
        ok = pos >= 0
        p = xp.where(ok, pos, 0)
        p = xp.where(ok & (p > 0) & (a < edges[p]), p - 1, p)
        p = xp.where(ok & (p < n - 1) & (a >= edges[xp.minimum(p + 1, n)]), p + 1, p)
        pos = xp.where(ok, p, -1)
    hist = _count(xp, pos, n, w, a.dtype)  # (B,)
    if density:
        widths = xp.diff(edges)  # (B,)
        total = hist.sum()
        hist = (hist / (total * widths)).astype(a.dtype)
    return HistogramResult(Tensor._from_op(hist), Tensor._from_op(edges))

