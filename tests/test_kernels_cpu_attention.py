"""The fused attention loops (``kernels/cpu_attention.py``, not wired into the ops yet) against the
readable form they replace: ``ops/attention.py``'s batched matmuls, softmax and backward arrays.

Causal and not, query and key lengths equal or not (also across the ``_W`` key runs), feature
sizes that are not a power of two, ``S = 0``, large scores (the softmax's max subtraction), the
gradient against float64 finite differences, threads, and the bad-input errors.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minitorch_ln import kernels
from minitorch_ln.ops.attention import _attention_backward_arrays, _softmax_rows_, causal_mask

cpu = pytest.importorskip("minitorch_ln.kernels.cpu_attention")
if not cpu.AVAILABLE:  # pragma: no cover
    pytest.skip("Numba is not installed", allow_module_level=True)


def composed(q, k, v, do, scale, causal):
    """``(o, (dq, dk, dv))`` by the ops' own array code (the float64 oracle)."""
    q, k, v, do = (a.astype(np.float64) for a in (q, k, v, do))
    s = np.matmul(q * scale, np.swapaxes(k, -1, -2))  # (N, L, S)
    if causal:
        s = s + causal_mask(q.shape[1], k.shape[1], s)
    p = _softmax_rows_(s)
    o = np.matmul(p, v)
    return o, _attention_backward_arrays(q, k, v, p, None, scale, do, None, None)[:3]


def inputs(rng, N, L, S, D, Dv, spread=1.0):
    q = (rng.standard_normal((N, L, D)) * spread).astype(np.float32)
    k = (rng.standard_normal((N, S, D)) * spread).astype(np.float32)
    v = rng.standard_normal((N, S, Dv)).astype(np.float32)
    do = rng.standard_normal((N, L, Dv)).astype(np.float32)
    return q, k, v, do


def check(q, k, v, do, scale, causal, rtol=2e-5):
    o, lse = cpu.attention_fwd(q, k, v, scale, causal)
    grads = cpu.attention_bwd(do, q, k, v, o, lse, scale, causal)
    o_ref, grads_ref = composed(q, k, v, do, scale, causal)
    for got, want in ((o, o_ref), *zip(grads, grads_ref)):
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max())))
    return o, lse


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("N,L,S,D,Dv", [(8, 64, 64, 32, 32), (3, 70, 70, 24, 40), (2, 17, 130, 16, 8), (2, 130, 17, 5, 7),
                                        (1, 1, 1, 1, 1)])
def test_equals_the_composed_form(N, L, S, D, Dv, causal, rng):
    q, k, v, do = inputs(rng, N, L, S, D, Dv)
    _, lse = check(q, k, v, do, 1.0 / math.sqrt(D), causal)
    # lse is the rows' log-sum-exp of the scores it attended to
    s = np.matmul(q.astype(np.float64) / math.sqrt(D), np.swapaxes(k, -1, -2).astype(np.float64))
    if causal:
        s = s + causal_mask(L, S, s)
    np.testing.assert_allclose(lse, np.log(np.exp(s).sum(-1)), rtol=1e-5, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 80), st.integers(1, 80), st.integers(1, 20), st.integers(1, 20),
       st.booleans(), st.integers(0, 2**31 - 1))
def test_any_sizes(N, L, S, D, Dv, causal, seed):
    q, k, v, do = inputs(np.random.default_rng(seed), N, L, S, D, Dv)
    check(q, k, v, do, 1.0 / math.sqrt(D), causal)


def test_large_scores_do_not_overflow(rng):
    q, k, v, do = inputs(rng, 2, 40, 40, 16, 16, spread=30.0)  # scores in the hundreds: exp would overflow
    o, lse = check(q, k, v, do, 0.25, True, rtol=1e-4)
    assert np.all(np.isfinite(o)) and np.all(np.isfinite(lse))


def test_no_keys_gives_zeros(rng):
    q, _, _, do = inputs(rng, 2, 5, 1, 4, 3)
    k, v = np.zeros((2, 0, 4), np.float32), np.zeros((2, 0, 3), np.float32)
    o, lse = cpu.attention_fwd(q, k, v, 0.5, causal=False)
    assert np.array_equal(o, np.zeros((2, 5, 3), np.float32)) and np.all(lse == -np.inf)
    dq, dk, dv = cpu.attention_bwd(do, q, k, v, o, lse, 0.5, causal=False)
    assert np.array_equal(dq, np.zeros_like(q)) and dk.shape == k.shape and dv.shape == v.shape


def test_gradient_against_finite_differences(rng):
    """Float64 central differences of ``Σ do ⊙ o`` through the composed form, at a few entries."""
    q, k, v, do = inputs(rng, 1, 9, 9, 4, 3)
    scale = 0.5
    o, lse = cpu.attention_fwd(q, k, v, scale)
    grads = cpu.attention_bwd(do, q, k, v, o, lse, scale)
    arrays = [a.astype(np.float64) for a in (q, k, v)]
    h = 1e-6
    for which in range(3):
        for idx in [(0, 0, 0), (0, 4, 2), (0, 8, 1)]:
            plus, minus = [a.copy() for a in arrays], [a.copy() for a in arrays]
            plus[which][idx] += h
            minus[which][idx] -= h
            f = [float((composed(*xs, do, scale, True)[0] * do).sum()) for xs in (plus, minus)]
            assert abs((f[0] - f[1]) / (2 * h) - grads[which][idx]) < 1e-4


def test_threads_change_no_bit(rng, thread_any_size):
    q, k, v, do = inputs(rng, 7, 33, 33, 8, 8)
    threads = kernels.get_num_threads()
    try:
        kernels.set_num_threads(1)
        one = cpu.attention_fwd(q, k, v, 0.3), cpu.attention_bwd(do, q, k, v, *cpu.attention_fwd(q, k, v, 0.3), 0.3)
        kernels.set_num_threads(3)
        many = cpu.attention_fwd(q, k, v, 0.3), cpu.attention_bwd(do, q, k, v, *cpu.attention_fwd(q, k, v, 0.3), 0.3)
    finally:
        kernels.set_num_threads(threads)
    for a, b in zip((*one[0], *one[1]), (*many[0], *many[1])):
        np.testing.assert_array_equal(a, b)


def test_bad_inputs_raise():
    q = np.zeros((2, 4, 8), np.float32)
    with pytest.raises(ValueError, match="expected float32"):
        cpu.attention_fwd(q.astype(np.float64), q, q, 1.0)
    with pytest.raises(ValueError, match=r"expected q \(N, L, D\)"):
        cpu.attention_fwd(q, q[:, :, :4], q, 1.0)
    o, lse = cpu.attention_fwd(q, q, q, 1.0)
    with pytest.raises(ValueError, match="lse of shape"):
        cpu.attention_bwd(o, q, q, q, o, lse[:, :2], 1.0)
