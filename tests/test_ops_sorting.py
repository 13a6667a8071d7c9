"""Sorting and order statistics: sort, argsort, msort, median, nanmedian, kthvalue, mode, quantile, unique."""

import numpy as np
import pytest
import strategies as S
from helpers import compare_with_torch, gradcheck_contiguous_and_transposed, gradcheck_noncontiguous, t64, torch
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck
from minitorch_ln.ops.sorting import (
    argsort,
    kthvalue,
    median,
    mode,
    msort,
    nanmedian,
    quantile,
    sort,
    unique,
)

INTERPOLATIONS = ["linear", "lower", "higher", "midpoint", "nearest"]


def _q(values, like):
    """A q tensor of the input's dtype, for both libraries."""
    if isinstance(like, mt.Tensor):
        return mt.tensor(np.asarray(values, dtype=like.dtype), device=like.device)
    return torch.tensor(values, dtype=like.dtype, device=like.device)


# name, ours, theirs, gradgradcheck it (inputs have distinct values: indices are unambiguous)
CASES = [
    ("sort", lambda x: tuple(sort(x, 1)), lambda x: tuple(torch.sort(x, 1)), True),
    ("sort_descending", lambda x: tuple(x.sort(descending=True)), lambda x: tuple(x.sort(descending=True)), False),
    ("argsort", lambda x: argsort(x, 0, descending=True), lambda x: torch.argsort(x, 0, descending=True), False),
    ("msort", lambda x: msort(x), lambda x: torch.msort(x), False),
    ("median_all", lambda x: median(x), lambda x: torch.median(x), True),
    ("median_dim", lambda x: tuple(x.median(1)), lambda x: tuple(x.median(1)), True),
    ("median_keepdim", lambda x: tuple(median(x, -1, True)), lambda x: tuple(torch.median(x, -1, True)), False),
    ("nanmedian_dim", lambda x: tuple(nanmedian(x, 0)), lambda x: tuple(torch.nanmedian(x, 0)), False),
    ("kthvalue", lambda x: tuple(kthvalue(x, 2, 1)), lambda x: tuple(torch.kthvalue(x, 2, 1)), True),
    ("kthvalue_keepdim", lambda x: tuple(x.kthvalue(3, keepdim=True)), lambda x: tuple(x.kthvalue(3, keepdim=True)),
     False),
    ("quantile_scalar", lambda x: quantile(x, 0.3, 1), lambda x: torch.quantile(x, 0.3, 1), True),
    ("quantile_vector_all", lambda x: x.quantile(_q([0.0, 0.25, 0.9, 1.0], x)),
     lambda x: x.quantile(_q([0.0, 0.25, 0.9, 1.0], x)), False),
]
IDS = [c[0] for c in CASES]
GRAD_CASES = [c for c in CASES if c[0] != "argsort"]  # argsort's int64 output has no gradient


