"""Exports that used to succeed and then compute other numbers in ONNX Runtime than the eager forward
(the new-user trial of issue 28): each now agrees with the eager forward or is refused with a clear error.
Every case here failed (ORT disagreed, or the export passed silently) before its fix."""

from __future__ import annotations

import io

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln import nn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from minitorch_ln.onnx import OnnxExporterError, UnsupportedOperatorError, export

RNG = np.random.default_rng(7)


def _ort(model, args, **kw):
    f = io.BytesIO()
    export(model, args, f, **kw)
    return ort.InferenceSession(f.getvalue(), providers=["CPUExecutionProvider"])


def _eager(model, *arrays):
    with mt.no_grad():
        out = model(*[mt.tensor(a) for a in arrays])
    return (out[0] if isinstance(out, tuple) else out).numpy()


class InPlace(nn.Module):
    def forward(self, x):
        y = x * 1
        y += 1
        y.mul_(3)
        return y


class Residual(nn.Module):  # ResNet's `out += identity` after a layer
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        out = self.lin(x)
        out += x
        return out.relu_()


class SetItem(nn.Module):
    def forward(self, x):
        y = x.clone()
        y[:, 0] = 0.0
        return y


class ViewWrite(nn.Module):
    def forward(self, x):
        y = x * 2
        y[:, 0].add_(1)  # a write through a view changes y
        return y


class InputWrite(nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


@pytest.mark.parametrize("model", [InPlace(), Residual(), InputWrite()])
def test_inplace_ops_are_exported(model):
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    x_run = RNG.standard_normal((2, 3)).astype(np.float32)  # other values than the example's
    sess = _ort(model.eval(), (mt.tensor(x),), input_names=["x"])
    got = sess.run(None, {"x": x_run})[0]
    np.testing.assert_allclose(got, _eager(model, x_run), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("model", [SetItem(), ViewWrite()])
def test_inplace_writes_the_graph_cannot_express_are_refused(model):
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    with pytest.raises(UnsupportedOperatorError, match="SetItem|in-place"):
        export(model, (mt.tensor(x),), None, input_names=["x"])


def test_bool_mask_input_is_not_baked_in():
    mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = mha

        def forward(self, x, pad):
            return self.m(x, x, x, key_padding_mask=pad, need_weights=False)[0]

    h = RNG.standard_normal((2, 5, 8)).astype(np.float32)
    pad = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], bool)
    with pytest.raises(OnnxExporterError, match="depends on the input values"):
        export(M(), (mt.tensor(h), mt.tensor(pad)), None, input_names=["x", "pad"])


def test_bool_input_through_recorded_ops_still_exports():
    class W(nn.Module):
        def forward(self, x, m):
            return mt.where(m, x, -x)

    x = RNG.standard_normal((2, 3)).astype(np.float32)
    m = RNG.random((2, 3)) > 0.5
    sess = _ort(W(), (mt.tensor(x), mt.tensor(m)), input_names=["x", "m"])
    np.testing.assert_allclose(sess.run(None, {"x": x, "m": ~m})[0], _eager(W(), x, ~m), rtol=1e-6)


