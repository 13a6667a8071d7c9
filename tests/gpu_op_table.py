"""Every op and layer as one row: our call, PyTorch's call, and the inputs. Shared by the GPU tests
(``tests/test_gpu.py``: CuPy vs NumPy and vs PyTorch on CUDA) and the parity table
(``scripts/make_parity_table.py``: the largest NumPy-vs-CuPy difference of every op and gradient).

``make(rng, dtype)`` returns the inputs as NumPy arrays: float arrays require grad, integer arrays
(indices, targets) do not. ``ours`` and ``theirs`` take the tensors in that order and return a
tensor or a tuple of float tensors. Integer-valued results (argmax, comparisons) are in
``FORWARD_ONLY``, compared without gradients.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

import minitorch_ln as mt
import minitorch_ln.nn.functional as F

Op = namedtuple("Op", ["name", "ours", "theirs", "make"])


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
