"""PyTorch's legacy constructor ``torch.Tensor(...)`` and ``torch.FloatTensor(...)`` and friends.

``Tensor`` takes this module's metaclass. A call of ``Tensor`` itself (not a subclass such as ``Parameter``) in
PyTorch's form — sizes, one Python sequence, nothing, with at most ``device=`` — builds a tensor of the default
float dtype as PyTorch does (``Tensor([1, 2])`` is float32, ``Tensor(3)`` a float32 tensor of shape ``(3,)``).
Any other call (an array or a Tensor as data, or ``requires_grad=``/``dtype=``) is minitorch_ln's own
``Tensor(data, requires_grad=False, dtype=None, device=None)``, which wraps an array as it is; ops build their
results with ``Tensor._from_op``, which never comes here.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import backend
from .errors import OptionError
from .size import Size

_to_array = None  # tensor._to_array, set by tensor.py (which imports this module)
_tensor_class = None  # tensor.Tensor, set there too


class TensorMeta(type):
    """The metaclass of ``Tensor``: routes PyTorch's legacy-constructor calls to :func:`legacy_new`."""

    def __call__(cls, *args, **kwargs):
        if cls.__dict__.get("_legacy_constructor") and _is_legacy_call(args, kwargs):
            return legacy_new(cls, args, backend.default_float_dtype(), kwargs.get("device"), "Tensor")
        return super().__call__(*args, **kwargs)


def _is_legacy_call(args, kwargs) -> bool:
    if set(kwargs) - {"device"}:
        return False  # requires_grad= or dtype=: minitorch_ln's constructor (PyTorch's refuses both)
    return not args or not _is_array(args[0])


def _is_array(data) -> bool:
    """A NumPy/CuPy array or a Tensor: data minitorch_ln's own ``Tensor(data)`` wraps as it is."""
    return (isinstance(data, np.ndarray) or hasattr(data, "__cuda_array_interface__")
            or hasattr(type(data), "_legacy_constructor"))


def legacy_new(cls, args: tuple, dtype, device=None, name: str = "Tensor"):
    """``Tensor()``, ``Tensor(*sizes)``, ``Tensor(torch.Size)`` or ``Tensor(sequence)`` of ``dtype``, as PyTorch.

    Sizes give a tensor of that shape filled with zeros (PyTorch leaves it uninitialised: any value is
    allowed, and zeros are the safe choice); no argument gives shape ``(0,)``; a (nested) list or tuple of
    numbers, bools or 0-d tensors (or, for ``FloatTensor`` and friends, an array) gives their values converted
    to ``dtype`` (``LongTensor([1.7])`` truncates to 1, as PyTorch); a Tensor of ``dtype`` is shared (another
    dtype: TypeError). Raises RuntimeError for a negative size, TypeError for a single number that is not an
    int (``Tensor(2.5)``: PyTorch's "data must be a sequence") or any other argument, ValueError for ragged
    data, and RuntimeError for data out of an integer dtype's range (``ByteTensor([300])``).
    """
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if all(isinstance(a, numbers.Integral) and not isinstance(a, (bool, np.bool_)) for a in args):
        sizes = tuple(int(a) for a in args) if args else (0,)
        if any(n < 0 for n in sizes):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
        return cls._from_op(_to_array(np.zeros(sizes, dtype=dtype), None, device))
    if len(args) == 1 and isinstance(args[0], range):
        args = (list(args[0]),)  # Tensor(range(3)): its values, as PyTorch
    if len(args) == 1 and (isinstance(args[0], (list, tuple)) or _is_array(args[0])):
        if hasattr(type(args[0]), "_legacy_constructor") and args[0].dtype != dtype:  # as PyTorch
            raise TypeError(f"{name}(): expected a tensor of dtype {np.dtype(dtype)}, got {args[0].dtype}")
        return cls._from_op(_to_array(args[0], dtype, device))
    got = ", ".join(type(a).__name__ for a in args)
    if len(args) == 1 and isinstance(args[0], (numbers.Number, np.generic)):
        raise TypeError(f"{name}(): data must be a sequence (got {got}): pass sizes as ints or the data as a list")
    raise TypeError(f"{name}(): expected sizes (ints) or one sequence of data, got {got}")


def holds_non_number(arr) -> bool:
    """Whether a NumPy array made from nested lists holds a string or None (kinds ``U``/``S``, or ``O`` with one)."""
    return arr.dtype.kind != "O" or any(v is None or isinstance(v, (str, bytes)) for v in arr.flat)


