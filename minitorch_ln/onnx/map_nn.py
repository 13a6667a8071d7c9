"""ONNX mappings of the nn ops: linear, embedding, the normalizations, attention, softmax, convolution.

Every LayerNorm is one ``LayerNormalization`` node (opset 17+); GroupNorm is ``GroupNormalization``
from opset 21 (where its scale and bias are per channel; opset 18-20 define them per group, so
below 21 it is written as a reshape to groups, ``InstanceNormalization``-free mean/variance and the
per-channel affine); RMSNorm is ``RMSNormalization`` from opset 23, else decomposed.
"""

from __future__ import annotations

import numpy as np

from ..ops import attention, convolution
from ..ops.embedding import Embedding
from ..ops.group_norm import NativeGroupNorm
from ..ops.layer_norm import NativeLayerNorm
from ..ops.matmul import Linear, MatMul
from ..ops.pixel_shuffle import PixelShuffleFn
from ..ops.rms_norm import RMSNorm
from ..ops.softmax import LogSoftmax, Softmax


def _c(n, value, dtype=None):
    return n.g.const(np.asarray(value, dtype=dtype or n.out_dtype()))


def _linear(g, n):
    x, w = n.x(0), n.x(1)
    b = n.x(2) if n.arg(2) is not None else ""
    if n.arg(0).ndim == 2:
        return g.op("Gemm", [x, w, b] if b else [x, w], transB=1)
    y = g.op("MatMul", [x, g.op("Transpose", [w], perm=[1, 0])])
    return g.op("Add", [y, b]) if b else y


def _matmul(g, n):
    return g.op("MatMul", [n.x(0), n.x(1)])


def _embedding(g, n):
    return g.op("Gather", [n.x(1), n.x(0)], axis=0)


def _affine_or_ones(g, n, i, shape, value):
    if n.arg(i) is not None:
        return n.x(i)
    return g.const(np.full(shape, value, dtype=n.out_dtype()))


def _layer_norm(g, n):  # (x, weight, bias, axes, eps, recompute)
    x, axes, eps = n.arg(0), tuple(n.arg(3)), float(n.arg(4))
    if axes != tuple(range(x.ndim - len(axes), x.ndim)):
        n.refuse(f"normalized axes {axes} are not the trailing ones")
    shape = x.shape[x.ndim - len(axes):]
    inputs = [n.x(0), _affine_or_ones(g, n, 1, shape, 1.0)]
    if n.arg(2) is not None:
        inputs.append(n.x(2))
    return g.op("LayerNormalization", inputs, axis=-len(axes) if axes else -1, epsilon=eps)


def _group_norm(g, n):  # (x, weight, bias, num_groups, eps); x (N, C, *)
    x, G, eps = n.arg(0), int(n.arg(3)), float(n.arg(4))
    C = x.shape[1]
    scale = _affine_or_ones(g, n, 1, (C,), 1.0)
    bias = _affine_or_ones(g, n, 2, (C,), 0.0)
    if g.opset >= 21:
        return g.op("GroupNormalization", [n.x(0), scale, bias], epsilon=eps, num_groups=G)
    # (N, G, C/G·L): normalize each group's values, then the per-channel affine
    xin = n.x(0)
    grouped = g.op("Reshape", [xin, g.ints([0, G, -1])])
    mean = g.op("ReduceMean", [grouped, g.ints([2])], keepdims=1)
    centred = g.op("Sub", [grouped, mean])
    var = g.op("ReduceMean", [g.op("Mul", [centred, centred]), g.ints([2])], keepdims=1)
    normed = g.op("Div", [centred, g.op("Sqrt", [g.op("Add", [var, _c(n, eps)])])])
    y = g.op("Reshape", [normed, g.op("Shape", [xin])])
    chan = [1, C] + [1] * (x.ndim - 2)
    return g.op("Add", [g.op("Mul", [y, g.op("Reshape", [scale, g.ints(chan)])]),
                        g.op("Reshape", [bias, g.ints(chan)])])


def _rms_norm(g, n):  # (x, weight, axes, eps)
    x, axes, eps = n.arg(0), tuple(n.arg(2)), float(n.arg(3))
    if axes != tuple(range(x.ndim - len(axes), x.ndim)):
        n.refuse(f"normalized axes {axes} are not the trailing ones")
    shape = x.shape[x.ndim - len(axes):]
    scale = _affine_or_ones(g, n, 1, shape, 1.0)
    if g.opset >= 23:
        return g.op("RMSNormalization", [n.x(0), scale], axis=-len(axes), epsilon=eps)
    xi = n.x(0)  # x / sqrt(mean(x²) + eps) · weight
    ms = g.op("ReduceMean", [g.op("Mul", [xi, xi]), g.ints(list(axes))], keepdims=1)
    return g.op("Mul", [g.op("Div", [xi, g.op("Sqrt", [g.op("Add", [ms, _c(n, eps)])])]), scale])


