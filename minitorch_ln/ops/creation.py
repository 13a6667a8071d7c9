"""Creation: ``zeros``, ``ones``, ``empty``, ``full``, ``eye``, ``arange``, ``rand``, ``randn``, ``randint`` and
the ``*_like`` forms, with PyTorch's default dtypes (float32 for floats, int64 for integers).

Random draws come from the device's seeded generator (``backend.generator``), so ``mt.manual_seed``
makes them reproducible.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..tensor import Tensor


def _shape_arg(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (numbers.Integral,)) or s < 0:
            raise ValueError(f"sizes must be non-negative integers, got {tuple(size)}")
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
    if dtype is None and isinstance(fill_value, bool):
        dtype = np.bool_
    elif dtype is None and isinstance(fill_value, numbers.Integral):
        dtype = np.int64
    return _make(lambda xp, s, d: xp.full(s, fill_value, dtype=d), (size,), dtype, device, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(lambda xp, s, d: xp.eye(n, m, dtype=d), (), dtype, device, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``arange(end)`` or ``arange(start, end, step)``; int64 for integer arguments, else float32."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        dtype = np.int64 if is_int else backend.default_float_dtype()
    return _make(lambda xp, s, d: xp.arange(start, end, step, dtype=d), (), dtype, device, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform on [0, 1), drawn from the device's seeded generator."""
    dev = backend.device(device)
    return _make(
        lambda xp, s, d: backend.generator(dev).random(s).astype(d), size, dtype, dev, requires_grad
    )


def randn(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal, drawn from the device's seeded generator."""
    dev = backend.device(device)
    return _make(
        lambda xp, s, d: backend.generator(dev).standard_normal(s).astype(d), size, dtype, dev, requires_grad
    )


def randint(low, high=None, size=(), dtype=None, device=None) -> Tensor:
    """Integers uniform on [low, high) (``randint(high, size=...)`` means low = 0); int64."""
    if high is None:
        low, high = 0, low
    dev = backend.device(device)
    return _make(
        lambda xp, s, d: backend.generator(dev).integers(low, high, size=s).astype(d),
        (size,) if not isinstance(size, int) else ((size,),),
        dtype,
        dev,
        False,
        default=np.dtype(np.int64),
    )


def _like(fn, t, dtype, device, requires_grad, *args):
    return fn(*args, t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(zeros, t, dtype, device, requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(ones, t, dtype, device, requires_grad)


def empty_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(empty, t, dtype, device, requires_grad)


def rand_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(rand, t, dtype, device, requires_grad)


def randn_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(randn, t, dtype, device, requires_grad)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)
