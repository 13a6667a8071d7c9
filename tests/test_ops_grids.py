"""Diagonals and index grids (ops/grids.py): diag, diag_embed, diagflat, meshgrid, cartesian_prod,
combinations, tril_indices, triu_indices.

Gradcheck (contiguous and non-contiguous), PyTorch comparison (float64, float32, integers, bool),
properties, bad input, empty and 0-d inputs.
"""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, t64, torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.errors import (
    DtypeError,
    IndexOutOfRangeError,
    OptionError,
    ShapeError,
)
from minitorch_ln.ops.grids import (
    cartesian_prod,
    combinations,
    diag,
    diag_embed,
    diagflat,
    meshgrid,
    tril_indices,
    triu_indices,
)

# ---------------------------------------------------------------------------------------------------
# Strategies for this file
# ---------------------------------------------------------------------------------------------------


@st.composite
def embed_case(draw):
    """A shape ``(*B, L)`` (sides 0-4), an offset, and two distinct dims of the result."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    nd = len(shape) + 1
    d1 = draw(st.integers(-nd, nd - 1))
    d2 = draw(st.integers(-nd, nd - 1).filter(lambda d: d % nd != d1 % nd))
    return shape, draw(st.integers(-3, 3)), d1, d2, draw(st.integers(0, 2**31 - 1))


# ---------------------------------------------------------------------------------------------------
# The ops in one table: name, ours, theirs, input shapes (float inputs)
# ---------------------------------------------------------------------------------------------------


def _ij(*ts):
    return meshgrid(*ts, indexing="ij")


OPS = [
    ("diag_vector", diag, torch.diag, [(4,)]),
    ("diag_vector_above", lambda x: diag(x, 2), lambda x: torch.diag(x, 2), [(3,)]),
    ("diag_vector_below", lambda x: x.diag(-1), lambda x: x.diag(-1), [(3,)]),
    ("diag_matrix", diag, torch.diag, [(3, 4)]),
    ("diag_matrix_above", lambda x: diag(x, 1), lambda x: torch.diag(x, 1), [(4, 3)]),
    ("diag_matrix_below", lambda x: x.diag(-2), lambda x: x.diag(-2), [(4, 3)]),
    ("diag_matrix_past_corner", lambda x: diag(x, 5), lambda x: torch.diag(x, 5), [(3, 4)]),
    ("diag_embed", diag_embed, torch.diag_embed, [(2, 3)]),
    ("diag_embed_offset", lambda x: diag_embed(x, 1), lambda x: torch.diag_embed(x, 1), [(2, 3)]),
    ("diag_embed_dims", lambda x: diag_embed(x, -1, 0, 2), lambda x: torch.diag_embed(x, -1, 0, 2), [(2, 3)]),
    ("diag_embed_dims_swapped", lambda x: x.diag_embed(dim1=-1, dim2=-2),
     lambda x: x.diag_embed(dim1=-1, dim2=-2), [(2, 3)]),
    ("diag_embed_1d", diag_embed, torch.diag_embed, [(3,)]),
    ("diag_embed_3d", lambda x: diag_embed(x, 2, 1, 3), lambda x: torch.diag_embed(x, 2, 1, 3), [(2, 3, 2)]),
    ("diagflat", diagflat, torch.diagflat, [(2, 3)]),
    ("diagflat_offset", lambda x: x.diagflat(-1), lambda x: x.diagflat(-1), [(3,)]),
    ("diagflat_0d", diagflat, torch.diagflat, [()]),
    ("meshgrid_ij", _ij, lambda *ts: torch.meshgrid(*ts, indexing="ij"), [(3,), (2,), (4,)]),
    ("meshgrid_xy", lambda *ts: meshgrid(*ts, indexing="xy"), lambda *ts: torch.meshgrid(*ts, indexing="xy"),
     [(3,), (2,), (4,)]),
    ("meshgrid_list_0d", lambda *ts: meshgrid(list(ts), indexing="xy"),
     lambda *ts: torch.meshgrid(list(ts), indexing="xy"), [(), (3,)]),
    ("meshgrid_one_xy", lambda x: meshgrid(x, indexing="xy"), lambda x: torch.meshgrid(x, indexing="xy"), [(3,)]),
    ("cartesian_prod", cartesian_prod, torch.cartesian_prod, [(3,), (2,)]),
    ("cartesian_prod_3", cartesian_prod, torch.cartesian_prod, [(2,), (1,), (3,)]),
    ("cartesian_prod_1", cartesian_prod, torch.cartesian_prod, [(3,)]),
    ("combinations", combinations, torch.combinations, [(4,)]),
    ("combinations_r3", lambda x: combinations(x, 3), lambda x: torch.combinations(x, 3), [(4,)]),
    ("combinations_repl", lambda x: combinations(x, 2, with_replacement=True),
     lambda x: torch.combinations(x, 2, with_replacement=True), [(3,)]),
    ("combinations_r_too_big", lambda x: combinations(x, 4), lambda x: torch.combinations(x, 4), [(3,)]),
    ("combinations_r0", lambda x: combinations(x, 0), lambda x: torch.combinations(x, 0), [(3,)]),
]
IDS = [o[0] for o in OPS]


@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_gradcheck_and_gradgradcheck(name, ours, theirs, shapes, rng):
    if name == "combinations_r0":
        pytest.skip("an empty result with no graph, as PyTorch's (no gradient to check)")
    xs = tuple(t64(rng.standard_normal(s)) for s in shapes)
    assert gradcheck(ours, xs)
    assert gradgradcheck(ours, xs)


NC = [o for o in OPS if len(o[3][0]) >= 2]


@pytest.mark.parametrize("name,ours,theirs,shapes", NC, ids=[o[0] for o in NC])
def test_gradcheck_non_contiguous_input(name, ours, theirs, shapes, rng):
    s0 = shapes[0]
    x = t64(rng.standard_normal((s0[1], s0[0], *s0[2:])))  # a contiguous leaf; the op sees its transpose
    assert gradcheck(lambda t: ours(t.transpose(0, 1)), (x,))


def test_gradcheck_non_contiguous_vectors(rng):
    # 1-D inputs: a strided slice of a contiguous leaf
    x = t64(rng.standard_normal(8))
    assert gradcheck(lambda t: diag(t[::2], 1), (x,))
    assert gradcheck(lambda t: cartesian_prod(t[::2], t[1::3]), (x,))
    assert gradcheck(lambda t: combinations(t[::3], 2), (x,))
    assert gradcheck(lambda t: _ij(t[::2], t[::-3]), (x,))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_matches_torch(name, ours, theirs, shapes, dtype, rng, device):
    compare_with_torch(ours, theirs, [rng.standard_normal(s).astype(dtype) for s in shapes], device=device)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_, np.float16])
@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_other_dtypes_match_torch(name, ours, theirs, shapes, dtype, rng):
    compare_with_torch(ours, theirs, [rng.integers(0, 3, s).astype(dtype) for s in shapes],
                       requires_grad=[False] * len(shapes))


def test_nonfinite_values_stay_on_the_diagonal():
    a = np.array([np.nan, np.inf, -np.inf, 1e300, -1e-300])
    compare_with_torch(diag, torch.diag, [a])
    compare_with_torch(lambda x: diag_embed(x.reshape(1, 5), 1), lambda x: torch.diag_embed(x.reshape(1, 5), 1), [a])


def test_empty_match_torch():
    for ours, theirs, shape in [(diag, torch.diag, (0,)), (diag, torch.diag, (0, 3)), (diagflat, torch.diagflat, (0,)),
                                (diag_embed, torch.diag_embed, (2, 0)), (diag_embed, torch.diag_embed, (0, 3)),
                                (lambda x: diag(x, 1), lambda x: torch.diag(x, 1), (0,)),
                                (combinations, torch.combinations, (0,)),
                                (lambda x: cartesian_prod(x, x), lambda x: torch.cartesian_prod(x, x), (0,)),
                                (lambda x: _ij(x, x[:0]), lambda x: torch.meshgrid(x, x[:0], indexing="ij"), (3,))]:
        compare_with_torch(ours, theirs, [np.zeros(shape)])


def test_meshgrid_warns_without_indexing_as_pytorch():
    a = mt.tensor(np.arange(3.0))
    with pytest.warns(UserWarning, match="required to pass the indexing argument"):
        g = meshgrid(a, a[:2])
    assert [tuple(t.shape) for t in g] == [(3, 2), (3, 2)]  # 'ij', PyTorch's default
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        meshgrid(a, a, indexing="ij")


def test_cartesian_prod_one_input_is_returned():
    x = mt.tensor([1.0, 2.0])
    assert cartesian_prod(x) is x


# ---------------------------------------------------------------------------------------------------
# tril_indices, triu_indices
# ---------------------------------------------------------------------------------------------------


@given(st.integers(0, 6), st.integers(0, 6), st.integers(-8, 8))
def test_property_triangle_indices_match_torch(row, col, offset):
    for ours, theirs in [(tril_indices, torch.tril_indices), (triu_indices, torch.triu_indices)]:
        out = ours(row, col, offset)
        ref = theirs(row, col, offset)
        assert str(out.dtype) == "int64" and tuple(out.shape) == tuple(ref.shape)
        np.testing.assert_array_equal(out.array, ref.numpy())


def test_triangle_indices_dtype_and_device():
    out = tril_indices(3, 3, dtype=mt.int32 if hasattr(mt, "int32") else "int32", device="cpu")
    assert str(out.dtype) == "int32"
    np.testing.assert_array_equal(out.array, torch.tril_indices(3, 3, dtype=torch.int32).numpy())
    assert not out.requires_grad


# ---------------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------------


@given(embed_case())
def test_property_diag_embed_matches_torch_and_diag_inverts(case):
    shape, offset, d1, d2, seed = case
    a = np.random.default_rng(seed).standard_normal(shape)
    (out,), _ = compare_with_torch(lambda x: diag_embed(x, offset, d1, d2), lambda x: torch.diag_embed(x, offset, d1, d2),
                                   [a])
    np.testing.assert_array_equal(np.moveaxis(np.diagonal(out, offset, d1, d2), -1, -1), a)


@given(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=5), st.integers(-6, 6), st.integers(0, 2**31 - 1))
def test_property_diag_matches_torch(shape, k, seed):
    a = np.random.default_rng(seed).standard_normal(shape)
    compare_with_torch(lambda x: diag(x, k), lambda x: torch.diag(x, k), [a])


@given(st.lists(st.integers(0, 4), min_size=1, max_size=3), st.sampled_from(["ij", "xy"]), st.integers(0, 2**31 - 1))
def test_property_meshgrid_and_cartesian_prod_match_torch(sizes, indexing, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(n) for n in sizes]
    compare_with_torch(lambda *ts: meshgrid(*ts, indexing=indexing), lambda *ts: torch.meshgrid(*ts, indexing=indexing),
                       arrays)
    compare_with_torch(cartesian_prod, torch.cartesian_prod, arrays)


@given(st.integers(0, 5), st.integers(0, 4), st.booleans())
def test_property_combinations_match_torch(n, r, with_replacement):
    a = np.random.default_rng(n).standard_normal(n)
    compare_with_torch(lambda x: combinations(x, r, with_replacement), lambda x: torch.combinations(x, r, with_replacement),
                       [a])


# ---------------------------------------------------------------------------------------------------
# Bad input: errors name what was expected and what came
# ---------------------------------------------------------------------------------------------------

X = mt.tensor(np.zeros((2, 3)))
V = mt.tensor(np.zeros(3))


@pytest.mark.parametrize("call,err,match", [
    (lambda: diag(mt.tensor(1.0)), ShapeError, r"1-D or 2-D tensors, got a 0-D tensor of shape \(\)"),
    (lambda: diag(mt.tensor(np.zeros((2, 2, 2)))), ShapeError, r"got a 3-D tensor of shape \(2, 2, 2\)"),
    (lambda: diag(V, 1.0), TypeError, r"diagonal to be an int, got float"),
    (lambda: diag(np.zeros(3)), TypeError, r"Tensor, got ndarray"),
    (lambda: diag_embed(X, 0, 0, 0), ShapeError, r"cannot be identical: dim1=0, dim2=0"),
    (lambda: diag_embed(X, 0, 1, -2), ShapeError, r"dim1=1, dim2=-2 are both dim 1 of the result's 3"),
    (lambda: diag_embed(X, 0, 0, 3), IndexOutOfRangeError, r"dimension 3 is out of range for 3 dimension.*\[-3, 2\]"),
    (lambda: diag_embed(mt.tensor(1.0)), IndexOutOfRangeError, r"dimension -2 is out of range for 1 dimension"),
    (lambda: meshgrid(X, indexing="ij"), ShapeError, r"0-d or 1-d tensors, got tensor 0 of shape \(2, 3\)"),
    (lambda: meshgrid(V, mt.tensor([1, 2]), indexing="ij"), DtypeError,
     r"same dtype, got float64 \(tensor 0\) and int64 \(tensor 1\)"),
    (lambda: meshgrid(indexing="ij"), ShapeError, r"non-empty list of tensors"),
    (lambda: meshgrid(V, V, indexing="foo"), OptionError, r"'xy' or 'ij', got 'foo'"),
    (lambda: meshgrid(V, 3, indexing="ij"), TypeError, r"got int at position 1"),
    (lambda: cartesian_prod(X), ShapeError, r"1-d vectors, got tensor 0 of shape \(2, 3\)"),
    (lambda: cartesian_prod(mt.tensor(1.0, dtype="float64"), V), ShapeError, r"tensor 0 of shape \(\)"),
    (lambda: cartesian_prod(), ShapeError, r"non-empty"),
    (lambda: combinations(X), ShapeError, r"1-d vector, got a tensor of shape \(2, 3\)"),
    (lambda: combinations(V, -1), OptionError, r"non-negative r, got -1"),
    (lambda: tril_indices(-1, 3), ShapeError, r"non-negative, got row=-1, col=3"),
    (lambda: triu_indices(3, -2), ShapeError, r"col=-2"),
    (lambda: tril_indices(3, 3, dtype="float32"), DtypeError, r"int64 or int32, got float32"),
    (lambda: triu_indices(3.0, 3), TypeError, r"row to be an int, got float"),
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()


def test_errors_are_runtime_errors_as_in_pytorch():
    for call in (lambda: diag(mt.tensor(1.0)), lambda: diag_embed(X, 0, 0, 0), lambda: meshgrid(V, V, indexing="no"),
                 lambda: tril_indices(-1, 2)):
        with pytest.raises(RuntimeError):
            call()
    with pytest.raises(ValueError):
        meshgrid(V, V, indexing="no")
