"""BatchNorm (batch statistics) forward and backward as compiled loops on the CPU, on the input's own layout.

The formulas of ``kernels/batch_norm.py`` (and of LayerNorm, over each channel ``x[:, c, :]`` of an
``(N, C, L)`` input: docs, section 8), written as loops that Numba compiles, as ``cpu_layer_norm.py``
does for LayerNorm. float16, empty input and a missing Numba go to the NumPy kernels.
"""

from __future__ import annotations

import numpy as np

from . import batch_norm as _xp
from ._numba import AVAILABLE, as_contiguous, check_shapes, jit
from .choice import COMPILED_DTYPES

__all__ = ["batch_norm_fwd_ncl", "batch_norm_bwd_ncl"]


# BatchNorm with batch statistics, on the input's own layout (N, C, L): one mean and variance per
# channel c over the N·L values x[:, c, :], and γ, β per channel; otherwise LayerNorm's formulas
# (docs, section 8). Working in place of the (C, N·L) rows of the NumPy kernels saves the two
# transposing copies each way (for (4096, 256) float32 they took 7 ms each). The per-channel sums
# run over the whole batch, often millions of values, so they are accumulated in float64.
#
# Each pass is a helper whose innermost loop runs along memory, so that it vectorizes: over the
# channels for an (N, C) input (L = 1), along L otherwise. Single-threaded.


@jit
def _channel_sums(x, shift, mean_shifted, squares, out):
    """``out[c] += Σ xc`` (or ``Σ xc²`` with ``squares``), ``xc = (x - shift[c]) - mean_shifted[c]``."""
    N, C, L = x.shape
    for n in range(N):
        if L == 1:
            for c in range(C):
                xc = (x[n, c, 0] - shift[c]) - mean_shifted[c]
                out[c] += xc * xc if squares else xc
        else:
            for c in range(C):
                acc = 0.0
                for j in range(L):
                    xc = (x[n, c, j] - shift[c]) - mean_shifted[c]
                    acc += xc * xc if squares else xc
                out[c] += acc


@jit
def _channel_normalize(x, shift, mean_shifted, scale, bias, y):
    """``y = ((x - shift[c]) - mean_shifted[c]) · scale[c] + bias[c]``: exactly β where x is constant."""
    N, C, L = x.shape
    for n in range(N):
        if L == 1:
            for c in range(C):
                y[n, c, 0] = ((x[n, c, 0] - shift[c]) - mean_shifted[c]) * scale[c] + bias[c]
        else:
            for c in range(C):
                for j in range(L):
                    y[n, c, j] = ((x[n, c, j] - shift[c]) - mean_shifted[c]) * scale[c] + bias[c]


@jit
def _channel_grad_sums(dy, x, mu, sum_xc, sum_dy, sum_dy_xc):
    """``Σ (x - mu[c])``, ``Σ dy`` and ``Σ dy · (x - mu[c])`` per channel, in one pass."""
    N, C, L = x.shape
    for n in range(N):
        if L == 1:
            for c in range(C):
                xc = x[n, c, 0] - mu[c]
                sum_xc[c] += xc
                sum_dy[c] += dy[n, c, 0]
                sum_dy_xc[c] += dy[n, c, 0] * xc
        else:
            for c in range(C):
                a, b, d = 0.0, 0.0, 0.0
                for j in range(L):
                    xc = x[n, c, j] - mu[c]
                    a += xc
                    b += dy[n, c, j]
                    d += dy[n, c, j] * xc
                sum_xc[c] += a
                sum_dy[c] += b
                sum_dy_xc[c] += d


@jit
def _channel_dx(dy, x, mu, cen, r, weight, mean_dxhat, mean_dxhat_xhat, dx):
    """``dx = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat))`` per channel."""
    N, C, L = x.shape
    for n in range(N):
        if L == 1:
            for c in range(C):
                xhat = ((x[n, c, 0] - mu[c]) - cen[c]) * r[c]
                dx[n, c, 0] = r[c] * (dy[n, c, 0] * weight[c] - mean_dxhat[c] - xhat * mean_dxhat_xhat[c])
        else:
            for c in range(C):
                for j in range(L):
                    xhat = ((x[n, c, j] - mu[c]) - cen[c]) * r[c]
                    #                 term 1 (direct)        term 2 (via mean)   term 3 (via rstd)
                    dx[n, c, j] = r[c] * (dy[n, c, j] * weight[c] - mean_dxhat[c] - xhat * mean_dxhat_xhat[c])


