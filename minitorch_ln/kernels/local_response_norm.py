"""Local response normalization (Krizhevsky et al., 2012) forward and backward on raw arrays (NumPy and CuPy).

Read next to ``docs/local_response_norm.md``, which derives the backward. An input ``(N, C, *)``
arrives as ``(N, C, L)`` (``ops/local_response_norm.py`` does the reshaping); across the channels
of each ``(n, l)``, with ``n = size``::

    window(c) = [c - n//2, c + (n-1)//2] ∩ [0, C)          PyTorch's zero padding: n//2 before, (n-1)//2 after
    s_c  = k + (α/n) · Σ_{c' ∈ window(c)} a_{c'}²           the divisor is always n, as PyTorch's avg_pool
    y_c  = a_c / s_c^β

    dx_j = dy_j / s_j^β  -  (2αβ/n) · a_j · Σ_{c : j ∈ window(c)} dy_c · a_c / s_c^(β+1)

``j ∈ window(c)`` exactly when ``c ∈ [j - (n-1)//2, j + n//2]``: the backward sum is a window of the
same length, mirrored (``(n-1)//2`` before, ``n//2`` after); for odd ``n`` it is the same window.

Numerics: float16 is computed in float32; float32 and float64 in float64, so that squares of large
float32 values (beyond about 1e19, where PyTorch's float32 squares overflow to inf and its output
becomes 0) give the right result. The window sums are sums of at most ``n`` terms, never the
difference of two running totals (see :func:`window_sums`). The backward recomputes ``s`` from
``x`` (one more pass) instead of keeping an ``(N, C, L)`` array from the forward.
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module

__all__ = ["local_response_norm_bwd", "local_response_norm_fwd", "window_sums", "work_dtype"]


def work_dtype(dtype) -> np.dtype:
    """The dtype LRN computes in: float32 for float16 input, float64 for float32 and float64."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(np.float64)


def window_sums(a, size: int, before: int):
    """``out[:, c] = Σ a[:, c']`` over ``c' ∈ [c - before, c - before + size - 1]`` (zero outside ``[0, C)``).

    ``a`` ``(N, C, L)``; the windows run along axis 1. By cumulative sums *within blocks of*
    ``size`` channels (van Herk, 1992; Gil & Werman, 1993): the channel axis, zero-padded by
    ``before`` in front, is cut into blocks of ``size``, and every window of ``size`` consecutive
    channels is either one whole block or the end of one block plus the start of the next, i.e.
    ``suffix[start] + prefix[end]``. Each output is a sum of at most ``size`` terms, like PyTorch's
    avg_pool. The shorter route, one running total ``P`` over all channels and ``P[hi] - P[lo]``,
    subtracts two large numbers: after a channel of ``1e8`` the window sums of channels of ``1``
    come out as rounding noise of size ``1e16 · 1e-16``, not ``1``.
    """
    xp = get_array_module(a)
    N, C, L = a.shape
    blocks = -(-(C + size - 1) // size)                          # enough whole blocks for every window
    padded = xp.zeros((N, blocks * size, L), dtype=a.dtype)      # (N, B·size, L)  zeros around the channels
    padded[:, before:before + C] = a
    per_block = padded.reshape(N, blocks, size, L)               # (N, B, size, L)
    prefix = xp.cumsum(per_block, axis=2).reshape(N, -1, L)      # (N, B·size, L)  block start .. p
    suffix = xp.cumsum(per_block[:, :, ::-1], axis=2)[:, :, ::-1].reshape(N, -1, L)   # p .. block end
    start = xp.arange(C)                                         # (C,)  window c is padded[start : end + 1]
    end = start + (size - 1)
    whole_block = (start % size == 0)[None, :, None]             # (1, C, 1)  the window is one block
    return xp.where(whole_block, prefix[:, end], suffix[:, start] + prefix[:, end])   # (N, C, L)


def _denominator(a, size, alpha, k):
    """``s = k + (α/n) · Σ_{window} a²`` ``(N, C, L)`` in ``a``'s (working) dtype."""
    return k + (alpha / size) * window_sums(a * a, size, size // 2)


def local_response_norm_fwd(x, size: int, alpha: float, beta: float, k: float):
    """LRN forward on ``x`` ``(N, C, L)`` (float16/32/64) → ``y`` ``(N, C, L)`` in ``x``'s dtype.

    ``y = x / s^β`` with ``s = k + (α/size) · Σ_{window} x²`` (the module docstring). ``size`` ≥ 1.
    """
    a = x.astype(work_dtype(x.dtype), copy=False)               # (N, C, L)
    s = _denominator(a, size, alpha, k)                          # (N, C, L)
    return (a / s ** beta).astype(x.dtype, copy=False)


def local_response_norm_bwd(dy, x, size: int, alpha: float, beta: float, k: float):
    """LRN backward: ``dx`` ``(N, C, L)`` in ``x``'s dtype from ``dy``, ``x`` ``(N, C, L)``.

    ``dx_j = dy_j / s_j^β - (2αβ/n) · a_j · Σ_{c: j ∈ window(c)} dy_c · a_c / s_c^(β+1)``
    (docs/local_response_norm.md): the first term is ``y``'s direct dependence on ``a_j``, the
    second runs through every ``s_c`` whose window holds ``a_j``.
    """
    a = x.astype(work_dtype(x.dtype), copy=False)                # (N, C, L)
    g = dy.astype(a.dtype, copy=False)                           # (N, C, L)
    s = _denominator(a, size, alpha, k)                          # (N, C, L)
    s_beta = s ** beta                                           # (N, C, L)  s^β
    t = g * a / (s_beta * s)                                     # (N, C, L)  dy_c · a_c · s_c^(-β-1)
    through_s = window_sums(t, size, (size - 1) // 2)            # (N, C, L)  Σ over the c whose window holds j
    dx = g / s_beta - (2.0 * alpha * beta / size) * a * through_s   # term 1: direct; term 2: through s
    return dx.astype(x.dtype, copy=False)
