"""Layer-level ONNX mappings: modules exported as one ONNX operator, and the losses' inference forms.

The recurrent layers become ``LSTM`` / ``GRU`` / ``RNN`` nodes, one per layer. ONNX orders the
gates differently from PyTorch (ONNX operator docs, LSTM and GRU): an LSTM's ``(i, f, g, o)`` rows
become ONNX's ``(i, o, f, c)``, a GRU's ``(r, z, n)`` become ``(z, r, h)`` with
``linear_before_reset=1`` (PyTorch applies ``r`` after the hidden projection), and the two biases
are concatenated ``[b_ih, b_hh]``. The reordered weights are new initializers named after the
module (``rnn.onnx_W_l0``). BatchNorm in eval is ``BatchNormalization`` with the running
statistics; the pools are ``MaxPool`` / ``AveragePool`` / ``GlobalAveragePool``.
"""

from __future__ import annotations

import numpy as np

from .. import nn
from ..ops import loss as loss_ops

_GATES = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2]}  # PyTorch's gate blocks in ONNX's order


def _host(t):
    a = t.array
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _reorder(w, mode, H):
    order = _GATES.get(mode)
    if order is None:
        return w
    blocks = [w[k * H:(k + 1) * H] for k in range(len(order))]
    return np.concatenate([blocks[k] for k in order], axis=0)


def _rnn(g, n):  # (input, hx=None) → (output, h_n) or (output, (h_n, c_n))
    m = n.rec.ctx
    if m.proj_size:
        n.refuse("an LSTM with proj_size has no ONNX LSTM equivalent")
    x_t = n.arg(0)
    if not n.is_tensor(0):
        n.refuse("a PackedSequence input (pad it first)")
    if x_t.ndim != 3:
        n.refuse("an unbatched (2-D) input; add the batch dimension")
    mode, H, nd = m.mode, m.hidden_size, 2 if m.bidirectional else 1
    op_type = {"LSTM": "LSTM", "GRU": "GRU"}.get(mode, "RNN")
    x = n.x(0)
    if m.batch_first:
        x = g.op("Transpose", [x], perm=[1, 0, 2])  # (T, B, I)
    hx = n.arg(1) if len(n.rec.args) > 1 else None
    state_names = []
    if hx is not None:  # h_0 (and c_0) as recorded inputs: flattened into args by the hook's tuple
        if mode == "LSTM":
            h0 = n.ex.value(hx[0], n.arg_b(1)[0], n.rec_c.args[1][0], n)
            c0 = n.ex.value(hx[1], n.arg_b(1)[1], n.rec_c.args[1][1], n)
            state_names = [h0, c0]
        else:
            state_names = [n.x(1)]
    finals = [[] for _ in range(2 if mode == "LSTM" else 1)]
    attrs = {"hidden_size": H, "direction": "bidirectional" if nd == 2 else "forward"}
    if op_type == "GRU":
        attrs["linear_before_reset"] = 1
    if op_type == "RNN":
        attrs["activations"] = ["Relu" if mode == "RNN_RELU" else "Tanh"] * nd
    path = n.rec.path or type(m).__name__
    for layer in range(m.num_layers):
        Ws, Rs, Bs = [], [], []
        for direction in range(nd):
            w_ih, w_hh, b_ih, b_hh, _ = m._layer_params(layer, direction)
            Ws.append(_reorder(_host(w_ih), mode, H))
            Rs.append(_reorder(_host(w_hh), mode, H))
            if b_ih is not None:
                Bs.append(np.concatenate([_reorder(_host(b_ih), mode, H), _reorder(_host(b_hh), mode, H)]))
        inputs = [x, g.initializer(np.stack(Ws), f"{path}.onnx_W_l{layer}"),
                  g.initializer(np.stack(Rs), f"{path}.onnx_R_l{layer}"),
                  g.initializer(np.stack(Bs), f"{path}.onnx_B_l{layer}") if Bs else "", ""]
        for s in state_names:
            inputs.append(g.op("Slice", [s, g.ints([layer * nd]), g.ints([(layer + 1) * nd]), g.ints([0])]))
        while inputs and inputs[-1] == "":
            inputs.pop()
        outs = g.op(op_type, inputs, n_out=3 if mode == "LSTM" else 2, **attrs)
        y = g.op("Transpose", [outs[0]], perm=[0, 2, 1, 3])  # (T, B, D, H)
        x = g.op("Reshape", [y, g.ints([0, 0, -1])])  # (T, B, D·H)
        for k in range(len(finals)):
            finals[k].append(outs[1 + k])
    output = g.op("Transpose", [x], perm=[1, 0, 2]) if m.batch_first else x
    states_out = [f[0] if len(f) == 1 else g.op("Concat", f, axis=0) for f in finals]
    return (output, *states_out)