def test_same_example_tensor_for_two_inputs_gives_two_inputs():
    class Sub(nn.Module):
        def forward(self, a, b):
            return a - 2 * b

    t = mt.tensor(RNG.standard_normal((2, 3)).astype(np.float32))
    sess = _ort(Sub(), (t, t), input_names=["a", "b"])
    a, b = np.ones((2, 3), np.float32), np.full((2, 3), 0.25, np.float32)
    assert [i.name for i in sess.get_inputs()] == ["a", "b"]
    np.testing.assert_allclose(sess.run(None, {"a": a, "b": b})[0], a - 2 * b)  # 1 - 0.5 = 0.5 everywhere


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_rnn_initial_state_as_keyword(cls):
    class L(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = cls(4, 6, batch_first=True)

        def forward(self, x, h0, c0):
            return self.rnn(x, hx=(h0, c0) if cls is nn.LSTM else h0 + c0)[0]

    mt.manual_seed(0)
    model = L().eval()
    xs, h0, c0 = (RNG.standard_normal(s).astype(np.float32) for s in ((2, 5, 4), (1, 2, 6), (1, 2, 6)))
    sess = _ort(model, tuple(mt.tensor(v) for v in (xs, h0, c0)), input_names=["x", "h0", "c0"])
    h1, c1 = (RNG.standard_normal((1, 2, 6)).astype(np.float32) for _ in range(2))
    got = sess.run(None, {"x": xs, "h0": h1, "c0": c1})[0]
    np.testing.assert_allclose(got, _eager(model, xs, h1, c1), rtol=1e-5, atol=1e-6)


def test_tensor_keyword_arguments_are_refused():
    class KW(nn.Module):
        def forward(self, x, bias=None):
            return x + bias

    x = mt.randn(2, 3)
    with pytest.raises(OnnxExporterError, match=r"Tensor keyword arguments \['bias'\]"):
        export(KW(), (x,), None, kwargs={"bias": mt.ones(2, 3)}, input_names=["x", "bias"])
    with pytest.raises(OnnxExporterError, match="pass them positionally"):
        export(KW(), (x, {"bias": mt.ones(2, 3)}), None)


def test_value_dependent_branch_and_item_on_ints_are_refused():
    class Br(nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x - 100

    class Trim(nn.Module):
        def forward(self, x, lengths):
            return x[:, : int(lengths.max())].sum(1)

    x = np.abs(RNG.standard_normal((2, 3))).astype(np.float32)
    with pytest.raises(OnnxExporterError, match="input values|changes with"):
        export(Br(), (mt.tensor(x),), None)
    x3 = RNG.standard_normal((3, 6, 2)).astype(np.float32)
    with pytest.raises(OnnxExporterError, match="changes with the input values"):
        export(Trim(), (mt.tensor(x3), mt.tensor(np.array([2, 4, 3]))), None)


def test_bool_branch_is_refused():
    class B(nn.Module):
        def forward(self, x, flag):
            return x * 2 if bool(flag.all()) else x

    with pytest.raises(OnnxExporterError, match="input values"):
        export(B(), (mt.randn(2, 3), mt.tensor(np.ones(3, bool))), None)


def test_dynamic_sizes_are_not_matched_by_coincidence():
    class Half(nn.Module):  # T // 2 == batch in the example (4, 8) and used to in the resized trace (5, 10)
        def forward(self, x):
            return x[:, : x.shape[1] // 2].mean(1)

    with pytest.raises(OnnxExporterError, match="slice stop of GetItem.*depends on the dynamic axes"):
        export(Half(), (mt.randn(4, 8, 3),), None, input_names=["x"], dynamic_axes={"x": {0: "batch", 1: "seq"}})
    sess = _ort(Half(), (mt.randn(4, 8, 3),), input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    for shape in ((2, 8, 3), (7, 8, 3)):
        xr = RNG.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(sess.run(None, {"x": xr})[0], _eager(Half(), xr), rtol=1e-5, atol=1e-6)


def test_list_form_dynamic_axes_get_distinct_names():
    class Add(nn.Module):
        def forward(self, x):
            return x * 2

    proto = export(Add(), (mt.randn(4, 4),), None, input_names=["x"], dynamic_axes={"x": [0, 1]})
    dims = [d.dim_param for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims[0] and dims[1] and dims[0] != dims[1]


def test_layer_op_with_forward_hook_is_refused():
    bn = nn.BatchNorm2d(2).eval()
    bn.register_forward_hook(lambda m, i, o: o * 2 + 100)
    with pytest.raises(OnnxExporterError, match="forward hooks"):
        export(bn, (mt.randn(1, 2, 3, 3),), None)


def test_embedding_max_norm_is_refused():
    emb = nn.Embedding(10, 4, max_norm=0.5)
    with pytest.raises((OnnxExporterError, UnsupportedOperatorError), match="in-place|max_norm"):
        export(emb, (mt.tensor(np.array([[1, 2, 3]])),), None)


def test_training_modes():
    from minitorch_ln.onnx import TrainingMode

    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)).eval()
    with pytest.raises(UnsupportedOperatorError, match="dropout in training mode"):
        export(model, (mt.randn(2, 3),), None, training=TrainingMode.TRAINING)  # used to export eval silently
    assert not model.training and not model[1].training  # its modes restored
    with pytest.raises(UnsupportedOperatorError, match="dropout in training mode"):
        export(model, (mt.randn(2, 3),), None, training=True)
    model.train()
    model[0].eval()  # a mixed mode is restored as it was
    with pytest.raises(UnsupportedOperatorError, match="dropout in training mode"):
        export(model, (mt.randn(2, 3),), None, training=TrainingMode.PRESERVE)
    export(model, (mt.randn(2, 3),), None, training=TrainingMode.EVAL)
    assert model.training and not model[0].training and model[1].training
    with pytest.raises(OnnxExporterError, match="training must be a TrainingMode"):
        export(model, (mt.randn(2, 3),), None, training="train")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_silu_maps_with_its_edge_values(dtype):
    class M(nn.Module):
        def forward(self, x):
            return mt.nn.functional.silu(x)

    # silu(-inf) is the limit 0 (the formula x * sigmoid(x) would give -inf * 0 = NaN); silu(inf) = inf;
    # NaN stays NaN; the rest against the eager op
    x = np.array([-np.inf, -1e4, -3.0, -0.0, 0.0, 1e-30, 2.0, 6e4, np.inf, np.nan], dtype)
    sess = _ort(M(), (mt.tensor(x),), input_names=["x"])
    got = sess.run(None, {"x": x})[0]
    assert got[0] == 0 and got[8] == np.inf and np.isnan(got[9])
    np.testing.assert_allclose(got, _eager(M(), x), rtol=2e-3 if dtype == np.float16 else 1e-6, equal_nan=True)


def test_resnet_basic_block_keeps_its_residual():
    class Block(nn.Module):  # torchvision's BasicBlock: ReLU(inplace=True) and `out += identity`
        def __init__(self):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4)
            self.c2, self.b2 = nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4)
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            identity = x
            out = self.relu(self.b1(self.c1(x)))
            out = self.b2(self.c2(out))
            out += identity
            return self.relu(out)

    mt.manual_seed(0)
    model = Block()
    model(mt.randn(4, 4, 6, 6))  # running statistics that are not 0/1
    model.eval()
    sess = _ort(model, (mt.randn(2, 4, 6, 6),), input_names=["x"], dynamic_axes={"x": {0: "b"}})
    for batch in (2, 3):
        xr = RNG.standard_normal((batch, 4, 6, 6)).astype(np.float32)
        np.testing.assert_allclose(sess.run(None, {"x": xr})[0], _eager(model, xr), rtol=1e-5, atol=1e-5)
