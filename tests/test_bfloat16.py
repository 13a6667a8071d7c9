"""bfloat16 as a storage dtype (ml_dtypes): ops compute in float32 and round back, as PyTorch's CPU
kernels; compared with PyTorch's own bfloat16 results (autograd/bfloat16.py, ops/bfloat16_storage.py)."""

import io

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")  # a dependency; test_imports checks the import without it
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln import nn
from minitorch_ln.serialization import load, save

torch = pytest.importorskip("torch")
BF16 = np.dtype(ml_dtypes.bfloat16)


def to_torch(a: np.ndarray):
    return torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).view(torch.bfloat16)


def from_torch(t) -> np.ndarray:
    return t.detach().contiguous().view(torch.int16).numpy().view(BF16)


def assert_bf16_close(ours, theirs, ulps=1, scaled=False):
    """Equal within ``ulps`` units in the last place of bfloat16 (2**-7 relative per ulp at worst);
    NaN where PyTorch has NaN, the same infinities. ``scaled``: ulps of the largest value (for results
    of sums that cancel, where the error is relative to the terms, not to the small result)."""
    assert ours.dtype == BF16 and str(theirs.dtype) == "torch.bfloat16"
    a, b = ours.array.astype(np.float32), from_torch(theirs).astype(np.float32)
    assert a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_array_equal(np.isinf(a), np.isinf(b))
    fin = np.isfinite(b)
    atol = ulps * 2.0 ** -7 * float(np.abs(b[fin]).max(initial=0)) if scaled else ulps * 1e-30
    np.testing.assert_allclose(a[fin], b[fin], rtol=ulps * 2.0 ** -7, atol=atol)


def _pair(rng, shape, scale=1.0):
    a = (rng.standard_normal(shape) * scale).astype(np.float32).astype(BF16)
    return mt.tensor(a), to_torch(a)


def test_dtype_api_as_pytorch():
    assert mt.bfloat16 == BF16 and str(mt.bfloat16) == "bfloat16"
    fi, ti = mt.finfo(mt.bfloat16), torch.finfo(torch.bfloat16)
    assert (fi.eps, fi.max, fi.tiny, fi.resolution, fi.bits) == (ti.eps, ti.max, ti.tiny, ti.resolution, ti.bits)
    x = mt.tensor([1.5, -2.25, 3.0])
    for y in (x.bfloat16(), x.to(mt.bfloat16), mt.tensor([1.5, -2.25, 3.0], dtype=mt.bfloat16), x.to("bfloat16")):
        assert y.dtype == BF16 and y.array.tolist() == [1.5, -2.25, 3.0]
    assert x.bfloat16().float().dtype == np.float32
    assert repr(mt.tensor([1.5, 2.0, 1e-3], dtype=mt.bfloat16)) == repr(torch.tensor([1.5, 2.0, 1e-3], dtype=torch.bfloat16))
    assert repr(mt.tensor(3.0).bfloat16()) == repr(torch.tensor(3.0).bfloat16())
    model = nn.Linear(3, 2).bfloat16()
    assert model.weight.dtype == BF16 and model.weight.requires_grad


@pytest.mark.parametrize("a,b,want", [("bfloat16", "float16", "float32"), ("bfloat16", "float32", "float32"),
                                      ("bfloat16", "float64", "float64"), ("bfloat16", "int64", "bfloat16"),
                                      ("bfloat16", "bool", "bfloat16"), ("bfloat16", "bfloat16", "bfloat16")])
def test_promotion_as_pytorch(a, b, want):
    x, y = mt.ones(2, dtype=getattr(mt, a)), mt.ones(2, dtype=getattr(mt, b))
    assert (x + y).dtype == getattr(mt, want) == mt.promote_types(getattr(mt, a), getattr(mt, b))
    assert str((torch.ones(2, dtype=getattr(torch, a)) + torch.ones(2, dtype=getattr(torch, b))).dtype) == f"torch.{want}"
    assert (x * 2.5).dtype == BF16 and (x + mt.tensor(1.0)).dtype == BF16  # numbers and 0-d tensors do not widen


