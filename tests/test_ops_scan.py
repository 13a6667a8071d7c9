"""Cumulative ops: cumsum, cumprod (gradient exact with zeros), logcumsumexp, cummax, cummin."""

import numpy as np
import pytest
import strategies as S
from helpers import compare_with_torch, gradcheck_contiguous_and_transposed, gradcheck_noncontiguous, t64, torch
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.ops.scan import (
    cummax,
    cummin,
    cumprod,
    cumsum,
    linear_scan,
    logcumsumexp,
)

# name, ours, theirs, gradgradcheck it
CASES = [
    ("cumsum", lambda x: cumsum(x, 1), lambda x: torch.cumsum(x, 1), True),
    ("cumsum_neg_dim", lambda x: x.cumsum(-1), lambda x: x.cumsum(-1), False),
    ("cumprod", lambda x: cumprod(x, 2), lambda x: torch.cumprod(x, 2), True),
    ("cumprod_dim0", lambda x: x.cumprod(0), lambda x: x.cumprod(0), True),
    ("logcumsumexp", lambda x: logcumsumexp(x, 1), lambda x: torch.logcumsumexp(x, 1), True),
    ("logcumsumexp_method", lambda x: x.logcumsumexp(-1), lambda x: x.logcumsumexp(-1), False),
    ("cummax", lambda x: tuple(cummax(x, 1)), lambda x: tuple(torch.cummax(x, 1)), True),
    ("cummin", lambda x: tuple(x.cummin(-1)), lambda x: tuple(x.cummin(-1)), True),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name,ours,theirs,gg", CASES, ids=IDS)
def test_scan_gradcheck_contiguous_and_not(name, ours, theirs, gg, rng):
    gradcheck_contiguous_and_transposed(ours, rng, (2, 3, 4), gg, gg_shape=(2, 3, 3))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,gg", CASES, ids=IDS)
def test_scan_matches_torch(name, ours, theirs, gg, dtype, rng, device):
    compare_with_torch(ours, theirs, [rng.standard_normal((3, 4, 5)).astype(dtype)], device=device)


@given(S.array_and_dim(), st.booleans())
def test_property_scans_match_torch(a_dim, ties):
    a, dim = a_dim
    if ties:
        a = np.round(a)  # many ties (cummax picks the last index) and zeros (cumprod's gradient)
    # Subnormal inputs are the math's, not PyTorch's: for x = [5e-324, 5e-324] the product underflows to
    # 0 and PyTorch's cumprod backward (its zero branch) gives dx0 = 0, where d(x0 + x0·x1)/dx0 =
    # 1 + x1 ≈ 1; ours gives the latter (test_cumprod_gradient_with_subnormal_values_follows_the_math).
    a = np.where(np.abs(a) < 1e-300, 0.0, a).astype(a.dtype)
    compare_with_torch(lambda x: cumsum(x, dim), lambda x: torch.cumsum(x, dim), [a])
    compare_with_torch(lambda x: cumprod(x, dim), lambda x: torch.cumprod(x, dim), [a])
    compare_with_torch(lambda x: logcumsumexp(x, dim), lambda x: torch.logcumsumexp(x, dim), [a])
    compare_with_torch(lambda x: tuple(cummax(x, dim)), lambda x: tuple(torch.cummax(x, dim)), [a])
    compare_with_torch(lambda x: tuple(cummin(x, dim)), lambda x: tuple(torch.cummin(x, dim)), [a])


@pytest.mark.parametrize("values", [
    [2.0, 0.0, 3.0, 0.5, 4.0],  # one zero
    [2.0, 0.0, 3.0, 0.0, 4.0],  # two zeros
    [0.0, 0.0, 0.0, 1.5, -2.0],  # leading zeros
    [1.5, 2.0, -3.0, 0.5, 0.0],  # a zero at the end
])
def test_cumprod_gradient_is_exact_with_zeros(values):
    a = np.array([values, values[::-1]])
    compare_with_torch(lambda x: cumprod(x, 1), lambda x: torch.cumprod(x, 1), [a])
    assert gradcheck(lambda t: cumprod(t, 1), (t64(a),))
    assert gradgradcheck(lambda t: cumprod(t, 1), (t64(a),))  # second order exact too (no division)
    # against the definition dx_i = Σ_{j>=i} dy_j Π_{k<=j, k≠i} x_k
    x = t64(a[0])
    dy = np.arange(1.0, 6.0)
    cumprod(x, 0).backward(t64(dy, False))
    want = [sum(dy[j] * np.prod([a[0][k] for k in range(j + 1) if k != i]) for j in range(i, 5)) for i in range(5)]
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_linear_scan_is_the_recurrence_and_differentiable(rng):
    a, b = rng.standard_normal((2, 6)), rng.standard_normal((2, 6))
    h = np.zeros_like(b)
    for i in range(6):
        h[:, i] = b[:, i] + (a[:, i] * h[:, i - 1] if i else 0.0)
    np.testing.assert_allclose(linear_scan(t64(a), t64(b), 1).detach().numpy(), h, rtol=1e-12)
    assert gradcheck(lambda p, q: linear_scan(p, q, 1, reverse=True), (t64(a), t64(b)))
    assert gradgradcheck(lambda p, q: linear_scan(p, q, 1), (t64(a), t64(b)))


def test_logcumsumexp_is_stable_for_huge_values_and_minus_inf():
    x = t64([1000.0, 1000.0, -1000.0, -np.inf])
    y = logcumsumexp(x, 0)
    np.testing.assert_allclose(y.detach().numpy(), [1000.0, 1000.0 + np.log(2.0)] * 1 + [1000.0 + np.log(2.0)] * 2)
    compare_with_torch(lambda t: logcumsumexp(t, 0), lambda t: torch.logcumsumexp(t, 0),
                       [np.array([1000.0, 1000.0, -1000.0, -np.inf])])
    small = logcumsumexp(t64([-1000.0, -1e308]), 0).detach().numpy()  # exp underflows: the scan does not
    np.testing.assert_allclose(small, [-1000.0, -1000.0])


def test_cummax_ties_pick_the_last_index_and_nan_propagates():
    v, i = cummax(mt.tensor([1.0, 3.0, 3.0, 2.0, 3.0, np.nan, 1.0, np.nan]), 0)
    ref = torch.cummax(torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0, np.nan, 1.0, np.nan]), 0)
    np.testing.assert_array_equal(v.numpy(), ref.values.numpy())
    np.testing.assert_array_equal(i.numpy(), ref.indices.numpy())  # [0, 1, 2, 2, 4, 5, 5, 7]
    assert type(cummin(mt.tensor([1.0]), 0)).__name__ == "cummin" and i.dtype == np.int64
    x = t64([2.0, 1.0, 2.0])
    cummax(x, 0).values.backward(t64([1.0, 10.0, 100.0], False))
    np.testing.assert_array_equal(x.grad.numpy(), [11.0, 0.0, 100.0])  # scatter-added to the indices


