"""mm, bmm, mv, dot, vdot, outer, addmm, baddbmm, tensordot, kron, cross (ops/products.py):
gradcheck, PyTorch comparison, properties, bad input, edges."""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, t64, torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.errors import DtypeError, ShapeError
from minitorch_ln.ops.products import (
    addmm,
    baddbmm,
    bmm,
    cross,
    dot,
    kron,
    linalg_cross,
    mm,
    mv,
    outer,
    tensordot,
    vdot,
)

# ---------------------------------------------------------------------------------------------------
# One table: (name, ours, torch's, input shapes). Every row gets gradcheck, gradgradcheck, a
# non-contiguous gradcheck and the PyTorch comparison in float64 and float32.
# ---------------------------------------------------------------------------------------------------

OPS = [
    ("mm", mm, torch.mm, [(2, 3), (3, 4)]),
    ("mm_empty", mm, torch.mm, [(2, 0), (0, 3)]),
    ("bmm", bmm, torch.bmm, [(2, 2, 3), (2, 3, 2)]),
    ("mv", mv, torch.mv, [(2, 3), (3,)]),
    ("dot", dot, torch.dot, [(4,), (4,)]),
    ("vdot", vdot, torch.vdot, [(4,), (4,)]),
    ("outer", outer, torch.outer, [(3,), (2,)]),
    ("addmm", addmm, torch.addmm, [(2, 4), (2, 3), (3, 4)]),
    ("addmm_bcast", addmm, torch.addmm, [(4,), (2, 3), (3, 4)]),
    ("addmm_scaled", lambda i, a, b: addmm(i, a, b, beta=0.5, alpha=-2.0),
     lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=-2.0), [(2, 1), (2, 3), (3, 4)]),
    ("addmm_beta0", lambda i, a, b: addmm(i, a, b, beta=0), lambda i, a, b: torch.addmm(i, a, b, beta=0),
     [(2, 4), (2, 3), (3, 4)]),
    ("baddbmm", lambda i, a, b: baddbmm(i, a, b, alpha=0.5), lambda i, a, b: torch.baddbmm(i, a, b, alpha=0.5),
     [(2, 2, 2), (2, 2, 3), (2, 3, 2)]),
    ("baddbmm_bcast", baddbmm, torch.baddbmm, [(2,), (2, 2, 3), (2, 3, 2)]),
    ("tensordot2", tensordot, torch.tensordot, [(2, 3, 2), (3, 2, 2)]),
    ("tensordot1", lambda a, b: tensordot(a, b, dims=1), lambda a, b: torch.tensordot(a, b, dims=1), [(2, 3), (3, 2)]),
    ("tensordot0", lambda a, b: tensordot(a, b, dims=0), lambda a, b: torch.tensordot(a, b, dims=0), [(2,), (3,)]),
    ("tensordot_lists", lambda a, b: tensordot(a, b, dims=([0, 2], [1, 0])),
     lambda a, b: torch.tensordot(a, b, dims=([0, 2], [1, 0])), [(2, 3, 2), (2, 2, 3)]),
    ("kron", kron, torch.kron, [(2, 3), (2, 2)]),
    ("kron_ranks", kron, torch.kron, [(2,), (2, 3)]),
    ("cross", lambda a, b: cross(a, b, dim=1), lambda a, b: torch.cross(a, b, dim=1), [(2, 3), (2, 3)]),
    ("linalg_cross", linalg_cross, torch.linalg.cross, [(2, 1, 3), (1, 2, 3)]),
    ("linalg_cross_dim0", lambda a, b: linalg_cross(a, b, dim=0), lambda a, b: torch.linalg.cross(a, b, dim=0),
     [(3, 2), (3, 2)]),
]
IDS = [o[0] for o in OPS]


@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_products_gradcheck_and_gradgradcheck(name, ours, theirs, shapes, rng):
    args = tuple(t64(rng.standard_normal(s)) for s in shapes)
    assert gradcheck(ours, args)
    assert gradgradcheck(ours, args)


@pytest.mark.parametrize("name,ours,theirs,shapes", [o for o in OPS if len(o[3][0]) == 2 and 0 not in o[3][0]],
                         ids=[o[0] for o in OPS if len(o[3][0]) == 2 and 0 not in o[3][0]])
