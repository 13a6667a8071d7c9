"""Array-level kernels for convolution and pooling: im2col/col2im, the three convolution GEMMs,
window argmax, flat gather/scatter and axis take/scatter (NumPy and CuPy through ``xp``; no Tensor).

Geometry is given per spatial axis of an ``(N, C, *S)`` array with 2 or 3 spatial axes (1-d ops run
on a height-1 image); in 2-d::

    ksize = (kh, kw), stride = (sh, sw), pads = ((top, bottom), (left, right)), dilation = (dh, dw)

so that asymmetric padding ('same' with an even kernel, ``ceil_mode`` pooling) needs no special case.
``im2col`` is a strided *view* ``(N, C, kh, kw, OH, OW)`` of the padded input: element
``[n, c, i, j, oh, ow] = xpad[n, c, oh*sh + i*dh, ow*sw + j*dw]`` (Chainer's layout); in 3-d
``(N, C, kd, kh, kw, OD, OH, OW)`` alike. ``col2im`` is its adjoint: it adds every column entry back
to the pixel it was read from. The compiled CPU loops (``cpu_im2col``) take the 2-d case.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..backend import get_array_module
from .choice import compiled_cpu


def out_size(size: int, k: int, s: int, d: int, lo: int, hi: int) -> int:
    """Output length of a sliding window: ``floor((size + lo + hi - d·(k-1) - 1) / s) + 1``."""
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def im2col(x, ksize, stride, pads, dilation, fill=0):
    """``x (N, C, *S)`` → strided view ``(N, C, *k, *O)`` of ``x`` padded with ``fill``."""
    xp = get_array_module(x)
    if any(p for pair in pads for p in pair):
        x = xp.pad(x, ((0, 0), (0, 0)) + tuple(pads), mode="constant", constant_values=fill)
    outs = tuple(out_size(n, k, s, d, 0, 0) for n, k, s, d in zip(x.shape[2:], ksize, stride, dilation))
    sp = x.strides[2:]
    return xp.lib.stride_tricks.as_strided(
        x, x.shape[:2] + tuple(ksize) + outs,
        x.strides[:2] + tuple(a * d for a, d in zip(sp, dilation)) + tuple(a * s for a, s in zip(sp, stride)))


def _compiled(a):
    """The compiled loops (``cpu_im2col``) when they take ``a`` and the CPU kernels are Numba's, else None."""
    if not compiled_cpu():
        return None
    from . import cpu_im2col  # noqa: PLC0415 - Numba is imported on first use

    return cpu_im2col if cpu_im2col.usable(a) else None


def im2col_copy(x, ksize, stride, pads, dilation):
    """The columns of :func:`im2col` as a C-contiguous ``(N, C, kh, kw, OH, OW)`` array (zero padding)."""
    xp = get_array_module(x)
    return xp.ascontiguousarray(im2col(x, ksize, stride, pads, dilation))


def col2im(cols, hw, stride, pads, dilation):
    """Adjoint of :func:`im2col`: ``cols (N, C, kh, kw, OH, OW)`` → ``(N, C, H, W)``, overlaps summed.

    One slice-add per kernel offset (``kh·kw`` of them), each over the whole batch and every
    output pixel at once (:func:`col2im_xp`); on the CPU, one compiled pass (``cpu_im2col``).
    """
    loops = _compiled(cols)
    if loops is not None and cols.ndim == 6 and cols.size:
        return loops.col2im(cols, hw, stride, pads, dilation)
    return col2im_xp(cols, hw, stride, pads, dilation)


