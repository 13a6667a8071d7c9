"""Copying shape ops (ops/reorder.py): flip, fliplr, flipud, roll, rot90, repeat, tile, repeat_interleave.

Gradcheck (contiguous and non-contiguous), PyTorch comparison (float64, float32, integers, bool),
properties, bad input, edge values.
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
from minitorch_ln.ops.reorder import (
    flip,
    fliplr,
    flipud,
    repeat,
    repeat_interleave,
    roll,
    rot90,
    tile,
)

# ---------------------------------------------------------------------------------------------------
# Strategies for this file
# ---------------------------------------------------------------------------------------------------


@st.composite
def shape_and_seed(draw, min_dims=0, max_dims=3, min_side=0):
    """A shape (sides ``min_side``-4) and a seed for NumPy-generated values."""
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=4))
    return shape, draw(st.integers(0, 2**31 - 1))


# ---------------------------------------------------------------------------------------------------
# The ops in one table: name, ours, theirs, shape of the float input (the first argument)
# ---------------------------------------------------------------------------------------------------

R = mt.tensor
T = torch.tensor

OPS = [
    ("flip_02", lambda x: flip(x, (0, 2)), lambda x: torch.flip(x, (0, 2)), (2, 3, 4)),
    ("flip_method_neg", lambda x: x.flip(-1), lambda x: x.flip(-1), (3, 4)),
    ("flip_varargs", lambda x: x.flip(0, 1), lambda x: x.flip(0, 1), (3, 4)),
    ("flip_none", lambda x: flip(x, ()), lambda x: torch.flip(x, ()), (3, 4)),
    ("fliplr", fliplr, torch.fliplr, (3, 4, 2)),
    ("flipud", lambda x: x.flipud(), lambda x: x.flipud(), (3, 4)),
    ("roll_dims", lambda x: roll(x, (1, -2), (0, 2)), lambda x: torch.roll(x, (1, -2), (0, 2)), (2, 3, 4)),
    ("roll_flat", lambda x: roll(x, 5), lambda x: torch.roll(x, 5), (3, 4)),
    ("roll_twice_same_dim", lambda x: x.roll((1, 2), (1, 1)), lambda x: x.roll((1, 2), (1, 1)), (3, 4)),
    ("roll_method", lambda x: x.roll(-1, 1), lambda x: x.roll(-1, 1), (3, 4)),
    ("rot90", rot90, torch.rot90, (3, 4)),
    ("rot90_neg_dims12", lambda x: rot90(x, -1, (1, 2)), lambda x: torch.rot90(x, -1, (1, 2)), (2, 3, 4)),
    ("rot90_k2", lambda x: x.rot90(2, [1, 0]), lambda x: x.rot90(2, [1, 0]), (3, 4)),
    ("rot90_k3", lambda x: rot90(x, 3, [-1, 0]), lambda x: torch.rot90(x, 3, [-1, 0]), (3, 4)),
    ("rot90_k5", lambda x: rot90(x, 5), lambda x: torch.rot90(x, 5), (3, 4)),
    ("repeat", lambda x: x.repeat(2, 1, 3), lambda x: x.repeat(2, 1, 3), (2, 3)),
    ("repeat_tuple", lambda x: repeat(x, (3, 2)), lambda x: x.repeat((3, 2)), (2, 3)),
    ("repeat_0d", lambda x: x.repeat(3), lambda x: x.repeat(3), ()),
    ("tile_short", lambda x: tile(x, (2,)), lambda x: torch.tile(x, (2,)), (2, 3)),
    ("tile_long", lambda x: x.tile(2, 1, 2), lambda x: x.tile(2, 1, 2), (2, 3)),
    ("repeat_interleave_flat", lambda x: repeat_interleave(x, 2), lambda x: torch.repeat_interleave(x, 2), (2, 3)),
    ("repeat_interleave_dim", lambda x: x.repeat_interleave(3, dim=1), lambda x: x.repeat_interleave(3, dim=1),
     (2, 3)),
    ("repeat_interleave_tensor", lambda x: repeat_interleave(x, R([1, 0, 3]), 1),
     lambda x: torch.repeat_interleave(x, T([1, 0, 3]), 1), (2, 3)),
    ("repeat_interleave_tensor_neg_dim", lambda x: repeat_interleave(x, R([2, 1], dtype="int32"), -2, output_size=3),
     lambda x: torch.repeat_interleave(x, T([2, 1], dtype=torch.int32), -2, output_size=3), (2, 3)),
    ("repeat_interleave_size1", lambda x: repeat_interleave(x, R([2]), 0),
     lambda x: torch.repeat_interleave(x, T([2]), 0), (2, 3)),
    ("repeat_interleave_0d_repeats", lambda x: repeat_interleave(x, R(3)), lambda x: torch.repeat_interleave(x, T(3)),
     (2, 3)),
    ("repeat_interleave_0d_input", lambda x: repeat_interleave(x, 2), lambda x: torch.repeat_interleave(x, 2), ()),
]
IDS = [o[0] for o in OPS]


@pytest.mark.parametrize("name,ours,theirs,shape", OPS, ids=IDS)
def test_gradcheck_and_gradgradcheck(name, ours, theirs, shape, rng):
    x = t64(rng.standard_normal(shape))
    assert gradcheck(ours, (x,))
    assert gradgradcheck(ours, (x,))


@pytest.mark.parametrize("name,ours,theirs,shape", [o for o in OPS if len(o[3]) >= 2], ids=[o[0] for o in OPS
                                                                                            if len(o[3]) >= 2])
def test_gradcheck_non_contiguous_input(name, ours, theirs, shape, rng):
    shape_t = (shape[1], shape[0], *shape[2:])
    x = t64(rng.standard_normal(shape_t))  # a contiguous leaf; the op sees its transpose
    assert gradcheck(lambda t: ours(t.transpose(0, 1)), (x,))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,shape", OPS, ids=IDS)
def test_matches_torch(name, ours, theirs, shape, dtype, rng, device):
    compare_with_torch(ours, theirs, [rng.standard_normal(shape).astype(dtype)], device=device)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("name,ours,theirs,shape", OPS, ids=IDS)
def test_integer_and_bool_match_torch(name, ours, theirs, shape, dtype, rng):
    a = rng.integers(0, 5, shape).astype(dtype)
    (m,), _ = compare_with_torch(ours, theirs, [a])  # values and dtype
    assert m.dtype == dtype


@pytest.mark.parametrize("name,ours,theirs,shape", OPS, ids=IDS)
def test_float16_and_nonfinite_match_torch(name, ours, theirs, shape, rng):
    a = np.array(rng.standard_normal(shape), ndmin=0)
    a.reshape(-1)[:3] = [np.nan, np.inf, -np.inf][: a.size]
    compare_with_torch(ours, theirs, [a.astype(np.float16)], requires_grad=[False])
    compare_with_torch(ours, theirs, [np.asarray(rng.standard_normal(shape) * 1e300)])
    compare_with_torch(ours, theirs, [np.asarray(rng.standard_normal(shape) * 1e-300)])


def test_outputs_are_copies_not_views():
    x = mt.tensor(np.arange(6.0).reshape(2, 3))
    for y in (flip(x, (0,)), fliplr(x), rot90(x), roll(x, 1), x.repeat(1, 1), x.tile(1)):
        y.array[...] = -1.0
        np.testing.assert_array_equal(x.array, np.arange(6.0).reshape(2, 3))


# ---------------------------------------------------------------------------------------------------
# Empty and 0-d tensors
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ours,theirs", [
    (lambda x: flip(x, (0, 1)), lambda x: torch.flip(x, (0, 1))),
    (lambda x: roll(x, 2, 0), lambda x: torch.roll(x, 2, 0)),
    (lambda x: roll(x, 2), lambda x: torch.roll(x, 2)),
    (rot90, torch.rot90),
    (lambda x: x.repeat(2, 0, 1), lambda x: x.repeat(2, 0, 1)),
    (lambda x: x.tile(3), lambda x: x.tile(3)),
    (lambda x: repeat_interleave(x, 2, 0), lambda x: torch.repeat_interleave(x, 2, 0)),
    (lambda x: repeat_interleave(x, R([0, 0, 0]), 1), lambda x: torch.repeat_interleave(x, T([0, 0, 0]), 1)),
    (lambda x: repeat_interleave(x, R(np.zeros(0, np.int64)), 0),
     lambda x: torch.repeat_interleave(x, T([], dtype=torch.long), 0)),
], ids=["flip", "roll_dim", "roll_flat", "rot90", "repeat", "tile", "ri_int", "ri_zero_repeats", "ri_empty"])
def test_empty_match_torch(ours, theirs):
    compare_with_torch(ours, theirs, [np.zeros((0, 3))])


def test_zero_dim_inputs_match_torch():
    s = np.array(2.5)
    for ours, theirs in [(lambda x: flip(x, (0,)), lambda x: torch.flip(x, (0,))), (lambda x: flip(x, [-1]),
                         lambda x: torch.flip(x, [-1])), (lambda x: roll(x, 3), lambda x: torch.roll(x, 3)),
                         (lambda x: x.repeat(()), lambda x: x.repeat(())), (lambda x: x.tile(()), lambda x: x.tile(())),
                         (lambda x: x.repeat(2, 2), lambda x: x.repeat(2, 2))]:
        compare_with_torch(ours, theirs, [s])


def test_repeat_interleave_repeats_only_form():
    compare_with_torch(lambda r: repeat_interleave(r), lambda r: torch.repeat_interleave(r), [np.array([1, 2, 0, 3])])
    compare_with_torch(lambda r: repeat_interleave(r, output_size=3), lambda r: torch.repeat_interleave(r, output_size=3),
                       [np.array([1, 2])])


def test_repeat_backward_is_one_reshape_and_sum():
    # the gradient of every copy adds up: x (2,) repeated (3, 2) -> each entry is used 6 times
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    x.repeat(3, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.array, [6.0, 6.0])


# ---------------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------------


@given(shape_and_seed(min_dims=1), st.data())
def test_property_flip_roll_match_torch_and_invert(ss, data):
    shape, seed = ss
    rng = np.random.default_rng(seed)
    nd = len(shape)
    dims = tuple(data.draw(st.lists(st.integers(-nd, nd - 1), max_size=nd, unique_by=lambda d: d % nd)))
    shifts = tuple(data.draw(st.lists(st.integers(-7, 7), min_size=len(dims), max_size=len(dims))))
    a = rng.standard_normal(shape)
    compare_with_torch(lambda x: flip(x, dims), lambda x: torch.flip(x, dims), [a])
    x = mt.tensor(a)
    np.testing.assert_array_equal(flip(flip(x, dims), dims).array, a)
    if dims:
        compare_with_torch(lambda x: roll(x, shifts, dims), lambda x: torch.roll(x, shifts, dims), [a])
        np.testing.assert_array_equal(roll(roll(x, shifts, dims), tuple(-s for s in shifts), dims).array, a)


@given(shape_and_seed(min_dims=2), st.integers(-6, 6), st.data())
def test_property_rot90_matches_torch(ss, k, data):
    shape, seed = ss
    nd = len(shape)
    d0 = data.draw(st.integers(0, nd - 1))
    d1 = data.draw(st.integers(0, nd - 1).filter(lambda d: d != d0))
    a = np.random.default_rng(seed).standard_normal(shape)
    compare_with_torch(lambda x: rot90(x, k, (d0, d1)), lambda x: torch.rot90(x, k, (d0, d1)), [a])


@given(shape_and_seed(), st.data())
def test_property_repeat_and_tile_match_torch(ss, data):
    shape, seed = ss
    extra = data.draw(st.integers(0, 2))
    sizes = tuple(data.draw(st.lists(st.integers(0, 3), min_size=len(shape) + extra, max_size=len(shape) + extra)))
    tdims = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4)))
    a = np.random.default_rng(seed).standard_normal(shape)
    compare_with_torch(lambda x: x.repeat(sizes), lambda x: x.repeat(sizes), [a])
    compare_with_torch(lambda x: tile(x, tdims), lambda x: torch.tile(x, tdims), [a])


@given(shape_and_seed(min_dims=1), st.data())
def test_property_repeat_interleave_matches_torch(ss, data):
    shape, seed = ss
    rng = np.random.default_rng(seed)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    reps = rng.integers(0, 4, (shape[dim],))
    a = rng.standard_normal(shape)
    compare_with_torch(lambda x, r: repeat_interleave(x, r, dim), lambda x, r: torch.repeat_interleave(x, r, dim),
                       [a, reps])
    compare_with_torch(lambda x: repeat_interleave(x, int(reps.sum()) % 3, dim),
                       lambda x: torch.repeat_interleave(x, int(reps.sum()) % 3, dim), [a])


# ---------------------------------------------------------------------------------------------------
# Bad input: errors name what was expected and what came
# ---------------------------------------------------------------------------------------------------

X = mt.tensor(np.zeros((2, 3)))


@pytest.mark.parametrize("call,err,match", [
    (lambda: flip(X, (0, 0)), ShapeError, r"dim 0 appears multiple times.*\(0, 0\)"),
    (lambda: flip(X, (2,)), IndexOutOfRangeError, r"dimension 2 is out of range .* 2 dimension.*\[-2, 1\]"),
    (lambda: flip(X, (0.5,)), TypeError, r"tuple of ints.*0\.5"),
    (lambda: flip(np.zeros(3), (0,)), TypeError, r"expected input to be a Tensor, got ndarray"),
    (lambda: fliplr(mt.tensor([1.0, 2.0])), ShapeError, r">= 2-d.*\(2,\)"),
    (lambda: flipud(mt.tensor(1.0)), ShapeError, r">= 1-d.*\(\)"),
    (lambda: roll(X, (1, 2), (0,)), ShapeError, r"must align: got 2 shifts \(1, 2\) and 1 dims \(0,\)"),
    (lambda: roll(X, (1,), (0, 1)), ShapeError, r"1 shifts \(1,\) and 2 dims"),
    (lambda: roll(X, (1, 2)), ShapeError, r"2 shifts .* no dims"),
    (lambda: roll(X, ()), ShapeError, r"shifts required"),
    (lambda: roll(X, 1, 5), IndexOutOfRangeError, r"dimension 5 is out of range"),
    (lambda: roll(mt.tensor(2.0), 1, 0), IndexOutOfRangeError, r"0-d"),
    (lambda: roll(X, 1.5), TypeError, r"shifts to be an int or a tuple of ints, got float"),
    (lambda: rot90(X, 1, (0, 0)), ShapeError, r"rotation dims to be different.*\(0, 0\)"),
    (lambda: rot90(X, 1, (1, -1)), ShapeError, r"rotation dims to be different.*\(1, -1\)"),
    (lambda: rot90(X, 1, (0,)), ShapeError, r"total rotation dims == 2, got 1"),
    (lambda: rot90(mt.tensor([1.0]), 1), ShapeError, r"total dims >= 2.*\(1,\)"),
    (lambda: rot90(X, 1, (0, 2)), IndexOutOfRangeError, r"dimension 2 is out of range"),
    (lambda: rot90(X, 1.0), TypeError, r"k to be an int, got float"),
    (lambda: X.repeat(2), ShapeError, r"expected at least 2 for shape \(2, 3\), got 1: \(2,\)"),
    (lambda: X.repeat(-1, 2), ShapeError, r"non-negative, got \(-1, 2\)"),
    (lambda: X.repeat(2.0, 1), TypeError, r"sizes to be a tuple of ints.*2\.0"),
    (lambda: tile(X, (-1,)), ShapeError, r"non-negative, got \(1, -1\)"),
    (lambda: repeat_interleave(X, R([1, 2]), 1), ShapeError,
     r"same size as input along dim.*size 2.*\(2, 3\) with size 3 along dim 1"),
    (lambda: repeat_interleave(X, R([1, -2]), 0), ShapeError, r"can not be negative, got \[1, -2\]"),
    (lambda: repeat_interleave(X, -1, 0), ShapeError, r"non-negative, got -1"),
    (lambda: repeat_interleave(X, R([1.0, 2.0]), 0), DtypeError, r"int64 or int32, got float32"),
    (lambda: repeat_interleave(X, R([[1, 2]]), 0), ShapeError, r"0-d or 1-d tensor, got shape \(1, 2\)"),
    (lambda: repeat_interleave(X, [1, 2], 0), TypeError, r"int or an integer Tensor, got list"),
    (lambda: repeat_interleave(X, 2.0), TypeError, r"got float"),
    (lambda: repeat_interleave(X, 2, 2), IndexOutOfRangeError, r"dimension 2 is out of range"),
    (lambda: repeat_interleave(mt.tensor(3.0), 2, 0), IndexOutOfRangeError, r"0-d input"),
    (lambda: repeat_interleave(X, 2, 0, output_size=5), ShapeError, r"expected 4 .*got 5"),
    (lambda: repeat_interleave(X, R([1, 2]), 0, output_size=4), ShapeError, r"expected 3 .*got 4"),
    (lambda: repeat_interleave(R([[1, 2]])), ShapeError, r"1-d tensor of repeats, got shape \(1, 2\)"),
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()


def test_errors_are_runtime_errors_as_in_pytorch():
    for call in (lambda: X.repeat(2), lambda: roll(X, (1, 2), (0,)), lambda: rot90(X, 1, (0, 0))):
        with pytest.raises(RuntimeError):
            call()
    with pytest.raises(IndexError):
        flip(X, (3,))
