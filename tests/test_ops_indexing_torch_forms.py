"""Index and assignment forms PyTorch accepts (issue 25): a Python ``range`` as an index
(``logprobs[range(n), Yb]``), and assigning a value with extra leading size-1 dims
(``L[0] = torch.ones(1, 3)`` into ``(2, 3)``)."""

import numpy as np
import pytest

import minitorch_ln as mt
from helpers import compare_with_torch, torch

RNG = np.random.default_rng(0)
A = RNG.standard_normal((5, 4))  # (5, 4)

RANGE_INDICES = [
    ("range", lambda lib, x: x[range(1, 4)]),
    ("range-step", lambda lib, x: x[range(4, 0, -2)]),
    ("range-and-list", lambda lib, x: x[range(3), [0, 3, 1]]),
    ("range-and-tensor", lambda lib, x: x[range(5), lib.tensor([1, 0, 3, 3, 2])]),
    ("slice-and-range", lambda lib, x: x[:, range(2)]),
    ("empty-range", lambda lib, x: x[range(0)]),
]


@pytest.mark.parametrize("name,index", RANGE_INDICES, ids=[c[0] for c in RANGE_INDICES])
def test_range_index_matches_torch(name, index):
    compare_with_torch(lambda x: index(mt, x), lambda x: index(torch, x), [A.copy()])


def test_range_index_assignment_matches_torch():
    # lecture 4 ("backprop ninja"): dlogprobs[range(n), Yb] = -1.0/n
    ours, theirs = mt.zeros(5, 4), torch.zeros(5, 4)
    ours[range(5), [0, 1, 2, 3, 0]] = -0.2
    theirs[range(5), [0, 1, 2, 3, 0]] = -0.2
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_range_out_of_bounds_is_an_index_error():
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 5"):
        mt.tensor(A)[range(6)]


@pytest.mark.parametrize("value_shape", [(1, 4), (1, 1, 4), (1, 1), (4,), ()])
def test_assignment_drops_leading_size_one_dims(value_shape):
    v = RNG.standard_normal(value_shape)

    def assign(lib, x, val):
        y = x * 1.0
        y[2] = val
        return y

    compare_with_torch(lambda x, val: assign(mt, x, val), lambda x, val: assign(torch, x, val), [A.copy(), v])


def test_assignment_with_leading_dims_into_a_slice():
    ours, theirs = mt.zeros(3, 4), torch.zeros(3, 4)
    ours[1:3] = mt.ones(1, 2, 4)
    theirs[1:3] = torch.ones(1, 2, 4)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("value_shape", [(2, 4), (2, 1, 4), (1, 3)])
def test_assignment_of_a_value_that_does_not_fit_raises(value_shape):
    with pytest.raises(RuntimeError):
        torch.zeros(5, 4)[2] = torch.ones(value_shape)
    with pytest.raises(RuntimeError, match="cannot be broadcast to the indexed shape"):
        mt.zeros(5, 4)[2] = mt.ones(value_shape)
