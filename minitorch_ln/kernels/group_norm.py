"""GroupNorm forward and backward on raw arrays (NumPy and CuPy): LayerNorm's rows, BatchNorm's parameters.

GroupNorm (Wu & He, 2018) splits the ``C`` channels of an ``(N, C, L)`` input into ``G`` groups of
``C/G`` channels and normalizes each sample's group, its ``C/G·L`` values, with their own mean and
biased variance. So every ``(n, g)`` group is one LayerNorm row: the C-contiguous input viewed as
``(N·G, C/G·L)`` (no copy) goes through the row statistics and the ``dx`` formula of
:mod:`minitorch_ln.kernels.layer_norm`. Only γ and β differ: one per *channel*, so they change every
``L`` values along a row, and their gradients sum over the batch and the length (as BatchNorm's).
InstanceNorm is the case ``G = C``; ``G = 1`` is LayerNorm over ``(C, L)`` with per-channel γ, β
(docs/layernorm_backward.md, section 12)::

    xhat    = (x - mean[n, g]) · rstd[n, g]                      (N, C, L)
    y       = xhat · γ[c] + β[c]                                 (N, C, L)
    dxhat   = dy · γ[c]                                          (N, C, L)
    dx      = rstd · (dxhat - mean_g(dxhat) - xhat · mean_g(dxhat · xhat))   means over each group
    dγ[c]   = Σ_{n, l} dy · xhat,    dβ[c] = Σ_{n, l} dy         (C,)

Kernel interface (every implementation: this file, ``cpu_group_norm.py``, ``cuda_group_norm.py``):

``group_norm_fwd(x, weight, bias, num_groups, eps) -> (y, mean, rstd)``
    ``x``: C-contiguous ``(N, C, L)`` (``L`` the product of the spatial dims, 1 for ``(N, C)``);
    ``weight``, ``bias``: ``(C,)`` or None (float32 with float16 ``x`` is fine). ``y`` ``(N, C, L)``
    in ``x``'s dtype; ``mean``, ``rstd`` ``(N, G)`` in :func:`stat_dtype` (float32 for float16).
``group_norm_bwd(dy, x, weight, mean, rstd, num_groups) -> (dx, dweight, dbias)``
    ``dx`` ``(N, C, L)`` in ``x``'s dtype; ``dweight``, ``dbias`` ``(C,)`` summed in the statistics
    dtype and returned in ``weight``'s dtype, or None when ``weight`` is None.
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module
from .layer_norm import dx_from_dxhat, row_stats, stat_dtype, xhat_from_stats

__all__ = ["group_norm_fwd", "group_norm_bwd"]


def _group_rows(a, num_groups):
    """``(N, C, L)`` C-contiguous → the group rows ``(N·G, C/G·L)``, a view."""
    N, C, L = a.shape
    return a.reshape(N * num_groups, (C // num_groups) * L)


def group_norm_fwd(x, weight, bias, num_groups, eps):
    """GroupNorm forward: ``x`` ``(N, C, L)`` → ``(y (N, C, L), mean (N, G), rstd (N, G))``.

    The row statistics of LayerNorm on the ``(N·G, C/G·L)`` group rows (two-pass, shifted by the
    first value, so a constant group gives exactly β), then γ and β per channel.
    """
    N, C, L = x.shape
    G = num_groups
    sdt = stat_dtype(x.dtype)
    if x.size == 0:  # no values: nothing to normalize (a group of none has var = 0, as LayerNorm's CUDA kernel)
        xp = get_array_module(x)
        with np.errstate(divide="ignore", invalid="ignore"):  # any eps: inf for 0, NaN below (a float, not complex)
            rstd = 1.0 / np.sqrt(np.float64(eps))
        return xp.empty_like(x), xp.zeros((N, G), sdt), xp.full((N, G), rstd, sdt)
    xc, mean, _, rstd = row_stats(_group_rows(x, G), eps, sdt)   # (N·G, C/G·L), (N·G, 1), _, (N·G, 1)
    xc *= rstd                                                   # (N·G, C/G·L)  xhat
    y = xc.reshape(N, C, L)                                      # (N, C, L)     xhat, per channel
    if weight is not None:
        y *= weight[:, None]                                     # (N, C, L)  · γ[c]
    if bias is not None:
        y += bias[:, None]                                       # (N, C, L)  + β[c]: exactly β where xhat = 0
    return y.astype(x.dtype, copy=False), mean.reshape(N, G), rstd.reshape(N, G)


def group_norm_bwd(dy, x, weight, mean, rstd, num_groups):
    """GroupNorm backward: ``(dx (N, C, L), dweight (C,), dbias (C,))`` (docs, section 12).

    ``dy``, ``x`` ``(N, C, L)``; ``weight`` ``(C,)`` or None; ``mean``, ``rstd`` ``(N, G)`` from
    :func:`group_norm_fwd`. ``dweight``/``dbias`` are None without a weight.
    """
    N, C, L = x.shape
    G = num_groups
    sdt = mean.dtype
    if x.size == 0:
        xp = get_array_module(x)
        zeros = None if weight is None else xp.zeros(C, weight.dtype)
        return xp.empty_like(x), zeros, None if weight is None else zeros.copy()
    mean2, rstd2 = mean.reshape(N * G, 1), rstd.reshape(N * G, 1)            # (N·G, 1) each
    xhat = xhat_from_stats(_group_rows(x, G), mean2, rstd2)                  # (N·G, C/G·L)  re-centred
    dy_s = dy.astype(sdt, copy=False)                                        # (N, C, L)
    dxhat = dy_s * weight[:, None] if weight is not None else dy_s           # (N, C, L)  dy · γ[c]
    dx = dx_from_dxhat(_group_rows(dxhat, G), xhat, rstd2)                   # (N·G, C/G·L)  the three terms
    dx = dx.reshape(N, C, L).astype(x.dtype, copy=False)                     # (N, C, L)
    if weight is None:
        return dx, None, None
    dweight = (dy_s * xhat.reshape(N, C, L)).sum(axis=(0, 2))                # (C,)  dγ = Σ_{n,l} dy · xhat
    dbias = dy_s.sum(axis=(0, 2))                                            # (C,)  dβ = Σ_{n,l} dy
    return dx, dweight.astype(weight.dtype, copy=False), dbias.astype(weight.dtype, copy=False)
