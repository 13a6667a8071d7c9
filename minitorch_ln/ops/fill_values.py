"""The check PyTorch makes on a Python number written into a tensor (``c10::checked_convert``).

``t[i] = v``, ``masked_fill(mask, v)``, ``index_fill(dim, index, v)`` and ``full(size, v, dtype=...)`` store a
number in a tensor's dtype. NumPy's ``asarray(v, dtype)`` would store ``None`` as NaN, parse the string ``"1.5"``,
drop an imaginary part, store ``1e40`` as ``inf`` in float32 and refuse ``-1`` for uint8 with its own
OverflowError; PyTorch instead refuses what the dtype cannot hold. :func:`checked_number` is that rule, once:

- not a number (``None``, a string, bytes, an object): TypeError, naming the type and the dtype;
- bool dtype: any number (its truth value; NaN and ``1j`` are True);
- a complex number into a real dtype: its real part when the imaginary part is 0, else an overflow error;
- into an integer dtype: an integer in ``[min, max]`` (for unsigned dtypes ``[-max, max]``, a negative one
  wrapping modulo ``2**bits``: ``uint8 -1`` is 255, as PyTorch); a float truncated toward 0 when it lies in
  ``[min, max]`` (``int8 1.5`` is 1); NaN, ``±inf`` or anything outside: an overflow error;
- into a float dtype: a finite number that rounds to ``±inf`` in float32 (float64 for float64/complex128) is an
  overflow error (``1e40`` into float32, float16 or bfloat16); ``inf`` and NaN themselves are stored. float16 and
  bfloat16 are checked against float32's range, as PyTorch (it converts through float): ``70000`` into float16
  is ``inf``, the correctly rounded cast. Complex dtypes: the same, per part.

The overflow error is :class:`~minitorch_ln.errors.ValueOverflowError`, a RuntimeError (PyTorch's class) and an
OverflowError (Python's, and what NumPy raised here before).
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from .. import backend
from ..errors import ValueOverflowError


def checked_number(value, dtype, op: str):
    """``value`` (a Python or NumPy number, or a 0-d array) as it is stored in ``dtype``, ready for
    ``xp.asarray(value, dtype)``; a NumPy array with dimensions is returned as it is.

    Raises:
        TypeError: ``value`` is not a number.
        ValueOverflowError (RuntimeError, OverflowError): ``dtype`` cannot hold it (see the module docstring).
    """
    dt = np.dtype(dtype)
    if isinstance(value, np.ndarray):  # a 0-d array is its number; a larger one is left to the caller's asarray
        return value if value.ndim else checked_number(value[()], dt, op)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if not isinstance(value, (numbers.Number, np.number)):
        raise TypeError(f"{op}: can't assign a {type(value).__name__} to a {dt} tensor (expected a number, "
                        "or a Tensor)")
    if dt.kind == "b":
        return bool(value)
    if isinstance(value, (complex, np.complexfloating)) and dt.kind != "c":
        if value.imag != 0:
            raise _overflow(value, dt, op, "a complex number with a nonzero imaginary part into a real tensor")
        value = value.real
    if dt.kind in "iu":
        lo, hi = _int_range(dt)
        if isinstance(value, (numbers.Integral, np.integer)):
            v = int(value)
            if not (-hi if dt.kind == "u" else lo) <= v <= hi:
                raise _overflow(value, dt, op, f"expected an integer in [{-hi if dt.kind == 'u' else lo}, {hi}]")
            return v % (hi + 1) if v < 0 and dt.kind == "u" else v
        v = float(value)
        if not (math.isfinite(v) and lo <= v <= hi):
            raise _overflow(value, dt, op, f"expected a finite number in [{lo}, {hi}]")
        return int(v)  # truncated toward 0, as C's conversion
    if dt.kind == "c" or backend.is_floating(dt):  # PyTorch checks float32's range below float64 (see above)
        part = np.dtype(np.float64 if dt in (np.float64, np.complex128) else np.float32)
        for v in (complex(value).real, complex(value).imag):  # an int beyond float64: Python's OverflowError
            if math.isfinite(v) and np.isinf(_stored(v, part)):
                raise _overflow(value, dt, op, f"its magnitude rounds to inf in {part}")
    return value


def _stored(v: float, dt):
    with np.errstate(over="ignore"):
        return np.asarray(v, dtype=np.float64).astype(dt)


def _overflow(value, dt, op: str, why: str) -> ValueOverflowError:
    return ValueOverflowError(f"{op}: value {value!r} cannot be converted to type {dt} without overflow ({why})")


@functools.cache
def _int_range(dt) -> tuple:
    info = np.iinfo(dt)
    return int(info.min), int(info.max)