def check_int_range(arr, dtype) -> None:
    """PyTorch's checked conversion of Python numbers (``tensor([300], dtype=uint8)``, ``ByteTensor([300])``)
    into the integer ``dtype``: RuntimeError for a value it cannot hold, never a wrapped or truncated number.
    As PyTorch, ints may be negative down to ``-max`` for an unsigned dtype (``-1`` is 255 in uint8), floats
    must be finite and lie in the dtype's range (they truncate toward zero)."""
    info = np.iinfo(dtype)
    if not arr.size or arr.dtype.kind == "b":
        return
    if arr.dtype == np.uint64:  # a Python int past int64: PyTorch's ValueError
        raise OptionError(f"Overflow when unpacking long: {arr.max()} does not fit in int64")
    lo, hi = (-int(info.max) if info.min == 0 and arr.dtype.kind in "iu" else int(info.min)), int(info.max)
    if arr.dtype.kind in "iu":
        bad = arr.min() < lo or arr.max() > hi
    else:
        bad = not np.isfinite(arr).all() or arr.min() < lo or arr.max() > hi
    if bad:
        raise RuntimeError(f"value cannot be converted to type {np.dtype(dtype)} without overflow (got values in "
                           f"[{arr.min()}, {arr.max()}], expected [{lo}, {hi}])")


_PYTHON_TYPES = frozenset({float, int, bool, list, tuple})


def sequence_dtype(data):
    """The dtype PyTorch infers for nested lists ``data`` that hold NumPy scalars or tensors (``infer_scalar_type``:
    the promotion of every element's own dtype, a Python float counting as the default float dtype, an int as
    int64): ``[np.float64(1.5), 2]`` is float64, ``[np.int32(1)]`` int32, ``[np.float16(1), 2.0]`` float32.
    None when every element is a Python number (the caller's rules apply)."""
    kinds = set()

    def walk(seq):
        types = set(map(type, seq))
        kinds.update(t for t in types if t not in (list, tuple))
        if types & {list, tuple}:
            for x in seq:
                if type(x) in (list, tuple):
                    walk(x)
        if not types <= _PYTHON_TYPES:
            for x in seq:
                if isinstance(x, np.generic) or hasattr(type(x), "_legacy_constructor"):
                    found.append(backend.as_dtype(x.dtype))

    found: list = []
    walk(data)
    if not found:
        return None
    python = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: backend.default_float_dtype(),
              complex: backend.default_complex_dtype()}
    out = found[0]
    for dt in found[1:] + [python[t] for t in kinds if t in python]:
        out = backend.result_dtype(out, False, dt, False)
    return out


class LegacyTypeMeta(type):
    """``FloatTensor`` and friends: a call builds a tensor of the class's dtype (:func:`legacy_new`, also from
    an array), and ``isinstance(t, FloatTensor)`` checks a CPU tensor's dtype, as in PyTorch."""

    def __call__(cls, *args, device=None):
        return legacy_new(_tensor_class, args, cls.dtype, device, cls.__name__)

    def __instancecheck__(cls, obj):
        return hasattr(type(obj), "_legacy_constructor") and obj.dtype == cls.dtype and obj.device.type == "cpu"


_LEGACY_TYPES = {"FloatTensor": np.float32, "DoubleTensor": np.float64, "HalfTensor": np.float16,
                 "LongTensor": np.int64,
                 "IntTensor": np.int32, "ShortTensor": np.int16, "CharTensor": np.int8, "ByteTensor": np.uint8,
                 "BoolTensor": np.bool_}


def _legacy_type(name: str, dt) -> type:
    doc = (f"torch.{name}: a {np.dtype(dt)} tensor from data (``{name}([1, 2])``) or of a shape "
           f"(``{name}(2, 3)``, zeros: uninitialised in PyTorch).")
    return LegacyTypeMeta(name, (), {"dtype": np.dtype(dt), "__doc__": doc})


# PyTorch's typed legacy constructors (``LongTensor([1, 2])``, ``FloatTensor(2, 3)``), one class per dtype
LEGACY_CONSTRUCTORS = {name: _legacy_type(name, dt) for name, dt in _LEGACY_TYPES.items()}
(BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor,
 ShortTensor) = (LEGACY_CONSTRUCTORS[name] for name in sorted(LEGACY_CONSTRUCTORS))
