"""Every op and layer as one row: our call, PyTorch's call, and the inputs. Shared by the GPU tests
(``tests/test_gpu.py``: CuPy vs NumPy and vs PyTorch on CUDA) and the parity table
(``scripts/make_parity_table.py``: the largest NumPy-vs-CuPy difference of every op and gradient).

``make(rng, dtype)`` returns the inputs as NumPy arrays: float arrays require grad, integer arrays
(indices, targets) do not. ``ours`` and ``theirs`` take the tensors in that order and return a
tensor or a tuple of float tensors. Integer-valued results (argmax, comparisons) are in
``FORWARD_ONLY``, compared without gradients.
"""

from __future__ import annotations

import importlib
from collections import namedtuple

import numpy as np

import minitorch_ln as mt
import minitorch_ln.nn.functional as F

Op = namedtuple("Op", ["name", "ours", "theirs", "make"])


def _ops(name):
    # importlib: ``minitorch_ln.ops`` re-exports functions named like some modules (scatter, einsum)
    return importlib.import_module(f"minitorch_ln.ops.{name}")


act, actp, binary, bitwise = _ops("activation"), _ops("activation_piecewise"), _ops("binary"), _ops("bitwise")
convolution, distance, division, einsum = _ops("convolution"), _ops("distance"), _ops("division"), _ops("einsum")
grids, index_ops, ldec, lops = _ops("grids"), _ops("index_ops"), _ops("linalg_decomp"), _ops("linalg_ops")
lmar, lreg, norms, padding = _ops("loss_margin"), _ops("loss_regression"), _ops("linalg_norms"), _ops("padding")
pooling, products, reorder, scan = _ops("pooling"), _ops("products"), _ops("reorder"), _ops("scan")
scatter, sorting, stacking, stats = _ops("scatter"), _ops("sorting"), _ops("stacking"), _ops("statistics")
searching, actt = _ops("searching"), _ops("activation_threshold")
unary, unary_trig, view_ops = _ops("unary"), _ops("unary_trig"), _ops("view_ops")


def _torch():
    import torch  # noqa: PLC0415 - the parity script needs no PyTorch

    return torch


def _tf():
    return _torch().nn.functional


def normal(*shape):
    return lambda rng, dt: rng.standard_normal(shape).astype(dt)


def positive(*shape):
    return lambda rng, dt: rng.uniform(0.5, 2.0, shape).astype(dt)


def inputs(*makers):
    return lambda rng, dt: [m(rng, dt) for m in makers]


def ints(high, *shape):
    return lambda rng, dt: rng.integers(0, high, shape).astype(np.int64)


def mask(*shape):
    return lambda rng, dt: rng.random(shape) < 0.3


OPS = [
    # elementwise, broadcasting
    Op("add", lambda a, b: a + b, lambda a, b: a + b, inputs(normal(3, 4), normal(4))),
    Op("sub", lambda a, b: a - b, lambda a, b: a - b, inputs(normal(2, 3, 4), normal(3, 1))),
    Op("mul", lambda a, b: a * b, lambda a, b: a * b, inputs(normal(3, 4), normal(3, 4))),
    Op("div", lambda a, b: a / b, lambda a, b: a / b, inputs(normal(3, 4), positive(4))),
    Op("pow", lambda a, b: a ** b, lambda a, b: a ** b, inputs(positive(3, 4), normal(3, 4))),
    Op("pow_scalar", lambda a: a ** 3, lambda a: a ** 3, inputs(normal(5, 3))),
    Op("neg", lambda a: -a, lambda a: -a, inputs(normal(4, 3))),
    Op("abs", mt.abs, lambda a: a.abs(), inputs(normal(4, 3))),
    Op("exp", mt.exp, lambda a: a.exp(), inputs(normal(4, 3))),
    Op("log", mt.log, lambda a: a.log(), inputs(positive(4, 3))),
    Op("sqrt", mt.sqrt, lambda a: a.sqrt(), inputs(positive(4, 3))),
    Op("rsqrt", mt.rsqrt, lambda a: a.rsqrt(), inputs(positive(4, 3))),
    Op("sin", mt.sin, lambda a: a.sin(), inputs(normal(4, 3))),
    Op("cos", mt.cos, lambda a: a.cos(), inputs(normal(4, 3))),
    Op("tanh", mt.tanh, lambda a: a.tanh(), inputs(normal(4, 3))),
    Op("sigmoid", mt.sigmoid, lambda a: a.sigmoid(), inputs(normal(4, 3))),
    Op("relu", mt.relu, lambda a: a.relu(), inputs(normal(4, 3))),
    Op("gelu", mt.gelu, lambda a: _tf().gelu(a), inputs(normal(4, 3))),
    Op("gelu_tanh", lambda a: mt.gelu(a, approximate="tanh"), lambda a: _tf().gelu(a, approximate="tanh"),
       inputs(normal(4, 3))),
    Op("erf", mt.erf, lambda a: a.erf(), inputs(normal(4, 3))),
    Op("maximum", mt.maximum, lambda a, b: _torch().maximum(a, b), inputs(normal(3, 4), normal(3, 4))),
    Op("minimum", mt.minimum, lambda a, b: _torch().minimum(a, b), inputs(normal(3, 4), normal(4))),
    Op("clamp", lambda a: mt.clamp(a, -0.5, 0.7), lambda a: a.clamp(-0.5, 0.7), inputs(normal(4, 5))),
    Op("where", lambda c, a, b: mt.where(c, a, b), lambda c, a, b: _torch().where(c, a, b),
       inputs(mask(3, 4), normal(3, 4), normal(4))),
    Op("masked_fill", lambda a, m: a.masked_fill(m, -2.0), lambda a, m: a.masked_fill(m, -2.0),
       inputs(normal(3, 4), mask(3, 4))),
    Op("clone", mt.clone, lambda a: a.clone(), inputs(normal(3, 4))),
    # reductions
    Op("sum", lambda a: a.sum(1), lambda a: a.sum(1), inputs(normal(3, 4, 5))),
    Op("sum_all", lambda a: a.sum(), lambda a: a.sum(), inputs(normal(3, 4))),
    Op("mean", lambda a: a.mean((0, 2), keepdim=True), lambda a: a.mean((0, 2), keepdim=True), inputs(normal(3, 4, 5))),
    Op("var", lambda a: a.var(1), lambda a: a.var(1), inputs(normal(4, 6))),
    Op("std", lambda a: a.std(-1, keepdim=True), lambda a: a.std(-1, keepdim=True), inputs(normal(4, 6))),
    Op("max_dim", lambda a: mt.max(a, 1)[0], lambda a: a.max(1)[0], inputs(normal(4, 6))),
    Op("min_dim", lambda a: mt.min(a, 0)[0], lambda a: a.min(0)[0], inputs(normal(4, 6))),
    Op("amax", lambda a: mt.amax(a, -1), lambda a: a.amax(-1), inputs(normal(4, 6))),
    Op("amin", lambda a: mt.amin(a, 0), lambda a: a.amin(0), inputs(normal(4, 6))),
    Op("logsumexp", lambda a: mt.logsumexp(a, 1), lambda a: a.logsumexp(1), inputs(normal(4, 6))),
    Op("topk", lambda a: mt.topk(a, 3)[0], lambda a: a.topk(3)[0], inputs(normal(4, 6))),
    # shapes and indexing
    Op("reshape", lambda a: a.reshape(6, 4), lambda a: a.reshape(6, 4), inputs(normal(2, 3, 4))),
    Op("flatten", lambda a: a.flatten(1), lambda a: a.flatten(1), inputs(normal(2, 3, 4))),
    Op("permute", lambda a: a.permute(2, 0, 1), lambda a: a.permute(2, 0, 1), inputs(normal(2, 3, 4))),
    Op("transpose", lambda a: a.transpose(0, 1), lambda a: a.transpose(0, 1), inputs(normal(2, 3, 4))),
    Op("unsqueeze", lambda a: a.unsqueeze(1), lambda a: a.unsqueeze(1), inputs(normal(3, 4))),
    Op("squeeze", lambda a: a.squeeze(1), lambda a: a.squeeze(1), inputs(normal(3, 1, 4))),
    Op("expand", lambda a: a.expand(2, 3, 4), lambda a: a.expand(2, 3, 4), inputs(normal(3, 1))),
    Op("getitem_slice", lambda a: a[1:, ::2], lambda a: a[1:, ::2], inputs(normal(4, 6))),
    Op("getitem_index", lambda a, i: a[i], lambda a, i: a[i], inputs(normal(5, 3), ints(5, 7))),
    Op("cat", lambda a, b: mt.cat([a, b], 1), lambda a, b: _torch().cat([a, b], 1), inputs(normal(2, 3), normal(2, 4))),
    Op("stack", lambda a, b: mt.stack([a, b], 0), lambda a, b: _torch().stack([a, b], 0),
       inputs(normal(2, 3), normal(2, 3))),
    Op("split", lambda a: mt.split(a, 2, 1), lambda a: tuple(_torch().split(a, 2, 1)), inputs(normal(3, 5))),
    Op("chunk", lambda a: mt.chunk(a, 2, 0), lambda a: tuple(_torch().chunk(a, 2, 0)), inputs(normal(4, 3))),
    Op("tril", lambda a: mt.tril(a), lambda a: a.tril(), inputs(normal(4, 4))),
    Op("triu", lambda a: mt.triu(a, 1), lambda a: a.triu(1), inputs(normal(4, 4))),
    # matmul
    Op("matmul", mt.matmul, lambda a, b: a @ b, inputs(normal(3, 4), normal(4, 5))),
    Op("matmul_batched", mt.matmul, lambda a, b: a @ b, inputs(normal(2, 3, 4), normal(4, 5))),
    Op("matvec", mt.matmul, lambda a, b: a @ b, inputs(normal(3, 4), normal(4))),
    Op("linear", F.linear, lambda x, w, b: _tf().linear(x, w, b), inputs(normal(2, 3, 4), normal(5, 4), normal(5))),
    # normalization (LayerNorm goes through the fused CUDA kernels on the GPU)
    Op("layer_norm", lambda x, w, b: F.layer_norm(x, (8,), w, b), lambda x, w, b: _tf().layer_norm(x, (8,), w, b),
       inputs(normal(2, 5, 8), normal(8), normal(8))),
    Op("layer_norm_768", lambda x, w, b: F.layer_norm(x, (768,), w, b),
       lambda x, w, b: _tf().layer_norm(x, (768,), w, b), inputs(normal(33, 768), normal(768), normal(768))),
    Op("layer_norm_no_affine", lambda x: F.layer_norm(x, (6,)), lambda x: _tf().layer_norm(x, (6,)),
       inputs(normal(4, 6))),
    Op("layer_norm_2d_shape", lambda x, w: F.layer_norm(x, (3, 4), w), lambda x, w: _tf().layer_norm(x, (3, 4), w),
       inputs(normal(2, 3, 4), normal(3, 4))),
    Op("rms_norm", lambda x, w: F.rms_norm(x, (8,), w, 1e-6), lambda x, w: _tf().rms_norm(x, (8,), w, 1e-6),
       inputs(normal(3, 8), normal(8))),
    Op("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
       lambda x, w, b: _tf().batch_norm(x, None, None, w, b, training=True), inputs(normal(6, 3, 5), normal(3), normal(3))),
    # softmax and losses (fused CUDA kernels on the GPU where they apply)
    Op("softmax", lambda a: a.softmax(-1), lambda a: a.softmax(-1), inputs(normal(4, 7))),
    Op("softmax_dim0", lambda a: a.softmax(0), lambda a: a.softmax(0), inputs(normal(4, 7))),
    Op("log_softmax", lambda a: a.log_softmax(-1), lambda a: a.log_softmax(-1), inputs(normal(4, 7))),
    Op("cross_entropy", lambda x, t: F.cross_entropy(x, t), lambda x, t: _tf().cross_entropy(x, t),
       inputs(normal(6, 10), ints(10, 6))),
    Op("cross_entropy_smooth_sum", lambda x, t: F.cross_entropy(x, t, reduction="sum", label_smoothing=0.1),
       lambda x, t: _tf().cross_entropy(x, t, reduction="sum", label_smoothing=0.1), inputs(normal(6, 10), ints(10, 6))),
    Op("cross_entropy_none", lambda x, t: F.cross_entropy(x, t, reduction="none"),
       lambda x, t: _tf().cross_entropy(x, t, reduction="none"), inputs(normal(6, 10), ints(10, 6))),
    Op("cross_entropy_3d", lambda x, t: F.cross_entropy(x, t), lambda x, t: _tf().cross_entropy(x, t),
       inputs(normal(2, 5, 3), ints(5, 2, 3))),
    Op("nll_loss", lambda x, t: F.nll_loss(x, t), lambda x, t: _tf().nll_loss(x, t), inputs(normal(6, 10), ints(10, 6))),
    Op("mse_loss", lambda a, b: F.mse_loss(a, b), lambda a, b: _tf().mse_loss(a, b), inputs(normal(4, 5), normal(4, 5))),
    Op("embedding", lambda i, w: F.embedding(i, w), lambda i, w: _tf().embedding(i, w), inputs(ints(6, 3, 4), normal(6, 5))),
    Op("attention", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
       lambda q, k, v: _tf().scaled_dot_product_attention(q, k, v, is_causal=True),
       inputs(normal(2, 3, 5, 4), normal(2, 3, 5, 4), normal(2, 3, 5, 4))),
]

