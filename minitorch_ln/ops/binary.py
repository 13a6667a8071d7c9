"""Binary math: atan2, hypot, lerp, the three integer-style divisions (``fmod``, ``remainder``,
``floor_divide``, ``div`` with ``rounding_mode``), closeness tests, copysign, xlogy, float_power,
logaddexp(2), fmax/fmin and heaviside.

Each op is a ``Function`` followed by its public function. Operands broadcast and promote as in
PyTorch (:func:`promote`: a float32 tensor with a Python number stays float32, an int tensor with a
Python int keeps its dtype); every backward sums its gradients back to each input's shape with
:func:`unbroadcast`. Where a derivative has a removable 0/0 (atan2 and hypot at the origin) the
``where(h == 0, 1, h)`` guard keeps it finite (0) and keeps its own gradient finite too.
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError, IntegerDivisionByZero, OptionError
from ..tensor import Tensor
from . import complex_composed as C
from ._util import broadcast_shape, promote
from .autocast_policies import autocast
from .complex_parts import cj
from .conversion import cast
from .selection import where
from .shape import unbroadcast

__all__ = [
    "allclose", "atan2", "copysign", "equal", "float_power", "fmax", "fmin", "heaviside", "hypot", "isclose",
    "lerp", "logaddexp", "logaddexp2", "xlogy"
]

_LN2 = math.log(2.0)


DtypeMismatchError = DtypeError  # minitorch_ln/errors.py


def _calm(fn, *arrays):
    with np.errstate(all="ignore"):
        return fn(*arrays)


def _zeros(shape, like: Tensor) -> Tensor:
    return Tensor._from_op(get_array_module(like.array).zeros(shape, dtype=like.dtype))


def _operands(a, b, op: str, kinds: str = "biuf", to_float: bool = False):
    """Promote, check the broadcast, reject dtypes outside ``kinds``; ints → float32 if ``to_float``."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{op}: expected at least one Tensor, got {type(a).__name__} and {type(b).__name__}")
    a, b = promote(a, b, op, true_div=to_float)  # ints → float of their own values (uint8 / 256)
    broadcast_shape(a.shape, b.shape, op)
    if a.dtype.kind not in kinds and not ("f" in kinds and backend.is_floating(a.dtype)):  # bfloat16: kind 'V'
        names = {"b": "bool", "i": "integer", "u": "integer", "f": "floating point", "c": "complex"}
        want = " or ".join(sorted({names[k] for k in kinds}))
        raise DtypeError(f"{op}: expected {want} tensors, got {a.dtype}")
    return a, b


def _check_int_divisor(b, op: str) -> None:
    if b.dtype.kind in "biu" and bool((b.array == 0).any()):
        raise IntegerDivisionByZero(f"{op}: ZeroDivisionError: integer division by zero")


# ==================================================================================================
# atan2, hypot, lerp
# ==================================================================================================


def _safe(h: Tensor) -> Tensor:
    return where(h == 0, 1.0, h)  # only used where the numerator is 0 too: 0/1 instead of 0/0


