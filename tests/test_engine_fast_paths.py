"""The per-op savings of issue 26's second session against the general paths they replace: NumPy's floating-point
errors switched off by ``ops/_fperr.py`` instead of ``np.errstate`` (same values, no warnings, the caller's state
restored), the backward engine's array sum of two gradients of one tensor (``engine._RAW_SUM``: the values,
dtypes, hooks and histories of the ``Add`` it skips), and the fused gradient of ``a / b`` for its denominator
(``DivDenominatorBackward``: bit for bit the Tensor-op form, finite differences, PyTorch, first and second order)."""

import math
import threading
import warnings
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import engine, gradcheck, gradgradcheck
from minitorch_ln.ops import _fperr
from minitorch_ln.ops.fused_backward import DivDenominatorBackward

from helpers import compare_with_torch, gradcheck_noncontiguous

EDGES = [0.0, -0.0, 1e-30, -1e-30, 0.5, -2.0, 9.0, 1e4, -1e4, 1e30, math.inf, -math.inf, math.nan]
FLOATS = ["float16", "float32", "float64"]


# ---------------------------------------------------------------------------------- _fperr.Quiet


def _ops(x):
    """The ops that compute under ``Quiet``: log, exp, division (by itself, by 0), ``x ** p``, and their gradients."""
    t = mt.tensor(x, requires_grad=True)
    outs = [mt.log(t), mt.exp(t), t / t, t / 0.0, 1.0 / t, t ** -1.0, t ** 0.5, t ** 2.5]
    grads = [mt.autograd.grad(o, t, mt.ones_like(o))[0] for o in outs]  # each alone: no inf - inf in a sum
    return [o.detach().numpy().tobytes() for o in outs + grads]


@pytest.mark.parametrize("dtype", FLOATS)
def test_quiet_gives_errstates_values_without_warnings(dtype):
    with np.errstate(over="ignore"):
        x = np.array(EDGES, dtype=dtype)  # 1e30 and 1e4 are inf in float16
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any RuntimeWarning of NumPy's fails the test
        fast = _ops(x)
    with mock.patch.object(_fperr, "_STATE", None), warnings.catch_warnings():  # the np.errstate form
        warnings.simplefilter("error")
        general = _ops(x)
    assert fast == general


def test_quiet_restores_the_callers_state_even_after_an_error():
    x = mt.tensor([0.0, -1.0, 2.0])
    with np.errstate(divide="raise", invalid="warn", over="ignore", under="print"):
        before = np.geterr()
        y = mt.log(x)  # no FloatingPointError: log(0) = -inf as PyTorch, whatever the caller's setting
        assert np.geterr() == before
        assert y[0].item() == -math.inf and math.isnan(y[1].item())
        with pytest.raises(FloatingPointError):  # the caller's "raise" is back in force
            np.log(np.array([0.0]))
        with pytest.raises(TypeError):  # an exception inside the block leaves the state restored too
            with _fperr.Quiet():
                np.log("not a number")
        assert np.geterr() == before


def test_quiet_is_per_thread_and_keeps_bufsize():
    seen = {}

    def worker():
        with np.errstate(all="raise"):
            seen["log"] = mt.log(mt.tensor([0.0])).item()
            seen["err"] = np.geterr()

    with np.errstate(all="ignore"):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert np.geterr()["divide"] == "ignore"
    assert seen["log"] == -math.inf and seen["err"]["divide"] == "raise"
    old = np.getbufsize()
    try:
        np.setbufsize(16384)
        with _fperr.Quiet():
            assert np.getbufsize() == 16384  # only the error modes change
    finally:
        np.setbufsize(old)


def test_quiet_cache_stays_bounded():
    for _ in range(200):  # each np.errstate block makes a new state object
        with np.errstate(divide="ignore"):
            mt.log(mt.tensor([1.0]))
    assert len(_fperr._quiet_for) <= 64


# ---------------------------------------------------------------------------------- engine: sums of gradients


def _graph_grads(dtype, create_graph=False):
    """x and w each reach the loss along several paths (their gradients are summed), an intermediate too."""
    rng = np.random.default_rng(1)
    x = mt.tensor(rng.standard_normal((3, 4)).astype(dtype), requires_grad=True)
    w = mt.tensor(rng.standard_normal(4).astype(dtype), requires_grad=True)
    hooked = []
    h = x * w
    h.register_hook(lambda g: hooked.append(g.numpy().tobytes()))  # sees the summed gradient of h
    y = (h * h + h.tanh() - x / w + x * 3.0).sum() + (w * 2.0).sum()
    y.backward(mt.tensor(np.array(0.7, dtype=dtype)), create_graph=create_graph)
    return (x.grad.numpy().tobytes(), w.grad.numpy().tobytes(), x.grad.dtype, w.grad.dtype,
            x.grad.requires_grad, hooked)


@pytest.mark.parametrize("dtype", FLOATS + ["complex64"])
def test_raw_gradient_sum_is_the_add_it_skips(dtype):
    if dtype == "complex64":  # tanh is real-only here: a graph with a tensor used twice, complex
        def run():
            z = mt.tensor(np.array([1 + 2j, -0.5j], dtype=dtype), requires_grad=True)
            (z * z + z * 3.0).abs().sum().backward()
            return z.grad.numpy().tobytes()
    else:
        def run():
            return _graph_grads(dtype)
    fast = run()
    with mock.patch.object(engine, "_RAW_SUM", False):
        general = run()
    assert fast == general


