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

from ._numba import AVAILABLE, COMPILED_DTYPES, jit

__all__ = ["usable", "col2im"]


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
