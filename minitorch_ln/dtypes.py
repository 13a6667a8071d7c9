"""The dtype API of ``torch``: ``finfo``, ``iinfo``, ``get_default_dtype``, ``set_default_dtype``,
``promote_types``, ``result_type``, ``can_cast``, and the ``bfloat16`` decision.

A minitorch_ln dtype is a ``numpy.dtype`` (``mt.float32 is np.dtype('float32')``). The supported
ones are float16/32/64, int8/16/32/64, uint8 and bool; promotion follows PyTorch's table
(:func:`minitorch_ln.backend.result_dtype`: bool < integer < float, then dimensioned tensors before
0-d tensors before Python numbers; uint8 with int8 gives int16, bool with an int gives the int).

**bfloat16** is a storage dtype, through the ``ml_dtypes`` package (NumPy's kind ``'V'``): tensors
hold bfloat16 values (2 bytes each), and every op computes on float32 copies and rounds its result
back to bfloat16 (``autograd/bfloat16.py``), as PyTorch's CPU kernels do; NumPy's own bfloat16
reductions accumulate in bfloat16 (a sum of ones sticks at 256), so they are never used. Promotion
follows PyTorch (bfloat16 with float16 gives float32). CuPy has no bfloat16: on a GPU it is refused.
:class:`UnsupportedDtype` remains for PyTorch dtypes minitorch_ln lacks. This module is in the backend layer: it knows Tensors only by duck typing (``.dtype``
and ``.ndim``).
"""

from __future__ import annotations

import numbers

import numpy as np

from . import backend

__all__ = [
    "finfo", "iinfo", "get_default_dtype", "set_default_dtype", "promote_types", "result_type",
    "can_cast", "bfloat16", "UnsupportedDtype",
]


