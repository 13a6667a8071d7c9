"""Other reductions and norms: prod (gradient exact with zeros), count_nonzero, var_mean, std_mean, aminmax,
linalg_vector_norm, linalg_matrix_norm, norm."""

import math

import numpy as np
import pytest
import strategies as S
from helpers import compare_with_torch, gradcheck_contiguous_and_transposed, gradcheck_noncontiguous, t64, torch
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.ops.linalg_norms import linalg_matrix_norm, linalg_vector_norm, norm
from minitorch_ln.ops.statistics import aminmax, count_nonzero, prod, std_mean, var_mean

INF = math.inf
VN, MN = torch.linalg.vector_norm, torch.linalg.matrix_norm

# name, ours, theirs, gradgradcheck it
CASES = [
    ("prod_all", lambda x: prod(x), lambda x: torch.prod(x), True),
    ("prod_dim", lambda x: x.prod(1), lambda x: x.prod(1), True),
    ("prod_keepdim", lambda x: prod(x, -1, keepdim=True), lambda x: torch.prod(x, -1, keepdim=True), False),
    ("var_mean", lambda x: var_mean(x, 1), lambda x: torch.var_mean(x, 1), True),
    ("std_mean_correction", lambda x: std_mean(x, (0, 2), correction=0, keepdim=True),
     lambda x: torch.std_mean(x, (0, 2), correction=0, keepdim=True), True),
    ("aminmax_all", lambda x: tuple(aminmax(x)), lambda x: tuple(torch.aminmax(x)), False),
    ("aminmax_dim", lambda x: tuple(x.aminmax(dim=1, keepdim=True)), lambda x: tuple(x.aminmax(dim=1, keepdim=True)),
     False),
    ("vector_norm_2", lambda x: linalg_vector_norm(x), lambda x: VN(x), True),
    ("vector_norm_dim", lambda x: linalg_vector_norm(x, 2, (0, 2), True), lambda x: VN(x, 2, (0, 2), True), True),
    ("vector_norm_1", lambda x: linalg_vector_norm(x, 1, -1), lambda x: VN(x, 1, -1), False),
    ("vector_norm_3", lambda x: linalg_vector_norm(x, 3, 1), lambda x: VN(x, 3, 1), True),
    ("vector_norm_0.5", lambda x: linalg_vector_norm(x, 0.5, 1), lambda x: VN(x, 0.5, 1), True),
    ("vector_norm_-1.5", lambda x: linalg_vector_norm(x, -1.5, 0), lambda x: VN(x, -1.5, 0), True),
    ("vector_norm_inf", lambda x: linalg_vector_norm(x, INF, 1), lambda x: VN(x, INF, 1), False),
    ("vector_norm_-inf", lambda x: linalg_vector_norm(x, -INF), lambda x: VN(x, -INF), False),
    ("matrix_norm_fro", lambda x: linalg_matrix_norm(x), lambda x: MN(x), True),
    ("matrix_norm_nuc", lambda x: linalg_matrix_norm(x, "nuc"), lambda x: MN(x, "nuc"), False),
    ("matrix_norm_2", lambda x: linalg_matrix_norm(x, 2, (0, 2)), lambda x: MN(x, 2, (0, 2)), False),
    ("matrix_norm_-2_keepdim", lambda x: linalg_matrix_norm(x, -2, keepdim=True), lambda x: MN(x, -2, keepdim=True),
     False),
    ("matrix_norm_1", lambda x: linalg_matrix_norm(x, 1), lambda x: MN(x, 1), False),
    ("matrix_norm_-1_dims", lambda x: linalg_matrix_norm(x, -1, (2, 0)), lambda x: MN(x, -1, (2, 0)), False),
    ("matrix_norm_inf_keepdim", lambda x: linalg_matrix_norm(x, INF, keepdim=True), lambda x: MN(x, INF, keepdim=True),
     False),
    ("matrix_norm_-inf", lambda x: linalg_matrix_norm(x, -INF, (0, 1)), lambda x: MN(x, -INF, (0, 1)), False),
    ("norm_fro", lambda x: norm(x), lambda x: torch.norm(x), False),
    ("norm_p3_dims", lambda x: x.norm(3, (0, 1)), lambda x: x.norm(3, (0, 1)), False),
    ("norm_fro_dim", lambda x: x.norm("fro", 1, True), lambda x: x.norm("fro", 1, True), False),
    ("norm_nuc", lambda x: norm(x, "nuc", (1, 2)), lambda x: torch.norm(x, "nuc", (1, 2)), False),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name,ours,theirs,gg", CASES, ids=IDS)
def test_statistics_gradcheck_contiguous_and_not(name, ours, theirs, gg, rng):
    gradcheck_contiguous_and_transposed(ours, rng, (3, 4, 5), gg)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,gg", CASES, ids=IDS)
def test_statistics_match_torch(name, ours, theirs, gg, dtype, rng, device):
    compare_with_torch(ours, theirs, [rng.standard_normal((3, 4, 5)).astype(dtype)], device=device)


@given(S.array_and_dim(), st.booleans(), st.sampled_from([2, 1, 3, 0.5, -1.0, INF, -INF, 0]))
def test_property_prod_and_vector_norm_match_torch(a_dim, keepdim, ord):
    a, dim = a_dim
    a = np.round(a * 2) / 2  # zeros (prod's gradient) and ties (inf norms share the gradient)
    compare_with_torch(lambda x: prod(x, dim, keepdim), lambda x: torch.prod(x, dim, keepdim), [a])
    if ord not in (2, 1, INF) and (a == 0).any():
        a = np.where(a == 0, 0.25, a)  # PyTorch's 0^(p-1) terms differ from the limits at exact zeros
    compare_with_torch(lambda x: linalg_vector_norm(x, ord, dim, keepdim), lambda x: VN(x, ord, dim, keepdim), [a])


@given(S.array_and_dims())
def test_property_moments_count_nonzero_aminmax_match_torch(a_dims):
    a, dims = a_dims
    n = a.size if dims is None else int(np.prod([a.shape[d] for d in ((dims,) if isinstance(dims, int) else dims)]))
    if n > 1:
        compare_with_torch(lambda x: var_mean(x, dims), lambda x: torch.var_mean(x, dims), [a], rtol=1e-8, atol=1e-10)
        compare_with_torch(lambda x: std_mean(x, dims, keepdim=True), lambda x: torch.std_mean(x, dims, keepdim=True),
                           [a], rtol=1e-8, atol=1e-10)
    z = np.round(a)
    np.testing.assert_array_equal(count_nonzero(mt.tensor(z), dims).numpy(),
                                  torch.count_nonzero(torch.tensor(z), dims).numpy())
    compare_with_torch(lambda x: tuple(aminmax(x)), lambda x: tuple(torch.aminmax(x)), [z])


@pytest.mark.parametrize("values", [[2.0, 0.0, 3.0, -1.5], [0.0, 2.0, 0.0, 3.0], [0.0, 0.0, 0.0, 0.0]])
def test_prod_gradient_is_exact_with_one_and_several_zeros(values):
    a = np.array([values, [1.0, 2.0, 3.0, 4.0]])
    x = t64(a[0])
    prod(x).backward()
    want = [np.prod([v for j, v in enumerate(values) if j != i]) for i in range(4)]  # Π_{j≠i} x_j
    np.testing.assert_array_equal(x.grad.numpy(), want)
    compare_with_torch(lambda t: prod(t, 1), lambda t: torch.prod(t, 1), [a])
    assert gradcheck(lambda t: prod(t, 1), (t64(a),))
    assert gradgradcheck(lambda t: prod(t), (t64(a),))  # second order exact at zeros too


def test_vector_norm_edge_values():
    x = t64([0.0, 0.0, 0.0])
    linalg_vector_norm(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])  # 0 at the zero vector, as PyTorch
    for ord in (2, 1, 3, 0.5, INF):
        compare_with_torch(lambda t, o=ord: linalg_vector_norm(t, o), lambda t, o=ord: VN(t, o), [np.zeros(3)])
    # huge and tiny magnitudes: scaled by the largest, so neither overflows nor underflows (PyTorch
    # overflows to inf for 1e200 in float64: the math decides)
    for scale in (1e200, 1e-200):
        got = linalg_vector_norm(t64([3 * scale, 4 * scale], False)).item()
        assert got == pytest.approx(5 * scale, rel=1e-15)
    assert linalg_vector_norm(t64([3e-200, 4e-200], False), -2).item() == pytest.approx(2.4e-200, rel=1e-14)
    h = mt.tensor(np.array([30000.0, 40000.0], np.float16))  # squares overflow float16: summed in float32
    y = linalg_vector_norm(h)
    assert y.dtype == np.float16 and y.item() == float(np.float16(50000.0))  # 49984, the nearest float16
    compare_with_torch(lambda t: linalg_vector_norm(t), lambda t: VN(t), [np.array([3.0, -4.0, 0.5], np.float16)])
    assert linalg_vector_norm(mt.tensor(np.array([1.0, 2.0], np.float16)), dtype=mt.float32).dtype == np.float32
    assert linalg_vector_norm(mt.tensor([np.inf, 1.0])).item() == np.inf
    assert np.isnan(linalg_vector_norm(mt.tensor([np.nan, 1.0])).item())
    assert linalg_vector_norm(mt.zeros(0)).item() == 0.0 and linalg_vector_norm(mt.zeros(0), 0).item() == 0.0
    nz = mt.tensor([1.0, 0.0, 2.0], requires_grad=True)
    assert linalg_vector_norm(nz, 0).item() == 2.0 and linalg_vector_norm(nz, 0).requires_grad