def _batch_norm(g, n):
    m = n.rec.ctx
    C = m.num_features
    dt = n.out_dtype()
    scale = n.ex.value(m.weight, m.weight, m.weight) if m.weight is not None else g.const(np.ones(C, dt))
    bias = n.ex.value(m.bias, m.bias, m.bias) if m.bias is not None else g.const(np.zeros(C, dt))
    mean = n.ex.value(m.running_mean, m.running_mean, m.running_mean)
    var = n.ex.value(m.running_var, m.running_var, m.running_var)
    return g.op("BatchNormalization", [n.x(0), scale, bias, mean, var], epsilon=float(m.eps))


def _tuple(v, k):
    return list(v) if isinstance(v, (tuple, list)) else [v] * k


def _pool_attrs(m, k):
    pad = _tuple(m.padding, k)
    return {"kernel_shape": _tuple(m.kernel_size, k), "strides": _tuple(m.stride, k), "pads": pad + pad,
                "ceil_mode": int(bool(m.ceil_mode))}


def _max_pool(k):
    def fn(g, n):
        m = n.rec.ctx
        if m.return_indices:
            n.refuse("return_indices=True (ONNX MaxPool's indices are flat over the whole tensor)")
        if n.arg(0).ndim != k + 2:
            n.refuse("an unbatched input; add the batch dimension")
        return g.op("MaxPool", [n.x(0)], dilations=_tuple(m.dilation, k), **_pool_attrs(m, k))
    return fn


def _avg_pool(k):
    def fn(g, n):
        m = n.rec.ctx
        if getattr(m, "divisor_override", None):
            n.refuse("divisor_override")
        if n.arg(0).ndim != k + 2:
            n.refuse("an unbatched input; add the batch dimension")
        return g.op("AveragePool", [n.x(0)], count_include_pad=int(bool(m.count_include_pad)), **_pool_attrs(m, k))
    return fn


def _adaptive_avg(k):
    def fn(g, n):
        m, x = n.rec.ctx, n.arg(0)
        out = [o if o is not None else s for o, s in zip(_tuple(m.output_size, k), x.shape[-k:])]
        if x.ndim != k + 2:
            n.refuse("an unbatched input; add the batch dimension")
        if all(o == 1 for o in out):
            return g.op("GlobalAveragePool", [n.x(0)])
        if n.in_shapes(0)[0][2:] != n.in_shapes(0)[1][2:] or any(s % o for s, o in zip(x.shape[2:], out)):
            n.refuse("an output size that does not divide a static input size (only those are one AveragePool)")
        kern = [s // o for s, o in zip(x.shape[2:], out)]
        return g.op("AveragePool", [n.x(0)], kernel_shape=kern, strides=kern)
    return fn


def _loss_inputs(g, n, what):
    if not n.is_tensor(1) or n.arg(1).dtype.kind not in "iu":
        n.refuse(f"{what} with probability targets (ONNX's loss takes class indices)")
    inputs = [n.x(0), n.x(1, np.int64)]
    if n.arg(2) is not None:
        inputs.append(n.x(2))
    if n.arg(0).ndim == 1:
        n.refuse(f"an unbatched {what} input; add the batch dimension")
    return inputs


def _cross_entropy(g, n):  # (x, target, weight, ignore_index, reduction, label_smoothing, probs)
    if n.arg(5):
        n.refuse("label_smoothing > 0 (ONNX's SoftmaxCrossEntropyLoss has none)")
    inputs = _loss_inputs(g, n, "cross_entropy")
    return g.op("SoftmaxCrossEntropyLoss", inputs, reduction=n.arg(4), ignore_index=int(n.arg(3)))


def _nll(g, n):  # (x, target, weight, ignore_index, reduction)
    inputs = _loss_inputs(g, n, "nll_loss")
    return g.op("NegativeLogLikelihoodLoss", inputs, reduction=n.arg(4), ignore_index=int(n.arg(3)))


def _bn_eval(m) -> bool:
    return not m.training and getattr(m, "running_mean", None) is not None


LAYER_OPS = {
    nn.LSTM: lambda m: True, nn.GRU: lambda m: True, nn.RNN: lambda m: True,
    nn.BatchNorm1d: _bn_eval, nn.BatchNorm2d: _bn_eval, nn.BatchNorm3d: _bn_eval,
    nn.MaxPool1d: lambda m: True, nn.MaxPool2d: lambda m: True,
    nn.AvgPool1d: lambda m: True, nn.AvgPool2d: lambda m: True,
    nn.AdaptiveAvgPool1d: lambda m: True, nn.AdaptiveAvgPool2d: lambda m: True,
}

MAPPINGS = {
    nn.LSTM: _rnn, nn.GRU: _rnn, nn.RNN: _rnn,
    nn.BatchNorm1d: _batch_norm, nn.BatchNorm2d: _batch_norm, nn.BatchNorm3d: _batch_norm,
    nn.MaxPool1d: _max_pool(1), nn.MaxPool2d: _max_pool(2), nn.AvgPool1d: _avg_pool(1), nn.AvgPool2d: _avg_pool(2),
    nn.AdaptiveAvgPool1d: _adaptive_avg(1), nn.AdaptiveAvgPool2d: _adaptive_avg(2),
    loss_ops.CrossEntropy: _cross_entropy, loss_ops.NLLLoss: _nll,
}
