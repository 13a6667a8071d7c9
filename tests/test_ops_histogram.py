"""``histc`` and ``histogram`` against PyTorch (issue 25): counts exact, edges bit for bit, dtypes and
errors as PyTorch's. Neither is differentiable here (PyTorch has no derivative for either)."""

import numpy as np
import pytest

import minitorch_ln as mt
from helpers import torch

RNG = np.random.default_rng(0)
DATA = {
    "normal": RNG.standard_normal(1000),
    "uniform": RNG.uniform(0, 1, 999),
    "rounded": np.round(RNG.standard_normal(500), 1),  # many values on bin edges
    "constant": np.array([1.0, 1.0]),
    "edges": np.array([0.1, 0.2, 0.3, 0.7, 0.9, 1.0, 0.0, -0.0, np.nan, np.inf, -np.inf]),
    "empty": np.zeros(0),
    "2d": RNG.standard_normal((7, 9)),
}
DTYPES = ["float32", "float64"]


def _pair(data, dtype):
    return mt.tensor(data, dtype=getattr(mt, dtype)), torch.tensor(data, dtype=getattr(torch, dtype))


def _same(ours, theirs, exact=True):
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert tuple(ours.shape) == tuple(theirs.shape)
    if exact:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    else:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6 if ours.dtype == np.float32 else 1e-13)


HISTC = [
    ("default", {}),
    ("bins", {"bins": 7}),
    ("range", {"bins": 10, "min": -0.5, "max": 0.5}),
    ("range-ints", {"bins": 3, "min": 0, "max": 1}),
    ("one-bin", {"bins": 1, "min": -1, "max": 1}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("data", [d for d in DATA if d not in ("edges", "empty")])
@pytest.mark.parametrize("name,kw", HISTC, ids=[c[0] for c in HISTC])
def test_histc_matches_torch(name, kw, data, dtype):
    x, t = _pair(DATA[data], dtype)
    _same(mt.histc(x, **kw), torch.histc(t, **kw))
    _same(x.histc(**kw), t.histc(**kw))


@pytest.mark.parametrize("dtype", DTYPES)
def test_histc_skips_values_outside_the_range_and_nan(dtype):
    x, t = _pair(DATA["edges"], dtype)
    _same(mt.histc(x, bins=4, min=0, max=1), torch.histc(t, bins=4, min=0, max=1))


HISTOGRAM = [
    ("int-bins", lambda lib, x: lib.histogram(x, 10)),
    ("default-bins", lambda lib, x: lib.histogram(x)),
    ("range", lambda lib, x: lib.histogram(x, bins=4, range=(0.0, 1.0))),
    ("edges", lambda lib, x: lib.histogram(x, lib.tensor([-1.0, 0.0, 0.3, 2.0], dtype=x.dtype))),
    ("method", lambda lib, x: x.histogram(5)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("data", [d for d in DATA if d not in ("edges", "empty")])
@pytest.mark.parametrize("name,call", HISTOGRAM, ids=[c[0] for c in HISTOGRAM])
def test_histogram_matches_torch(name, call, data, dtype):
    x, t = _pair(DATA[data], dtype)
    ours, theirs = call(mt, x), call(torch, t)
    _same(ours.hist, theirs.hist)
    _same(ours.bin_edges, theirs.bin_edges)
    hist, edges = ours  # a named pair, as torch.return_types.histogram
    assert hist is ours.hist and edges is ours.bin_edges


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("density", [False, True])
def test_histogram_weight_and_density(dtype, density):
    x, t = _pair(DATA["normal"], dtype)
    ours = mt.histogram(x, 3, range=(0.0, 1.0), weight=x.abs(), density=density)
    theirs = torch.histogram(t, 3, range=(0.0, 1.0), weight=t.abs(), density=density)
    _same(ours.hist, theirs.hist, exact=False)  # float sums: PyTorch adds per-thread partial histograms
    _same(ours.bin_edges, theirs.bin_edges)


def test_histograms_record_no_graph():
    x = mt.tensor(DATA["normal"], requires_grad=True)
    assert not mt.histc(x, 5).requires_grad
    assert not mt.histogram(x, 5).hist.requires_grad


BAD = [
    ("int-input", lambda lib: lib.histc(lib.tensor([1, 2]), 3), NotImplementedError, "not implemented for"),
    ("int-histogram", lambda lib: lib.histogram(lib.tensor([1, 2]), 3), NotImplementedError, "not implemented for"),
    ("zero-bins", lambda lib: lib.histc(lib.tensor([1.0, 2.0]), 0), RuntimeError, "bins must be > 0"),
    ("negative-bins", lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), -1), RuntimeError, "bins must be > 0"),
    ("min-over-max", lambda lib: lib.histc(lib.tensor([1.0, 2.0]), 3, min=2, max=1), RuntimeError,
     "max must be larger than min"),
    ("range-reversed", lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), 3, range=(2.0, 1.0)), RuntimeError,
     "min should not exceed max"),
    ("infinite", lambda lib: lib.histc(lib.tensor([1.0, float("inf")]), 3), RuntimeError, "is not finite"),
]


@pytest.mark.parametrize("name,call,exc,match", BAD, ids=[c[0] for c in BAD])
def test_bad_input_raises_as_torch(name, call, exc, match):
    with pytest.raises(exc):
        call(torch)
    with pytest.raises(exc, match=match):
        call(mt)


def test_bad_weight_and_bins_type():
    x = mt.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="weight should have the same shape as input"):
        mt.histogram(x, 2, weight=mt.tensor([1.0]))
    with pytest.raises(TypeError, match="bins must be an int"):
        mt.histc(x, 2.5)
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.histc([1.0, 2.0])


def test_histogram_of_an_empty_tensor_has_torchs_edges():
    # found by the op-database walk (sample 160): with no range, an empty input's edges span [0, 1] in
    # PyTorch ([0, 1/3, 2/3, 1] for 3 bins); they were [-0.5, 0.5] here, the widening of an equal-valued range
    for shape, bins in (((0,), 3), ((5, 0, 5), 1)):
        ours = mt.histogram(mt.zeros(shape, dtype=mt.float64), bins)
        theirs = torch.histogram(torch.zeros(shape, dtype=torch.float64), bins)
        np.testing.assert_array_equal(ours.bin_edges.numpy(), theirs.bin_edges.numpy())
        np.testing.assert_array_equal(ours.hist.numpy(), theirs.hist.numpy())