def test_prod_count_nonzero_aminmax_dtypes_and_empty():
    assert prod(mt.tensor([True, True])).dtype == np.int64
    assert prod(mt.tensor(np.array([2, 3], np.int32))).item() == 6
    assert prod(mt.tensor([1.0, 2.0]), 0, dtype=mt.float64).dtype == np.float64
    assert prod(mt.zeros(0)).item() == 1.0 and prod(mt.zeros(2, 0), 1, keepdim=True).shape == (2, 1)
    compare_with_torch(lambda t: prod(t, 1), lambda t: torch.prod(t, 1), [np.zeros((2, 0))])
    assert prod(mt.ones(2, 3), keepdim=True).shape == (1, 1)
    h = prod(mt.tensor(np.array([300.0, 300.0, 1e-3], np.float16)))  # 9e4 overflows float16 midway: float32 inside
    assert h.dtype == np.float16 and h.item() == pytest.approx(90.0, rel=1e-3)
    assert count_nonzero(mt.tensor([[1, 0], [2, 3]]), (0, 1)).item() == 3
    assert count_nonzero(mt.tensor(True)).dtype == np.int64
    lo, hi = aminmax(mt.tensor([[1, 5], [3, 2]]), dim=1)
    assert lo.numpy().tolist() == [1, 2] and hi.numpy().tolist() == [5, 3]
    assert aminmax(mt.zeros(2, 0), dim=0).min.shape == (0,)
    v, m = var_mean(mt.tensor([1.0, 2.0, 4.0]), True)  # the (input, unbiased) overload
    assert v.item() == pytest.approx(7 / 3) and m.item() == pytest.approx(7 / 3)


