"""ONNX export of whole models, checked by onnx.checker and against ONNX Runtime; and its refusals.

Targets (issue 28): the tiny and small GPT, nn.Transformer, a CNN with BatchNorm2d/GroupNorm/pools
and an LSTM language model pass ``onnx.checker.check_model(full_check=True)``, and ONNX Runtime's
outputs equal minitorch_ln's to 1e-5 relative (float32) at two batch sizes and two sequence
lengths, all from one export; the GPT has ``2 * n_layer + 1`` LayerNormalization nodes.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln import nn
from minitorch_ln.nn.gpt import GPT, GPTConfig

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from minitorch_ln.onnx import (
    OnnxExporterError,
    UnsupportedOperatorError,
    export,
    is_in_onnx_export,
)
from minitorch_ln.onnx.trace import flatten_outputs


def _session(proto):
    onnx.checker.check_model(proto, full_check=True)
    return ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])


def _agree(model, sess, names, feeds):
    """ORT's outputs equal the model's to 1e-5 relative (of the output's largest magnitude) for each feed."""
    for feed in feeds:
        ours = [t.detach().numpy() for t in flatten_outputs(model(*[mt.tensor(a) for a in feed]))]
        theirs = sess.run(None, dict(zip(names, feed)))
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape
            rel = np.abs(a - b).max() / np.abs(a).max()
            assert rel <= 1e-5, (a.shape, rel)


def _ids(vocab, B, T, seed):
    return np.random.default_rng(seed).integers(0, vocab, (B, T)).astype(np.int64)


@pytest.mark.parametrize("preset", ["tiny", "small"])
def test_gpt_exports_with_dynamic_batch_and_sequence(preset):
    mt.manual_seed(0)
    cfg = GPTConfig.preset(preset, vocab_size=65)
    model = GPT(cfg).eval()
    proto = export(model, (mt.tensor(_ids(65, 2, 8, 0)),), None, input_names=["idx"], output_names=["logits"],
                   dynamic_axes={"idx": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}})
    ops = [n.op_type for n in proto.graph.node]
    assert ops.count("LayerNormalization") == 2 * cfg.n_layer + 1
    assert "ReduceMean" not in ops  # no LayerNorm left decomposed
    dims = [d.dim_param or d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq"]
    names = {i.name for i in proto.graph.initializer}
    assert {"tok_emb.weight", "blocks.0.norm1.weight", "blocks.0.self_attn.in_proj_weight", "ln_f.bias"} <= names
    sess = _session(proto)
    _agree(model, sess, ["idx"], [[_ids(65, B, T, B * T)] for B in (1, 3) for T in (5, cfg.block_size)])


@pytest.mark.parametrize("opset", [17, 20, 23])
def test_gpt_at_other_opsets(opset):
    model = GPT(GPTConfig(vocab_size=11, block_size=16, n_layer=2, n_head=2, d_model=16)).eval()
    proto = export(model, mt.tensor(_ids(11, 2, 5, 0)), None, input_names=["idx"], opset_version=opset,
                   dynamic_axes={"idx": {0: "batch", 1: "seq"}})
    assert proto.opset_import[0].version == opset
    assert [n.op_type for n in proto.graph.node].count("Gelu") == (2 if opset >= 20 else 0)
    _agree(model, _session(proto), ["idx"], [[_ids(11, B, T, T)] for B in (1, 3) for T in (2, 16)])


def test_gpt_export_writes_a_file_and_a_file_object(tmp_path):
    model = GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, d_model=8)).eval()
    x = mt.tensor(_ids(11, 1, 4, 0))
    export(model, (x,), str(tmp_path / "m.onnx"))
    buf = io.BytesIO()
    export(model, x, buf)
    assert onnx.load(str(tmp_path / "m.onnx")).graph.input[0].name == "idx"  # the forward's argument name
    assert onnx.load_from_string(buf.getvalue()) == onnx.load(str(tmp_path / "m.onnx"))


