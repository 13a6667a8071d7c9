"""Weight initializations, as ``torch.nn.init`` (in place, without recording a graph).

Every function takes a floating point Tensor of any shape (``fan``-based ones need at least 2
dimensions: ``(fan_out, fan_in, *kernel)``), fills it from ``generator=`` or the tensor's device
generator (seeded by :func:`minitorch_ln.manual_seed`), keeps its dtype and device, and returns it.
On the CPU the draws and the bound arithmetic are PyTorch's, so a seeded model starts from
PyTorch's weights (``docs/random.md``; ``orthogonal_`` to a few ulp, through a QR decomposition).

Formulas: Glorot & Bengio (2010) for ``xavier_*``: ``std = gain · sqrt(2 / (fan_in + fan_out))``;
He et al. (2015) for ``kaiming_*``: ``std = gain / sqrt(fan)``, with ``gain = sqrt(2 / (1 + a²))``
for leaky ReLU slope ``a``; a uniform on ``±bound`` has ``std = bound / sqrt(3)``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import backend, random_torch
from ..autograd.grad_mode import no_grad
from ..ops.generator import rng_for as _rng_for  # private: nn.init lists only PyTorch's names


def _fans(t):
    if t.ndim < 2:
        raise ValueError(f"fan in and fan out need a tensor with at least 2 dimensions, got shape {tuple(t.shape)}")
    receptive = 1
    for s in t.shape[2:]:
        receptive *= s
    return t.shape[1] * receptive, t.shape[0] * receptive


def _fan(t, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(t)
    return fan_in if mode == "fan_in" else fan_out


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table): relu √2, tanh 5/3, leaky_relu √(2/(1+a²)), ...

    Raises:
        ValueError: an unknown nonlinearity.
    """
    if nonlinearity in ("linear", "sigmoid", "identity", "conv1d", "conv2d", "conv3d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}: expected linear, sigmoid, tanh, relu, leaky_relu or selu")


def _fill(t, sample, generator=None, memory_order=True):
    """``t`` filled with ``sample(generator, shape)``: drawn in memory order (``random_torch.in_memory_order``) as
    PyTorch's in-place draws are, or (``memory_order=False``, a result copied in, as ``orthogonal_``) in ``t``'s
    logical order."""
    if not backend.is_floating(t.dtype):
        raise TypeError(f"initialization needs a floating point tensor, got dtype {t.dtype}")
    with no_grad():
        xp = backend.get_array_module(t.array)
        g = _rng_for(generator, t.device)  # in memory order, as PyTorch (init.normal_(w.t()))
        vals = random_torch.in_memory_order(t.array, lambda s, _: sample(g, s)) if memory_order else sample(g, t.shape)
        t.array[...] = xp.asarray(vals).astype(t.dtype)
        t._bump_version()
    return t


def uniform_(t, a: float = 0.0, b: float = 1.0, generator=None):
    """Fill ``t`` with draws from U(a, b) (``Tensor.uniform_``)."""
    return _fill(t, lambda g, s: random_torch.uniform(g, s, t.dtype, a, b), generator)


