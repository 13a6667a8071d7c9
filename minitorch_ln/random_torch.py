"""PyTorch's CPU transforms from random words to samples, on arrays; the CPU random ops call these.

Each function takes ``rng`` — a :class:`~minitorch_ln.mt19937.CPUGenerator` on the CPU, or a CuPy
generator on a GPU (which keeps its own stream: there the same distribution is drawn with CuPy's
numbers; a NumPy generator passed as ``generator=`` is used the same way) — and returns a new array. On the CPU the words are consumed in PyTorch's order and turned
into values by PyTorch's formulas (``aten/src/ATen/core/TransformationHelper.h``,
``core/DistributionsHelper.h``, ``native/cpu/DistributionTemplates.h``, ``native/cpu/MultinomialKernel.cpp``,
``randperm_cpu`` in ``native/TensorFactories.cpp``), so a seed gives PyTorch 2.13's numbers:

* uniform: float32 (and float16/bfloat16) take the low 24 bits of one 32-bit word times 2**-24;
  float64 the low 53 bits of one 64-bit word times 2**-53; then ``u * (to - from) + from``;
* normal, 16 or more values: all uniforms first, then Box–Muller on blocks of 16 (8 pairs
  ``u[j]``, ``u[j+8]``); a size that is not a multiple of 16 redraws 16 fresh uniforms for the
  last 16 places. float32 uses the AVX2 polynomials of ``avx_mathfun.h`` (Cephes ``logf``,
  ``sincosf``), reproduced here in float32 NumPy arithmetic; float64 uses the C library;
* normal, fewer than 16 values: one Box–Muller pair from two float64 uniforms per two values,
  the second kept in the generator for the next scalar draw (``normal_distribution<double>``);
* integers: ``word % range + from``, a 64-bit word when ``range >= 2**28``.

Double-precision ``log``/``log1p``/``sin``/``cos`` go through Python's ``math`` (the C library,
which PyTorch's kernels call too), because NumPy's SIMD versions differ in the last bit.
"""

from __future__ import annotations

import math

import numpy as np

from .mt19937 import CPUGenerator

__all__ = ["uniform", "normal", "random_from_to", "random_default", "random_full_64", "randperm",
           "exponential", "bernoulli_scalar", "bernoulli_tensor", "multinomial", "cauchy", "log_normal",
           "geometric", "is_torch_stream", "in_memory_order"]

_F32 = np.float32


def _real(dtype, what: str) -> np.dtype:
    """``dtype``, a real one: a complex tensor filled with real draws would be silently wrong (zero imaginary
    parts); PyTorch's complex draws (each part N(0, 1/2)) are not implemented."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        raise TypeError(f"{what}: random draws into complex tensors are not supported (got {dt}); draw the real "
                        "and imaginary parts as float tensors and combine them with complex()")
    if dt.kind in "biu":  # zeros or truncated draws would be silently wrong: PyTorch's NotImplementedError
        kernel = "check_uniform_bounds" if what == "uniform" else "normal_kernel_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_TORCH_NAMES.get(dt, dt)}\' ({what} draws '
                                  f"need a floating point dtype, got {dt})")
    return dt


_TORCH_NAMES = {np.dtype(np.bool_): "Bool", np.dtype(np.uint8): "Byte", np.dtype(np.int8): "Char",
                np.dtype(np.int16): "Short", np.dtype(np.int32): "Int", np.dtype(np.int64): "Long"}


def is_torch_stream(rng) -> bool:
    """True for the CPU generator whose draws follow PyTorch; False for a CuPy generator."""
    return isinstance(rng, CPUGenerator)


def _xp(rng):
    """The array module of a generator that is not the CPU's torch stream (NumPy's or CuPy's)."""
    return __import__("cupy") if type(rng).__module__.startswith("cupy") else np


def in_memory_order(arr, draw):
    """``draw(shape, perm)`` for the strided view ``arr``, in the order PyTorch's in-place fills walk it (memory
    order: its axes by decreasing stride, ``perm``), returned in ``arr``'s logical order: ``x.t().normal_()``
    gets the draws of the untransposed memory, as PyTorch. Contiguous ``arr``: ``draw(arr.shape, identity)``."""
    perm = sorted(range(arr.ndim), key=lambda d: -abs(arr.strides[d]) if arr.shape[d] > 1 else 0)
    if arr.flags.c_contiguous or perm == sorted(perm):
        return draw(tuple(arr.shape), tuple(range(arr.ndim)))
    return draw(tuple(arr.shape[d] for d in perm), tuple(perm)).transpose(np.argsort(perm))