def col2im_xp(cols, hw, stride, pads, dilation):
    """:func:`col2im` in whole-array operations (NumPy and CuPy): the readable form."""
    xp = get_array_module(cols)
    nd = len(hw)
    N, C = cols.shape[:2]
    ksize, outs = cols.shape[2:2 + nd], cols.shape[2 + nd:]
    padded = tuple(max(n + lo + hi, d * (k - 1) + s * (o - 1) + 1)
                   for n, (lo, hi), k, s, d, o in zip(hw, pads, ksize, stride, dilation, outs))
    xpad = xp.zeros((N, C) + padded, dtype=cols.dtype)  # (N, C, *Sp)
    for offs in itertools.product(*(range(k) for k in ksize)):
        win = tuple(slice(i * d, i * d + s * (o - 1) + 1, s) for i, d, s, o in zip(offs, dilation, stride, outs))
        xpad[(slice(None), slice(None)) + win] += cols[(slice(None), slice(None)) + offs]
    inner = tuple(slice(lo, lo + n) for (lo, _), n in zip(pads, hw))
    return xp.ascontiguousarray(xpad[(slice(None), slice(None)) + inner])


# ------------------------------------------------------------------------------------ GEMM forms
#
# Each sample n is one GEMM with the weights, batched over the samples (and the groups): the
# columns of sample n are a (K, L) matrix, K = C/g·kh·kw, L = OH·OW, in the layout im2col makes,
# and y[n] = W (O/g, K) @ cols[n] (K, L) lands in (N, O, OH, OW) order with no transposing copy.


