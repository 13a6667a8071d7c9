"""GroupNorm forward and backward as compiled loops on the CPU, on the input's own layout ``(N, C, L)``.

The formulas of ``kernels/group_norm.py`` (each ``(n, g)`` group of ``C/G`` channels × ``L`` values is
one LayerNorm row; γ, β per channel: docs, section 12), written as loops that Numba compiles, as
``cpu_batch_norm.py`` does for BatchNorm. A group's values are ``x[n, g·C/G : (g+1)·C/G, :]``,
contiguous in memory, so each loop reads along memory. A group often holds many values (``C/G ·
H·W``: 131,072 for 32 channels of 64×64), so its sums are accumulated in float64, as BatchNorm's
per-channel sums are; that also keeps float32 squares from overflowing. Single-threaded.

float16, empty input and a missing Numba go to the NumPy kernels.
"""

from __future__ import annotations

import numpy as np

from . import group_norm as _xp
from ._numba import AVAILABLE, as_contiguous, jit
from .choice import COMPILED_DTYPES

__all__ = ["group_norm_fwd", "group_norm_bwd"]


@jit
def _group_norm_fwd(x, weight, bias, G, eps, y, mean, rstd):
    N, C, L = x.shape
    cpg = C // G                        # channels per group
    d = np.float64(cpg * L)             # values per group
    for n in range(N):
        for g in range(G):
            c0, c1 = g * cpg, (g + 1) * cpg
            shift = np.float64(x[n, c0, 0])      # shifted by its first value: a constant group has xc = 0
            s = 0.0
            for c in range(c0, c1):
                for j in range(L):
                    s += x[n, c, j] - shift
            mean_shifted = s / d
            v = 0.0
            for c in range(c0, c1):              # second pass: squared deviations from the mean
                for j in range(L):
                    xc = (x[n, c, j] - shift) - mean_shifted
                    v += xc * xc
            r = 1.0 / np.sqrt(v / d + eps)       # biased variance, eps inside the sqrt
            mean[n, g], rstd[n, g] = shift + mean_shifted, r
            for c in range(c0, c1):              # y = xhat · γ[c] + β[c], exactly β where xhat = 0
                scale, b = r * weight[c], bias[c]
                for j in range(L):
                    y[n, c, j] = ((x[n, c, j] - shift) - mean_shifted) * scale + b


@jit
def _group_norm_bwd(dy, x, weight, mean, rstd, G, dx, dweight, dbias):
    N, C, L = x.shape
    cpg = C // G
    d = np.float64(cpg * L)
    sum_dy_xc = np.empty(cpg)           # per channel of the group: Σ_l dy · (x - mu)
    sum_dy = np.empty(cpg)              # per channel of the group: Σ_l dy
    for n in range(N):
        for g in range(G):
            c0 = g * cpg
            mu, r = np.float64(mean[n, g]), np.float64(rstd[n, g])
            sum_xc = 0.0
            for k in range(cpg):                 # one pass: every sum the formulas need
                a, b = 0.0, 0.0
                for j in range(L):
                    xc = x[n, c0 + k, j] - mu
                    sum_xc += xc
                    a += dy[n, c0 + k, j] * xc
                    b += dy[n, c0 + k, j]
                sum_dy_xc[k], sum_dy[k] = a, b
            cen = sum_xc / d                     # re-centring: xhat = (x - mu - cen) · rstd
            sum_dxhat, sum_dxhat_xhat = 0.0, 0.0
            for k in range(cpg):
                sum_dy_xhat = r * (sum_dy_xc[k] - cen * sum_dy[k])   # Σ_l dy · xhat of channel c0 + k
                dweight[c0 + k] += sum_dy_xhat                       # dγ[c] = Σ_{n,l} dy · xhat
                dbias[c0 + k] += sum_dy[k]                           # dβ[c] = Σ_{n,l} dy
                sum_dxhat += weight[c0 + k] * sum_dy[k]              # dxhat = dy · γ[c]
                sum_dxhat_xhat += weight[c0 + k] * sum_dy_xhat
            mean_dxhat, mean_dxhat_xhat = sum_dxhat / d, sum_dxhat_xhat / d
            for k in range(cpg):
                w = weight[c0 + k]
                for j in range(L):
                    xhat = ((x[n, c0 + k, j] - mu) - cen) * r
                    #                  term 1 (direct)           term 2 (via mean)  term 3 (via rstd)
                    dx[n, c0 + k, j] = r * (dy[n, c0 + k, j] * w - mean_dxhat - xhat * mean_dxhat_xhat)


