"""``for row in t`` / ``list(t)`` (``Tensor.__iter__``: ``t[i]`` per row along dim 0, as PyTorch's unbind).

Values, views that share storage and the version counter, gradients through the rows (gradcheck on contiguous
and non-contiguous leaves, PyTorch comparison through the one helper), a Hypothesis property against indexing,
and the 0-d TypeError.
"""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis.extra import numpy as hnp
from strategies import arrays

import minitorch_ln as mt


def test_rows_have_the_values_and_shapes_of_torch(rng):
    x = rng.standard_normal((4, 3, 2)).astype(np.float32)
    ours, theirs = list(mt.tensor(x)), list(torch.from_numpy(x))
    assert len(ours) == len(theirs) == 4
    for o, t in zip(ours, theirs):
        assert o.shape == tuple(t.shape) and o.dtype == np.float32
        np.testing.assert_array_equal(o.numpy(), t.numpy())
    assert [r.item() for r in mt.tensor([3, 1, 2])] == [3, 1, 2]


def test_rows_are_views_sharing_storage_and_version():
    x = mt.zeros(3, 2)
    rows = list(x)
    rows[1].add_(5.0)  # writes through to x
    x[2, 0] = 7.0  # and x's writes show in the rows
    np.testing.assert_array_equal(x.numpy(), [[0, 0], [5, 5], [7, 0]])
    assert rows[2][0].item() == 7.0
    assert all(r._base is x for r in rows) and rows[0]._version is x._version
    assert np.shares_memory(rows[0].array, x.array)


def test_gradient_flows_through_the_rows_as_in_torch(rng):
    def ours(t):
        a, b, c = t
        return mt.stack([a * b, c.exp(), a])

    def theirs(t):
        a, b, c = t
        return torch.stack([a * b, c.exp(), a])

    compare_with_torch(ours, theirs, [rng.standard_normal((3, 4))])
    compare_with_torch(lambda t: sum(r.sum() for r in t), lambda t: sum(r.sum() for r in t),
                       [rng.standard_normal((5, 2)).astype(np.float32)])


def test_gradcheck_contiguous_and_noncontiguous(rng):
    gradcheck_noncontiguous(lambda t: mt.stack([r * (i + 1) for i, r in enumerate(t)], 1),
                            [rng.standard_normal((3, 4))], gg=True)


def test_rows_of_a_view_with_history_follow_in_place_changes():
    w = mt.ones(2, 3, requires_grad=True)
    y = w * 2.0
    rows = list(y)
    y.mul_(3.0)  # the rows' base changed after they were taken: their history follows
    rows[0].sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[6, 6, 6], [0, 0, 0]])


def test_iteration_over_a_0d_tensor_raises_as_torch():
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(mt.tensor(1.0))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(torch.tensor(1.0))
    assert list(mt.zeros(0, 3)) == []


@settings(max_examples=40, deadline=None)
@given(a=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4).flatmap(arrays))
def test_property_rows_equal_indexing(a):
    x = mt.tensor(a, requires_grad=True)
    rows = list(x)
    assert len(rows) == a.shape[0]
    for i, r in enumerate(rows):
        np.testing.assert_array_equal(r.detach().numpy(), a[i])
        assert r.requires_grad and r.shape == a.shape[1:]
    mt.stack(rows).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(a))