class _Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(d_model=32, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                dim_feedforward=64, batch_first=True)

    def forward(self, src, tgt):
        return self.t(src, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(tgt.shape[1]))


def test_nn_transformer_with_a_causal_mask():
    mt.manual_seed(1)
    model = _Seq2Seq().eval()
    r = np.random.default_rng(1)
    f = (lambda B, S: r.standard_normal((B, S, 32)).astype(np.float32))
    proto = export(model, (mt.tensor(f(2, 7)), mt.tensor(f(2, 5))), None, input_names=["src", "tgt"],
                   dynamic_axes={"src": {0: "B", 1: "S"}, "tgt": {0: "B", 1: "T"}})
    assert [n.op_type for n in proto.graph.node].count("LayerNormalization") == 2 * 2 + 3 * 2 + 2
    _agree(model, _session(proto), ["src", "tgt"], [[f(B, S), f(B, T)] for B in (1, 4) for S, T in ((3, 2), (9, 11))])


class _CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.bn, self.p = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.MaxPool2d(2)
        self.c2, self.gn, self.ap = nn.Conv2d(8, 8, 3, padding=1), nn.GroupNorm(2, 8), nn.AvgPool2d(2)
        self.gap, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(8, 10)

    def forward(self, x):
        x = self.p(F.relu(self.bn(self.c1(x))))
        x = self.ap(F.relu(self.gn(self.c2(x))))
        return self.fc(self.gap(x).flatten(1))


def test_cnn_with_batchnorm_groupnorm_and_pools():
    mt.manual_seed(2)
    model = _CNN()
    model(mt.randn(4, 3, 16, 16))  # training step: running statistics that are not 0/1
    model.eval()
    proto = export(model, mt.randn(2, 3, 16, 16), None, input_names=["x"], dynamic_axes={"x": {0: "N", 2: "H", 3: "W"}})
    ops = {n.op_type for n in proto.graph.node}
    assert {"BatchNormalization", "MaxPool", "AveragePool", "GlobalAveragePool", "Conv"} <= ops
    r = np.random.default_rng(2)
    _agree(model, _session(proto), ["x"], [[r.standard_normal((B, 3, H, H)).astype(np.float32)]
                                          for B in (1, 5) for H in (8, 20)])


class _LSTMLM(nn.Module):
    def __init__(self, vocab=50):
        super().__init__()
        self.emb, self.rnn, self.dec = nn.Embedding(vocab, 16), nn.LSTM(16, 24, num_layers=2), nn.Linear(24, vocab)

    def forward(self, x, h0, c0):
        out, (h, c) = self.rnn(self.emb(x), (h0, c0))
        return self.dec(out), h, c


def test_lstm_language_model_with_its_state():
    mt.manual_seed(3)
    model = _LSTMLM().eval()
    r = np.random.default_rng(3)
    ids = (lambda T, B: r.integers(0, 50, (T, B)).astype(np.int64))
    hs = (lambda B: r.standard_normal((2, B, 24)).astype(np.float32))
    proto = export(model, (mt.tensor(ids(6, 2)), mt.tensor(hs(2)), mt.tensor(hs(2))), None,
                   input_names=["x", "h0", "c0"], output_names=["logits", "h", "c"],
                   dynamic_axes={"x": {0: "T", 1: "B"}, "h0": {1: "B"}, "c0": {1: "B"}})
    assert [n.op_type for n in proto.graph.node].count("LSTM") == 2
    _agree(model, _session(proto), ["x", "h0", "c0"], [[ids(T, B), hs(B), hs(B)] for B in (1, 4) for T in (3, 9)])


