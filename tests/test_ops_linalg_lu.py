"""LU (ops/linalg_lu.py): linalg.lu / lu_factor(_ex) / lu_solve and torch.lu / lu_unpack / lu_solve. float64
gradcheck and gradgradcheck of the derived backward for square, wide and tall inputs (non-contiguous too),
PyTorch in float64/float32 with random upstream gradients, a Hypothesis property, bad input, edge values."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt


def _LU(t):
    _, L, U = mt.linalg.lu(t)
    return L, U


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (2, 3, 3)])
def test_gradcheck_of_the_lu_backward(shape, rng):
    gradcheck_noncontiguous(_LU, [rng.standard_normal(shape)], gg=shape == (3, 3))
    gradcheck_noncontiguous(lambda t: mt.linalg.lu_factor(t).LU, [rng.standard_normal(shape)])


def test_gradcheck_lu_solve_in_both_inputs(rng):
    a, b = rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 2))
    for left, adjoint in ((True, False), (True, True), (False, False), (False, True)):
        LU, piv = mt.linalg.lu_factor(mt.tensor(a))
        bb = b if left else b.T
        gradcheck_noncontiguous(lambda lu, x: mt.linalg.lu_solve(lu, piv, x, left=left, adjoint=adjoint),
                                [LU.numpy(), bb])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 3)])
def test_matches_torch(shape, dtype, rng):
    a = rng.standard_normal(shape).astype(dtype)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {}
    compare_with_torch(lambda t: mt.linalg.lu(t), lambda t: torch.linalg.lu(t), [a], **tol)
    compare_with_torch(lambda t: mt.linalg.lu_factor_ex(t), lambda t: torch.linalg.lu_factor_ex(t), [a], **tol)
    compare_with_torch(lambda t: mt.lu(t, get_infos=True), lambda t: torch.lu(t, get_infos=True), [a], **tol)
    LU, piv = torch.linalg.lu_factor(torch.tensor(a))
    compare_with_torch(lambda lu, p: mt.lu_unpack(lu, p), lambda lu, p: torch.lu_unpack(lu, p),
                       [LU.numpy(), piv.numpy()], requires_grad=[True, False], **tol)
    if shape[-1] == shape[-2]:
        b = rng.standard_normal(shape[:-1] + (2,)).astype(dtype)
        compare_with_torch(lambda x, lu, p: mt.lu_solve(x, lu, p), lambda x, lu, p: torch.lu_solve(x, lu, p),
                           [b, LU.numpy(), piv.numpy()], requires_grad=[True, True, False], **tol)


def test_edge_values():
    LU, piv, info = mt.linalg.lu_factor_ex(mt.tensor([[1.0, 2.0], [2.0, 4.0]]))  # singular: U[2, 2] = 0
    assert info.item() == 2 and info.dtype == np.int32 and piv.tolist() == [2, 2]
    with pytest.raises(RuntimeError, match="singular U"):
        mt.linalg.lu_factor_ex(mt.tensor([[0.0, 0.0], [0.0, 0.0]]), check_errors=True)
    P, L, U = mt.linalg.lu(mt.zeros(0, 3, 3))
    assert P.shape == (0, 3, 3) and L.shape == (0, 3, 3)
    P, L, U = mt.linalg.lu(mt.tensor([[np.inf, 1.0], [1.0, 1.0]], dtype="float64"))
    assert np.isnan(U.numpy()).any() or np.isinf(U.numpy()).any()  # inf propagates as LAPACK's
    p, lu_empty, u_empty = mt.lu_unpack(*mt.linalg.lu_factor(mt.eye(2)), unpack_data=False)
    assert lu_empty.shape == (0,) and p.tolist() == [[1.0, 0.0], [0.0, 1.0]]


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 5), n=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_property_P_L_U_rebuild_A(m, n, seed):
    a = np.random.default_rng(seed).standard_normal((m, n))
    P, L, U = mt.linalg.lu(mt.tensor(a))
    np.testing.assert_allclose(P.numpy() @ L.numpy() @ U.numpy(), a, atol=1e-12)
    assert np.allclose(np.diag(L.numpy()), 1) and np.allclose(np.triu(L.numpy(), 1), 0)
    assert np.allclose(np.tril(U.numpy(), -1), 0)


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        mt.linalg.lu(mt.eye(2), pivot=False)
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        mt.linalg.lu_factor(mt.ones(3))
    with pytest.raises(RuntimeError, match=r"incompatible shapes of LU \(2, 2\) and B \(3, 1\)"):
        mt.linalg.lu_solve(mt.eye(2), mt.tensor([1, 2], dtype="int32"), mt.ones(3, 1))
    with pytest.raises(RuntimeError, match=r"expected LU_pivots of shape \(\*, 2\) with values in \[1, 2\]"):
        mt.lu_unpack(mt.eye(2), mt.tensor([0, 5], dtype="int32"))
