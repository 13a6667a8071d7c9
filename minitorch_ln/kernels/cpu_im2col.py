"""col2im as a compiled loop on the CPU: the map of ``kernels/im2col.py``'s ``col2im_xp``, in one pass.

``col2im`` adds every column entry ``(N, C, kh, kw, OH, OW)`` back to its pixel, skipping the
padding, into an ``(N, C, H, W)`` plane that stays in the cache; the NumPy form makes ``kh·kw``
passes over a padded copy. The loop runs along the output row ``ow`` innermost, over the range of
``ow`` whose pixel lies inside the input, so that it has no branch there. (im2col itself stays a
NumPy copy of a strided view: a compiled loop measured twice as slow.) ``col2im_xp`` is the
readable twin, and ``tests/test_ops_convolution.py`` holds them equal.
"""

from __future__ import annotations

import numpy as np

from ._numba import AVAILABLE, jit
from .choice import COMPILED_DTYPES

__all__ = ["usable", "col2im", "window_argmax"]


def usable(a) -> bool:
    """Whether the compiled loops take ``a``: a NumPy float32/float64 array, Numba installed."""
    return AVAILABLE and type(a) is np.ndarray and a.dtype in COMPILED_DTYPES


# The loop indexes flat (raveled) arrays: ``out`` as N·C planes of H·W, ``cols`` as rows of OW
# (row (n, c, i, j, oh) starts at ((((n·C + c)·kh + i)·kw + j)·OH + oh)·OW).


@jit
def _ow_range(OW, sw, first_w, W):
    """The outputs ``[lo, hi)`` of a row whose input column ``ow·sw + first_w`` lies in ``[0, W)``."""
    lo = 0 if first_w >= 0 else min(OW, (-first_w + sw - 1) // sw)
    last = W - 1 - first_w
    hi = lo if last < 0 else max(lo, min(OW, last // sw + 1))
    return lo, hi


@jit
def _col2im(cols, N, C, H, W, kh, kw, sh, sw, pt, pl, dh, dw, OH, OW, out):
    r = 0
    for plane in range(N * C):
        base = plane * H * W
        for i in range(kh):
            for j in range(kw):
                first_w = j * dw - pl
                lo, hi = _ow_range(OW, sw, first_w, W)
                for oh in range(OH):
                    h = oh * sh - pt + i * dh
                    if 0 <= h < H:
                        dst = base + h * W + first_w
                        if sw == 1:
                            for ow in range(lo, hi):
                                out[dst + ow] += cols[r + ow]
                        else:
                            for ow in range(lo, hi):
                                out[dst + ow * sw] += cols[r + ow]
                    r += OW


def col2im(cols, hw, stride, pads, dilation):
    """Adjoint of :func:`im2col_copy`: ``cols (N, C, kh, kw, OH, OW)`` → ``(N, C, H, W)``, overlaps summed."""
    (sh, sw), ((pt, _), (pl, _)), (dh, dw) = stride, pads, dilation
    N, C, kh, kw, OH, OW = cols.shape
    H, W = hw
    out = np.zeros((N, C, H, W), dtype=cols.dtype)
    _col2im(np.ascontiguousarray(cols).ravel(), N, C, H, W, kh, kw, sh, sw, pt, pl, dh, dw, OH, OW, out.ravel())
    return out


@jit
def _window_argmax(x, kh, kw, sh, sw, pt, pl, dh, dw, hs, ws, idx):
    N, C, H, W = x.shape
    OH, OW = idx.shape[2], idx.shape[3]
    for n in range(N):
        for c in range(C):
            for oh in range(OH):
                for ow in range(OW):
                    best, best_idx = -np.inf, hs[oh] * W + ws[ow]   # PyTorch: the first cell inside
                    for i in range(kh):
                        h = oh * sh - pt + i * dh
                        if h < 0 or h >= H:
                            continue
                        for j in range(kw):
                            w = ow * sw - pl + j * dw
                            if w < 0 or w >= W:
                                continue
                            v = x[n, c, h, w]
                            if v > best or v != v:                   # a NaN wins, the last one
                                best, best_idx = v, h * W + w
                    idx[n, c, oh, ow] = best_idx


def window_argmax(x, ksize, stride, pads, dilation, first_h, first_w):
    """The flat index of each window's maximum, ``(N, C, OH, OW)`` int64, as ``im2col.window_argmax``
    picks it (the same rule as PyTorch's CPU loop: a cell wins when it is larger or NaN), in one pass
    over the windows instead of argmax passes over the whole column view. ``first_h``/``first_w`` are
    the first in-bounds row/column of each window (``(OH,)``, ``(OW,)``): the index of a window whose
    cells are all -inf or outside."""
    (kh, kw), (sh, sw), ((pt, _), (pl, _)), (dh, dw) = ksize, stride, pads, dilation
    N, C = x.shape[:2]
    idx = np.empty((N, C, len(first_h), len(first_w)), dtype=np.int64)
    _window_argmax(np.ascontiguousarray(x), kh, kw, sh, sw, pt, pl, dh, dw,
                   np.asarray(first_h, np.int64), np.asarray(first_w, np.int64), idx)
    return idx
