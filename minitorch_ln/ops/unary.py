"""Unary math: rounding, logs and exponentials, trigonometric and hyperbolic functions, erfc/erfinv,
``nan_to_num`` and the float predicates (``isinf``, ``signbit``, ...).

Each op is a ``Function`` (forward on arrays with ``xp``, backward in Tensor ops, so it can be
differentiated again) followed by its public function. Dtypes follow PyTorch: ops that PyTorch
computes in floating point turn integer and bool inputs into the default float dtype (float32);
the rounding ops keep integer inputs as they are. Derivatives are the textbook ones, written so that
they neither overflow nor lose precision where the function itself is fine: ``1/hypot(x, 1)`` for
asinh, ``1/sqrt((1 - x)(1 + x))`` for asin, ``sqrt(x - 1)·sqrt(x + 1)`` for acosh.
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from .autocast_policies import autocast
from .complex_math import complex_sgn
from .complex_parts import cj
from .conversion import cast

__all__ = [
    "ceil", "exp2", "expm1", "floor", "frac", "isinf", "isneginf", "isposinf", "isreal", "log10", "log1p", "log2",
    "nan_to_num", "reciprocal", "round", "sgn", "sign", "signbit", "square", "trunc"
]

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI, _SQRT_PI_OVER_2 = 2.0 / math.sqrt(math.pi), math.sqrt(math.pi) / 2.0


def _check_tensor(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor as input, got {type(x).__name__}")


def _float_operand(x, op: str, complex_ok: bool = False) -> Tensor:
    """``x`` itself when floating point; integer and bool tensors as the default float dtype (as PyTorch)."""
    _check_tensor(x, op)
    if x.dtype.kind in "biu":
        return cast(x, backend.default_float_dtype())
    if not backend.is_floating(x.dtype) and not (complex_ok and x.dtype.kind == "c"):  # complex: only where the op says so
        raise TypeError(f"{op}: expected a real (bool, integer or floating point) tensor, got {x.dtype}")
    return x


def _calm(fn, *arrays):
    """``fn(*arrays)`` without NumPy's warnings for domain errors (NaN/inf results are the answer)."""
    with np.errstate(all="ignore"):
        return fn(*arrays)


def _zeros_like(t: Tensor) -> Tensor:
    return Tensor._from_op(get_array_module(t.array).zeros(t.shape, dtype=t.dtype))


def _special(name: str, x, *args):
    """``scipy.special.<name>(*args, x)`` (``cupyx.scipy.special`` on the GPU) in ``x``'s dtype (float16 via float32)."""
    if get_array_module(x) is np:
        import scipy.special as sp  # noqa: PLC0415
    else:  # pragma: no cover - needs a GPU
        import cupyx.scipy.special as sp  # noqa: PLC0415
    src = x.astype(np.float32) if x.dtype == np.float16 else x
    return _calm(lambda: getattr(sp, name)(*args, src)).astype(x.dtype, copy=False)


# ==================================================================================================
# Rounding and sign: piecewise constant, so zero gradients (as PyTorch)
# ==================================================================================================


class _PiecewiseConstant(Function):
    @staticmethod
    def backward(ctx, dy):
        return _zeros_like(dy)


class Floor(_PiecewiseConstant):
    forward = staticmethod(lambda ctx, x: get_array_module(x).floor(x))


class Ceil(_PiecewiseConstant):
    forward = staticmethod(lambda ctx, x: get_array_module(x).ceil(x))


class Trunc(_PiecewiseConstant):
    forward = staticmethod(lambda ctx, x: get_array_module(x).trunc(x))


class Round(_PiecewiseConstant):
    """Half to even (``rint``); with ``decimals``, PyTorch's ``rint(x·10^d)/10^d`` (``rint(x/10^-d)·10^-d``)."""

    @staticmethod
    def backward(ctx, dy):
        return _zeros_like(dy), None

    @staticmethod
    def forward(ctx, x, decimals):
        xp = get_array_module(x)
        if decimals == 0:
            return xp.rint(x)
        ten = _calm(lambda: x.dtype.type(10.0) ** x.dtype.type(abs(decimals)))
        with np.errstate(all="ignore"):
            scaled = x * ten if decimals > 0 else x / ten
            y = xp.rint(scaled) / ten if decimals > 0 else xp.rint(scaled) * ten
            # Where x·10^d overflows (1e38 to 1 decimal in float32), x has no digits that far
            # right: it is its own answer (PyTorch gives inf there; the math says x).
            y = xp.where(xp.isfinite(scaled) | ~xp.isfinite(x), y, x)
            if decimals < 0 and not np.isfinite(ten):  # 10^-d beyond the dtype: every finite x is 0
                y = xp.where(xp.isfinite(x), xp.copysign(x.dtype.type(0), x), y)
        return y.astype(x.dtype, copy=False)