@pytest.mark.parametrize("cls,gates", [(nn.LSTM, 4), (nn.GRU, 3)])
def test_gate_reordering_matches_onnx_order(cls, gates):
    """One layer with each gate's block set apart: the exported W must hold PyTorch's blocks in ONNX's order."""
    m = cls(2, 3).eval()
    with mt.no_grad():
        for k in range(gates):
            m.weight_ih_l0[3 * k:3 * (k + 1)] = float(k + 1)
    proto = export(m, mt.randn(4, 1, 2), None, input_names=["x"])
    W = next(onnx.numpy_helper.to_array(i) for i in proto.graph.initializer if i.name.endswith("onnx_W_l0"))
    order = [0, 3, 1, 2] if cls is nn.LSTM else [1, 0, 2]  # ONNX (i, o, f, c) / (z, r, h)
    assert [float(W[0, 3 * k, 0]) for k in range(gates)] == [float(o + 1) for o in order]


# ------------------------------------------------------------------ refusals and arguments


def test_an_op_without_mapping_names_the_op_and_its_module():
    class Block(nn.Module):
        def forward(self, x):
            return mt.linalg.det(x)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            return self.block(x * 2)

    with pytest.raises(UnsupportedOperatorError, match=r"Det.*module 'block' \(Block\)"):
        export(Net(), mt.randn(2, 3, 3))


def test_dropout_in_training_mode_is_refused_and_eval_is_the_default():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    model.train()
    proto = export(model, mt.randn(2, 3))  # export runs in eval mode, as torch.onnx.export
    assert model.training and "Dropout" not in {n.op_type for n in proto.graph.node}
    with pytest.raises(UnsupportedOperatorError, match="dropout in training mode"):
        export(model, mt.randn(2, 3), training=True)


def test_a_constant_computed_from_the_values_is_refused():
    class Leaky(nn.Module):
        def forward(self, x):
            return x * mt.tensor(x.numpy() > 0)  # a NumPy computation: not in the graph

    with pytest.raises(OnnxExporterError, match="depends on the input values"):
        export(Leaky(), mt.randn(3, 4))


def test_a_size_the_graph_cannot_compute_is_refused():
    class Odd(nn.Module):
        def forward(self, x):
            return x[: x.shape[0] - 1]  # T - 1: not an input size

    with pytest.raises(OnnxExporterError, match="depends on the dynamic axes"):
        export(Odd(), mt.randn(5, 2), input_names=["x"], dynamic_axes={"x": [0]})


def test_a_size_dependent_python_scalar_is_computed_not_baked():
    class Mean(nn.Module):
        def forward(self, x):
            return x.mean(1)

    proto = export(Mean(), mt.randn(2, 5), input_names=["x"], dynamic_axes={"x": {1: "T"}})
    sess = _session(proto)
    x = np.arange(14, dtype=np.float32).reshape(2, 7)
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], x.mean(1), rtol=1e-6)  # not x.sum(1) / 5