def test_matrix_norm_values_against_the_definitions(rng):
    a = rng.standard_normal((4, 3))
    A = t64(a, False)
    s = np.linalg.svd(a, compute_uv=False)
    assert linalg_matrix_norm(A, "nuc").item() == pytest.approx(s.sum())
    assert linalg_matrix_norm(A, 2).item() == pytest.approx(s.max())
    assert linalg_matrix_norm(A, 1).item() == pytest.approx(np.abs(a).sum(0).max())
    assert linalg_matrix_norm(A, -INF).item() == pytest.approx(np.abs(a).sum(1).min())
    assert norm(A, "fro").item() == pytest.approx(np.sqrt((a * a).sum()))
    assert linalg_matrix_norm(mt.zeros(2, 3, 4), keepdim=True).shape == (2, 1, 1)


def test_bad_input_errors_name_what_came():
    x = mt.zeros(2, 3)
    with pytest.raises(TypeError, match="prod: dim must be an int .*got \\(0, 1\\)"):
        prod(x, (0, 1))
    with pytest.raises(IndexError, match="dimension 2 is out of range"):
        prod(x, 2)
    with pytest.raises(RuntimeError, match="only floating point dtypes are supported, got int64"):  # also TypeError
        var_mean(mt.tensor([1, 2]))
    with pytest.raises(RuntimeError, match=r"cannot compute aminmax over an empty dimension.*shape \(0,\)"):
        aminmax(mt.zeros(0))
    with pytest.raises(IndexError, match="reduction dim 1 to have non-zero size"):
        aminmax(mt.zeros(2, 0), dim=1)
    with pytest.raises(ValueError, match="names an axis twice"):
        count_nonzero(x, (0, 0))
    with pytest.raises(TypeError, match="Expected a floating point tensor as input, got int64"):
        linalg_vector_norm(mt.tensor([1, 2]))
    with pytest.raises(TypeError, match="ord must be a number .*got 'fro'"):
        linalg_vector_norm(x, "fro")
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        linalg_vector_norm(mt.zeros(0), INF)
    with pytest.raises(RuntimeError, match=r"at least 2 dimensions, got shape \(3,\)"):
        linalg_matrix_norm(mt.zeros(3))
    with pytest.raises(ValueError, match="Order 3 not supported"):  # also a RuntimeError, as PyTorch
        linalg_matrix_norm(x, 3)
    with pytest.raises(RuntimeError, match="Order 'foo' not supported"):
        linalg_matrix_norm(x, "foo")
    with pytest.raises(RuntimeError, match=r"dim must be a 2-tuple of ints, got \(0, 1, 2\)"):
        norm(mt.zeros(2, 2, 2), "nuc")


