"""Differentiable ops, one module per family. Each op is a ``Function`` plus the function that applies it."""

from .elementwise import (
    abs, add, cast, clamp, clone, cos, div, eq, erf, exp, ge, gelu, gt, isfinite, isnan, le, log,
    logical_and, logical_not, logical_or, lt, masked_fill, maximum, minimum, mul, ne, neg, pow, relu,
    rsqrt, sigmoid, sin, sqrt, sub, tanh, to_device, unbroadcast, where,
)
from .dropout import dropout
from .embedding import embedding
from .indexing import cat, chunk, getitem, setitem_, split, stack, tril, triu
from .matmul import linear, matmul
from .batch_norm import batch_norm
from .layer_norm import layer_norm
from .rms_norm import rms_norm
from .reduction import (
    all, amax, amin, any, argmax, argmin, logsumexp, max, mean, min, std, sum, topk, var,
)
from .shape import (
    broadcast_to, expand, flatten, permute, reshape, squeeze, sum_to, transpose, unsqueeze, view,
)
from .softmax import cross_entropy, log_softmax, mse_loss, nll_loss, softmax
