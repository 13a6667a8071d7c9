"""The fast paths of small-tensor indexing (``N[a, b]``, ``P[i]`` with Python ints: issue 26) against the
general path they skip: the same normalized index, the same errors, the same values, views and
version counters."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitorch_ln as mt
from minitorch_ln.ops import indexing


@st.composite
def shape_and_ints(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    n = draw(st.integers(1, len(shape)))
    ints = tuple(draw(st.integers(-size - 2, size + 1)) for size in shape[:n])  # some out of range
    return shape, ints


def _no_fast_path():
    return mock.patch.object(indexing, "_plain_ints", lambda shape, index: None)


def _general(x, index):
    with _no_fast_path():
        return indexing._normalize_index(x, index)


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as exc:  # noqa: BLE001 - the class and message are compared
        return ("raises", type(exc), str(exc))


@settings(max_examples=200, deadline=None)
@given(case=shape_and_ints(), as_tuple=st.booleans())
def test_plain_int_index_normalizes_as_the_general_path(case, as_tuple):
    shape, ints = case
    x = mt.zeros(shape)
    index = ints if as_tuple or len(ints) > 1 else ints[0]
    fast = _outcome(lambda: indexing._normalize_index(x, index))
    general = _outcome(lambda: _general(x, index))
    assert fast == general


@settings(max_examples=100, deadline=None)
@given(case=shape_and_ints())
def test_plain_int_getitem_and_setitem_as_the_general_path(case):
    shape, ints = case
    if not all(-s <= i < s for i, s in zip(ints, shape)):
        return
    base = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    results = []
    for fast in (True, False):
        with (mock.patch.object(indexing, "_plain_ints", indexing._plain_ints) if fast else _no_fast_path()):
            x = mt.tensor(base)
            v = x[ints]
            x[ints] = -1.0
            results.append((v.numpy().copy(), x.numpy().copy(), x._version[0], v._base is x))
    (v1, x1, ver1, view1), (v2, x2, ver2, view2) = results
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_array_equal(x1, x2)
    assert ver1 == ver2 and view1 == view2


def test_fast_path_leaves_other_indices_to_the_general_path():
    shape = (3, 4)
    assert indexing._plain_ints(shape, (1, 2)) == (1, 2)
    assert indexing._plain_ints(shape, -1) == (-1,)
    for index in [(True, 1), (np.int64(1), 2), (1, slice(None)), (1, 2, 3), 1.0, (None, 1), [1, 2]]:
        assert indexing._plain_ints(shape, index) is None, index
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        indexing._plain_ints(shape, (0, 4))


def test_counting_loop_with_plain_ints_as_torch():
    # N[a, b] += 1, lecture 1's bigram counting: the fast path gives the counts a dict gives
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, 5, (200, 2)).tolist()
    ours, theirs = mt.zeros((5, 5), dtype=mt.int32), torch.zeros((5, 5), dtype=torch.int32)
    for a, b in pairs:
        ours[a, b] += 1
        theirs[a, b] += 1
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.sum().item() == 200