def test_axis_is_an_alias_of_dim_as_in_pytorch(rng):
    from minitorch_ln.ops import scan, sorting

    a = rng.standard_normal((3, 4))
    x, tx = mt.tensor(a), torch.tensor(a)
    pairs = [
        (scan.cumsum(x, axis=0), torch.cumsum(tx, axis=0)), (x.cumprod(axis=1), tx.cumprod(axis=1)),
        (scan.cummax(x, axis=0).indices, torch.cummax(tx, axis=0).indices),
        (sorting.sort(x, axis=0).values, torch.sort(tx, axis=0).values), (x.argsort(axis=0), tx.argsort(axis=0)),
        (x.median(axis=1).values, tx.median(axis=1).values), (x.kthvalue(2, axis=0).values, tx.kthvalue(2, axis=0).values),
        (sorting.quantile(x, 0.5, axis=1), torch.quantile(tx, 0.5, axis=1)), (x.prod(axis=0), tx.prod(axis=0)),
        (count_nonzero(x, axis=1), torch.count_nonzero(tx, axis=1)), (var_mean(x, axis=0)[0], torch.var_mean(tx, axis=0)[0]),
        (x.aminmax(axis=1).max, tx.aminmax(axis=1).max), (linalg_vector_norm(x, axis=0), VN(tx, axis=0)),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.raises(TypeError, match="got both dim= and its alias axis="):
        scan.cumsum(x, dim=0, axis=0)


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("name,ours,theirs,gg", CASES, ids=IDS)
def test_statistics_gradcheck_noncontiguous_leaf(name, ours, theirs, gg, rng):
    # matrix norms (SVD) and the rest on a strided, axis-reversed leaf
    gradcheck_noncontiguous(ours, [rng.standard_normal((2, 3, 4))], gg)


def test_prod_with_zeros_gradcheck_noncontiguous_leaf():
    gradcheck_noncontiguous(lambda t: prod(t, 1), [np.array([[2.0, 0.0, 3.0, -1.5], [0.0, 2.0, 0.0, 3.0]])], gg=True)
