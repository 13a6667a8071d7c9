"""Differentiable ops, one module per family. Each op is a ``Function`` followed by the function that
applies it; importing this package also attaches ``Tensor``'s operators and methods, every one listed in
``methods.py``.
"""

from .conversion import cast, clone, to_device
from .shape import broadcast_to, expand, flatten, permute, reshape, squeeze, sum_to, transpose, unbroadcast, unsqueeze, view
from .elementwise import abs, add, div, erf, exp, log, mul, neg, pow, rsqrt, sqrt, sub  # noqa: A004
from .selection import clamp, clamp_max, clamp_min, masked_fill, maximum, minimum, where
from .comparison import eq, ge, gt, isfinite, isnan, le, logical_and, logical_not, logical_or, lt, ne
from .activation import gelu, logsigmoid, mish, relu, sigmoid, silu, softplus, softsign, tanh, tanhshrink
from .activation_piecewise import (
    celu, elu, glu, hardsigmoid, hardswish, hardtanh, leaky_relu, prelu, relu6, rrelu, selu, softmin,
)
from .activation_threshold import hardshrink, softshrink, threshold
from .unary import (  # noqa: A004
    ceil, exp2, expm1, floor, frac, isinf, isneginf, isposinf, isreal, log1p, log2, log10, nan_to_num, reciprocal,
    round, sgn, sign, signbit, square, trunc,
)
from .unary_trig import acos, acosh, asin, asinh, atan, atanh, cos, cosh, erfc, erfinv, sin, sinh, tan
from .binary import (
    allclose, atan2, copysign, equal, float_power, fmax, fmin, heaviside, hypot, isclose, lerp, logaddexp, logaddexp2,
    xlogy,
)
from .division import div_rounding, floor_divide, fmod, remainder, true_divide
from .bitwise import (
    bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor, logical_xor,
)
from .reduction import all, amax, amin, any, argmax, argmin, logsumexp, max, mean, min, sum, topk  # noqa: A004
from .variance import std, var
from .statistics import aminmax, count_nonzero, prod, std_mean, var_mean
from .scan import cummax, cummin, cumprod, cumsum, logcumsumexp
from .sorting import argsort, kthvalue, median, mode, msort, nanmedian, quantile, sort, unique
from .histogram import histc, histogram
from .linalg_norms import linalg_matrix_norm, linalg_vector_norm, norm
from .indexing import cat, getitem, setitem_, stack
from .grids import tril, triu
from .scatter import gather, scatter, scatter_add, scatter_reduce, take, take_along_dim
from .index_ops import index_add, index_copy, index_fill, index_select, masked_scatter, masked_select
from .searching import argwhere, bucketize, nonzero, searchsorted
from .matmul import linear, matmul
from .layer_norm import layer_norm
from .rms_norm import rms_norm
from .batch_norm import batch_norm
from .softmax import log_softmax, softmax
from .loss import cross_entropy, mse_loss, nll_loss
from .embedding import embedding
from .dropout import dropout
from .attention import scaled_dot_product_attention
from .convolution import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from .padding import pad
from .pooling import (
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d, avg_pool1d, avg_pool2d,
    max_pool1d, max_pool2d,
)
from .creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, logspace, ones, ones_like, rand,
    rand_like, randint, randint_like, randn, randn_like, zeros, zeros_like,
)
from .generator import Generator, default_generator, initial_seed, manual_seed, seed
from .random import bernoulli, multinomial, normal, poisson, randperm
from .reorder import flip, fliplr, flipud, repeat_interleave, roll, rot90, tile
from .stacking import (
    atleast_1d, atleast_2d, atleast_3d, block_diag, chunk, column_stack, dsplit, dstack, hsplit, hstack, row_stack,
    split, tensor_split, vsplit, vstack,
)
from .grids import cartesian_prod, combinations, diag, diag_embed, diagflat, meshgrid, tril_indices, triu_indices
from .einsum import einsum
from .products import addmm, baddbmm, bmm, cross, dot, kron, mm, mv, outer, tensordot, vdot
from .products import outer as ger
from .linalg_ops import inv as inverse
from .linalg_decomp import det, slogdet
from .loss_regression import gaussian_nll_loss, huber_loss, kl_div, l1_loss, poisson_nll_loss, smooth_l1_loss
from .loss_margin import (
    binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss, margin_ranking_loss, one_hot,
    soft_margin_loss, triplet_margin_loss,
)
from .distance import cdist, cosine_similarity, normalize, pairwise_distance
from .view_ops import diagonal, index_put, movedim, moveaxis, narrow, select, swapaxes, swapdims, unbind, unflatten
from .group_norm import group_norm, instance_norm
from .local_response_norm import local_response_norm
from .fold import fold, unfold  # noqa: F811 - the functions shadow the submodules' names here, as scatter/einsum
from .interpolate import interpolate  # noqa: F811
from .pixel_shuffle import pixel_shuffle, pixel_unshuffle
from .methods import setup_tensor

setup_tensor()  # every Tensor method and operator, listed in ops/methods.py
