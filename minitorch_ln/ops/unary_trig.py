"""Trigonometric, hyperbolic and error functions (``sin``, ``cos``, ``tan``, ``asin`` ... ``atanh``, ``erfc``,
``erfinv``), with backwards that neither overflow nor underflow where the math stays finite (``ops/unary.py`` has the rest).
"""

from __future__ import annotations

import math


from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import float_input
from .autocast_policies import autocast
from .complex_parts import cj

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "erfc", "erfinv", "sin", "sinh", "tan"]

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI, _SQRT_PI_OVER_2 = 2.0 / math.sqrt(math.pi), math.sqrt(math.pi) / 2.0
from .unary import Exp2, Expm1, Log1p, Log2, Log10, Reciprocal, Square, _float_operand, _OfInput, _OfOutput, _special, _ufunc


# ==================================================================================================
# Trigonometric and hyperbolic functions
# ==================================================================================================


class Sin(Function):
    supports_complex = True  # holomorphic: dz = dy·conj(cos z)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return get_array_module(x).sin(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy * cj(cos(x))


def sin(x: Tensor) -> Tensor:
    """``sin x``; ``dx = dy·cos x``. Same shape and dtype as ``x``; integer/bool ``x``: the default float dtype."""
    x = float_input(x, "sin", complex_ok=True)
    return Sin.apply(x)


