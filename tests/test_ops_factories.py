"""scalar_tensor, empty_strided, empty_permuted, Tensor.new_empty_strided, fill, zero_, rsub (ops/factories.py):
PyTorch in float64/float32 (gradients under a random upstream gradient), gradcheck where there is one, a
Hypothesis property, bad input, edge values."""

import math

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fill_and_rsub_match_torch(dtype, rng):
    x, v = rng.standard_normal((3, 4)).astype(dtype), np.asarray(rng.standard_normal(), dtype=dtype)
    compare_with_torch(mt.fill, torch.fill, [x, v])  # d input = 0, d value = Σ upstream
    compare_with_torch(lambda x: mt.fill(x, 2.5), lambda x: torch.fill(x, 2.5), [x])
    y = rng.standard_normal((4,)).astype(dtype)
    compare_with_torch(lambda a, b: mt.rsub(a, b, alpha=2), lambda a, b: torch.rsub(a, b, alpha=2), [x, y])
    compare_with_torch(lambda a: mt.rsub(a, 3.0), lambda a: torch.rsub(a, 3.0), [x])


def test_gradcheck_fill_and_rsub(rng):
    gradcheck_noncontiguous(mt.fill, [rng.standard_normal((2, 3)), np.asarray(0.7)])
    gradcheck_noncontiguous(lambda a, b: mt.rsub(a, b, alpha=-1.5), [rng.standard_normal((2, 3)),
                                                                      rng.standard_normal((3,))], gg=True)


def test_factories_match_torch():
    for s, kw in ((3, {}), (True, {}), (2, {"dtype": "int32"}), (1e300, {"dtype": "float64"})):
        ours, theirs = mt.scalar_tensor(s, **kw), torch.scalar_tensor(s, **{k: getattr(torch, v) for k, v in kw.items()})
        assert ours.shape == () and str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
        assert ours.item() == theirs.item()
    assert mt.empty_strided((2, 3), (1, 2)).shape == (2, 3)
    assert mt.empty_permuted((2, 3, 4), (2, 0, 1), dtype="float64").dtype == np.float64
    t = mt.ones(2, dtype="int32").new_empty_strided((3, 1), (1, 1))
    assert t.shape == (3, 1) and t.dtype == np.int32
    assert mt.scalar_tensor(3, requires_grad=True).requires_grad


def test_edge_values():
    assert np.isnan(mt.scalar_tensor(math.nan).item()) and mt.scalar_tensor(-math.inf).item() == -math.inf
    out = mt.fill(mt.tensor([math.inf, math.nan]), 1.0)  # the old values never leak (no inf * 0)
    assert out.tolist() == [1.0, 1.0]
    assert mt.fill(mt.ones(2, dtype="int32"), 2).dtype == np.int32
    assert mt.fill(mt.ones(2, dtype="float16"), 70000.0).tolist() == [math.inf, math.inf]  # float16 overflows
    x = mt.ones(3)
    assert mt.zero_(x) is x and x.tolist() == [0.0, 0.0, 0.0]
    assert mt.rsub(mt.tensor([1, 2]), 5).tolist() == [4, 3]


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 4), max_size=4), value=st.floats(-1e6, 1e6))
def test_property_fill_is_full_like(shape, value):
    x = mt.zeros(*shape, dtype="float64")
    np.testing.assert_array_equal(mt.fill(x, value).numpy(), np.full(shape, value))


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but got tensor with 1"):
        mt.fill(mt.ones(2), mt.ones(1))
    with pytest.raises(RuntimeError, match=r"expected stride of length 2 .* got \(1,\)"):
        mt.empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError, match="physical_layout must be a permutation of 0..2"):
        mt.empty_permuted((2, 3, 4), (0, 0, 1))
    with pytest.raises(TypeError, match="argument 's' must be a real number, not str"):
        mt.scalar_tensor("1")
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        mt.zero_(mt.ones(2, requires_grad=True))
