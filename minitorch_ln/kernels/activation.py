"""GELU kernels on raw arrays: the forward ``y`` and the backward ``dx``, each one fused pass per block.

Exact GELU (Hendrycks & Gimpel, 2016) and its derivative::

    y  = x · Φ(x),            Φ(x) = ½ (1 + erf(x / √2))        the standard normal CDF
    dx = dy · (Φ(x) + x φ(x)),  φ(x) = exp(-x²/2) / √(2π)        the standard normal density

Both need ``Φ`` and the backward also ``φ``. In float64, ``erf`` is SciPy's (exact to the last
bit, so finite-difference checks stay tight). In float32 and float16, ``scipy.special.erf`` costs
about 12 ns a value, twenty-five times an ``exp``; instead erf comes from Abramowitz & Stegun 7.1.26
(absolute error below 1.5e-7, float32's resolution; the formula PyTorch's vectorized CPU ``erf``
uses)::

    erf(z) = sign(z) · (1 - r(t) · exp(-z²)),   t = 1 / (1 + p|z|),
    r(t) = t (a1 + t (a2 + t (a3 + t (a4 + t a5))))

and with ``z = x/√2`` the ``exp(-z²)`` it needs *is* ``exp(-x²/2)``: the backward gets ``φ`` for
one multiplication. Nothing is saved between forward and backward but ``x`` (as PyTorch does):
the backward recomputes ``Φ`` and ``φ``.

The tanh approximation, ``y = ½ x (1 + tanh(u))``, ``u = √(2/π) (x + 0.044715 x³)``, has
``dy/dx = ½ (1 + t) + ½ x (1 - t²) √(2/π) (1 + 3·0.044715 x²)`` with ``t = tanh(u)``.

Speed: every line below is one NumPy pass writing into a preallocated block (``out=``), and the
array is cut into blocks of ``BLOCK_ELEMENTS`` values, so all the passes over one block run in
the L2 cache, and the blocks are spread over the kernel threads (the same machinery as the
LayerNorm kernels). Written with ``xp``, so the same code runs on CuPy (as one block).
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


def _erf_exact(x):
    xp = get_array_module(x)
    if xp is np:
        from scipy.special import erf  # noqa: PLC0415
    else:  # pragma: no cover - needs a GPU
        from cupyx.scipy.special import erf  # noqa: PLC0415
    return erf(x)


def _cdf_pdf(x, cdf, pdf):
    """Write ``Φ(x)`` into ``cdf`` and ``exp(-x²/2)`` (``φ(x)·√(2π)``) into ``pdf``; all the same shape."""
    xp = get_array_module(x)
    f = x.dtype.type
    xp.square(x, out=pdf)
    pdf *= f(-0.5)
    xp.exp(pdf, out=pdf)                                    # exp(-x²/2) = exp(-z²), z = x/√2
    if x.dtype == np.float64:
        xp.multiply(x, f(_SQRT_HALF), out=cdf)
        cdf[...] = _erf_exact(cdf)                           # erf(z)
    else:
        t = cdf                                              # t = 1 / (1 + p|z|)
        xp.absolute(x, out=t)
        t *= f(_AS_P * _SQRT_HALF)
        t += f(1.0)
        xp.reciprocal(t, out=t)
        r = xp.multiply(t, f(0.5 * _AS_A[4]))                # Horner, halved: r = ½ t (a1 + t (... + t a5))
        for a in _AS_A[3::-1]:
            r += f(0.5 * a)
            r *= t
        r *= pdf                                             # ½ (1 - erf(|z|)) = ½ r(t) · exp(-z²)
        xp.subtract(f(0.5), r, out=cdf)                      # ½ erf(|z|)
        xp.copysign(cdf, x, out=cdf)                         # ½ erf(z): erf is odd
        cdf += f(0.5)                                        # Φ(x) = ½ + ½ erf(z)
        return
    cdf += f(1.0)
    cdf *= f(0.5)                                            # Φ(x) = ½ (1 + erf(z))


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
    """GELU of ``x`` (any shape, float16/32/64) → ``y``, same shape and dtype."""

    def exact(xb, yb):
        xb = xb.astype(_compute_dtype(xb), copy=False)
        xp = get_array_module(xb)
        cdf, pdf = xp.empty_like(xb), xp.empty_like(xb)
        _cdf_pdf(xb, cdf, pdf)
        xp.multiply(xb, cdf, out=yb, casting="same_kind")   # y = x Φ(x)

    def tanh(xb, yb):
        xp = get_array_module(xb)
        xb = xb.astype(_compute_dtype(xb), copy=False)
        f = xb.dtype.type
        u = xp.square(xb)
        u *= f(0.044715)
        u += f(1.0)
        u *= xb
        u *= f(_SQRT_2_OVER_PI)                              # u = √(2/π) (x + 0.044715 x³)
        xp.tanh(u, out=u)
        u += f(1.0)
        u *= xb
        u *= f(0.5)
        yb[...] = u                                          # y = ½ x (1 + tanh(u))

    return _blocks(x, exact if approximate == "none" else tanh)


def gelu_bwd(dy, x, approximate: str = "none"):
    """``dx = dy · GELU'(x)`` for ``dy`` and ``x`` of one shape (float16/32/64) → ``dx``, same shape and dtype."""

    def exact(xb, dyb, dxb):
        xp = get_array_module(xb)
        xb = xb.astype(_compute_dtype(xb), copy=False)
        cdf, pdf = xp.empty_like(xb), xp.empty_like(xb)
        _cdf_pdf(xb, cdf, pdf)
        pdf *= xb
        pdf *= xb.dtype.type(_INV_SQRT_2PI)                  # x φ(x)
        cdf += pdf                                           # GELU'(x) = Φ(x) + x φ(x)
        xp.multiply(dyb, cdf, out=dxb, casting="unsafe")

    def tanh(xb, dyb, dxb):
        xp = get_array_module(xb)
        xb = xb.astype(_compute_dtype(xb), copy=False)
        f = xb.dtype.type
        x2 = xp.square(xb)
        t = x2 * f(0.044715)
        t += f(1.0)
        t *= xb
        t *= f(_SQRT_2_OVER_PI)
        xp.tanh(t, out=t)                                    # t = tanh(u)
        x2 *= f(3 * 0.044715)
        x2 += f(1.0)
        x2 *= f(_SQRT_2_OVER_PI)                             # du/dx = √(2/π) (1 + 3·0.044715 x²)
        x2 *= xb
        d = xp.square(t)
        xp.subtract(f(1.0), d, out=d)
        d *= x2                                              # x (1 - t²) du/dx
        d += t
        d += f(1.0)
        d *= f(0.5)                                          # ½ (1 + t) + ½ x (1 - t²) du/dx
        xp.multiply(dyb, d, out=dxb, casting="unsafe")

    return _blocks(x, exact if approximate == "none" else tanh, dy)