class Sign(_PiecewiseConstant):
    forward = staticmethod(lambda ctx, x: get_array_module(x).sign(x))


def _rounding(cls, x, op, *args):
    _check_tensor(x, op)
    if x.dtype.kind == "b" or (x.dtype.kind not in "iuf" and not backend.is_floating(x.dtype)):
        raise TypeError(f"{op}: expected an integer or floating point tensor, got {x.dtype}")
    if x.dtype.kind in "iu":  # integers are already whole: a copy, the input's dtype (as PyTorch)
        return Tensor._from_op(x.array.copy())
    return cls.apply(x, *args)


def floor(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's argument name
    """Largest integer ``<= x``, elementwise; the input's shape and dtype (integers are returned as they
    are). Zero gradient (as PyTorch). Raises TypeError for bool tensors."""
    return _rounding(Floor, input, "floor")


def ceil(input: Tensor) -> Tensor:  # noqa: A002
    """Smallest integer ``>= x``; as :func:`floor` otherwise."""
    return _rounding(Ceil, input, "ceil")


def trunc(input: Tensor) -> Tensor:  # noqa: A002
    """``x`` rounded toward zero; as :func:`floor` otherwise."""
    return _rounding(Trunc, input, "trunc")


def round(input: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001,A002
    """``x`` rounded to ``decimals`` decimal places, halves to even (``round(2.5) = 2``, as PyTorch).

    Same shape and dtype; zero gradient. Integer tensors are returned as they are with
    ``decimals=0`` and raise TypeError otherwise (as PyTorch, which has no integer kernel for it).
    Deviation: where ``x·10^decimals`` overflows, PyTorch returns inf; this returns ``x``.
    """
    if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool):
        raise TypeError(f"round: decimals must be an int, got {type(decimals).__name__}")
    _check_tensor(input, "round")
    if decimals != 0 and not backend.is_floating(input.dtype):
        raise TypeError(f"round: decimals={decimals} expected a floating point tensor, got {input.dtype}")
    return _rounding(Round, input, "round", int(decimals))


def sign(input: Tensor) -> Tensor:  # noqa: A002
    """-1, 0 or 1 by the sign of ``x`` (bool stays bool, integers keep their dtype); zero gradient.

    Deviation: ``sign(NaN)`` is NaN (IEEE / the array API standard); PyTorch gives 0.
    """
    _check_tensor(input, "sign")
    if input.dtype.kind == "b":
        return Tensor._from_op(input.array.copy())
    if (input.dtype.kind not in "iuf" and not backend.is_floating(input.dtype)):
        raise TypeError(f"sign: expected a real tensor, got {input.dtype}")
    return Sign.apply(input)


def sgn(input: Tensor) -> Tensor:  # noqa: A002
    """``x / |x|`` extended by 0 at 0: for real tensors the same as :func:`sign`; complex ones: complex_math.py."""
    if isinstance(input, Tensor) and input.dtype.kind == "c":
        return complex_sgn(input)
    return sign(input)


class Frac(Function):
    forward = staticmethod(lambda ctx, x: _calm(lambda: x - get_array_module(x).trunc(x)))  # NaN at ±inf
    backward = staticmethod(lambda ctx, dy: dy)


def frac(input: Tensor) -> Tensor:  # noqa: A002
    """``x - trunc(x)`` (keeps the sign of ``x``; NaN at ±inf); ``dx = dy``. Floating point only:
    raises TypeError for integer and bool tensors (as PyTorch)."""
    _check_tensor(input, "frac")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"frac: expected a floating point tensor, got {input.dtype}")
    return Frac.apply(input)