def test_raw_gradient_sum_not_used_with_create_graph():
    # create_graph: the summed gradient keeps its history (an Add node), so it can be differentiated again
    x = mt.tensor(1.5, dtype=mt.float64, requires_grad=True)
    y = x * x * x + x * 2.0  # x reaches y along 4 paths
    (g,) = mt.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad and g.item() == 3 * 1.5**2 + 2  # 3x² + 2
    (gg,) = mt.autograd.grad(g, x)
    assert gg.item() == 6 * 1.5  # 6x


def test_raw_gradient_sum_bfloat16_as_the_general_path():
    pytest.importorskip("ml_dtypes")

    def run():
        x = mt.tensor([1.5, -2.0, 0.3], dtype=mt.bfloat16, requires_grad=True)
        (x * 3.0 + x * x).sum().backward()
        return x.grad

    fast = run()
    with mock.patch.object(engine, "_RAW_SUM", False):
        general = run()
    assert fast.dtype == general.dtype == mt.bfloat16
    assert fast.numpy().tobytes() == general.numpy().tobytes()
    np.testing.assert_allclose(fast.numpy().astype(np.float32), [6.0, -1.0, 3.6], rtol=1e-2)  # 3 + 2x


# ---------------------------------------------------------------------------------- a / b: the denominator


@pytest.mark.parametrize("dtype", FLOATS)
def test_div_denominator_grad_is_the_composed_form_bit_for_bit(dtype):
    rng = np.random.default_rng(2)
    with np.errstate(over="ignore"):  # 1e30 and 1e4 are inf in float16
        b = np.concatenate([np.array(EDGES), rng.standard_normal(40) * 3]).astype(dtype)
    a = rng.standard_normal(b.shape).astype(dtype) * 5
    dy = rng.standard_normal(b.shape).astype(dtype)
    with np.errstate(all="ignore"):
        fused = DivDenominatorBackward.apply(mt.tensor(dy), mt.tensor(a), mt.tensor(b))
        ta, tb, tdy = mt.tensor(a), mt.tensor(b), mt.tensor(dy)
        composed = -(tdy / tb) * (ta / tb)  # what Div.backward computed
        if np.dtype(dtype) == np.float16:  # float16 ops compute in float32 and round once (autograd/bfloat16.py): the fused
            # node rounds once where the composed form rounds after each op, so compare with the float32 form
            composed = (-(tdy.float() / tb.float()) * (ta.float() / tb.float())).half()
    assert fused.dtype == composed.dtype == np.dtype(dtype)
    assert fused.numpy().tobytes() == composed.numpy().tobytes()


def test_div_denominator_edges_against_the_math():
    # d(a/b)/db = -a/b²: -(1/2)/... at b = 2, a = 1: -0.25; b = 0: -inf (a > 0), NaN (a = 0);
    # b = 1e20 in float32: -1e-40 is a float32 subnormal; b² alone would overflow to inf and give -0
    a = mt.tensor([1.0, 1.0, 0.0, 1.0], requires_grad=True)
    b = mt.tensor([2.0, 0.0, 0.0, 1e20], requires_grad=True)
    (a / b).backward(mt.ones(4))
    g = b.grad.numpy()
    assert g[0] == -0.25 and g[1] == -math.inf and math.isnan(g[2])
    assert g[3] < 0 and g[3] == np.float32(-1.0) / np.float32(1e20) / np.float32(1e20)


def test_div_denominator_gradcheck_first_and_second_order():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4)), rng.uniform(0.5, 2.0, (4,)) * rng.choice([-1, 1], 4)
    gradcheck_noncontiguous(lambda x, y: x / y, [a, b], gg=True)  # b broadcast: summed back to (4,)
    dy = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64, requires_grad=True)
    at, bt = (mt.tensor(v, dtype=mt.float64, requires_grad=True) for v in (a, b))
    assert gradcheck(DivDenominatorBackward.apply, (dy, at, bt))
    assert gradgradcheck(DivDenominatorBackward.apply, (dy, at, bt))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_div_first_and_second_order_against_torch(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 5)).astype(dtype)
    b = rng.uniform(0.5, 2.0, (1, 5)).astype(dtype)
    v = rng.standard_normal((4, 5)).astype(dtype)
    compare_with_torch(lambda x, y: x / y, lambda x, y: x / y, [a, b])
    compare_with_torch(lambda x, y, g: mt.autograd.grad(x / y, y, g, create_graph=True)[0],
                       lambda x, y, g: torch.autograd.grad(x / y, y, g, create_graph=True)[0], [a, b, v])


def test_div_denominator_complex_and_bad_input_take_the_general_path():
    # complex: conjugated Tensor-op form (PyTorch's convention): d(a/b)/db for a = 1, b = i, dy = 1 is
    # conj(-a/b²) = conj(-1/(i²)) = conj(1) = 1
    a = mt.tensor([1 + 0j], requires_grad=True)
    b = mt.tensor([1j], requires_grad=True)
    (a / b).real.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [1.0 + 0j])
    with pytest.raises(ValueError, match=r"div: shapes \(2,\) and \(3,\) do not broadcast"):
        mt.ones(2, requires_grad=True) / mt.ones(3, requires_grad=True)


@settings(max_examples=40, deadline=None)
@given(st.floats(-1e3, 1e3), st.floats(0.1, 1e3), st.floats(-10, 10))
def test_property_div_denominator_is_minus_a_over_b_squared(a, b, dy):
    at, bt = mt.tensor(a, dtype=mt.float64, requires_grad=True), mt.tensor(b, dtype=mt.float64, requires_grad=True)
    (at / bt).backward(mt.tensor(dy, dtype=mt.float64))
    assert math.isclose(bt.grad.item(), -dy * a / b**2, rel_tol=1e-12, abs_tol=1e-300)
    assert math.isclose(at.grad.item(), dy / b, rel_tol=1e-15, abs_tol=1e-300)
