"""Helpers shared by the op families: operand promotion, broadcasting checks, axis handling."""

from __future__ import annotations

import functools
import inspect
import numbers

import numpy as np

from .. import backend
from ..autograd.function import _anomaly
from ..errors import DtypeError, OptionError, ShapeError
from ..tensor import Tensor
from .conversion import cast
from .opmath import HALF_DTYPES


def is_scalar(x) -> bool:
    return isinstance(x, (numbers.Number, np.generic)) or (isinstance(x, np.ndarray) and x.ndim == 0)


def axis_alias(fn):
    """Let ``fn`` take ``axis=`` for ``dim=``, as PyTorch's functions do (NumPy's name); both is a TypeError.

    A reduction (``fn`` has ``keepdim``) also takes NumPy's ``keepdims=`` (see :func:`keepdims_alias`).
    """
    has_keepdim = "keepdim" in inspect.signature(fn).parameters

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "axis" in kwargs:
            if "dim" in kwargs:
                raise TypeError(f"{fn.__name__}(): got both dim= and its alias axis=; give one")
            kwargs["dim"] = kwargs.pop("axis")
        if has_keepdim and "keepdims" in kwargs:
            _keepdims_to_keepdim(fn.__name__, kwargs)
        return fn(*args, **kwargs)

    return wrapper


