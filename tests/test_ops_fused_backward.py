"""The fused first-order backwards of ``ops/fused_backward.py`` (issue 26: tanh, sigmoid, ``x ** p``) against the Tensor-op form they
replace (bit for bit), finite differences (first and second order, also on non-contiguous inputs),
PyTorch (first and second order) and the math at the edges."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.ops.fused_backward import PowScalarBackward, SigmoidBackward, TanhBackward, sigmoid_array

from helpers import compare_with_torch, gradcheck_noncontiguous

EDGES = [0.0, -0.0, 1e-30, -1e-30, 0.5, -2.0, 9.0, -9.0, 20.0, 1e4, -1e4, math.inf, -math.inf, math.nan]



def _opmath(dtype, fn, *arrays):
    """``fn`` on tensors of ``arrays``: the composed Tensor-op form a fused node replaces. float16 ops compute in
    float32 and round once each (autograd/bfloat16.py); a fused node rounds once in all, so for float16 its
    reference is the composed form in float32, rounded once."""
    if np.dtype(dtype) == np.float16:
        return fn(*[mt.tensor(a.astype(np.float32)) for a in arrays]).half()
    return fn(*[mt.tensor(a) for a in arrays])

def _composed(dy, x):
    """The Tensor-op form Tanh.backward had: dy * (4 sech...) as 4σ(2x)σ(-2x)."""
    x2 = x * 2.0
    return dy * (4.0 * x2.sigmoid() * (-x2).sigmoid())


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_fused_backward_is_the_composed_form_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([np.array(EDGES), rng.standard_normal(50) * 5]).astype(dtype)
    dy = rng.standard_normal(x.shape).astype(dtype)
    with np.errstate(all="ignore"):
        fused = TanhBackward.apply(mt.tensor(dy), mt.tensor(x))
        composed = _opmath(dtype, _composed, dy, x)
    assert fused.dtype == composed.dtype == np.dtype(dtype)
    assert fused.numpy().tobytes() == composed.numpy().tobytes()
    for v in (0.5, -3.0):  # 0-d
        assert TanhBackward.apply(mt.tensor(2.0), mt.tensor(v)).item() == _composed(mt.tensor(2.0), mt.tensor(v)).item()


def test_edge_values_against_the_math():
    # d tanh/dx = sech² x = 1/cosh² x: 1 at 0, 6.1e-8 at 9 (where 1 - tanh² rounds to 0 in float32),
    # 0 at ±inf, NaN at NaN; float64 reference from math.cosh
    x = mt.tensor([0.0, 9.0, -9.0, 1e4, math.inf, -math.inf, math.nan], requires_grad=True)
    x.tanh().backward(mt.ones(7))
    g = x.grad.numpy()
    assert g[0] == 1.0
    np.testing.assert_allclose(g[1:3], 1 / math.cosh(9.0) ** 2, rtol=1e-5)
    assert g[3] == 0.0 and g[4] == 0.0 and g[5] == 0.0 and math.isnan(g[6])
    h = mt.tensor([1.0], dtype=mt.float16, requires_grad=True)
    h.tanh().backward(mt.ones(1, dtype=mt.float16))
    assert h.grad.dtype == mt.float16 and abs(float(h.grad.item()) - 1 / math.cosh(1.0) ** 2) < 1e-3


def test_gradcheck_first_and_second_order_float64():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4))
    gradcheck_noncontiguous(lambda t: t.tanh(), [x], gg=True)
    # the fused node itself, in both inputs, and its backward (third derivative of tanh)
    dy = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64, requires_grad=True)
    xt = mt.tensor(x, dtype=mt.float64, requires_grad=True)
    assert gradcheck(TanhBackward.apply, (dy, xt))
    assert gradgradcheck(TanhBackward.apply, (dy, xt))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_first_and_second_order_against_torch(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5)).astype(dtype)
    compare_with_torch(lambda t: t.tanh(), lambda t: t.tanh(), [x])
    v = rng.standard_normal((4, 5)).astype(dtype)  # random upstream gradient, then d/dx of <grad, w>

    def second(lib, xt, vt, grad):
        (g,) = grad(xt.tanh(), xt, vt, create_graph=True)
        return g

    compare_with_torch(lambda a, b: second(mt, a, b, lambda *a, **k: mt.autograd.grad(*a, **k)),
                       lambda a, b: second(torch, a, b, lambda *a, **k: torch.autograd.grad(*a, **k)), [x, v])


def test_double_backward_node_has_pytorch_name():
    x = mt.tensor([0.3], requires_grad=True)
    (g,) = mt.autograd.grad(x.tanh(), x, mt.ones(1), create_graph=True)
    assert g.grad_fn.name() == "TanhBackwardBackward0"


def test_bad_input_still_refused():
    with pytest.raises(TypeError, match=r"tanh\(\): argument 'input' must be Tensor, not str"):
        mt.tanh("x")  # was an AttributeError from inside require_float


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-50, 50, allow_nan=False, width=32), min_size=1, max_size=8))
def test_property_sigmoid_array_as_sigmoid_and_backward_in_range(values):
    x = np.array(values, dtype=np.float32)
    s = sigmoid_array(x)
    assert s.dtype == np.float32 and np.all((s >= 0) & (s <= 1))
    np.testing.assert_allclose(s, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6, atol=1e-30)
    g = TanhBackward.apply(mt.ones(len(values)), mt.tensor(x)).numpy()
    assert np.all((g >= 0) & (g <= 1))  # sech² x lies in [0, 1]


# ---------------------------------------------------------------------------------- x ** p

POWERS = [2.0, 3.0, 0.5, -1.0, -2.5, 1.5, 7.0]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_pow_backward_is_the_composed_form_bit_for_bit(dtype):
    rng = np.random.default_rng(3)
    x = np.concatenate([np.array(EDGES), rng.standard_normal(40) * 3]).astype(dtype)
    dy = rng.standard_normal(x.shape).astype(dtype)
    for p in POWERS:
        with np.errstate(all="ignore"):
            fused = PowScalarBackward.apply(mt.tensor(dy), mt.tensor(x), p)
            composed = _opmath(dtype, lambda d, t: d * p * mt.pow(t, p - 1), dy, x)  # what PowScalar.backward computed
        assert fused.dtype == composed.dtype == np.dtype(dtype)
        assert fused.numpy().tobytes() == composed.numpy().tobytes(), p


def test_pow_edge_values_against_the_math():
    # d/dx x**2 = 2x; d/dx x**0.5 = 0.5/sqrt(x): inf at 0, NaN below 0; d/dx x**-1 = -1/x²: -inf at ±0
    x = mt.tensor([0.0, 3.0, -2.0, math.inf], requires_grad=True)
    (x**2).backward(mt.ones(4))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 6.0, -4.0, math.inf])
    y = mt.tensor([0.0, 4.0, -1.0], requires_grad=True)
    (y**0.5).backward(mt.ones(3))
    g = y.grad.numpy()
    assert g[0] == math.inf and g[1] == 0.25 and math.isnan(g[2])
    z = mt.tensor([0.0, 2.0], requires_grad=True)
    (z**-1.0).backward(mt.ones(2))
    assert z.grad.numpy()[0] == -math.inf and z.grad.numpy()[1] == -0.25
    w = mt.tensor([1.5], dtype=mt.float16, requires_grad=True)
    (w**3.0).backward(mt.ones(1, dtype=mt.float16))
    assert w.grad.dtype == mt.float16 and float(w.grad.item()) == 6.75  # 3 · 1.5², exact in float16
    for p in (0.0, 1.0, True):  # keep their own forms: zeros, and dy as it is
        v = mt.tensor([2.0, -3.0], requires_grad=True)
        (v**p).backward(mt.tensor([1.0, 2.0]))
        np.testing.assert_array_equal(v.grad.numpy(), [0.0, 0.0] if float(p) == 0 else [1.0, 2.0])


@pytest.mark.parametrize("p", [2.0, 3.0, -1.5])
def test_pow_gradcheck_first_and_second_order(p):
    rng = np.random.default_rng(4)
    x = rng.uniform(0.5, 2.0, (3, 4))  # positive: every p is smooth there
    gradcheck_noncontiguous(lambda t: t**p, [x], gg=True)
    dy = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64, requires_grad=True)
    xt = mt.tensor(x, dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda a, b: PowScalarBackward.apply(a, b, p), (dy, xt))
    assert gradgradcheck(lambda a, b: PowScalarBackward.apply(a, b, p), (dy, xt))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pow_first_and_second_order_against_torch(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 2.0, (4, 5)).astype(dtype)
    v = rng.standard_normal((4, 5)).astype(dtype)
    for p in (2.0, -0.5):
        compare_with_torch(lambda t, p=p: t**p, lambda t, p=p: t**p, [x])
        compare_with_torch(lambda a, b, p=p: mt.autograd.grad(a**p, a, b, create_graph=True)[0],
                           lambda a, b, p=p: torch.autograd.grad(a**p, a, b, create_graph=True)[0], [x, v])


# ---------------------------------------------------------------------------------- sigmoid


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sigmoid_backward_is_the_composed_form_bit_for_bit(dtype):
    rng = np.random.default_rng(6)
    x = np.concatenate([np.array(EDGES), rng.standard_normal(50) * 8]).astype(dtype)
    dy = rng.standard_normal(x.shape).astype(dtype)
    with np.errstate(all="ignore"):
        fused = SigmoidBackward.apply(mt.tensor(dy), mt.tensor(x))
        composed = _opmath(dtype, lambda d, xt: d * xt.sigmoid() * (-xt).sigmoid(), dy, x)  # Sigmoid.backward's form
    assert fused.dtype == composed.dtype == np.dtype(dtype)
    assert fused.numpy().tobytes() == composed.numpy().tobytes()


def test_sigmoid_edge_values_against_the_math():
    # σ'(x) = σ(x)σ(-x): 1/4 at 0, e^-20/(1+e^-20)² ≈ 2.06e-9 at ±20 (where 1 - σ(20) is 0 in float32),
    # 0 at ±inf, NaN at NaN
    x = mt.tensor([0.0, 20.0, -20.0, math.inf, -math.inf, math.nan], requires_grad=True)
    x.sigmoid().backward(mt.ones(6))
    g = x.grad.numpy()
    assert g[0] == 0.25
    np.testing.assert_allclose(g[1:3], math.exp(-20) / (1 + math.exp(-20)) ** 2, rtol=1e-5)
    assert g[3] == 0.0 and g[4] == 0.0 and math.isnan(g[5])


def test_sigmoid_gradcheck_first_and_second_order_and_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4)) * 3
    gradcheck_noncontiguous(lambda t: t.sigmoid(), [x], gg=True)
    dy = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64, requires_grad=True)
    xt = mt.tensor(x, dtype=mt.float64, requires_grad=True)
    assert gradcheck(SigmoidBackward.apply, (dy, xt))
    assert gradgradcheck(SigmoidBackward.apply, (dy, xt))
    v = rng.standard_normal((3, 4))
    for dtype in ("float64", "float32"):
        compare_with_torch(lambda a, b: mt.autograd.grad(a.sigmoid(), a, b, create_graph=True)[0],
                           lambda a, b: torch.autograd.grad(a.sigmoid(), a, b, create_graph=True)[0],
                           [x.astype(dtype), v.astype(dtype)])