def test_products_gradcheck_non_contiguous(name, ours, theirs, shapes, rng):
    # the first operand is built transposed from a contiguous leaf (gradcheck's non-contiguous leaves are buggy)
    first = t64(rng.standard_normal(shapes[0][::-1]))
    rest = tuple(t64(rng.standard_normal(s)) for s in shapes[1:])
    assert gradcheck(lambda a, *r: ours(a.transpose(0, 1), *r), (first, *rest))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_products_match_torch(name, ours, theirs, shapes, dtype, rng, device):
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    compare_with_torch(ours, theirs, arrays, device=device)


def test_integer_products_match_torch_in_dtype_and_value(rng):
    a, b = rng.integers(-5, 5, (2, 3)), rng.integers(-5, 5, (3, 2))
    compare_with_torch(mm, torch.mm, [a, b])
    compare_with_torch(dot, torch.dot, [a[0], b[:, 0]])
    compare_with_torch(kron, torch.kron, [a, b])
    compare_with_torch(lambda x, y: cross(x, y, dim=1), lambda x, y: torch.cross(x, y, dim=1), [a, b.T])


def test_promotion_where_torch_promotes():
    assert outer(mt.ones(2, dtype="float32"), mt.ones(3, dtype="float64")).dtype == np.float64
    assert kron(mt.ones(2, dtype="float32"), mt.ones(3, dtype="float64")).dtype == np.float64


def test_cross_default_dim_is_first_of_size_3_with_warning(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        out = cross(mt.tensor(a), mt.tensor(b))
    np.testing.assert_allclose(out.numpy(), np.cross(a, b, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(out.numpy(), torch.cross(torch.tensor(a), torch.tensor(b)).numpy())


def test_edge_values():
    # dot of empty vectors is 0; inf and nan propagate; addmm with beta=0 ignores nan in input
    assert float(dot(mt.ones(0), mt.ones(0))) == 0.0
    assert float(dot(mt.tensor([np.inf, 1.0]), mt.tensor([1.0, 1.0]))) == np.inf
    with np.errstate(invalid="ignore"):
        assert np.isnan(float(dot(mt.tensor([np.inf, 1.0]), mt.tensor([0.0, 1.0]))))
    nan_in = mt.tensor(np.full((2, 2), np.nan), requires_grad=True)
    out = addmm(nan_in, mt.eye(2, dtype="float64"), mt.eye(2, dtype="float64"), beta=0)
    np.testing.assert_array_equal(out.detach().numpy(), np.eye(2))
    out.sum().backward()
    np.testing.assert_array_equal(nan_in.grad.numpy(), np.zeros((2, 2)))
    big = mt.tensor(np.array([1e200, 1e200]))
    with np.errstate(over="ignore"):
        assert float(dot(big, big)) == np.inf  # overflows float64, as the math says
    h = mm(mt.ones(2, 2, dtype="float16"), mt.ones(2, 2, dtype="float16"))
    assert h.dtype == np.float16 and h.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    np.testing.assert_array_equal(cross(mt.tensor([1.0, 0, 0]), mt.tensor([0.0, 1, 0]), dim=0).numpy(), [0, 0, 1])


@st.composite
def tensordot_case(draw):
    """Two shapes sharing ``k`` contracted dims (a's last k = b's first k) and that ``k``."""
    k = draw(st.integers(0, 2))
    shared = draw(hnp.array_shapes(min_dims=k, max_dims=k, min_side=1, max_side=3)) if k else ()
    a = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)) + shared
    b = shared + draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    return a, b, k


@given(tensordot_case())
def test_property_tensordot_matches_torch(case):
    sa, sb, k = case
    rng = np.random.default_rng(0)
    compare_with_torch(lambda a, b: tensordot(a, b, dims=k), lambda a, b: torch.tensordot(a, b, dims=k),
                       [rng.standard_normal(sa), rng.standard_normal(sb)])


@given(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
       hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
def test_property_kron_matches_torch(sa, sb):
    rng = np.random.default_rng(1)
    compare_with_torch(kron, torch.kron, [rng.standard_normal(sa), rng.standard_normal(sb)])


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3))
def test_property_cross_is_orthogonal_and_broadcasts(shapes):
    sa, sb = (tuple(s) + (3,) for s in shapes.input_shapes)
    sa, sb = ((1,) * (len(sb) - len(sa)) + sa, (1,) * (len(sa) - len(sb)) + sb)  # same number of dims
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    c = linalg_cross(mt.tensor(a), mt.tensor(b)).numpy()
    np.testing.assert_allclose((c * a).sum(-1), 0, atol=1e-12)
    np.testing.assert_allclose((c * b).sum(-1), 0, atol=1e-12)
    compare_with_torch(linalg_cross, torch.linalg.cross, [a, b])