def _numel(shape) -> int:
    return int(math.prod(shape))  # Python ints (np.prod's wrapper cost µs per small draw)


def _opmath(dtype) -> np.dtype:
    """The dtype PyTorch computes a sample in: float64 for float64, else float32."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def _unit(rng: CPUGenerator, n: int, opmath) -> np.ndarray:
    """``n`` uniforms on [0, 1) as ``uniform_real_distribution<opmath>(0, 1)`` makes them. ``(n,)``."""
    if opmath == np.float64:
        return (rng.random64(n) & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53
    return (rng.random32(n) & np.uint32(2**24 - 1)).astype(_F32) * _F32(2.0**-24)


def _unit64(rng: CPUGenerator, n: int) -> np.ndarray:
    """``_unit(rng, n, float64)`` in fewer NumPy operations (the draws of ``multinomial`` are small): the 53 low bits
    of ``hi << 32 | lo`` are ``(hi & 0x1FFFFF) · 2³² + lo``, exact in float64, then scaled by 2⁻⁵³ (exact). ``(n,)``."""
    w = rng.random32(2 * n)  # (2n,): hi, lo, hi, lo, ... (random64's order)
    return ((w[0::2] & np.uint32(0x1FFFFF)).astype(np.float64) * 4294967296.0 + w[1::2]) * 2.0**-53


def _libm(f, x: np.ndarray) -> np.ndarray:
    """The C library's double function ``f`` (``math.log``...) on every element: PyTorch's scalar kernels' math."""
    return np.array([f(v) for v in x.ravel().tolist()], dtype=np.float64).reshape(x.shape)


def _fma64(a, b, c) -> np.ndarray:
    """``a * b + c`` rounded once (``std::fma`` in double), by Dekker's exact product."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = a * split - (a * split - a)
    bh = b * split - (b * split - b)
    err = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)  # a*b == p + err exactly
    s = p + c
    bp = s - p
    return s + (((p - (s - bp)) + (c - bp)) + err)  # Knuth's TwoSum of p + c, plus the product's error


def _fma32(a, b, c) -> np.ndarray:
    """``a * b + c`` rounded once to float32 (the product is exact in float64): a fused multiply-add."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(_F32)


# ---------------------------------------------------------------------------------------------------
# uniform
# ---------------------------------------------------------------------------------------------------


def uniform(rng, shape, dtype, low=0.0, high=1.0, fused=True) -> np.ndarray:
    """``Tensor.uniform_(low, high)`` / ``torch.rand``: ``from + u * (to - from)`` in the op's precision.

    A value that rounds up to ``high`` in ``dtype`` becomes ``low`` (PyTorch's clamp). ``fused=False``
    rounds the product and the sum apart, as kernels compiled without FMA (``native/Activation.cpp``'s
    rrelu) do. ``(*shape)``.
    """
    dt = _real(dtype, "uniform")
    if not is_torch_stream(rng):
        return (rng.random(shape, dtype=np.float64) * (high - low) + low).astype(dt)
    op = _opmath(dt)
    frm, to = op.type(low), op.type(high)
    u = _unit(rng, _numel(shape), op)  # (n,)
    if fused:  # the kernels in native/cpu/ are built with FMA: u * (to - from) + from is one rounding
        out = (_fma64 if op == np.float64 else _fma32)(u, to - frm, frm).astype(dt)
    else:
        out = (u * (to - frm) + frm).astype(dt)
    out[out == dt.type(high)] = dt.type(low)
    return out.reshape(shape)


# ---------------------------------------------------------------------------------------------------
# normal: Box-Muller
# ---------------------------------------------------------------------------------------------------

_LOG_P = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
          -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1]


def _log_avx(x: np.ndarray) -> np.ndarray:
    """``log256_ps`` (Cephes ``logf``, avx_mathfun.h) for x in (0, 1], in float32 steps.

    GCC fuses multiplies into the adds that follow (PyTorch's AVX2 build has FMA); the pairs fused
    here are the ones that reproduce torch 2.13's x86-64 wheel bit for bit.
    """
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F32) + _F32(1)
    m = ((bits & ~0x7F800000) | 0x3F000000).view(_F32)  # the mantissa in [0.5, 1)
    small = m < _F32(0.707106781186547524)
    e = e - small.astype(_F32)
    m = (m - _F32(1)) + np.where(small, m, _F32(0))
    z = m * m
    y = _F32(_LOG_P[0])
    for p in _LOG_P[1:]:
        y = _fma32(y, m, _F32(p))
    y = _fma32(y * m, z, e * _F32(-2.12194440e-4))
    y = _fma32(-z, _F32(0.5), y)
    return _fma32(e, _F32(0.693359375), m + y)