FORWARD_ONLY = [
    Op("eq", lambda a, b: a == b, lambda a, b: a == b, inputs(ints(3, 4, 5), ints(3, 4, 5))),
    Op("lt", lambda a, b: a < b, lambda a, b: a < b, inputs(normal(4, 5), normal(4, 5))),
    Op("argmax", lambda a: mt.argmax(a, 1), lambda a: a.argmax(1), inputs(normal(4, 6))),
    Op("argmin", lambda a: mt.argmin(a), lambda a: a.argmin(), inputs(normal(4, 6))),
    Op("isfinite", mt.isfinite, lambda a: a.isfinite(), inputs(normal(4, 6))),
    Op("any", lambda a: (a > 1).any(1), lambda a: (a > 1).any(1), inputs(normal(4, 6))),
]


# ==================================================================================================
# The ops modules added later (issue 14): one row per public op
# ==================================================================================================


def uniform(lo, hi, *shape):
    return lambda rng, dt: rng.uniform(lo, hi, shape).astype(dt)


def sorted_normal(*shape):
    return lambda rng, dt: np.sort(rng.standard_normal(shape), axis=-1).astype(dt)


def signs(*shape):
    return lambda rng, dt: np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(dt)


def distinct(n, k, cols=None):
    """``k`` distinct indices in ``[0, n)`` (per column when ``cols``): where duplicates would race."""
    if cols is None:
        return lambda rng, dt: rng.permutation(n)[:k].astype(np.int64)
    return lambda rng, dt: np.argsort(rng.random((n, cols)), axis=0)[:k].astype(np.int64)


def well_conditioned(*shape):
    n = shape[-1]
    return lambda rng, dt: (rng.standard_normal(shape) + n * np.eye(n)).astype(dt)


def spd(n):
    def make(rng, dt):
        a = rng.standard_normal((n, n))
        return (a @ a.T + n * np.eye(n)).astype(dt)
    return make


def symmetric(n):
    def make(rng, dt):
        a = rng.standard_normal((n, n))
        return (a + a.T).astype(dt)
    return make


def scalar():
    return lambda rng, dt: np.asarray(rng.standard_normal(), dtype=dt)


def _sym(a):
    return (a + a.transpose(-2, -1)) / 2


def _squared_vectors(result):
    """A decomposition's matrices squared elementwise (singular/eigen vectors' signs are free), values as they are."""
    return tuple(r if r.ndim == 1 else r ** 2 for r in result)