@jit
def _batch_norm_fwd_ncl(x, weight, bias, eps, y, mean, rstd, var):
    N, C, L = x.shape
    m = np.float64(N * L)
    shift = np.empty(C)                 # (C,) float64: each channel shifted by its first value
    for c in range(C):
        shift[c] = x[0, c, 0]
    s = np.zeros(C)
    _channel_sums(x, shift, np.zeros(C), False, s)              # (C,) Σ (x - shift)
    mean_shifted = s / m
    v = np.zeros(C)
    _channel_sums(x, shift, mean_shifted, True, v)              # (C,) Σ (x - mean)², the second pass
    r = 1.0 / np.sqrt(v / m + eps)      # biased variance, eps inside the sqrt
    for c in range(C):
        mean[c, 0], var[c, 0], rstd[c, 0] = shift[c] + mean_shifted[c], v[c] / m, r[c]
    _channel_normalize(x, shift, mean_shifted, r * weight, bias, y)


@jit
def _batch_norm_bwd_ncl(dy, x, weight, mean, rstd, dx, dweight, dbias):
    N, C, L = x.shape
    m = np.float64(N * L)
    mu, r = np.empty(C), np.empty(C)
    for c in range(C):
        mu[c], r[c] = mean[c, 0], rstd[c, 0]
    sum_xc, sum_dy, sum_dy_xc = np.zeros(C), np.zeros(C), np.zeros(C)
    _channel_grad_sums(dy, x, mu, sum_xc, sum_dy, sum_dy_xc)
    cen = sum_xc / m                    # re-centring: xhat = (x - mu - cen) · rstd
    sum_dy_xhat = r * (sum_dy_xc - cen * sum_dy)                # (C,) Σ dy · xhat = dγ
    for c in range(C):
        dweight[c], dbias[c] = sum_dy_xhat[c], sum_dy[c]        # dβ = Σ dy
    mean_dxhat = weight * sum_dy / m                            # (C,) mean(dxhat), dxhat = dy · γ
    mean_dxhat_xhat = weight * sum_dy_xhat / m                  # (C,) mean(dxhat · xhat)
    _channel_dx(dy, x, mu, cen, r, weight, mean_dxhat, mean_dxhat_xhat, dx)


def _compiled_ncl(x) -> bool:
    """Whether BatchNorm's ``x`` ``(N, C, L)`` goes through the compiled loops (float32/64, not empty)."""
    return AVAILABLE and x.dtype in COMPILED_DTYPES and x.ndim == 3 and x.size > 0


def batch_norm_fwd_ncl(x, weight, bias, eps):
    """BatchNorm forward (batch statistics), compiled, on ``x`` ``(N, C, L)`` → ``(y, mean, rstd, var)``.

    ``weight``/``bias`` ``(C,)`` or None; ``y`` ``(N, C, L)``; ``mean``, ``rstd`` and the biased
    ``var`` ``(C, 1)``, all in ``x``'s dtype. Single-threaded.
    """
    if not _compiled_ncl(x):
        return _xp.batch_norm_fwd_ncl(x, weight, bias, eps)
    check_shapes("batch_norm_fwd_ncl", x, weight=weight, bias=bias, per_row=True)
    N, C, L = x.shape
    dt = x.dtype
    w = np.ones(C, dt) if weight is None else as_contiguous(weight, dt)                    # (C,)
    b = np.zeros(C, dt) if bias is None else as_contiguous(bias, dt)                       # (C,)
    y = np.empty((N, C, L), dt)                                                  # (N, C, L)
    mean, rstd, var = np.empty((C, 1), dt), np.empty((C, 1), dt), np.empty((C, 1), dt)
    _batch_norm_fwd_ncl(as_contiguous(x, dt), w, b, float(eps), y, mean, rstd, var)
    return y, mean, rstd, var


def batch_norm_bwd_ncl(dy, x, weight, mean, rstd):
    """BatchNorm backward (batch statistics), compiled, on ``(N, C, L)`` → ``(dx, dweight (C,), dbias (C,))``.

    ``dweight``/``dbias`` are None when ``weight`` is None, else in the weight's dtype.
    """
    if not _compiled_ncl(x):
        return _xp.batch_norm_bwd_ncl(dy, x, weight, mean, rstd)
    check_shapes("batch_norm_bwd_ncl", x, dy=dy, weight=weight, mean=mean, rstd=rstd, per_row=True)
    N, C, L = x.shape
    dt = x.dtype
    w = np.ones(C, dt) if weight is None else as_contiguous(weight, dt)                    # (C,)
    dx, dweight, dbias = np.empty((N, C, L), dt), np.empty(C, dt), np.empty(C, dt)
    _batch_norm_bwd_ncl(as_contiguous(dy, dt), as_contiguous(x, dt), w, as_contiguous(mean, dt), as_contiguous(rstd, dt), dx, dweight, dbias)
    if weight is None:
        return dx, None, None
    return dx, dweight.astype(weight.dtype, copy=False), dbias.astype(weight.dtype, copy=False)
