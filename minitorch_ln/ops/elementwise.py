"""Elementwise ops: arithmetic, unary math, activations, comparisons, ``where``.

Each op is a ``Function`` (forward on arrays with ``xp``, backward in Tensor ops) followed by the
public function that applies it. Binary ops broadcast; their backward hands each input a gradient
of the broadcast shape, and :func:`unbroadcast` sums it back to the input's shape.
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend, kernels
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import broadcast_shape, promote, require_float
from .conversion import cast, clone, to_device  # noqa: F401 - re-exported
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


# ==================================================================================================
# Activations
# ==================================================================================================


class Tanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = get_array_module(x).tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return dy * (1.0 - y * y)


def tanh(x: Tensor) -> Tensor:
    """``tanh x``; ``dx = dy·(1 - y²)``. Same shape and dtype as ``x``; raises TypeError for integer tensors."""
    require_float(x, "tanh")
    return Tanh.apply(x)


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        # 1/(1+exp(-x)) overflows exp for very negative x; this form never does.
        e = xp.exp(-xp.abs(x))
        y = xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return dy * y * (1.0 - y)


def sigmoid(x: Tensor) -> Tensor:
    """``1 / (1 + e^(-x))``, computed without overflow for large ``|x|``; ``dx = dy·y(1 - y)``. Same shape and dtype as ``x``; raises TypeError for integer tensors."""
    require_float(x, "sigmoid")
    return Sigmoid.apply(x)


class ReLU(Function):
    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        ctx.mask = x > 0
        return xp.maximum(x, 0).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        return dy * Tensor._from_op(ctx.mask.astype(dy.dtype))


def relu(x: Tensor) -> Tensor:
    """``max(x, 0)``, any shape, same dtype; ``dx = dy·[x > 0]`` (0 at x = 0, as PyTorch)."""
    return ReLU.apply(x)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class GELU(Function):
    """GELU (Hendrycks & Gimpel, 2016).

    exact: y = x Φ(x), Φ the standard normal CDF; dy/dx = Φ(x) + x φ(x).
    tanh:  y = x/2 (1 + tanh(u)), u = sqrt(2/π)(x + 0.044715 x³);
           dy/dx = (1 + t)/2 + x/2 (1 - t²) sqrt(2/π)(1 + 3·0.044715 x²), t = tanh(u).

    Forward and first-order backward are the fused kernels of :mod:`minitorch_ln.kernels.activation`
    (only ``x`` is saved; the backward recomputes Φ and φ). Under ``create_graph=True`` the backward
    runs the same formula in Tensor ops, so it can be differentiated again.
    """

    @staticmethod
    def forward(ctx, x, approximate):
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        return kernels.gelu_fwd(x, approximate)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        if not is_grad_enabled():  # first order: one fused kernel on the arrays
            return Tensor._from_op(kernels.gelu_bwd(dy.array, x.array, ctx.approximate)), None
        if ctx.approximate == "tanh":
            t = tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
            dudx = _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x * x)
            return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dudx), None
        cdf = 0.5 * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))
        pdf = exp(-0.5 * x * x) * _INV_SQRT_2PI
        return dy * (cdf + x * pdf), None


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """GELU; ``approximate`` is ``"none"`` (exact, with erf) or ``"tanh"`` (as PyTorch)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    require_float(x, "gelu")
    return GELU.apply(x, approximate)


# ==================================================================================================
# Selection: maximum, minimum, clamp, where, masked_fill
# ==================================================================================================