def test_integer_dtype_float16_empty_and_0d():
    i32 = mt.tensor(np.array([[1, 2], [3, 4]], dtype=np.int32))
    assert cumsum(i32, 1).dtype == np.int64 and cumprod(mt.tensor([True, True]), 0).dtype == np.int64
    np.testing.assert_array_equal(cumprod(i32, 0).numpy(), [[1, 2], [3, 8]])
    assert cumsum(i32, 0, dtype=mt.float32).dtype == np.float32
    compare_with_torch(lambda x: cumsum(x, 0), lambda x: torch.cumsum(x, 0), [np.array([1000.0, 30.0, 0.25], np.float16)])
    compare_with_torch(lambda x: cumsum(x, 0, dtype=mt.float32), lambda x: torch.cumsum(x, 0, dtype=torch.float32),
                       [np.array([1000.0, 30.0], np.float16)])
    for op in (cumsum, cumprod, logcumsumexp):
        assert op(mt.zeros(2, 0), 1).shape == (2, 0)
        assert op(mt.tensor(3.0), 0).item() == 3.0
    v, i = cummax(mt.tensor(3.0), -1)
    assert v.item() == 3.0 and i.item() == 0


def test_bad_input_errors_name_what_came():
    x = mt.zeros(2, 3)
    with pytest.raises(IndexError, match=r"dimension 2 is out of range .*2 dimension"):
        cumsum(x, 2)
    with pytest.raises(IndexError, match="out of range"):
        cummax(x, -3)
    with pytest.raises(TypeError, match="floating point.*got int64"):
        logcumsumexp(mt.tensor([1, 2]), 0)
    with pytest.raises(TypeError, match="dim must be an int, got None"):
        cumprod(x, None)
    with pytest.raises(TypeError, match="expected a Tensor as input, got list"):
        cumsum([1.0, 2.0], 0)


class _OtherArrayModule:
    """NumPy under another name: makes the scans take the path CuPy takes (no ``ufunc.accumulate``)."""

    def __getattr__(self, name):
        return getattr(np, name)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 17])
def test_whole_array_scan_used_without_accumulate_matches_numpy(n, rng, monkeypatch):
    from minitorch_ln.ops import scan

    a = rng.standard_normal((3, n, 2)) * 50
    a[0, n // 2, 0] = np.nan
    monkeypatch.setattr(scan, "get_array_module", lambda x: _OtherArrayModule())
    with np.errstate(invalid="ignore"):  # NaN through logaddexp
        for name in ("maximum", "minimum", "logaddexp"):
            want = getattr(np, name).accumulate(a, axis=1)
            np.testing.assert_allclose(scan._scan_arrays(name, a, 1), want, rtol=1e-12, err_msg=name)


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("name,ours,theirs,gg", CASES, ids=IDS)
def test_scan_gradcheck_noncontiguous_leaf(name, ours, theirs, gg, rng):
    gradcheck_noncontiguous(ours, [rng.standard_normal((2, 3, 3))], gg)


def test_cumprod_with_zeros_and_linear_scan_gradcheck_noncontiguous_leaves(rng):
    gradcheck_noncontiguous(lambda t: cumprod(t, 1), [np.array([[2.0, 0.0, 3.0, 0.0], [0.0, 1.5, -2.0, 0.5]])], gg=True)
    a, b = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    gradcheck_noncontiguous(lambda p, q: linear_scan(p, q, 1, reverse=True), [a, b], gg=True)


def test_cumprod_gradient_with_subnormal_values_follows_the_math():
    # y = (x0, x0·x1) with x0 = x1 = 5e-324 (x0·x1 underflows to 0): dL/dx0 = dy0 + dy1·x1, dL/dx1 = dy1·x0,
    # so for dy = (0.7, -1.3) the gradient is (0.7 - 1.3·5e-324, -1.3·5e-324) = (0.7, -5e-324) in float64
    # (-1.3 times the smallest subnormal rounds to minus that subnormal).
    # PyTorch 2.13 gives (0, 0): the math decides.
    x = mt.tensor(np.array([5e-324, 5e-324]), requires_grad=True)
    cumprod(x, 0).backward(mt.tensor(np.array([0.7, -1.3])))
    np.testing.assert_array_equal(x.grad.numpy(), [0.7, -5e-324])
