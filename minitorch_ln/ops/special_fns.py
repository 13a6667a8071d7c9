"""Special functions of ``torch.special`` and their top-level names: the gamma family (``lgamma``,
``digamma``, ``polygamma``, ``mvlgamma``), modified Bessel functions (``i0``, ``i0e``, ``i1``, ``i1e``),
the normal distribution (``ndtr``, ``ndtri``, ``log_ndtr``), ``erfcx``, ``logit``, ``sinc``, ``entr``
and ``xlog1py``.

Forwards are ``scipy.special`` (``cupyx.scipy.special`` on the GPU) through ``ops/unary.py``'s
``_special``; integer and bool inputs give float32, float16 is computed in float32 (as PyTorch). Poles
follow the math (and SciPy): ``lgamma`` is ``+inf`` at 0 and the negative integers, ``digamma`` is
``-inf`` at +0, ``+inf`` at -0 and NaN at the negative integers, ``polygamma(n ≥ 1)`` is ``+inf`` at
the poles (PyTorch's float32 gives large finite numbers at negative integers there).

Backwards (PyTorch's ``derivatives.yaml``), in Tensor ops so they differentiate again:
``lgamma' = digamma``, ``digamma' = polygamma(1)``, ``polygamma(n)' = polygamma(n + 1)``,
``i0' = i1``, ``i0e' = i1e - sign(x)·i0e``, ``i1' = i0 - i1/x`` (½ at 0),
``i1e' = i0e - i1e·(sign(x) + 1/x)`` (½ at 0), ``ndtr' = φ(x)``, ``ndtri' = √(2π)·e^(y²/2)``,
``log_ndtr' = φ(x)/Φ(x) = e^(-x²/2 - log_ndtr x)/√(2π)``, ``erfcx' = 2x·erfcx(x) - 2/√π``.
"""

from __future__ import annotations

import math
import numbers

from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from .binary import _operands
from .elementwise import log
from .unary import _calm, _float_operand, _OfInput, _OfOutput, _special, log1p

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# the torch.* names (the rest are torch.special's only: minitorch_ln/special.py)
__all__ = ["digamma", "i0", "lgamma", "logit", "mvlgamma", "polygamma", "sinc"]

def _scipy(name):
    return staticmethod(lambda x: _special(name, x))


# ==================================================================================================
# The gamma family
# ==================================================================================================


class Lgamma(_OfInput):
    fn = staticmethod(lambda x: get_array_module(x).where(x == -float("inf"), -x, _special("gammaln", x)))  # C's +inf
    grad = staticmethod(lambda x, dy: dy * Digamma.apply(x))


class Digamma(_OfInput):
    fn = _scipy("psi")
    grad = staticmethod(lambda x, dy: dy * Polygamma.apply(x, 1))


