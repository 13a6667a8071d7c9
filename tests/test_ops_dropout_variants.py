"""dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout and their modules: the same draws as PyTorch under
one seed (its CPU bernoulli stream), values by the formulas (hand-checked statistics), gradients, the
eval identity, Hypothesis over shapes, bad input."""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

F = torch.nn.functional
RNG = np.random.default_rng(29)
CASES = [("dropout1d", (3, 4, 5)), ("dropout1d", (4, 5)), ("dropout2d", (2, 3, 4, 5)), ("dropout2d", (3, 4, 5)),
         ("dropout3d", (2, 3, 2, 2, 2)), ("dropout3d", (3, 2, 2, 2)), ("alpha_dropout", (4, 5)),
         ("feature_alpha_dropout", (2, 3, 4))]


def _seeded(fn, seed=7):
    def run(*a):
        (mt if not isinstance(a[0], torch.Tensor) else torch).manual_seed(seed)
        return fn(*a)
    return run


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, shape", CASES)
def test_same_draws_values_and_gradients_as_torch_under_one_seed(name, shape, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare_with_torch(_seeded(lambda a: getattr(mt.nn.functional, name)(a, 0.3, training=True)),
                           _seeded(lambda a: getattr(F, name)(a, 0.3, training=True)), [x])


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d"])
def test_channel_dropout_drops_whole_channels_and_scales(name):
    x = np.ones((4, 8) + (3,) * int(name[7]))
    y = mt.nn.functional.__dict__[name](mt.tensor(x), 0.25).numpy()
    per_channel = y.reshape(4, 8, -1)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 1 / 0.75).all(-1))  # a channel is all in or all out


def test_alpha_dropout_keeps_mean_and_variance():
    # Klambauer et al. (2017): for standard-normal x, a·(x·keep + α'(1-keep)) + b has mean 0 and variance 1
    x = np.random.default_rng(0).standard_normal(400_000)
    mt.manual_seed(0)
    y = mt.nn.functional.alpha_dropout(mt.tensor(x), 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.var() - 1) < 0.01
    assert np.isclose(y.min(), y[np.isclose(y, y.min())][0])
    # dropped units all take one value, -α·a + b = a·(-α) + α·a·p with a = 1/sqrt((α²p + 1)(1-p))
    alpha, p = 1.7580993408473766, 0.2
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    assert np.isclose(np.sort(y)[0], -alpha * a + alpha * a * p) or (y == -alpha * a + alpha * a * p).any()


def test_eval_identity_p_one_and_gradcheck():
    x = mt.randn(2, 3, 4)
    for name in ("dropout1d", "dropout2d", "alpha_dropout", "feature_alpha_dropout"):
        assert getattr(mt.nn.functional, name)(x, 0.5, training=False) is x
    y = mt.nn.functional.dropout2d(mt.tensor([[[np.nan, 1.0]]]), 1.0)
    assert np.isnan(y.numpy()[0, 0, 0]) and y.numpy()[0, 0, 1] == 0  # x·0, as ATen: NaN stays NaN
    for name, shape in CASES[::2]:
        gradcheck_noncontiguous(_seeded(lambda a, name=name: getattr(mt.nn.functional, name)(a, 0.4, training=True)),
                                [RNG.standard_normal(shape)], gg=True)


def test_modules_follow_training_and_match_torch():
    x = RNG.standard_normal((2, 3, 4, 4))
    for cls in ("Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        ours, theirs = getattr(mt.nn, cls)(0.3), getattr(torch.nn, cls)(0.3)
        assert repr(ours) == repr(theirs)
        xi = x[0] if cls == "Dropout1d" else x
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compare_with_torch(_seeded(ours), _seeded(theirs), [xi])
        ours.eval()
        assert np.array_equal(ours(mt.tensor(xi)).numpy(), xi)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 5), st.floats(0, 1), st.integers(0, 2**31 - 1))
def test_property_same_as_torch(n, c, length, p, seed):
    x = np.random.default_rng(seed).standard_normal((n, c, length))
    for name in ("dropout1d", "feature_alpha_dropout", "alpha_dropout"):
        mt.manual_seed(seed)
        torch.manual_seed(seed)
        np.testing.assert_allclose(getattr(mt.nn.functional, name)(mt.tensor(x), p, training=True).numpy(),
                                   getattr(F, name)(torch.tensor(x), p, training=True).numpy(), rtol=1e-12,
                                   atol=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        mt.nn.functional.dropout2d(mt.zeros(1, 2, 2, 2), 1.5)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        mt.nn.functional.dropout1d(mt.zeros(1, 2, 2, 2))
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        mt.nn.functional.feature_alpha_dropout(mt.zeros(5), 0.5, training=True)
    with pytest.raises(TypeError):
        mt.nn.functional.alpha_dropout(mt.zeros(5, dtype=mt.int64), 0.5, training=True)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        mt.nn.Dropout3d(-0.1)
