"""Elementwise ops: arithmetic (``add``, ``sub``, ``mul``, ``div``, ``neg``, ``pow``) and unary math (``exp``, ``log``, ``sqrt``, ``rsqrt``, ``abs``, ``sin``, ``cos``, ``erf``).

Activations are in ``activation.py``, ``where``/``maximum``/``clamp`` in ``selection.py``, comparisons
in ``comparison.py``.

Each op is a ``Function`` (forward on arrays with ``xp``, backward in Tensor ops) followed by the
public function that applies it. Binary ops broadcast; their backward hands each input a gradient
of the broadcast shape, and :func:`unbroadcast` sums it back to the input's shape.
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import broadcast_shape, promote, require_float
from .conversion import cast
from .shape import unbroadcast


def _tensor(x, ref: Tensor | None = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    xp = get_array_module(ref.array) if ref is not None else np
    return Tensor._from_op(xp.asarray(x))


# ==================================================================================================
# Arithmetic
# ==================================================================================================


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (a.shape, b.shape)
        return a + b

    @staticmethod
    def backward(ctx, dy):
        da, db = ctx.needs_input_grad
        return (unbroadcast(dy, ctx.shapes[0]) if da else None, unbroadcast(dy, ctx.shapes[1]) if db else None)


def add(a, b) -> Tensor:
    """Elementwise ``a + b``; ``da = dy``, ``db = dy`` (summed back over broadcast axes).

    Shapes broadcast (e.g. ``(3, 1, 5)`` with ``(4, 5)`` → ``(3, 4, 5)``); dtypes promote as PyTorch
    (a float32 tensor with a Python/NumPy scalar stays float32). Raises ValueError naming both shapes
    when they do not broadcast, TypeError for an operand that is not a Tensor or a number.
    """
    a, b = promote(a, b, "add")
    broadcast_shape(a.shape, b.shape, "add")
    return Add.apply(a, b)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (a.shape, b.shape)
        return a - b

    @staticmethod
    def backward(ctx, dy):
        da, db = ctx.needs_input_grad
        return (unbroadcast(dy, ctx.shapes[0]) if da else None, unbroadcast(-dy, ctx.shapes[1]) if db else None)


def sub(a, b) -> Tensor:
    """Elementwise ``a - b``; ``da = dy``, ``db = -dy``.

    Shapes broadcast (e.g. ``(3, 1, 5)`` with ``(4, 5)`` → ``(3, 4, 5)``); dtypes promote as PyTorch
    (a float32 tensor with a Python/NumPy scalar stays float32). Raises ValueError naming both shapes
    when they do not broadcast, TypeError for an operand that is not a Tensor or a number.
    """
    a, b = promote(a, b, "sub")
    broadcast_shape(a.shape, b.shape, "sub")
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
        da = unbroadcast(dy * b, ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        db = unbroadcast(dy * a, ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return da, db


def mul(a, b) -> Tensor:
    """Elementwise ``a * b``; ``da = dy·b``, ``db = dy·a``.

    Shapes broadcast (e.g. ``(3, 1, 5)`` with ``(4, 5)`` → ``(3, 4, 5)``); dtypes promote as PyTorch
    (a float32 tensor with a Python/NumPy scalar stays float32). Raises ValueError naming both shapes
    when they do not broadcast, TypeError for an operand that is not a Tensor or a number.
    """
    a, b = promote(a, b, "mul")
    broadcast_shape(a.shape, b.shape, "mul")
    return Mul.apply(a, b)


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)  # y.div_(2) must not save y
        ctx.shapes = (a.shape, b.shape)
        return a / b

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        da = unbroadcast(dy / b, ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        db = unbroadcast(-dy * a / (b * b), ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return da, db


def div(a, b) -> Tensor:
    """True division; integer operands give the default float dtype (as PyTorch)."""
    a, b = promote(a, b, "div")
    if a.dtype.kind != "f":
        a, b = cast(a, backend.default_float_dtype()), cast(b, backend.default_float_dtype())
    broadcast_shape(a.shape, b.shape, "div")
    return Div.apply(a, b)


class Neg(Function):
    @staticmethod
    def forward(ctx, x):
        return -x

    @staticmethod
    def backward(ctx, dy):
        return -dy


def neg(x: Tensor) -> Tensor:
    """``-x``, any shape and dtype; ``dx = -dy``."""
    return Neg.apply(x)


class PowScalar(Function):
    """``x ** p`` for a constant exponent ``p``."""

    @staticmethod
    def forward(ctx, x, p):
        ctx.save_for_backward(x)
        ctx.p = p
        return x ** x.dtype.type(p) if x.dtype.kind == "f" else x**p

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        p = ctx.p
        if p == 0:
            return dy * 0.0, None
        return dy * p * pow(x, p - 1) if p != 1 else dy, None


class Pow(Function):
    """``a ** b`` for tensors: d/da = b a^(b-1), d/db = a^b log a."""

    @staticmethod
    def forward(ctx, a, b):
        y = a**b
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        a, b, y = ctx.saved_tensors
        da = unbroadcast(dy * b * pow(a, b - 1), a.shape) if ctx.needs_input_grad[0] else None
        db = unbroadcast(dy * y * log(a), b.shape) if ctx.needs_input_grad[1] else None
        return da, db


def pow(a, b) -> Tensor:  # noqa: A001 - PyTorch's name
    """``a ** b``. A numeric exponent keeps ``a``'s dtype; a tensor exponent is differentiated too."""
    if isinstance(a, Tensor) and not isinstance(b, Tensor) and np.ndim(b) == 0:
        if a.dtype.kind != "f" and float(b) != int(b):
            a = cast(a, backend.default_float_dtype())
        return PowScalar.apply(a, float(b) if a.dtype.kind == "f" else b)
    a, b = promote(a, b, "pow")
    broadcast_shape(a.shape, b.shape, "pow")
    return Pow.apply(a, b)


