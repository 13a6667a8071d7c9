"""torch.signal.windows (minitorch_ln/signal/windows.py): every window against PyTorch (float64 and float32,
symmetric and periodic, M = 0..9) and SciPy, a Hypothesis property, bad input. Windows are factories of
leaves (no inputs to differentiate): there is no gradient to check."""

import numpy as np
import pytest
import scipy.signal.windows as ssw
from helpers import assert_close, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.signal import windows

KW = {"exponential": {"tau": 2.5}, "gaussian": {"std": 1.7}, "kaiser": {"beta": 8.0},
      "general_cosine": {"a": [0.46, 0.23, 0.31]}, "general_hamming": {"alpha": 0.6}}
NAMES = sorted(windows.__all__)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("sym", [True, False])
def test_matches_torch(name, dtype, sym):
    for M in range(10):
        ours = getattr(windows, name)(M, sym=sym, dtype=dtype, **KW.get(name, {}))
        theirs = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype), **KW.get(name, {}))
        assert ours.dtype == np.dtype(dtype) and ours.shape == (M,)
        assert_close(ours, theirs, np.dtype(dtype), f"{name}(M={M}, sym={sym})")


@pytest.mark.parametrize("name,scipy_args", [("hann", ()), ("hamming", ()), ("blackman", ()), ("bartlett", ()),
                                             ("nuttall", ()), ("cosine", ()), ("kaiser", (8.0,)), ("gaussian", (1.7,))])
def test_matches_scipy(name, scipy_args):
    for M in (1, 2, 5, 8):
        for sym in (True, False):
            ours = getattr(windows, name)(M, sym=sym, dtype="float64", **KW.get(name, {})).numpy()
            np.testing.assert_allclose(ours, getattr(ssw, name)(M, *scipy_args, sym=sym), atol=1e-12)


def test_defaults_and_edges():
    assert windows.hann(4).dtype == mt.float32  # the default dtype, as PyTorch
    np.testing.assert_allclose(windows.hann(5, dtype="float64").numpy(), [0.0, 0.5, 1.0, 0.5, 0.0], atol=1e-15)
    assert windows.kaiser(1).tolist() == [1.0] and windows.bartlett(0).shape == (0,)
    assert windows.gaussian(3, requires_grad=True).requires_grad


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(NAMES), M=st.integers(2, 40))
def test_property_symmetric_windows_are_palindromes_and_periodic_ones_are_their_prefix(name, M):
    w = getattr(windows, name)(M, dtype="float64", **KW.get(name, {})).numpy()
    np.testing.assert_allclose(w, w[::-1], atol=1e-12)
    if name != "exponential":  # exponential's periodic center is M/2, its symmetric one (M-1)/2
        periodic = getattr(windows, name)(M, sym=False, dtype="float64", **KW.get(name, {})).numpy()
        longer = getattr(windows, name)(M + 1, dtype="float64", **KW.get(name, {})).numpy()
        np.testing.assert_allclose(periodic, longer[:M], atol=1e-12)


def test_bad_input_names_what_came():
    with pytest.raises(ValueError, match="hann requires non-negative window length, got M=-1"):
        windows.hann(-1)
    with pytest.raises(ValueError, match="expects float32 or float64 dtypes, got: int64"):
        windows.hamming(3, dtype="int64")
    with pytest.raises(ValueError, match="Tau must be positive, got: 0"):
        windows.exponential(3, tau=0)
    with pytest.raises(ValueError, match="Center must be None for symmetric windows"):
        windows.exponential(3, center=1.0)
    with pytest.raises(ValueError, match="Coefficients cannot be empty"):
        windows.general_cosine(3, a=[])
    with pytest.raises(TypeError, match="window length M must be an int, got 2.5"):
        windows.cosine(2.5)