def test_sums_accumulate_in_float32_as_pytorch():
    # NumPy's own bfloat16 sum adds in bfloat16: past 256 adding 1 rounds back to 256 (8 bits of mantissa)
    assert float(np.ones(1000, BF16).sum()) == 256.0
    ones = mt.ones(1000, dtype=mt.bfloat16)
    assert float(ones.sum()) == float(torch.ones(1000, dtype=torch.bfloat16).sum()) == 1000.0
    assert float(ones.mean()) == 1.0
    rng = np.random.default_rng(0)
    x, tx = _pair(rng, (64, 300))
    assert_bf16_close(x.sum(1), tx.sum(1))
    assert_bf16_close(x.mean(0), tx.mean(0))
    # cumsum: the float32 running sum, rounded once per output (PyTorch's CPU kernel rounds its running sum
    # differently; ours is the rounded exact-in-float32 value)
    want = np.cumsum(x.array.astype(np.float32), axis=1).astype(BF16)
    np.testing.assert_array_equal(x.cumsum(1).array, want)
    assert_bf16_close(x.var(1), tx.var(1), ulps=2)


OPS = {
    "exp": (lambda m: m.exp(), lambda t: t.exp()), "tanh": (lambda m: m.tanh(), lambda t: t.tanh()),
    "sigmoid": (lambda m: m.sigmoid(), lambda t: t.sigmoid()), "sqrt_abs": (lambda m: m.abs().sqrt(), lambda t: t.abs().sqrt()),
    "log_abs": (lambda m: (m.abs() + 1).log(), lambda t: (t.abs() + 1).log()),
    "gelu": (F.gelu, torch.nn.functional.gelu), "relu": (F.relu, torch.nn.functional.relu),
    "silu": (F.silu, torch.nn.functional.silu),
    "softmax": (lambda m: F.softmax(m, -1), lambda t: torch.softmax(t, -1)),
    "log_softmax": (lambda m: F.log_softmax(m, -1), lambda t: torch.log_softmax(t, -1)),
    "layer_norm": (lambda m: F.layer_norm(m, (m.shape[-1],)), lambda t: torch.nn.functional.layer_norm(t, (t.shape[-1],))),
    "mul_add": (lambda m: m * 1.7 + 0.3, lambda t: t * 1.7 + 0.3),
    "pow": (lambda m: m ** 2, lambda t: t ** 2), "amax": (lambda m: m.amax(-1), lambda t: t.amax(-1)),
    "norm": (lambda m: m.norm(dim=-1), lambda t: t.norm(dim=-1)),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_forward_and_backward_agree_with_pytorch_bfloat16(name):
    ours_fn, theirs_fn = OPS[name]
    rng = np.random.default_rng(1)
    x, tx = _pair(rng, (4, 33))
    x.requires_grad_(True)
    tx.requires_grad_(True)
    y, ty = ours_fn(x), theirs_fn(tx)
    assert_bf16_close(y, ty, ulps=2)
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32).astype(BF16)  # a random upstream gradient
    y.backward(mt.tensor(g))
    ty.backward(to_torch(g))
    assert x.grad.dtype == BF16
    # backward is several rounded Tensor ops here, one fused float32 kernel in PyTorch: a few ulps of the
    # largest gradient apart where terms cancel
    assert_bf16_close(x.grad, tx.grad, ulps=4, scaled=True)


def test_matmul_linear_and_cross_entropy_agree_with_pytorch():
    rng = np.random.default_rng(2)
    a, ta = _pair(rng, (8, 64))
    w, tw = _pair(rng, (32, 64), 0.1)
    assert_bf16_close(a @ w.t(), ta @ tw.t(), ulps=2)
    assert_bf16_close(F.linear(a, w), torch.nn.functional.linear(ta, tw), ulps=2)
    target = rng.integers(0, 32, 8)
    logits, tlogits = F.linear(a, w), torch.nn.functional.linear(ta, tw)
    assert_bf16_close(F.cross_entropy(logits, mt.tensor(target)),
                      torch.nn.functional.cross_entropy(tlogits, torch.from_numpy(target)), ulps=2)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3000), value=st.sampled_from([1.0, 0.1, -3.0, 1e-3]))
def test_property_sum_of_a_constant_is_pytorchs(n, value):
    x = np.full(n, value, np.float32).astype(BF16)
    assert float(mt.tensor(x).sum()) == float(to_torch(x).sum())


