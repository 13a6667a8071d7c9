"""addmv, addbmm, addr, addcmul, addcdiv (+ addcmul_/addcdiv_), inner, trace, dist (ops/products_add.py):
float64 gradcheck (also at non-contiguous leaves), PyTorch in float64 and float32 with random upstream
gradients, Hypothesis properties, bad input, edge values."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import arrays, broadcastable_arrays

import minitorch_ln as mt

# name, ours, theirs, input shapes
CASES = [
    ("addmv", lambda i, m, v: mt.addmv(i, m, v, beta=0.5, alpha=2.0),
     lambda i, m, v: torch.addmv(i, m, v, beta=0.5, alpha=2.0), [(3,), (3, 4), (4,)]),
    ("addmv_bcast", mt.addmv, torch.addmv, [(1,), (3, 4), (4,)]),
    ("addbmm", lambda i, a, b: mt.addbmm(i, a, b, beta=-1.5, alpha=0.7),
     lambda i, a, b: torch.addbmm(i, a, b, beta=-1.5, alpha=0.7), [(3, 5), (2, 3, 4), (2, 4, 5)]),
    ("addr", lambda i, a, b: mt.addr(i, a, b, alpha=3.0), lambda i, a, b: torch.addr(i, a, b, alpha=3.0),
     [(3, 1), (3,), (4,)]),
    ("addcmul", lambda i, a, b: mt.addcmul(i, a, b, value=-0.5), lambda i, a, b: torch.addcmul(i, a, b, value=-0.5),
     [(2, 3), (1, 3), (2, 1)]),
    ("addcdiv", lambda i, a, b: mt.addcdiv(i, a, b, value=2), lambda i, a, b: torch.addcdiv(i, a, b, value=2),
     [(2, 3), (3,), (2, 3)]),
    ("inner", mt.inner, torch.inner, [(2, 4), (3, 4)]),
    ("inner_3d", mt.inner, torch.inner, [(2, 1, 4), (4,)]),
    ("trace", mt.trace, torch.trace, [(3, 5)]),
    ("dist", mt.dist, torch.dist, [(2, 3), (3,)]),
    ("dist_p3", lambda a, b: mt.dist(a, b, 3.0), lambda a, b: torch.dist(a, b, 3.0), [(4,), (4,)]),
    ("dist_inf", lambda a, b: mt.dist(a, b, float("inf")), lambda a, b: torch.dist(a, b, float("inf")), [(5,), (5,)]),
]


def _inputs(rng, shapes, dtype=np.float64, name=""):
    out = [rng.standard_normal(s).astype(dtype) for s in shapes]
    if name == "addcdiv":  # divisor away from zero
        out[2] = (np.sign(out[2]) * (0.5 + np.abs(out[2]))).astype(dtype)
    return out


@pytest.mark.parametrize("name,ours,theirs,shapes", CASES, ids=[c[0] for c in CASES])
def test_gradcheck_contiguous_and_noncontiguous(name, ours, theirs, shapes, rng):
    gradcheck_noncontiguous(ours, _inputs(rng, shapes, name=name), gg=name in ("addcmul", "addmv", "inner"))


@pytest.mark.parametrize("name,ours,theirs,shapes", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(name, ours, theirs, shapes, dtype, rng):
    compare_with_torch(ours, theirs, _inputs(rng, shapes, dtype, name))


def test_beta_zero_ignores_nan_input_and_in_place_methods():
    # beta=0: input is not read (PyTorch's rule): its NaN does not reach the result
    out = mt.addmv(mt.tensor([np.nan, 1.0]), mt.eye(2), mt.tensor([2.0, 3.0]), beta=0)
    np.testing.assert_array_equal(out.numpy(), [2.0, 3.0])
    x = mt.tensor([1.0, 2.0])
    same = x.addcmul_(mt.tensor([2.0, 3.0]), mt.tensor([4.0, 5.0]), value=0.5)  # 1 + .5*8, 2 + .5*15
    assert same is x and x.tolist() == [5.0, 9.5]
    x.addcdiv_(mt.tensor([1.0, 1.0]), mt.tensor([4.0, -2.0]), value=2)  # 5 + 2/4, 9.5 - 2/2
    assert x.tolist() == [5.5, 8.5] and x._version[0] == 2


def test_integer_dtypes_as_pytorch():
    a = mt.tensor([[1, 2], [3, 4]], dtype="int32")
    assert mt.trace(a).dtype == np.int64 and mt.trace(a).item() == 5  # PyTorch sums integer traces in int64
    np.testing.assert_array_equal(mt.addcmul(mt.tensor([1, 2]), mt.tensor([3, 4]), mt.tensor([5, 6]), value=2).numpy(),
                                  [31, 50])  # 1 + 2*15, 2 + 2*24
    # int tensors with a float operand promote, as PyTorch
    assert mt.addcmul(mt.tensor([1, 2]), mt.tensor([1.5, 2.0]), mt.tensor([2, 2])).dtype == np.float32


def test_edge_values_follow_the_math():
    inf, nan = float("inf"), float("nan")
    x = mt.tensor([0.0, inf, -inf, nan, 1e300], dtype="float64")
    out = mt.addcmul(x, mt.tensor([1e300] * 5, dtype="float64"), mt.tensor([1e10] * 5, dtype="float64"))
    np.testing.assert_array_equal(out.numpy(), [inf, inf, nan, nan, inf])  # 1e310 overflows; inf - inf is nan
    assert mt.dist(mt.tensor([3e200, 0.0], dtype="float64"), mt.zeros(2, dtype="float64")).item() == 3e200
    assert mt.dist(mt.zeros(3), mt.zeros(3), 0).item() == 0.0
    assert mt.inner(mt.tensor(2.0, dtype="float16"), mt.tensor([1.0, 3.0], dtype="float16")).tolist() == [2.0, 6.0]


@settings(max_examples=30, deadline=None)
@given(data=st.data(), value=st.floats(-3, 3))
def test_property_addcmul_is_input_plus_value_times_product(data, value):
    a, b = data.draw(broadcastable_arrays())
    c = data.draw(arrays(a.shape))
    got = mt.addcmul(mt.tensor(c), mt.tensor(a), mt.tensor(b), value=value).numpy()
    np.testing.assert_allclose(got, c + value * a * b, rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 5), m=st.integers(1, 5), seed=st.integers(0, 1000))
def test_property_trace_and_inner_against_numpy(n, m, seed):
    r = np.random.default_rng(seed)
    a, b = r.standard_normal((n, m)), r.standard_normal((2, m))
    assert mt.trace(mt.tensor(a)).item() == pytest.approx(np.trace(a), abs=1e-12)
    np.testing.assert_allclose(mt.inner(mt.tensor(a), mt.tensor(b)).numpy(), np.inner(a, b), atol=1e-12)


def test_bad_input_names_what_came():
    m, v = mt.ones(3, 4), mt.ones(5)
    with pytest.raises(RuntimeError, match=r"addmv\(\): size mismatch, got input \(3\), mat \(3x4\), vec \(5\)"):
        mt.addmv(mt.ones(3), m, v)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        mt.addcdiv(mt.ones(2), mt.tensor([1, 2]), mt.tensor([3, 4]))
    with pytest.raises(TypeError, match=r"value=0.5 cannot be applied to int64 tensors"):
        mt.addcmul(mt.tensor([1]), mt.tensor([1]), mt.tensor([1]), value=0.5)
    with pytest.raises(RuntimeError, match=r"trace\(\): expected a matrix \(2-D\), but got a tensor with shape \(3,\)"):
        mt.trace(mt.ones(3))
    with pytest.raises(RuntimeError, match=r"inner\(\): the last dims of both inputs must be equal"):
        mt.inner(mt.ones(2, 3), mt.ones(4))
    with pytest.raises(TypeError, match=r"dist\(\): expected floating point or complex tensors, got int64"):
        mt.dist(mt.tensor([1]), mt.tensor([2]))
    with pytest.raises(RuntimeError, match=r"addr\(\): vec1 must be a vector \(1-D\), got shape \(2, 2\)"):
        mt.addr(mt.ones(2, 2), mt.ones(2, 2), mt.ones(2))
    with pytest.raises(TypeError, match=r"addbmm\(\): argument 'batch1' must be a Tensor, got list"):
        mt.addbmm(mt.ones(2, 2), [[1.0]], mt.ones(1, 2, 2))