OPS += [
    # unary.py (rounding ops: a zero gradient, as PyTorch's)
    Op("floor", unary.floor, lambda a: a.floor(), inputs(normal(4, 3))),
    Op("ceil", unary.ceil, lambda a: a.ceil(), inputs(normal(4, 3))),
    Op("trunc", unary.trunc, lambda a: a.trunc(), inputs(normal(4, 3))),
    Op("round", unary.round, lambda a: a.round(), inputs(normal(4, 3))),
    Op("round_decimals", lambda a: unary.round(a, decimals=2), lambda a: a.round(decimals=2), inputs(normal(4, 3))),
    Op("sign", unary.sign, lambda a: a.sign(), inputs(normal(4, 3))),
    # PyTorch's sgn backward gives a ZeroTensor, which cannot go to NumPy; for real inputs sgn is sign
    Op("sgn", unary.sgn, lambda a: a.sign(), inputs(normal(4, 3))),
    Op("frac", unary.frac, lambda a: a.frac(), inputs(normal(4, 3))),
    Op("reciprocal", unary.reciprocal, lambda a: a.reciprocal(), inputs(positive(4, 3))),
    Op("square", unary.square, lambda a: a.square(), inputs(normal(4, 3))),
    Op("log2", unary.log2, lambda a: a.log2(), inputs(positive(4, 3))),
    Op("log10", unary.log10, lambda a: a.log10(), inputs(positive(4, 3))),
    Op("log1p", unary.log1p, lambda a: a.log1p(), inputs(positive(4, 3))),
    Op("exp2", unary.exp2, lambda a: a.exp2(), inputs(normal(4, 3))),
    Op("expm1", unary.expm1, lambda a: a.expm1(), inputs(normal(4, 3))),
    Op("nan_to_num", lambda a: unary.nan_to_num(a.log(), nan=0.5, neginf=-3.0),
       lambda a: a.log().nan_to_num(nan=0.5, neginf=-3.0), inputs(normal(4, 3))),
    # unary_trig.py
    Op("tan", unary_trig.tan, lambda a: a.tan(), inputs(uniform(-1.2, 1.2, 4, 3))),
    Op("asin", unary_trig.asin, lambda a: a.asin(), inputs(uniform(-0.9, 0.9, 4, 3))),
    Op("acos", unary_trig.acos, lambda a: a.acos(), inputs(uniform(-0.9, 0.9, 4, 3))),
    Op("atan", unary_trig.atan, lambda a: a.atan(), inputs(normal(4, 3))),
    Op("sinh", unary_trig.sinh, lambda a: a.sinh(), inputs(normal(4, 3))),
    Op("cosh", unary_trig.cosh, lambda a: a.cosh(), inputs(normal(4, 3))),
    Op("asinh", unary_trig.asinh, lambda a: a.asinh(), inputs(normal(4, 3))),
    Op("acosh", unary_trig.acosh, lambda a: a.acosh(), inputs(uniform(1.2, 3.0, 4, 3))),
    Op("atanh", unary_trig.atanh, lambda a: a.atanh(), inputs(uniform(-0.9, 0.9, 4, 3))),
    Op("erfc", unary_trig.erfc, lambda a: a.erfc(), inputs(normal(4, 3))),
    Op("erfinv", unary_trig.erfinv, lambda a: a.erfinv(), inputs(uniform(-0.9, 0.9, 4, 3))),
    # binary.py
    Op("atan2", binary.atan2, lambda a, b: _torch().atan2(a, b), inputs(normal(3, 4), normal(4))),
    Op("hypot", binary.hypot, lambda a, b: _torch().hypot(a, b), inputs(normal(3, 4), normal(3, 4))),
    Op("lerp_scalar", lambda a, b: binary.lerp(a, b, 0.3), lambda a, b: _torch().lerp(a, b, 0.3),
       inputs(normal(3, 4), normal(3, 4))),
    Op("lerp_tensor", binary.lerp, lambda a, b, w: _torch().lerp(a, b, w), inputs(normal(3, 4), normal(4), normal(3, 4))),
    Op("copysign", binary.copysign, lambda a, b: _torch().copysign(a, b), inputs(normal(3, 4), normal(3, 4))),
    Op("xlogy", binary.xlogy, lambda a, b: _torch().xlogy(a, b), inputs(normal(3, 4), positive(3, 4))),
    Op("float_power", binary.float_power, lambda a, b: _torch().float_power(a, b), inputs(positive(3, 4), normal(4))),
    Op("logaddexp", binary.logaddexp, lambda a, b: _torch().logaddexp(a, b), inputs(normal(3, 4), normal(3, 4))),
    Op("logaddexp2", binary.logaddexp2, lambda a, b: _torch().logaddexp2(a, b), inputs(normal(3, 4), normal(4))),
    Op("fmax", binary.fmax, lambda a, b: _torch().fmax(a, b), inputs(normal(3, 4), normal(3, 4))),
    Op("fmin", binary.fmin, lambda a, b: _torch().fmin(a, b), inputs(normal(3, 4), normal(4))),
    # division.py
    Op("div_trunc", lambda a, b: division.div_rounding(a, b, rounding_mode="trunc"),
       lambda a, b: _torch().div(a, b, rounding_mode="trunc"), inputs(normal(3, 4), positive(4))),
    Op("div_floor", lambda a, b: division.div_rounding(a, b, rounding_mode="floor"),
       lambda a, b: _torch().div(a, b, rounding_mode="floor"), inputs(normal(3, 4), positive(4))),
    Op("true_divide", division.true_divide, lambda a, b: _torch().true_divide(a, b), inputs(normal(3, 4), positive(3, 4))),
    Op("fmod", division.fmod, lambda a, b: _torch().fmod(a, b), inputs(normal(3, 4), positive(3, 4))),
    Op("remainder", division.remainder, lambda a, b: _torch().remainder(a, b), inputs(normal(3, 4), positive(4))),
    # activation.py
    Op("silu", act.silu, lambda a: _tf().silu(a), inputs(normal(4, 3))),
    Op("softplus", lambda a: act.softplus(a, beta=2.0, threshold=1.5), lambda a: _tf().softplus(a, beta=2.0, threshold=1.5),
       inputs(normal(4, 3))),
    Op("mish", act.mish, lambda a: _tf().mish(a), inputs(normal(4, 3))),
    Op("logsigmoid", act.logsigmoid, lambda a: _tf().logsigmoid(a), inputs(normal(4, 3))),
    Op("softsign", act.softsign, lambda a: _tf().softsign(a), inputs(normal(4, 3))),
    Op("tanhshrink", act.tanhshrink, lambda a: _tf().tanhshrink(a), inputs(normal(4, 3))),
    # activation_piecewise.py
    Op("elu", lambda a: actp.elu(a, 0.7), lambda a: _tf().elu(a, 0.7), inputs(normal(4, 3))),
    Op("selu", actp.selu, lambda a: _tf().selu(a), inputs(normal(4, 3))),
    Op("celu", lambda a: actp.celu(a, 1.3), lambda a: _tf().celu(a, 1.3), inputs(normal(4, 3))),
    Op("leaky_relu", lambda a: actp.leaky_relu(a, 0.1), lambda a: _tf().leaky_relu(a, 0.1), inputs(normal(4, 3))),
    Op("rrelu_eval", actp.rrelu, lambda a: _tf().rrelu(a), inputs(normal(4, 3))),
    Op("prelu", actp.prelu, lambda a, w: _tf().prelu(a, w), inputs(normal(2, 3, 4), normal(3))),
    Op("hardtanh", lambda a: actp.hardtanh(a, -0.5, 0.8), lambda a: _tf().hardtanh(a, -0.5, 0.8), inputs(normal(4, 3))),
    Op("relu6", actp.relu6, lambda a: _tf().relu6(a), inputs(uniform(-8, 8, 4, 3))),
    Op("hardsigmoid", actp.hardsigmoid, lambda a: _tf().hardsigmoid(a), inputs(uniform(-5, 5, 4, 3))),
    Op("hardswish", actp.hardswish, lambda a: _tf().hardswish(a), inputs(uniform(-5, 5, 4, 3))),
    Op("threshold", lambda a: actt.threshold(a, 0.2, -1.0), lambda a: _tf().threshold(a, 0.2, -1.0), inputs(normal(4, 3))),
    Op("softshrink", actt.softshrink, lambda a: _tf().softshrink(a), inputs(normal(4, 3))),
    Op("hardshrink", actt.hardshrink, lambda a: _tf().hardshrink(a), inputs(normal(4, 3))),
    Op("glu", lambda a: actp.glu(a, 0), lambda a: _tf().glu(a, 0), inputs(normal(4, 3))),
    Op("softmin", lambda a: actp.softmin(a, 1), lambda a: _tf().softmin(a, 1), inputs(normal(4, 3))),
    # scan.py
    Op("cumsum", lambda a: scan.cumsum(a, 1), lambda a: a.cumsum(1), inputs(normal(3, 5))),
    Op("cumprod", lambda a: scan.cumprod(a, 0), lambda a: a.cumprod(0), inputs(normal(4, 3))),
    Op("logcumsumexp", lambda a: scan.logcumsumexp(a, -1), lambda a: a.logcumsumexp(-1), inputs(normal(3, 5))),
    Op("cummax", lambda a: scan.cummax(a, 1)[0], lambda a: a.cummax(1)[0], inputs(normal(3, 5))),
    Op("cummin", lambda a: scan.cummin(a, 0)[0], lambda a: a.cummin(0)[0], inputs(normal(4, 3))),
    # sorting.py
    Op("sort", lambda a: sorting.sort(a, 1)[0], lambda a: a.sort(1)[0], inputs(normal(3, 5))),
    Op("sort_descending", lambda a: sorting.sort(a, 0, descending=True)[0], lambda a: a.sort(0, descending=True)[0],
       inputs(normal(4, 3))),
    Op("msort", sorting.msort, lambda a: _torch().msort(a), inputs(normal(4, 3))),
    Op("median_all", sorting.median, lambda a: a.median(), inputs(normal(4, 3))),
    Op("median_dim", lambda a: sorting.median(a, 1)[0], lambda a: a.median(1)[0], inputs(normal(3, 4))),
    Op("nanmedian", lambda a: sorting.nanmedian(a, 0)[0], lambda a: a.nanmedian(0)[0], inputs(normal(5, 3))),
    Op("kthvalue", lambda a: sorting.kthvalue(a, 2, 1)[0], lambda a: a.kthvalue(2, 1)[0], inputs(normal(3, 5))),
    Op("mode", lambda a: sorting.mode(a.floor(), 1)[0], lambda a: a.floor().mode(1)[0], inputs(normal(3, 7))),
    Op("quantile", lambda a: sorting.quantile(a, 0.3, dim=1), lambda a: a.quantile(0.3, dim=1), inputs(normal(3, 6))),
    Op("quantile_tensor_q", lambda a, q: sorting.quantile(a, q, dim=0, keepdim=True),
       lambda a, q: a.quantile(q, dim=0, keepdim=True), inputs(normal(5, 3), uniform(0.0, 1.0, 2))),
    # statistics.py
    Op("prod", lambda a: stats.prod(a, 1), lambda a: a.prod(1), inputs(normal(3, 4))),
    Op("prod_all", stats.prod, lambda a: a.prod(), inputs(normal(3, 4))),
    Op("var_mean", lambda a: stats.var_mean(a, 1), lambda a: tuple(_torch().var_mean(a, 1)), inputs(normal(3, 5))),
    Op("std_mean", lambda a: stats.std_mean(a, 0, correction=0), lambda a: tuple(_torch().std_mean(a, 0, correction=0)),
       inputs(normal(4, 3))),
    Op("aminmax", lambda a: tuple(stats.aminmax(a, dim=1)), lambda a: tuple(_torch().aminmax(a, dim=1)),
       inputs(normal(3, 5))),
    # norms.py
    Op("vector_norm", lambda a: norms.linalg_vector_norm(a, dim=1), lambda a: _torch().linalg.vector_norm(a, dim=1),
       inputs(normal(3, 5))),
    Op("vector_norm_1", lambda a: norms.linalg_vector_norm(a, 1), lambda a: _torch().linalg.vector_norm(a, 1),
       inputs(normal(3, 5))),
    Op("vector_norm_inf", lambda a: norms.linalg_vector_norm(a, float("inf"), dim=0),
       lambda a: _torch().linalg.vector_norm(a, float("inf"), dim=0), inputs(normal(3, 5))),
    Op("vector_norm_3", lambda a: norms.linalg_vector_norm(a, 3, keepdim=True),
       lambda a: _torch().linalg.vector_norm(a, 3, keepdim=True), inputs(normal(3, 5))),
    Op("matrix_norm_fro", norms.linalg_matrix_norm, lambda a: _torch().linalg.matrix_norm(a), inputs(normal(2, 3, 4))),
    Op("matrix_norm_nuc", lambda a: norms.linalg_matrix_norm(a, "nuc"), lambda a: _torch().linalg.matrix_norm(a, "nuc"),
       inputs(normal(3, 4))),
    Op("matrix_norm_1", lambda a: norms.linalg_matrix_norm(a, 1), lambda a: _torch().linalg.matrix_norm(a, 1),
       inputs(normal(3, 4))),
    Op("norm", lambda a: norms.norm(a), lambda a: a.norm(), inputs(normal(3, 4))),
    Op("norm_p_dim", lambda a: norms.norm(a, 1, dim=1), lambda a: a.norm(1, dim=1), inputs(normal(3, 4))),
    # scatter.py
    Op("gather", lambda a, i: scatter.gather(a, 1, i), lambda a, i: a.gather(1, i), inputs(normal(3, 5), ints(5, 3, 4))),
    Op("scatter_add", lambda a, i, s: scatter.scatter_add(a, 1, i, s), lambda a, i, s: a.scatter_add(1, i, s),
       inputs(normal(3, 5), ints(5, 3, 4), normal(3, 4))),
    Op("scatter_src", lambda a, i, s: scatter.scatter(a, 0, i, s), lambda a, i, s: a.scatter(0, i, s),
       inputs(normal(4, 3), distinct(4, 2, 3), normal(2, 3))),
    Op("scatter_value", lambda a, i: scatter.scatter(a, 0, i, value=1.5), lambda a, i: a.scatter(0, i, 1.5),
       inputs(normal(4, 3), distinct(4, 2, 3))),
    Op("scatter_reduce_sum", lambda a, i, s: scatter.scatter_reduce(a, 1, i, s, "sum"),
       lambda a, i, s: a.scatter_reduce(1, i, s, "sum"), inputs(normal(3, 5), ints(5, 3, 4), normal(3, 4))),
    Op("scatter_reduce_prod", lambda a, i, s: scatter.scatter_reduce(a, 1, i, s, "prod"),
       lambda a, i, s: a.scatter_reduce(1, i, s, "prod"), inputs(normal(3, 5), ints(5, 3, 4), normal(3, 4))),
    Op("scatter_reduce_mean", lambda a, i, s: scatter.scatter_reduce(a, 1, i, s, "mean", include_self=False),
       lambda a, i, s: a.scatter_reduce(1, i, s, "mean", include_self=False),
       inputs(normal(3, 5), ints(5, 3, 4), normal(3, 4))),
    Op("scatter_reduce_amax", lambda a, i, s: scatter.scatter_reduce(a, 1, i, s, "amax"),
       lambda a, i, s: a.scatter_reduce(1, i, s, "amax"), inputs(normal(3, 5), ints(5, 3, 4), normal(3, 4))),
    Op("scatter_reduce_amin", lambda a, i, s: scatter.scatter_reduce(a, 1, i, s, "amin", include_self=False),
       lambda a, i, s: a.scatter_reduce(1, i, s, "amin", include_self=False),
       inputs(normal(3, 5), ints(5, 3, 4), normal(3, 4))),
    Op("take", scatter.take, lambda a, i: a.take(i), inputs(normal(3, 4), ints(12, 2, 3))),
    Op("take_along_dim", lambda a, i: scatter.take_along_dim(a, i, 1), lambda a, i: a.take_along_dim(i, 1),
       inputs(normal(3, 5), ints(5, 3, 2))),
    # index_ops.py
    Op("index_select", lambda a, i: index_ops.index_select(a, 0, i), lambda a, i: a.index_select(0, i),
       inputs(normal(5, 3), ints(5, 4))),
    Op("index_add", lambda a, i, s: index_ops.index_add(a, 0, i, s, alpha=2.0), lambda a, i, s: a.index_add(0, i, s, alpha=2.0),
       inputs(normal(5, 3), ints(5, 4), normal(4, 3))),
    Op("index_copy", lambda a, i, s: index_ops.index_copy(a, 1, i, s), lambda a, i, s: a.index_copy(1, i, s),
       inputs(normal(3, 5), distinct(5, 3), normal(3, 3))),
    Op("index_fill", lambda a, i: index_ops.index_fill(a, 1, i, -1.0), lambda a, i: a.index_fill(1, i, -1.0),
       inputs(normal(3, 5), ints(5, 2))),
    Op("masked_select", index_ops.masked_select, lambda a, m: a.masked_select(m), inputs(normal(3, 4), mask(3, 4))),
    Op("masked_scatter", index_ops.masked_scatter, lambda a, m, s: a.masked_scatter(m, s),
       inputs(normal(3, 4), mask(3, 4), normal(3, 4))),
    # reorder.py
    Op("flip", lambda a: reorder.flip(a, (0, 2)), lambda a: a.flip((0, 2)), inputs(normal(2, 3, 4))),
    Op("fliplr", reorder.fliplr, lambda a: a.fliplr(), inputs(normal(3, 4))),
    Op("flipud", reorder.flipud, lambda a: a.flipud(), inputs(normal(3, 4))),
    Op("roll", lambda a: reorder.roll(a, (1, -2), (0, 1)), lambda a: a.roll((1, -2), (0, 1)), inputs(normal(3, 4))),
    Op("roll_flat", lambda a: reorder.roll(a, 5), lambda a: a.roll(5), inputs(normal(3, 4))),
    Op("rot90", lambda a: reorder.rot90(a, 3, (1, 2)), lambda a: a.rot90(3, (1, 2)), inputs(normal(2, 3, 4))),
    Op("repeat", lambda a: reorder.repeat(a, 2, 1, 3), lambda a: a.repeat(2, 1, 3), inputs(normal(3, 4))),
    Op("tile", lambda a: reorder.tile(a, (2, 2)), lambda a: a.tile((2, 2)), inputs(normal(3, 4))),
    Op("repeat_interleave", lambda a: reorder.repeat_interleave(a, 2, dim=1), lambda a: a.repeat_interleave(2, dim=1),
       inputs(normal(3, 4))),
    Op("repeat_interleave_tensor", lambda a, r: reorder.repeat_interleave(a, r, dim=0),
       lambda a, r: a.repeat_interleave(r, dim=0), inputs(normal(3, 4), ints(3, 3))),
    # stacking.py
    Op("atleast_1d", stacking.atleast_1d, lambda a: _torch().atleast_1d(a), inputs(scalar())),
    Op("atleast_2d", stacking.atleast_2d, lambda a: _torch().atleast_2d(a), inputs(normal(4))),
    Op("atleast_3d", lambda a, b: tuple(stacking.atleast_3d(a, b)), lambda a, b: tuple(_torch().atleast_3d(a, b)),
       inputs(normal(4), normal(2, 3))),
    Op("hstack", lambda a, b: stacking.hstack([a, b]), lambda a, b: _torch().hstack([a, b]), inputs(normal(3, 2), normal(3, 4))),
    Op("vstack", lambda a, b: stacking.vstack([a, b]), lambda a, b: _torch().vstack([a, b]), inputs(normal(4), normal(2, 4))),
    Op("row_stack", lambda a, b: stacking.row_stack([a, b]), lambda a, b: _torch().vstack([a, b]),
       inputs(normal(3), normal(3))),
    Op("dstack", lambda a, b: stacking.dstack([a, b]), lambda a, b: _torch().dstack([a, b]), inputs(normal(2, 3), normal(2, 3))),
    Op("column_stack", lambda a, b: stacking.column_stack([a, b]), lambda a, b: _torch().column_stack([a, b]),
       inputs(normal(3), normal(3, 2))),
    Op("block_diag", stacking.block_diag, lambda a, b, c: _torch().block_diag(a, b, c),
       inputs(normal(2, 3), normal(3), normal(1, 2))),
    Op("tensor_split", lambda a: tuple(stacking.tensor_split(a, 3, 1)), lambda a: tuple(_torch().tensor_split(a, 3, 1)),
       inputs(normal(2, 7))),
    Op("tensor_split_indices", lambda a: tuple(stacking.tensor_split(a, [1, 3])),
       lambda a: tuple(_torch().tensor_split(a, [1, 3])), inputs(normal(5, 2))),
    Op("hsplit", lambda a: tuple(stacking.hsplit(a, 2)), lambda a: tuple(_torch().hsplit(a, 2)), inputs(normal(3, 4))),
    Op("vsplit", lambda a: tuple(stacking.vsplit(a, [1])), lambda a: tuple(_torch().vsplit(a, [1])), inputs(normal(3, 4))),
    Op("dsplit", lambda a: tuple(stacking.dsplit(a, 2)), lambda a: tuple(_torch().dsplit(a, 2)), inputs(normal(2, 3, 4))),
    # grids.py
    Op("diag_vector", lambda a: grids.diag(a, 1), lambda a: _torch().diag(a, 1), inputs(normal(4))),
    Op("diag_matrix", lambda a: grids.diag(a, -1), lambda a: _torch().diag(a, -1), inputs(normal(3, 4))),
    Op("diag_embed", lambda a: grids.diag_embed(a, 1), lambda a: _torch().diag_embed(a, 1), inputs(normal(2, 3))),
    Op("diagflat", grids.diagflat, lambda a: _torch().diagflat(a), inputs(normal(2, 2))),
    Op("meshgrid", lambda a, b: tuple(grids.meshgrid(a, b, indexing="ij")),
       lambda a, b: tuple(_torch().meshgrid(a, b, indexing="ij")), inputs(normal(3), normal(4))),
    Op("meshgrid_xy", lambda a, b: tuple(grids.meshgrid(a, b, indexing="xy")),
       lambda a, b: tuple(_torch().meshgrid(a, b, indexing="xy")), inputs(normal(3), normal(4))),
    Op("cartesian_prod", grids.cartesian_prod, lambda a, b: _torch().cartesian_prod(a, b), inputs(normal(3), normal(2))),
    Op("combinations", lambda a: grids.combinations(a, 2), lambda a: _torch().combinations(a, 2), inputs(normal(4))),
    Op("combinations_replacement", lambda a: grids.combinations(a, 3, with_replacement=True),
       lambda a: _torch().combinations(a, 3, with_replacement=True), inputs(normal(3))),
    # einsum.py
    Op("einsum_matmul", lambda a, b: einsum.einsum("ij,jk->ik", a, b), lambda a, b: _torch().einsum("ij,jk->ik", a, b),
       inputs(normal(3, 4), normal(4, 5))),
    Op("einsum_batch_trace", lambda a, b: einsum.einsum("bij,bjk->b", a, b),
       lambda a, b: _torch().einsum("bij,bjk->b", a, b), inputs(normal(2, 3, 4), normal(2, 4, 3))),
    Op("einsum_ellipsis", lambda a: einsum.einsum("...ii->...i", a), lambda a: _torch().einsum("...ii->...i", a),
       inputs(normal(2, 3, 3))),
    Op("einsum_outer", lambda a, b, c: einsum.einsum("i,j,k->ijk", a, b, c),
       lambda a, b, c: _torch().einsum("i,j,k->ijk", a, b, c), inputs(normal(2), normal(3), normal(4))),
    # products.py
    Op("mm", products.mm, lambda a, b: _torch().mm(a, b), inputs(normal(3, 4), normal(4, 2))),
    Op("bmm", products.bmm, lambda a, b: _torch().bmm(a, b), inputs(normal(2, 3, 4), normal(2, 4, 2))),
    Op("mv", products.mv, lambda a, b: _torch().mv(a, b), inputs(normal(3, 4), normal(4))),
    Op("dot", products.dot, lambda a, b: _torch().dot(a, b), inputs(normal(5), normal(5))),
    Op("vdot", products.vdot, lambda a, b: _torch().vdot(a, b), inputs(normal(5), normal(5))),
    Op("outer", products.outer, lambda a, b: _torch().outer(a, b), inputs(normal(3), normal(4))),
    Op("addmm", lambda c, a, b: products.addmm(c, a, b, beta=0.5, alpha=2.0),
       lambda c, a, b: _torch().addmm(c, a, b, beta=0.5, alpha=2.0), inputs(normal(2), normal(3, 4), normal(4, 2))),
    Op("baddbmm", lambda c, a, b: products.baddbmm(c, a, b, beta=0.5, alpha=2.0),
       lambda c, a, b: _torch().baddbmm(c, a, b, beta=0.5, alpha=2.0),
       inputs(normal(2, 3, 2), normal(2, 3, 4), normal(2, 4, 2))),
    Op("tensordot", lambda a, b: products.tensordot(a, b, dims=([1, 2], [0, 1])),
       lambda a, b: _torch().tensordot(a, b, dims=([1, 2], [0, 1])), inputs(normal(2, 3, 4), normal(3, 4, 2))),
    Op("tensordot_int", lambda a, b: products.tensordot(a, b, 1), lambda a, b: _torch().tensordot(a, b, 1),
       inputs(normal(2, 3), normal(3, 4))),
    Op("kron", products.kron, lambda a, b: _torch().kron(a, b), inputs(normal(2, 3), normal(3, 2))),
    Op("linalg_cross", products.linalg_cross, lambda a, b: _torch().linalg.cross(a, b), inputs(normal(4, 3), normal(1, 3))),
    Op("cross", lambda a, b: products.cross(a, b, dim=0), lambda a, b: _torch().cross(a, b, dim=0),
       inputs(normal(3, 4), normal(3, 4))),
    # linalg_ops.py, linalg_decomp.py (eigenvectors and singular vectors are compared squared: their signs are free)
    Op("inv", lops.inv, lambda a: _torch().linalg.inv(a), inputs(well_conditioned(2, 3, 3))),
    Op("solve", lops.solve, lambda a, b: _torch().linalg.solve(a, b), inputs(well_conditioned(3, 3), normal(3, 2))),
    Op("solve_right", lambda a, b: lops.solve(a, b, left=False), lambda a, b: _torch().linalg.solve(a, b, left=False),
       inputs(well_conditioned(3, 3), normal(2, 3))),
    Op("cholesky", lambda a: ldec.cholesky(_sym(a)), lambda a: _torch().linalg.cholesky(_sym(a)), inputs(spd(4))),
    Op("cholesky_upper", lambda a: ldec.cholesky(_sym(a), upper=True),
       lambda a: _torch().linalg.cholesky(_sym(a), upper=True), inputs(spd(3))),
    Op("qr", lambda a: tuple(ldec.qr(a)), lambda a: tuple(_torch().linalg.qr(a)), inputs(normal(4, 3))),
    Op("svd", lambda a: _squared_vectors(ldec.svd(a, full_matrices=False)),
       lambda a: _squared_vectors(_torch().linalg.svd(a, full_matrices=False)),
       inputs(normal(4, 3))),
    Op("svdvals", ldec.svdvals, lambda a: _torch().linalg.svdvals(a), inputs(normal(2, 3, 4))),
    Op("det", ldec.det, lambda a: _torch().linalg.det(a), inputs(normal(2, 3, 3))),
    Op("slogdet", lambda a: tuple(ldec.slogdet(a)), lambda a: tuple(_torch().linalg.slogdet(a)), inputs(normal(3, 3))),
    Op("eigh", lambda a: _squared_vectors(ldec.eigh(_sym(a))),
       lambda a: _squared_vectors(_torch().linalg.eigh(_sym(a))), inputs(symmetric(4))),
    Op("eigvalsh", lambda a: ldec.eigvalsh(_sym(a)), lambda a: _torch().linalg.eigvalsh(_sym(a)), inputs(symmetric(4))),
    # loss_regression.py
    Op("l1_loss", lreg.l1_loss, lambda a, b: _tf().l1_loss(a, b), inputs(normal(4, 3), normal(4, 3))),
    Op("smooth_l1_loss", lambda a, b: lreg.smooth_l1_loss(a, b, reduction="sum", beta=0.5),
       lambda a, b: _tf().smooth_l1_loss(a, b, reduction="sum", beta=0.5), inputs(normal(4, 3), normal(4, 3))),
    Op("huber_loss", lambda a, b: lreg.huber_loss(a, b, reduction="none", delta=0.7),
       lambda a, b: _tf().huber_loss(a, b, reduction="none", delta=0.7), inputs(normal(4, 3), normal(4, 3))),
    Op("kl_div", lambda a, b: lreg.kl_div(a.log_softmax(1), b, reduction="batchmean"),
       lambda a, b: _tf().kl_div(a.log_softmax(1), b, reduction="batchmean"), inputs(normal(4, 3), uniform(0.1, 1.0, 4, 3))),
    Op("kl_div_log_target", lambda a, b: lreg.kl_div(a, b, reduction="sum", log_target=True),
       lambda a, b: _tf().kl_div(a, b, reduction="sum", log_target=True), inputs(normal(4, 3), normal(4, 3))),
    Op("poisson_nll_loss", lreg.poisson_nll_loss, lambda a, b: _tf().poisson_nll_loss(a, b),
       inputs(normal(4, 3), positive(4, 3))),
    Op("poisson_nll_loss_full", lambda a, b: lreg.poisson_nll_loss(a, b, log_input=False, full=True),
       lambda a, b: _tf().poisson_nll_loss(a, b, log_input=False, full=True), inputs(positive(4, 3), uniform(1.5, 4.0, 4, 3))),
    Op("gaussian_nll_loss", lreg.gaussian_nll_loss, lambda a, b, v: _tf().gaussian_nll_loss(a, b, v),
       inputs(normal(4, 3), normal(4, 3), positive(4, 3))),
    Op("gaussian_nll_loss_full", lambda a, b, v: lreg.gaussian_nll_loss(a, b, v, full=True, reduction="sum"),
       lambda a, b, v: _tf().gaussian_nll_loss(a, b, v, full=True, reduction="sum"),
       inputs(normal(4, 3), normal(4, 3), positive(4, 1))),
    # loss_margin.py (PyTorch has no gradient for some targets: they are detached on both sides)
    Op("binary_cross_entropy", lambda p, t: lmar.binary_cross_entropy(p, t.detach()),
       lambda p, t: _tf().binary_cross_entropy(p, t.detach()), inputs(uniform(0.05, 0.95, 4, 3), uniform(0, 1, 4, 3))),
    Op("binary_cross_entropy_weight", lambda p, t, w: lmar.binary_cross_entropy(p, t.detach(), w.detach(), reduction="sum"),
       lambda p, t, w: _tf().binary_cross_entropy(p, t.detach(), w.detach(), reduction="sum"),
       inputs(uniform(0.05, 0.95, 4, 3), uniform(0, 1, 4, 3), positive(3))),
    Op("bce_with_logits", lmar.binary_cross_entropy_with_logits,
       lambda x, t: _tf().binary_cross_entropy_with_logits(x, t), inputs(normal(4, 3), uniform(0, 1, 4, 3))),
    Op("bce_with_logits_pos_weight", lambda x, t, w: lmar.binary_cross_entropy_with_logits(x, t, pos_weight=w.detach()),
       lambda x, t, w: _tf().binary_cross_entropy_with_logits(x, t, pos_weight=w.detach()),
       inputs(normal(4, 3), uniform(0, 1, 4, 3), positive(3))),
    Op("soft_margin_loss", lambda x, y: lmar.soft_margin_loss(x, y.detach()),
       lambda x, y: _tf().soft_margin_loss(x, y.detach()), inputs(normal(4, 3), signs(4, 3))),
    Op("cosine_embedding_loss", lambda a, b, y: lmar.cosine_embedding_loss(a, b, y.detach(), margin=0.2),
       lambda a, b, y: _tf().cosine_embedding_loss(a, b, y.detach(), margin=0.2),
       inputs(normal(5, 3), normal(5, 3), signs(5))),
    Op("margin_ranking_loss", lambda a, b, y: lmar.margin_ranking_loss(a, b, y.detach(), margin=0.1),
       lambda a, b, y: _tf().margin_ranking_loss(a, b, y.detach(), margin=0.1), inputs(normal(6), normal(6), signs(6))),
    Op("triplet_margin_loss", lmar.triplet_margin_loss, lambda a, p, n: _tf().triplet_margin_loss(a, p, n),
       inputs(normal(5, 3), normal(5, 3), normal(5, 3))),
    Op("triplet_margin_loss_swap", lambda a, p, n: lmar.triplet_margin_loss(a, p, n, p=1, swap=True),
       lambda a, p, n: _tf().triplet_margin_loss(a, p, n, p=1, swap=True),
       inputs(normal(5, 3), normal(5, 3), normal(5, 3))),
    # distance.py
    Op("normalize", lambda a: distance.normalize(a, dim=1), lambda a: _tf().normalize(a, dim=1), inputs(normal(4, 3))),
    Op("normalize_p1", lambda a: distance.normalize(a, 1.0, 0), lambda a: _tf().normalize(a, 1.0, 0), inputs(normal(4, 3))),
    Op("cosine_similarity", distance.cosine_similarity, lambda a, b: _tf().cosine_similarity(a, b),
       inputs(normal(4, 3), normal(4, 3))),
    Op("pairwise_distance", distance.pairwise_distance, lambda a, b: _tf().pairwise_distance(a, b),
       inputs(normal(4, 3), normal(4, 3))),
    Op("cdist", distance.cdist, lambda a, b: _torch().cdist(a, b), inputs(normal(4, 3), normal(5, 3))),
    Op("cdist_p1", lambda a, b: distance.cdist(a, b, 1.0), lambda a, b: _torch().cdist(a, b, 1.0),
       inputs(normal(2, 4, 3), normal(2, 5, 3))),
    # convolution.py
    Op("conv1d", lambda x, w, b: convolution.conv1d(x, w, b, stride=2, padding=1),
       lambda x, w, b: _tf().conv1d(x, w, b, stride=2, padding=1), inputs(normal(2, 3, 9), normal(4, 3, 3), normal(4))),
    Op("conv2d", lambda x, w, b: convolution.conv2d(x, w, b, padding=1),
       lambda x, w, b: _tf().conv2d(x, w, b, padding=1), inputs(normal(2, 3, 5, 5), normal(4, 3, 3, 3), normal(4))),
    Op("conv2d_groups_dilation", lambda x, w: convolution.conv2d(x, w, stride=(2, 1), dilation=2, groups=2),
       lambda x, w: _tf().conv2d(x, w, stride=(2, 1), dilation=2, groups=2), inputs(normal(1, 4, 7, 6), normal(2, 2, 2, 2))),
    Op("conv_transpose1d", lambda x, w, b: convolution.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
       lambda x, w, b: _tf().conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
       inputs(normal(2, 3, 5), normal(3, 2, 3), normal(2))),
    Op("conv_transpose2d", lambda x, w, b: convolution.conv_transpose2d(x, w, b, stride=2, padding=1),
       lambda x, w, b: _tf().conv_transpose2d(x, w, b, stride=2, padding=1),
       inputs(normal(2, 2, 4, 3), normal(2, 3, 3, 3), normal(3))),
    # pooling.py
    Op("max_pool1d", lambda x: pooling.max_pool1d(x, 3, 2, padding=1), lambda x: _tf().max_pool1d(x, 3, 2, padding=1),
       inputs(normal(2, 3, 8))),
    Op("max_pool2d", lambda x: pooling.max_pool2d(x, 2), lambda x: _tf().max_pool2d(x, 2), inputs(normal(2, 3, 6, 6))),
    Op("max_pool2d_ceil_dilation", lambda x: pooling.max_pool2d(x, 2, 2, dilation=2, ceil_mode=True),
       lambda x: _tf().max_pool2d(x, 2, 2, dilation=2, ceil_mode=True), inputs(normal(1, 2, 7, 7))),
    Op("avg_pool1d", lambda x: pooling.avg_pool1d(x, 3, 2, padding=1, count_include_pad=False),
       lambda x: _tf().avg_pool1d(x, 3, 2, padding=1, count_include_pad=False), inputs(normal(2, 3, 8))),
    Op("avg_pool2d", lambda x: pooling.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True),
       lambda x: _tf().avg_pool2d(x, 3, 2, padding=1, ceil_mode=True), inputs(normal(2, 3, 6, 6))),
    Op("avg_pool2d_divisor", lambda x: pooling.avg_pool2d(x, 2, divisor_override=3),
       lambda x: _tf().avg_pool2d(x, 2, divisor_override=3), inputs(normal(2, 6, 6))),
    Op("adaptive_avg_pool1d", lambda x: pooling.adaptive_avg_pool1d(x, 3), lambda x: _tf().adaptive_avg_pool1d(x, 3),
       inputs(normal(2, 3, 7))),
    Op("adaptive_avg_pool2d", lambda x: pooling.adaptive_avg_pool2d(x, (2, 3)), lambda x: _tf().adaptive_avg_pool2d(x, (2, 3)),
       inputs(normal(2, 3, 5, 7))),
    Op("adaptive_max_pool1d", lambda x: pooling.adaptive_max_pool1d(x, 3), lambda x: _tf().adaptive_max_pool1d(x, 3),
       inputs(normal(2, 3, 7))),
    Op("adaptive_max_pool2d", lambda x: pooling.adaptive_max_pool2d(x, (2, 3)), lambda x: _tf().adaptive_max_pool2d(x, (2, 3)),
       inputs(normal(2, 3, 5, 7))),
    # padding.py
    Op("pad_constant", lambda x: padding.pad(x, (1, 2, 0, 1), value=0.5), lambda x: _tf().pad(x, (1, 2, 0, 1), value=0.5),
       inputs(normal(2, 3, 4))),
    Op("pad_reflect", lambda x: padding.pad(x, (2, 1), "reflect"), lambda x: _tf().pad(x, (2, 1), "reflect"),
       inputs(normal(2, 3, 4))),
    Op("pad_replicate", lambda x: padding.pad(x, (1, 2, 2, 1), "replicate"), lambda x: _tf().pad(x, (1, 2, 2, 1), "replicate"),
       inputs(normal(1, 2, 3, 4))),
    Op("pad_circular", lambda x: padding.pad(x, (1, 2), "circular"), lambda x: _tf().pad(x, (1, 2), "circular"),
       inputs(normal(2, 3, 4))),
    # view_ops.py
    Op("diagonal", lambda a: view_ops.diagonal(a, 1, 0, 2), lambda a: a.diagonal(1, 0, 2), inputs(normal(3, 2, 4))),
    Op("movedim", lambda a: view_ops.movedim(a, (0, 1), (2, 0)), lambda a: a.movedim((0, 1), (2, 0)), inputs(normal(2, 3, 4))),
    Op("swapaxes", lambda a: view_ops.swapaxes(a, 0, 2), lambda a: a.swapaxes(0, 2), inputs(normal(2, 3, 4))),
    Op("narrow", lambda a: view_ops.narrow(a, 1, 1, 2), lambda a: a.narrow(1, 1, 2), inputs(normal(3, 4))),
    Op("select", lambda a: view_ops.select(a, 1, -1), lambda a: a.select(1, -1), inputs(normal(3, 4))),
    Op("unbind", lambda a: tuple(view_ops.unbind(a, 1)), lambda a: tuple(a.unbind(1)), inputs(normal(3, 2))),
    Op("unflatten", lambda a: view_ops.unflatten(a, 1, (2, -1)), lambda a: a.unflatten(1, (2, -1)), inputs(normal(3, 6))),
    Op("view_as", view_ops.view_as, lambda a, b: a.view_as(b), inputs(normal(3, 4), normal(2, 6))),
    Op("reshape_as", lambda a, b: view_ops.reshape_as(a.transpose(0, 1), b), lambda a, b: a.transpose(0, 1).reshape_as(b),
       inputs(normal(3, 4), normal(2, 6))),
    Op("index_put", lambda a, i, j, v: view_ops.index_put(a, (i, j), v), lambda a, i, j, v: a.index_put((i, j), v),
       inputs(normal(4, 5), distinct(4, 3), distinct(5, 3), normal(3))),
    Op("index_put_accumulate", lambda a, i, v: view_ops.index_put(a, (i,), v, accumulate=True),
       lambda a, i, v: a.index_put((i,), v, accumulate=True), inputs(normal(4, 3), ints(4, 6), normal(6, 3))),
]

