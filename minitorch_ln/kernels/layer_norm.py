"""LayerNorm forward and backward on raw arrays, written as the math: the oracle of every other kernel.

Read this file next to ``docs/layernorm_backward.md``, which derives every formula used here. A
kernel works on a 2-D, C-contiguous array of *rows to normalize*: LayerNorm's ``(B, L, D)`` input
arrives as ``(N, D)`` with ``N = B·L`` (the ops layer, ``ops/layer_norm.py``, does the reshaping).

Notation, per row of length ``D``::

    mean = Σ x / D                      (N, 1)
    var  = Σ (x - mean)² / D            (N, 1)   the biased variance
    rstd = 1 / sqrt(var + eps)          (N, 1)   eps inside the square root
    xhat = (x - mean) · rstd            (N, D)
    y    = xhat · weight + bias         (N, D)   weight (γ) and bias (β) of shape (D,)

    dxhat   = dy · weight                                                (N, D)
    dx      = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat))   (N, D)
    dweight = Σ_rows dy · xhat,   dbias = Σ_rows dy                      (D,)

Numerics, each explained where it is done:

- two-pass variance, never E[x²] - E[x]², and the rows are first shifted by their first element,
  so that a constant row has deviations of exactly zero and its output is exactly ``bias``; a row
  whose squares overflow (float32 values beyond about 1e19, float64 beyond 1e154) is summed again,
  scaled by its largest magnitude;
- float16 input is normalized in float32: statistics, ``xhat`` and the ``dweight``/``dbias`` sums
  are float32, the output and ``dx`` are cast back to float16;
- in backward ``xhat`` is re-centred, because the saved ``mean`` is rounded to the input's precision
  (for a float32 row ``1e4 + 1e-3·noise`` that rounding is half the spread of the row).

Which code runs where (decided in ``kernels/layer_norm_dispatch.py`` alone): on the CPU,
float32/float64 rows go to the compiled loops of ``kernels/cpu_layer_norm.py`` (the same formulas,
one pass per row; the default where Numba is installed) and float16 rows come here; with
``set_cpu_kernels("numpy")`` everything comes here. On
the GPU, ``kernels/cuda_layer_norm.py`` runs CUDA kernels and calls these functions (on CuPy arrays)
for rows too long for its registers. Written with ``xp = get_array_module(x)`` throughout, so the
same code runs on NumPy and CuPy. Whole-array operations, no blocking, no threads: this is the
form to read; the speed lives in the compiled kernels.
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module

__all__ = ["stat_dtype", "row_stats", "xhat_from_stats", "dx_from_dxhat", "layer_norm_fwd", "layer_norm_stats",
           "layer_norm_bwd"]


def stat_dtype(dtype) -> np.dtype:
    """The dtype of statistics and parameter-gradient sums: float32 for float16 input, else the input's."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


# ==================================================================================================
# The pieces every normalization shares: row statistics, xhat from them, and dx from dxhat
# ==================================================================================================


def row_stats(x, eps, sdt):
    """``(xc, mean, var, rstd)`` of each row of ``x`` ``(n, D)``: ``xc = x - mean`` ``(n, D)`` in ``sdt``.

    Two passes (the mean, then the squared deviations from it) after shifting every row by its
    first element. The shift changes nothing mathematically (variance is shift-invariant) but makes
    a constant row's deviations exactly zero, where a plain float32 mean of identical values can
    differ from them by one rounding; and it keeps ``x - shift`` exact for rows with a large mean
    and a small spread (Sterbenz: a difference of two floats within a factor 2 is exact).
    """
    xp = get_array_module(x)
    shift = x[:, :1].astype(sdt)                             # (n, 1)
    xc = xp.subtract(x, shift, dtype=sdt)                    # (n, D)  x - shift
    mean_shifted = xc.mean(axis=1, keepdims=True)            # (n, 1)  mean(x - shift)
    xc -= mean_shifted                                       # (n, D)  x - mean
    with np.errstate(over="ignore"):  # squares beyond the dtype: redone just below, scaled
        var = (xc * xc).mean(axis=1, keepdims=True)          # (n, 1)  biased: / D, not / (D - 1)
    rstd = 1.0 / xp.sqrt(var + eps)                          # (n, 1)  eps inside the sqrt
    redo_overflowed_rows(xc, var, rstd, eps)
    mean = shift + mean_shifted                              # (n, 1)
    return xc, mean.astype(sdt, copy=False), var, rstd.astype(sdt, copy=False)


def redo_overflowed_rows(a, ms, rstd, eps) -> None:
    """Where the mean square ``ms`` of a row of ``a`` overflowed (float32 values beyond about 1e19,
    float64 beyond about 1e154), compute it again scaled by the row's largest magnitude ``m`` and
    rewrite ``ms`` and ``rstd`` (in place): ``rstd = 1 / (m · sqrt(mean((a/m)²) + eps/m²))``.

    ``rstd = 1/sqrt(inf) = 0`` would otherwise turn the row's output into ``β`` without a word;
    the mean square may itself exceed the dtype (it stays inf), but ``rstd`` is representable.
    """
    xp = get_array_module(a)
    # only finite rows: one holding ±inf has a truly infinite mean square, so rstd = 1/sqrt(inf) = 0 and
    # y = x · 0 is NaN at the infinity and 0 elsewhere (RMSNorm of [inf, 1, 0] is [nan, 0, 0], as
    # PyTorch); scaling by m = inf would make the whole row NaN
    rows = xp.isposinf(ms[:, 0]) & xp.isfinite(a).all(axis=1)  # (n,)
    if not bool(rows.any()):
        return
    a64 = a[rows].astype(np.float64)                         # (k, D)
    m = xp.abs(a64).max(axis=1, keepdims=True)               # (k, 1), > 0: the mean square is inf
    q = xp.square(a64 / m).mean(axis=1, keepdims=True)       # (k, 1), in (0, 1]
    with np.errstate(over="ignore"):  # a mean square beyond the dtype's range stays inf, as it should
        ms[rows] = m * m * q
    rstd[rows] = 1.0 / (m * xp.sqrt(q + eps / m / m))       # eps / m² without forming m²


