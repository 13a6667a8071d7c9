"""Stacking and splitting helpers (ops/stacking.py): atleast_*d, hstack, vstack, row_stack, dstack,
column_stack, block_diag, tensor_split, hsplit, vsplit, dsplit.

Gradcheck (contiguous and non-contiguous), PyTorch comparison (float64, float32, integers, bool,
mixed dtypes), properties, bad input, empty and 0-d inputs.
"""

import numpy as np
import pytest
from helpers import compare_with_torch, t64, torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.errors import DtypeError, IndexOutOfRangeError, ShapeError
from minitorch_ln.ops.stacking import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    column_stack,
    dsplit,
    dstack,
    hsplit,
    hstack,
    row_stack,
    tensor_split,
    vsplit,
    vstack,
)

# ---------------------------------------------------------------------------------------------------
# Strategies for this file
# ---------------------------------------------------------------------------------------------------


@st.composite
def split_case(draw):
    """A shape (sides 0-6), a dim, and either a number of sections or a sorted/unsorted list of indices."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    spec = draw(st.one_of(st.integers(1, 8), st.lists(st.integers(-8, 8), max_size=4).map(tuple)))
    return shape, dim, spec, draw(st.integers(0, 2**31 - 1))


# ---------------------------------------------------------------------------------------------------
# The ops in one table: name, ours, theirs, input shapes (float inputs)
# ---------------------------------------------------------------------------------------------------

T = torch.tensor


def _many(ours, theirs):
    """``f(*tensors)`` from a function of one list of tensors (hstack([a, b]) as f(a, b))."""
    return (lambda *ts: ours(list(ts))), (lambda *ts: theirs(list(ts)))


OPS = [
    ("atleast_1d", atleast_1d, torch.atleast_1d, [()]),
    ("atleast_1d_many", atleast_1d, torch.atleast_1d, [(), (3,), (2, 3)]),
    ("atleast_2d_many", atleast_2d, torch.atleast_2d, [(), (3,), (2, 3), (2, 1, 3)]),
    ("atleast_3d_many", atleast_3d, torch.atleast_3d, [(), (3,), (2, 3), (2, 1, 3)]),
    ("atleast_2d_list", lambda *ts: atleast_2d(list(ts)), lambda *ts: torch.atleast_2d(list(ts)), [(3,), (2, 3)]),
    ("hstack_1d", *_many(hstack, torch.hstack), [(3,), (), (2,)]),
    ("hstack_2d", *_many(hstack, torch.hstack), [(2, 3), (2, 1)]),
    ("hstack_3d", *_many(hstack, torch.hstack), [(2, 3, 4), (2, 1, 4)]),
    ("vstack_1d", *_many(vstack, torch.vstack), [(3,), (3,), (2, 3)]),
    ("vstack_0d", *_many(vstack, torch.vstack), [(), ()]),
    ("row_stack", *_many(row_stack, torch.row_stack), [(3,), (2, 3)]),
    ("dstack", *_many(dstack, torch.dstack), [(2, 3), (2, 3, 2)]),
    ("dstack_1d", *_many(dstack, torch.dstack), [(3,), (3,)]),
    ("column_stack", *_many(column_stack, torch.column_stack), [(2, 3), (2,), (2, 1)]),
    ("column_stack_1d_0d", *_many(column_stack, torch.column_stack), [(), ()]),
    ("column_stack_3d", *_many(column_stack, torch.column_stack), [(2, 3, 4), (2, 1, 4)]),
    ("block_diag", block_diag, torch.block_diag, [(2, 3), (3,), (), (1, 2)]),
    ("block_diag_one", block_diag, torch.block_diag, [(3, 2)]),
    ("tensor_split_sections", lambda x: tensor_split(x, 3), lambda x: torch.tensor_split(x, 3), [(7, 2)]),
    ("tensor_split_many_sections", lambda x: tensor_split(x, 5, dim=1), lambda x: torch.tensor_split(x, 5, dim=1),
     [(2, 3)]),
    ("tensor_split_indices", lambda x: x.tensor_split([1, 5, 3, -1], 0), lambda x: x.tensor_split([1, 5, 3, -1], 0),
     [(7, 2)]),
    ("tensor_split_tensor_sections", lambda x: tensor_split(x, mt.tensor(2), -1),
     lambda x: torch.tensor_split(x, T(2), -1), [(2, 5)]),
    ("tensor_split_tensor_indices", lambda x: tensor_split(x, mt.tensor([1, 4])),
     lambda x: torch.tensor_split(x, T([1, 4])), [(6,)]),
    ("hsplit_2d", lambda x: hsplit(x, 2), lambda x: torch.hsplit(x, 2), [(3, 4)]),
    ("hsplit_1d_indices", lambda x: hsplit(x, [1, 3]), lambda x: torch.hsplit(x, [1, 3]), [(5,)]),
    ("hsplit_method_varargs", lambda x: x.hsplit(1, 2), lambda x: x.hsplit(1, 2), [(2, 4)]),
    ("vsplit", lambda x: x.vsplit(2), lambda x: x.vsplit(2), [(4, 3)]),
    ("vsplit_indices", lambda x: vsplit(x, [3]), lambda x: torch.vsplit(x, [3]), [(4, 3)]),
    ("dsplit", lambda x: dsplit(x, 3), lambda x: torch.dsplit(x, 3), [(2, 1, 6)]),
    ("dsplit_method_list", lambda x: x.dsplit([2, 3]), lambda x: x.dsplit([2, 3]), [(2, 1, 6)]),
]
IDS = [o[0] for o in OPS]


def _tuple(fn):
    """gradcheck and compare_with_torch take a tuple (not a list) of outputs."""
    def wrapped(*args):
        out = fn(*args)
        return tuple(out) if isinstance(out, (list, tuple)) else out
    return wrapped


@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_gradcheck_and_gradgradcheck(name, ours, theirs, shapes, rng):
    xs = tuple(t64(rng.standard_normal(s)) for s in shapes)
    assert gradcheck(_tuple(ours), xs)
    assert gradgradcheck(_tuple(ours), xs)


NC = [o for o in OPS if len(o[3][0]) >= 2]


@pytest.mark.parametrize("name,ours,theirs,shapes", NC, ids=[o[0] for o in NC])
def test_gradcheck_non_contiguous_input(name, ours, theirs, shapes, rng):
    s0 = shapes[0]
    x = t64(rng.standard_normal((s0[1], s0[0], *s0[2:])))  # a contiguous leaf; the op sees its transpose
    rest = tuple(t64(rng.standard_normal(s)) for s in shapes[1:])
    assert gradcheck(lambda t, *r: _tuple(ours)(t.transpose(0, 1), *r), (x, *rest))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_matches_torch(name, ours, theirs, shapes, dtype, rng, device):
    compare_with_torch(_tuple(ours), _tuple(theirs), [rng.standard_normal(s).astype(dtype) for s in shapes],
                       device=device)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_, np.float16])
@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_other_dtypes_match_torch(name, ours, theirs, shapes, dtype, rng):
    compare_with_torch(_tuple(ours), _tuple(theirs), [rng.integers(0, 3, s).astype(dtype) for s in shapes],
                       requires_grad=[False] * len(shapes))


@pytest.mark.parametrize("ours,theirs", [
    (hstack, torch.hstack), (vstack, torch.vstack), (dstack, torch.dstack), (column_stack, torch.column_stack),
    (lambda ts: block_diag(*ts), lambda ts: torch.block_diag(*ts)),
], ids=["hstack", "vstack", "dstack", "column_stack", "block_diag"])
def test_mixed_dtypes_promote_as_torch(ours, theirs, rng):
    for dts in [(np.float32, np.int64), (np.int64, np.bool_), (np.float16, np.int32), (np.float32, np.float64)]:
        a, b = rng.integers(0, 3, (2, 3)).astype(dts[0]), rng.integers(0, 3, (2, 3)).astype(dts[1])
        compare_with_torch(lambda x, y: ours([x, y]), lambda x, y: theirs([x, y]), [a, b], requires_grad=[False, False])


def test_nonfinite_values_pass_through():
    a = np.array([[np.nan, np.inf], [-np.inf, 1e300]])
    compare_with_torch(lambda x: block_diag(x, x), lambda x: torch.block_diag(x, x), [a])
    compare_with_torch(lambda x: tuple(tensor_split(x, 2, 1)), lambda x: tuple(torch.tensor_split(x, 2, 1)), [a])


def test_empty_and_zero_dim_match_torch():
    e = np.zeros((0, 3))
    compare_with_torch(lambda x, y: hstack([x, y]), lambda x, y: torch.hstack([x, y]), [e, np.zeros((0, 2))])
    compare_with_torch(lambda x, y: vstack([x, y]), lambda x, y: torch.vstack([x, y]), [e, np.ones((2, 3))])
    compare_with_torch(lambda x: block_diag(x, x), lambda x: torch.block_diag(x, x), [e])
    compare_with_torch(lambda x: tuple(tensor_split(x, 2)), lambda x: tuple(torch.tensor_split(x, 2)), [e])
    compare_with_torch(lambda x: tuple(tensor_split(x, [])), lambda x: tuple(torch.tensor_split(x, [])), [e])
    compare_with_torch(lambda x: tuple(tensor_split(x, 4, 1)), lambda x: tuple(torch.tensor_split(x, 4, 1)), [e])
    compare_with_torch(lambda x: atleast_3d(x), lambda x: torch.atleast_3d(x), [np.zeros((0,))])
    assert atleast_2d() == () == torch.atleast_2d()
    out = block_diag()
    assert out.shape == tuple(torch.block_diag().shape) == (1, 0) and str(out.dtype) == "float32"


def test_atleast_returns_the_same_tensor_when_it_has_enough_dims():
    x = mt.tensor(np.zeros((2, 3, 4)))
    assert atleast_1d(x) is x and atleast_2d(x) is x and atleast_3d(x) is x


def test_splits_read_the_input_and_backward_through_a_subset():
    x = mt.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    _, b = x.hsplit(2)
    (b * 2).sum().backward()  # only one piece used: the other part of the gradient is zero
    np.testing.assert_array_equal(x.grad.array, [[0, 0, 2, 2]] * 3)


# ---------------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------------


@given(split_case())
def test_property_tensor_split_matches_torch_and_cat_restores(case):
    shape, dim, spec, seed = case
    a = np.random.default_rng(seed).standard_normal(shape)
    ours, _ = compare_with_torch(lambda x: tuple(tensor_split(x, spec, dim)),
                                      lambda x: tuple(torch.tensor_split(x, spec, dim)), [a])
    if isinstance(spec, int) or list(spec) == sorted(spec) and all(0 <= i <= shape[dim] for i in spec):
        np.testing.assert_array_equal(np.concatenate(ours, axis=dim), a)


@given(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=4), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_property_stacks_match_torch(shape, k, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape) for _ in range(k)]
    for ours, theirs in [(hstack, torch.hstack), (vstack, torch.vstack), (dstack, torch.dstack),
                         (column_stack, torch.column_stack)]:
        compare_with_torch(lambda *ts, f=ours: f(list(ts)), lambda *ts, f=theirs: f(list(ts)), arrays)
    compare_with_torch(block_diag, torch.block_diag, arrays)


# ---------------------------------------------------------------------------------------------------
# Bad input: errors name what was expected and what came
# ---------------------------------------------------------------------------------------------------

X = mt.tensor(np.zeros((2, 3)))
V = mt.tensor(np.zeros(3))


@pytest.mark.parametrize("call,err,match", [
    (lambda: hstack([]), ShapeError, r"non-empty list of tensors, got an empty one"),
    (lambda: hstack(X), TypeError, r"list or tuple of Tensors, got Tensor"),
    (lambda: hstack([X, np.zeros(3)]), TypeError, r"got ndarray at position 1"),
    (lambda: hstack([X, V]), ShapeError,
     r"same number of dimensions: tensor 0 has shape \(2, 3\), tensor 1 has shape \(3,\)"),
    (lambda: vstack([X, mt.tensor(np.zeros(2))]), ShapeError, r"except in dimension 0: .*\(2, 3\).*\(1, 2\)"),
    (lambda: dstack([X, mt.tensor(np.zeros((3, 3)))]), ShapeError, r"except in dimension 2"),
    (lambda: column_stack([X, mt.tensor(np.zeros(3))]), ShapeError, r"except in dimension 1: .*\(2, 3\).*\(3, 1\)"),
    (lambda: row_stack([]), ShapeError, r"non-empty"),
    (lambda: atleast_1d(X, 3), TypeError, r"got int at position 1"),
    (lambda: block_diag(mt.tensor(np.zeros((2, 2, 2)))), ShapeError,
     r"2 or fewer dimensions, got input 0 of shape \(2, 2, 2\)"),
    (lambda: block_diag(X, [1]), TypeError, r"got list at position 1"),
    (lambda: tensor_split(mt.tensor(1.0), 2), ShapeError, r"at least a 1-dimensional tensor, got a 0-d"),
    (lambda: tensor_split(V, 0), ShapeError, r"larger than 0, got 0"),
    (lambda: tensor_split(V, -1), ShapeError, r"larger than 0, got -1"),
    (lambda: tensor_split(V, 2, 1), IndexOutOfRangeError, r"dimension 1 is out of range .*\[-1, 0\]"),
    (lambda: tensor_split(V, mt.tensor([1.0])), DtypeError, r"int64, got float32"),
    (lambda: tensor_split(V, mt.tensor([[1]])), ShapeError, r"0-d or 1-d tensor, got shape \(1, 1\)"),
    (lambda: tensor_split(V, 1.5), TypeError, r"an int, a tuple of ints or an int64 Tensor, got 1.5"),
    (lambda: tensor_split(V, 2, dim=0.0), TypeError, r"dim to be an int, got float"),
    (lambda: hsplit(X, 2), ShapeError, r"dimension 1 of size 3 into 2 equal sections"),
    (lambda: hsplit(X, 0), ShapeError, r"size 3 into 0 equal sections"),
    (lambda: hsplit(mt.tensor(1.0), 1), ShapeError, r"at least 1 dimension\(s\), got a tensor of shape \(\)"),
    (lambda: hsplit(X, mt.tensor([1])), TypeError, r"an int \(sections\) or a list/tuple of indices, got Tensor"),
    (lambda: vsplit(V, 1), ShapeError, r"at least 2 dimension\(s\), got a tensor of shape \(3,\)"),
    (lambda: vsplit(X, 3), ShapeError, r"dimension 0 of size 2 into 3"),
    (lambda: dsplit(X, 1), ShapeError, r"at least 3 dimension\(s\), got a tensor of shape \(2, 3\)"),
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()


def test_errors_are_runtime_errors_as_in_pytorch():
    for call in (lambda: hstack([X, V]), lambda: hsplit(X, 2), lambda: tensor_split(V, 0), lambda: block_diag(
            mt.tensor(np.zeros((1, 1, 1))))):
        with pytest.raises(RuntimeError):
            call()