def keepdims_alias(fn):
    """Let the reduction ``fn`` take ``keepdims=`` for ``keepdim=``: NumPy's name, which PyTorch accepts
    (``x.sum(1, keepdims=True)``); both is a TypeError, as in PyTorch."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "keepdims" in kwargs:
            _keepdims_to_keepdim(fn.__name__, kwargs)
        return fn(*args, **kwargs)

    return wrapper


def _keepdims_to_keepdim(name: str, kwargs: dict) -> None:
    if "keepdim" in kwargs:
        raise TypeError(f"{name}(): got both keepdim= and its alias keepdims=; give one")
    kwargs["keepdim"] = kwargs.pop("keepdims")


# Ops for which PyTorch refuses (RuntimeError) a Python int outside a small-int tensor's range
# instead of wrapping it (``uint8_t ** 300``, ``torch.where(c, uint8_t, 300)``)
_NO_WRAP = frozenset({"pow", "where", "maximum", "minimum", "fmax", "fmin", "clamp"})


def promote(a, b, op: str, true_div: bool = False):
    """Turn the operands of a binary op into Tensors of one dtype, as PyTorch promotes them.

    At least one of ``a`` and ``b`` is a Tensor. Python/NumPy scalars and 0-d tensors do not widen a
    dimensioned tensor of the same category (a float32 tensor times ``np.sqrt(2)`` stays float32).
    Tensors whose dtype changes are cast with a differentiable ``cast``. A Python int outside the
    range of a small integer result dtype wraps modulo that range, as PyTorch's C++ cast does
    (``uint8 [1, 2] + 300 -> [45, 46]``, ``int8 * 1000`` wraps); for ``pow``/``where``/``clamp``/
    ``maximum``/``minimum`` it is a RuntimeError, as PyTorch; beyond int64 it is NumPy's OverflowError
    (PyTorch's too). Comparisons widen such a tensor before calling this (``comparison._widen``).

    ``true_div`` (``div``, ``true_divide``): a bool/integer result dtype becomes the default float dtype
    and each operand is cast to it from its own value, never through the integer dtype (``uint8 / 256``
    divides by 256.0, not by ``uint8(256) = 0``; ``uint8 / tensor(-7)`` by -7.0), as PyTorch.
    """
    a_t, b_t = isinstance(a, Tensor), isinstance(b, Tensor)
    if a_t and b_t and a.array.dtype == b.array.dtype and not (true_div and a.array.dtype.kind in "biu"):
        return a, b
    if not (a_t or b_t):
        if not (isinstance(a, numbers.Number) and isinstance(b, numbers.Number)):
            raise TypeError(f"{op}: expected a Tensor or two numbers, got {type(a).__name__} and {type(b).__name__}")
        # torch.add(2.0, 3.0): the first number becomes a 0-d tensor of its PyTorch dtype, as PyTorch does
        dt = (np.dtype(np.bool_) if isinstance(a, (bool, np.bool_)) else np.dtype(np.int64)
              if isinstance(a, numbers.Integral) else backend.default_float_dtype())
        a, a_t = Tensor._from_op(np.asarray(a, dtype=dt)), True
    # Fast path for the most common case, a float tensor with a Python number: the number takes
    # the tensor's dtype (a NumPy scalar, which CuPy also accepts as an operand).
    if a_t and type(b) in (float, int) and backend.is_floating(a.array.dtype):
        return a, Tensor._from_op(a.array.dtype.type(b))
    if b_t and type(a) in (float, int) and backend.is_floating(b.array.dtype):
        return Tensor._from_op(b.array.dtype.type(a)), b
    ref = a if a_t else b
    if not (a_t or is_scalar(a) or hasattr(a, "shape")) or not (b_t or is_scalar(b) or hasattr(b, "shape")):
        bad = a if not a_t else b
        raise TypeError(f"{op}: unsupported operand of type {type(bad).__name__}; expected a Tensor or a number")

    def info(x, is_t):
        """(dtype, is 0-d, is a number): PyTorch ranks tensors, then 0-d tensors, then numbers."""
        if is_t:
            return x.dtype, x.ndim == 0, False
        arr = np.asarray(x)
        if arr.ndim == 0:
            number = not isinstance(x, np.ndarray)  # Python and NumPy scalars, not 0-d arrays
            if isinstance(x, (bool, np.bool_)):
                return np.dtype(np.bool_), True, number
            if isinstance(x, numbers.Integral):
                return np.dtype(np.int64), True, number
            if isinstance(x, numbers.Real) and not isinstance(x, np.generic):
                return np.dtype(np.float64), True, number
            return arr.dtype, True, number
        return arr.dtype, False, False

    (a_dt, a_sc, a_num), (b_dt, b_sc, b_num) = info(a, a_t), info(b, b_t)
    for x, x_t, x_dt in ((a, a_t, a_dt), (b, b_t, b_dt)):
        if not x_t and x_dt.kind not in "biufc" and x_dt != backend.BFLOAT16:  # Decimal, str arrays, objects
            raise TypeError(f"{op}: unsupported operand of type {type(x).__name__} (NumPy dtype {x_dt}); "
                            "expected a Tensor, a bool/int/float/complex number or a numeric array")
    dt = backend.result_dtype(a_dt, a_sc, b_dt, b_sc, a_is_number=a_num, b_is_number=b_num)
    if true_div and dt.kind in "biu":
        dt = backend.default_float_dtype()
        for x in (a, b):  # as the int dtype would have: PyTorch's OverflowError, not a quiet float
            if type(x) is int and not -(2**63) <= x < 2**64:
                raise OverflowError(f"{op}: int too big to convert: {x} is outside [-2**63, 2**64)")
    return _operand(a, a_t, dt, ref, op), _operand(b, b_t, dt, ref, op)


def number_operands(a, b, scalar_opmath: bool = False):
    """The fast path of ``add``/``sub``/``mul``/``div`` for a float Tensor with a Python number
    (``x * 2``, ``1 - x``): ``(a, b)`` ready for the op's ``apply``, or None (then :func:`promote`).

    The number becomes a NumPy scalar of the tensor's dtype, the scalar ``promote`` would wrap in a
    constant Tensor, and is passed to ``apply`` as it is: ``forward`` receives the same array and
    scalar, and a scalar it saves is wrapped in a constant Tensor when read (``Node._saved``). A
    scalar broadcasts with any shape, so there is no shape check. Anomaly mode takes the general
    path, so that its record lists the scalar as a 0-d tensor input, as before.

    ``scalar_opmath`` (``mul``, ``div``): for a float16 or bfloat16 tensor the number becomes a float32
    scalar, not one of the tensor's dtype, as PyTorch's CPU kernels read a scalar operand in their
    float32 "opmath" (``x * 0.1``: ``x·0.1f`` rounded once, not ``x·half(0.1)``: a third of float16
    results differed by one unit in the last place). The op then computes in float32 and rounds to the
    tensor's dtype (``autograd/bfloat16.py``; a NumPy scalar does not take part in that promotion).
    ``add``/``sub`` round the number to the tensor's dtype, as PyTorch does there.
    """
    if type(b) in _NUMBERS and isinstance(a, Tensor):
        dt = a.array.dtype
        if backend.is_floating(dt) and not _anomaly["enabled"]:
            return a, (_F32(b) if scalar_opmath and dt in _HALF else dt.type(b))
    elif type(a) in _NUMBERS and isinstance(b, Tensor):
        dt = b.array.dtype
        if backend.is_floating(dt) and not _anomaly["enabled"]:
            return (_F32(a) if scalar_opmath and dt in _HALF else dt.type(a)), b
    return None


_F32 = np.float32
_HALF = HALF_DTYPES


_NUMBERS = (float, int)  # exact types: a bool, or a NumPy scalar, takes promote's general path


def _wrap_int(x, dt, op: str):
    """A Python int ``x`` outside the range of the integer dtype ``dt`` wrapped into it, as PyTorch."""
    lo, hi = _int_range(dt)
    if lo <= x <= hi or not -(2**63) <= x < 2**63:
        return x  # in range, or beyond int64: NumPy raises OverflowError (as PyTorch)
    if op in _NO_WRAP:
        raise RuntimeError(f"{op}: value {x} cannot be converted to type {dt} without overflow "
                           f"(expected a value in [{lo}, {hi}])")
    return (x - lo) % (1 << (8 * dt.itemsize)) + lo


@functools.cache
def _int_range(dt) -> tuple:
    """``(min, max)`` of the integer dtype ``dt`` as Python ints (``np.iinfo`` is slow to build per op)."""
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def _operand(x, is_t, dt, ref, op: str = ""):
    if is_t:
        return x if x.dtype == dt else cast(x, dt)
    if isinstance(x, int) and not isinstance(x, bool) and dt.kind in "iu":
        x = _wrap_int(x, dt, op)
    xp = backend.get_array_module(ref.array)
    return Tensor._from_op(xp.asarray(x, dtype=dt))


def broadcast_shape(a_shape, b_shape, op: str) -> tuple:
    if a_shape == b_shape or not b_shape:
        return a_shape
    if not a_shape:
        return b_shape
    try:
        return tuple(np.broadcast_shapes(a_shape, b_shape))
    except ValueError:
        raise ShapeError(  # a RuntimeError (as PyTorch) and a ValueError
            f"{op}: shapes {tuple(a_shape)} and {tuple(b_shape)} do not broadcast (trailing dimensions "
            "must be equal or 1)"
        ) from None


def normalize_dims(dim, ndim: int, op: str, *, empty_is_all: bool = False) -> tuple:
    """``dim`` (None, an int or a sequence) as a sorted tuple of non-negative axes.

    ``empty_is_all``: an empty ``dim`` (``()`` or ``[]``) means every axis, as PyTorch's reductions
    (``sum``, ``mean``, ``amax``, ``var``, ``norm``, ``count_nonzero``, ...) read it; otherwise it
    names no axis (``squeeze(x, ())`` changes nothing, ``any``/``all`` return the input as bool).
    """
    if dim is None or (empty_is_all and isinstance(dim, (tuple, list)) and not dim):
        return tuple(range(ndim))
    if isinstance(dim, numbers.Integral):
        dims = (dim,)
    elif isinstance(dim, (tuple, list)):
        dims = tuple(dim)
    else:
        raise TypeError(f"{op}: dim must be an int or a tuple of ints, got {dim!r}")
    out = []
    for d in dims:
        if not isinstance(d, numbers.Integral):
            raise TypeError(f"{op}: dim must be an int or a tuple of ints, got {dim!r}")
        lo = -max(ndim, 1)
        if not lo <= d < max(ndim, 1):
            raise IndexError(
                f"{op}: dimension {d} is out of range for a tensor with {ndim} dimension(s) "
                f"(expected a value in [{lo}, {max(ndim, 1) - 1}])"
            )
        out.append(int(d) % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: dim {dim!r} names an axis twice")
    return tuple(sorted(out)) if ndim > 0 else ()


def bool_dim(dim, unbiased, keepdim, correction, op):
    """PyTorch's ``(input, unbiased)`` overload: ``std(x, False)`` is the biased std over every element."""
    if not isinstance(dim, bool):
        return dim, unbiased
    if unbiased is not None or keepdim or correction is not None:
        raise TypeError(f"{op}: a bool second argument is unbiased ({op}(input, unbiased), as PyTorch), which takes "
                        f"no dim, keepdim or correction; got {dim!r}; pass unbiased= and dim= by name")
    return None, dim


def normalize_dim(dim, ndim: int, op: str) -> int:
    if not isinstance(dim, numbers.Integral):
        raise TypeError(f"{op}: dim must be an int, got {dim!r}")
    axes = normalize_dims(dim, ndim, op)  # a 0-d tensor takes dim 0 or -1 (checked there), as PyTorch
    return axes[0] if ndim > 0 else 0


def refuse_complex_input(op: str, *operands) -> None:
    """A DtypeError (a RuntimeError) for a complex tensor given to an op written for real numbers only (its
    composition would drop or mishandle the imaginary part): never a silently real or wrong result."""
    for x in operands:
        if isinstance(x, Tensor) and x.dtype.kind == "c":
            raise DtypeError(f"{op}: complex tensors are not supported here (got {x.dtype}); docs/complex.md lists "
                             "the ops that take them")


def refuse_complex(op: str, *operands) -> None:
    """PyTorch's refusal of an ordering op (``<``, ``max``, ``sort``, ``clamp``, ...) on complex numbers, which
    have no order: a DtypeError (a RuntimeError) naming the op and the dtype, never NumPy's lexicographic order."""
    for x in operands:
        if isinstance(x, Tensor) and x.dtype.kind == "c" or isinstance(x, complex):
            dt = x.dtype if isinstance(x, Tensor) else "complex"
            raise DtypeError(f"{op}: not supported for complex tensors (got {dt}): complex numbers have no order; "
                             "compare their .abs() or .real instead")


def require_float(x: Tensor, op: str) -> None:
    if not hasattr(x, "dtype"):  # a string, a list: PyTorch's TypeError, not an AttributeError from below
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if not backend.is_floating(x.dtype):
        raise DtypeError(f"{op}: expected a floating point tensor (float16, float32 or float64), got {x.dtype}")


def float_input(x: Tensor, op: str, complex_ok: bool = False) -> Tensor:
    """``x`` for float-only math: an integer or bool tensor as the default float dtype (``sqrt(tensor([4]))``
    is float32 ``[2.]``, as PyTorch); a complex one as it is when ``complex_ok``; any other non-float dtype
    raises TypeError, as :func:`require_float`."""
    if isinstance(x, Tensor):
        kind = x.array.dtype.kind
        if kind == "f":  # the common case, what require_float accepts
            return x
        if kind in "biu":
            return cast(x, backend.default_float_dtype())
        if complex_ok and kind == "c":
            return x
    require_float(x, op)
    return x


def alpha_scaled(a, b, alpha, op: str):
    """``alpha * b`` for ``add``/``sub(..., alpha=)``, after PyTorch's checks against the result dtype of ``a`` and
    ``b`` (``alpha_check``): a bool alpha only for a bool result, a float or complex alpha not for an integer or bool
    result, a complex alpha only for a complex result (RuntimeError each); a non-number alpha is a TypeError. A bool
    result adds ``b`` where ``alpha`` is nonzero (PyTorch converts alpha to bool: ``add(t, t, alpha=2)`` is bool)."""
    if type(alpha) is int and alpha == 1:  # the default: nothing to check or scale
        return b
    if isinstance(alpha, np.bool_):  # PyTorch reads a NumPy bool as a float (np.True_ is 1.0 there)
        alpha = float(alpha)
    is_bool = isinstance(alpha, bool)
    if not (is_bool or isinstance(alpha, numbers.Number)):  # PyTorch's TypeError, as its signature
        raise TypeError(f"{op}(): argument 'alpha' must be a Number, got {type(alpha).__name__}")
    dt = promote(a, b, op)[0].dtype
    if is_bool and dt.kind != "b":
        raise RuntimeError(f"{op}: Boolean alpha only supported for Boolean results (got alpha={alpha!r} for a {dt} "
                           "result; expected a number)")
    if not (backend.is_floating(dt) or dt.kind == "c") and not (is_bool or isinstance(alpha, numbers.Integral)):
        raise RuntimeError(f"{op}: for integral input tensors, argument alpha must not be a floating point number, "
                           f"got alpha={alpha!r}")
    if dt.kind != "c" and not isinstance(alpha, numbers.Real) and not is_bool:
        raise RuntimeError(f"{op}: for non-complex input tensors, argument alpha must not be a complex number, "
                           f"got alpha={alpha!r} for a {dt} result")
    if dt.kind == "b":  # alpha as a bool, as PyTorch: b itself, or no b at all
        return b if alpha else promote(a, b, op)[1] & False
    return b if alpha == 1 and not isinstance(alpha, float) else b * alpha


def no_bool(op: str):
    """Raise PyTorch's error for an op it does not define on bool tensors (``abs``)."""
    from ..errors import DtypeError  # noqa: PLC0415

    raise DtypeError(f"\"{op}_cpu\" not implemented for 'Bool'")


def refuse_bool_neg(x):
    """``x``, or PyTorch's RuntimeError for ``-x`` on a bool tensor (NumPy's own error names NumPy)."""
    if isinstance(x, Tensor) and x.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    return x


def refuse_bool_sub(a, b) -> None:
    """Raise PyTorch's RuntimeError for ``-`` with a bool operand (a tensor or a Python bool)."""
    bools = [isinstance(v, (bool, np.bool_)) or (isinstance(v, Tensor) and v.dtype.kind == "b") for v in (a, b)]
    if bools[0] and bools[1]:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if bools[0] or bools[1]:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def int_pow(a, b):
    """Integer ``a ** b`` with tensor exponents, as PyTorch's integer kernel: a negative exponent gives
    ``1 / a^|b|`` truncated to an integer -- 1 for a base of 1, ±1 for -1 (by the exponent's parity),
    0 for every other base (0 included). NumPy refuses negative integer powers outright."""
    xp = backend.get_array_module(a)
    neg = b < 0
    if not neg.any():
        return a**b
    pos = a ** xp.where(neg, 0, b)  # (B...) any value where b < 0, replaced below
    minus_one = xp.where(b % 2 == 0, 1, -1).astype(pos.dtype)
    at_neg = xp.where(a == 1, 1, xp.where(a == -1, minus_one, 0)).astype(pos.dtype)
    return xp.where(neg, at_neg, pos)


def check_int_exponent(a: Tensor, b) -> None:
    """Integers to negative integer powers have no integer result: PyTorch's RuntimeError; so is a Python int
    exponent outside the base's integer dtype (``int8 ** 300``: PyTorch converts the exponent to int8_t)."""
    if a.dtype.kind in "biu" and np.asarray(b.array if isinstance(b, Tensor) else b).dtype.kind in "iu":
        if bool((backend.get_array_module(b.array).asarray(b.array) < 0).any() if isinstance(b, Tensor) else b < 0):
            raise OptionError(f"pow: Integers to negative integer powers are not allowed (base {a.dtype}, "
                              f"exponent {b.dtype if isinstance(b, Tensor) else b!r}); use a float base")
    if a.dtype.kind in "iu" and isinstance(b, int):
        _wrap_int(b, a.dtype, "pow")  # RuntimeError for pow (never NumPy's OverflowError)