class Polygamma(Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        return _special("psi", x) if n == 0 else _special("polygamma", x, n)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy * Polygamma.apply(x, ctx.n + 1), None


def lgamma(input: Tensor) -> Tensor:  # noqa: A002
    """``log|Γ(x)|``, elementwise; ints give float32. ``+inf`` at 0, the negative integers and ``±inf`` (C's lgamma).
    Gradient ``digamma(x)``."""
    return Lgamma.apply(_float_operand(input, "lgamma"))


def digamma(input: Tensor) -> Tensor:  # noqa: A002
    """``ψ(x) = Γ'(x)/Γ(x)``; ints give float32. ``-inf`` at +0, NaN at negative integers (as PyTorch).
    Gradient ``polygamma(1, x)``."""
    return Digamma.apply(_float_operand(input, "digamma"))


def polygamma(n: int, input: Tensor) -> Tensor:  # noqa: A002
    """``ψ⁽ⁿ⁾(x)``, the n-th derivative of digamma (``n = 0`` is digamma); ints give float32.
    Gradient ``polygamma(n + 1, x)``. Raises ValueError (a RuntimeError too) for a negative or non-integer n."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise _Error(f"polygamma(n, x) does not support negative n (n must be an int >= 0, got {n!r})")
    return Polygamma.apply(_float_operand(input, "polygamma"), int(n))


class _Error(RuntimeError, ValueError):
    """A bad argument: a RuntimeError as in PyTorch, and a ValueError."""


def mvlgamma(input: Tensor, p: int) -> Tensor:  # noqa: A002
    """The multivariate log-gamma ``Σ_{i<p} lgamma(x - i/2) + p(p-1)/4·log π`` (``scipy.special.multigammaln``),
    elementwise; the input's shape, float32 for ints. Raises (RuntimeError/ValueError) for ``p < 1`` or
    an element ``<= (p - 1)/2``, as PyTorch."""
    x = _float_operand(input, "mvlgamma")
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 1:
        raise _Error(f"mvlgamma: p has to be greater than or equal to 1, got {p!r}")
    xp = get_array_module(x.array)
    if x.numel() and not bool(xp.all(x.array > (p - 1) / 2)):
        raise _Error(f"mvlgamma: All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    half = Tensor._from_op(xp.arange(p, dtype=x.dtype) / 2)  # (p,)
    return lgamma(x.unsqueeze(-1) - half).sum(-1) + (p * (p - 1) / 4 * math.log(math.pi))


# ==================================================================================================
# Modified Bessel functions of the first kind
# ==================================================================================================


def _at_zero(x: Tensor, value: float, y: Tensor) -> Tensor:
    return y.masked_fill(x == 0, value)


def _nonzero(x: Tensor) -> Tensor:
    return x.masked_fill(x == 0, 1.0)  # for the 1/x terms, whose value at 0 _at_zero replaces


class I0(_OfInput):
    fn = _scipy("i0")
    grad = staticmethod(lambda x, dy: dy * I1.apply(x))


class I0e(_OfInput):
    fn = _scipy("i0e")
    grad = staticmethod(lambda x, dy: dy * (I1e.apply(x) - x.sign() * I0e.apply(x)))


class I1(_OfInput):
    fn = _scipy("i1")
    grad = staticmethod(lambda x, dy: dy * _at_zero(x, 0.5, I0.apply(x) - I1.apply(x) / _nonzero(x)))


class I1e(_OfInput):
    fn = _scipy("i1e")
    grad = staticmethod(lambda x, dy: dy * _at_zero(x, 0.5, I0e.apply(x) - I1e.apply(x) * (x.sign() + 1.0 / _nonzero(x))))


def i0(input: Tensor) -> Tensor:  # noqa: A002
    """``I₀(x)``, the modified Bessel function of order 0; ints give float32. Gradient ``I₁(x)``."""
    return I0.apply(_float_operand(input, "i0"))


def i0e(input: Tensor) -> Tensor:  # noqa: A002
    """``e^(-|x|)·I₀(x)`` (finite for large ``|x|``); ints give float32."""
    return I0e.apply(_float_operand(input, "special.i0e"))


def i1(input: Tensor) -> Tensor:  # noqa: A002
    """``I₁(x)``, the modified Bessel function of order 1; ints give float32."""
    return I1.apply(_float_operand(input, "special.i1"))


def i1e(input: Tensor) -> Tensor:  # noqa: A002
    """``e^(-|x|)·I₁(x)``; ints give float32."""
    return I1e.apply(_float_operand(input, "special.i1e"))


# ==================================================================================================
# The normal distribution, erfcx
# ==================================================================================================


def _phi(x: Tensor) -> Tensor:
    return (x * x * -0.5).exp() / _SQRT_2PI  # the standard normal density


class Ndtr(_OfInput):
    fn = _scipy("ndtr")
    grad = staticmethod(lambda x, dy: dy * _phi(x))


class Ndtri(_OfOutput):
    fn = _scipy("ndtri")
    grad = staticmethod(lambda y, dy: dy * _SQRT_2PI * (y * y * 0.5).exp())


class LogNdtr(_OfInput):
    fn = _scipy("log_ndtr")
    grad = staticmethod(lambda x, dy: dy * (x * x * -0.5 - LogNdtr.apply(x)).exp() / _SQRT_2PI)


class Erfcx(_OfInput):
    fn = _scipy("erfcx")
    grad = staticmethod(lambda x, dy: dy * (2.0 * x * Erfcx.apply(x) - _TWO_OVER_SQRT_PI))


def ndtr(input: Tensor) -> Tensor:  # noqa: A002
    """``Φ(x)``, the standard normal CDF; ints give float32. Gradient ``φ(x) = e^(-x²/2)/√(2π)``."""
    return Ndtr.apply(_float_operand(input, "special.ndtr"))


def ndtri(input: Tensor) -> Tensor:  # noqa: A002
    """``Φ⁻¹(p)`` (``-inf`` at 0, ``inf`` at 1, NaN outside [0, 1]); ints give float32."""
    return Ndtri.apply(_float_operand(input, "special.ndtri"))


def log_ndtr(input: Tensor) -> Tensor:  # noqa: A002
    """``log Φ(x)``, accurate far in the left tail (``log_ndtr(-40) ≈ -804.6``); ints give float32."""
    return LogNdtr.apply(_float_operand(input, "special.log_ndtr"))


def erfcx(input: Tensor) -> Tensor:  # noqa: A002
    """``e^(x²)·erfc(x)``, the scaled complementary error function; ints give float32."""
    return Erfcx.apply(_float_operand(input, "special.erfcx"))


# ==================================================================================================
# logit, sinc, entr, xlog1py
# ==================================================================================================


class Logit(_OfInput):
    @staticmethod
    def forward(ctx, x, eps):
        xp = get_array_module(x)
        ctx.save_for_backward(x)
        ctx.eps = eps
        z = x if eps is None else xp.clip(x, x.dtype.type(eps), x.dtype.type(1 - eps))
        return _calm(lambda: xp.log(z / (1 - z))).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        dx = dy / (x * (1.0 - x))
        if ctx.eps is None:  # NaN outside [0, 1] (as PyTorch)
            return dx.masked_fill((x < 0) | (x > 1), float("nan")), None
        return dx.masked_fill((x < ctx.eps) | (x > 1 - ctx.eps), 0.0), None  # 0 where clamped


def logit(input: Tensor, eps=None) -> Tensor:  # noqa: A002
    """``log(z/(1 - z))`` with ``z = clamp(x, eps, 1 - eps)`` (no clamp for ``eps=None``): ``±inf`` at 1/0,
    NaN outside [0, 1] without eps; ints give float32. Gradient ``1/(x(1 - x))``, 0 where eps clamps,
    NaN outside [0, 1] without eps (as PyTorch)."""
    x = _float_operand(input, "logit")
    return Logit.apply(x, None if eps is None or eps < 0 else float(eps))


class Sinc(_OfInput):
    supports_complex = True  # analytic with real Taylor coefficients (docs/complex.md)

    @staticmethod
    def fn(x):
        xp = get_array_module(x)
        return _calm(lambda: xp.sinc(x)).astype(x.dtype, copy=False)  # sin(πx)/(πx), 1 at 0

    @staticmethod
    def grad(x, dy):
        px = x * math.pi
        d = (px * px.cos() - px.sin()) / (px * x)  # d/dx sin(πx)/(πx)
        return dy * d.masked_fill(x == 0, 0.0)


def sinc(input: Tensor) -> Tensor:  # noqa: A002
    """``sin(πx)/(πx)``, 1 at 0 (the normalized sinc); ints give float32. Gradient
    ``(πx·cos(πx) - sin(πx))/(πx²)``, 0 at 0. Complex input: the same analytic formulas (real Taylor
    coefficients, so the backward's ``conj(z)`` gives ``conj(f'(z))``, docs/complex.md)."""
    return Sinc.apply(_float_operand(input, "sinc", complex_ok=True))


class Entr(_OfInput):
    @staticmethod
    def fn(x):
        xp = get_array_module(x)
        out = _calm(lambda: -x * xp.log(x))
        out = xp.where(x == 0, x.dtype.type(0), out)
        return xp.where(x < 0, x.dtype.type(-xp.inf), out).astype(x.dtype, copy=False)

    grad = staticmethod(lambda x, dy: dy * -(log(x) + 1.0))


def entr(input: Tensor) -> Tensor:  # noqa: A002
    """``-x·log x`` for ``x > 0``, 0 at 0, ``-inf`` for ``x < 0`` (NaN stays NaN); ints give float32.
    Gradient ``-(log x + 1)``."""
    return Entr.apply(_float_operand(input, "special.entr"))


def xlog1py(input, other) -> Tensor:  # noqa: A002
    """``input·log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN); scalars allowed on
    either side; ints give float32. Gradients ``log1p(other)`` (0 where input is 0 and other <= -1) and
    ``input/(1 + other)`` (as PyTorch)."""
    x, y = _operands(input, other, "xlog1py", to_float=True)
    # where x = 0 the value is 0 (NaN for a NaN y): y <= -1 and y = inf are replaced there, so that
    # 0·log1p(y) is 0 and the gradients are PyTorch's (0 for x where y <= -1, x/(1 + y) = 0 for y)
    fill = (x == 0) & ((y <= -1) | (y == float("inf")))
    return x * log1p(y.masked_fill(fill, 0.0) if bool(fill.any()) else y)
