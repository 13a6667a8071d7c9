"""GELU forward and backward (exact and tanh) in float32 as compiled loops on the CPU: the formulas
of :mod:`minitorch_ln.kernels.activation` written once per value.

Read this file next to ``kernels/activation.py``, whose readable NumPy (``xp``) form computes the
same formulas with whole-array passes (about ten, each writing a temporary) and is the oracle the
tests hold this loop equal to. Per value ``x``, with ``z = x/√2`` (Abramowitz & Stegun 7.1.26)::

    e   = exp(-x²/2)                                   (= exp(-z²))
    t   = 1 / (1 + p |z|),   h = ½ t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) · e     (= ½ erfc(|z|))
    Φ   = h if x < 0 (sign bit set) else 1 - h
    y   = x Φ                                    forward
    dx  = dy (Φ + x e / √(2π))                   backward

Why a loop of our own ``exp``: Numba compiles ``math.exp`` to a call of the C library's scalar
``expf``, one value at a time (it vectorizes ``exp``/``erf`` only with Intel's SVML, which the
llvmlite wheels are not built for); such a loop measured 5.6 ms per million values, slower than
NumPy's ten passes. Written out as arithmetic (Cephes ``expf``: ``exp(v) = 2^k · exp(r)``,
``k = round(v / ln 2)``, ``r = v - k ln 2`` in two parts so that it stays exact, a degree-5
polynomial for ``exp(r) - 1 - r``, and ``2^k`` built from its exponent bits), every line is a
plain operation the compiler turns into 16-wide AVX-512 (or 8-wide AVX2) instructions: one pass
reads ``x`` (and ``dy``) and writes ``y`` (``dx``) once, about 0.4 ms per million values each way.

Numerics: the ``exp`` is within 1 ulp of the true value on ``[-87.3, 0]`` and flushes results
below float32's smallest normal number (``x²/2 > 87.3``) to 0; NumPy's ``exp`` is within 1 ulp
too, so this loop and the NumPy form agree to a few ulp (the tests check). The compile options
are Numba's strict ones (no ``fastmath`` at all: there are no sums to reorder here, and
reassociation could undo the two-part ``r``). NaN propagates; ``±inf`` give the limits
(``y(-inf) = -0``, ``y(inf) = inf``, ``dx(±inf) = dy·{0, 1}``): ``x`` is clamped to ``±1e4``
where it multiplies a density or a tail that is already exactly 0 there.

The tanh approximation is here too, ``y = x s``, ``GELU' = s + 2 x s (1 - s) du/dx`` with
``s = ½ (1 + tanh u)`` and ``1 - s`` the sigmoids of ``±2u`` from one ``exp(-2|u|)`` (the NumPy
form's formulas). Only float32 is compiled (float16 is computed in float32, as in the NumPy
form); float64 (with SciPy's exact ``ndtr``) goes to the NumPy form.

The values are shared out over the kernel threads in runs of whole blocks (``kernels/_threads.py``).
Each loop slices its run and counts from 0: over ``range(start, stop)`` Numba cannot prove the
index non-negative, wraps it as a negative index would be, and the loads became gathers (the
loop ran five times slower).
"""

from __future__ import annotations

import math

import numpy as np

from . import _threads
from . import activation as _xp
from ._numba import AVAILABLE, numba

__all__ = ["AVAILABLE", "gelu_fwd", "gelu_bwd"]

