"""Reductions: sum, mean, var, std, amax/amin, max/min, logsumexp, argmax/argmin, topk, any, all."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck

import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64

# name, ours, theirs (each a function of one tensor), gradgradcheck it
CASES = [
    ("sum_all", lambda x: x.sum(), lambda x: x.sum(), True),
    ("sum_dim", lambda x: x.sum(1), lambda x: x.sum(1), False),
    ("sum_dims_keep", lambda x: x.sum((0, 2), keepdim=True), lambda x: x.sum((0, 2), keepdim=True), False),
    ("mean_all", lambda x: x.mean(), lambda x: x.mean(), False),
    ("mean_dim", lambda x: x.mean(-1), lambda x: x.mean(-1), False),
    ("var_all", lambda x: x.var(), lambda x: x.var(), True),
    ("var_dim_biased", lambda x: x.var(1, unbiased=False), lambda x: x.var(1, unbiased=False), False),
    ("var_correction", lambda x: x.var((0, 2), correction=2, keepdim=True),
     lambda x: x.var((0, 2), correction=2, keepdim=True), True),
    ("std_dim", lambda x: x.std(-1), lambda x: x.std(-1), True),
    ("std_all_biased", lambda x: x.std(unbiased=False), lambda x: x.std(unbiased=False), False),
    ("amax_all", lambda x: x.amax(), lambda x: x.amax(), False),
    ("amax_dim", lambda x: x.amax(1), lambda x: x.amax(1), False),
    ("amin_dims", lambda x: x.amin((0, 2), keepdim=True), lambda x: x.amin((0, 2), keepdim=True), False),
    ("max_all", lambda x: x.max(), lambda x: x.max(), False),
    ("min_all", lambda x: x.min(), lambda x: x.min(), False),
    ("max_dim", lambda x: tuple(x.max(1)), lambda x: tuple(x.max(1)), False),
    ("min_dim_keep", lambda x: tuple(x.min(-1, keepdim=True)), lambda x: tuple(x.min(-1, keepdim=True)), False),
    ("logsumexp", lambda x: x.logsumexp(1), lambda x: x.logsumexp(1), True),
    ("logsumexp_dims_keep", lambda x: x.logsumexp((0, 2), keepdim=True), lambda x: x.logsumexp((0, 2), keepdim=True),
     False),
    ("topk", lambda x: tuple(x.topk(2, dim=1)), lambda x: tuple(x.topk(2, dim=1)), True),
    ("topk_smallest", lambda x: tuple(x.topk(3, largest=False)), lambda x: tuple(x.topk(3, largest=False)), False),
]


@pytest.mark.parametrize("name,ours,theirs,gg", CASES, ids=[c[0] for c in CASES])
def test_reduction_gradcheck(name, ours, theirs, gg, rng):
    x = t64(rng.standard_normal((2, 3, 4)))  # distinct values: no ties
    assert gradcheck(ours, (x,))
    if gg:
        assert gradgradcheck(ours, (t64(rng.standard_normal((2, 3, 2))),))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,gg", CASES, ids=[c[0] for c in CASES])
def test_reduction_matches_torch(name, ours, theirs, gg, dtype, rng, device):
    compare_with_torch(ours, theirs, [rng.standard_normal((3, 4, 5)).astype(dtype)], device=device)


@given(S.array_and_dims())
def test_property_sum_mean_var_match_torch_over_dims(a_dim):
    a, dim = a_dim
    for keepdim in (False, True):
        compare_with_torch(lambda x: x.sum(dim, keepdim), lambda x: x.sum(dim, keepdim), [a])
        compare_with_torch(lambda x: x.mean(dim, keepdim), lambda x: x.mean(dim, keepdim), [a])
    n = a.size if dim is None else int(np.prod([a.shape[d] for d in ((dim,) if isinstance(dim, int) else dim)]))
    if n > 1:
        compare_with_torch(lambda x: x.var(dim), lambda x: x.var(dim), [a], rtol=1e-8, atol=1e-10)


@given(S.array_and_dims())
def test_property_amax_logsumexp_match_torch_including_ties(a_dim):
    a, dim = a_dim
    a = np.round(a)  # many ties: the gradient is shared evenly, in both
    compare_with_torch(lambda x: x.amax(dim), lambda x: x.amax(dim), [a])
    compare_with_torch(lambda x: x.amin(dim, keepdim=True), lambda x: x.amin(dim, keepdim=True), [a])
    all_dims = tuple(range(a.ndim)) if dim is None else dim  # torch.logsumexp needs a dim
    compare_with_torch(lambda x: x.logsumexp(dim), lambda x: x.logsumexp(all_dims), [a])


@given(S.array_and_dim(unique=True), st.booleans())
def test_property_max_min_argmax_topk_match_torch(a_dim, keepdim):
    a, dim = a_dim
    compare_with_torch(lambda x: tuple(x.max(dim, keepdim)), lambda x: tuple(x.max(dim, keepdim)), [a])
    compare_with_torch(lambda x: tuple(x.min(dim, keepdim)), lambda x: tuple(x.min(dim, keepdim)), [a])
    compare_with_torch(lambda x: x.argmax(dim, keepdim), lambda x: x.argmax(dim, keepdim), [a])
    compare_with_torch(lambda x: x.argmin(dim, keepdim), lambda x: x.argmin(dim, keepdim), [a])
    k = a.shape[dim] // 2 + 1
    compare_with_torch(lambda x: tuple(x.topk(k, dim)), lambda x: tuple(x.topk(k, dim)), [a])


def test_max_with_dim_returns_named_values_and_indices():
    x = t64([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    out = x.max(1)
    assert type(out).__name__ == "max"
    values, indices = out
    np.testing.assert_array_equal(out.values.detach().numpy(), [5.0, 7.0])
    np.testing.assert_array_equal(out.indices.numpy(), [1, 0])  # the first of tied maxima
    assert indices.dtype == np.int64 and not indices.requires_grad
    values.backward(t64([2.0, 3.0], False))  # distinct per-row upstream values
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 2, 0], [3, 0, 0]])  # the gradient goes to the index


def test_amax_ties_share_the_gradient_as_torch():
    a = np.array([[3.0, 1.0, 3.0], [2.0, 2.0, 2.0]])
    compare_with_torch(lambda x: x.amax(1), lambda x: x.amax(1), [a])
    compare_with_torch(lambda x: x.max(), lambda x: x.max(), [a])
    x = t64(a)
    x.max().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.5, 0, 0.5], [0, 0, 0]])


def test_logsumexp_is_stable_for_huge_values():
    x = t64([[1000.0, 1000.0], [-1000.0, -1e308]])
    y = x.logsumexp(1)
    np.testing.assert_allclose(y.detach().numpy(), [1000.0 + np.log(2.0), -1000.0])
    y.backward(t64([2.0, 3.0], False))  # distinct per-row upstream values
    np.testing.assert_allclose(x.grad.numpy(), [[1.0, 1.0], [3.0, 0.0]])


def test_std_gradient_is_zero_for_constant_rows_as_torch():
    compare_with_torch(lambda x: x.std(1), lambda x: x.std(1), [np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]])])


def test_var_of_one_element_is_nan_as_torch():
    assert np.isnan(mt.tensor([3.0]).var().item())
    assert mt.tensor([3.0]).var(correction=0).item() == 0.0


def test_argmax_topk_any_all_values():
    x = mt.tensor([[1.0, 9.0, 3.0], [4.0, 2.0, 8.0]])
    assert x.argmax().item() == 1 and x.argmin().item() == 0
    assert x.argmax(keepdim=True).shape == (1, 1)
    np.testing.assert_array_equal(x.argmax(1).numpy(), [1, 2])
    v, i = x.topk(2)
    np.testing.assert_array_equal(v.numpy(), [[9.0, 3.0], [8.0, 4.0]])
    np.testing.assert_array_equal(i.numpy(), [[1, 2], [2, 0]])
    m = x > 3
    assert m.any().item() and not m.all().item()
    np.testing.assert_array_equal(m.all(1).numpy(), [False, False])
    np.testing.assert_array_equal(m.any(0, keepdim=True).numpy(), [[True, True, True]])
    i64 = mt.tensor([[3, 1], [2, 5]])
    np.testing.assert_array_equal(i64.max(1).values.numpy(), [3, 5])
    assert i64.sum().item() == 11 and i64.sum().dtype == np.int64
    np.testing.assert_array_equal(i64.topk(1, dim=0).values.numpy(), [[3, 5]])


def test_topk_gradient_goes_to_selected_elements():
    x = t64([5.0, 1.0, 4.0, 2.0])
    v, _ = x.topk(2)
    (v * t64([10.0, 100.0], False)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [10.0, 0.0, 100.0, 0.0])


def test_reduction_bad_input():
    x = mt.ones(2, 3)
    with pytest.raises(IndexError, match=r"dimension 2 is out of range for a tensor with 2 dimension\(s\)"):
        x.sum(2)
    with pytest.raises(IndexError, match="out of range"):
        x.max(-3)
    with pytest.raises(ValueError, match="names an axis twice"):
        x.sum((0, 0))
    with pytest.raises(TypeError, match="mean: expected a floating point tensor"):
        mt.tensor([1, 2]).mean()
    for fn in (lambda t: t.var(), lambda t: t.std(), lambda t: t.logsumexp(0)):
        with pytest.raises(TypeError, match="expected a floating point tensor"):
            fn(mt.tensor([1, 2]))
    with pytest.raises(ValueError, match="either unbiased or correction"):
        x.var(unbiased=True, correction=1)
    with pytest.raises(ValueError, match="topk: k=4 is out of range for dimension 1 of size 3"):
        x.topk(4)
    with pytest.raises(IndexError, match="empty dimension"):
        mt.ones(0, 3).amax(0)
    with pytest.raises(IndexError, match="empty dimension"):
        mt.ones(0, 3).argmax()


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("name,ours,theirs,gg", CASES, ids=[c[0] for c in CASES])
def test_reduction_gradcheck_noncontiguous_leaf(name, ours, theirs, gg, rng):
    gradcheck_noncontiguous(ours, [rng.standard_normal((2, 3, 4))])  # distinct values: no ties
    if gg:
        gradcheck_noncontiguous(ours, [rng.standard_normal((2, 3, 2))], gg=True)


def test_std_var_positional_bool_is_unbiased_as_torch():
    # PyTorch's (input, unbiased) overload: a bool second argument is `unbiased`, never `dim`
    # (a bool is an int in Python, so dim=False would silently reduce over axis 0).
    # [1, 2, 4, 7, 11]: mean 5, squared deviations 16+9+1+4+36 = 66; biased var 66/5 = 13.2,
    # std sqrt(13.2) = 3.633 (dim=0 with Bessel's would give sqrt(66/4) = 4.062)
    t = np.array([1.0, 2.0, 4.0, 7.0, 11.0])
    assert abs(mt.std(mt.tensor(t), False).item() - 13.2 ** 0.5) < 1e-12
    assert abs(mt.tensor(t).var(False).item() - 13.2) < 1e-12
    torch = pytest.importorskip("torch")
    m = np.arange(9.0).reshape(3, 3)
    for call in (lambda x: x.std(True), lambda x: x.var(False), lambda x: x.std(False)):
        compare_with_torch(call, call, [m])  # scalar results, and their gradients
    compare_with_torch(lambda x: mt.var(x, True), lambda x: torch.var(x, True), [m])
    assert mt.tensor(m).std(True).shape == ()
    for call in (lambda x: x.std(0, False), lambda x: x.var(1, True, True)):  # (dim, unbiased, keepdim) unchanged
        compare_with_torch(call, call, [m])
    with pytest.raises(TypeError):  # as PyTorch: the (input, unbiased) overload takes nothing else
        mt.tensor(m).std(True, keepdim=True)
