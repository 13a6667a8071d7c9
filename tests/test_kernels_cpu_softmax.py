"""The compiled softmax rows (``kernels/cpu_softmax.py``) against their NumPy form (``kernels/softmax.py``).

The attention op tests (``test_attention.py``) run on both CPU kernel choices against PyTorch; here
the two forms are held equal to rounding on any shape and scale, with masked (``-inf``) keys, the
rows whose maximum is not finite (all ``-inf``, ``+inf``, NaN) exactly as NumPy gives them, the
dtypes and layouts that must take the NumPy form, and the same result on one thread and two.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitorch_ln import kernels
from minitorch_ln.kernels import softmax as numpy_softmax

cpu = pytest.importorskip("minitorch_ln.kernels.cpu_softmax")
if not cpu.AVAILABLE:  # pragma: no cover
    pytest.skip("Numba is not installed", allow_module_level=True)

EPS32 = np.finfo(np.float32).eps


def both(fn_name, *arrays):
    """``(compiled, numpy)`` results of the in-place kernel ``fn_name`` on copies of ``arrays``."""
    out = []
    for impl in (cpu, numpy_softmax):
        copies = [a.copy() for a in arrays]
        out.append(getattr(impl, fn_name)(*copies))
    return out


@given(st.integers(1, 5), st.integers(1, 40), st.integers(1, 130), st.floats(1e-3, 1e3), st.booleans(),
       st.integers(0, 2**31 - 1))
def test_compiled_softmax_equals_numpy_form(B, L, S, spread, causal, seed):
    rng = np.random.default_rng(seed)
    s = (rng.standard_normal((B, L, S)) * spread).astype(np.float32)
    if causal:  # the attention's causal mask: keys after the query are -inf (a row may keep only one key)
        s[:, np.triu_indices(L, 1, S)[0], np.triu_indices(L, 1, S)[1]] = -np.inf
    ours, ref = both("softmax_rows_", s)
    # each probability to a few units of float32 rounding (the exp differs from NumPy's by at most
    # about 2 ulp, the sum is reordered), relative to the row's largest probability
    np.testing.assert_allclose(ours, ref, rtol=0, atol=8 * EPS32 * np.sqrt(S))
    masked = np.isneginf(s)
    assert np.all(ours[masked] == 0) and np.all(ref[masked] == 0)  # a masked key is exactly 0 in both
    # the compiled exp gives 0 below the smallest normal float32, where NumPy's keeps a subnormal:
    # a zero here is a probability under that (before the division by the row's sum >= 1)
    assert np.all(ref[ours == 0] < np.finfo(np.float32).tiny)
    assert np.all(ours[ref == 0] == 0)
    np.testing.assert_allclose(ours.sum(-1), 1.0, rtol=0, atol=8 * EPS32 * np.sqrt(S))


@given(st.integers(1, 4), st.integers(1, 30), st.integers(1, 100), st.integers(0, 2**31 - 1))
def test_compiled_softmax_backward_equals_numpy_form(B, L, S, seed):
    rng = np.random.default_rng(seed)
    p = numpy_softmax.softmax_rows_(rng.standard_normal((B, L, S)).astype(np.float32) * 3)
    dp = rng.standard_normal((B, L, S)).astype(np.float32)
    ours, ref = both("softmax_bwd_rows_", dp, p)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=8 * EPS32 * np.sqrt(S) * np.abs(dp).max())


def test_softmax_values_by_hand_and_extremes():
    # [0, ln 3] -> [1/4, 3/4]; a row of one key -> 1; scores of 1e30 apart -> a one-hot row;
    # huge equal scores -> uniform (the maximum is subtracted first, so nothing overflows)
    s = np.array([[0.0, np.log(3.0), -np.inf, -np.inf], [5.0, -np.inf, -np.inf, -np.inf],
                  [1e30, 0.0, -1e30, 0.0], [3e38, 3e38, 3e38, 3e38]], np.float32)
    p = cpu.softmax_rows_(s.copy())
    np.testing.assert_allclose(p, [[0.25, 0.75, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0.25] * 4], rtol=2e-7, atol=0)


def test_rows_whose_maximum_is_not_finite_are_the_numpy_forms():
    s = np.array([[-np.inf] * 5,                                   # fully masked: zeros
                  [0.0, np.inf, 1.0, -np.inf, 2.0],                # +inf: NaN everywhere (inf - inf), as PyTorch
                  [0.0, np.nan, 1.0, 2.0, 3.0],                    # NaN: NaN everywhere
                  [1.0, 2.0, 3.0, 4.0, 5.0]], np.float32)          # and an ordinary row beside them
    ours, ref = both("softmax_rows_", s)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_array_equal(ours[:3], ref[:3])                # the same arithmetic, bitwise
    np.testing.assert_array_equal(ours[0], 0.0)
    assert np.all(np.isnan(ours[1])) and np.all(np.isnan(ours[2]))
    np.testing.assert_allclose(ours[3], ref[3], rtol=4 * EPS32)


@pytest.mark.parametrize("S", [1, 3, 4, 5, 8, 9, 64])
def test_row_maximum_in_four_lanes_finds_every_position(S, rng):
    # the maximum runs in four interleaved lanes and a tail: a NaN, a +inf, or the largest value at each
    # position j (each lane, the tail, the first and last element) must be found as np.max finds it
    base = rng.standard_normal((S, S)).astype(np.float32)
    for special in (np.nan, np.inf, 50.0):
        s = base.copy()
        s[np.arange(S), np.arange(S)] = special                       # row j holds it at column j
        ours, ref = both("softmax_rows_", s)
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
        if special == 50.0:                                             # finite: the max is exp(0) / total
            np.testing.assert_allclose(ours, ref, rtol=4 * EPS32, atol=1e-30)
            assert np.all(np.argmax(ours, axis=1) == np.arange(S))
        else:
            np.testing.assert_array_equal(ours, ref)                   # the NumPy form's arithmetic


@pytest.mark.parametrize("make", [lambda a: a.astype(np.float64), lambda a: a.astype(np.float16),
                                  lambda a: np.swapaxes(a, -1, -2)])
def test_other_dtypes_and_layouts_take_the_numpy_form_bitwise(make, rng):
    base = rng.standard_normal((3, 7, 7)).astype(np.float32)
    ours, ref = cpu.softmax_rows_(make(base.copy())), numpy_softmax.softmax_rows_(make(base.copy()))
    np.testing.assert_array_equal(ours, ref)
    assert ours.dtype == make(base).dtype


def test_one_thread_and_two_give_the_same_bits(rng, thread_any_size):
    s = rng.standard_normal((8, 64, 300)).astype(np.float32)       # several blocks of rows
    before = kernels.get_num_threads()
    try:
        kernels.set_num_threads(1)
        one = cpu.softmax_rows_(s.copy())
        one_b = cpu.softmax_bwd_rows_(s.copy(), one)
        kernels.set_num_threads(2)
        two = cpu.softmax_rows_(s.copy())
        two_b = cpu.softmax_bwd_rows_(s.copy(), two)
    finally:
        kernels.set_num_threads(before)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one_b, two_b)


def test_the_attention_op_runs_the_kernel_chosen(monkeypatch, rng):
    # ops/attention.py picks kernels/cpu_softmax.py with the "numba" CPU kernels, and the NumPy form
    # with "numpy": the softmax rows of a float32 attention go through the one chosen
    import minitorch_ln.nn.functional as F  # noqa: PLC0415
    import minitorch_ln as mt  # noqa: PLC0415

    calls = []
    real = cpu._softmax_rows_loop
    monkeypatch.setattr(cpu, "_softmax_rows_loop", lambda *a: calls.append(1) or real(*a))
    q = mt.tensor(rng.standard_normal((2, 3, 5, 4)).astype(np.float32))
    before = kernels.get_cpu_kernels()
    try:
        for choice, expect in (("numba", True), ("numpy", False)):
            kernels.set_cpu_kernels(choice)
            calls.clear()
            F.scaled_dot_product_attention(q, q, q, is_causal=True)
            assert bool(calls) is expect, choice
    finally:
        kernels.set_cpu_kernels(before)
