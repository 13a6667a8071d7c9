"""GELU kernels on raw arrays: the forward ``y`` and the backward ``dx``, each one fused pass per block.

Exact GELU (Hendrycks & Gimpel, 2016) and its derivative::

    y  = x · Φ(x),            Φ(x) = ½ (1 + erf(x / √2))        the standard normal CDF
    dx = dy · (Φ(x) + x φ(x)),  φ(x) = exp(-x²/2) / √(2π)        the standard normal density

Both need ``Φ`` and the backward also ``φ``. In float64, ``Φ`` is SciPy's ``ndtr`` (exact to
the last bit, so finite-difference checks stay tight, and accurate in the far tails where
``½ (1 + erf)`` would cancel). In float32 and float16, ``scipy.special.erf`` costs about 12 ns a
value, twenty-five times an ``exp``; instead ``½ erfc(|z|)`` comes from Abramowitz & Stegun
7.1.26 (absolute error below 1.5e-7, float32's resolution near 1; the formula PyTorch's
vectorized CPU ``erf`` uses)::

    ½ erfc(|z|) = h = ½ r(t) · exp(-z²),   t = 1 / (1 + p|z|),
    r(t) = t (a1 + t (a2 + t (a3 + t (a4 + t a5)))),        Φ(x) = h if x < 0 else 1 - h

(taking ``h`` itself for ``x < 0``, i.e. where the sign bit is set, keeps the left tail free of
cancellation), and with
``z = x/√2`` the ``exp(-z²)`` it needs *is* ``exp(-x²/2)``: the backward gets ``φ`` for one
multiplication. Nothing is saved between forward and backward but ``x`` (as PyTorch does): the
backward recomputes ``Φ`` and ``φ``. At ``x = ±inf`` the limits hold (``y(-inf) = -0``,
``GELU'(±inf) = 0, 1``): ``x`` is clamped to ``±1e4`` where it multiplies a ``Φ`` or a ``φ``
that is exactly 0 there (``inf · 0`` would be NaN). NaN propagates.

The tanh approximation, ``y = ½ x (1 + tanh(u))``, ``u = √(2/π) (x + 0.044715 x³)``, has
``dy/dx = ½ (1 + t) + ½ x (1 - t²) √(2/π) (1 + 3·0.044715 x²)`` with ``t = tanh(u)``. Both halves
``s = ½ (1 + t)`` and ``½ (1 - t) = 1 - s`` are the sigmoids of ``±2u``, taken from
``e = exp(-2|u|)`` so that neither cancels (``1 - t² = 4 s (1 - s)``); the same clamping of ``x``
gives the limits at ``±inf``.

Two implementations, held equal by ``tests/test_kernels_activation_compiled.py``:

- :func:`gelu_fwd` / :func:`gelu_bwd`, below, the readable one: every line is one NumPy pass
  writing into a preallocated block (``out=``); the array is cut into blocks of
  ``BLOCK_ELEMENTS`` values so that all the passes over one block run in the L2 cache, and the
  blocks are spread over the kernel threads (the same machinery as the LayerNorm kernels).
  Written with ``xp``, so the same code runs on CuPy (as one block).
- ``kernels/cpu_activation.py``: the same formulas (exact and tanh) as one compiled loop (Numba)
  for float32 and float16 NumPy arrays, about seven times faster (one pass instead of ten);
  ``kernels.gelu_fwd`` / ``kernels.gelu_bwd`` take it while
  :func:`minitorch_ln.kernels.get_cpu_kernels` is ``"numba"``. It hands float64 back to the
  functions here.
"""

from __future__ import annotations

import math

import numpy as np

from ..backend import get_array_module
from . import _threads

__all__ = ["gelu_fwd", "gelu_bwd"]

_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
# Abramowitz & Stegun (1964), formula 7.1.26
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_BIG = 1e4  # beyond it Φ is exactly 0 or 1 and φ exactly 0 (in float32 and in float64)


