"""Every ONNX mapping exercised against ONNX Runtime: one small export per case, outputs to 1e-5.

Each case is a forward over the given inputs; the test exports it (with the first axis dynamic
where the case says so), runs it in ONNX Runtime on the example inputs and on inputs with that axis
resized, and compares with minitorch_ln's own forward. The last test checks that the cases, taken
together, ran every entry of the mapping table (so a mapping cannot be added untested) and that
there are at least 60 of them.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln import nn
from minitorch_ln.ops.shape import sum_to

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from minitorch_ln.onnx import export
from minitorch_ln.onnx.mapping import LAYER_OPS, MAPPINGS
from minitorch_ln.onnx.trace import flatten_outputs, record

rng = np.random.default_rng(0)
EXERCISED = set()


def _f(*shape, lo=None, hi=None):
    a = rng.uniform(lo, hi, shape) if lo is not None else rng.standard_normal(shape)
    return a.astype(np.float32)


def _i(hi, *shape):
    return rng.integers(0, hi, shape).astype(np.int64)


class Case(nn.Module):
    def __init__(self, fn, **modules):
        super().__init__()
        self.fn = fn
        for k, v in modules.items():
            setattr(self, k, v)

    def forward(self, *xs):
        return self.fn(self, *xs)


def _resize_first(a, n):
    return np.resize(a, (n,) + a.shape[1:])


def run_case(fn, arrays, modules=None, dynamic=True, opset=None, train_first=False):
    """Export ``fn`` over ``arrays`` (axis 0 dynamic unless told not to) and compare with ORT."""
    model = Case(fn, **(modules or {}))
    if train_first:  # settle BatchNorm's running statistics on a batch first
        model.train()
        model(*[mt.tensor(a) for a in arrays])
    model.eval()
    names = [f"x{i}" for i in range(len(arrays))]
    args = tuple(mt.tensor(a) for a in arrays)
    dyn = {n: [0] for n in names} if dynamic else None
    proto = export(model, args, None, input_names=names, dynamic_axes=dyn, opset_version=opset)
    EXERCISED.update(r.fn for r in record(model, args, {}, LAYER_OPS).records)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = [arrays]
    if dynamic:
        n0 = arrays[0].shape[0]
        feeds.append([_resize_first(a, n0 + 2) for a in arrays])
    for feed in feeds:
        ours = [np.asarray(t.detach().numpy()) for t in flatten_outputs(model(*[mt.tensor(a) for a in feed]))]
        theirs = sess.run(None, dict(zip(names, feed)))
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
            if a.dtype.kind == "b":
                np.testing.assert_array_equal(b, a)
                continue
            scale = max(1.0, float(np.nanmax(np.abs(a)))) if a.size and a.dtype.kind == "f" else 1.0
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6 * scale, equal_nan=True)
    return proto


X = _f(3, 4)
POS = _f(3, 4, lo=0.5, hi=3.0)
UNIT = _f(3, 4, lo=-0.9, hi=0.9)

UNARY = {
    "abs": mt.abs, "neg": mt.neg, "exp": mt.exp, "sin": mt.sin, "cos": mt.cos, "tan": mt.tan, "atan": mt.atan,
    "sinh": mt.sinh, "cosh": mt.cosh, "asinh": mt.asinh, "erf": mt.erf, "erfc": mt.erfc, "tanh": mt.tanh,
    "sigmoid": mt.sigmoid, "relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "softplus": lambda x: F.softplus(x, beta=2.0, threshold=1.0), "mish": F.mish, "silu": F.silu, "logsigmoid": F.logsigmoid,
    "softsign": F.softsign, "tanhshrink": F.tanhshrink, "elu": F.elu, "selu": F.selu, "celu": F.celu,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1), "hardtanh": F.hardtanh, "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish, "threshold": lambda x: F.threshold(x, 0.1, 20.0), "hardshrink": F.hardshrink,
    "softshrink": F.softshrink, "floor": mt.floor, "ceil": mt.ceil, "round": mt.round,
    "round_2": lambda x: mt.round(x, decimals=2), "sign": mt.sign, "square": mt.square, "exp2": mt.exp2,
    "expm1": mt.expm1, "pow_scalar": lambda x: x ** 3, "clamp": lambda x: mt.clamp(x, -0.5, 0.5),
    "softmax": lambda x: F.softmax(x, dim=1), "log_softmax": lambda x: F.log_softmax(x, dim=0),
    "sum": lambda x: x.sum(1), "mean_dynamic": lambda x: x.mean(0), "amax": lambda x: mt.amax(x, 1, keepdim=True),
    "amin": lambda x: mt.amin(x, 0), "logsumexp": lambda x: mt.logsumexp(x, 1), "var": lambda x: mt.var(x, 1),
    "cumsum": lambda x: mt.cumsum(x, 1), "flip": lambda x: mt.flip(x, [0, 1]), "repeat": lambda x: x.repeat(2, 1, 3),
    "reshape": lambda x: x.reshape(-1, 2, 2), "permute": lambda x: x.t(), "expand": lambda x: x[:, None].expand(-1, 5, 4),
    "cat": lambda x: mt.cat([x, x * 2], 1), "stack": lambda x: mt.stack([x, x * 2, -x], 1), "stack_last": lambda x: mt.stack([x, x + 1], -1),
    "split": lambda x: x.split([1, 3], dim=1), "clone": lambda x: x.clone(),
    "cast": lambda x: x.double(), "triu": lambda x: mt.triu(x, 1), "pad": lambda x: F.pad(x, (1, 2, 0, 1), value=-1.5), "tril": lambda x: mt.tril(x, -1), "getitem": lambda x: x[1:, None, ::2],
    "getitem_int": lambda x: x[:, -1], "getitem_array": lambda x: x[:, [0, 2, 2]], "glu": lambda x: F.glu(x, 1),
    "sum_to": lambda x: sum_to(x, (1, 4)),
}
POSITIVE = {"sqrt": mt.sqrt, "rsqrt": mt.rsqrt, "log": mt.log, "log2": mt.log2, "log10": mt.log10,
            "log1p": mt.log1p, "reciprocal": mt.reciprocal, "acosh": lambda x: mt.acosh(x + 1)}
IN_UNIT = {"asin": mt.asin, "acos": mt.acos, "atanh": mt.atanh}
BINARY = {
    "add": mt.add, "sub": lambda a, b: a - b, "mul": mt.mul, "div": mt.div, "pow": lambda a, b: mt.abs(a) ** b,
    "maximum": mt.maximum, "minimum": mt.minimum, "fmod": mt.fmod, "remainder": mt.remainder,
    "floor_divide": mt.floor_divide, "div_trunc": lambda a, b: mt.div(a, b, rounding_mode="trunc"),
    "hypot": mt.hypot, "logaddexp": mt.logaddexp, "lerp": lambda a, b: mt.lerp(a, b, 0.3),
    "lerp_tensor": lambda a, b: mt.lerp(a, b, mt.sigmoid(b)), "scalar_first": lambda a, b: 2.0 - a / (1.5 + b * b),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_and_shape_ops(name):
    run_case(lambda m, x: UNARY[name](x), [X])


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_ops_on_positive_inputs(name):
    run_case(lambda m, x: POSITIVE[name](x), [POS])


@pytest.mark.parametrize("name", sorted(IN_UNIT))
def test_ops_inside_minus_one_one(name):
    run_case(lambda m, x: IN_UNIT[name](x), [UNIT])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops(name):
    run_case(lambda m, a, b: BINARY[name](a, b), [X, np.where(np.abs(X) < 0.2, 0.7, X)[::-1].copy()])


COMPARE = {"eq": mt.eq, "ne": mt.ne, "lt": mt.lt, "le": mt.le, "gt": mt.gt, "ge": mt.ge,
           "logical_and": mt.logical_and, "logical_or": mt.logical_or}


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons(name):  # ties included: b repeats some of a's values
    a = np.round(X * 2) / 2
    b = np.where(rng.random(a.shape) < 0.4, a, np.round(_f(3, 4) * 2) / 2).astype(np.float32)
    run_case(lambda m, x, y: COMPARE[name](x, y), [a, b])
    run_case(lambda m, x: mt.where(COMPARE[name](x, 0.5), x, -x) if name[0] != "l" else x, [a])


def test_a_mask_computed_in_the_graph():
    run_case(lambda m, x, ids: x.masked_fill((ids == 0)[..., None], float("-inf")).softmax(1),
             [_f(3, 5, 2), np.array([[0, 1, 2, 0, 3]] * 3, np.int64)])


def test_where_with_a_bool_input():
    run_case(lambda m, c, a: mt.where(c, a, -a), [X > 0, X])


def test_int_indexing_and_iteration_are_recorded():
    # x[0] of an input that needs no grad has a fast path (ops/indexing.py); under export it must be recorded,
    # or the exporter refuses the unrecorded array (before this, "computed outside the recorded ops")
    run_case(lambda m, x: x[0] * 2 + x[1, 2] + x[-1], [_f(3, 4)], dynamic=False)
    run_case(lambda m, x: mt.stack([r * (i + 1) for i, r in enumerate(x)]).sum(0), [_f(3, 4)], dynamic=False)


def test_indexing_ops_with_index_inputs():
    idx = _i(4, 3, 2)
    run_case(lambda m, x, i: mt.gather(x, 1, i), [X, idx])
    run_case(lambda m, x, i: mt.index_select(x, 0, i), [X, np.array([2, 0], np.int64)], dynamic=False)
    run_case(lambda m, x, i, s: mt.scatter_add(x, 1, i, s), [X, idx, _f(3, 2)])


def test_nn_ops():
    run_case(lambda m, x: m.lin(x), [_f(2, 5, 6)], {"lin": nn.Linear(6, 3)})
    run_case(lambda m, x: m.lin(x), [_f(4, 6)], {"lin": nn.Linear(6, 3, bias=False)})
    run_case(lambda m, a, b: mt.matmul(a, b), [_f(2, 3, 4), _f(2, 4, 5)])
    run_case(lambda m, i: m.emb(i), [_i(10, 3, 4)], {"emb": nn.Embedding(10, 6)})
    run_case(lambda m, x: m.ln(x), [_f(2, 3, 8)], {"ln": nn.LayerNorm(8)})
    run_case(lambda m, x: m.ln(x), [_f(2, 3, 8)], {"ln": nn.LayerNorm([3, 8], elementwise_affine=False)})
    run_case(lambda m, x: m.prelu(x), [_f(2, 3, 5)], {"prelu": nn.PReLU(3)})
    run_case(lambda m, x: F.pixel_shuffle(x, 2), [_f(2, 8, 3, 3)])


@pytest.mark.parametrize("opset", [18, 21, 23])
def test_normalizations_at_each_opset(opset):
    gn = nn.GroupNorm(2, 6)
    proto = run_case(lambda m, x: m.gn(x), [_f(2, 6, 5)], {"gn": gn}, opset=opset)
    assert ("GroupNormalization" in {n.op_type for n in proto.graph.node}) == (opset >= 21)
    proto = run_case(lambda m, x: m.rms(x), [_f(2, 3, 8)], {"rms": nn.RMSNorm(8)}, opset=opset)
    assert ("RMSNormalization" in {n.op_type for n in proto.graph.node}) == (opset >= 23)


@pytest.mark.parametrize("name", ["var", "amax", "logsumexp", "glu", "sum"])
def test_reductions_at_opset_17(name):  # opset 17 takes a Reduce's axes as an attribute
    run_case(lambda m, x: UNARY[name](x), [X], opset=17)
    run_case(lambda m, x: m.gn(x), [_f(2, 6, 5)], {"gn": nn.GroupNorm(3, 6)}, opset=17)


def test_gelu_is_one_node_from_opset_20():
    proto = run_case(lambda m, x: F.gelu(x), [X], opset=20)
    assert [n.op_type for n in proto.graph.node if n.op_type == "Gelu"] == ["Gelu"]


def test_attention_ops():
    q = _f(2, 2, 5, 4)
    run_case(lambda m, a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), [q, q * 0.5, q + 1])
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    run_case(lambda m, x: m.mha(x, x, x)[0], [_f(2, 5, 8)], {"mha": mha})
    run_case(lambda m, x, y: m.mha(x, y, y, need_weights=True)[1], [_f(2, 5, 8), _f(2, 3, 8)], {"mha": mha})


def test_convolutions():
    run_case(lambda m, x: m.c(x), [_f(2, 3, 9, 9)], {"c": nn.Conv2d(3, 4, 3, stride=2, padding=1, dilation=1)})
    run_case(lambda m, x: m.c(x), [_f(2, 4, 9)], {"c": nn.Conv1d(4, 6, 3, padding=2, dilation=2, groups=2)})
    run_case(lambda m, x: m.c(x), [_f(2, 3, 5, 5)], {"c": nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                                            output_padding=1)})
    run_case(lambda m, x: m.c(x), [_f(2, 3, 7)], {"c": nn.ConvTranspose1d(3, 4, 3, stride=2, bias=False)})


def test_layer_level_ops():
    run_case(lambda m, x: m.bn(x), [_f(4, 3, 5)], {"bn": nn.BatchNorm1d(3)}, train_first=True)
    run_case(lambda m, x: m.bn(x), [_f(4, 3, 5, 5)], {"bn": nn.BatchNorm2d(3)}, train_first=True)
    run_case(lambda m, x: m.bn(x), [_f(4, 3, 2, 3, 3)], {"bn": nn.BatchNorm3d(3, affine=False)}, train_first=True)
    run_case(lambda m, x: m.p(x), [_f(2, 3, 9)], {"p": nn.MaxPool1d(3, stride=2, padding=1)})
    run_case(lambda m, x: m.p(x), [_f(2, 3, 8, 8)], {"p": nn.MaxPool2d(2, ceil_mode=True)})
    run_case(lambda m, x: m.p(x), [_f(2, 3, 9)], {"p": nn.AvgPool1d(3, stride=2, padding=1)})
    run_case(lambda m, x: m.p(x), [_f(2, 3, 8, 8)], {"p": nn.AvgPool2d(3, stride=2, padding=1,
                                                                     count_include_pad=False)})
    run_case(lambda m, x: m.p(x), [_f(2, 3, 8)], {"p": nn.AdaptiveAvgPool1d(4)})
    run_case(lambda m, x: m.p(x), [_f(2, 3, 8, 6)], {"p": nn.AdaptiveAvgPool2d(1)})
    for cls in (nn.LSTM, nn.GRU, nn.RNN):
        run_case(lambda m, x: m.r(x), [_f(2, 4, 5)], {"r": cls(5, 6, batch_first=True)})


def test_losses_inference_forms():
    logits, target = _f(6, 5), _i(5, 6)
    target[1] = -100
    run_case(lambda m, x, t: F.cross_entropy(x, t), [logits, target])
    run_case(lambda m, x, t: F.cross_entropy(x, t, reduction="none"), [logits, target])
    run_case(lambda m, x, t: F.nll_loss(F.log_softmax(x, 1), t, reduction="sum"), [logits, target])
    run_case(lambda m, x, t: F.cross_entropy(x, t), [_f(2, 5, 3), _i(5, 2, 3)])


def test_every_mapping_is_exercised_and_there_are_at_least_60():
    if len(EXERCISED) < 10:
        pytest.skip("run with the whole file: the other tests fill the exercised set")
    missing = sorted(getattr(k, "__name__", str(k)) for k in MAPPINGS if k not in EXERCISED)
    assert not missing, f"mappings never exercised against ONNX Runtime: {missing}"
    assert len(MAPPINGS) >= 60


def test_docs_list_every_mapping():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "onnx.md").read_text(encoding="utf-8")
    names = [getattr(k, "__name__", k) for k in MAPPINGS]
    missing = sorted(k for k in names if f"`{k}`" not in doc)
    assert not missing, f"docs/onnx.md's op table lacks {missing}"