class UnsupportedDtype:
    """A dtype PyTorch has and minitorch_ln refuses (see the module docstring): it may be named, and
    :func:`minitorch_ln.backend.as_dtype` raises a TypeError with the reason when it is used."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name} (not supported by minitorch_ln)"


bfloat16 = backend.BFLOAT16 if backend.ml_dtypes is not None else UnsupportedDtype("bfloat16")


def _dtype(dtype, fn: str) -> np.dtype:
    """``dtype`` as a NumPy dtype; a TypeError naming ``fn`` for anything that is not a dtype."""
    if dtype is None or isinstance(dtype, bool) or (not isinstance(dtype, (str, type, np.dtype, UnsupportedDtype))):
        raise TypeError(f"{fn}: expected a dtype such as float32 or int64, got {dtype!r}")
    return backend.as_dtype(dtype)


class finfo:  # noqa: N801 - PyTorch's name
    """Machine limits of a floating point dtype (``torch.finfo``; the default dtype when ``None``).

    Attributes (Python floats, as PyTorch): ``bits``, ``eps`` (the gap between 1 and the next
    value), ``max``, ``min`` (= ``-max``), ``tiny`` = ``smallest_normal``, ``resolution``
    (``10**-precision``), and ``dtype`` (its name, a str, as PyTorch).

    Raises TypeError for an integer or bool dtype (use :class:`iinfo`).
    """

    def __init__(self, type=None):  # noqa: A002 - PyTorch's argument name
        d = backend.default_float_dtype() if type is None else _dtype(type, "finfo")
        d = np.dtype(d.char.lower()) if d.kind == "c" else d  # a complex dtype: its parts' (as PyTorch)
        if not backend.is_floating(d):
            raise TypeError(f"finfo: expected a floating point dtype (float16, bfloat16, float32, float64), got {d}; "
                            "use iinfo for integer dtypes")
        import ml_dtypes  # noqa: PLC0415 - its finfo also knows bfloat16

        info = ml_dtypes.finfo(d)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # exact in Python, as PyTorch's (not NumPy's rounded one)
        self.dtype = d.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801
    """Limits of an integer dtype (``torch.iinfo``): ``bits``, ``min``, ``max`` (Python ints), ``dtype`` (a str).

    Raises TypeError for a float dtype (use :class:`finfo`) and for bool (as PyTorch).
    """

    def __init__(self, type):  # noqa: A002
        d = _dtype(type, "iinfo")
        if d.kind not in "iu":
            raise TypeError(f"iinfo: expected an integer dtype (uint8, int8, int16, int32, int64), got {d}"
                            + ("; use finfo for floating point dtypes" if d.kind == "f" else ""))
        info = np.iinfo(d)
        self.bits, self.min, self.max, self.dtype = int(info.bits), int(info.min), int(info.max), d.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def get_default_dtype() -> np.dtype:
    """The dtype of Python floats and float factories (``torch.get_default_dtype``): float32 unless set."""
    return backend.default_float_dtype()


def set_default_dtype(d) -> None:
    """Make ``d`` (float16, bfloat16, float32 or float64) the dtype of Python floats, of ``tensor([1.5])``,
    of float factories (``zeros``, ``randn``, ``arange(0.5, ...)``) and of int-with-float promotion,
    as ``torch.set_default_dtype``. Process-wide, like PyTorch's.

    Raises TypeError for a non-float dtype (as PyTorch) or for something that is not a dtype.
    """
    dt = _dtype(d, "set_default_dtype")
    if not backend.is_floating(dt):
        raise TypeError(f"set_default_dtype: only floating point types are supported as the default type, got {dt}")
    backend._default_float = dt


def promote_types(type1, type2) -> np.dtype:
    """The dtype PyTorch gives ``type1`` op ``type2`` for two dimensioned tensors (``torch.promote_types``):
    ``uint8, int8 -> int16``; ``bool, int16 -> int16``; ``int64, float16 -> float16``.

    Raises TypeError for an argument that is not a dtype.
    """
    a, b = _dtype(type1, "promote_types"), _dtype(type2, "promote_types")
    return backend.result_dtype(a, False, b, False)


def _operand_info(x, fn: str):
    """``(dtype, is 0-d, is a number)`` of a tensor or a Python/NumPy number, as promotion ranks them."""
    if isinstance(x, (bool, np.bool_)):
        return np.dtype(np.bool_), True, True
    if isinstance(x, np.generic):
        return backend.as_dtype(x.dtype), True, True
    if isinstance(x, numbers.Integral):
        return np.dtype(np.int64), True, True
    if isinstance(x, numbers.Real):
        return np.dtype(np.float64), True, True
    if isinstance(x, numbers.Complex):
        return np.dtype(np.complex128), True, True
    if hasattr(x, "dtype") and hasattr(x, "ndim") and not isinstance(x, type):
        return backend.as_dtype(x.dtype), x.ndim == 0, False
    raise TypeError(f"{fn}: expected a Tensor or a number (bool, int, float), got {type(x).__name__}")


def result_type(tensor1, tensor2) -> np.dtype:
    """The dtype of ``tensor1 op tensor2`` for Tensors and Python numbers (``torch.result_type``).

    A number or 0-d tensor does not widen a dimensioned tensor of its category (``int8`` tensor and
    ``1`` -> int8), a float number with an integer tensor (or two numbers, one a float) gives the
    default dtype; a complex number the default complex dtype (complex64). Raises TypeError for other
    operands (lists, strings).
    """
    a, b = _operand_info(tensor1, "result_type"), _operand_info(tensor2, "result_type")
    return backend.result_dtype(a[0], a[1], b[0], b[1], a_is_number=a[2], b_is_number=b[2])


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rule allows ``from_`` to ``to`` (``torch.can_cast``).

    Only a step down in category is refused: complex to float, float to an integer or bool, an integer to bool.
    Narrowing within a category (float64 -> float16, int8 -> uint8) is allowed, as PyTorch.
    """
    a, b = _dtype(from_, "can_cast"), _dtype(to, "can_cast")
    return _CATEGORY[a.kind] <= _CATEGORY[b.kind]
