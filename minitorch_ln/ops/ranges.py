"""Ranges: ``arange``, ``linspace``, ``logspace``, computed with PyTorch's CPU arithmetic so the values agree bit
for bit (``arange(0, 1, 0.1)[9]`` is float32(0.9), not the float32 sum 0.90000004).

PyTorch's ``arange`` kernel (``native/cpu/RangeFactoriesKernel.cpp``) works in the dtype's accumulate type
(double for float32 and float64, float32 for float16/bfloat16, int64 for integers): an element is
``start + step·i`` (a fused multiply-add) rounded once to the dtype, except in whole vector blocks, where the
block's first value is rounded to the dtype and the others are ``first + k·step`` in the accumulate type. The
blocks are those of its x86 AVX2 build (8 float32, 4 float64, 16 half values per vector; two vectors per loop
turn; the tail after the last pair is element-wise), the whole range counted as one thread's share.
Deviation: past 32768 elements PyTorch splits the range among its threads, which moves the blocks, and other
vector widths move them too; values there may differ by one unit in the last place.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import backend
from ..errors import OptionError
from ..random_torch import _fma32, _fma64
from ..tensor import Tensor

__all__ = ["arange", "linspace", "logspace"]

_VECTOR_BYTES = 32  # AVX2: PyTorch's CPU range kernels' vector width


def _number(v, what: str, name: str):
    """A Python number from a number, a NumPy scalar or a 0-d tensor (PyTorch's ``Number`` argument)."""
    if isinstance(v, Tensor):
        if v.ndim != 0:
            raise TypeError(f"{what}(): argument '{name}' must be Number, not a Tensor of shape {tuple(v.shape)}")
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    if not isinstance(v, numbers.Real):
        raise TypeError(f"{what}(): argument '{name}' must be Number, not {type(v).__name__}")
    return v


def _on(device, fn):
    dev = backend.device(device)
    if dev.type == "cuda":
        with backend.cupy_or_error().cuda.Device(dev.index):
            return backend.to_device(fn(), dev)
    return fn()


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``arange(end)`` or ``arange(start, end, step)``: ``start, start + step, ...`` short of ``end``, shape ``(n,)``.

    ``start``/``end``/``step`` are numbers or 0-d tensors. dtype: int64 when all are integers (bools count as
    integers), else the default float dtype. Length ``ceil((end - start) / step)`` in double; an integer
    ``dtype`` truncates ``start``, ``end`` and ``step`` toward zero first (for int64 the length is then
    counted on the truncated values, as PyTorch). Values: see the module docstring.

    Raises:
        RuntimeError: an infinite or NaN bound, a zero step (also a ValueError), a step pointing away from
            ``end``, a length past int64. NotImplementedError: a bool ``dtype`` (as PyTorch).
        Deviation: an integer ``dtype`` with a step that truncates to 0 (``arange(0, 3, 0.5, dtype=int32)``)
            raises for every integer dtype; PyTorch raises for int64 but fills int32 and smaller with zeros.
    """
    if end is None:
        start, end = 0, start
    start, end, step = (_number(v, "arange", n) for v, n in ((start, "start"), (end, "end"), (step, "step")))
    if dtype is None:
        is_int = not any(isinstance(v, float) for v in (start, end, step))
        dt = np.dtype(np.int64) if is_int else backend.default_float_dtype()
    else:
        dt = backend.as_dtype(dtype)
    if dt.kind == "b":
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool' (arange needs a numeric dtype)")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end} (bounds must be finite)")
    integer = dt.kind in "iu"
    xstart, xend, xstep = (math.trunc(v) for v in (start, end, step)) if integer else (start, end, step)
    if not math.isfinite(xstep) or xstep == 0:
        raise OptionError(f"arange: step must be nonzero (got step={step}" +
                          (f", {xstep} in {dt})" if integer else ")"))
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise RuntimeError(f"upper bound and lower bound inconsistent with step sign (start={start}, end={end}, "
                           f"step={step})")
    if dt == np.int64:
        sign = 1 if xstep > 0 else -1
        n = _trunc_div(xend - xstart + xstep - sign, xstep)
    else:
        n = math.ceil((float(end) - float(start)) / float(step))
    if not 0 <= n < 2**63:
        raise RuntimeError(f"arange: invalid size {n}, possible overflow? (start={start}, end={end}, step={step})")
    if integer:  # int64 arithmetic, wrapping into small dtypes as PyTorch's cast does
        values = (np.int64(xstart) + np.int64(xstep) * np.arange(n, dtype=np.int64)).astype(dt)
    else:
        values = _float_ramp(float(start), float(step), n, dt)
    return Tensor(_on(device, lambda: values), requires_grad=requires_grad)


def _trunc_div(a: int, b: int) -> int:
    """C's integer division: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _float_ramp(start: float, step: float, n: int, dt) -> np.ndarray:
    """PyTorch's arange values for a float dtype ``dt`` (module docstring). ``(n,)``."""
    half = dt.itemsize == 2
    acc = np.dtype(np.float32) if half else np.dtype(np.float64)
    fma = _fma32 if half else _fma64  # a fused multiply-add rounded to the accumulate type
    i = np.arange(n, dtype=np.int64)  # (n,)
    width = _VECTOR_BYTES // dt.itemsize
    block0 = (i // width) * width  # (n,) first index of each element's vector block
    scalar = fma(acc.type(step), i.astype(acc), acc.type(start)).astype(dt)  # (n,) start + step·i, one rounding
    base = fma(acc.type(step), block0.astype(acc), acc.type(start)).astype(dt).astype(acc)  # (n,) rounded to dt
    vector = fma((i - block0).astype(acc), acc.type(step), base).astype(dt)  # (n,)
    return np.where(i < n - n % (2 * width), vector, scalar)


def _ramp(start, end, steps, dtype, device, what):
    """PyTorch's linspace arithmetic (``linspace_kernel``): ``start`` and ``end`` in the dtype,
    ``step = (end - start) / (steps - 1)`` in the dtype (in double for integer dtypes); the first half counts up
    ``start + step·i``, the second down ``end - step·(steps - 1 - i)``, each a fused multiply-add."""
    start, end = (_number(v, what, n) for v, n in ((start, "start"), (end, "end")))
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral):
        raise TypeError(f"{what}(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative, got {steps}")
    dtype = np.dtype(dtype)
    exact = backend.is_floating(dtype) or dtype.kind == "c"  # complex: real bounds on the real axis, never truncated
    if not exact:  # as PyTorch: integer bounds first (linspace(2.5, -1.25, 9, dtype=int64) runs 2 .. -1)
        start, end = float(math.trunc(start)), float(math.trunc(end))
    calc = (np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype) if exact else np.dtype(np.float64)
    idx = np.arange(steps)  # (steps,)
    s, e = calc.type(start), calc.type(end)
    step = (e - s) / calc.type(steps - 1) if steps > 1 else calc.type(0)
    if calc.itemsize == 4 or calc.itemsize == 8:  # float32/float64 (and int via float64): fused multiply-adds
        fma = _fma32 if calc.itemsize == 4 else _fma64
        up = fma(step, idx.astype(calc), s).astype(calc)
        down = fma(-step, (steps - 1 - idx).astype(calc), e).astype(calc)
    else:  # float16/bfloat16: each operation rounded to the dtype, as c10::Half arithmetic
        up = s + step * idx.astype(calc)
        down = e - step * (steps - 1 - idx).astype(calc)
    ramp = np.where((idx < steps // 2) | (steps == 1), up, down)  # one step: start, as PyTorch
    return ramp, backend.device(device)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end`` inclusive, shape ``(steps,)``.

    float32 by default (also for integer bounds); an integer ``dtype`` truncates, as PyTorch. Arithmetic:
    :func:`_ramp` (PyTorch's kernel).

    Raises:
        RuntimeError: ``steps < 0``. TypeError: a non-integer ``steps``, a bound that is not a number or 0-d tensor.
    """
    dt = backend.as_dtype(dtype) if dtype is not None else backend.default_float_dtype()
    ramp, dev = _ramp(start, end, steps, dt, device, "linspace")
    return Tensor(_on(dev, lambda: ramp.astype(dt)), requires_grad=requires_grad)


def _pow(base: float, x: float) -> float:
    try:
        return math.pow(base, x)
    except OverflowError:
        return math.inf if base > 0 or float(x).is_integer() and x % 2 == 0 else -math.inf


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``base ** linspace(start, end, steps)``, shape ``(steps,)``; float32 by default (an integer ``dtype``
    truncates ``start`` and ``end`` first, then the powers, as PyTorch).

    Raises:
        as :func:`linspace`.
    """
    dt = backend.as_dtype(dtype) if dtype is not None else backend.default_float_dtype()
    ramp, dev = _ramp(start, end, steps, dt, device, "logspace")  # float64 for an integer dtype
    if backend.is_floating(dt) and steps > 1 and base > 0:  # PyTorch's logspace_cpu: exponents, powers in double
        s, e = dt.type(_number(start, "logspace", "start")), dt.type(_number(end, "logspace", "end"))
        step = float(e - s) / (steps - 1)  # the difference rounded to the dtype first
        idx = np.arange(steps, dtype=np.float64)  # (steps,)
        expo = np.where(idx < steps // 2, np.float64(s) + step * idx, np.float64(e) - step * (steps - 1 - idx))
        # the C library's pow, as PyTorch's kernel calls it (NumPy's SIMD power differs in the last bit)
        powers = np.fromiter((_pow(float(base), x) for x in expo.tolist()), np.float64, count=steps)  # (steps,)
        with np.errstate(over="ignore", under="ignore"):
            return Tensor(_on(dev, lambda: powers.astype(dt)), requires_grad=requires_grad)
    calc = ramp.dtype.type
    with np.errstate(over="ignore", invalid="ignore"):  # powers past an integer dtype wrap, as PyTorch's
        return Tensor(_on(dev, lambda: (calc(base) ** ramp).astype(dt)), requires_grad=requires_grad)
