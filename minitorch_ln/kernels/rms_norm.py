"""RMSNorm forward and backward on raw arrays (NumPy and CuPy): LayerNorm without the centring.

Rows ``(N, D)`` as in :mod:`minitorch_ln.kernels.layer_norm`, whose notation and numerics this follows;
derivation in ``docs/layernorm_backward.md``, section 7.
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module
from .layer_norm import redo_overflowed_rows, stat_dtype

# ==================================================================================================
# RMSNorm: rows of x (N, D), no centring; weight (D,)
# ==================================================================================================
#
#   rstd = 1 / sqrt(mean(x²) + eps),  xhat = x · rstd,  y = xhat · γ
#   dx = rstd · (dxhat - xhat · mean(dxhat · xhat)),  dγ = Σ_rows dy · xhat
# (LayerNorm's formula without the mean term: there is no mean to differentiate through.)


def rms_norm_fwd(x, weight, eps):
    """RMSNorm forward: ``x`` ``(N, D)``, ``weight`` ``(D,)`` or None → ``(y (N, D), rstd (N, 1))``."""
    xp = get_array_module(x)
    sdt = stat_dtype(x.dtype)
    xs = x.astype(sdt, copy=False)                           # (N, D)
    with np.errstate(over="ignore"):  # squares beyond the dtype: redone below, scaled
        ms = (xs * xs).mean(axis=1, keepdims=True)           # (N, 1)  mean(x²)
    rstd = 1.0 / xp.sqrt(ms + eps)                           # (N, 1)
    redo_overflowed_rows(xs, ms, rstd, eps)
    rstd = rstd.astype(sdt, copy=False)
    with np.errstate(invalid="ignore"):  # a row holding inf: rstd 0, inf · 0 is NaN there (as PyTorch)
        y = xs * rstd                                        # (N, D)  xhat
        if weight is not None:
            y *= weight                                      # (N, D)  · γ
    return y.astype(x.dtype, copy=False), rstd


def rms_norm_bwd(dy, x, weight, rstd):
    """RMSNorm backward → ``(dx (N, D), dweight (D,) or None)``, sums in the statistics dtype."""
    sdt = rstd.dtype
    dy = dy.astype(sdt, copy=False)                          # (N, D)
    with np.errstate(invalid="ignore"):  # a row holding inf (rstd 0): NaN gradients there, as PyTorch's
        xhat = x.astype(sdt, copy=False) * rstd              # (N, D)
        dxhat = dy * weight if weight is not None else dy    # (N, D)
        dx = rstd * (dxhat                                                # term 1: directly through xhat
                     - xhat * (dxhat * xhat).mean(axis=1, keepdims=True))  # term 2: through rstd
        dweight = None if weight is None else (dy * xhat).sum(axis=0).astype(weight.dtype, copy=False)  # (D,)
    return dx.astype(x.dtype, copy=False), dweight
