"""minitorch_ln: a tensor and autograd mini-framework on NumPy (and CuPy), built around LayerNorm."""

__version__ = "0.1.0"

import numpy as _np

from . import autograd, backend, ops
from .autograd import enable_grad, no_grad
from .backend import Device, cuda_is_available, device, manual_seed
from .ops import (  # the public op functions, also reachable as Tensor methods
    abs, add, all, amax, amin, any, argmax, argmin, broadcast_to, cat, chunk, clamp, clone, cos, cross_entropy,
    div, dropout, embedding, eq, erf, exp, expand, flatten, ge, gelu, gt, isfinite, isnan, le, log, log_softmax,
    logical_and, logical_not, logical_or, logsumexp, lt, masked_fill, matmul, max, maximum, mean, min, minimum,
    mse_loss, mul, ne, neg, nll_loss, permute, pow, relu, reshape, rsqrt, sigmoid, sin, softmax, split, sqrt,
    squeeze, stack, std, sub, sum, tanh, topk, transpose, tril, triu, unsqueeze, var, view, where,
)
from .serialization import load, save
from . import nn, optim  # noqa: E402 - after the ops, which the layers use
from .tensor import (
    Tensor, arange, empty, empty_like, eye, full, full_like, ones, ones_like, rand, rand_like, randint,
    randn, randn_like, tensor, zeros, zeros_like,
)

float16 = half = _np.dtype(_np.float16)
float32 = float = _np.dtype(_np.float32)  # noqa: A001
float64 = double = _np.dtype(_np.float64)
int32 = _np.dtype(_np.int32)
int64 = long = _np.dtype(_np.int64)
bool = _np.dtype(_np.bool_)  # noqa: A001