def _ndtr_exact(x):
    xp = get_array_module(x)
    if xp is np:
        from scipy.special import ndtr  # noqa: PLC0415
    else:  # pragma: no cover - needs a GPU
        from cupyx.scipy.special import ndtr  # noqa: PLC0415
    return ndtr(x)


def _cdf_pdf(x, cdf, pdf):
    """Write ``Φ(x)`` into ``cdf`` and ``exp(-x²/2)`` (``φ(x)·√(2π)``) into ``pdf``; all the same shape."""
    xp = get_array_module(x)
    f = x.dtype.type
    xp.square(x, out=pdf)
    pdf *= f(-0.5)
    xp.exp(pdf, out=pdf)                                    # exp(-x²/2) = exp(-z²), z = x/√2
    if x.dtype == np.float64:
        cdf[...] = _ndtr_exact(x)                            # Φ(x)
        return
    t = cdf                                                  # t = 1 / (1 + p|z|)
    xp.absolute(x, out=t)
    t *= f(_AS_P * _SQRT_HALF)
    t += f(1.0)
    xp.reciprocal(t, out=t)
    h = xp.multiply(t, f(0.5 * _AS_A[4]))                    # Horner, halved: ½ t (a1 + t (... + t a5))
    for a in _AS_A[3::-1]:
        h += f(0.5 * a)
        h *= t
    h *= pdf                                                 # h = ½ erfc(|z|) = ½ r(t) · exp(-z²)
    # Φ(x) = h for x < 0 (sign bit set), 1 - h otherwise, without a branch (a masked copy costs
    # 5 ns a value): with s = ±1 the sign of x, Φ = ½ (1 + s) - s h, whose products are exact.
    s = xp.copysign(f(1.0), x)
    xp.multiply(s, h, out=cdf)                               # s h
    s += f(1.0)
    s *= f(0.5)                                              # ½ (1 + s): 0 or 1
    xp.subtract(s, cdf, out=cdf)                             # Φ(x)


def _clamped(x, high=True):
    """``x`` limited to ``[-_BIG, _BIG]`` (or only from below), where it multiplies an exact 0 at ±inf."""
    xp = get_array_module(x)
    f = x.dtype.type
    return xp.clip(x, f(-_BIG), f(_BIG)) if high else xp.maximum(x, f(-_BIG))


def _tanh_arg(x):
    """``u = √(2/π) (x + 0.044715 x³)``, computed as ``√(2/π) · x · (1 + 0.044715 x²)``."""
    xp = get_array_module(x)
    f = x.dtype.type
    u = xp.square(x)
    u *= f(0.044715)
    u += f(1.0)
    u *= x
    u *= f(_SQRT_2_OVER_PI)
    return u


def _tanh_halves(u):
    """``(½ (1 + tanh u), ½ (1 - tanh u))`` without cancellation (the sigmoids of ``±2u``).

    With ``e = exp(-2|u|)`` and ``r = 1 / (1 + e)``: ``(r, e r)`` where the sign bit of ``u`` is
    clear, ``(e r, r)`` where it is set. ``1 + tanh(u)`` itself would cancel for ``u < 0`` (the
    left tail of GELU, ``x < -3``); ``e r`` keeps its relative precision. The two cases are
    picked without a branch (``m`` 1 or 0; products by 0 and 1 are exact).
    """
    xp = get_array_module(u)
    f = u.dtype.type
    e = xp.absolute(u)
    e *= f(-2.0)
    xp.exp(e, out=e)                                         # e = exp(-2|u|), in (0, 1]
    r = e + f(1.0)
    xp.reciprocal(r, out=r)                                  # r = 1 / (1 + e)
    e *= r                                                   # e r
    m = xp.signbit(u).astype(u.dtype)                        # 1 where u < 0
    keep = f(1.0) - m
    big = r * keep + e * m                                   # ½ (1 + tanh u)
    r *= m
    e *= keep
    e += r                                                   # ½ (1 - tanh u)
    return big, e