FORWARD_ONLY += [
    # unary.py
    Op("isinf", lambda a: unary.isinf(a.log()), lambda a: a.log().isinf(), inputs(normal(4, 6))),
    Op("isposinf", lambda a: unary.isposinf(1 / a.floor()), lambda a: (1 / a.floor()).isposinf(), inputs(normal(4, 6))),
    Op("isneginf", lambda a: unary.isneginf(1 / a.floor()), lambda a: (1 / a.floor()).isneginf(), inputs(normal(4, 6))),
    Op("isreal", unary.isreal, lambda a: a.isreal(), inputs(normal(4, 6))),
    Op("signbit", unary.signbit, lambda a: a.signbit(), inputs(normal(4, 6))),
    # binary.py (a step has no gradient in PyTorch; isclose is boolean)
    Op("heaviside", binary.heaviside, lambda a, v: _torch().heaviside(a, v), inputs(normal(4, 6), normal(6))),
    Op("isclose", lambda a, b: binary.isclose(a, a + b * 1e-6, rtol=1e-5, atol=1e-6),
       lambda a, b: _torch().isclose(a, a + b * 1e-6, rtol=1e-5, atol=1e-6), inputs(normal(4, 6), normal(4, 6))),
    # division.py (PyTorch has no derivative for floor_divide)
    Op("floor_divide", division.floor_divide, lambda a, b: _torch().floor_divide(a, b), inputs(normal(3, 4), positive(4))),
    Op("floor_divide_int", division.floor_divide, lambda a, b: _torch().floor_divide(a, b), inputs(ints(20, 4, 5), lambda rng, dt: rng.integers(1, 6, (5,)))),
    Op("remainder_int", lambda a, b: division.remainder(a - 10, b), lambda a, b: _torch().remainder(a - 10, b),
       inputs(ints(20, 4, 5), lambda rng, dt: rng.integers(1, 6, (5,)))),
    Op("fmod_int", lambda a, b: division.fmod(a - 10, b), lambda a, b: _torch().fmod(a - 10, b),
       inputs(ints(20, 4, 5), lambda rng, dt: rng.integers(1, 6, (5,)))),
    # bitwise.py
    Op("bitwise_and", bitwise.bitwise_and, lambda a, b: _torch().bitwise_and(a, b), inputs(ints(64, 4, 5), ints(64, 5))),
    Op("bitwise_or", bitwise.bitwise_or, lambda a, b: _torch().bitwise_or(a, b), inputs(ints(64, 4, 5), ints(64, 4, 5))),
    Op("bitwise_xor", bitwise.bitwise_xor, lambda a, b: _torch().bitwise_xor(a, b), inputs(ints(64, 4, 5), ints(64, 4, 5))),
    Op("bitwise_xor_bool", bitwise.bitwise_xor, lambda a, b: _torch().bitwise_xor(a, b), inputs(mask(4, 5), mask(4, 5))),
    Op("bitwise_not", bitwise.bitwise_not, lambda a: _torch().bitwise_not(a), inputs(ints(64, 4, 5))),
    Op("bitwise_left_shift", bitwise.bitwise_left_shift, lambda a, b: _torch().bitwise_left_shift(a, b),
       inputs(ints(64, 4, 5), ints(5, 4, 5))),
    Op("bitwise_right_shift", bitwise.bitwise_right_shift, lambda a, b: _torch().bitwise_right_shift(a, b),
       inputs(ints(64, 4, 5), ints(5, 5))),
    Op("logical_xor", bitwise.logical_xor, lambda a, b: _torch().logical_xor(a, b), inputs(normal(4, 5), mask(4, 5))),
    # scan.py, sorting.py: the indices
    Op("cummax_indices", lambda a: scan.cummax(a, 1)[1], lambda a: a.cummax(1)[1], inputs(normal(3, 5))),
    Op("cummin_indices", lambda a: scan.cummin(a, 0)[1], lambda a: a.cummin(0)[1], inputs(normal(4, 3))),
    Op("cumsum_int", lambda a: scan.cumsum(a, 0), lambda a: a.cumsum(0), inputs(ints(9, 4, 3))),
    Op("sort_indices", lambda a: sorting.sort(a, 1)[1], lambda a: a.sort(1)[1], inputs(normal(3, 5))),
    Op("argsort", lambda a: sorting.argsort(a, 0, descending=True), lambda a: a.argsort(0, descending=True),
       inputs(normal(4, 3))),
    Op("argsort_stable", lambda a: sorting.argsort(a, stable=True), lambda a: a.argsort(stable=True), inputs(ints(3, 3, 8))),
    Op("median_indices", lambda a: sorting.median(a, 1)[1], lambda a: a.median(1)[1], inputs(normal(3, 4))),
    Op("kthvalue_indices", lambda a: sorting.kthvalue(a, 2, 0)[1], lambda a: a.kthvalue(2, 0)[1], inputs(normal(4, 3))),
    Op("mode_int", lambda a: tuple(sorting.mode(a, 1)), lambda a: tuple(a.mode(1)), inputs(ints(3, 3, 7))),
    Op("unique", lambda a: tuple(sorting.unique(a, return_inverse=True, return_counts=True)),
       lambda a: tuple(_torch().unique(a, return_inverse=True, return_counts=True)), inputs(ints(5, 3, 6))),
    Op("unique_dim", lambda a: tuple(sorting.unique(a, return_inverse=True, dim=0)),
       lambda a: tuple(_torch().unique(a, return_inverse=True, dim=0)), inputs(ints(2, 6, 2))),
    # statistics.py
    Op("count_nonzero", lambda a: stats.count_nonzero(a, 1), lambda a: _torch().count_nonzero(a, 1), inputs(ints(3, 4, 6))),
    Op("prod_int", lambda a: stats.prod(a, 0), lambda a: a.prod(0), inputs(ints(4, 3, 5))),
    Op("aminmax_int", lambda a: tuple(stats.aminmax(a)), lambda a: tuple(_torch().aminmax(a)), inputs(ints(50, 3, 5))),
    # searching.py
    Op("nonzero", searching.nonzero, lambda a: a.nonzero(), inputs(ints(2, 3, 4))),
    Op("nonzero_tuple", lambda a: tuple(searching.nonzero(a, as_tuple=True)), lambda a: a.nonzero(as_tuple=True),
       inputs(ints(2, 3, 4))),
    Op("argwhere", searching.argwhere, lambda a: _torch().argwhere(a), inputs(mask(3, 4))),
    Op("searchsorted", lambda s, v: searching.searchsorted(s, v), lambda s, v: _torch().searchsorted(s, v),
       inputs(sorted_normal(3, 6), normal(3, 4))),
    Op("searchsorted_right_int32", lambda s, v: searching.searchsorted(s, v, right=True, out_int32=True),
       lambda s, v: _torch().searchsorted(s, v, right=True, out_int32=True),
       inputs(lambda rng, dt: np.sort(rng.integers(0, 5, 8)), ints(6, 5))),
    Op("bucketize", lambda v, b: searching.bucketize(v, b), lambda v, b: _torch().bucketize(v, b),
       inputs(normal(3, 4), sorted_normal(5))),
    Op("bucketize_right", lambda v, b: searching.bucketize(v, b, right=True), lambda v, b: _torch().bucketize(v, b, right=True),
       inputs(ints(6, 3, 4), lambda rng, dt: np.arange(0, 6, 2))),
    Op("masked_select_int", index_ops.masked_select, lambda a, m: a.masked_select(m), inputs(ints(9, 3, 4), mask(4))),
    # grids.py
    Op("tril_indices", lambda: grids.tril_indices(4, 3, -1), lambda: _torch().tril_indices(4, 3, -1), inputs()),
    Op("triu_indices", lambda: grids.triu_indices(3, 5, 1), lambda: _torch().triu_indices(3, 5, 1), inputs()),
    Op("combinations_int", lambda a: grids.combinations(a, 2), lambda a: _torch().combinations(a, 2), inputs(ints(9, 4))),
    # loss_margin.py
    Op("one_hot", lambda t: lmar.one_hot(t, 6), lambda t: _tf().one_hot(t, 6), inputs(ints(6, 3, 4))),
    Op("one_hot_inferred", lmar.one_hot, lambda t: _tf().one_hot(t), inputs(ints(5, 7))),
    # reorder.py, scatter.py on integers
    Op("flip_int", lambda a: reorder.flip(a, (1,)), lambda a: a.flip((1,)), inputs(ints(9, 3, 4))),
    Op("gather_int", lambda a, i: scatter.gather(a, 0, i), lambda a, i: a.gather(0, i), inputs(ints(9, 3, 4), ints(3, 2, 4))),
]