# ==================================================================================================
# Unary math
# ==================================================================================================


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = get_array_module(x).exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return dy * y


def exp(x: Tensor) -> Tensor:
    """``e^x``; ``dx = dy·e^x`` (the saved output). Same shape and dtype as ``x``; raises TypeError for integer tensors."""
    require_float(x, "exp")
    return Exp.apply(x)


class Log(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return get_array_module(x).log(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy / x


def log(x: Tensor) -> Tensor:
    """Natural logarithm (``-inf`` at 0, NaN below); ``dx = dy / x``. Same shape and dtype as ``x``; raises TypeError for integer tensors."""
    require_float(x, "log")
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
        return dy / (2.0 * y)


def sqrt(x: Tensor) -> Tensor:
    """``√x``; ``dx = dy / (2√x)``. Same shape and dtype as ``x``; raises TypeError for integer tensors."""
    require_float(x, "sqrt")
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
        return dy * (-0.5) * y * y * y


def rsqrt(x: Tensor) -> Tensor:
    """``1/√x``; ``dx = -dy·y³/2``. Same shape and dtype as ``x``; raises TypeError for integer tensors."""
    require_float(x, "rsqrt")
    return Rsqrt.apply(x)


class Abs(Function):
    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        ctx.sign = xp.sign(x)
        return xp.abs(x)

    @staticmethod
    def backward(ctx, dy):
        return dy * Tensor._from_op(ctx.sign)


def abs(x: Tensor) -> Tensor:  # noqa: A001
    """``|x|``, any shape and dtype; ``dx = dy·sign(x)`` (0 at x = 0, as PyTorch)."""
    return Abs.apply(x)


class Sin(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return get_array_module(x).sin(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy * cos(x)


def sin(x: Tensor) -> Tensor:
    """``sin x``; ``dx = dy·cos x``. Same shape and dtype as ``x``; raises TypeError for integer tensors."""
    require_float(x, "sin")
    return Sin.apply(x)


class Cos(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return get_array_module(x).cos(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return -dy * sin(x)


def cos(x: Tensor) -> Tensor:
    """``cos x``; ``dx = -dy·sin x``. Same shape and dtype as ``x``; raises TypeError for integer tensors."""
    require_float(x, "cos")
    return Cos.apply(x)


class Erf(Function):
    """Gauss error function; d/dx erf(x) = 2/sqrt(pi) exp(-x^2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _erf(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy * (2.0 / math.sqrt(math.pi)) * exp(-(x * x))


def _erf(x):
    if get_array_module(x) is np:
        from scipy.special import erf as erf_impl  # noqa: PLC0415
    else:  # pragma: no cover - needs a GPU
        from cupyx.scipy.special import erf as erf_impl  # noqa: PLC0415
    return erf_impl(x).astype(x.dtype, copy=False)


def erf(x: Tensor) -> Tensor:
    """Gauss error function ``erf(x) = 2/√π ∫₀ˣ e^(-t²) dt`` (SciPy / CuPy); ``dx = dy·2/√π·e^(-x²)``. Same shape and dtype as ``x``; raises TypeError for integer tensors."""
    require_float(x, "erf")
    return Erf.apply(x)