@pytest.mark.parametrize("name,ours,theirs,gg", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_sorting_gradcheck_contiguous_and_not(name, ours, theirs, gg, rng):
    gradcheck_contiguous_and_transposed(ours, rng, (3, 4, 5), gg)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,gg", CASES, ids=IDS)
def test_sorting_matches_torch(name, ours, theirs, gg, dtype, rng, device):
    compare_with_torch(ours, theirs, [rng.standard_normal((3, 4, 5)).astype(dtype)], device=device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
def test_quantile_every_interpolation_matches_torch(interpolation, dtype, rng):
    a = rng.standard_normal((3, 7)).astype(dtype)
    for dim, keepdim in [(None, False), (None, True), (1, False), (0, True), (-1, True)]:
        kw = {"dim": dim, "keepdim": keepdim, "interpolation": interpolation}
        compare_with_torch(lambda x, kw=kw: quantile(x, _q([0.1, 0.5, 0.75, 1 / 3], x), **kw),
                           lambda x, kw=kw: torch.quantile(x, _q([0.1, 0.5, 0.75, 1 / 3], x), **kw), [a])
        compare_with_torch(lambda x, kw=kw: quantile(x, 0.5, **kw), lambda x, kw=kw: torch.quantile(x, 0.5, **kw), [a])
    # exact ranks: q·(n-1) whole, and the nearest mode's halves (rounded to even, as torch.round)
    compare_with_torch(lambda x: quantile(x, _q([0.0, 0.125, 0.25, 0.375, 0.5, 1.0], x), interpolation=interpolation),
                       lambda x: torch.quantile(x, _q([0.0, 0.125, 0.25, 0.375, 0.5, 1.0], x),
                                                interpolation=interpolation), [a[0, :5]])
    assert gradcheck(lambda t: quantile(t, _q([0.2, 0.5], t), 0, interpolation=interpolation),
                     (t64(a.astype(np.float64)),))


@given(S.array_and_dim(unique=True), st.booleans())
def test_property_order_statistics_match_torch(a_dim, keepdim):
    a, dim = a_dim
    n = a.shape[dim]
    compare_with_torch(lambda x: tuple(sort(x, dim, keepdim)), lambda x: tuple(torch.sort(x, dim, keepdim)), [a])  # descending
    compare_with_torch(lambda x: tuple(median(x, dim, keepdim)), lambda x: tuple(torch.median(x, dim, keepdim)), [a])
    compare_with_torch(lambda x: tuple(kthvalue(x, n, dim, keepdim)), lambda x: tuple(torch.kthvalue(x, n, dim, keepdim)),
                       [a])
    compare_with_torch(lambda x: quantile(x, 0.4, dim, keepdim), lambda x: torch.quantile(x, 0.4, dim, keepdim), [a])


@given(S.array_and_dim(), st.booleans())
def test_property_stable_sort_and_mode_with_ties_match_torch(a_dim, descending):
    a, dim = a_dim
    a = np.round(a)  # many ties: stable order, mode's smallest-most-frequent and last index
    compare_with_torch(lambda x: tuple(sort(x, dim, descending, stable=True)),
                       lambda x: tuple(torch.sort(x, dim=dim, descending=descending, stable=True)), [a])
    compare_with_torch(lambda x: tuple(mode(x, dim)), lambda x: tuple(torch.mode(x, dim)), [a])
    compare_with_torch(lambda x: median(x), lambda x: torch.median(x), [a])  # gradient shared among ties
    u = unique(mt.tensor(a), return_inverse=True, return_counts=True)
    ref = torch.unique(torch.tensor(a), return_inverse=True, return_counts=True)
    for ours, theirs in zip(u, ref):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_nan_sorts_as_largest_and_propagates_through_median():
    a = np.array([2.0, np.nan, 1.0, np.nan, 2.0])
    for desc in (False, True):
        v, i = sort(mt.tensor(a), descending=desc)
        ref = torch.sort(torch.tensor(a), descending=desc, stable=True)
        np.testing.assert_array_equal(v.numpy(), ref.values.numpy())
        np.testing.assert_array_equal(i.numpy(), ref.indices.numpy())
    b = np.array([[1.0, np.nan, 3.0, np.nan], [4.0, 1.0, 0.5, 2.0], [np.nan, np.nan, np.nan, np.nan]])
    compare_with_torch(lambda x: tuple(median(x, 1)), lambda x: tuple(torch.median(x, 1)), [b])
    compare_with_torch(lambda x: tuple(nanmedian(x, 1)), lambda x: tuple(torch.nanmedian(x, 1)), [b[:2]])
    # an all-NaN row: NaN; which NaN's index PyTorch reports depends on its nth_element (ours: 0)
    assert np.isnan(nanmedian(mt.tensor(b), 1).values.numpy()[2])
    compare_with_torch(lambda x: median(x), lambda x: torch.median(x), [b])
    compare_with_torch(lambda x: nanmedian(x), lambda x: torch.nanmedian(x), [b])
    compare_with_torch(lambda x: quantile(x, 0.5, 1), lambda x: torch.quantile(x, 0.5, 1), [b])


def test_median_gradient_is_shared_among_ties_and_lower_median():
    x = t64([1.0, 3.0, 3.0, 2.0, 3.0, 0.0])
    m = median(x)
    assert m.item() == 2.0  # the lower of the two middle values 2 and 3
    x2 = t64([1.0, 3.0, 3.0, 2.0, 3.0])
    median(x2).backward()
    np.testing.assert_allclose(x2.grad.numpy(), [0, 1 / 3, 1 / 3, 0, 1 / 3])


def test_unique_forms_and_no_gradient():
    x = mt.tensor([[1, 2], [1, 2], [0, 5]])
    vals, inv, cnt = unique(x, dim=0, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(vals.numpy(), [[0, 5], [1, 2]])
    np.testing.assert_array_equal(inv.numpy(), [1, 1, 0])
    np.testing.assert_array_equal(cnt.numpy(), [1, 2])
    assert unique(mt.tensor([3.0, np.nan, np.nan])).shape == (3,)  # NaNs are distinct, as PyTorch
    _, i = x.unique(return_inverse=True)
    assert i.shape == (3, 2) and i.dtype == np.int64
    assert unique(mt.tensor(3.0)).shape == (1,)
    g = t64([2.0, 1.0, 2.0])
    u = unique(g)
    assert u.requires_grad  # as PyTorch's, whose backward raises too
    with pytest.raises(RuntimeError, match="derivative for 'unique' is not implemented"):
        u.sum().backward()


def test_empty_0d_and_integer_inputs():
    assert np.isnan(median(mt.zeros(0)).item())
    assert median(mt.zeros(2, 0), 0).values.shape == (0,)
    for op in (lambda t: sort(t), lambda t: median(t, 0), lambda t: kthvalue(t, 1), lambda t: mode(t)):
        v, i = op(mt.tensor(3.0))
        assert v.item() == 3.0 and i.item() == 0 and i.dtype == np.int64
    v, i = sort(mt.tensor([3, 1, 2]))
    np.testing.assert_array_equal(v.numpy(), [1, 2, 3])
    assert mode(mt.tensor([[5, 5, 4, 4, 4]])).values.item() == 4
    assert msort(mt.tensor([[3.0, 1.0], [1.0, 2.0]])).numpy().tolist() == [[1.0, 1.0], [3.0, 2.0]]


def test_bad_input_errors_name_what_came():
    x = mt.zeros(2, 3)
    with pytest.raises(IndexError, match=r"dimension 2 is out of range"):
        sort(x, 2)
    with pytest.raises(RuntimeError, match=r"k=4 out of range for dimension 1 of size 3"):
        kthvalue(x, 4)
    with pytest.raises(RuntimeError, match="out of range"):
        kthvalue(x, 0)
    with pytest.raises(IndexError, match=r"median\(\): Expected reduction dim 1 to have non-zero size"):
        median(mt.zeros(2, 0), 1)
    with pytest.raises(IndexError, match="non-zero size"):
        mode(mt.zeros(0))
    with pytest.raises(RuntimeError, match=r"range \[0, 1\], got \[1.5\]"):
        quantile(x, 1.5)
    with pytest.raises(RuntimeError, match=r"scalar or 1D tensor, got shape \(1, 1\)"):
        quantile(x, mt.tensor([[0.5]], dtype=mt.float32))
    with pytest.raises(TypeError, match="same dtype as the input tensor \\(float32\\), got float64"):
        quantile(x, mt.tensor([0.5], dtype=mt.float64))
    with pytest.raises(RuntimeError, match="float or double dtype, got int64"):  # also a TypeError
        quantile(mt.tensor([1, 2]), 0.5)
    with pytest.raises(ValueError, match="one of linear, lower, higher, midpoint, nearest, got 'foo'"):
        quantile(x, 0.5, interpolation="foo")
    with pytest.raises(RuntimeError, match="non-empty"):
        quantile(mt.zeros(0), 0.5)


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("name,ours,theirs,gg", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_sorting_gradcheck_noncontiguous_leaf(name, ours, theirs, gg, rng):
    gradcheck_noncontiguous(ours, [rng.standard_normal((2, 3, 4))], gg)  # distinct values


@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
def test_quantile_gradcheck_noncontiguous_leaf(interpolation, rng):
    gradcheck_noncontiguous(lambda t: quantile(t, _q([0.2, 0.5], t), 0, interpolation=interpolation),
                             [rng.standard_normal((3, 7))])


@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
def test_quantile_q_that_requires_grad_gets_its_gradient_as_torch(interpolation, rng):
    # linear: out = lo + (q·(n - 1) - floor(q·(n - 1)))·(hi - lo), so d out / dq = (hi - lo)·(n - 1).
    # a = [1, 3, 4, 10], n - 1 = 3: q = .3 sits between 1 and 3 (2·3 = 6), q = .8 between 4 and 10
    # (6·3 = 18). The other interpolations are piecewise constant in q: no gradient (None in PyTorch).
    a, q = mt.tensor([1.0, 3.0, 4.0, 10.0], requires_grad=True), mt.tensor([0.3, 0.8], requires_grad=True)
    quantile(a, q, interpolation=interpolation).sum().backward()
    if interpolation == "linear":
        np.testing.assert_allclose(q.grad.numpy(), [6.0, 18.0], rtol=1e-6)
    # a slice with a NaN has q-independent output (NaN): its q gradient is 0, not NaN
    x = rng.standard_normal((3, 6))
    x[1, 2] = np.nan
    for dim, keepdim in [(None, False), (1, True), (0, False)]:
        compare_with_torch(lambda t, p, d=dim, k=keepdim: quantile(t, p, d, k, interpolation=interpolation),
                           lambda t, p, d=dim, k=keepdim: torch.quantile(t, p, d, k, interpolation=interpolation),
                           [x, np.array([0.1, 0.45, 0.9])])
        compare_with_torch(lambda t, p, d=dim, k=keepdim: quantile(t, p, d, k, interpolation=interpolation),
                           lambda t, p, d=dim, k=keepdim: torch.quantile(t, p, d, k, interpolation=interpolation),
                           [x, np.array(0.7)])
    assert gradcheck(lambda t, p: quantile(t, p, 1), (t64(rng.standard_normal((2, 5))), t64(np.array([0.2, 0.65]))))


def test_quantile_of_a_0d_tensor_with_keepdim_is_0d_as_torch():
    # keepdim keeps the reduced dims as size 1; a 0-d tensor has none, so the result stays 0-d ((1,) for a 1-D q)
    for dim in (0, -1, None):
        compare_with_torch(lambda t, d=dim: quantile(t, 0.5, d, True), lambda t, d=dim: torch.quantile(t, 0.5, d, True),
                           [np.array(2.0)])
        compare_with_torch(lambda t, p, d=dim: quantile(t, p, d, True), lambda t, p, d=dim: torch.quantile(t, p, d, True),
                           [np.array(2.0), np.array([0.5, 0.2])])
    assert quantile(mt.tensor(2.0), 0.5, dim=0, keepdim=True).shape == ()


def test_quantile_at_a_whole_rank_reads_the_value_even_when_infinite():
    # regression: lo + 0 * (inf - inf) was NaN (silently wrong); PyTorch gives inf and -inf here
    assert mt.quantile(mt.tensor([float("inf"), 1.0]), 1.0).item() == float("inf")
    assert mt.quantile(mt.tensor([-float("inf"), 1.0, 2.0]), 0.0).item() == -float("inf")