def _split_heads(g, n):  # (B, L, n·H·Dh) → n × (B, H, L, Dh)
    k, H = int(n.arg(1)), int(n.arg(2))
    C = n.arg(0).shape[2]
    x5 = g.op("Reshape", [n.x(0), g.ints([0, 0, k, H, C // (k * H)])])  # (B, L, n, H, Dh)
    outs = []
    for i in range(k):
        part = g.op("Gather", [x5, g.const(np.asarray(i, dtype=np.int64))], axis=2)  # (B, L, H, Dh)
        outs.append(g.op("Transpose", [part], perm=[0, 2, 1, 3]))
    return tuple(outs) if k > 1 else outs[0]


def _merge_heads(g, n):  # n × (B, H, L, Dh) → (B, L, n·H·Dh)
    parts = [g.op("Transpose", [n.x(i)], perm=[0, 2, 1, 3]) for i in range(len(n.rec.args))]
    cat = parts[0] if len(parts) == 1 else g.op("Concat", parts, axis=2)  # (B, L, n·H, Dh)
    return g.op("Reshape", [cat, g.ints([0, 0, -1])])


def _sdpa(g, n):  # (q, k, v, mask, keep, scale, need_weights): softmax(q kᵀ·scale + mask) v
    if n.arg(4) is not None:
        n.refuse("attention dropout is on (export in eval mode)")
    q, k, _v = n.arg(0), n.x(1), n.x(2)
    nd = q.ndim
    perm = list(range(nd - 2)) + [nd - 1, nd - 2]
    scores = g.op("MatMul", [g.op("Mul", [n.x(0), _c(n, float(n.arg(5)), q.dtype)]), g.op("Transpose", [k], perm=perm)])
    if n.arg_a(3) is not None:  # the mask: a value, or a raw array (the cached causal mask) rebuilt per size
        scores = g.op("Add", [scores, n.x(3, q.dtype)])
    p = g.op("Softmax", [scores], axis=-1)
    out = g.op("MatMul", [p, n.x(2)])
    return (out, p) if n.arg(6) else out


def _softmax(op_type):
    return lambda g, n: g.op(op_type, [n.x(0)], axis=int(n.arg(1)))


def _conv_attrs(geom, w_shape):
    stride, pads, dilation, groups = geom
    return {"strides": list(stride), "pads": [p[0] for p in pads] + [p[1] for p in pads],
                "dilations": list(dilation), "group": int(groups), "kernel_shape": list(w_shape[2:])}


def _conv(g, n):  # (x, w, b, geom, out_hw)
    if n.arg(4) is not None:
        n.refuse("a convolution cropped to out_hw (the backward of a transposed one) is not mapped")
    inputs = [n.x(0), n.x(1)] + ([n.x(2)] if n.arg(2) is not None else [])
    return g.op("Conv", inputs, **_conv_attrs(n.arg(3), n.arg(1).shape))


def _conv_transpose(g, n):  # (x, w, geom, out_hw)
    x, w, geom, out_hw = n.arg(0), n.arg(1), n.arg(2), n.arg(3)
    attrs = _conv_attrs(geom, w.shape)
    attrs["group"] = int(geom[3])
    stride, pads, dilation = geom[0], geom[1], geom[2]
    full = [(s_in - 1) * s - (lo + hi) + d * (k - 1) + 1
            for s_in, s, (lo, hi), d, k in zip(x.shape[2:], stride, pads, dilation, w.shape[2:])]
    attrs["output_padding"] = [o - f for o, f in zip(out_hw, full)]
    return g.op("ConvTranspose", [n.x(0), n.x(1)], **attrs)


def _pixel_shuffle(g, n):
    return g.op("DepthToSpace", [n.x(0)], blocksize=int(n.arg(1)), mode="CRD")


MAPPINGS = {
    Linear: _linear, MatMul: _matmul, Embedding: _embedding,
    NativeLayerNorm: _layer_norm, NativeGroupNorm: _group_norm, RMSNorm: _rms_norm,
    attention.SplitHeads: _split_heads, attention.MergeHeads: _merge_heads,
    attention.ScaledDotProductAttention: _sdpa,
    Softmax: _softmax("Softmax"), LogSoftmax: _softmax("LogSoftmax"),
 convolution.Conv2dFn: _conv, convolution.ConvTranspose2dFn: _conv_transpose,
    PixelShuffleFn: _pixel_shuffle,
}