def run_ours(op, arrays, device, seed=0):
    """Forward and backward of ``op`` on ``device``: ``(outputs, input grads)`` as NumPy arrays.

    The upstream gradient of each float output is drawn from ``seed`` (the same on every device).
    """
    tensors = [mt.tensor(a, device=device, requires_grad=a.dtype.kind == "f") for a in arrays]
    outs = op.ours(*tensors)
    outs = outs if isinstance(outs, tuple) else (outs,)
    rng = np.random.default_rng(seed)
    total = None
    for o in outs:
        if o.dtype.kind == "f" and o.requires_grad:
            up = mt.tensor(rng.standard_normal(o.shape).astype(o.dtype), device=device)
            term = (o * up).sum()
            total = term if total is None else total + term
    if total is not None:
        total.backward()
    out_np = [np.asarray(o.detach().cpu().array) for o in outs]
    grads = [np.asarray(t.grad.cpu().array) if t.grad is not None else None for t in tensors]
    return out_np, grads


# ---------------------------------------------------------------- the normalization family, spatial ops
group_norm_ops, lrn_ops = _ops("group_norm"), _ops("local_response_norm")
fold_ops, interp_ops, shuffle_ops = _ops("fold"), _ops("interpolate"), _ops("pixel_shuffle")


def _stats(w):
    """``(running_mean, running_var)`` from ``w`` without history: ``(w/2, w² + 1/2)`` (PyTorch does
    not differentiate running statistics)."""
    w = w.detach()
    return w * 0.5, w * w + 0.5


