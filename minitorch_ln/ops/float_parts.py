"""Elementwise ops on a number's parts and units: ``frexp``, ``ldexp``, ``nextafter``, ``gcd``, ``lcm``, ``positive``,
``deg2rad``, ``rad2deg``.

``frexp``, ``nextafter``, ``gcd`` and ``lcm`` have no gradient in PyTorch (integer or piecewise-constant
results): their forwards run on arrays (``xp = get_array_module(x)``) and give tensors without history.
``ldexp`` is PyTorch's own composite ``input · 2^other`` and ``deg2rad``/``rad2deg`` a product by π/180 or
180/π, so their gradients are those of ``mul`` and ``pow``. Definitions: C99's ``frexp``/``nextafter``
(ISO/IEC 9899 §7.12.6.4, §7.12.11.3) and Euclid's gcd with ``lcm(a, b) = |a / gcd(a, b) · b|``, as NumPy's.
"""

from __future__ import annotations

import math
from collections import namedtuple

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError
from ..tensor import Tensor
from ._util import float_input, promote
from .conversion import cast
from .shape import unbroadcast

__all__ = ["deg2rad", "frexp", "gcd", "lcm", "ldexp", "nextafter", "positive", "rad2deg"]

FrexpResult = namedtuple("frexp", ["mantissa", "exponent"])  # torch.return_types.frexp


def _need_tensor(op: str, **named) -> None:
    for name, t in named.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(t).__name__}")


def frexp(input: Tensor) -> FrexpResult:
    """``(mantissa, exponent)`` with ``input = mantissa · 2^exponent`` and ``0.5 <= |mantissa| < 1``.

    ``mantissa`` has ``input``'s float dtype and shape, ``exponent`` is int32 (PyTorch's); zeros, ±inf and
    NaN give mantissa ``input`` and exponent 0 (C99). The gradient is ``dmantissa / 2^exponent`` (PyTorch's). Raises DtypeError for integer
    or bool inputs ("only supports floating-point dtypes", PyTorch's words).
    """
    _need_tensor("frexp", input=input)
    if input.dtype.kind != "f":
        raise DtypeError(f"frexp(): only supports floating-point dtypes, got {input.dtype}")
    mantissa = Mantissa.apply(input)
    xp = get_array_module(input.array)
    return FrexpResult(mantissa, Tensor._from_op(xp.frexp(input.array)[1].astype("int32", copy=False)))


class Mantissa(Function):
    """frexp's mantissa ``m = x / 2^e`` with ``e`` piecewise constant: ``dx = dm / 2^e`` (PyTorch's formula;
    a subnormal's ``2^e`` is itself subnormal, so its gradient overflows to inf as there)."""

    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        mantissa, exponent = xp.frexp(x)  # (*x.shape), (*x.shape)
        ctx.two_e = xp.ldexp(xp.ones((), dtype=x.dtype), exponent)  # 2^e, exact  # (*x.shape)
        return mantissa

    @staticmethod
    def backward(ctx, dm):
        return dm / Tensor._from_op(ctx.two_e)


def _inexact(t: Tensor) -> bool:
    return backend.is_floating(t.dtype) or t.dtype.kind == "c"


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input · 2^other``, broadcasting; integer inputs give the default float dtype (PyTorch's composite
    ``mul(input, pow(2.0, other))``, so the gradient reaches both float operands; complex operands too).

    Raises TypeError for a non-Tensor, ShapeError for shapes that do not broadcast.
    """
    _need_tensor("ldexp", input=input, other=other)
    if not _inexact(input) and not _inexact(other):
        input = float_input(input, "ldexp")
    dt = promote(input, other.to(input.dtype) if not _inexact(other) else other, "ldexp")[0].dtype
    # 2^other in the result's dtype: an int exponent taken through float32 would lose 2^-898 in float64
    return cast(input, dt) * (2.0 ** cast(other, dt))


class NextAfter(Function):
    """``nextafter(x, y)``; PyTorch's gradient: ``dx = dy`` (the step is below rounding), ``dother = 0``."""

    @staticmethod
    def forward(ctx, x, other):
        xp = get_array_module(x)
        ctx.shapes = (x.shape, other.shape)
        return xp.nextafter(x, other)  # (*broadcast shape)

    @staticmethod
    def backward(ctx, dy):
        x_shape, other_shape = ctx.shapes
        return unbroadcast(dy, x_shape), unbroadcast(dy * 0.0, other_shape)


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The next representable float after ``input`` toward ``other``, elementwise (broadcasting); dtypes
    promote as PyTorch's; gradient ``dy`` to ``input`` and 0 to ``other`` (PyTorch's). Raises DtypeError
    unless both are floating point."""
    _need_tensor("nextafter", input=input, other=other)
    for t in (input, other):
        if t.dtype.kind != "f":
            raise DtypeError(f"nextafter(): not implemented for {t.dtype}; expected floating point tensors")
    return NextAfter.apply(*promote(input, other, "nextafter"))


def _integer_pair(op, input, other):
    _need_tensor(op, input=input, other=other)
    for t in (input, other):
        if t.dtype.kind not in "iu":
            raise DtypeError(f"{op}(): not implemented for {t.dtype}; expected integer tensors")
    return promote(input, other, op)


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """Greatest common divisor, elementwise (broadcasting, integer dtypes promoting); ``gcd(0, 0) = 0`` and
    the result is non-negative. Raises DtypeError for float or bool tensors (PyTorch: not implemented)."""
    a, b = _integer_pair("gcd", input, other)
    xp = get_array_module(a.array)
    return Tensor._from_op(xp.gcd(a.array, b.array))


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """Least common multiple, elementwise (broadcasting, integer dtypes promoting); 0 when either is 0, and
    non-negative. Raises DtypeError for float or bool tensors."""
    a, b = _integer_pair("lcm", input, other)
    xp = get_array_module(a.array)
    return Tensor._from_op(xp.lcm(a.array, b.array))


def positive(input: Tensor) -> Tensor:
    """``input`` itself (``+x``), as PyTorch returns it; raises TypeError for bool tensors (PyTorch's "The `+`
    operator, on a bool tensor is not supported")."""
    _need_tensor("positive", input=input)
    if input.dtype.kind == "b":
        raise TypeError("positive(): The `+` operator, on a bool tensor is not supported.")
    return input


def _scaled_angle(op: str, input: Tensor, factor: float) -> Tensor:
    _need_tensor(op, input=input)
    if input.dtype.kind in "biu":
        input = input.to(backend.default_float_dtype())
    elif not backend.is_floating(input.array.dtype):  # complex (bfloat16 is a float: NumPy kind "V")
        raise DtypeError(f"{op}(): expected a real tensor, got {input.dtype}")
    return input * factor


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians, ``input · π/180``; integer and bool inputs give the default float dtype."""
    return _scaled_angle("deg2rad", input, math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees, ``input · 180/π``; integer and bool inputs give the default float dtype."""
    return _scaled_angle("rad2deg", input, 180.0 / math.pi)
