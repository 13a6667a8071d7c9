"""Creation: ``zeros``, ``ones``, ``empty``, ``full``, ``eye``, ``arange``, ``linspace``, ``logspace``, ``rand``,
``randn``, ``randint`` and the ``*_like`` forms, ``from_numpy``/``as_tensor`` and ``Tensor.new_*``, with
PyTorch's default dtypes (float32 for floats, int64 for integers).

Random draws come from ``generator=`` (a :class:`~minitorch_ln.ops.generator.Generator`) or else the
device's seeded generator (``backend.generator``), so ``mt.manual_seed`` makes them reproducible; on
the CPU they are PyTorch's numbers (:mod:`minitorch_ln.random_torch`).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import backend, random_torch
from ..errors import OptionError, ShapeError
from ..tensor import Tensor
from .fill_values import checked_number
from .generator import rng_for
from .ranges import arange, linspace, logspace  # noqa: F401 - arange, linspace, logspace live in ranges.py

__all__ = [
    "as_tensor", "empty", "empty_like", "eye", "from_numpy", "full", "full_like", "ones", "ones_like", "rand",
    "rand_like", "randint", "randint_like", "randn", "randn_like", "zeros",
    "zeros_like"
]


def _shape_arg(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:  # PyTorch: a non-int size is a TypeError, a negative one a RuntimeError
        if not isinstance(s, (numbers.Integral,)):
            raise TypeError(f"sizes must be non-negative integers, got {tuple(size)} (a {type(s).__name__})")
        if s < 0:
            raise ShapeError(f"sizes must be non-negative integers, got {tuple(size)}")
    return tuple(int(s) for s in size)


def _xp_for(device):
    dev = backend.device(device)
    return backend.cupy_or_error() if dev.type == "cuda" else np, dev


def _make(fill_fn, size, dtype, device, requires_grad, default=None):
    xp, dev = _xp_for(device)
    dt = backend.as_dtype(dtype) if dtype is not None else (default or backend.default_float_dtype())
    if dev.type == "cuda":
        with xp.cuda.Device(dev.index):
            arr = fill_fn(xp, _shape_arg(size), dt)
    else:
        arr = fill_fn(xp, _shape_arg(size), dt)
    return Tensor(arr, requires_grad=requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(lambda xp, s, d: xp.zeros(s, dtype=d), size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(lambda xp, s, d: xp.ones(s, dtype=d), size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(lambda xp, s, d: xp.empty(s, dtype=d), size, dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of shape ``size`` holding ``fill_value`` (a number or a 0-d tensor) everywhere.

    dtype: ``dtype``, else the fill's kind as PyTorch (bool → bool, int → int64, float → the default float,
    complex → the default complex; a 0-d tensor fill by its dtype's kind: ``full([2], tensor(3))`` is int64).
    Raises RuntimeError for a value ``dtype`` cannot hold (``full((2,), 300, dtype=uint8)``, NaN into an int
    dtype, 1e39 into float32, a complex value with an imaginary part into a real dtype: ``ops/fill_values.py``;
    float16/bfloat16 overflow to inf, as PyTorch), TypeError for a tensor fill with dimensions.
    """
    if isinstance(fill_value, Tensor):
        if fill_value.ndim != 0:
            raise TypeError(f"full(): argument 'fill_value' must be a number or a 0-d tensor, not a tensor of shape "
                            f"{tuple(fill_value.shape)}")
        fill_value = fill_value.item()
    if dtype is None and isinstance(fill_value, (bool, np.bool_)):
        dtype = np.bool_
    elif dtype is None and isinstance(fill_value, numbers.Integral):
        dtype = np.int64
    elif dtype is None and isinstance(fill_value, numbers.Complex) and not isinstance(fill_value, numbers.Real):
        dtype = backend.default_complex_dtype()  # a complex fill: the default complex dtype (as PyTorch)
    # PyTorch's check of the number against the dtype (ops/fill_values.py): None, 300 into int8, 1e40 into float32
    return _make(lambda xp, s, d: xp.full(s, checked_number(fill_value, d, "full"), dtype=d), (size,), dtype, device,
                 requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(lambda xp, s, d: xp.eye(n, m, dtype=d), (), dtype, device, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform on [0, 1), drawn from ``generator`` or the device's seeded generator; float32 by default. Complex
    dtypes: real and imaginary parts each uniform on [0, 1), as PyTorch's."""
    dev = backend.device(device)
    rng = rng_for(generator, dev)
    return _make(lambda xp, s, d: _parts(lambda s2, r: random_torch.uniform(rng, s2, r), s, d), size, dtype, dev,
                 requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal, drawn from ``generator`` or the device's seeded generator; float32 by default. Complex
    dtypes: PyTorch's complex normal, real and imaginary parts each N(0, 1/2) (so ``E|z|² = 1``)."""
    dev = backend.device(device)
    rng = rng_for(generator, dev)

    def std(d):
        return math.sqrt(0.5) if np.dtype(d).kind == "c" else 1.0
    return _make(lambda xp, s, d: _parts(lambda s2, r: random_torch.normal(rng, s2, r, std=std(d)), s, d), size,
                 dtype, dev, requires_grad)


def _parts(draw, shape, dtype):
    """``draw(shape, dtype)``; for a complex dtype PyTorch's complex draw: the real view ``(*shape, 2)`` drawn as
    floats of the parts' precision (one stream, real and imaginary parts interleaved), viewed as complex."""
    if np.dtype(dtype).kind != "c":
        return draw(shape, dtype)
    real = np.float32 if np.dtype(dtype) == np.complex64 else np.float64
    return draw(tuple(shape) + (2,), real).view(dtype).reshape(shape)


def _check_int_range(low, high, dt) -> None:
    """PyTorch's checks of ``random_``'s bounds: ``from < to``, both inside the dtype's range."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if dt.kind in "iub":
        info = (0, 1) if dt.kind == "b" else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
        name = {"b": "bool", "u": "unsigned char"}.get(dt.kind, str(dt))
        if not info[0] <= low <= info[1]:
            raise RuntimeError(f"from is out of bounds for {name}: expected {info[0]} <= from <= {info[1]}, got {low}")
        if not info[0] <= high - 1 <= info[1]:
            raise RuntimeError(f"to - 1 is out of bounds for {name}: expected {info[0]} <= to - 1 <= {info[1]}, "
                               f"got {high - 1}")


def _int_bound(v, what):
    """An int bound of ``randint``: a float (``randint(0.5, 2.5)``, which truncated before) is PyTorch's
    TypeError, one past int64 its ValueError (also a RuntimeError here: ``OptionError``)."""
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"randint(): argument '{what}' must be int, not {type(v).__name__}")
    if not -(2**63) <= int(v) < 2**63:
        raise OptionError(f"randint(): Overflow when unpacking long long: {what}={v} does not fit in int64")
    return int(v)


def randint(*args, size=None, low=None, high=None, generator=None, dtype=None, device=None,
            requires_grad=False) -> Tensor:
    """Integers uniform on [low, high), as ``torch.randint(low=0, high, size)``; int64 by default.

    Forms: ``randint(high, size)``, ``randint(low, high, size)``, with ``size`` a tuple (positional
    or keyword); ``low``/``high`` may be keywords too.

    Raises:
        TypeError: no size, or a size that is not a tuple/list. RuntimeError: ``low >= high``, or a
        bound outside ``dtype``'s range (PyTorch's messages).
    """
    args = list(args)
    if size is None:
        if not args:
            raise TypeError("randint() missing the required argument 'size' (a tuple of ints)")
        size = args.pop()
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"randint(): argument 'size' (position {len(args) + 1}) must be tuple of ints, "
                            f"not {type(size).__name__}")
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    elif len(args) > 2:
        raise TypeError(f"randint() takes at most 3 positional arguments (low, high, size), got {len(args) + 1}")
    if high is None:
        raise TypeError("randint() missing the required argument 'high'")
    low = 0 if low is None else _int_bound(low, "low")
    high = _int_bound(high, "high")
    dt = backend.as_dtype(dtype) if dtype is not None else np.dtype(np.int64)
    _check_int_range(low, high, dt)
    dev = backend.device(device)
    rng = rng_for(generator, dev)
    return _make(lambda xp, s, d: random_torch.random_from_to(rng, s, d, low, high), (tuple(size),), dt, dev,
                 requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,  # noqa: A002
                 requires_grad=False) -> Tensor:
    """``randint_like(input, high)`` or ``randint_like(input, low, high)``: ``input``'s shape, dtype and device."""
    if high is None:
        low, high = 0, low
    if (arr := _layout_of(input, dtype, device)) is None:
        return randint(low, high, tuple(input.shape), generator=generator, dtype=dtype or input.dtype,
                       device=device or input.device, requires_grad=requires_grad)
    low, high = _int_bound(low, "low"), _int_bound(high, "high")  # input's layout, memory order: empty_like().random_()
    _check_int_range(low, high, arr.dtype)
    rng = rng_for(generator, input.device)
    arr[...] = random_torch.in_memory_order(arr, lambda s, _: random_torch.random_from_to(rng, s, arr.dtype, low, high))
    return Tensor(arr, requires_grad=requires_grad)


def _on(dev, fn):
    if dev.type == "cuda":
        with backend.cupy_or_error().cuda.Device(dev.index):
            return fn()
    return fn()


def _layout_of(t, dtype, device):
    """An uninitialised array of ``t``'s shape laid out in ``t``'s stride order (PyTorch's default
    ``memory_format=torch.preserve_format``: ``zeros_like(x.t()).stride()`` is ``(1, 4)``), or None where that
    is C order anyway or the result goes to another device (then the plain factory)."""
    if t.array.flags.c_contiguous or (device is not None and backend.device(device) != t.device):
        return None
    return backend.get_array_module(t.array).empty_like(t.array, dtype=backend.as_dtype(dtype or t.dtype))


def _like(fn, t, dtype, device, requires_grad):
    out = fn(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)
    if (arr := _layout_of(t, dtype, device)) is None:
        return out
    arr[...] = out.array  # a constant: the same values in t's layout
    return Tensor(arr, requires_grad=requires_grad)


def _drawn_like(t, dtype, device, requires_grad, draw, plain):
    """``empty_like(t).<fill>_()`` as PyTorch: the draws go into ``t``'s layout in memory order."""
    arr = _layout_of(t, dtype, device)
    if arr is None or arr.dtype.kind == "c":
        return plain()
    arr[...] = random_torch.in_memory_order(arr, lambda s, _: draw(s, arr.dtype, arr.flags.c_contiguous))
    return Tensor(arr, requires_grad=requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Zeros of ``t``'s shape (and dtype, device, and stride order, as PyTorch's ``preserve_format``)."""
    return _like(zeros, t, dtype, device, requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(ones, t, dtype, device, requires_grad)


def empty_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(empty, t, dtype, device, requires_grad)


def rand_like(t, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``rand`` of ``t``'s shape, dtype, device and layout, drawn in memory order (``empty_like(t).uniform_()``)."""
    return _drawn_like(t, dtype, device, requires_grad,
                       lambda s, d, _: random_torch.uniform(rng_for(generator, t.device), s, d),
                       lambda: rand(t.shape, generator=generator, dtype=dtype or t.dtype, device=device or t.device,
                                    requires_grad=requires_grad))


def randn_like(t, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``randn`` of ``t``'s shape, dtype, device and layout, drawn in memory order (``empty_like(t).normal_()``:
    ``randn_like(x.t())`` holds the draws of ``randn`` of the untransposed shape, transposed, as PyTorch)."""
    return _drawn_like(t, dtype, device, requires_grad,
                       lambda s, d, c: random_torch.normal(rng_for(generator, t.device), s, d, contiguous=c),
                       lambda: randn(t.shape, generator=generator, dtype=dtype or t.dtype, device=device or t.device,
                                     requires_grad=requires_grad))


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(lambda shape, **kw: full(shape, fill_value, **kw), t, dtype, device, requires_grad)


# ==================================================================================================
# From NumPy and other data, without copying where possible
# ==================================================================================================


def from_numpy(ndarray) -> Tensor:
    """A CPU Tensor sharing ``ndarray``'s memory: writes through either show in both (``torch.from_numpy``).

    Any non-negative strides are kept (no copy); an ``np.memmap`` is viewed as a plain ndarray (still
    the same memory).

    Raises:
        TypeError: not an ndarray, or a dtype minitorch_ln has no tensor for (e.g. strings, uint16).
        ValueError: negative strides or a non-native byte order (as PyTorch).
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                         "between byte orders is currently not supported.")
    try:
        backend.as_dtype(ndarray.dtype)
    except TypeError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{ndarray.dtype.type.__name__}. The only supported types are: "
            "float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
        ) from None
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array with array.copy().)")
    if type(ndarray) is not np.ndarray:
        ndarray = ndarray.view(np.ndarray)
    return Tensor._from_op(ndarray)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a Tensor, sharing memory when it can (``torch.as_tensor``).

    A Tensor of the asked dtype and device is returned as it is; a NumPy array of the asked dtype
    becomes a CPU Tensor sharing its memory (as :func:`from_numpy`); otherwise the data is copied
    (lists, scalars, another dtype or device). A Tensor converted to another dtype/device keeps its
    graph (the conversion is recorded, as PyTorch's).

    Raises:
        TypeError: an unsupported dtype or data.
    """
    dt = backend.as_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        out = data
        if dt is not None and out.dtype != dt:
            from .conversion import cast  # noqa: PLC0415

            out = cast(out, dt)
        if device is not None and out.device != backend.device(device):
            out = out.to(device)
        return out
    if isinstance(data, np.ndarray) and (dt is None or data.dtype == dt) and data.dtype.isnative:
        t = from_numpy(data) if all(s >= 0 for s in data.strides) else Tensor._from_op(data.copy())
        return t if device is None or backend.device(device).type == "cpu" else t.to(device)
    from ..tensor import tensor  # noqa: PLC0415

    return tensor(data, dtype=dt, device=device)


# Tensor.new_* (same dtype and device as the tensor unless given)

def _new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    return zeros(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def _new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    return ones(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def _new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    return empty(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    return full(tuple(size), fill_value, dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """A copy of ``data`` (detached when it is a Tensor), with this tensor's dtype and device by default."""
    from ..tensor import tensor  # noqa: PLC0415

    src = data.detach() if isinstance(data, Tensor) else data
    return tensor(src, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)
