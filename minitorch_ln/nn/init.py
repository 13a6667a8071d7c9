"""Weight initializations, as ``torch.nn.init`` (in place, without recording a graph).

Formulas: Glorot & Bengio (2010) for ``xavier_*``; He et al. (2015) for ``kaiming_*``, with
``gain = sqrt(2 / (1 + a²))`` for leaky ReLU slope ``a``; ``bound = gain · sqrt(3 / fan)``.
"""

from __future__ import annotations

import math

from .. import backend
from ..autograd.grad_mode import no_grad


def _fans(t):
    if t.ndim < 2:
        raise ValueError(f"fan in and fan out need a tensor with at least 2 dimensions, got shape {tuple(t.shape)}")
    receptive = 1
    for s in t.shape[2:]:
        receptive *= s
    return t.shape[1] * receptive, t.shape[0] * receptive


def calculate_gain(nonlinearity: str, param=None) -> float:
    if nonlinearity in ("linear", "sigmoid", "identity", "conv1d", "conv2d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


def _fill(t, sample):
    with no_grad():
        t.data[...] = backend.get_array_module(t.data).asarray(sample(backend.generator(t.device))).astype(t.dtype)
        t._version[0] += 1
    return t


def uniform_(t, a: float = 0.0, b: float = 1.0):
    return _fill(t, lambda g: g.uniform(a, b, size=t.shape))


def normal_(t, mean: float = 0.0, std: float = 1.0):
    return _fill(t, lambda g: g.standard_normal(size=t.shape) * std + mean)


def constant_(t, val: float):
    with no_grad():
        t.data.fill(val)
        t._version[0] += 1
    return t


def zeros_(t):
    return constant_(t, 0.0)


def ones_(t):
    return constant_(t, 1.0)


def xavier_uniform_(t, gain: float = 1.0):
    fan_in, fan_out = _fans(t)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound)


def xavier_normal_(t, gain: float = 1.0):
    fan_in, fan_out = _fans(t)
    return normal_(t, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(t, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    fan_in, fan_out = _fans(t)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    return uniform_(t, -bound, bound)


def kaiming_normal_(t, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    fan_in, fan_out = _fans(t)
    fan = fan_in if mode == "fan_in" else fan_out
    return normal_(t, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan))