class Atan2(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return get_array_module(a).arctan2(a, b)

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        h = _safe(hypot(a, b))  # a² + b² as h·h, without overflow for |a| = 1e20 in float32
        da = unbroadcast(dy * (b / h) / h, a.shape) if ctx.needs_input_grad[0] else None  # b / (a² + b²)
        db = unbroadcast(-dy * (a / h) / h, b.shape) if ctx.needs_input_grad[1] else None  # -a / (a² + b²)
        return da, db


@autocast("atan2")
def atan2(input, other) -> Tensor:  # noqa: A002 - PyTorch's argument names
    """The angle of the point ``(other, input)``, in ``[-π, π]``, elementwise (broadcast shape; ints
    give float32). ``d/dinput = other/(input² + other²)``, ``d/dother = -input/(input² + other²)``;
    0 at the origin (as PyTorch)."""
    return Atan2.apply(*_operands(input, other, "atan2", to_float=True))


class Hypot(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return get_array_module(a).hypot(a, b)

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        h = _safe(hypot(a, b))
        da = unbroadcast(dy * a / h, a.shape) if ctx.needs_input_grad[0] else None
        db = unbroadcast(dy * b / h, b.shape) if ctx.needs_input_grad[1] else None
        return da, db


def hypot(input, other) -> Tensor:  # noqa: A002
    """``√(input² + other²)`` without overflow or underflow; floating point only (TypeError otherwise,
    as PyTorch). ``d/dinput = input/h``, ``d/dother = other/h``. Deviation: at the origin the
    gradient is 0 (the subgradient ``abs`` uses); PyTorch gives NaN."""
    return Hypot.apply(*_operands(input, other, "hypot", kinds="f"))


class Lerp(Function):
    """``start + w·(end - start)``, evaluated as PyTorch does (exact at w = 0 and w = 1) in float64 (complex128
    for complex operands: holomorphic in all three, so the backward conjugates the derivatives)."""

    supports_complex = True

    @staticmethod
    def forward(ctx, start, end, weight):
        xp = get_array_module(start)
        ctx.save_for_backward(start, end, weight if isinstance(weight, Tensor) or hasattr(weight, "shape") else None)
        ctx.weight, ctx.shapes = weight, (start.shape, end.shape, np.shape(weight))
        wide = np.complex128 if start.dtype.kind == "c" else np.float64
        s, e, w = start.astype(wide), end.astype(wide), xp.asarray(weight, dtype=wide)
        y = _calm(lambda: xp.where(xp.abs(w) < 0.5, s + w * (e - s), e - (e - s) * (1.0 - w)))
        return _calm(lambda: y.astype(start.dtype))  # beyond float16/32's range: inf, without a warning

    @staticmethod
    def backward(ctx, dy):
        start, end, w = ctx.saved_tensors
        w = ctx.weight.conjugate() if w is None else cj(w)
        dstart = unbroadcast(dy * (1.0 - w), ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        dend = unbroadcast(dy * w, ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        dweight = unbroadcast(dy * cj(end - start), ctx.shapes[2]) if ctx.needs_input_grad[2] else None
        return dstart, dend, dweight


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:  # noqa: A002
    """Linear interpolation ``input + weight·(end - input)`` (broadcast over all three).

    ``input`` and ``end`` are floating point or complex Tensors of one dtype; ``weight`` is a number
    (complex only with complex tensors) or a Tensor of that dtype. Raises TypeError for other dtypes or types (a mismatch is also a
    RuntimeError, as PyTorch's). Gradients: ``1 - weight``, ``weight``, ``end - input``.
    """
    for name, t in (("input", input), ("end", end)):
        if not isinstance(t, Tensor):
            raise TypeError(f"lerp: {name} must be a Tensor, got {type(t).__name__}")
    if not (backend.is_floating(input.dtype) or input.dtype.kind == "c"):
        raise TypeError(f"lerp: expected a floating point or complex input, got {input.dtype}")
    if isinstance(weight, Tensor):
        others = (("end", end), ("weight", weight))
    elif isinstance(weight, (complex, np.complexfloating)) and input.dtype.kind == "c":
        others, weight = (("end", end),), complex(weight)
    elif isinstance(weight, (int, float, np.integer, np.floating)) and not isinstance(weight, bool):
        others, weight = (("end", end),), float(weight)
    else:
        raise TypeError(f"lerp: weight must be a number or a Tensor, got {type(weight).__name__}")
    for name, t in others:
        if t.dtype != input.dtype:
            raise DtypeMismatchError(f"lerp: expected dtype {input.dtype} for `{name}` but got dtype {t.dtype}")
    shape = broadcast_shape(input.shape, end.shape, "lerp")
    if isinstance(weight, Tensor):
        broadcast_shape(shape, weight.shape, "lerp")
    return Lerp.apply(input, end, weight)


# ==================================================================================================
# Closeness and equality (Python bools or bool tensors, no gradient)
# ==================================================================================================


def isclose(input: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:  # noqa: A002
    """``|input - other| <= atol + rtol·|other|`` elementwise (a bool tensor of the broadcast shape).

    Equal infinities are close; NaN is close to NaN only with ``equal_nan``. Two tensors must have
    one dtype (DtypeMismatchError, a TypeError and RuntimeError, as PyTorch). Integers are compared
    in float64 (PyTorch: float32). Raises ValueError (also a RuntimeError) for negative tolerances.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"isclose: input must be a Tensor, got {type(input).__name__}")
    if isinstance(other, Tensor) and other.dtype != input.dtype:
        raise DtypeMismatchError(f"isclose: {input.dtype} did not match {other.dtype}: both tensors need one dtype")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v < 0:
            raise OptionError(f"isclose: {name} must be greater than or equal to zero, but got {v}")
    a, b = _operands(input, other, "isclose", kinds="biufc")
    xp, a, b = get_array_module(a.array), a.array, b.array
    with np.errstate(all="ignore"):
        close = a == b
        if equal_nan and (backend.is_floating(a.dtype) or a.dtype.kind == "c"):
            close = close | (xp.isnan(a) & xp.isnan(b))
        if rtol != 0 or atol != 0:
            fa, fb = (a, b) if backend.is_floating(a.dtype) or a.dtype.kind == "c" else (a.astype(np.float64), b.astype(np.float64))
            actual = xp.abs(fa - fb)
            close = close | (xp.isfinite(actual) & (actual <= atol + xp.abs(rtol * fb)))
    return Tensor._from_op(xp.asarray(close))


def allclose(input: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:  # noqa: A002
    """``True`` when :func:`isclose` holds everywhere (a Python bool); shapes must broadcast."""
    return bool(isclose(input, other, rtol, atol, equal_nan).array.all())


def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """``True`` when both tensors have the same shape and equal values (a Python bool; dtypes
    promote, NaN never equals). Different shapes give ``False``. Raises TypeError for non-tensors."""
    for name, t in (("input", input), ("other", other)):
        if not isinstance(t, Tensor):
            raise TypeError(f"equal: {name} must be a Tensor, got {type(t).__name__}")
    if input.shape != other.shape:
        return False
    a, b = promote(input, other, "equal")
    return bool((a.array == b.array).all())


# ==================================================================================================
# copysign, xlogy, float_power
# ==================================================================================================


class Copysign(Function):
    @staticmethod
    def forward(ctx, a, b):
        xp = get_array_module(a)
        y = xp.copysign(a, b)
        ctx.factor = _calm(lambda: xp.where(a == 0, 0, y / a).astype(a.dtype, copy=False))  # ±1, 0 at a = 0
        ctx.shapes = (a.shape, b.shape)
        return y

    @staticmethod
    def backward(ctx, dy):
        da = unbroadcast(dy * Tensor._from_op(ctx.factor), ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        return da, _zeros(ctx.shapes[1], dy) if ctx.needs_input_grad[1] else None


def copysign(input, other) -> Tensor:  # noqa: A002
    """``|input|`` with the sign (bit) of ``other``, -0.0 included; ints give float32. Gradients:
    ``±1`` for input (0 where input is 0) and zeros for ``other`` (as PyTorch)."""
    return Copysign.apply(*_operands(input, other, "copysign", to_float=True))


class Xlogy(Function):
    @staticmethod
    def forward(ctx, x, y):
        xp = get_array_module(x)
        ctx.save_for_backward(x, y)
        out = _calm(lambda: x * xp.log(y))
        return xp.where((x == 0) & ~xp.isnan(y), x.dtype.type(0), out).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensors
        dx = dy_ = None
        if ctx.needs_input_grad[0]:  # log y, and 0 where x = 0 and y <= 0 (as PyTorch)
            dx = unbroadcast(xlogy(dy, y).masked_fill((x == 0) & (y <= 0), 0.0), x.shape)
        if ctx.needs_input_grad[1]:
            dy_ = unbroadcast(dy * x / y, y.shape)
        return dx, dy_


def xlogy(input, other) -> Tensor:  # noqa: A002
    """``input·log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN); ints give float32.
    Gradients: ``log(other)`` and ``input/other`` (as PyTorch)."""
    return Xlogy.apply(*_operands(input, other, "xlogy", to_float=True))


class FloatPower(Function):
    @staticmethod
    def forward(ctx, a, b):
        y = _calm(lambda: a**b)
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        a, b, y = ctx.saved_tensors
        da = db = None
        if ctx.needs_input_grad[0]:  # b·a^(b-1), 0 where b = 0 (as PyTorch's pow)
            da = unbroadcast(where(b == 0, 0.0, dy * b * a ** (b - 1.0)), a.shape)
        if ctx.needs_input_grad[1]:  # a^b·log a, 0 where a = 0 and b >= 0
            db = unbroadcast(where((a == 0) & (b >= 0), 0.0, dy * y * a.log()), b.shape)
        return da, db


def float_power(input, exponent) -> Tensor:  # noqa: A002
    """``input ** exponent`` in float64 (complex128 when either is complex), as PyTorch; a Python number stays a double
    (``float_power(x32, 2**24 + 1)`` never rounds it to float32). Gradients go back to each input's own dtype."""
    wide = np.complex128 if any(np.iscomplexobj(x.array if isinstance(x, Tensor) else x) for x in (input, exponent)) \
        else np.float64  # complex: through the complex pow, as PyTorch
    a, b = _operands(*(cast(x, wide) if isinstance(x, Tensor) else x for x in (input, exponent)), "float_power", "biufc")
    return a ** b if wide is np.complex128 else FloatPower.apply(a, b)


# ==================================================================================================
# logaddexp, logaddexp2, fmax, fmin, heaviside
# ==================================================================================================


class LogAddExp(Function):
    """``log(e^a + e^b) = max + log1p(e^-|a-b|)`` (``a`` itself when both are the same infinity)."""

    @staticmethod
    def forward(ctx, a, b, base2):
        xp = get_array_module(a)
        ctx.save_for_backward(a, b)
        ctx.base2 = base2
        with np.errstate(all="ignore"):
            m, d = xp.maximum(a, b), -xp.abs(a - b)
            y = m + (xp.log1p(xp.exp2(d)) / _LN2 if base2 else xp.log1p(xp.exp(d)))
            return xp.where(xp.isinf(a) & (a == b), a, y).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        k = _LN2 if ctx.base2 else 1.0  # d/da = 1/(1 + e^(k(b - a))) = sigmoid(k(a - b))
        da = unbroadcast(dy * ((a - b) * k).sigmoid(), a.shape) if ctx.needs_input_grad[0] else None
        db = unbroadcast(dy * ((b - a) * k).sigmoid(), b.shape) if ctx.needs_input_grad[1] else None
        return da, db, None


def logaddexp(input, other) -> Tensor:  # noqa: A002
    """``log(e^input + e^other)`` without overflow (``logaddexp(1e38, 1e38) = 1e38 + log 2``);
    floating point only. Gradients: ``sigmoid(input - other)`` and ``sigmoid(other - input)``."""
    a, b = _operands(input, other, "logaddexp", kinds="fc")  # complex: composed, ops/complex_composed.py
    return C.logaddexp(a, b) if a.dtype.kind == "c" else LogAddExp.apply(a, b, False)


def logaddexp2(input, other) -> Tensor:  # noqa: A002
    """``log₂(2^input + 2^other)`` without overflow; floating point only. Gradients:
    ``1/(1 + 2^(other - input))`` and ``1/(1 + 2^(input - other))``."""
    return LogAddExp.apply(*_operands(input, other, "logaddexp2", kinds="f"), True)


class FMaxMin(Function):
    """``fmax``/``fmin``: NaN only where both are NaN. The gradient goes to ``a`` where it is chosen,
    ties included (``a >= b`` for fmax, or ``b`` NaN), else to ``b`` (as PyTorch)."""

    @staticmethod
    def forward(ctx, a, b, is_max):
        xp = get_array_module(a)
        ctx.to_a = ((a >= b) if is_max else (a <= b)) | xp.isnan(b)
        ctx.shapes = (a.shape, b.shape)
        return xp.where(ctx.to_a, a, b)  # (not xp.fmax: on a tie of -0.0 and 0.0 PyTorch keeps a)

    @staticmethod
    def backward(ctx, dy):
        to_a = Tensor._from_op(ctx.to_a.astype(dy.dtype))
        da = unbroadcast(dy * to_a, ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        db = unbroadcast(dy * (1.0 - to_a), ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return da, db, None


def fmax(input, other) -> Tensor:  # noqa: A002
    """Elementwise maximum that ignores NaN (NaN only where both are NaN); any real dtype."""
    return FMaxMin.apply(*_operands(input, other, "fmax"), True)


def fmin(input, other) -> Tensor:  # noqa: A002
    """Elementwise minimum that ignores NaN (NaN only where both are NaN); any real dtype."""
    return FMaxMin.apply(*_operands(input, other, "fmin"), False)


class Heaviside(Function):
    @staticmethod
    def forward(ctx, x, v):
        xp = get_array_module(x)
        ctx.at_zero, ctx.shapes = x == 0, (x.shape, v.shape)
        y = xp.where(ctx.at_zero, v, x > 0).astype(x.dtype, copy=False)
        return xp.where(xp.isnan(x), x, y) if backend.is_floating(x.dtype) else y

    @staticmethod
    def backward(ctx, dy):
        dv = unbroadcast(dy * Tensor._from_op(ctx.at_zero.astype(dy.dtype)), ctx.shapes[1])
        return _zeros(ctx.shapes[0], dy), dv if ctx.needs_input_grad[1] else None


def heaviside(input: Tensor, values) -> Tensor:  # noqa: A002
    """0 where ``input < 0``, ``values`` where ``input == 0``, 1 where ``input > 0``; one dtype for
    both (DtypeMismatchError, a TypeError and RuntimeError, as PyTorch). Deviations: NaN input gives
    NaN (NumPy; PyTorch gives 0), and the gradients are defined (0 for ``input``, ``[input == 0]``
    for ``values``) where PyTorch raises "derivative not implemented"."""
    if not isinstance(input, Tensor):
        raise TypeError(f"heaviside: input must be a Tensor, got {type(input).__name__}")
    if isinstance(values, Tensor) and values.dtype != input.dtype:
        raise DtypeMismatchError(
            f"heaviside is not yet implemented for tensors with different dtypes: {input.dtype} and {values.dtype}")
    return Heaviside.apply(*_operands(input, values, "heaviside"))