@pytest.mark.parametrize("kwargs,match", [
    ({"opset_version": 16}, "opset_version must be an int in"),
    ({"dynamo": True}, "dynamo=True is not provided"),
    ({"export_params": False}, "export_params=False"),
    ({"dynamic_axes": {"x": {5: "B"}}, "input_names": ["x"]}, "names axis 5"),
    ({"operator_export_type": 1}, "unsupported argument"),
    ({"dynamic_axes": {"inputt": [0]}}, "neither input names"),  # a misspelt name: no silently fixed axis
    ({"output_names": ["a", "b"]}, "returns 1 tensors but output_names has 2"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises((OnnxExporterError, TypeError), match=match):
        export(nn.Linear(2, 2), mt.randn(1, 2), **kwargs)


def test_is_in_onnx_export_is_true_only_during_export():
    seen = []

    class Probe(nn.Module):
        def forward(self, x):
            seen.append(is_in_onnx_export())
            return x + 1

    export(Probe(), mt.randn(2))
    assert seen and all(seen) and not is_in_onnx_export()


def test_torch_onnx_under_the_alias():
    from minitorch_ln.interop.torch_alias import torch_alias

    with torch_alias():
        import torch.onnx

        assert torch.onnx.export is export


class _WordLanguageModel(nn.Module):
    """pytorch/examples word_language_model's RNNModel (LSTM): ``forward(input, hidden)`` with ``hidden = (h, c)``."""

    def __init__(self, ntoken=30, ninp=8, nhid=12, nlayers=2):
        super().__init__()
        self.drop, self.encoder = nn.Dropout(0.2), nn.Embedding(ntoken, ninp)
        self.rnn, self.decoder = nn.LSTM(ninp, nhid, nlayers, dropout=0.2), nn.Linear(nhid, ntoken)
        self.ntoken = ntoken

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden


def test_word_language_model_onnx_export_with_a_nested_hidden_state(tmp_path):
    """Its ``--onnx-export``: ``torch.onnx.export(model, (dummy_input, hidden), path)`` on a training model."""
    model = _WordLanguageModel().train()
    hidden = (mt.zeros(2, 3, 12), mt.zeros(2, 3, 12))
    path = tmp_path / "wlm.onnx"
    export(model, (mt.randint(0, 30, (5, 3)), hidden), str(path), dynamic_axes={"input": {0: "T", 1: "B"},
           "hidden_0": {1: "B"}, "hidden_1": {1: "B"}})
    assert model.training  # its mode is restored
    proto = onnx.load(str(path))
    assert [i.name for i in proto.graph.input] == ["input", "hidden_0", "hidden_1"]
    model.eval()
    r = np.random.default_rng(4)
    feeds = [[r.integers(0, 30, (T, B)).astype(np.int64), *(r.standard_normal((2, B, 12)).astype(np.float32),) * 2]
             for T, B in ((2, 1), (7, 4))]
    sess = _session(proto)
    for feed in feeds:
        ours = model(mt.tensor(feed[0]), (mt.tensor(feed[1]), mt.tensor(feed[2])))
        theirs = sess.run(None, {"input": feed[0], "hidden_0": feed[1], "hidden_1": feed[2]})
        for a, b in zip([ours[0], *ours[1]], theirs):
            np.testing.assert_allclose(b, a.detach().numpy(), rtol=1e-5, atol=1e-5 * float(np.abs(b).max()))


def test_tied_weights_are_one_initializer_and_keep_initializers_as_inputs():
    model = GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, d_model=8, tie_weights=True)).eval()
    proto = export(model, mt.tensor(_ids(11, 1, 4, 0)), keep_initializers_as_inputs=True)
    names = [i.name for i in proto.graph.initializer]
    assert "tok_emb.weight" in names and "lm_head.weight" not in names
    assert {i.name for i in proto.graph.input} >= set(names)
    _agree(model, _session(proto), ["idx"], [[_ids(11, 1, 4, 1)]])


def test_sequence_first_transformer_encoder():
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, norm_first=False)
    model = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(16)).eval()
    r = np.random.default_rng(5)
    f = (lambda S, B: r.standard_normal((S, B, 16)).astype(np.float32))
    proto = export(model, mt.tensor(f(6, 2)), input_names=["src"], dynamic_axes={"src": {0: "S", 1: "B"}})
    assert [n.op_type for n in proto.graph.node].count("LayerNormalization") == 2 * 2 + 1
    _agree(model, _session(proto), ["src"], [[f(S, B)] for S in (1, 9) for B in (1, 4)])


def test_a_dynamic_axis_of_size_one_that_cannot_grow_is_refused():
    class Fixed(nn.Module):
        def forward(self, x):
            if x.shape[0] != 1:
                raise ValueError("one row only")
            return x * 2

    with pytest.raises(OnnxExporterError, match="cannot be dynamic"):
        export(Fixed(), mt.randn(1, 3), input_names=["x"], dynamic_axes={"x": [0]})