def test_edge_values_against_the_math():
    vals = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.5e38, 1e-40, 65504.0 * 16], np.float32)
    x = mt.tensor(vals).bfloat16()
    tx = torch.from_numpy(vals).bfloat16()
    np.testing.assert_array_equal(x.array.astype(np.float32), tx.float().numpy())  # the same rounding (3.5e38 -> inf)
    assert_bf16_close(x * 2, tx * 2)
    assert_bf16_close(x.exp(), tx.exp())
    assert_bf16_close(x + mt.tensor(vals).half().bfloat16(), tx + torch.from_numpy(vals).half().bfloat16())
    h = mt.tensor([1.0, 2.0], dtype=mt.float16)
    assert (h + mt.tensor([1.0, 2.0], dtype=mt.bfloat16)).dtype == np.float32  # float16 with bfloat16: float32


def test_views_keep_sharing_bfloat16_memory():
    x = mt.arange(12.0).bfloat16().reshape(3, 4)
    v = x.t()[1:]
    assert v.dtype == BF16 and np.shares_memory(v.array, x.array)
    v.mul_(2)  # in place through a view: the base changes
    assert x.array.astype(np.float32)[:, 1:].T.tolist() == (np.arange(12.0).reshape(3, 4)[:, 1:].T * 2).tolist()


def test_autocast_cpu_bfloat16_does_what_pytorch_does():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 16)).astype(np.float32)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    x, tx = mt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    lin, tlin = nn.Linear(16, 8), torch.nn.Linear(16, 8)
    lin.weight.data = mt.tensor(w)
    tlin.weight.data = torch.tensor(w)
    lin.bias.data = mt.zeros(8)
    tlin.bias.data = torch.zeros(8)
    with mt.autocast("cpu", dtype=mt.bfloat16):
        y = lin(x)
        s = F.softmax(y, -1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ty = tlin(tx)
        ts = torch.softmax(ty, -1)
    assert_bf16_close(y, ty, ulps=2)
    assert str(s.dtype) == str(ts.dtype).replace("torch.", "")
    g = rng.standard_normal((4, 8)).astype(np.float32)
    (y.float() * mt.tensor(g)).sum().backward()
    (ty.float() * torch.tensor(g)).sum().backward()
    assert x.grad.dtype == np.float32 and lin.weight.grad.dtype == np.float32  # float32 leaves get float32 grads
    np.testing.assert_allclose(x.grad.array, tx.grad.numpy(), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(lin.weight.grad.array, tlin.weight.grad.numpy(), rtol=2e-2, atol=2e-2)


def test_bfloat16_checkpoints_both_ways_with_real_torch(tmp_path):
    vals = np.array([1.0, -2.5, 3.140625, 1e-3], np.float32)
    torch.save({"w": torch.from_numpy(vals).bfloat16()}, tmp_path / "t.pt")
    got = load(tmp_path / "t.pt")["w"]
    assert got.dtype == BF16 and got.array.astype(np.float32).tolist() == torch.from_numpy(vals).bfloat16().float().tolist()
    buf = io.BytesIO()
    save({"w": got}, buf, format="torch")
    back = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)["w"]
    assert back.dtype == torch.bfloat16 and back.float().tolist() == got.array.astype(np.float32).tolist()


def test_bad_input_names_what_came():
    x = mt.ones(2, dtype=mt.bfloat16)
    with pytest.raises(TypeError, match="cannot move a bfloat16 tensor to cuda:0: bfloat16 is a CPU storage dtype"):
        x.to("cuda")
    with pytest.raises(TypeError, match="iinfo: expected an integer dtype .* got bfloat16"):
        mt.iinfo(mt.bfloat16)


def test_bfloat16_in_the_default_safetensors_format(tmp_path):
    x = mt.tensor([1.5, -2.0, 3.140625, 1e-3]).bfloat16()
    save({"w": x, "p": nn.Parameter(mt.ones(2).bfloat16()), "n": 3}, tmp_path / "b.safetensors")
    back = load(tmp_path / "b.safetensors")
    assert back["w"].dtype == BF16 and back["w"].array.tobytes() == x.array.tobytes()  # the same bits
    assert isinstance(back["p"], nn.Parameter) and back["p"].dtype == BF16 and back["n"] == 3
