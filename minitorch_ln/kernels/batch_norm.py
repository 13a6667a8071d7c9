"""BatchNorm forward and backward (batch statistics) on raw arrays (NumPy and CuPy).

The statistics and the ``dx`` formula of :mod:`minitorch_ln.kernels.layer_norm`, over the other axis:
each channel is a row ``(C, M)`` with ``M = N·L`` (docs, section 8); the ``_ncl`` forms take the
input's own layout ``(N, C, L)`` and reduce over its axes ``(0, 2)`` in place.
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module
from .layer_norm import dx_from_dxhat, row_stats, stat_dtype, xhat_from_stats


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


# --------------------------------------------------------------------------------------------------
# The same on the input's own layout (N, C, L): the channel's values are x[:, c, :], reduced over the
# axes (0, 2) in place, with no transposing copy into channel rows. What the BatchNorm op calls.
# --------------------------------------------------------------------------------------------------

_BATCH = (0, 2)  # the axes of (N, C, L) one channel's statistics run over


def _per_channel(a):
    """A ``(C,)`` or ``(C, 1)`` array as ``(1, C, 1)``, to broadcast along axis 1 of ``(N, C, L)``."""
    return a.reshape(1, -1, 1)


def batch_norm_fwd_ncl(x, weight, bias, eps):
    """BatchNorm forward on ``x`` ``(N, C, L)`` (the input's own layout) → ``(y (N, C, L), mean, rstd, var)``.

    :func:`batch_norm_fwd`'s statistics, reduced over the axes ``(0, 2)`` of each channel: shifted
    by the channel's first value, then two passes (as ``layer_norm.row_stats``), so a constant
    channel gives exactly ``bias``. ``mean``, ``rstd`` and the biased ``var`` ``(C, 1)`` in
    :func:`stat_dtype`; ``y`` in ``x``'s dtype.
    """
    xp = get_array_module(x)
    N, C, L = x.shape
    sdt = stat_dtype(x.dtype)
    shift = x[:1, :, :1].astype(sdt)                             # (1, C, 1)  each channel's first value
    xc = xp.subtract(x, shift, dtype=sdt)                        # (N, C, L)  x - shift
    mean_shifted = xc.mean(axis=_BATCH, keepdims=True)           # (1, C, 1)  mean(x - shift)
    xc -= mean_shifted                                           # (N, C, L)  x - mean
    with np.errstate(over="ignore"):  # a float32 square beyond 3e38: that channel is redone below
        var = (xc * xc).mean(axis=_BATCH, keepdims=True)         # (1, C, 1)  biased: / (N·L)
    rstd = 1.0 / xp.sqrt(var + eps)                              # (1, C, 1)  eps inside the sqrt
    _redo_overflowed_channels(xc, var, rstd, eps)
    y = xc
    y *= rstd                                                    # (N, C, L)  xhat
    if weight is not None:
        y *= _per_channel(weight)                                # (N, C, L)  γ per channel
    if bias is not None:
        y += _per_channel(bias)                                  # (N, C, L)  β: exactly β where xhat = 0
    mean = (shift + mean_shifted).reshape(C, 1)                  # (C, 1)
    return (y.astype(x.dtype, copy=False), mean.astype(sdt, copy=False), rstd.reshape(C, 1).astype(sdt, copy=False),
            var.reshape(C, 1).astype(sdt, copy=False))


def _redo_overflowed_channels(xc, var, rstd, eps) -> None:
    """``layer_norm.redo_overflowed_rows`` for channels: where a float32 variance overflowed (values
    beyond about 1e19), sum that channel's squares again in float64 and rewrite ``var``/``rstd``."""
    if xc.dtype == np.float64:
        return
    xp = get_array_module(xc)
    over = xp.isposinf(var[0, :, 0])                             # (C,)
    if not bool(over.any()):
        return
    xc64 = xc[:, over].astype(np.float64)                        # (N, k, L)
    var64 = (xc64 * xc64).mean(axis=_BATCH, keepdims=True)       # (1, k, 1)
    with np.errstate(over="ignore"):  # a variance beyond float32's range stays inf, as it should
        var[:, over] = var64
    rstd[:, over] = 1.0 / xp.sqrt(var64 + eps)


def batch_norm_bwd_ncl(dy, x, weight, mean, rstd):
    """BatchNorm backward on ``(N, C, L)`` arrays → ``(dx (N, C, L), dweight (C,), dbias (C,))``.

    LayerNorm's three-term ``dx`` along each channel, the means over the axes ``(0, 2)``;
    ``x - mean`` re-centred as ``layer_norm.xhat_from_stats`` does. ``dweight``/``dbias`` are
    ``None`` when ``weight`` is None; sums in the statistics dtype, returned in ``weight``'s dtype.
    """
    sdt = mean.dtype
    xp = get_array_module(x)
    rstd = _per_channel(rstd)                                    # (1, C, 1)
    xc = xp.subtract(x, _per_channel(mean), dtype=sdt)           # (N, C, L)  x - mean (rounded mean)
    xc -= xc.mean(axis=_BATCH, keepdims=True)                    # (N, C, L)  re-centred
    xhat = xc * rstd                                             # (N, C, L)
    dy_s = dy.astype(sdt, copy=False)                            # (N, C, L)
    dxhat = dy_s * _per_channel(weight) if weight is not None else dy_s   # (N, C, L)  dy · γ
    dx = rstd * (dxhat                                                     # term 1: directly through xhat
                 - dxhat.mean(axis=_BATCH, keepdims=True)                  # term 2: through the mean
                 - xhat * (dxhat * xhat).mean(axis=_BATCH, keepdims=True))  # term 3: through rstd
    dx = dx.astype(x.dtype, copy=False)                          # (N, C, L)
    if weight is None:
        return dx, None, None
    dweight = (dy_s * xhat).sum(axis=_BATCH)                     # (C,)  Σ over the batch of dy · xhat
    dbias = dy_s.sum(axis=_BATCH)                                # (C,)  Σ over the batch of dy
    return dx, dweight.astype(weight.dtype, copy=False), dbias.astype(weight.dtype, copy=False)
