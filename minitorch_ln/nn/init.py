"""Weight initializations, as ``torch.nn.init`` (in place, without recording a graph).

Every function takes a floating point Tensor of any shape (``fan``-based ones need at least 2
dimensions: ``(fan_out, fan_in, *kernel)``), fills it from the tensor's device generator (seeded by
:func:`minitorch_ln.manual_seed`), keeps its dtype and device, and returns it.

Formulas: Glorot & Bengio (2010) for ``xavier_*``: ``std = gain · sqrt(2 / (fan_in + fan_out))``;
He et al. (2015) for ``kaiming_*``: ``std = gain / sqrt(fan)``, with ``gain = sqrt(2 / (1 + a²))``
for leaky ReLU slope ``a``; a uniform on ``±bound`` has ``std = bound / sqrt(3)``.
"""

from __future__ import annotations

import math
import warnings

from .. import backend
from ..autograd.grad_mode import no_grad


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


def _fill(t, sample):
    if t.dtype.kind != "f":
        raise TypeError(f"initialization needs a floating point tensor, got dtype {t.dtype}")
    with no_grad():
        xp = backend.get_array_module(t.array)
        t.array[...] = xp.asarray(sample(backend.generator(t.device))).astype(t.dtype)
        t._bump_version()
    return t


def uniform_(t, a: float = 0.0, b: float = 1.0):
    """Fill ``t`` with draws from U(a, b)."""
    return _fill(t, lambda g: g.uniform(a, b, size=t.shape))


def normal_(t, mean: float = 0.0, std: float = 1.0):
    """Fill ``t`` with draws from N(mean, std²)."""
    return _fill(t, lambda g: g.standard_normal(size=t.shape) * std + mean)


def trunc_normal_(t, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0):
    """Fill ``t`` with N(mean, std²) draws restricted to ``[a, b]`` (absolute bounds, as PyTorch).

    Sampled by redrawing out-of-range values, which is exact and fast when ``[a, b]`` holds most of
    the mass (the usual ``±2 std``).

    Raises:
        ValueError: ``a >= b``.
    """
    if not a < b:
        raise ValueError(f"trunc_normal_: the bounds must satisfy a < b, got a={a}, b={b}")

    def sample(g):
        xp = backend.get_array_module(t.array)
        out = g.standard_normal(size=t.shape) * std + mean  # (*t.shape)
        for _ in range(1000):
            bad = (out < a) | (out > b)
            if not bool(bad.any()):
                return out
            out = xp.where(bad, g.standard_normal(size=t.shape) * std + mean, out)
        return xp.clip(out, a, b)  # only reached when [a, b] holds almost no mass

    return _fill(t, sample)


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


def xavier_uniform_(t, gain: float = 1.0):
    """U(-bound, bound) with ``bound = gain · sqrt(6 / (fan_in + fan_out))`` (Glorot & Bengio, 2010)."""
    if 0 in tuple(t.shape):  # as PyTorch: nothing to draw (and fan 0 would divide by zero)
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return t
    fan_in, fan_out = _fans(t)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound)


def xavier_normal_(t, gain: float = 1.0):
    """N(0, std²) with ``std = gain · sqrt(2 / (fan_in + fan_out))`` (Glorot & Bengio, 2010)."""
    if 0 in tuple(t.shape):  # as PyTorch: nothing to draw (and fan 0 would divide by zero)
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return t
    fan_in, fan_out = _fans(t)
    return normal_(t, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(t, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    """U(-bound, bound) with ``bound = gain · sqrt(3 / fan)`` (He et al., 2015).

    ``Linear`` uses ``a=√5``, which gives ``bound = 1 / sqrt(fan_in)``.

    Raises:
        ValueError: fewer than 2 dimensions, or ``mode`` not ``fan_in``/``fan_out``.
    """
    if 0 in tuple(t.shape):  # as PyTorch: nothing to draw (and fan 0 would divide by zero)
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return t
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(t, mode))
    return uniform_(t, -bound, bound)


def kaiming_normal_(t, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    """N(0, std²) with ``std = gain / sqrt(fan)`` (He et al., 2015)."""
    if 0 in tuple(t.shape):  # as PyTorch: nothing to draw (and fan 0 would divide by zero)
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return t
    return normal_(t, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(t, mode)))