def normal_(t, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fill ``t`` with draws from N(mean, std²) (``Tensor.normal_``)."""
    return _fill(t, lambda g, s: random_torch.normal(g, s, t.dtype, mean, std, contiguous=t.is_contiguous()),
                 generator)


def trunc_normal_(t, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator=None):
    """Fill ``t`` with N(mean, std²) draws restricted to ``[a, b]`` (absolute bounds), as PyTorch 2.13 draws them.

    When ``[a, b]`` holds more than 30% of the mass: normal draws, and a whole new tensor of them
    for the places still outside ``[a, b]``, until none is. Otherwise rejection from ``U(a, b)``:
    a candidate ``x`` stays when ``log(v) <= -(x - mean)²/(2 std²) - log_peak``, ``v ~ U(0, 1)``.

    Raises:
        ValueError: ``a >= b``.
    """
    if not a < b:
        raise ValueError(f"trunc_normal_: the bounds must satisfy a < b, got a={a}, b={b}")

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    dt = t.dtype
    mass = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)

    def by_normal(g, shape):
        lo, hi = dt.type(a), dt.type(b)
        out = random_torch.normal(g, shape, dt, mean, std, contiguous=t.is_contiguous())  # (*t.shape)
        while True:
            bad = (out < lo) | (out > hi)
            if not bool(bad.any()):
                return out
            out = np.where(bad, random_torch.normal(g, shape, dt, mean, std), out)

    def by_rejection(g, shape):
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2

        def log_pdf(x):  # in t's dtype, each Python number cast to it (PyTorch's scalar arithmetic)
            z = (x - dt.type(mean)) / dt.type(std)
            return (z * z) * dt.type(-0.5) - dt.type(log_peak)

        out = random_torch.uniform(g, shape, dt, a, b)  # (*t.shape)
        pending = np.log(random_torch.uniform(g, shape, dt)) > log_pdf(out)
        while bool(pending.any()):
            cand = random_torch.uniform(g, shape, dt, a, b)
            out = np.where(pending, cand, out)
            pending = np.where(pending, np.log(random_torch.uniform(g, shape, dt)) > log_pdf(cand), pending)
        return out

    return _fill(t, by_normal if mass > 0.3 else by_rejection, generator)


def constant_(t, val: float):
    """Fill ``t`` with ``val``."""
    with no_grad():
        t.array.fill(val)
        t._bump_version()
    return t


def zeros_(t):
    return constant_(t, 0.0)


def ones_(t):
    return constant_(t, 1.0)


def xavier_uniform_(t, gain: float = 1.0, generator=None):
    """U(-bound, bound) with ``bound = gain · sqrt(6 / (fan_in + fan_out))`` (Glorot & Bengio, 2010)."""
    if 0 in tuple(t.shape):  # as PyTorch: nothing to draw (and fan 0 would divide by zero)
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return t
    fan_in, fan_out = _fans(t)
    bound = math.sqrt(3.0) * (gain * math.sqrt(2.0 / float(fan_in + fan_out)))  # PyTorch's rounding
    return uniform_(t, -bound, bound, generator)


def xavier_normal_(t, gain: float = 1.0, generator=None):
    """N(0, std²) with ``std = gain · sqrt(2 / (fan_in + fan_out))`` (Glorot & Bengio, 2010)."""
    if 0 in tuple(t.shape):  # as PyTorch: nothing to draw (and fan 0 would divide by zero)
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return t
    fan_in, fan_out = _fans(t)
    return normal_(t, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(t, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    """U(-bound, bound) with ``bound = gain · sqrt(3 / fan)`` (He et al., 2015).

    ``Linear`` uses ``a=√5``, which gives ``bound = 1 / sqrt(fan_in)``.

    Raises:
        ValueError: fewer than 2 dimensions, or ``mode`` not ``fan_in``/``fan_out``.
    """
    if 0 in tuple(t.shape):  # as PyTorch: nothing to draw (and fan 0 would divide by zero)
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return t
    bound = math.sqrt(3.0) * (calculate_gain(nonlinearity, a) / math.sqrt(_fan(t, mode)))  # PyTorch's rounding
    return uniform_(t, -bound, bound, generator)


def kaiming_normal_(t, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    """N(0, std²) with ``std = gain / sqrt(fan)`` (He et al., 2015)."""
    if 0 in tuple(t.shape):  # as PyTorch: nothing to draw (and fan 0 would divide by zero)
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return t
    return normal_(t, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(t, mode)), generator)


def orthogonal_(t, gain: float = 1.0, generator=None):
    """A (semi-)orthogonal matrix (Saxe et al., 2013), as PyTorch: ``(rows, cols)`` N(0, 1) draws,
    transposed when ``rows < cols``, ``Q`` of their QR with column signs of ``diag(R)``, times ``gain``.

    The draws are PyTorch's; ``Q`` comes from NumPy's/CuPy's LAPACK, so it agrees to a few ulp.

    Raises:
        ValueError: fewer than 2 dimensions.
    """
    if t.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if t.numel() == 0:
        return t
    rows = t.shape[0]
    cols = t.numel() // rows

    def sample(g, _):
        flat = random_torch.normal(g, (rows, cols), t.dtype)  # (rows, cols)
        xp = backend.get_array_module(t.array)
        flat = xp.asarray(flat)
        if rows < cols:
            flat = flat.T
        q, r = xp.linalg.qr(flat)
        q = q * xp.sign(xp.diagonal(r))  # each column's sign from R's diagonal
        if rows < cols:
            q = q.T
        return (q * t.dtype.type(gain)).reshape(t.shape)

    return _fill(t, sample, generator, memory_order=False)  # PyTorch copies Q into t