class _NanoAttention(nn.Module):
    """nanoGPT's CausalSelfAttention without flash: a tril buffer sliced to ``[:T, :T]`` and compared with 0."""

    def __init__(self, n_embd=16, n_head=2, block_size=12):
        super().__init__()
        self.c_attn, self.c_proj, self.n_head = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd), n_head
        self.register_buffer("bias", mt.tril(mt.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
        att = F.softmax(att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf")), dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))


def test_nanogpt_attention_slices_its_causal_buffer_per_length():
    model = _NanoAttention().eval()
    r = np.random.default_rng(6)
    f = (lambda B, T: r.standard_normal((B, T, 16)).astype(np.float32))
    proto = export(model, mt.tensor(f(2, 5)), input_names=["x"], dynamic_axes={"x": {0: "B", 1: "T"}})
    assert "bias" in {i.name for i in proto.graph.initializer}  # the buffer, sliced in the graph
    _agree(model, _session(proto), ["x"], [[f(B, T)] for B in (1, 3) for T in (1, 12)])


def test_gpt_with_targets_exports_its_loss_post_ln_without_biases():
    model = GPT(GPTConfig(vocab_size=13, block_size=16, n_layer=2, n_head=2, d_model=16, bias=False,
                          norm_first=False, activation="relu")).eval()
    proto = export(model, (mt.tensor(_ids(13, 2, 6, 0)), mt.tensor(_ids(13, 2, 6, 1))), input_names=["idx", "targets"],
                   output_names=["logits", "loss"], dynamic_axes={"idx": {0: "B", 1: "T"}, "targets": {0: "B", 1: "T"}})
    assert "SoftmaxCrossEntropyLoss" in {n.op_type for n in proto.graph.node}
    _agree(model, _session(proto), ["idx", "targets"], [[_ids(13, B, T, 2), _ids(13, B, T, 3)]
                                                       for B in (1, 4) for T in (3, 16)])


_PROPERTY = {}


def _exported_small_gpt():
    if not _PROPERTY:
        mt.manual_seed(7)
        model = GPT(GPTConfig(vocab_size=17, block_size=12, n_layer=2, n_head=2, d_model=16)).eval()
        proto = export(model, mt.tensor(_ids(17, 2, 5, 0)), input_names=["idx"],
                       dynamic_axes={"idx": {0: "batch", 1: "seq"}})
        _PROPERTY.update(model=model, sess=_session(proto))
    return _PROPERTY["model"], _PROPERTY["sess"]


@given(B=st.integers(1, 6), T=st.integers(1, 12), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=25, deadline=None)
def test_property_one_export_agrees_at_every_batch_and_length(B, T, seed):
    model, sess = _exported_small_gpt()
    _agree(model, sess, ["idx"], [[_ids(17, B, T, seed)]])


def test_float16_model():
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4)).to(mt.float16).eval()
    x = mt.randn(3, 8).to(mt.float16)
    proto = export(model, x, input_names=["x"], dynamic_axes={"x": [0]})
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT16
    sess = _session(proto)
    for b in (1, 5):
        xb = mt.randn(b, 8).to(mt.float16)
        got, ref = sess.run(None, {"x": xb.numpy()})[0], model(xb).detach().numpy()
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), rtol=1e-2, atol=1e-2)


def test_a_zero_constant_is_not_taken_for_an_all_zero_example_input():
    """An initial state given as zeros must stay an input, and a zeros constant a constant."""
    class Step(nn.Module):
        def forward(self, h):
            return h * 2 + mt.zeros(3, 4) + mt.full((3, 4), 1.5)

    proto = export(Step(), mt.zeros(3, 4), input_names=["h"])
    h = np.random.default_rng(8).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(_session(proto).run(None, {"h": h})[0], h * 2 + 1.5, rtol=1e-6)


def test_a_python_number_read_from_the_values_is_refused():
    class Item(nn.Module):
        def forward(self, x):
            return x * float(x.sum().item())

    with pytest.raises(OnnxExporterError, match="changes with the input values"):
        export(Item(), mt.randn(3, 4))


def test_a_plain_function_exports():
    proto = export(lambda x, y: mt.relu(x) * 2 - y, (mt.randn(2, 3), mt.randn(2, 3)), dynamic_axes={"x": [0], "y": [0]})
    assert [i.name for i in proto.graph.input] == ["x", "y"]
    x, y = np.random.default_rng(9).standard_normal((2, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(_session(proto).run(None, {"x": x, "y": y})[0], np.maximum(x, 0) * 2 - y, rtol=1e-6)
