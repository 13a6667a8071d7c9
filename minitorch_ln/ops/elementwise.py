"""Elementwise ops: arithmetic (``add``, ``sub``, ``mul``, ``div``, ``neg``, ``pow``) and unary math (``exp``, ``log``, ``sqrt``, ``rsqrt``, ``abs``, ``sin``, ``cos``, ``erf``).

Activations are in ``activation.py``, ``where``/``maximum``/``clamp`` in ``selection.py``, comparisons in ``comparison.py``.
Each op is a ``Function`` (forward on arrays with ``xp``, backward in Tensor ops) then its public function. Binary ops
broadcast; their backward hands each input a broadcast-shape gradient that :func:`unbroadcast` sums to its shape.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from ._fperr import Quiet
from ._util import (alpha_scaled, broadcast_shape, check_int_exponent, float_input, int_pow, no_bool, number_operands,
                    promote, refuse_bool_neg, refuse_bool_sub)
from .autocast_policies import autocast
from .opmath import zero_d_opmath_operands
from .complex_math import Sgn
from .complex_parts import cj
from .conversion import cast
from .fused_backward import PowScalarBackward, div_denominator_grad
from .scalar_pow import float_pow
from .shape import broadcast_to, unbroadcast

__all__ = ["abs", "add", "div", "erf", "exp", "log", "mul", "neg", "pow", "rsqrt", "sqrt", "sub"]


# ====================================================================================== Arithmetic


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (a.shape, b.shape)
        return a + b

    @staticmethod
    def backward(ctx, dy):
        need_a, need_b = ctx.needs_input_grad
        return (unbroadcast(dy, ctx.shapes[0]) if need_a else None, unbroadcast(dy, ctx.shapes[1]) if need_b else None)


def add(a, b, *, alpha=1) -> Tensor:
    """Elementwise ``a + alpha·b``; ``da = dy``, ``db = alpha·dy`` (summed back over broadcast axes).

    Shapes broadcast (e.g. ``(3, 1, 5)`` with ``(4, 5)`` → ``(3, 4, 5)``); dtypes promote as PyTorch
    (a float32 tensor with a Python/NumPy scalar stays float32). Raises ValueError naming both shapes that
    do not broadcast, TypeError for an operand that is not a Tensor or a number or a float alpha with ints.
    """
    b = alpha_scaled(a, b, alpha, "add")
    if (fast := number_operands(a, b)) is not None:  # a float tensor and a Python number
        return Add.apply(*fast)
    a, b = promote(a, b, "add")
    broadcast_shape(a.array.shape, b.array.shape, "add")
    return Add.apply(a, b)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (a.shape, b.shape)
        return a - b

    @staticmethod
    def backward(ctx, dy):
        need_a, need_b = ctx.needs_input_grad
        return (unbroadcast(dy, ctx.shapes[0]) if need_a else None,
                unbroadcast(-dy, ctx.shapes[1]) if need_b else None)


def sub(a, b, *, alpha=1) -> Tensor:
    """Elementwise ``a - alpha·b``; ``da = dy``, ``db = -alpha·dy``.

    Shapes broadcast and dtypes promote as for :func:`add`. Raises ValueError naming both shapes that do
    not broadcast, TypeError for an operand that is not a Tensor or a number, and RuntimeError for a
    bool operand (as PyTorch: ``mask - 1`` is usually a mistaken ``~mask``).
    """
    b, b_given = alpha_scaled(a, b, alpha, "sub"), b  # alpha's TypeError first, as PyTorch's argument parser
    refuse_bool_sub(a, b_given)  # the operand given, not alpha·b: sub(bool, bool, alpha=2) is refused too
    if (fast := number_operands(a, b)) is not None:  # a float tensor and a Python number
        return Sub.apply(*fast)
    a, b = promote(a, b, "sub")
    broadcast_shape(a.array.shape, b.array.shape, "sub")
    return Sub.apply(a, b)


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        # keep only what a gradient needs: y.mul_(3) must not save the y it overwrites
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        ctx.shapes = (a.shape, b.shape)
        return a * b

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        da = unbroadcast(dy * cj(b), ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        db = unbroadcast(dy * cj(a), ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return da, db


def mul(a, b) -> Tensor:
    """Elementwise ``a * b``; ``da = dy·b``, ``db = dy·a``.

    Shapes broadcast (e.g. ``(3, 1, 5)`` with ``(4, 5)`` → ``(3, 4, 5)``); dtypes promote as PyTorch
    (a float32 tensor with a Python/NumPy scalar stays float32). Raises ValueError naming both shapes
    when they do not broadcast, TypeError for an operand that is not a Tensor or a number.
    """
    if (fast := number_operands(a, b, scalar_opmath=True) or zero_d_opmath_operands(a, b)) is not None:
        return Mul.apply(*fast)  # a float tensor and a number; a half-precision one and a 0-d float tensor
    a, b = promote(a, b, "mul")
    broadcast_shape(a.array.shape, b.array.shape, "mul")
    return Mul.apply(a, b)


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)  # y.div_(2) must not save y
        ctx.shapes = (a.shape, b.shape)
        with Quiet():
            return a / b  # x/0 = ±inf, 0/0 = NaN, as PyTorch, without NumPy's warnings

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        da = unbroadcast(dy / cj(b), ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        # d(a/b)/db = -a/b², as (dy/b)·(a/b): never forms b·b, which overflows (b = 1e20) or
        # underflows to 0 (b = 1e-30) in float32 where the gradient itself is finite
        db = unbroadcast(div_denominator_grad(dy, a, b), ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return da, db


def div(a, b) -> Tensor:
    """True division ``a / b``; ``da = dy/b``, ``db = -(dy/b)·(a/b)`` (never ``b²``, which overflows).

    Integer operands give the default float dtype (as PyTorch); ``x/0`` is ``±inf`` and ``0/0`` NaN.
    Raises ShapeError (a RuntimeError and a ValueError) naming both shapes when they do not broadcast.
    """
    if (fast := number_operands(a, b, scalar_opmath=True) or zero_d_opmath_operands(a, b)) is not None:
        return Div.apply(*fast)  # a float tensor and a number; a half-precision one and a 0-d float tensor
    a, b = promote(a, b, "div", true_div=True)  # ints divide as floats of their own values (uint8 / 256)
    broadcast_shape(a.array.shape, b.array.shape, "div")
    return Div.apply(a, b)


class Neg(Function):
    @staticmethod
    def forward(ctx, x):
        return -x

    @staticmethod
    def backward(ctx, dy):
        return -dy


def neg(x: Tensor) -> Tensor:
    """``-x``, any shape and dtype but bool (RuntimeError, as PyTorch); ``dx = -dy``."""
    return Neg.apply(refuse_bool_neg(x))


class PowScalar(Function):
    """``x ** p`` for a constant exponent ``p``."""

    @staticmethod
    def forward(ctx, x, p):
        ctx.save_for_backward(x)
        ctx.p = p
        with Quiet():  # 0**-1 = inf; a float x: p kept a double (scalar_pow.py)
            return float_pow(x, p) if backend.is_floating(x.dtype) else x**p

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        p = ctx.p
        if p == 0:
            return dy * 0.0, None
        return (PowScalarBackward.apply(dy, x, p) if x.dtype.kind == "f" else dy * p * cj(pow(x, p - 1))) if p != 1 else dy, None


class Pow(Function):
    """``a ** b`` for tensors: d/da = b a^(b-1), d/db = a^b log a.

    At a base of 0 the formulas meet 0·inf: ``b·0^(b-1)`` at ``b = 0`` and ``0^b·log 0``. The limits
    are taken instead (as PyTorch): ``d/da = 0`` at ``a = b = 0`` (``0^0 = 1`` is constant in ``a``),
    and ``d/db = 0`` at ``a = 0, b >= 0`` (``0^b`` is 0 for every ``b > 0``). The exponent of the
    first and the base of the second are swapped for harmless values there, not masked afterwards,
    so the second derivatives stay finite too. A negative base has ``d/db = NaN`` (``a^b`` is not
    real for non-integer ``b``); its ``d/da`` is the ordinary one for integer exponents.
    """

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        ctx.shapes = (a.shape, b.shape)
        if a.dtype.kind in "iu" and b.dtype.kind in "iu":
            return int_pow(a, b)  # PyTorch's integer kernel: NumPy refuses negative exponents
        with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
            return a**b

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        a, b = broadcast_to(a, dy.shape), broadcast_to(b, dy.shape)  # the masks below have dy's shape
        zero = a == 0
        da = db = None
        if ctx.needs_input_grad[0]:
            b_safe = b.masked_fill(zero & (b == 0), 1.0)  # 0·0^(-1) → 0·0^0 = 0
            da = unbroadcast(dy * cj(b * pow(a, b_safe - 1)), ctx.shapes[0])
        if ctx.needs_input_grad[1]:
            a_safe = a.masked_fill(zero & (b.real >= 0), 1.0)  # 0^b·log 0 → 0^b·log 1 = 0
            db = unbroadcast(dy * cj(pow(a, b) * log(a_safe)), ctx.shapes[1])
        return da, db


@autocast("pow")
def pow(a, b) -> Tensor:  # noqa: A001 - PyTorch's name
    """``a ** b``, elementwise and broadcast.

    A number exponent: float bases keep their dtype; an integer base keeps its dtype with an
    integer exponent and gives the default float dtype (float32) with a float one (``int ** 2.0``
    is float32, as PyTorch); a bool base with an integer exponent gives int64. A tensor exponent
    promotes with the base (:func:`promote`) and is differentiated too (see :class:`Pow`).

    Raises:
        RuntimeError (OptionError): an integer base with a negative integer exponent.
        ShapeError: shapes that do not broadcast. TypeError: an operand that is not a Tensor or number.
    """
    if type(b) in (float, int) and isinstance(a, Tensor) and a.array.dtype.kind == "f":  # b ** 2 (issue 26)
        return PowScalar.apply(a, float(b))  # what the branch below gives a real float base (fc; no int check)
    if isinstance(a, Tensor) and (type(b) in (float, int) or not isinstance(b, Tensor) and np.ndim(b) == 0  # (issue 26)
                                  and not isinstance(b, np.ndarray) and not np.iscomplexobj(b)):  # complex: Pow, promoted
        if not isinstance(b, (numbers.Real, np.number)):
            raise TypeError(f"pow: the exponent must be a number or a Tensor, got {type(b).__name__}")
        if isinstance(b, (bool, np.bool_)):  # x ** True is x, x ** False ones, in x's dtype (as PyTorch)
            return PowScalar.apply(a, int(b)) if a.dtype.kind != "b" else (a | (not b))
        fc = backend.is_floating(a.dtype) or a.dtype.kind == "c"
        if not fc and backend.is_floating(np.asarray(b).dtype):  # int ** 2.0 -> float32
            a = cast(a, backend.default_float_dtype())
        elif a.dtype.kind == "b":  # bool ** 2 -> int64 (as PyTorch)
            a = cast(a, np.int64)
        fc = backend.is_floating(a.dtype) or a.dtype.kind == "c"
        check_int_exponent(a, int(b) if not fc else 0)
        return PowScalar.apply(a, float(b) if fc else int(b))
    a, b = promote(a, b, "pow")
    broadcast_shape(a.array.shape, b.array.shape, "pow")
    return Pow.apply(a, b)


# ====================================================================================== Unary math


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        with Quiet():  # exp(100) = inf in float32, as PyTorch
            y = get_array_module(x).exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return dy * cj(y)


@autocast("exp")
def exp(x: Tensor) -> Tensor:
    """``e^x``; ``dx = dy·e^x`` (the saved output). Same shape and dtype as ``x``; integer/bool ``x``: the default float dtype."""
    x = float_input(x, "exp", complex_ok=True)
    return Exp.apply(x)


class Log(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if type(x) is np.ndarray and x.ndim == 0 and x.dtype.kind == "f" and float(x) > 0:  # P[a, b] (issue 26):
            return np.log(x)  # the log of a positive real raises no floating-point error: Quiet is not needed
        with Quiet():
            return get_array_module(x).log(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy / cj(x)  # ±inf at x = 0 (the sign of dy), as PyTorch


@autocast("log")
def log(x: Tensor) -> Tensor:
    """Natural logarithm (``-inf`` at 0, NaN below); ``dx = dy / x``. Same shape and dtype as ``x``; integer/bool ``x``: the default float dtype."""
    x = float_input(x, "log", complex_ok=True)
    return Log.apply(x)


class Sqrt(Function):
    @staticmethod
    def forward(ctx, x):
        with np.errstate(invalid="ignore"):
            y = get_array_module(x).sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return dy / (2.0 * cj(y))  # +inf at x = 0 (the one-sided derivative, as PyTorch), NaN below


def sqrt(x: Tensor) -> Tensor:
    """``√x`` (NaN below 0); ``dx = dy / (2√x)``, +inf at 0 (as PyTorch). Same shape and dtype as
    ``x``; integer/bool ``x``: the default float dtype."""
    x = float_input(x, "sqrt", complex_ok=True)
    return Sqrt.apply(x)


class Rsqrt(Function):
    """``1/sqrt(x)``; d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3."""

    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            y = 1.0 / xp.sqrt(x)
        y = y.astype(x.dtype, copy=False)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return dy * cj((-0.5) * y * y * y)


@autocast("rsqrt")
def rsqrt(x: Tensor) -> Tensor:
    """``1/√x``; ``dx = -dy·y³/2``. Same shape and dtype as ``x``; integer/bool ``x``: the default float dtype."""
    x = float_input(x, "rsqrt", complex_ok=True)
    return Rsqrt.apply(x)


class Abs(Function):
    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        ctx.save_for_backward(x if x.dtype.kind == "c" else None)  # complex |z|: dz = dy·sgn(z) (0 at 0, as PyTorch),
        ctx.sign = xp.sign(x) if x.dtype.kind != "c" else None  # sgn a Function of z: second derivatives are right
        return xp.abs(x)

    @staticmethod
    def backward(ctx, dy):
        return dy * Tensor._from_op(ctx.sign) if ctx.sign is not None else dy * Sgn.apply(ctx.saved_tensors[0])


def abs(x: Tensor) -> Tensor:  # noqa: A001
    """``|x|``, any shape and dtype but bool (DtypeError, as PyTorch); ``dx = dy·sign(x)`` (0 at x = 0)."""
    return no_bool("abs") if isinstance(x, Tensor) and x.dtype.kind == "b" else Abs.apply(x)


class Erf(Function):
    """Gauss error function; d/dx erf(x) = 2/sqrt(pi) exp(-x^2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _erf(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        with np.errstate(over="ignore"):  # x² = inf for |x| > 1.8e19 in float32: e^(-inf) = 0, the limit
            return dy * (2.0 / math.sqrt(math.pi)) * exp(-(x * x))


def _erf(x):
    if get_array_module(x) is np:
        from scipy.special import erf as erf_impl  # noqa: PLC0415
    else:  # pragma: no cover - needs a GPU
        from cupyx.scipy.special import erf as erf_impl  # noqa: PLC0415
    return erf_impl(x).astype(x.dtype, copy=False)


for _op in (Add, Sub, Mul, Div, Neg, PowScalar, Pow, Exp, Log, Sqrt, Rsqrt, Abs):  # conj'd backward (docs/complex.md)
    _op.supports_complex = True


def erf(x: Tensor) -> Tensor:
    """Gauss error function ``erf(x) = 2/√π ∫₀ˣ e^(-t²) dt`` (SciPy / CuPy); ``dx = dy·2/√π·e^(-x²)``. Same shape and dtype as ``x``; integer/bool ``x``: the default float dtype."""
    x = float_input(x, "erf")
    return Erf.apply(x)