def _blocks(x, fn, *others):
    """Run ``fn(x_block, *other_blocks, out_block)`` over row blocks of C-contiguous copies; the result."""
    xp = get_array_module(x)
    shape = x.shape
    # one value per row: the blocks are runs of BLOCK_ELEMENTS values whatever the shape
    arrays = [xp.ascontiguousarray(a).reshape(-1, 1) for a in (x, *others)]
    out = xp.empty_like(arrays[0])

    def run(rows):
        with np.errstate(over="ignore"):  # x² overflows for |x| > 1e19: exp(-inf) = 0 is then right
            fn(*(a[rows] for a in arrays), out[rows])

    if xp is np:
        _threads.map_blocks(run, *out.shape)
    else:  # CuPy has its own parallelism
        run(slice(None))
    return out.reshape(shape)


def _compute_dtype(x):
    """float16 is computed in float32 (block by block), as the LayerNorm kernels do."""
    return np.float32 if x.dtype == np.float16 else x.dtype


def gelu_fwd(x, approximate: str = "none"):
    """GELU of ``x`` (any shape, float16/32/64) → ``y``, same shape and dtype; NumPy or CuPy passes."""

    def exact(xb, yb):
        xb = xb.astype(_compute_dtype(xb), copy=False)
        xp = get_array_module(xb)
        cdf, pdf = xp.empty_like(xb), xp.empty_like(xb)
        _cdf_pdf(xb, cdf, pdf)
        xp.multiply(_clamped(xb, high=False), cdf, out=yb, casting="same_kind")   # y = x Φ(x)

    def tanh(xb, yb):
        xb = xb.astype(_compute_dtype(xb), copy=False)
        sig, _ = _tanh_halves(_tanh_arg(xb))
        xp = get_array_module(xb)
        xp.multiply(_clamped(xb, high=False), sig, out=yb, casting="same_kind")   # y = ½ x (1 + tanh(u))

    return _blocks(x, exact if approximate == "none" else tanh)


def gelu_bwd(dy, x, approximate: str = "none"):
    """``dx = dy · GELU'(x)`` for ``dy`` and ``x`` of one shape (float16/32/64) → ``dx``, same shape and
    ``x``'s dtype; NumPy or CuPy passes."""

    def exact(xb, dyb, dxb):
        xp = get_array_module(xb)
        xb = xb.astype(_compute_dtype(xb), copy=False)
        cdf, pdf = xp.empty_like(xb), xp.empty_like(xb)
        _cdf_pdf(xb, cdf, pdf)
        pdf *= _clamped(xb)
        pdf *= xb.dtype.type(_INV_SQRT_2PI)                  # x φ(x)
        cdf += pdf                                           # GELU'(x) = Φ(x) + x φ(x)
        xp.multiply(dyb, cdf, out=dxb, casting="unsafe")

    def tanh(xb, dyb, dxb):
        xp = get_array_module(xb)
        xb = xb.astype(_compute_dtype(xb), copy=False)
        f = xb.dtype.type
        sig, rest = _tanh_halves(_tanh_arg(xb))              # ½ (1 + t), ½ (1 - t)
        xc = _clamped(xb)                                    # |x| <= 1e4: x du/dx stays finite
        du = xp.square(xc)
        du *= f(3 * 0.044715)
        du += f(1.0)
        du *= f(_SQRT_2_OVER_PI)                             # du/dx = √(2/π) (1 + 3·0.044715 x²)
        du *= xc
        rest *= sig
        rest *= f(2.0)
        rest *= du                                           # ½ x (1 - t²) du/dx = 2 x s (1 - s) du/dx
        rest += sig                                          # GELU'(x) = ½ (1 + t) + ½ x (1 - t²) du/dx
        xp.multiply(dyb, rest, out=dxb, casting="unsafe")

    return _blocks(x, exact if approximate == "none" else tanh, dy)