def _sincos_avx(x: np.ndarray):
    """``sincos256_ps`` (Cephes ``sinf``/``cosf``, avx_mathfun.h) for x >= 0, in float32 steps."""
    j = ((x * _F32(1.27323954473516)).astype(np.int32) + 1) & ~1  # octant, rounded to even
    y = j.astype(_F32)
    sin_sign = (j & 4) != 0
    cos_sign = (~(j - 2) & 4) != 0
    poly_sin = (j & 2) == 0  # which polynomial gives the sine
    x = _fma32(y, _F32(-0.78515625), x)  # x - j * pi/4 in three parts (Cody-Waite)
    x = _fma32(y, _F32(-2.4187564849853515625e-4), x)
    x = _fma32(y, _F32(-3.77489497744594108e-8), x)
    z = x * x
    c = _fma32(_fma32(_F32(2.443315711809948e-5), z, _F32(-1.388731625493765e-3)), z, _F32(4.166664568298827e-2))
    c = _fma32(c * z, z, -(z * _F32(0.5))) + _F32(1)
    s = _fma32(_fma32(_F32(-1.9515295891e-4), z, _F32(8.3321608736e-3)), z, _F32(-1.6666654611e-1))
    s = _fma32(s * z, x, x)
    sin = np.where(poly_sin, s, c)
    cos = np.where(poly_sin, c, s)
    return np.where(sin_sign, -sin, sin), np.where(cos_sign, -cos, cos)


def _box_muller_16(u: np.ndarray, mean, std) -> np.ndarray:
    """``NormalFill16`` on rows of 16 uniforms: ``(B, 16) -> (B, 16)`` (float32: AVX2; float64: libm)."""
    if u.dtype == np.float64:
        radius = np.sqrt(-2.0 * _libm(math.log, 1.0 - u[:, :8]))  # (B, 8)
        theta = 2.0 * math.pi * u[:, 8:]  # (B, 8)
        z = np.concatenate([radius * _libm(math.cos, theta), radius * _libm(math.sin, theta)], axis=1)
        return _fma64(z, std, mean)
    radius = np.sqrt(_F32(-2) * _log_avx(_F32(1) - u[:, :8]))  # (B, 8)
    sin, cos = _sincos_avx(_F32(2.0 * math.pi) * u[:, 8:])  # (B, 8) each
    z = np.concatenate([radius * cos, radius * sin], axis=1)  # (B, 16)
    return (z.astype(np.float64) * np.float64(_F32(std)) + np.float64(_F32(mean))).astype(_F32)  # fmadd


def _normal_scalar(rng: CPUGenerator, n: int, mean, std) -> np.ndarray:
    """``normal_distribution<double>`` ``n`` times, with the generator's cached second value. ``(n,)`` float64."""
    out = np.empty(n, dtype=np.float64)
    i = 0
    if n and rng.next_double_normal is not None:
        out[0], rng.next_double_normal, i = rng.next_double_normal, None, 1
    pairs = (n - i + 1) // 2
    u = _unit64(rng, 2 * pairs).reshape(pairs, 2)  # (P, 2): u1 (angle), u2 (radius)
    r = np.sqrt(-2.0 * _libm(math.log1p, -u[:, 1]))  # (P,)
    theta = 2.0 * math.pi * u[:, 0]
    z = np.stack([r * _libm(math.cos, theta), r * _libm(math.sin, theta)], axis=1).ravel()  # (2P,)
    out[i:] = z[:n - i]
    if (n - i) % 2:
        rng.next_double_normal = float(z[-1])
    return _fma64(out, std, mean)  # transformation::normal, fused by the compiler


