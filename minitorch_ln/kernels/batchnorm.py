"""BatchNorm forward and backward (batch statistics) on raw arrays (NumPy and CuPy).

The statistics and the ``dx`` formula of :mod:`minitorch_ln.kernels.layernorm`, over the other axis:
each channel is a row ``(C, M)`` with ``M = N·L`` (docs, section 8).
"""

from __future__ import annotations

from ..backend import get_array_module
from .layernorm import dx_from_dxhat, row_stats, stat_dtype, xhat_from_stats


# ==================================================================================================
# BatchNorm: rows of x are channels, (C, M) with M = N·L; weight and bias (C,) across the rows
# ==================================================================================================
#
# The same statistics and the same dx formula as LayerNorm, over the other axis: BatchNorm
# normalizes each channel over the batch (and length), so γ and β scale whole rows here.


def batch_norm_fwd(x, weight, bias, eps):
    """BatchNorm forward with batch statistics: ``x`` ``(C, M)`` → ``(y, mean, rstd, var)``.

    ``weight``/``bias`` ``(C,)`` or None. ``y`` ``(C, M)`` in ``x``'s dtype; ``mean``, ``rstd`` and
    the biased batch variance ``var`` ``(C, 1)`` in :func:`stat_dtype` (``var`` feeds the running
    statistics, which take it unbiased: ``var · M / (M - 1)``).
    """
    sdt = stat_dtype(x.dtype)
    xc, mean, var, rstd = row_stats(x, eps, sdt)            # (C, M), (C, 1), (C, 1), (C, 1)
    xhat = xc
    xhat *= rstd                                             # (C, M)
    if weight is not None:
        xhat *= weight[:, None]                              # (C, M)  γ per channel
    if bias is not None:
        xhat += bias[:, None]                                # (C, M)  β per channel
    return xhat.astype(x.dtype, copy=False), mean, rstd, var.astype(sdt, copy=False)


def batch_norm_bwd(dy, x, weight, mean, rstd):
    """BatchNorm backward (batch statistics): ``(dx (C, M), dweight (C,), dbias (C,))``.

    ``dweight``/``dbias`` are ``None`` when ``weight`` is None; sums in the statistics dtype,
    returned in ``weight``'s dtype.
    """
    sdt = mean.dtype
    xhat = xhat_from_stats(x, mean, rstd)                   # (C, M)
    dy_s = dy.astype(sdt, copy=False)                        # (C, M)
    if weight is None:
        return dx_from_dxhat(dy_s, xhat, rstd).astype(x.dtype, copy=False), None, None
    dweight = (dy_s * xhat).sum(axis=1)                      # (C,)  Σ over the batch of dy · xhat
    dbias = dy_s.sum(axis=1)                                 # (C,)  Σ over the batch of dy
    dxhat = dy_s * weight[:, None]                           # (C, M)
    dx = dx_from_dxhat(dxhat, xhat, rstd).astype(x.dtype, copy=False)   # (C, M)
    return dx, dweight.astype(weight.dtype, copy=False), dbias.astype(weight.dtype, copy=False)


def _channel_rows(a):
    """``(N, C, L)`` → the C-contiguous channel rows ``(C, N·L)`` (a transposing copy)."""
    xp = get_array_module(a)
    N, C, L = a.shape
    return xp.ascontiguousarray(a.transpose(1, 0, 2)).reshape(C, N * L)


def _from_channel_rows(rows, shape):
    """The inverse of :func:`_channel_rows`: ``(C, N·L)`` → ``(N, C, L)`` (a transposed view)."""
    N, C, L = shape
    return rows.reshape(C, N, L).transpose(1, 0, 2)


def batch_norm_fwd_ncl(x, weight, bias, eps):
    """BatchNorm forward on ``x`` ``(N, C, L)`` (the input's own layout) → ``(y (N, C, L), mean, rstd, var)``.

    The channel rows ``(C, N·L)`` through :func:`batch_norm_fwd`, and back.
    """
    y, mean, rstd, var = batch_norm_fwd(_channel_rows(x), weight, bias, eps)
    return _from_channel_rows(y, x.shape), mean, rstd, var


def batch_norm_bwd_ncl(dy, x, weight, mean, rstd):
    """BatchNorm backward on ``(N, C, L)`` arrays → ``(dx (N, C, L), dweight (C,), dbias (C,))``."""
    dx, dweight, dbias = batch_norm_bwd(_channel_rows(dy), _channel_rows(x), weight, mean, rstd)
    return _from_channel_rows(dx, x.shape), dweight, dbias
