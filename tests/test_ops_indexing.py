"""Indexing and joining: getitem, setitem_, cat, stack, split, chunk, triu, tril."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck

import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch

IDX = np.array([2, 0, 2])  # a repeated index: its gradients must add up
MASK = np.array([True, False, True])

# name, index for ours, index for torch
INDICES = [
    ("int", 1, 1),
    ("negative_int", -1, -1),
    ("slice", (slice(None), slice(1, 3)), (slice(None), slice(1, 3))),
    ("step_slice", (slice(None, None, 2), slice(0, 4, 3)), (slice(None, None, 2), slice(0, 4, 3))),
    ("none_ellipsis", (None, Ellipsis, 0), (None, Ellipsis, 0)),
    ("int_array_repeated", IDX, torch.from_numpy(IDX)),
    ("list", [0, 0, 1], [0, 0, 1]),
    ("tensor_index", mt.tensor(IDX), torch.from_numpy(IDX)),
    ("bool_mask", MASK, torch.from_numpy(MASK)),
    ("bool_mask_2d", np.arange(12).reshape(3, 4) % 3 == 0, torch.from_numpy(np.arange(12).reshape(3, 4) % 3 == 0)),
    ("two_arrays", (IDX, np.array([1, 1, 3])), (torch.from_numpy(IDX), torch.tensor([1, 1, 3]))),
    ("mixed", (slice(None), IDX[:2], None), (slice(None), torch.from_numpy(IDX[:2]), None)),
]


@pytest.mark.parametrize("name,ours,theirs", INDICES, ids=[i[0] for i in INDICES])
def test_getitem_gradcheck(name, ours, theirs, rng):
    x = t64(rng.standard_normal((3, 4)))
    assert gradcheck(lambda t: t[ours], (x,))


def test_getitem_gradgradcheck(rng):
    x = t64(rng.standard_normal((3, 4)))
    assert gradgradcheck(lambda t: t[IDX] * t[IDX], (x,))
    assert gradgradcheck(lambda t: t[:, 1:3] * t[:, :2], (x,))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs", INDICES, ids=[i[0] for i in INDICES])
def test_getitem_matches_torch(name, ours, theirs, dtype, rng):
    compare_with_torch(lambda t: t[ours], lambda t: t[theirs], [rng.standard_normal((3, 4)).astype(dtype)])


def test_repeated_indices_sum_their_gradients():
    x = t64([1.0, 2.0, 3.0])
    y = x[[0, 0, 2, 0]]
    y.backward(t64([1.0, 10.0, 100.0, 1000.0], False))
    np.testing.assert_array_equal(x.grad.numpy(), [1011.0, 0.0, 100.0])


@given(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4).flatmap(
    lambda s: st.tuples(S.arrays(s), hnp.basic_indices(s, allow_newaxis=True, allow_ellipsis=True))))
def test_property_basic_indexing_matches_numpy_and_is_a_view(a_index):
    a, index = a_index
    x = t64(a)
    y = x[index]
    np.testing.assert_array_equal(y.detach().numpy(), a[index])
    if y.array.base is not None:
        assert y._version is x._version
    y.sum().backward()
    expect = np.zeros_like(a)
    expect[index] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expect)


@given(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4).flatmap(
    lambda s: st.tuples(S.arrays(s), hnp.integer_array_indices(s, result_shape=hnp.array_shapes(max_dims=2, max_side=4)))))
def test_property_integer_array_indexing_matches_torch(a_index):
    a, index = a_index
    compare_with_torch(lambda t: t[index], lambda t: t[tuple(torch.from_numpy(i) for i in index)], [a])


def test_basic_index_is_a_view_sharing_the_version_counter():
    x = mt.zeros(3, 4)
    row = x[1]
    row.add_(1.0)  # writes through to x
    assert x[1].tolist() == [1.0] * 4 and x._version[0] == 1
    y = t64([1.0, 2.0])
    z = y * 1.0
    saved = z[0:1]
    w = (saved * saved).sum()
    z.mul_(2.0)  # saved shares z's counter
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        w.backward()


def test_getitem_bad_indices():
    x = mt.ones(3, 4)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 1 with size 4"):
        x[:, [0, 7]]
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 1"):
        x[0, mt.tensor([-5])]
    with pytest.raises(IndexError, match="too many indices for a tensor of dimension 2"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match=r"boolean mask of shape \(2,\) does not match.*\(3,\)"):
        x[np.array([True, False])]
    with pytest.raises(IndexError, match="must be integer or bool, got dtype float"):
        x[mt.tensor([0.0])]
    with pytest.raises(TypeError, match="unsupported index 'a'"):
        x["a"]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]


# ---------------------------------------------------------------------------------------- setitem


def test_setitem_records_the_graph():
    x = t64([1.0, 2.0, 3.0, 4.0])
    v = t64([10.0, 20.0])
    y = x * 1.0
    y[1:3] = v * 2.0
    (y * t64([1.0, 2.0, 3.0, 4.0], False)).sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), [1.0, 20.0, 40.0, 4.0])
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 0.0, 4.0])  # overwritten places get no gradient
    np.testing.assert_array_equal(v.grad.numpy(), [4.0, 6.0])


def test_setitem_gradcheck_and_torch(rng):
    def ours(x, v):
        y = x * 1.0
        y[:, [0, 2]] = v
        return y

    def theirs(x, v):
        y = x * 1.0
        y[:, [0, 2]] = v
        return y

    x, v = rng.standard_normal((2, 4)), rng.standard_normal((2, 1))
    assert gradcheck(ours, (t64(x), t64(v)))
    for dtype in (np.float64, np.float32):
        compare_with_torch(ours, theirs, [x.astype(dtype), v.astype(dtype)])


# PyTorch selects with the ints first, so an int is never an advanced index: index tensors separated from
# an int by a slice keep their axes where they stand. NumPy counts the int as advanced too and puts the
# axes first: x[1, :, 3:11:2, idx, 0:2] on (2, 5, 6, 5, 3, 4) is (5, 2, 5, 2, 4) in PyTorch, and NumPy's
# (5, 5, 2, 2, 4) mixed the idx axis with dim 1's.
INTS_AND_TENSORS = [
    (lambda m: (1, slice(None), slice(3, 11, 2), m.tensor([0, 2, 4, 1, 3]), slice(0, 2)), (5, 2, 5, 2, 4)),
    (lambda m: (-2, slice(None), [2, 5, 3], m.tensor([0, 2, 1])), (5, 3, 3, 4)),  # adjacent tensors in place
    (lambda m: (m.tensor(0), None, m.tensor([[1, 4], [0, 2]])), (1, 2, 2, 6, 5, 3, 4)),  # a 0-d tensor is an int
    (lambda m: (0, m.tensor([1, 3]), slice(None), m.tensor([4, 0])), (2, 6, 3, 4)),  # separated: axes first
    (lambda m: (m.tensor([1, 0]), 2, m.tensor([5, 3]), Ellipsis, 1), (2, 5, 3)),  # an int between: in place
]


@pytest.mark.parametrize("key,shape", INTS_AND_TENSORS)
def test_ints_select_before_index_tensors_as_torch_get_set_and_gradients(key, shape, rng):
    x = rng.standard_normal((2, 5, 6, 5, 3, 4))
    compare_with_torch(lambda t: t[key(mt)], lambda t: t[key(torch)], [x])  # values, shape, random-grad backward
    assert mt.tensor(x)[key(mt)].shape == shape
    v = rng.standard_normal(shape)

    def put(t, w, lib):
        y = t * 1.0
        y[key(lib)] = w * 2.0
        return y

    compare_with_torch(lambda t, w: put(t, w, mt), lambda t, w: put(t, w, torch), [x, v])
    compare_with_torch(lambda t, w: put(t, w, mt), lambda t, w: put(t, w, torch), [x, v[-1]])  # broadcast value
    with mt.no_grad():
        y = mt.tensor(x)
        y[key(mt)] = mt.tensor(v)
    expect = torch.from_numpy(x.copy())
    expect[key(torch)] = torch.from_numpy(v)
    np.testing.assert_array_equal(y.numpy(), expect.numpy())
    assert gradcheck(lambda t: t[key(mt)] * 1.5, (t64(rng.standard_normal((2, 5, 6, 5, 3, 4))),))


def test_setitem_without_grad_and_bad_values():
    x = mt.zeros(2, 3)
    x[0] = 5
    x[1, mt.tensor([True, False, True])] = mt.tensor([1.0, 2.0])
    x[..., 1] = 7.5
    np.testing.assert_array_equal(x.numpy(), [[5, 7.5, 5], [1, 7.5, 2]])
    with pytest.raises(ValueError, match=r"value of shape \(4,\) cannot be broadcast to the indexed shape \(3,\)"):
        x[0] = mt.ones(4)
    leaf = mt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        leaf[0] = 2.0


# ---------------------------------------------------------------------------------------- cat, stack, split, chunk

JOIN = [
    ("cat0", lambda a, b: mt.cat([a, b]), lambda a, b: torch.cat([a, b])),
    ("cat_last", lambda a, b: mt.cat([a, b, a], dim=-1), lambda a, b: torch.cat([a, b, a], dim=-1)),
    ("stack", lambda a, b: mt.stack([a, b[:2]], dim=1), lambda a, b: torch.stack([a, b[:2]], dim=1)),
    ("stack_last", lambda a, b: mt.stack([a, b[:2]], dim=-1), lambda a, b: torch.stack([a, b[:2]], dim=-1)),
    ("split_int", lambda a, b: mt.split(b, 2), lambda a, b: torch.split(b, 2)),
    ("split_sizes", lambda a, b: b.split([1, 2], dim=1), lambda a, b: b.split([1, 2], dim=1)),
    ("chunk", lambda a, b: b.chunk(2), lambda a, b: b.chunk(2)),
    ("chunk_uneven", lambda a, b: b.chunk(2, dim=1), lambda a, b: b.chunk(2, dim=1)),
    ("triu", lambda a, b: a.triu(), lambda a, b: a.triu()),
    ("tril_offset", lambda a, b: b.tril(-1) + b.triu(2), lambda a, b: b.tril(-1) + b.triu(2)),
]


def _join_inputs(rng, dtype=np.float64):
    return rng.standard_normal((2, 3)).astype(dtype), rng.standard_normal((3, 3)).astype(dtype)


@pytest.mark.parametrize("name,ours,theirs", JOIN, ids=[j[0] for j in JOIN])
def test_join_split_gradcheck(name, ours, theirs, rng):
    a, b = _join_inputs(rng)
    if name.startswith(("cat_last", "stack")):
        b = b[:2]
    assert gradcheck(ours, (t64(a), t64(b)))


def test_join_split_gradgradcheck(rng):
    a, b = _join_inputs(rng)
    assert gradgradcheck(lambda x, y: mt.cat([x * y[:2], y]), (t64(a), t64(b)))
    assert gradgradcheck(lambda x: tuple(p * p for p in x.split([1, 2], dim=1)), (t64(b),))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs", JOIN, ids=[j[0] for j in JOIN])
def test_join_split_matches_torch(name, ours, theirs, dtype, rng, device):
    a, b = _join_inputs(rng, dtype)
    if name.startswith(("cat_last", "stack")):
        b = b[:2]
    compare_with_torch(ours, theirs, [a, b], device=device)


def test_triangles_of_batches(rng):
    a = rng.standard_normal((2, 3, 4))
    compare_with_torch(lambda x: x.triu(1), lambda x: x.triu(1), [a])
    compare_with_torch(lambda x: mt.tril(x, -2), lambda x: torch.tril(x, -2), [a])


@given(S.nonscalar_shapes.flatmap(lambda s: st.tuples(S.arrays(s), st.integers(0, len(s) - 1), st.integers(1, 6))))
def test_property_split_then_cat_is_identity_and_chunk_matches_torch(a_dim_n):
    a, dim, n = a_dim_n
    x = t64(a)
    parts = x.chunk(n, dim)
    np.testing.assert_array_equal(mt.cat(list(parts), dim).detach().numpy(), a)
    assert [p.shape for p in parts] == [tuple(p.shape) for p in torch.from_numpy(a).chunk(n, dim)]
    compare_with_torch(lambda t: t.split(n, dim), lambda t: t.split(n, dim), [a])


def test_cat_promotes_dtypes_and_stack_of_scalars():
    assert mt.cat([mt.ones(2), mt.ones(2, dtype="float64")]).dtype == np.float64
    s = mt.stack([mt.tensor(1.0), mt.tensor(2.0)])
    assert s.shape == (2,) and s.tolist() == [1.0, 2.0]


def test_join_bad_input():
    with pytest.raises(ValueError, match=r"tensor 1 has shape \(2, 4\).*tensor 0's shape \(2, 3\).*except dim 0"):
        mt.cat([mt.ones(2, 3), mt.ones(2, 4)])
    with pytest.raises(ValueError, match=r"stack: tensor 1 has shape \(3,\) but tensor 0 has \(2,\)"):
        mt.stack([mt.ones(2), mt.ones(3)])
    with pytest.raises(ValueError, match="non-empty"):
        mt.cat([])
    with pytest.raises(IndexError, match="out of range"):
        mt.cat([mt.ones(2), mt.ones(2)], dim=1)
    with pytest.raises(ValueError, match=r"sizes \[1, 1\] must be non-negative and sum to 3"):
        mt.ones(3).split([1, 1])
    with pytest.raises(ValueError, match="split_size must be a positive integer"):
        mt.ones(3).split(0)
    with pytest.raises(ValueError, match="chunks must be a positive integer"):
        mt.ones(3).chunk(0)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        mt.ones(3).triu()
    with pytest.raises(TypeError, match="expected a sequence of Tensors"):
        mt.cat([mt.ones(2), [1.0, 2.0]])


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("name,ours,theirs", INDICES, ids=[i[0] for i in INDICES])
def test_getitem_gradcheck_noncontiguous_leaf(name, ours, theirs, rng):
    gradcheck_noncontiguous(lambda t: t[ours] * t[ours], [rng.standard_normal((3, 4))], gg=True)


@pytest.mark.parametrize("name,ours,theirs", JOIN, ids=[j[0] for j in JOIN])
def test_join_split_gradcheck_noncontiguous_leaves(name, ours, theirs, rng):
    a, b = _join_inputs(rng)
    if name.startswith(("cat_last", "stack")):
        b = b[:2]
    gradcheck_noncontiguous(ours, [a, b])


def test_setitem_gradcheck_noncontiguous_leaves(rng):
    def ours(x, v):
        y = x * 1.0
        y[:, [0, 2]] = v
        return y

    gradcheck_noncontiguous(ours, [rng.standard_normal((2, 4)), rng.standard_normal((2, 1))], gg=True)