class Cos(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return get_array_module(x).cos(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return -dy * cj(sin(x))


def cos(x: Tensor) -> Tensor:
    """``cos x``; ``dx = -dy·sin x``. Same shape and dtype as ``x``; integer/bool ``x``: the default float dtype."""
    x = float_input(x, "cos", complex_ok=True)
    return Cos.apply(x)


class _Hypot1(_OfInput):
    """``hypot(x, 1) = √(x² + 1)`` without overflow (for x = 1e20 in float32); d/dx = x / hypot(x, 1)."""

    fn = staticmethod(lambda x: get_array_module(x).hypot(x, x.dtype.type(1)))
    grad = staticmethod(lambda x, dy: dy * x / _Hypot1.apply(x))


def _one_minus_x2(x):
    return (1.0 - x) * (1.0 + x)  # exact near |x| = 1, where 1 - x² cancels


class Tan(_OfOutput):
    fn = _ufunc("tan")
    grad = staticmethod(lambda y, dy: dy * (1.0 + y * y))  # sec² x = 1 + tan² x


class Asin(_OfInput):
    fn = _ufunc("arcsin")
    grad = staticmethod(lambda x, dy: dy / _one_minus_x2(x).sqrt())


class Acos(_OfInput):
    fn = _ufunc("arccos")
    grad = staticmethod(lambda x, dy: -dy / _one_minus_x2(x).sqrt())


class Atan(_OfInput):
    fn = _ufunc("arctan")
    # 1/(1 + x²): as hypot(x, 1)² for real x (no overflow); complex: 1 + z² itself (hypot is |.|)
    grad = staticmethod(lambda x, dy: dy / (1.0 + x * x) if x.dtype.kind == "c" else dy / _Hypot1.apply(x) / _Hypot1.apply(x))


class Sinh(_OfInput):
    fn = _ufunc("sinh")
    grad = staticmethod(lambda x, dy: dy * cosh(x))


class Cosh(_OfInput):
    fn = _ufunc("cosh")
    grad = staticmethod(lambda x, dy: dy * sinh(x))


class Asinh(_OfInput):
    fn = _ufunc("arcsinh")
    grad = staticmethod(lambda x, dy: dy / ((x * x + 1.0).sqrt() if x.dtype.kind == "c" else _Hypot1.apply(x)))  # 1/√(x² + 1)


class Acosh(_OfInput):
    fn = _ufunc("arccosh")
    grad = staticmethod(lambda x, dy: dy / ((x - 1.0).sqrt() * (x + 1.0).sqrt()))  # 1/√(x² - 1)


class Atanh(_OfInput):
    fn = _ufunc("arctanh")
    grad = staticmethod(lambda x, dy: dy / _one_minus_x2(x))  # 1/(1 - x²)


@autocast("tan")
def tan(input: Tensor) -> Tensor:  # noqa: A002
    """``tan x``; integers and bool give float32. ``dx = dy·(1 + tan² x)``."""
    return Tan.apply(_float_operand(input, "tan", complex_ok=True))


@autocast("asin")
def asin(input: Tensor) -> Tensor:  # noqa: A002
    """``arcsin x`` (NaN outside [-1, 1]); ints give float32. ``dx = dy / √((1 - x)(1 + x))``."""
    return Asin.apply(_float_operand(input, "asin", complex_ok=True))


@autocast("acos")
def acos(input: Tensor) -> Tensor:  # noqa: A002
    """``arccos x`` (NaN outside [-1, 1]); ints give float32. ``dx = -dy / √((1 - x)(1 + x))``."""
    return Acos.apply(_float_operand(input, "acos", complex_ok=True))


def atan(input: Tensor) -> Tensor:  # noqa: A002
    """``arctan x``; ints give float32. ``dx = dy / (1 + x²)``, as ``dy / hypot(x, 1)²`` (no overflow)."""
    return Atan.apply(_float_operand(input, "atan", complex_ok=True))


@autocast("sinh")
def sinh(input: Tensor) -> Tensor:  # noqa: A002
    """``sinh x``; integers and bool give float32. ``dx = dy·cosh x``."""
    return Sinh.apply(_float_operand(input, "sinh", complex_ok=True))


@autocast("cosh")
def cosh(input: Tensor) -> Tensor:  # noqa: A002
    """``cosh x``; integers and bool give float32. ``dx = dy·sinh x``."""
    return Cosh.apply(_float_operand(input, "cosh", complex_ok=True))


def asinh(input: Tensor) -> Tensor:  # noqa: A002
    """``arsinh x``; ints give float32. ``dx = dy / hypot(x, 1)`` (finite for x = 1e20 in float32)."""
    return Asinh.apply(_float_operand(input, "asinh", complex_ok=True))


def acosh(input: Tensor) -> Tensor:  # noqa: A002
    """``arcosh x`` (NaN below 1); ints give float32. ``dx = dy / (√(x - 1)·√(x + 1))``."""
    return Acosh.apply(_float_operand(input, "acosh", complex_ok=True))


def atanh(input: Tensor) -> Tensor:  # noqa: A002
    """``artanh x`` (±inf at ±1, NaN outside); ints give float32. ``dx = dy / ((1 - x)(1 + x))``."""
    return Atanh.apply(_float_operand(input, "atanh", complex_ok=True))


# ==================================================================================================
# Error functions (SciPy / CuPy)
# ==================================================================================================


class Erfc(_OfInput):
    fn = staticmethod(lambda x: _special("erfc", x))  # accurate for large x, where 1 - erf(x) cancels
    grad = staticmethod(lambda x, dy: dy * (-_TWO_OVER_SQRT_PI) * (-(x * x)).exp())


class Erfinv(_OfOutput):
    fn = staticmethod(lambda x: get_array_module(x).where(x == 0, x, _special("erfinv", x)))  # odd: erfinv(-0) = -0
    grad = staticmethod(lambda y, dy: dy * _SQRT_PI_OVER_2 * (y * y).exp())  # 1 / erf'(y)


def erfc(input: Tensor) -> Tensor:  # noqa: A002
    """``1 - erf(x)``, accurate in the tail; ints give float32. ``dx = -dy·2/√π·e^(-x²)``."""
    return Erfc.apply(_float_operand(input, "erfc"))


@autocast("erfinv")
def erfinv(input: Tensor) -> Tensor:  # noqa: A002
    """Inverse of ``erf`` on (-1, 1) (±inf at ±1, NaN outside); ints give float32. ``dx = dy·√π/2·e^(y²)``."""
    return Erfinv.apply(_float_operand(input, "erfinv"))


# Complex inputs: each of these is analytic with real Taylor coefficients, so _OfInput's backward passes
# conj(z) to the derivative and gets dy·conj(f'(z)) (docs/complex.md); the others refuse complex by name.
for _op in (Tan, Sinh, Cosh, Asin, Acos, Asinh, Atan, Acosh, Atanh, Log2, Log10, Log1p, Exp2, Expm1, Reciprocal, Square):
    _op.supports_complex = True
