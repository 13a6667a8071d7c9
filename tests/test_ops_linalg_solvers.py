"""linalg: solve_triangular, pinv, lstsq, matrix_rank, the *_ex variants (ops/linalg_solvers.py) and norm,
matrix_power, multi_dot, vecdot, tensorinv, tensorsolve, cond, diagonal (ops/linalg_composed.py):
gradcheck (non-contiguous too), PyTorch comparison, properties, bad input and edge inputs."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
from minitorch_ln import linalg
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.errors import DtypeError, ShapeError
from minitorch_ln.ops.linalg_ops import LinAlgError


def tri(rng, shape, upper):
    """A random triangular-dominant ``(*, n, n)`` matrix: far from singular on its triangle."""
    n = shape[-1]
    a = rng.standard_normal(shape) + n * np.eye(n)
    return a  # the other triangle is random on purpose: it must not be read


def _inputs(rng, shapes):
    first = rng.standard_normal(shapes[0])
    if len(shapes[0]) >= 2 and shapes[0][-1] == shapes[0][-2]:
        first = first + shapes[0][-1] * np.eye(shapes[0][-1])
    return [first] + [rng.standard_normal(s) for s in shapes[1:]]


def _lstsq(lib, driver):
    return lambda a, b: tuple(lib.linalg.lstsq(a, b, driver=driver))


OPS = [
    ("solve_triangular_upper", lambda a, b: linalg.solve_triangular(a, b, upper=True),
     lambda a, b: torch.linalg.solve_triangular(a, b, upper=True), [(2, 3, 3), (2, 3, 2)]),
    ("solve_triangular_lower_right", lambda a, b: linalg.solve_triangular(a, b, upper=False, left=False),
     lambda a, b: torch.linalg.solve_triangular(a, b, upper=False, left=False), [(3, 3), (2, 4, 3)]),
    ("solve_triangular_unit", lambda a, b: linalg.solve_triangular(a, b, upper=False, unitriangular=True),
     lambda a, b: torch.linalg.solve_triangular(a, b, upper=False, unitriangular=True), [(2, 1, 3, 3), (3, 3, 2)]),
    ("pinv_tall", linalg.pinv, torch.linalg.pinv, [(2, 4, 3)]),
    ("pinv_wide", linalg.pinv, torch.linalg.pinv, [(3, 5)]),
    ("pinv_hermitian", lambda a: linalg.pinv(a + a.mT, hermitian=True),
     lambda a: torch.linalg.pinv(a + a.mT, hermitian=True), [(2, 3, 3)]),
    ("lstsq_tall_gelsd", _lstsq(mt, "gelsd"), _lstsq(torch, "gelsd"), [(2, 5, 3), (2, 5, 2)]),
    ("lstsq_tall_gelsy", _lstsq(mt, "gelsy"), _lstsq(torch, "gelsy"), [(5, 3), (5, 2)]),
    ("lstsq_wide_gels", _lstsq(mt, "gels"), _lstsq(torch, "gels"), [(3, 5), (3, 2)]),
    ("lstsq_vector", _lstsq(mt, "gelss"), _lstsq(torch, "gelss"), [(2, 4, 3), (2, 4)]),
    ("norm_vector", lambda a: linalg.norm(a), lambda a: torch.linalg.norm(a), [(2, 3, 4)]),
    ("norm_dim_ord", lambda a: linalg.norm(a, 3, dim=1, keepdim=True),
     lambda a: torch.linalg.norm(a, 3, dim=1, keepdim=True), [(2, 3, 4)]),
    ("norm_matrix_nuc", lambda a: linalg.norm(a, "nuc"), lambda a: torch.linalg.norm(a, "nuc"), [(3, 4)]),
    ("norm_matrix_dims", lambda a: linalg.norm(a, 1, dim=(0, 2)), lambda a: torch.linalg.norm(a, 1, dim=(0, 2)),
     [(2, 3, 4)]),
    ("matrix_power_3", lambda a: linalg.matrix_power(a, 3), lambda a: torch.linalg.matrix_power(a, 3), [(2, 3, 3)]),
    ("matrix_power_neg", lambda a: linalg.matrix_power(a, -2), lambda a: torch.linalg.matrix_power(a, -2), [(3, 3)]),
    ("multi_dot", lambda a, b, c: linalg.multi_dot([a, b, c]), lambda a, b, c: torch.linalg.multi_dot([a, b, c]),
     [(3,), (3, 4), (4,)]),
    ("multi_dot_mats", lambda a, b, c: linalg.multi_dot([a, b, c]), lambda a, b, c: torch.linalg.multi_dot([a, b, c]),
     [(2, 3), (3, 4), (4, 5)]),
    ("vecdot", lambda a, b: linalg.vecdot(a, b, dim=1), lambda a, b: torch.linalg.vecdot(a, b, dim=1),
     [(2, 3, 4), (3, 1)]),
    ("tensorinv", lambda a: linalg.tensorinv(a.reshape(2, 3, 6) + mt.tensor(6 * np.eye(6, dtype=str(a.dtype))).reshape(2, 3, 6)),
     lambda a: torch.linalg.tensorinv(a.reshape(2, 3, 6) + 6 * torch.eye(6, dtype=a.dtype).reshape(2, 3, 6)),
     [(6, 6)]),
    ("tensorsolve", lambda a, b: linalg.tensorsolve(a.reshape(2, 3, 6), b),
     lambda a, b: torch.linalg.tensorsolve(a.reshape(2, 3, 6), b), [(6, 6), (2, 3)]),
    ("cond", linalg.cond, torch.linalg.cond, [(2, 3, 3)]),
    ("cond_fro", lambda a: linalg.cond(a, "fro"), lambda a: torch.linalg.cond(a, "fro"), [(3, 3)]),
    ("diagonal", lambda a: linalg.diagonal(a, offset=1), lambda a: torch.linalg.diagonal(a, offset=1), [(2, 3, 4)]),
    ("cholesky_ex", lambda a: tuple(linalg.cholesky_ex(a @ a.mT + mt.tensor(np.eye(3, dtype=str(a.dtype))))),
     lambda a: tuple(torch.linalg.cholesky_ex(a @ a.mT + torch.eye(3, dtype=a.dtype))), [(2, 3, 3)]),
    ("inv_ex", lambda a: tuple(linalg.inv_ex(a)), lambda a: tuple(torch.linalg.inv_ex(a)), [(2, 3, 3)]),
    ("solve_ex", lambda a, b: tuple(linalg.solve_ex(a, b)), lambda a, b: tuple(torch.linalg.solve_ex(a, b)),
     [(2, 3, 3), (3, 2)]),
]
IDS = [o[0] for o in OPS]
_NOT_DIFFERENTIABLE_OUTPUTS = {"lstsq_tall_gelsd", "lstsq_tall_gelsy", "lstsq_wide_gels", "lstsq_vector", "cholesky_ex",
                               "inv_ex", "solve_ex"}


def _first(fn):
    return lambda *a: fn(*a)[0]


@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_gradcheck_and_non_contiguous(name, ours, theirs, shapes, rng):
    fn = _first(ours) if name in _NOT_DIFFERENTIABLE_OUTPUTS else ours
    arrays = _inputs(rng, shapes)
    assert gradcheck(fn, tuple(t64(a) for a in arrays))
    gradcheck_noncontiguous(fn, arrays)


@pytest.mark.parametrize("name", ["solve_triangular_upper", "pinv_tall", "matrix_power_3", "lstsq_tall_gelsd"])
def test_gradgradcheck(name, rng):
    _, ours, _, shapes = OPS[IDS.index(name)]
    fn = _first(ours) if name in _NOT_DIFFERENTIABLE_OUTPUTS else ours
    assert gradgradcheck(fn, tuple(t64(a) for a in _inputs(rng, shapes)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_matches_torch(name, ours, theirs, shapes, dtype, rng):
    arrays = [a.astype(dtype) for a in _inputs(rng, shapes)]
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-9, "atol": 1e-9}
    # torch's own cond(p='fro') backward fails (inv_ex's output changed in place): forward only there
    requires_grad = [False] * len(arrays) if name == "cond_fro" else None
    compare_with_torch(ours, theirs, arrays, requires_grad=requires_grad, **tol)


def test_matrix_rank_matches_torch_and_drops_small_values(rng):
    a = rng.standard_normal((3, 5, 2)) @ rng.standard_normal((3, 2, 4))  # rank 2
    for kw in ({}, {"atol": 1.0}, {"rtol": 0.5}, {"hermitian": False}):
        ours = linalg.matrix_rank(mt.tensor(a), **kw)
        want = torch.linalg.matrix_rank(torch.tensor(a), **kw)
        assert ours.dtype == mt.int64 and np.array_equal(ours.array, want.numpy())
    s = a[0] @ a[0].T
    assert int(linalg.matrix_rank(mt.tensor(s), hermitian=True)) == 2
    assert int(linalg.matrix_rank(mt.zeros(3, 3, dtype=mt.float64))) == 0


def test_matrix_power_zero_is_identity_with_zero_gradient(rng):
    a = t64(rng.standard_normal((2, 3, 3)))
    y = linalg.matrix_power(a, 0)
    assert np.array_equal(y.array, np.broadcast_to(np.eye(3), (2, 3, 3))) and y.requires_grad
    y.sum().backward()
    assert np.all(a.grad.array == 0)
    ints = mt.tensor(np.arange(4).reshape(2, 2))
    assert np.array_equal(linalg.matrix_power(ints, 3).array, np.linalg.matrix_power(np.arange(4).reshape(2, 2), 3))


def test_singular_inputs_info_and_check_errors():
    # cholesky_ex gives LAPACK's partial factor and the failing minor, as PyTorch
    a = np.array([[4.0, 2, 1], [2, 1, 0], [1, 0, 3]])
    L, info = linalg.cholesky_ex(mt.tensor(a))
    Lt, it = torch.linalg.cholesky_ex(torch.tensor(a))
    assert int(info) == int(it) == 2 and str(info.dtype) == "int32"
    np.testing.assert_allclose(L.array, Lt.numpy())
    with pytest.raises(LinAlgError, match="not positive-definite"):
        linalg.cholesky_ex(mt.tensor(a), check_errors=True)
    z = mt.tensor(np.stack([np.eye(2), np.zeros((2, 2))]))
    Y, info = linalg.inv_ex(z)
    assert info.array.tolist() == [0, 1] and np.array_equal(Y.array[0], np.eye(2)) and np.isnan(Y.array[1]).all()
    with pytest.raises(LinAlgError, match="singular"):
        linalg.inv_ex(z, check_errors=True)
    X, info = linalg.solve_ex(z, mt.ones(2, 1, dtype=mt.float64))
    assert info.array.tolist() == [0, 1] and np.isnan(X.array[1]).all() and np.array_equal(X.array[0], np.ones((2, 1)))
    with pytest.raises(LinAlgError):
        linalg.solve_ex(z, mt.ones(2, dtype=mt.float64), check_errors=True)


def test_solve_triangular_zero_diagonal_gives_inf_not_error():
    a = mt.tensor(np.array([[0.0, 1.0], [0.0, 1.0]]))
    x = linalg.solve_triangular(a, mt.ones(2, 1, dtype=mt.float64), upper=True)
    xt = torch.linalg.solve_triangular(torch.tensor(a.array), torch.ones(2, 1, dtype=torch.float64), upper=True)
    assert not np.isfinite(x.array).all()
    np.testing.assert_array_equal(np.isfinite(x.array), np.isfinite(xt.numpy()))


def test_pinv_of_rank_deficient_and_zero_matrices(rng):
    a = rng.standard_normal((4, 2)) @ rng.standard_normal((2, 3))
    p = linalg.pinv(mt.tensor(a)).array
    np.testing.assert_allclose(a @ p @ a, a, atol=1e-12)  # the Penrose identities
    np.testing.assert_allclose(p @ a @ p, p, atol=1e-12)
    np.testing.assert_allclose(p, np.linalg.pinv(a), atol=1e-12)
    assert np.array_equal(linalg.pinv(mt.zeros(2, 3, dtype=mt.float64)).array, np.zeros((3, 2)))
    np.testing.assert_allclose(linalg.pinv(mt.tensor(a), atol=1e3).array, 0.0)  # every value dropped


def test_bad_inputs():
    a = mt.ones(3, 3, dtype=mt.float64)
    with pytest.raises(ShapeError, match="square"):
        linalg.solve_triangular(mt.ones(2, 3, dtype=mt.float64), a, upper=True)
    with pytest.raises(ShapeError, match="Incompatible shapes"):
        linalg.solve_triangular(a, mt.ones(2, 2, dtype=mt.float64), upper=True)
    with pytest.raises(DtypeError, match="same dtype"):
        linalg.solve_triangular(a, mt.ones(3, 1), upper=True)
    with pytest.raises(RuntimeError, match="driver"):
        linalg.lstsq(a, a, driver="gelsx")
    with pytest.raises(ShapeError, match="size\\(-2\\)"):
        linalg.lstsq(a, mt.ones(2, 1, dtype=mt.float64))
    with pytest.raises(DtypeError):
        linalg.pinv(mt.ones(2, 2, dtype=mt.int64))
    with pytest.raises(ShapeError, match="1D or 2D"):
        linalg.norm(mt.ones(2, 2, 2), 2)
    with pytest.raises(ShapeError, match="at least 2 tensors"):
        linalg.multi_dot([a])
    with pytest.raises(ShapeError, match="must be 2D"):
        linalg.multi_dot([a, mt.ones(3, 3, 3, dtype=mt.float64), a])
    with pytest.raises(ShapeError, match="square"):
        linalg.matrix_power(mt.ones(2, 3), 2)
    with pytest.raises(TypeError, match="'n' must be int"):
        linalg.matrix_power(a, 1.5)
    with pytest.raises(ShapeError, match="broadcast"):
        linalg.vecdot(mt.ones(3), mt.ones(4))
    with pytest.raises(ShapeError, match="prod"):
        linalg.tensorinv(mt.ones(2, 3, dtype=mt.float64), ind=1)
    with pytest.raises(ShapeError, match="prod"):
        linalg.tensorsolve(mt.ones(2, 3, 4, dtype=mt.float64), mt.ones(2, 3, dtype=mt.float64))


def test_empty_matrices_match_torch():
    for fn in ("inv_ex", "cholesky_ex"):
        ours = getattr(linalg, fn)(mt.zeros(2, 0, 0, dtype=mt.float64))
        want = getattr(torch.linalg, fn)(torch.zeros(2, 0, 0, dtype=torch.float64))
        assert [tuple(o.shape) for o in ours] == [tuple(w.shape) for w in want]


@settings(deadline=None, max_examples=25)
@given(batch=hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3), n=st.integers(1, 4),
       k=st.integers(1, 3), upper=st.booleans(), seed=st.integers(0, 2**16))
def test_solve_triangular_property_residual(batch, n, k, upper, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, n)) + 2 * n * np.eye(n)
    b = rng.standard_normal((*batch, n, k))
    x = linalg.solve_triangular(mt.tensor(a), mt.tensor(b), upper=upper).array
    t = np.triu(a) if upper else np.tril(a)
    np.testing.assert_allclose(t @ x, b, atol=1e-10)


@settings(deadline=None, max_examples=25)
@given(m=st.integers(1, 5), n=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_lstsq_and_pinv_property_normal_equations(m, n, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((m, n)), rng.standard_normal((m, 2))
    x = linalg.lstsq(mt.tensor(a), mt.tensor(b)).solution.array
    np.testing.assert_allclose(a.T @ (a @ x - b), 0, atol=1e-9)  # the residual is orthogonal to A's range
    np.testing.assert_allclose(x, np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-9)  # the minimum-norm solution


@pytest.mark.parametrize("a_shape, b_shape", [((3, 3), (3, 0)), ((0, 0), (0, 2)), ((0, 3, 3), (0, 3, 2)),
                                              ((2, 3, 3), (2, 3, 0))])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_with_nothing_to_solve(a_shape, b_shape, left):
    # empty B, batch or matrix: NumPy's reshape(-1, ...) raised "cannot reshape array of size 0" (found by the
    # op database walked in full: 384 of its samples)
    import torch  # noqa: PLC0415

    b_shape = b_shape if left else b_shape[:-2] + (b_shape[-1], b_shape[-2])
    A, B = mt.zeros(*a_shape, requires_grad=True), mt.zeros(*b_shape, requires_grad=True)
    X = mt.linalg.solve_triangular(A, B, upper=True, left=left)
    Xt = torch.linalg.solve_triangular(torch.zeros(*a_shape), torch.zeros(*b_shape), upper=True, left=left)
    assert tuple(X.shape) == tuple(Xt.shape)
    X.sum().backward()
    assert A.grad.shape == A.shape and B.grad.shape == B.shape
