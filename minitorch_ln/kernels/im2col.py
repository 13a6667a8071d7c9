"""Array-level kernels for convolution and pooling: im2col/col2im, the three convolution GEMMs,
window argmax, flat gather/scatter and axis take/scatter (NumPy and CuPy through ``xp``; no Tensor).

Geometry is given per spatial axis of a 4-D ``(N, C, H, W)`` array::

    ksize = (kh, kw), stride = (sh, sw), pads = ((top, bottom), (left, right)), dilation = (dh, dw)

so that asymmetric padding ('same' with an even kernel, ``ceil_mode`` pooling) needs no special case.
``im2col`` is a strided *view* ``(N, C, kh, kw, OH, OW)`` of the padded input: element
``[n, c, i, j, oh, ow] = xpad[n, c, oh*sh + i*dh, ow*sw + j*dw]`` (Chainer's layout). ``col2im`` is
its adjoint: it adds every column entry back to the pixel it was read from.
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module
from .choice import compiled_cpu


def out_size(size: int, k: int, s: int, d: int, lo: int, hi: int) -> int:
    """Output length of a sliding window: ``floor((size + lo + hi - d·(k-1) - 1) / s) + 1``."""
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def im2col(x, ksize, stride, pads, dilation, fill=0):
    """``x (N, C, H, W)`` → strided view ``(N, C, kh, kw, OH, OW)`` of ``x`` padded with ``fill``."""
    xp = get_array_module(x)
    (kh, kw), (sh, sw), (dh, dw) = ksize, stride, dilation
    if any(p for pair in pads for p in pair):
        x = xp.pad(x, ((0, 0), (0, 0)) + tuple(pads), mode="constant", constant_values=fill)
    N, C, Hp, Wp = x.shape
    OH, OW = out_size(Hp, kh, sh, dh, 0, 0), out_size(Wp, kw, sw, dw, 0, 0)
    sN, sC, sH, sW = x.strides
    return xp.lib.stride_tricks.as_strided(
        x, (N, C, kh, kw, OH, OW), (sN, sC, sH * dh, sW * dw, sH * sh, sW * sw))


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
    if loops is not None and cols.size:
        return loops.col2im(cols, hw, stride, pads, dilation)
    return col2im_xp(cols, hw, stride, pads, dilation)


def col2im_xp(cols, hw, stride, pads, dilation):
    """:func:`col2im` in whole-array operations (NumPy and CuPy): the readable form."""
    xp = get_array_module(cols)
    N, C, kh, kw, OH, OW = cols.shape
    (sh, sw), ((pt, pb), (pl, pr)), (dh, dw) = stride, pads, dilation
    H, W = hw
    Hp = max(H + pt + pb, dh * (kh - 1) + sh * (OH - 1) + 1)
    Wp = max(W + pl + pr, dw * (kw - 1) + sw * (OW - 1) + 1)
    xpad = xp.zeros((N, C, Hp, Wp), dtype=cols.dtype)  # (N, C, Hp, Wp)
    for i in range(kh):
        for j in range(kw):
            h0, w0 = i * dh, j * dw
            xpad[:, :, h0:h0 + sh * (OH - 1) + 1:sh, w0:w0 + sw * (OW - 1) + 1:sw] += cols[:, :, i, j]
    return xp.ascontiguousarray(xpad[:, :, pt:pt + H, pl:pl + W])


# ------------------------------------------------------------------------------------ GEMM forms
#
# Each sample n is one GEMM with the weights, batched over the samples (and the groups): the
# columns of sample n are a (K, L) matrix, K = C/g·kh·kw, L = OH·OW, in the layout im2col makes,
# and y[n] = W (O/g, K) @ cols[n] (K, L) lands in (N, O, OH, OW) order with no transposing copy.


def _cols_gemm(x, ksize, stride, pads, dilation, groups, out_hw=None):
    """The columns of ``x`` as ``(N, g, K, L)`` (the one copy of them) and ``(OH, OW)``; only the first
    ``out_hw`` output positions when given (the backward of a transposed convolution whose
    ``output_padding`` made its output longer than the windows its input has)."""
    xp = get_array_module(x)
    view = im2col(x, ksize, stride, pads, dilation)  # (N, C, kh, kw, OH, OW)
    if out_hw is not None:
        view = view[..., :out_hw[0], :out_hw[1]]
    cols = xp.ascontiguousarray(view)
    N, C, kh, kw, OH, OW = cols.shape
    return cols.reshape(N, groups, C // groups * kh * kw, OH * OW), (OH, OW)


def conv2d_forward(x, w, stride, pads, dilation, groups, out_hw=None, return_cols=False):
    """``y = w ⋆ x``: ``x (N, C, H, W)``, ``w (O, C/g, kh, kw)`` → ``y (N, O, OH, OW)``; one GEMM per sample
    (and group). ``out_hw``: compute only the first ``(OH, OW)`` output positions. ``return_cols``:
    also return the columns ``(N, g, K, L)``, which :func:`conv2d_weight_grad` can take instead of
    making them again."""
    xp = get_array_module(x)
    O, Cg, kh, kw = w.shape
    N = x.shape[0]
    cols, (OH, OW) = _cols_gemm(x, (kh, kw), stride, pads, dilation, groups, out_hw)  # (N, g, K, L)
    y = xp.matmul(w.reshape(groups, O // groups, Cg * kh * kw), cols)  # (N, g, O/g, L)
    return (y.reshape(N, O, OH, OW), cols) if return_cols else y.reshape(N, O, OH, OW)


def conv2d_input_grad(dy, w, hw, stride, pads, dilation, groups):
    """``dx = col2im(wᵀ @ dy[n])`` (a transposed convolution): ``dy (N, O, OH, OW)`` → ``(N, C, H, W)``."""
    xp = get_array_module(dy)
    O, Cg, kh, kw = w.shape
    N, _, OH, OW = dy.shape
    wg = w.reshape(groups, O // groups, Cg * kh * kw)  # (g, O/g, K)
    dyg = xp.ascontiguousarray(dy).reshape(N, groups, O // groups, OH * OW)  # (N, g, O/g, L)
    cols = xp.matmul(wg.transpose(0, 2, 1), dyg)  # (N, g, K, L)
    return col2im(cols.reshape(N, groups * Cg, kh, kw, OH, OW), hw, stride, pads, dilation)


def conv2d_weight_grad(x, dy, ksize, stride, pads, dilation, groups, cols=None):
    """``dw = Σ_n dy[n] @ cols[n]ᵀ``: → ``(O, C/g, kh, kw)`` (the columns of the positions ``dy`` has;
    ``cols``, when given, are the forward's: ``(N, g, K, OH·OW)`` for exactly ``dy``'s positions)."""
    xp = get_array_module(x)
    N, O, OH, OW = dy.shape
    if cols is None or cols.shape[-1] != OH * OW:
        cols, _ = _cols_gemm(x, ksize, stride, pads, dilation, groups, (OH, OW))  # (N, g, K, L)
    dyg = xp.ascontiguousarray(dy).reshape(N, groups, O // groups, OH * OW)  # (N, g, O/g, L)
    dw = xp.matmul(dyg, cols.transpose(0, 1, 3, 2)).sum(axis=0)  # (g, O/g, K)
    return dw.reshape(O, x.shape[1] // groups, *ksize)


# ------------------------------------------------------------------------------------ pooling helpers
def window_argmax(x, ksize, stride, pads, dilation, out_hw=None):
    """Flat index ``h·W + w`` (int64, ``(N, C, OH, OW)``) of each window's maximum, as PyTorch picks it:
    the first maximum in row-major window order, or the last NaN when the window holds a NaN; and the
    bool mask of windows with no cell inside the input (``(N, C, OH, OW)``).

    ``pads`` may be larger at the bottom/right than at the top/left (``ceil_mode``).
    """
    xp = get_array_module(x)
    N, C, H, W = x.shape
    (kh, kw), (sh, sw), ((pt, pb), (pl, pr)), (dh, dw) = ksize, stride, pads, dilation
    loops = _compiled(x)
    if loops is not None and x.size:  # one compiled pass over the windows (cpu_im2col.py)
        OH, OW = out_size(H, kh, sh, dh, pt, pb), out_size(W, kw, sw, dw, pl, pr)
        (hs, h_ok), (ws, w_ok) = _first_inside(OH, sh, pt, dh, kh, H, np), _first_inside(OW, sw, pl, dw, kw, W, np)
        idx = loops.window_argmax(x, ksize, stride, pads, dilation, hs, ws)
        empty = np.broadcast_to(~(h_ok.reshape(OH, 1) & w_ok.reshape(1, OW)), idx.shape)
        return idx, empty
    fill = -np.inf if x.dtype.kind == "f" else (np.iinfo(x.dtype).min if x.dtype.kind in "iu" else False)
    win = im2col(x, ksize, stride, pads, dilation, fill=fill)  # (N, C, kh, kw, OH, OW)
    OH, OW = win.shape[4:]
    win = win.reshape(N, C, kh * kw, OH, OW)
    k = xp.argmax(win, axis=2)  # first maximum: (N, C, OH, OW)
    if x.dtype.kind == "f":
        isnan = xp.isnan(win)
        last_nan = kh * kw - 1 - xp.argmax(isnan[:, :, ::-1], axis=2)
        k = xp.where(isnan.any(axis=2), last_nan, k)
    i, j = k // kw, k % kw
    h = xp.arange(OH).reshape(OH, 1) * sh - pt + i * dh
    w = xp.arange(OW).reshape(1, OW) * sw - pl + j * dw
    idx = h * W + w
    # A padding cell wins only when the maximum is -inf: PyTorch then keeps its initial index, the
    # window's first in-bounds cell (and a window with none is "empty": output -inf, no gradient).
    (hs, h_ok), (ws, w_ok) = _first_inside(OH, sh, pt, dh, kh, H, xp), _first_inside(OW, sw, pl, dw, kw, W, xp)
    outside = (h < 0) | (h >= H) | (w < 0) | (w >= W)
    idx = xp.where(outside, hs.reshape(OH, 1) * W + ws.reshape(1, OW), idx).astype(np.int64)
    empty = outside & ~(h_ok.reshape(OH, 1) & w_ok.reshape(1, OW))
    return idx, empty


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


def separable(x, a, b):
    """``y[n, c] = a @ x[n, c] @ bᵀ``: ``x (N, C, H, W)``, ``a (OH, H)``, ``b (OW, W)`` → ``(N, C, OH, OW)``.

    The linear map behind adaptive average pooling and nearest/bilinear interpolation.
    """
    xp = get_array_module(x)
    return xp.ascontiguousarray(xp.matmul(xp.matmul(a, x), b.T))