# ==================================================================================================
# Powers, logarithms and exponentials
# ==================================================================================================


class Reciprocal(Function):
    @staticmethod
    def forward(ctx, x):
        y = _calm(lambda: (1 / x).astype(x.dtype, copy=False))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return -(dy * cj(y)) * cj(y)  # d/dx 1/x = -1/x² = -y², as (dy·y)·y: y² alone overflows (y = 1e20) where dy·y² need not


@autocast("reciprocal")
def reciprocal(input: Tensor) -> Tensor:  # noqa: A002
    """``1/x`` (±inf at ±0); integers and bool give float32 (as PyTorch). ``dx = -dy·y²``."""
    return Reciprocal.apply(_float_operand(input, "reciprocal", complex_ok=True))


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _calm(lambda: x * x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy * cj(2.0 * x)


def square(input: Tensor) -> Tensor:  # noqa: A002
    """``x²``; integers keep their dtype, bool gives int64 (as PyTorch). ``dx = 2x·dy``."""
    _check_tensor(input, "square")
    if input.dtype.kind == "b":
        input = cast(input, np.int64)
    if input.dtype.kind not in "iufc" and not backend.is_floating(input.dtype):
        raise TypeError(f"square: expected a number tensor, got {input.dtype}")
    return Square.apply(input)


class _OfInput(Function):
    """Base of ops whose derivative is a function of the input: subclasses set ``fn`` and ``grad``."""

    @classmethod
    def forward(cls, ctx, x):
        ctx.save_for_backward(x)
        return cls.fn(x)

    @classmethod
    def backward(cls, ctx, dy):
        (x,) = ctx.saved_tensors  # complex (real Taylor coefficients): f'(conj z) = conj(f'(z)), docs/complex.md
        return cls.grad(cj(x), dy)


class _OfOutput(_OfInput):
    """As :class:`_OfInput`, for derivatives best written with the output ``y``."""

    @classmethod
    def forward(cls, ctx, x):
        y = cls.fn(x)
        ctx.save_for_backward(y)
        return y


def _ufunc(name):
    return staticmethod(lambda x: _calm(getattr(get_array_module(x), name), x))


class Log2(_OfInput):
    fn = _ufunc("log2")
    grad = staticmethod(lambda x, dy: dy / (x * _LN2))  # 1 / (x ln 2)


class Log10(_OfInput):
    fn = _ufunc("log10")
    grad = staticmethod(lambda x, dy: dy / (x * _LN10))  # 1 / (x ln 10)


class Log1p(_OfInput):
    fn = _ufunc("log1p")  # accurate for tiny x, where log(1 + x) rounds 1 + x
    grad = staticmethod(lambda x, dy: dy / (1.0 + x))


class Exp2(_OfOutput):
    fn = _ufunc("exp2")
    grad = staticmethod(lambda y, dy: dy * (y * _LN2))  # 2^x ln 2


class Expm1(_OfOutput):
    fn = _ufunc("expm1")  # accurate for tiny x, where exp(x) - 1 cancels
    grad = staticmethod(lambda y, dy: dy * (y + 1.0))  # e^x = y + 1


@autocast("log2")
def log2(input: Tensor) -> Tensor:  # noqa: A002
    """``log₂ x`` (-inf at 0, NaN below); integers and bool give float32. ``dx = dy / (x ln 2)``."""
    return Log2.apply(_float_operand(input, "log2", complex_ok=True))


@autocast("log10")
def log10(input: Tensor) -> Tensor:  # noqa: A002
    """``log₁₀ x`` (-inf at 0, NaN below); integers and bool give float32. ``dx = dy / (x ln 10)``."""
    return Log10.apply(_float_operand(input, "log10", complex_ok=True))


@autocast("log1p")
def log1p(input: Tensor) -> Tensor:  # noqa: A002
    """``log(1 + x)``, accurate near 0 (-inf at -1, NaN below); ints give float32. ``dx = dy / (1 + x)``."""
    return Log1p.apply(_float_operand(input, "log1p", complex_ok=True))


def exp2(input: Tensor) -> Tensor:  # noqa: A002
    """``2^x``; integers and bool give float32. ``dx = dy·2^x·ln 2``."""
    return Exp2.apply(_float_operand(input, "exp2", complex_ok=True))


@autocast("expm1")
def expm1(input: Tensor) -> Tensor:  # noqa: A002
    """``e^x - 1``, accurate near 0; integers and bool give float32. ``dx = dy·e^x``."""
    return Expm1.apply(_float_operand(input, "expm1", complex_ok=True))


# ==================================================================================================
# nan_to_num and predicates (predicates give bool tensors without gradient)
# ==================================================================================================


class NanToNum(Function):
    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        xp = get_array_module(x)
        ctx.finite = xp.isfinite(x)
        return _calm(lambda: xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, dy):
        return dy * Tensor._from_op(ctx.finite.astype(dy.dtype)), None, None, None  # replaced entries: 0


@autocast("nan_to_num")
def nan_to_num(input: Tensor, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:  # noqa: A002
    """NaN → ``nan``, +inf → ``posinf``, -inf → ``neginf`` (default: the dtype's largest / lowest
    finite value, as PyTorch). Same shape and dtype (integer and bool tensors are copied as they
    are); the gradient passes where ``x`` is finite and is 0 at the replaced entries."""
    _check_tensor(input, "nan_to_num")
    vals = {"nan": nan, "posinf": posinf, "neginf": neginf}
    for k, v in vals.items():
        if isinstance(v, Tensor):
            vals[k] = v = v.item()
        if v is not None and not isinstance(v, (int, float, np.number)):
            raise TypeError(f"nan_to_num: {k} must be a number or None, got {type(v).__name__}")
    if not backend.is_floating(input.dtype):
        return Tensor._from_op(input.array.copy())
    fi = np.finfo(input.dtype)
    posinf = fi.max if vals["posinf"] is None else vals["posinf"]
    neginf = fi.min if vals["neginf"] is None else vals["neginf"]
    return NanToNum.apply(input, float(vals["nan"]), float(posinf), float(neginf))


def _predicate(x, op, float_fn, other_fn=None) -> Tensor:
    _check_tensor(x, op)
    xp, a = get_array_module(x.array), x.array
    if backend.is_floating(a.dtype) or a.dtype.kind == "c" and op == "isinf":  # complex: either part infinite
        return Tensor._from_op(xp.asarray(float_fn(xp, a)))
    if a.dtype.kind == "c":  # isposinf, isneginf, signbit: as PyTorch, no meaning for complex numbers
        raise TypeError(f"{op}: does not support complex inputs (got {a.dtype})")
    if other_fn is not None:
        return Tensor._from_op(xp.asarray(other_fn(xp, a)))
    return Tensor._from_op(xp.zeros(a.shape, dtype=bool))  # integers and bool are never inf


def isinf(input: Tensor) -> Tensor:  # noqa: A002
    """True where ``x`` is +inf or -inf: a bool tensor of ``x``'s shape (False for integer dtypes)."""
    return _predicate(input, "isinf", lambda xp, a: xp.isinf(a))


def isposinf(input: Tensor) -> Tensor:  # noqa: A002
    """True where ``x`` is +inf (bool, ``x``'s shape, no gradient)."""
    return _predicate(input, "isposinf", lambda xp, a: a == np.inf)


def isneginf(input: Tensor) -> Tensor:  # noqa: A002
    """True where ``x`` is -inf (bool, ``x``'s shape, no gradient)."""
    return _predicate(input, "isneginf", lambda xp, a: a == -np.inf)


def isreal(input: Tensor) -> Tensor:  # noqa: A002
    """True where ``x`` has no imaginary part: every entry of a real tensor, NaN included."""
    if isinstance(input, Tensor) and input.dtype.kind == "c":
        return Tensor._from_op(input.array.imag == 0)
    return _predicate(input, "isreal", lambda xp, a: xp.ones(a.shape, dtype=bool),
                      lambda xp, a: xp.ones(a.shape, dtype=bool))


def signbit(input: Tensor) -> Tensor:  # noqa: A002
    """True where the sign bit is set: ``x < 0``, and also -0.0 and negative NaNs (bool, no gradient)."""
    return _predicate(input, "signbit", lambda xp, a: xp.signbit(a),
                      lambda xp, a: a < 0 if a.dtype.kind == "i" else xp.zeros(a.shape, dtype=bool))