def test_tensor_methods(rng):
    a, b = mt.tensor(rng.standard_normal((2, 3))), mt.tensor(rng.standard_normal((3, 2)))
    np.testing.assert_allclose(a.mm(b).numpy(), a.numpy() @ b.numpy())
    v = mt.tensor(rng.standard_normal(3))
    np.testing.assert_allclose(a.mv(v).numpy(), a.numpy() @ v.numpy())
    np.testing.assert_allclose(v.dot(v).numpy(), v.numpy() @ v.numpy())
    np.testing.assert_allclose(v.outer(v).numpy(), np.outer(v.numpy(), v.numpy()))
    np.testing.assert_allclose(v.kron(v).numpy(), np.kron(v.numpy(), v.numpy()))
    np.testing.assert_allclose(v.cross(v, dim=0).numpy(), np.zeros(3))
    np.testing.assert_allclose(mt.zeros(2, 2, dtype="float64").addmm(a, b).numpy(), a.numpy() @ b.numpy())
    a3 = a.unsqueeze(0)
    np.testing.assert_allclose(a3.bmm(b.unsqueeze(0)).numpy()[0], a.numpy() @ b.numpy())


def test_bad_input_names_both_shapes():
    with pytest.raises(ShapeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        mm(mt.ones(2, 3), mt.ones(4, 5))
    with pytest.raises(ShapeError, match=r"expected two matrices \(2-D\), got shapes \(2, 3, 1\) and \(3, 5\)"):
        mm(mt.ones(2, 3, 1), mt.ones(3, 5))
    with pytest.raises(DtypeError, match="same dtype, but got float32 and float64"):
        mm(mt.ones(2, 3), mt.ones(3, 2, dtype="float64"))
    with pytest.raises(ShapeError, match=r"expected two 3-D tensors, got shapes \(2, 3\) and \(3, 5\)"):
        bmm(mt.ones(2, 3), mt.ones(3, 5))
    with pytest.raises(ShapeError, match=r"expected mat2 of shape \(2, 3, \*\) for input of shape \(2, 2, 3\), got \(3, 3, 5\)"):
        bmm(mt.ones(2, 2, 3), mt.ones(3, 3, 5))
    with pytest.raises(ShapeError, match=r"size mismatch, got mat \(2x3\) and vec \(4\)"):
        mv(mt.ones(2, 3), mt.ones(4))
    with pytest.raises(ShapeError, match=r"1D tensors expected, but got shapes \(2, 3\) and \(3,\)"):
        dot(mt.ones(2, 3), mt.ones(3))
    with pytest.raises(ShapeError, match=r"expected shapes \(3,\) and \(4,\) to have the same number of elements"):
        dot(mt.ones(3), mt.ones(4))
    with pytest.raises(ShapeError, match=r"expected 1-D argument input, but got shape \(3, 2\)"):
        outer(mt.ones(3, 2), mt.ones(3))
    with pytest.raises(ShapeError, match=r"input of shape \(4,\) does not broadcast to the product's shape \(2, 3\)"):
        addmm(mt.ones(4), mt.ones(2, 3), mt.ones(3, 3))
    with pytest.raises(RuntimeError, match=r"contracted dimensions need to match, but a of shape \(2, 3\) has size 3"):
        tensordot(mt.ones(2, 3), mt.ones(4, 5), dims=1)
    with pytest.raises(RuntimeError, match="expects dims >= 0, but got dims=-1"):
        tensordot(mt.ones(2, 3), mt.ones(3, 5), dims=-1)
    with pytest.raises(ShapeError, match=r"dimension -1 must have length 3, got shapes \(2, 4\) and \(2, 4\)"):
        linalg_cross(mt.ones(2, 4), mt.ones(2, 4))
    with pytest.raises(ShapeError, match=r"same number of dimensions, got shapes \(3,\) and \(4, 3\)"):
        linalg_cross(mt.ones(3), mt.ones(4, 3))
    with pytest.raises(ShapeError, match="no dimension of size 3"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cross(mt.ones(2, 4), mt.ones(2, 4))
    with pytest.raises(IndexError, match="out of range"):
        cross(mt.ones(3, 3), mt.ones(3, 3), dim=5)
    with pytest.raises(TypeError, match="argument 'mat2' must be a Tensor, got list"):
        mm(mt.ones(2, 2), [[1.0, 0.0], [0.0, 1.0]])