def xhat_from_stats(x, mean, rstd):
    """``xhat`` ``(n, D)`` recomputed from ``x`` and the saved statistics, re-centred.

    ``mean`` was rounded to the statistics dtype when saved. For a float32 row ``1e4 + 1e-3·noise``
    that rounding (up to 5e-4) is about half the row's spread, so ``x - mean`` would carry a
    constant offset and every term of ``dx`` that multiplies ``xhat`` would be wrong. Subtracting
    the row mean of ``x - mean`` once more removes the offset: ``Σ_D xhat = 0`` again, as the
    derivation assumes. On well-conditioned rows the correction is at the rounding level.
    """
    xp = get_array_module(x)
    xc = xp.subtract(x, mean, dtype=mean.dtype)              # (n, D)  x - mean (rounded mean)
    xc -= xc.mean(axis=1, keepdims=True)                     # (n, D)  re-centred
    return xc * rstd                                         # (n, D)  xhat


def dx_from_dxhat(dxhat, xhat, rstd):
    """``dx = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat))``, each row; ``(n, D)``.

    The compact form of the chain rule through ``xhat = (x - mean) · rstd`` (docs, section 3): the
    three terms are the three paths from ``x`` to the loss.
    """
    return rstd * (dxhat                                                 # term 1: directly through xhat
                   - dxhat.mean(axis=1, keepdims=True)                   # term 2: through the mean
                   - xhat * (dxhat * xhat).mean(axis=1, keepdims=True))  # term 3: through rstd (the variance)


# ==================================================================================================
# LayerNorm: rows of x (N, D); weight and bias (D,) along the row
# ==================================================================================================


def layer_norm_fwd(x, weight, bias, eps):
    """LayerNorm forward on the rows of ``x``.

    Args:
        x: ``(N, D)`` C-contiguous float16/32/64 array, one row per normalized group.
        weight, bias: ``(D,)`` arrays (γ and β) or ``None`` (float32 with float16 ``x`` is fine).
        eps: a float > 0, added to the variance inside the square root.
    Returns:
        ``(y, mean, rstd)``: ``y`` ``(N, D)`` in ``x``'s dtype; ``mean`` and ``rstd`` ``(N, 1)`` in
        :func:`stat_dtype` of ``x`` (float32 for float16).
    """
    sdt = stat_dtype(x.dtype)
    xc, mean, _, rstd = row_stats(x, eps, sdt)               # (N, D), (N, 1), _, (N, 1)
    y = xc * rstd                                            # (N, D)  xhat
    if weight is not None:
        y *= weight                                          # (N, D)  · γ
    if bias is not None:
        y += bias                                            # (N, D)  + β: exactly β where xhat = 0
    return y.astype(x.dtype, copy=False), mean, rstd


def layer_norm_stats(x, eps):
    """Only ``(mean, rstd)`` ``(N, 1)`` of the rows of ``x`` ``(N, D)`` (backward's recompute option)."""
    _, mean, _, rstd = row_stats(x, eps, stat_dtype(x.dtype))
    return mean, rstd


def layer_norm_bwd(dy, x, weight, mean, rstd):
    """LayerNorm backward, the compact hand-derived form (docs/layernorm_backward.md, section 3).

    Args:
        dy: ``(N, D)`` upstream gradient, ``x``'s dtype.
        x: ``(N, D)`` the forward's input.
        weight: ``(D,)`` or ``None``.
        mean, rstd: ``(N, 1)`` saved by :func:`layer_norm_fwd`.
    Returns:
        ``(dx, dweight, dbias)``: ``dx`` ``(N, D)`` in ``x``'s dtype; ``dweight`` and ``dbias``
        ``(D,)``, summed in the statistics dtype and returned in ``weight``'s dtype, or ``None``
        when ``weight`` is ``None``.
    """
    sdt = mean.dtype
    dy = dy.astype(sdt, copy=False)                          # (N, D)
    xhat = xhat_from_stats(x, mean, rstd)                    # (N, D)
    dxhat = dy * weight if weight is not None else dy        # (N, D)  dy · γ
    dx = dx_from_dxhat(dxhat, xhat, rstd).astype(x.dtype, copy=False)   # (N, D)
    if weight is None:
        return dx, None, None
    dweight = (dy * xhat).sum(axis=0)                        # (D,)  dγ = Σ_rows dy · xhat
    dbias = dy.sum(axis=0)                                   # (D,)  dβ = Σ_rows dy
    return dx, dweight.astype(weight.dtype, copy=False), dbias.astype(weight.dtype, copy=False)