def _resize(mode, **kw):
    return (lambda x: interp_ops.interpolate(x, mode=mode, **kw)), (lambda x: _tf().interpolate(x, mode=mode, **kw))


OPS += [
    # group_norm.py: short group rows, (N, C) input, a group row too long for the CUDA registers
    Op("group_norm", lambda x, w, b: group_norm_ops.group_norm(x, 3, w, b), lambda x, w, b: _tf().group_norm(x, 3, w, b),
       inputs(normal(4, 6, 5, 5), normal(6), normal(6))),
    Op("group_norm_nc", lambda x, w, b: group_norm_ops.group_norm(x, 2, w, b),
       lambda x, w, b: _tf().group_norm(x, 2, w, b), inputs(normal(7, 8), normal(8), normal(8))),
    Op("group_norm_no_affine", lambda x: group_norm_ops.group_norm(x, 4), lambda x: _tf().group_norm(x, 4),
       inputs(normal(2, 8, 3, 7))),
    Op("group_norm_one_group_long", lambda x, w: group_norm_ops.group_norm(x, 1, w),
       lambda x, w: _tf().group_norm(x, 1, w), inputs(normal(2, 4, 100, 100), normal(4))),
    Op("instance_norm", lambda x, w, b: group_norm_ops.instance_norm(x, weight=w, bias=b),
       lambda x, w, b: _tf().instance_norm(x, weight=w, bias=b), inputs(normal(3, 4, 6, 5), normal(4), normal(4))),
    Op("instance_norm_no_affine", lambda x: group_norm_ops.instance_norm(x), lambda x: _tf().instance_norm(x),
       inputs(normal(2, 5, 9))),
    # batch_norm.py on 4-D and 5-D input; local_response_norm.py
    Op("batch_norm_4d", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
       lambda x, w, b: _tf().batch_norm(x, None, None, w, b, training=True),
       inputs(normal(4, 3, 5, 6), normal(3), normal(3))),
    Op("batch_norm_4d_eval", lambda x, w, b: F.batch_norm(x, *_stats(w), w, b, training=False, eps=1e-3),
       lambda x, w, b: _tf().batch_norm(x, *_stats(w), w, b, training=False, eps=1e-3),
       inputs(normal(4, 3, 5, 6), normal(3), normal(3))),
    Op("batch_norm_5d", lambda x: F.batch_norm(x, None, None, training=True),
       lambda x: _tf().batch_norm(x, None, None, training=True), inputs(normal(2, 4, 3, 2, 5))),
    Op("local_response_norm", lambda x: lrn_ops.local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.0),
       lambda x: _tf().local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.0), inputs(normal(2, 7, 4, 5))),
    Op("local_response_norm_even", lambda x: lrn_ops.local_response_norm(x, 4, alpha=1.0, beta=0.6, k=2.0),
       lambda x: _tf().local_response_norm(x, 4, alpha=1.0, beta=0.6, k=2.0), inputs(normal(3, 6, 9))),
    # fold.py, interpolate.py (the 1-D 'nearest' row uses a size where PyTorch's gradient agrees with its
    # forward: tests/test_ops_interpolate.py), pixel_shuffle.py
    Op("unfold", lambda x: fold_ops.unfold(x, (3, 2), dilation=(1, 2), padding=1, stride=(2, 1)),
       lambda x: _tf().unfold(x, (3, 2), dilation=(1, 2), padding=1, stride=(2, 1)), inputs(normal(2, 3, 7, 6))),
    Op("fold", lambda c: fold_ops.fold(c, (5, 6), 2, padding=(1, 0), stride=(2, 1)),
       lambda c: _tf().fold(c, (5, 6), 2, padding=(1, 0), stride=(2, 1)), inputs(normal(2, 12, 15))),
    Op("interpolate_nearest_2d", *_resize("nearest", scale_factor=(1.7, 2.0)), inputs(normal(2, 3, 5, 4))),
    Op("interpolate_nearest_1d", *_resize("nearest", size=11), inputs(normal(2, 3, 5))),
    Op("interpolate_nearest_exact", *_resize("nearest-exact", size=(3, 7)), inputs(normal(2, 3, 5, 4))),
    Op("interpolate_linear", *_resize("linear", scale_factor=2.5, align_corners=False), inputs(normal(2, 3, 6))),
    Op("interpolate_linear_align_corners", *_resize("linear", size=9, align_corners=True), inputs(normal(2, 3, 6))),
    Op("interpolate_bilinear", *_resize("bilinear", scale_factor=(0.6, 1.8), align_corners=False),
       inputs(normal(2, 3, 7, 5))),
    Op("interpolate_bilinear_align_corners", *_resize("bilinear", size=(8, 3), align_corners=True),
       inputs(normal(2, 3, 5, 4))),
    Op("pixel_shuffle", lambda x: shuffle_ops.pixel_shuffle(x, 2), lambda x: _tf().pixel_shuffle(x, 2),
       inputs(normal(2, 8, 3, 4))),
    Op("pixel_unshuffle", lambda x: shuffle_ops.pixel_unshuffle(x, 3), lambda x: _tf().pixel_unshuffle(x, 3),
       inputs(normal(2, 2, 6, 9))),
]
