"""histogramdd (ops/histogram_dd.py): PyTorch in float64/float32 with int, per-dim and edge-tensor bins, ranges,
weights and density; a Hypothesis property against NumPy; bad input; edge values. Counts: no gradient."""

import numpy as np
import pytest
from helpers import assert_close, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt


def _both(x, **kw):
    tkw = {k: ([torch.tensor(e) for e in v] if k == "bins" and isinstance(v, list) and isinstance(v[0], np.ndarray)
               else torch.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
    mkw = {k: ([mt.tensor(e) for e in v] if k == "bins" and isinstance(v, list) and isinstance(v[0], np.ndarray)
               else mt.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
    return mt.histogramdd(mt.tensor(x), **mkw), torch.histogramdd(torch.tensor(x), **tkw)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(dtype, rng):
    x = rng.standard_normal((50, 3)).astype(dtype)
    w = rng.uniform(0, 2, 50).astype(dtype)
    edges = [np.sort(rng.standard_normal(4)).astype(dtype) for _ in range(3)]
    for kw in ({"bins": 4}, {"bins": [2, 3, 4], "density": True}, {"bins": 3, "range": [-1, 1, -2, 2, 0, 1]},
               {"bins": edges, "weight": w}, {"bins": 5, "weight": w, "density": True}):
        (h, e), (th, te) = _both(x, **kw)
        assert_close(h, th, dtype, f"hist {kw}")
        for a, b in zip(e, te, strict=True):
            assert_close(a, b, dtype, f"edges {kw}")


def test_edge_values():
    h, e = mt.histogramdd(mt.tensor([[0.0, 0.0], [0.0, 0.0]]), bins=2)  # min == max: widened by 0.5
    assert e[0].tolist() == [-0.5, 0.0, 0.5] and h.numpy().sum() == 2
    h, _ = mt.histogramdd(mt.tensor([[np.nan, 0.0], [np.inf, 1.0], [0.5, 0.5]]), bins=2, range=[0, 1, 0, 1])
    assert h.numpy().sum() == 1  # NaN and inf points are outside every range
    h, e = mt.histogramdd(mt.zeros(0, 2), bins=3)
    assert h.shape == (3, 3) and e[1].tolist() == pytest.approx([0.0, 1 / 3, 2 / 3, 1.0])


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 30), d=st.integers(1, 3), bins=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_property_counts_match_numpy(n, d, bins, seed):
    x = np.random.default_rng(seed).standard_normal((n, d))
    h, _ = mt.histogramdd(mt.tensor(x), bins=bins, range=[-1.0, 1.0] * d)
    want, _ = np.histogramdd(x, bins=bins, range=[(-1.0, 1.0)] * d)
    np.testing.assert_array_equal(h.numpy(), want)


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match="expected 2 sequences of bin edges or bin counts for each of the 2"):
        mt.histogramdd(mt.ones(3, 2), bins=[2, 2, 2])
    with pytest.raises(RuntimeError, match="range should have 4 elements"):
        mt.histogramdd(mt.ones(3, 2), bins=2, range=[0, 1])
    with pytest.raises(RuntimeError, match=r"weight should have the shape \(3,\), got \(2,\)"):
        mt.histogramdd(mt.ones(3, 2), bins=2, weight=mt.ones(2))
    with pytest.raises(NotImplementedError, match="not implemented for int64"):
        mt.histogramdd(mt.tensor([[1, 2]]), bins=2)
    with pytest.raises(RuntimeError, match="min should not exceed max, but got min 1 max 0 for dimension 1"):
        mt.histogramdd(mt.ones(3, 2), bins=2, range=[0, 1, 1, 0])