def _cols_gemm(x, ksize, stride, pads, dilation, groups, out_hw=None):
    """The columns of ``x`` as ``(N, g, K, L)`` (the one copy of them) and the output sizes ``O``; only
    the first ``out_hw`` output positions when given (the backward of a transposed convolution whose
    ``output_padding`` made its output longer than the windows its input has)."""
    xp = get_array_module(x)
    nd = len(ksize)
    view = im2col(x, ksize, stride, pads, dilation)  # (N, C, *k, *O)
    if out_hw is not None:
        view = view[(Ellipsis,) + tuple(slice(None, o) for o in out_hw)]
    cols = xp.ascontiguousarray(view)
    N, C = cols.shape[:2]
    outs = cols.shape[2 + nd:]
    return cols.reshape(N, groups, C // groups * math.prod(ksize), math.prod(outs)), outs


def conv_forward(x, w, stride, pads, dilation, groups, out_hw=None, return_cols=False):
    """``y = w ⋆ x``: ``x (N, C, *S)``, ``w (O, C/g, *k)`` → ``y (N, O, *OS)``; one GEMM per sample
    (and group). ``out_hw``: compute only the first ``OS`` output positions. ``return_cols``:
    also return the columns ``(N, g, K, L)``, which :func:`conv_weight_grad` can take instead of
    making them again."""
    xp = get_array_module(x)
    O, Cg = w.shape[:2]
    ksize = w.shape[2:]
    N = x.shape[0]
    cols, outs = _cols_gemm(x, ksize, stride, pads, dilation, groups, out_hw)  # (N, g, K, L)
    y = xp.matmul(w.reshape(groups, O // groups, Cg * math.prod(ksize)), cols)  # (N, g, O/g, L)
    y = y.reshape((N, O) + tuple(outs))
    return (y, cols) if return_cols else y


def conv_input_grad(dy, w, hw, stride, pads, dilation, groups):
    """``dx = col2im(wᵀ @ dy[n])`` (a transposed convolution): ``dy (N, O, *OS)`` → ``(N, C, *S)``."""
    xp = get_array_module(dy)
    O, Cg = w.shape[:2]
    ksize = tuple(w.shape[2:])
    N, outs = dy.shape[0], tuple(dy.shape[2:])
    wg = w.reshape(groups, O // groups, Cg * math.prod(ksize))  # (g, O/g, K)
    dyg = xp.ascontiguousarray(dy).reshape(N, groups, O // groups, math.prod(outs))  # (N, g, O/g, L)
    cols = xp.matmul(wg.transpose(0, 2, 1), dyg)  # (N, g, K, L)
    return col2im(cols.reshape((N, groups * Cg) + ksize + outs), hw, stride, pads, dilation)


def conv_weight_grad(x, dy, ksize, stride, pads, dilation, groups, cols=None):
    """``dw = Σ_n dy[n] @ cols[n]ᵀ``: → ``(O, C/g, *k)`` (the columns of the positions ``dy`` has;
    ``cols``, when given, are the forward's: ``(N, g, K, L)`` for exactly ``dy``'s positions)."""
    xp = get_array_module(x)
    N, O = dy.shape[:2]
    outs = tuple(dy.shape[2:])
    L = math.prod(outs)
    if cols is None or cols.shape[-1] != L:
        cols, _ = _cols_gemm(x, ksize, stride, pads, dilation, groups, outs)  # (N, g, K, L)
    dyg = xp.ascontiguousarray(dy).reshape(N, groups, O // groups, L)  # (N, g, O/g, L)
    dw = xp.matmul(dyg, cols.transpose(0, 1, 3, 2)).sum(axis=0)  # (g, O/g, K)
    return dw.reshape(O, x.shape[1] // groups, *ksize)


# ------------------------------------------------------------------------------------ pooling helpers
def window_argmax(x, ksize, stride, pads, dilation, out_hw=None):
    """Flat index ``h·W + w`` (``d·H·W + h·W + w`` in 3-d; int64, ``(N, C, *O)``) of each window's
    maximum, as PyTorch picks it: the first maximum in row-major window order, or the last NaN when
    the window holds a NaN; and the bool mask of windows with no cell inside the input (``(N, C, *O)``).

    ``pads`` may be larger at the bottom/right than at the top/left (``ceil_mode``).
    """
    xp = get_array_module(x)
    N, C = x.shape[:2]
    sizes, nd = x.shape[2:], len(ksize)
    loops = _compiled(x)
    if loops is not None and nd == 2 and x.size:  # one compiled pass over the windows (cpu_im2col.py)
        (kh, kw), (sh, sw), ((pt, pb), (pl, pr)), (dh, dw) = ksize, stride, pads, dilation
        H, W = sizes
        OH, OW = out_size(H, kh, sh, dh, pt, pb), out_size(W, kw, sw, dw, pl, pr)
        (hs, h_ok), (ws, w_ok) = _first_inside(OH, sh, pt, dh, kh, H, np), _first_inside(OW, sw, pl, dw, kw, W, np)
        idx = loops.window_argmax(x, ksize, stride, pads, dilation, hs, ws)
        empty = np.broadcast_to(~(h_ok.reshape(OH, 1) & w_ok.reshape(1, OW)), idx.shape)
        return idx, empty
    fill = -np.inf if x.dtype.kind == "f" else (np.iinfo(x.dtype).min if x.dtype.kind in "iu" else False)
    win = im2col(x, ksize, stride, pads, dilation, fill=fill)  # (N, C, *k, *O)
    outs = win.shape[2 + nd:]
    kk = math.prod(ksize)
    win = win.reshape((N, C, kk) + outs)
    k = xp.argmax(win, axis=2)  # first maximum: (N, C, *O)
    if x.dtype.kind == "f":
        isnan = xp.isnan(win)
        last_nan = kk - 1 - xp.argmax(isnan[:, :, ::-1], axis=2)
        k = xp.where(isnan.any(axis=2), last_nan, k)
    offs = xp.unravel_index(k, tuple(ksize)) if kk > 1 else (xp.zeros_like(k),) * nd
    idx = xp.zeros(k.shape, dtype=np.int64)
    first = xp.zeros(outs, dtype=np.int64)
    outside, has_inside = xp.zeros(k.shape, dtype=bool), xp.ones(outs, dtype=bool)
    for a in range(nd):
        shape = [1] * nd
        shape[a] = outs[a]
        pos = (xp.arange(outs[a]) * stride[a] - pads[a][0]).reshape(shape) + offs[a] * dilation[a]
        outside = outside | (pos < 0) | (pos >= sizes[a])
        idx = idx * sizes[a] + pos
        start, ok = _first_inside(outs[a], stride[a], pads[a][0], dilation[a], ksize[a], sizes[a], xp)
        first = first * sizes[a] + start.reshape(shape)
        has_inside = has_inside & ok.reshape(shape)
    # A padding cell wins only when the maximum is -inf: PyTorch then keeps its initial index, the
    # window's first in-bounds cell (and a window with none is "empty": output -inf, no gradient).
    idx = xp.where(outside, first, idx).astype(np.int64)
    return idx, outside & ~has_inside


def _first_inside(o, s, p, d, k, n, xp):
    """Per output position: the first window cell ``≥ 0`` and whether it lies inside the window and the input."""
    start = xp.arange(o) * s - p
    first = xp.where(start < 0, start + (-start + d - 1) // d * d, start)
    return first, first < xp.minimum(start + d * (k - 1) + 1, n)


def gather_flat(x, idx):
    """``y[n, c, *o] = x[n, c].ravel()[idx[n, c, *o]]``: ``x (N, C, *S)``, ``idx (N, C, *O)`` → ``(N, C, *O)``."""
    xp = get_array_module(x)
    N, C = x.shape[:2]
    plane, out = int(np.prod(x.shape[2:])), int(np.prod(idx.shape[2:]))  # not -1: N or C may be 0
    return xp.take_along_axis(x.reshape(N, C, plane), idx.reshape(N, C, out), axis=2).reshape(idx.shape)


def scatter_flat(dy, idx, plane_shape):
    """Adjoint of :func:`gather_flat`: ``dy (N, C, *O)`` added into zeros ``(N, C, *plane_shape)`` at ``idx``."""
    xp = get_array_module(dy)
    N, C = dy.shape[:2]
    plane = int(np.prod(plane_shape))
    flat = (xp.arange(N * C, dtype=np.int64).reshape(N, C, 1) * plane
            + idx.reshape(N, C, int(np.prod(idx.shape[2:])))).ravel()
    return _bincount(flat, dy.ravel(), N * C * plane).reshape((N, C) + tuple(plane_shape))


def _bincount(flat, values, size):
    """``out[flat[i]] += values[i]`` into zeros of length ``size`` (sums exact-then-rounded on NumPy)."""
    xp = get_array_module(values)
    if xp is np and values.dtype.kind == "c":  # np.bincount's weights are real: the two parts apart
        return (_bincount(flat, values.real, size) + 1j * _bincount(flat, values.imag, size)).astype(values.dtype)
    if xp is np:
        return np.bincount(flat, weights=values, minlength=size).astype(values.dtype, copy=False)
    import cupyx

    out = xp.zeros(size, dtype=values.dtype)  # pragma: no cover
    cupyx.scatter_add(out, flat, values)  # pragma: no cover
    return out  # pragma: no cover


def scatter_axis(dy, idx, axis, size):
    """Adjoint of the gather ``x.take(idx, axis)``: ``out.take(idx, axis) += dy`` into zeros of length
    ``size`` on ``axis``."""
    xp = get_array_module(dy)
    moved = xp.moveaxis(dy, axis, 0)  # (len(idx), *rest)
    rest = moved.shape[1:]
    m = int(np.prod(rest))
    flat = (xp.asarray(idx, dtype=np.int64).reshape(-1, 1) * m + xp.arange(m, dtype=np.int64)).ravel()
    out = _bincount(flat, xp.ascontiguousarray(moved).ravel(), size * m).reshape((size,) + rest)
    return xp.ascontiguousarray(xp.moveaxis(out, 0, axis))


def separable(x, a, b, c=None):
    """``y[n, c] = a @ x[n, c] @ bᵀ``: ``x (N, C, H, W)``, ``a (OH, H)``, ``b (OW, W)`` → ``(N, C, OH, OW)``;
    with ``c (OW, W)`` and ``x (N, C, D, H, W)`` the same map along three axes (``a`` then on ``D``).

    The linear map behind adaptive average pooling and nearest/bilinear interpolation.
    """
    xp = get_array_module(x)
    if c is not None:  # (N, C, D, H, W): D by a, H by b, W by c
        y = xp.matmul(xp.matmul(x, c.T).swapaxes(-1, -2), b.T).swapaxes(-1, -2)  # (N, C, D, OH, OW)
        return xp.ascontiguousarray(xp.moveaxis(xp.tensordot(a, y, axes=([1], [2])), 0, 2))
    return xp.ascontiguousarray(xp.matmul(xp.matmul(a, x), b.T))