class Maximum(Function):
    """Elementwise max. On ties the gradient is split evenly between both inputs (as PyTorch)."""

    @staticmethod
    def forward(ctx, a, b):
        xp = get_array_module(a)
        ctx.shapes = (a.shape, b.shape)
        ctx.weight_a = ((a > b) + 0.5 * (a == b)).astype(a.dtype)
        return xp.maximum(a, b)

    @staticmethod
    def backward(ctx, dy):
        wa = Tensor._from_op(ctx.weight_a)
        da = unbroadcast(dy * wa, ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        db = unbroadcast(dy * (1.0 - wa), ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return da, db


def maximum(a, b) -> Tensor:
    """Elementwise maximum of ``a`` and ``b``; on ties each input gets half the gradient (as PyTorch).

    Shapes broadcast (e.g. ``(3, 1, 5)`` with ``(4, 5)`` → ``(3, 4, 5)``); dtypes promote as PyTorch
    (a float32 tensor with a Python/NumPy scalar stays float32). Raises ValueError naming both shapes
    when they do not broadcast, TypeError for an operand that is not a Tensor or a number.
    """
    a, b = promote(a, b, "maximum")
    broadcast_shape(a.shape, b.shape, "maximum")
    return Maximum.apply(a, b)


def minimum(a, b) -> Tensor:
    """Elementwise min, as ``-maximum(-a, -b)`` (the same tie rule)."""
    a, b = promote(a, b, "minimum")
    broadcast_shape(a.shape, b.shape, "minimum")
    return neg(Maximum.apply(neg(a), neg(b)))


class Clamp(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        xp = get_array_module(x)
        ctx.mask = xp.ones(x.shape, dtype=bool)
        if lo is not None:
            ctx.mask &= x >= lo
        if hi is not None:
            ctx.mask &= x <= hi
        return xp.clip(x, lo, hi).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        return dy * Tensor._from_op(ctx.mask.astype(dy.dtype)), None, None


def clamp(x: Tensor, min=None, max=None) -> Tensor:  # noqa: A002
    """Limit values to [min, max]; the gradient passes where min <= x <= max (as PyTorch)."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = x
        if min is not None:
            out = maximum(out, min)
        if max is not None:
            out = minimum(out, max)
        return out
    return Clamp.apply(x, min, max)


class Where(Function):
    @staticmethod
    def forward(ctx, cond, a, b):
        xp = get_array_module(a)
        ctx.cond = cond
        ctx.shapes = (a.shape, b.shape)
        return xp.where(cond, a, b)

    @staticmethod
    def backward(ctx, dy):
        c = Tensor._from_op(ctx.cond)
        zero = Tensor._from_op(get_array_module(dy.array).zeros((), dtype=dy.dtype))
        da = unbroadcast(where(c, dy, zero), ctx.shapes[0]) if ctx.needs_input_grad[1] else None
        db = unbroadcast(where(c, zero, dy), ctx.shapes[1]) if ctx.needs_input_grad[2] else None
        return None, da, db


def _mask_on_device(mask, is_tensor: bool, x: Tensor, op: str):
    """``mask`` (an array) on ``x``'s device: moved if it was not a Tensor, else an error naming both devices."""
    dev = backend.device_of(mask)
    if dev == x.device:
        return mask
    if is_tensor:
        raise RuntimeError(
            f"{op}: expected all tensors on the same device, but found tensors on {dev} and {x.device}; "
            "move them with .to(device) first"
        )
    return backend.to_device(mask, x.device)


def where(condition, input, other) -> Tensor:  # noqa: A002
    """``input`` where ``condition`` holds, else ``other`` (broadcast together)."""
    cond = condition.array if isinstance(condition, Tensor) else condition
    cond = cond if hasattr(cond, "dtype") and hasattr(cond, "shape") else np.asarray(cond)
    if cond.dtype != np.bool_:
        raise TypeError(f"where: condition must be a bool tensor, got dtype {cond.dtype}")
    ref = input if isinstance(input, Tensor) else other
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("where: at least one of input and other must be a Tensor")
    a, b = promote(input, other, "where")
    out_shape = broadcast_shape(broadcast_shape(cond.shape, a.shape, "where"), b.shape, "where")
    del ref, out_shape
    cond = _mask_on_device(cond, isinstance(condition, Tensor), a, "where")
    return Where.apply(cond, a, b)


def masked_fill(x: Tensor, mask, value) -> Tensor:
    """``x`` with ``value`` where ``mask`` is True; ``mask`` broadcasts to ``x``'s shape."""
    m = mask.array if isinstance(mask, Tensor) else mask
    if getattr(m, "dtype", None) != np.bool_:
        raise TypeError(f"masked_fill: mask must be a bool tensor, got {getattr(m, 'dtype', type(m).__name__)}")
    if broadcast_shape(x.shape, m.shape, "masked_fill") != x.shape:
        raise ValueError(f"masked_fill: mask of shape {tuple(m.shape)} does not broadcast to the input's {tuple(x.shape)}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"masked_fill: value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
        value = value.to(x.dtype)
    else:
        value = Tensor._from_op(get_array_module(x.array).asarray(value, dtype=x.dtype))
    m = _mask_on_device(m, isinstance(mask, Tensor), x, "masked_fill")
    return Where.apply(m, value, x)


# ==================================================================================================
# Comparisons and logic (no gradient)
# ==================================================================================================


def _compare(a, b, fn, name) -> Tensor:
    a, b = promote(a, b, name)
    broadcast_shape(a.shape, b.shape, name)
    if a.device != b.device:
        raise RuntimeError(
            f"{name}: expected all tensors on the same device, but found tensors on {a.device} and {b.device}; "
            "move them with .to(device) first"
        )
    return Tensor._from_op(fn(a.array, b.array))


def eq(a, b) -> Tensor:
    """``a == b`` elementwise: a bool tensor of the broadcast shape, with no gradient. Raises ValueError naming both shapes when they do not broadcast."""
    return _compare(a, b, lambda x, y: x == y, "eq")


def ne(a, b) -> Tensor:
    """``a != b`` elementwise (bool, no gradient); as :func:`eq`."""
    return _compare(a, b, lambda x, y: x != y, "ne")


def lt(a, b) -> Tensor:
    """``a < b`` elementwise (bool, no gradient); as :func:`eq`."""
    return _compare(a, b, lambda x, y: x < y, "lt")


def le(a, b) -> Tensor:
    """``a <= b`` elementwise (bool, no gradient); as :func:`eq`."""
    return _compare(a, b, lambda x, y: x <= y, "le")


def gt(a, b) -> Tensor:
    """``a > b`` elementwise (bool, no gradient); as :func:`eq`."""
    return _compare(a, b, lambda x, y: x > y, "gt")


def ge(a, b) -> Tensor:
    """``a >= b`` elementwise (bool, no gradient); as :func:`eq`."""
    return _compare(a, b, lambda x, y: x >= y, "ge")


def logical_not(x: Tensor) -> Tensor:
    """``~x``: a bool tensor of ``x``'s shape (non-zero is True), no gradient."""
    return Tensor._from_op(get_array_module(x.array).logical_not(x.array))


def logical_and(a, b) -> Tensor:
    """``a & b`` elementwise on truth values: bool, broadcast shape, no gradient."""
    return _compare(a, b, lambda x, y: get_array_module(x).logical_and(x, y), "logical_and")


def logical_or(a, b) -> Tensor:
    """``a | b`` elementwise on truth values: bool, broadcast shape, no gradient."""
    return _compare(a, b, lambda x, y: get_array_module(x).logical_or(x, y), "logical_or")


def isfinite(x: Tensor) -> Tensor:
    """True where ``x`` is neither inf nor NaN (bool, ``x``'s shape, no gradient)."""
    return Tensor._from_op(get_array_module(x.array).isfinite(x.array))


def isnan(x: Tensor) -> Tensor:
    """True where ``x`` is NaN (bool, ``x``'s shape, no gradient)."""
    return Tensor._from_op(get_array_module(x.array).isnan(x.array))
