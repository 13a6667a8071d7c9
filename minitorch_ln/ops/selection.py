"""Selection: ``maximum``, ``minimum``, ``clamp``, ``where``, ``masked_fill``.

Each picks, elementwise, one of its inputs (or a constant); the gradient goes to the input that
was picked (split evenly on ties of ``maximum``/``minimum``, as PyTorch).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError
from ..tensor import Tensor
from ._util import broadcast_shape, promote, refuse_complex
from .fill_values import checked_number
from .shape import unbroadcast

__all__ = ["clamp", "clamp_max", "clamp_min", "masked_fill", "maximum", "minimum", "where"]


class Maximum(Function):
    """Elementwise max (min with ``is_max=False``). On ties the gradient is split evenly between both inputs
    (as PyTorch)."""

    @staticmethod
    def forward(ctx, a, b, is_max):
        xp = get_array_module(a)
        ctx.shapes = (a.shape, b.shape)
        ctx.weight_a = (((a > b) if is_max else (a < b)) + 0.5 * (a == b)).astype(a.dtype)
        y = xp.maximum(a, b) if is_max else xp.minimum(a, b)
        # on a tie the first argument, as PyTorch: maximum(-0.0, 0.0) is -0.0 (NumPy gives the second)
        return xp.where(y == a, a, y) if a.dtype.kind == "f" else y

    @staticmethod
    def backward(ctx, dy):
        wa = Tensor._from_op(ctx.weight_a)
        da = unbroadcast(dy * wa, ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        db = unbroadcast(dy * (1.0 - wa), ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return da, db, None


def maximum(a, b) -> Tensor:
    """Elementwise maximum of ``a`` and ``b``; on ties each input gets half the gradient (as PyTorch).

    Shapes broadcast (e.g. ``(3, 1, 5)`` with ``(4, 5)`` → ``(3, 4, 5)``); dtypes promote as PyTorch
    (a float32 tensor with a Python/NumPy scalar stays float32). Raises ValueError naming both shapes
    when they do not broadcast, TypeError for an operand that is not a Tensor or a number.
    """
    refuse_complex("maximum", a, b)
    a, b = promote(a, b, "maximum")
    broadcast_shape(a.shape, b.shape, "maximum")
    return Maximum.apply(a, b, True)


def minimum(a, b) -> Tensor:
    """Elementwise min, arguments and tie rule as :func:`maximum` (not ``-maximum(-a, -b)``: an integer
    dtype's minimum has no negation, and unsigned ones wrap)."""
    refuse_complex("minimum", a, b)
    a, b = promote(a, b, "minimum")
    broadcast_shape(a.shape, b.shape, "minimum")
    return Maximum.apply(a, b, False)


class Clamp(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        xp = get_array_module(x)
        ctx.mask = xp.ones(x.shape, dtype=bool)
        if lo is not None:
            ctx.mask &= x >= lo
        if hi is not None:
            ctx.mask &= x <= hi
        y = xp.clip(x, lo, hi).astype(x.dtype, copy=False)
        # PyTorch keeps x where no bound applies (x < lo ? lo : x), so clamp(-0.0, min=0) is -0.0; NumPy's clip
        # gives the bound's +0 there (its maximum path, float32/64). Only a zero bound with lo <= 0 <= hi meets it
        if 0 in (lo, hi) and (lo is None or lo <= 0) and (hi is None or hi >= 0) and (at := x == 0).any():
            y = xp.where(at, x, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        # a select (as PyTorch's): an inf or NaN dy where x was clamped gives 0, not NaN
        return dy.masked_fill(Tensor._from_op(~ctx.mask), 0), None, None


def clamp(x: Tensor, min=None, max=None) -> Tensor:  # noqa: A002
    """Limit values to [min, max]; the gradient passes where min <= x <= max (as PyTorch).

    The result has PyTorch's result type of ``x`` and the bounds: ``tensor([1, 5]).clamp(max=2.5)`` is
    float32 ``[1.0, 2.5]``. Raises RuntimeError for an int bound outside an integer ``x``'s dtype."""
    refuse_complex("clamp", x, min, max)
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    for bound in (min, max):  # the result type as PyTorch's: an integer tensor with a float bound is float
        if bound is not None and not isinstance(bound, Tensor):
            x = _bound_type(x, bound)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = x
        if min is not None:
            out = maximum(out, min)
        if max is not None:
            out = minimum(out, max)
        return out
    return Clamp.apply(x, min, max)


class ClampMin(Clamp):
    """``clamp`` with only a lower bound, its own node so that ``grad_fn`` prints ``<ClampMinBackward0>``."""


class ClampMax(Clamp):
    """``clamp`` with only an upper bound (``<ClampMaxBackward0>``)."""


def clamp_min(input: Tensor, min) -> Tensor:  # noqa: A002 - PyTorch's argument names
    """``max(input, min)`` elementwise (``torch.clamp_min``): ``clamp(input, min=min)``.

    Args:
        input: a Tensor, any shape and dtype.
        min: a number, or a Tensor broadcastable against ``input``.
    Returns:
        a Tensor of ``input``'s shape; the gradient passes where ``input >= min``.
    Raises:
        TypeError: ``input`` is not a Tensor, or ``min`` is None.
    """
    _check_bound_args(input, min, "clamp_min", "min")
    if isinstance(min, Tensor):
        return clamp(input, min, None)
    return ClampMin.apply(_bound_type(input, min), min, None)  # tensor([1, 5]).clamp_min(0.5): float32, as PyTorch


def clamp_max(input: Tensor, max) -> Tensor:  # noqa: A002
    """``min(input, max)`` elementwise (``torch.clamp_max``): ``clamp(input, max=max)``; the gradient
    passes where ``input <= max``. Raises TypeError as :func:`clamp_min`."""
    _check_bound_args(input, max, "clamp_max", "max")
    return clamp(input, None, max) if isinstance(max, Tensor) else ClampMax.apply(_bound_type(input, max), None, max)


def _bound_type(x: Tensor, bound) -> Tensor:
    """``x`` in PyTorch's result type of ``x`` and a number bound: an integer ``x`` with a float bound is float."""
    return promote(x, bound, "clamp")[0] if x.dtype.kind in "biu" else x


def _check_bound_args(input, bound, op: str, name: str) -> None:  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    refuse_complex(op, input, bound)
    if bound is None or not isinstance(bound, (Tensor, numbers.Number)):
        raise TypeError(f"{op}(): argument '{name}' must be a number or a Tensor, "
                        f"not {type(bound).__name__}")


class Where(Function):
    supports_complex = True

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


_NO_ARG = object()


def _scalar_dtype(v):
    """The dtype PyTorch gives a Python number (bool, int64, or the default float dtype)."""
    if isinstance(v, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(v, np.generic):
        return backend.as_dtype(v.dtype)
    if isinstance(v, numbers.Integral):
        return np.dtype(np.int64)
    if isinstance(v, numbers.Real):
        return backend.default_float_dtype()
    raise TypeError(f"where: expected input and other to be Tensors or numbers (bool, int, float), got "
                    f"{type(v).__name__}")


def where(condition, input=_NO_ARG, other=_NO_ARG):  # noqa: A002 - PyTorch's argument names
    """``input`` where ``condition`` holds, else ``other``, broadcast together (``torch.where``).

    ``input`` and ``other`` may be Tensors or Python numbers; dtypes promote as PyTorch's (two
    numbers: bool with bool is bool, ints give int64, a float gives the default float dtype). The
    gradient goes to the input that was picked. ``where(condition)`` alone is
    ``nonzero(condition, as_tuple=True)``: a tuple of int64 index tensors, one per dimension (a 0-d
    condition counts as 1-d, as PyTorch).

    Raises:
        TypeError: a non-bool condition (with input and other), only one of input and other, or an
            operand that is neither a Tensor nor a number.
        ShapeError (a RuntimeError and ValueError): shapes that do not broadcast.
    """
    if input is _NO_ARG and other is _NO_ARG:
        return _where_nonzero(condition)
    if input is _NO_ARG or other is _NO_ARG:
        raise TypeError("where: give both input and other, or neither (where(condition) is nonzero(condition, "
                        "as_tuple=True))")
    cond = condition.array if isinstance(condition, Tensor) else condition
    cond = cond if hasattr(cond, "dtype") and hasattr(cond, "shape") else np.asarray(cond)
    if cond.dtype == np.uint8:  # accepted, deprecated, as PyTorch
        warnings.warn("where received a uint8 condition tensor; use a boolean condition instead", UserWarning)
        cond = cond.astype(np.bool_)
    if cond.dtype != np.bool_:
        raise DtypeError(f"where: condition must be a bool tensor, got dtype {cond.dtype}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):  # two numbers: 0-d tensors on cond's device
        dt = backend.result_dtype(_scalar_dtype(input), True, _scalar_dtype(other), True)
        xp = get_array_module(cond)
        input, other = Tensor._from_op(xp.asarray(input, dtype=dt)), Tensor._from_op(xp.asarray(other, dtype=dt))
    a, b = promote(input, other, "where")
    broadcast_shape(broadcast_shape(cond.shape, a.shape, "where"), b.shape, "where")
    cond = _mask_on_device(cond, isinstance(condition, Tensor), a, "where")
    return Where.apply(cond, a, b)


def _where_nonzero(condition):
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(condition): expected a Tensor, got {type(condition).__name__}")
    arr = condition.array
    xp = get_array_module(arr)
    idx = xp.nonzero(arr.reshape(1) if arr.ndim == 0 else arr)
    return tuple(Tensor._from_op(i.astype(np.int64, copy=False)) for i in idx)


def masked_fill(x: Tensor, mask, value) -> Tensor:
    """``x`` with ``value`` where ``mask`` is True; ``mask`` broadcasts to ``x``'s shape."""
    m = mask.array if isinstance(mask, Tensor) else mask
    if getattr(m, "dtype", None) != np.bool_:
        raise DtypeError(f"masked_fill: mask must be a bool tensor, got {getattr(m, 'dtype', type(m).__name__)}")
    broadcast_shape(x.shape, m.shape, "masked_fill")  # raises unless they broadcast; the result takes the broadcast
    # shape, as PyTorch's (masked_fill_ keeps the tensor's shape: Tensor._inplace refuses a larger result)
    if isinstance(value, Tensor):
        if value.dtype.kind == "c" and x.dtype.kind != "c":
            raise RuntimeError(f"masked_fill: value cannot be converted to type {x.dtype} without overflow: a complex "
                               "value into a real tensor would drop its imaginary part")
        if value.ndim != 0:
            raise ValueError(f"masked_fill: value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
        value = value.to(x.dtype)
    else:  # PyTorch's check of the number against x's dtype (ops/fill_values.py): 1000 into int8, None, 1e40 into f32
        value = Tensor._from_op(get_array_module(x.array).asarray(checked_number(value, x.dtype, "masked_fill"),
                                                                  dtype=x.dtype))
    m = _mask_on_device(m, isinstance(mask, Tensor), x, "masked_fill")
    return Where.apply(m, value, x)


