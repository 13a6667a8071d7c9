"""minitorch_ln: a tensor and autograd mini-framework on NumPy (and CuPy), built around LayerNorm."""

from ._version import __version__

import numpy as _np

from . import autograd, backend, kernels, ops
from .autograd import enable_grad, no_grad
from .backend import Device, cuda_is_available, device
from .ops.generator import manual_seed  # returns the default Generator, as torch.manual_seed
from .ops.generator import get_rng_state, set_rng_state  # the global CPU stream's state, PyTorch's layout
from .ops import (  # noqa: A004 - the public op functions (PyTorch's names), most also Tensor methods
    Generator, abs, acos, acosh, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d,
    adaptive_max_pool2d, add, addmm, all, allclose, amax, amin, aminmax, any, arange, argmax, argmin, argsort,
    argwhere, as_strided, as_tensor, asin, asinh, atan, atan2, atanh, atleast_1d, atleast_2d, atleast_3d, avg_pool1d,
    avg_pool2d, baddbmm, batch_norm, bernoulli, bincount, binary_cross_entropy, binary_cross_entropy_with_logits,
    bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor, block_diag,
    bmm, broadcast_to, bucketize, cartesian_prod, cat, cdist, ceil, celu, chunk, clamp, clamp_max, clamp_min, clone,
    column_stack, combinations, conv1d, conv2d, conv_transpose1d, conv_transpose2d, copysign, cos, cosh,
    cosine_embedding_loss, cosine_similarity, count_nonzero, cross, cross_entropy, cummax, cummin, cumprod,
    cumsum, default_generator, det, diag, diag_embed, diagflat, diagonal, diff, dot, dropout, dsplit, dstack, einsum,
    elu, embedding, empty, empty_like, eq, equal, erf, erfc, erfinv, exp, exp2, expand, expm1, eye, flatten,
    flip, fliplr, flipud, float_power, floor, floor_divide, fmax, fmin, fmod, frac, from_numpy, full,
    full_like, gather, gaussian_nll_loss, ge, gelu, ger, glu, group_norm, gt, hardshrink, hardsigmoid, hardswish, hardtanh,
    heaviside, hsplit, hstack, huber_loss, hypot, index_add, index_copy, index_fill, index_put, index_select,
    initial_seed, instance_norm, inverse, isclose, isfinite, isin, isinf, isnan, isneginf, isposinf, isreal, kl_div, kron, kthvalue,
    l1_loss, layer_norm, le, leaky_relu, lerp, linear, linspace, log, log10, log1p, log2, log_softmax,
    logaddexp, logaddexp2, logcumsumexp, logical_and, logical_not, logical_or, logical_xor, logsigmoid,
    logspace, logsumexp, lt, margin_ranking_loss, masked_fill, masked_scatter, masked_select, matmul, max,
    max_pool1d, max_pool2d, maximum, mean, median, meshgrid, min, minimum, mish, mm, mode, moveaxis, movedim,
    mse_loss, msort, mul, multinomial, mv, nan_to_num, nanmean, nanmedian, nansum, narrow, ne, neg, nll_loss, nonzero, norm,
    normal, normalize, one_hot, ones, ones_like, outer, pad, pairwise_distance, permute, pixel_shuffle, pixel_unshuffle, poisson,
    poisson_nll_loss, pow, prelu, prod, quantile, rand, rand_like, randint, randint_like, randn, randn_like,
    randperm, reciprocal, relu, relu6, remainder, repeat_interleave, reshape, rms_norm, roll, rot90, round,
    row_stack, rrelu, rsqrt, scaled_dot_product_attention, scatter, scatter_add, scatter_reduce, searchsorted,
    seed, select, selu, sgn, sigmoid, sign, signbit, silu, sin, sinh, slogdet, smooth_l1_loss,
    soft_margin_loss, softmax, softmin, softplus, softshrink, softsign, sort, split, sqrt, square, squeeze,
    stack, std, std_mean, sub, sum, swapaxes, swapdims, take, take_along_dim, tan, tanh, tanhshrink,
    tensor_split, tensordot, threshold, tile, topk, transpose, tril, tril_indices, triplet_margin_loss, triu,
    triu_indices, true_divide, trunc, unbind, unflatten, unique, unique_consecutive, unsqueeze, var, var_mean, vdot, view, vsplit,
    vstack, where, xlogy, zeros, zeros_like,
)
from .ops import digamma, i0, lgamma, logit, mvlgamma, polygamma, sinc  # noqa: E402 - ops/special_fns.py
from .ops import div_rounding as div  # div(a, b, rounding_mode=None), as torch.div
from .ops import div_rounding as divide
from .tensor import Tensor, tensor
from .size import Size
from .ops import histc, histogram
from .tensor_str import set_printoptions
from .dtypes import bfloat16, can_cast, finfo, get_default_dtype, iinfo, promote_types, result_type, set_default_dtype
from .serialization import load, save
from . import linalg, nn, optim, special, utils  # noqa: E402 - after the ops, which the layers use
from . import amp  # noqa: E402 - mixed precision: autocast, GradScaler
from .amp import autocast, get_autocast_dtype, is_autocast_enabled, set_autocast_dtype  # noqa: E402
from . import diagnostics  # noqa: E402 - attaches the LayerNorm term check and gradcheck's heat-map writer

float16 = half = _np.dtype(_np.float16)
float32 = float = _np.dtype(_np.float32)  # noqa: A001
float64 = double = _np.dtype(_np.float64)
int32 = _np.dtype(_np.int32)
int16 = short = _np.dtype(_np.int16)
int8 = _np.dtype(_np.int8)
uint8 = _np.dtype(_np.uint8)
int64 = long = _np.dtype(_np.int64)
bool = _np.dtype(_np.bool_)  # noqa: A001


def __getattr__(name):
    # A PyTorch name this package does not provide: say so, and where the list of what exists is.
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: minitorch_ln does not provide it "
                         "(the PyTorch names it covers, and what differs: docs/torch_compat.md)")
