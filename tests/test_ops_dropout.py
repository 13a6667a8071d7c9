"""Dropout (``ops/dropout.py``): the mask, its scaling, the gradient, seeds, edge cases."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck

from helpers import t64, torch

F = torch.nn.functional


def test_dropout_mask_scaling_and_gradient():
    x = mt.ones(1000, dtype="float64", requires_grad=True)
    y = mt.dropout(x, p=0.25)
    vals = np.unique(y.detach().numpy())
    np.testing.assert_allclose(vals, [0.0, 1.0 / 0.75])
    kept = y.detach().numpy() != 0
    assert 0.65 < kept.mean() < 0.85
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.75)  # the gradient goes through the same mask


def test_dropout_gradcheck_with_fixed_mask():
    x = t64(np.arange(1.0, 7.0).reshape(2, 3))

    def fn(t):
        mt.manual_seed(3)  # the same mask on every call of the finite differences
        return mt.dropout(t, 0.5)

    assert gradcheck(fn, (x,))


def test_dropout_is_reproducible_with_manual_seed():
    mt.manual_seed(7)
    a = mt.dropout(mt.ones(50), 0.5).numpy()
    mt.manual_seed(7)
    b = mt.dropout(mt.ones(50), 0.5).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, mt.dropout(mt.ones(50), 0.5).numpy())


@given(st.floats(0.0, 1.0), st.booleans())
def test_property_dropout_values_are_zero_or_scaled(p, training):
    x = mt.ones(64, dtype="float64")
    y = mt.dropout(x, p, training).numpy()
    if not training or p == 0:
        np.testing.assert_array_equal(y, 1.0)
    elif p == 1:
        np.testing.assert_array_equal(y, 0.0)
    else:
        assert np.all((y == 0) | np.isclose(y, 1 / (1 - p)))


def test_dropout_edge_cases_and_bad_input():
    x = mt.randn(3, 4)
    assert mt.dropout(x, 0.5, training=False) is x
    assert np.all(mt.dropout(x, 1.0).numpy() == 0)
    assert mt.dropout(x.double(), 0.3).dtype == np.float64
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="probability p must be between 0 and 1"):
            mt.dropout(x, p)
    with pytest.raises(TypeError, match="expected a floating point tensor"):
        mt.dropout(mt.tensor([1, 2]), 0.5)