def _compiled(x) -> bool:
    """Whether ``x`` ``(N, C, L)`` goes through the compiled loops (float32/64, not empty)."""
    return AVAILABLE and x.dtype in COMPILED_DTYPES and x.ndim == 3 and x.size > 0


def _check(op, x, num_groups, **arrays):
    """Raise ValueError unless the arrays fit ``x`` ``(N, C, L)``: compiled loops do not check indices."""
    N, C, _ = x.shape
    if num_groups < 1 or C % num_groups:
        raise ValueError(f"{op}: expected num_groups dividing the {C} channels of x {tuple(x.shape)}, got {num_groups}")
    shapes = {"dy": x.shape, "weight": (C,), "bias": (C,), "mean": (N, num_groups), "rstd": (N, num_groups)}
    for name, a in arrays.items():
        if a is not None and tuple(a.shape) != shapes[name]:
            raise ValueError(f"{op}: expected {name} of shape {shapes[name]} for x of shape {tuple(x.shape)}, "
                             f"got {tuple(a.shape)}")


def group_norm_fwd(x, weight, bias, num_groups, eps):
    """GroupNorm forward, compiled; the interface of :func:`minitorch_ln.kernels.group_norm.group_norm_fwd`.

    ``x`` ``(N, C, L)`` float32/64 (float16 and empty input go to the NumPy kernel); ``weight``,
    ``bias`` ``(C,)`` or None. Returns ``(y (N, C, L), mean (N, G), rstd (N, G))`` in ``x``'s dtype.
    """
    if not _compiled(x):
        return _xp.group_norm_fwd(x, weight, bias, num_groups, eps)
    _check("group_norm_fwd", x, num_groups, weight=weight, bias=bias)
    N, C, L = x.shape
    dt = x.dtype
    w = np.ones(C, dt) if weight is None else as_contiguous(weight, dt)          # (C,)  γ (1 without)
    b = np.zeros(C, dt) if bias is None else as_contiguous(bias, dt)             # (C,)  β (0 without)
    y = np.empty((N, C, L), dt)                                                  # (N, C, L)
    mean, rstd = np.empty((N, num_groups), dt), np.empty((N, num_groups), dt)    # (N, G) each
    _group_norm_fwd(as_contiguous(x, dt), w, b, int(num_groups), float(eps), y, mean, rstd)
    return y, mean, rstd


def group_norm_bwd(dy, x, weight, mean, rstd, num_groups):
    """GroupNorm backward, compiled → ``(dx (N, C, L), dweight (C,), dbias (C,))``.

    ``dweight``/``dbias`` are summed in float64 and returned in the weight's dtype; None without a weight.
    """
    if not _compiled(x):
        return _xp.group_norm_bwd(dy, x, weight, mean, rstd, num_groups)
    _check("group_norm_bwd", x, num_groups, dy=dy, weight=weight, mean=mean, rstd=rstd)
    N, C, L = x.shape
    dt = x.dtype
    w = np.ones(C, dt) if weight is None else as_contiguous(weight, dt)          # (C,)
    dx = np.empty((N, C, L), dt)                                                 # (N, C, L)
    dweight, dbias = np.zeros(C), np.zeros(C)                                    # (C,) float64 sums
    _group_norm_bwd(as_contiguous(dy, dt), as_contiguous(x, dt), w, as_contiguous(mean, dt),
                    as_contiguous(rstd, dt), int(num_groups), dx, dweight, dbias)
    if weight is None:
        return dx, None, None
    return dx, dweight.astype(weight.dtype), dbias.astype(weight.dtype)