_f = np.float32
# Abramowitz & Stegun (1964), formula 7.1.26, as in activation.py: p·(1/√2) and the halved a1..a5
_P = _f(0.3275911 * (1.0 / math.sqrt(2.0)))
_H1, _H2, _H3, _H4, _H5 = (_f(0.5 * a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_INV_SQRT_2PI = _f(1.0 / math.sqrt(2.0 * math.pi))
_BIG = _f(1e4)  # beyond it Φ is exactly 0 or 1 and φ exactly 0 in float32
# Cephes expf (S. L. Moshier): ln 2 = C1 + C2 with C1 exact in 9 bits, so k·C1 is exact for |k| < 2^15
_LOG2E, _C1, _C2 = _f(1.4426950408889634), _f(0.693359375), _f(-2.12194440e-4)
_E0, _E1, _E2, _E3, _E4, _E5 = (_f(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                                                 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1))
_EXP_MIN = _f(-87.33654)  # exp of anything smaller is below float32's smallest normal: 0 here


def _jit(fn):
    """``numba.njit`` without the GIL, cached on disk where it can be, strict IEEE arithmetic."""
    if numba is None:  # pragma: no cover
        return None
    try:
        return numba.njit(cache=True, nogil=True, error_model="numpy")(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(cache=False, nogil=True, error_model="numpy")(fn)


@_jit
def _exp_neg(v):
    """``exp(v)`` for float32 ``v <= 0`` (0 below ``_EXP_MIN``; NaN stays NaN)."""
    k = np.floor(v * _LOG2E + _f(0.5))              # v = k ln 2 + r, |r| <= ln 2 / 2
    r = (v - k * _C1) - k * _C2
    p = _E0
    p = p * r + _E1
    p = p * r + _E2
    p = p * r + _E3
    p = p * r + _E4
    p = p * r + _E5
    e_r = p * (r * r) + r + _f(1.0)                # exp(r)
    k = max(k, _f(-126.0))                         # 2^k from its exponent bits (k >= -126: a normal number)
    two_k = np.int32((np.int32(k) + 127) << 23).view(np.float32)
    return _f(0.0) if v < _EXP_MIN else e_r * two_k


@_jit
def _cdf(x, e):
    """``Φ(x)`` given ``e = exp(-x²/2)``: A&S 7.1.26 for ``½ erfc(|z|)``, no cancellation for ``x < 0``."""
    t = _f(1.0) / (abs(x) * _P + _f(1.0))
    h = t * _H5
    h = (h + _H4) * t
    h = (h + _H3) * t
    h = (h + _H2) * t
    h = (h + _H1) * t
    h = h * e                                      # ½ erfc(|z|)
    return h if np.signbit(x) else _f(1.0) - h   # x < 0 (and -0: the NumPy form's choice too)


@_jit
def _clamp(x):
    """``x`` limited to ``[-_BIG, _BIG]`` (NaN stays NaN)."""
    if x < -_BIG:
        return -_BIG
    return _BIG if x > _BIG else x


@_jit
def _gelu_fwd_loop(x, y, start, stop):
    x, y = x[start:stop], y[start:stop]            # a loop from 0: plain loads that vectorize
    for i in range(x.size):
        xi = x[i]
        e = _exp_neg((xi * xi) * _f(-0.5))        # exp(-x²/2); x² = inf gives 0
        xn = -_BIG if xi < -_BIG else xi           # -inf · Φ(-inf) = -inf · 0: the limit is -0
        y[i] = xn * _cdf(xi, e)                    # y = x Φ(x)


@_jit
def _gelu_bwd_loop(x, dy, dx, start, stop):
    x, dy, dx = x[start:stop], dy[start:stop], dx[start:stop]
    for i in range(x.size):
        xi = x[i]
        e = _exp_neg((xi * xi) * _f(-0.5))
        pdf = e * _INV_SQRT_2PI                    # φ(x)
        dx[i] = dy[i] * (_cdf(xi, e) + _clamp(xi) * pdf)   # GELU'(x) = Φ(x) + x φ(x)


_K = _f(math.sqrt(2.0 / math.pi))
_C, _C3 = _f(0.044715), _f(3 * 0.044715)


@_jit
def _tanh_halves(x):
    """``(½ (1 + tanh u), ½ (1 - tanh u))`` for ``u = √(2/π) (x + 0.044715 x³)``: the sigmoids of
    ``±2u`` from ``e = exp(-2|u|)``, as in the NumPy form (no cancellation in the left tail)."""
    u = ((x * x) * _C + _f(1.0)) * x * _K
    e = _exp_neg(abs(u) * _f(-2.0))
    r = _f(1.0) / (e + _f(1.0))
    er = e * r
    if np.signbit(u):
        return er, r
    return r, er


@_jit
def _gelu_tanh_fwd_loop(x, y, start, stop):
    x, y = x[start:stop], y[start:stop]
    for i in range(x.size):
        xi = x[i]
        s, _ = _tanh_halves(xi)
        xn = -_BIG if xi < -_BIG else xi
        y[i] = xn * s                                  # y = ½ x (1 + tanh(u))


@_jit
def _gelu_tanh_bwd_loop(x, dy, dx, start, stop):
    x, dy, dx = x[start:stop], dy[start:stop], dx[start:stop]
    for i in range(x.size):
        xi = x[i]
        s, c = _tanh_halves(xi)
        xc = _clamp(xi)
        du = ((xc * xc) * _C3 + _f(1.0)) * _K * xc     # x du/dx
        dx[i] = dy[i] * ((s * c) * _f(2.0) * du + s)   # ½ (1 + t) + ½ x (1 - t²) du/dx


def _flat32(a):
    return np.ascontiguousarray(a, dtype=np.float32).reshape(-1)


def _run(loop, arrays, dtype, shape):
    out = np.empty(arrays[0].size, np.float32)
    n = out.size
    others, (lo, hi) = _threads.start(loop, (*arrays, out), n, 1)   # the other threads' runs
    loop(*arrays, out, lo, hi)                                      # this thread's run
    _threads.join(others)
    return out.reshape(shape) if dtype == np.float32 else out.astype(dtype).reshape(shape)


def _applies(x, approximate) -> bool:
    return approximate in ("none", "tanh") and x.dtype in (np.float32, np.float16)


def gelu_fwd(x, approximate: str = "none"):
    """GELU of ``x`` (any shape) → ``y``, same shape and dtype; the interface of
    :func:`minitorch_ln.kernels.activation.gelu_fwd`, compiled for float32/float16."""
    if not _applies(x, approximate):
        return _xp.gelu_fwd(x, approximate)
    loop = _gelu_fwd_loop if approximate == "none" else _gelu_tanh_fwd_loop
    return _run(loop, (_flat32(x),), x.dtype, x.shape)


def gelu_bwd(dy, x, approximate: str = "none"):
    """``dx = dy · GELU'(x)`` for ``dy`` and ``x`` of one shape → ``dx``, same shape and ``x``'s dtype;
    the interface of :func:`minitorch_ln.kernels.activation.gelu_bwd`, compiled as :func:`gelu_fwd`."""
    if not _applies(x, approximate):
        return _xp.gelu_bwd(dy, x, approximate)
    loop = _gelu_bwd_loop if approximate == "none" else _gelu_tanh_bwd_loop
    return _run(loop, (_flat32(x), _flat32(dy)), x.dtype, x.shape)