def normal(rng, shape, dtype, mean=0.0, std=1.0, contiguous=True) -> np.ndarray:
    """``Tensor.normal_(mean, std)`` / ``torch.randn``: PyTorch's two paths (see the module docstring). ``(*shape)``.

    ``contiguous=False`` (``normal_`` on a strided view) takes the scalar path at any size, as PyTorch.
    """
    if not std >= 0.0:  # a negative std would give negated draws; NaN is refused too
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    dt = _real(dtype, "normal")
    if not is_torch_stream(rng):
        return (rng.standard_normal(shape, dtype=np.float64) * std + mean).astype(dt)
    n = _numel(shape)
    if n < 16 or not contiguous:
        return _normal_scalar(rng, n, mean, std).astype(dt).reshape(shape)
    op = _opmath(dt)
    if op == dt:  # float32/float64: every uniform first, into the output
        data = _unit(rng, n, op)  # (n,)
        full = n - n % 16
        data[:full] = _box_muller_16(data[:full].reshape(-1, 16), mean, std).ravel()
        if n % 16:
            data[n - 16:] = _box_muller_16(_unit(rng, 16, op).reshape(1, 16), mean, std).ravel()
        return data.reshape(shape)
    blocks = -(-n // 16)  # float16/bfloat16: 16 uniforms at a time into a buffer, cast down
    z = _box_muller_16(_unit(rng, 16 * blocks, op).reshape(blocks, 16), mean, std).ravel()  # (16 B,)
    data = z[:n].copy()
    if n % 16:
        data[n - 16:] = z[-16:]
    return data.astype(dt).reshape(shape)


# ---------------------------------------------------------------------------------------------------
# integers
# ---------------------------------------------------------------------------------------------------


def random_from_to(rng, shape, dtype, low: int, high: int) -> np.ndarray:
    """``randint(low, high)`` / ``random_(from, to)``: ``word % (high - low) + low``. ``(*shape)``."""
    dt = np.dtype(dtype)
    if not is_torch_stream(rng):
        return rng.integers(low, high, size=shape, dtype=np.int64).astype(dt)
    span, n = int(high) - int(low), _numel(shape)
    words = rng.random64(n) if span >= 2**28 else rng.random32(n).astype(np.uint64)
    vals = ((words % np.uint64(span)) + np.uint64(int(low) % 2**64)).view(np.int64)  # wraps as C++
    return vals.astype(dt).reshape(shape)


def random_full_64(rng, shape, dtype) -> np.ndarray:
    """``random_(-2**63, None)``: a whole 64-bit word as int64. ``(*shape)``."""
    if not is_torch_stream(rng):
        return rng.integers(-(2**63), 2**63 - 1, size=shape, dtype=np.int64, endpoint=True).astype(dtype)
    return rng.random64(_numel(shape)).view(np.int64).astype(dtype).reshape(shape)


def random_default(rng, shape, dtype) -> np.ndarray:
    """``random_()``: [0, max] for integers, [0, 2**digits] for floats (``uniform_int_distribution``)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        top = 2 ** (np.finfo(dt).nmant + 1)
    else:
        top = 1 if dt.kind == "b" else int(np.iinfo(dt).max)
    if not is_torch_stream(rng):
        return rng.integers(0, top, size=shape, dtype=np.int64, endpoint=True).astype(dt)
    n = _numel(shape)
    words = rng.random64(n) if dt in (np.float64, np.int64) else rng.random32(n).astype(np.uint64)
    if dt.kind == "b":
        return (words & np.uint64(1)).astype(dt).reshape(shape)
    return (words % np.uint64(top + 1)).astype(dt).reshape(shape)


def randperm(rng, n: int) -> np.ndarray:
    """``torch.randperm(n)`` on the CPU: swap place ``i`` with ``i + word % (n - i)``, i = 0 .. n-2. ``(n,)`` int64."""
    if not is_torch_stream(rng):
        return _xp(rng).argsort(rng.random(n)).astype(np.int64)
    perm = list(range(n))
    if n > 1:
        z = (rng.random32(n - 1).astype(np.int64) % np.arange(n, 1, -1, dtype=np.int64)).tolist()
        for i, k in enumerate(z):
            perm[i], perm[i + k] = perm[i + k], perm[i]
    return np.array(perm, dtype=np.int64)


# ---------------------------------------------------------------------------------------------------
# other continuous laws (each a float64 uniform per value, math in double, cast at the end)
# ---------------------------------------------------------------------------------------------------


def exponential(rng, shape, dtype, lambd=1.0) -> np.ndarray:
    """``exponential_(lambd)``: ``-1/lambd * log1p(-u)``, ``u`` a float64 uniform. ``(*shape)``."""
    if not is_torch_stream(rng):
        return (-_xp(rng).log1p(-rng.random(shape, dtype=np.float64)) / lambd).astype(dtype)
    u = _unit64(rng, _numel(shape))
    c = -1.0 / lambd  # the same double operations as ``c * _libm(math.log1p, -u)``, in one pass
    return np.array([c * math.log1p(-v) for v in u.tolist()], dtype=np.float64).astype(dtype).reshape(shape)


def cauchy(rng, shape, dtype, median=0.0, sigma=1.0) -> np.ndarray:
    """``cauchy_``: ``median + sigma * tan(pi * (u - 1/2))``. ``(*shape)``."""
    if not is_torch_stream(rng):
        return (median + sigma * _xp(rng).tan(math.pi * (rng.random(shape) - 0.5))).astype(dtype)
    u = _unit64(rng, _numel(shape))
    return (median + sigma * _libm(math.tan, math.pi * (u - 0.5))).astype(dtype).reshape(shape)


def log_normal(rng, shape, dtype, mean=1.0, std=2.0) -> np.ndarray:
    """``log_normal_``: ``exp`` of the scalar normal path. ``(*shape)``."""
    if not is_torch_stream(rng):
        return _xp(rng).exp(mean + std * rng.standard_normal(shape)).astype(dtype)
    z = _normal_scalar(rng, _numel(shape), mean, std)
    return _libm(math.exp, z).astype(dtype).reshape(shape)


def geometric(rng, shape, dtype, p) -> np.ndarray:
    """``geometric_``: ``ceil(log(u) / log1p(-p))``. ``(*shape)``."""
    if not is_torch_stream(rng):
        xp = _xp(rng)
        return xp.maximum(xp.ceil(xp.log1p(-rng.random(shape)) / math.log1p(-p)), 1).astype(dtype)
    u = _unit64(rng, _numel(shape))
    return np.ceil(_libm(math.log, u) / math.log1p(-p)).astype(dtype).reshape(shape)


# ---------------------------------------------------------------------------------------------------
# bernoulli, multinomial
# ---------------------------------------------------------------------------------------------------


def bernoulli_scalar(rng, shape, dtype, p: float) -> np.ndarray:
    """``bernoulli_(p)`` for a float ``p``: ``u < p`` with a float64 uniform. ``(*shape)``.

    PyTorch builds with MKL draw this from MKL's own stream on Intel CPUs (seeded from one word);
    this is the path every other CPU takes.
    """
    if not is_torch_stream(rng):
        return (rng.random(shape, dtype=np.float64) < p).astype(dtype)
    return (_unit64(rng, _numel(shape)) < p).astype(dtype).reshape(shape)


def bernoulli_tensor(rng, p: np.ndarray, dtype) -> np.ndarray:
    """``bernoulli_(p_tensor)`` / ``torch.bernoulli(p)``: ``u < p`` per element; ``u`` float64 for a float64 ``p``,
    else float32 (24 bits). ``p`` already has the output's shape. ``(*p.shape)``."""
    if not is_torch_stream(rng):
        return (rng.random(p.shape, dtype=np.float64) < p).astype(dtype)
    op = np.float64 if p.dtype == np.float64 else np.float32
    u = _unit(rng, p.size, np.dtype(op)).reshape(p.shape)
    return (u < p.astype(op)).astype(dtype)


def multinomial(rng, w: np.ndarray, n: int, replacement: bool) -> np.ndarray:
    """``torch.multinomial`` on the CPU, rows ``w`` of shape ``(B, C)`` (float32/float64): ``(B, n)`` int64.

    Without replacement, or one sample: ``argmax``/``topk`` of ``w / q`` with ``q = exponential_()``
    drawn like ``w`` (the exponential race). With replacement: per row, the cumulative sum in ``w``'s
    dtype divided by its total, the last entry set to 1, and for each sample a float64 uniform ``u``
    placed at the first entry ``>= u``.
    """
    B, C = w.shape
    if not is_torch_stream(rng):
        raise TypeError("random_torch.multinomial draws from the CPU generator; ops/random.py keeps the GPU path")
    if not replacement or n == 1:
        q = exponential(rng, w.shape, w.dtype)  # (B, C)
        keys = w / q
        if n == 1:
            return np.argmax(keys, axis=1)[:, None].astype(np.int64)
        return np.argsort(-keys, axis=1, kind="stable")[:, :n].astype(np.int64)
    out = np.empty((B, n), dtype=np.int64)
    for b in range(B):
        cum = np.cumsum(w[b])  # (C,) in w's dtype, left to right
        cum = cum / cum[-1]
        cum[-1] = 1
        out[b] = np.searchsorted(cum.astype(np.float64), _unit64(rng, n), side="left")
    return out
