"""The normalization kernels on raw arrays: compact form vs chain rule, the backward's terms, numerics.

The kernel interface (``minitorch_ln/kernels/__init__.py``) is checked here on NumPy arrays, once
with each CPU implementation (the compiled loops of ``cpu_layer_norm`` and the NumPy kernels of
``layer_norm``: the ``cpu_kernels`` fixture), and, with a GPU, on CuPy arrays (whatever
implementation ``kernels`` dispatches to there).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
from minitorch_ln import kernels

from helpers import torch

pytestmark = pytest.mark.usefixtures("cpu_kernels")


def _ref_fwd(x, w, b, eps):
    """float64 two-pass reference: ``(y, mean, rstd)``."""
    x = x.astype(np.float64)
    mean = x.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps)
    y = (x - mean) * rstd
    return y * (1 if w is None else w) + (0 if b is None else b), mean, rstd


def _case(rng, N, D, dtype, affine=True, loc=0.0, scale=1.0):
    x = (rng.standard_normal((N, D)) * scale + loc).astype(dtype)
    w = rng.standard_normal(D).astype(dtype) if affine else None
    b = rng.standard_normal(D).astype(dtype) if affine else None
    dy = rng.standard_normal((N, D)).astype(dtype)
    return x, w, b, dy


# ==================================================================================================
# The interface: shapes and dtypes
# ==================================================================================================


@pytest.mark.parametrize("dtype,stat", [(np.float64, np.float64), (np.float32, np.float32), (np.float16, np.float32)])
def test_interface_shapes_and_dtypes(dtype, stat, rng):
    x, w, b, dy = _case(rng, 6, 10, dtype)
    y, mean, rstd = kernels.layer_norm_fwd(x, w, b, 1e-5)
    assert y.shape == (6, 10) and y.dtype == dtype
    assert mean.shape == rstd.shape == (6, 1) and mean.dtype == rstd.dtype == stat
    dx, dw, db = kernels.layer_norm_bwd(dy, x, w, mean, rstd)
    assert dx.shape == (6, 10) and dx.dtype == dtype and dw.shape == db.shape == (10,) and dw.dtype == db.dtype == dtype
    assert kernels.layer_norm_bwd(dy, x, None, mean, rstd)[1:] == (None, None)
    m2, r2 = kernels.layer_norm_stats(x, 1e-5)
    np.testing.assert_array_equal(m2, mean)
    np.testing.assert_array_equal(r2, rstd)
    # float32 parameters with float16 data: sums and gradients in float32
    if dtype == np.float16:
        y32, _, _ = kernels.layer_norm_fwd(x, w.astype(np.float32), b.astype(np.float32), 1e-5)
        assert y32.dtype == np.float16
        _, dw32, db32 = kernels.layer_norm_bwd(dy, x, w.astype(np.float32), mean, rstd)
        assert dw32.dtype == db32.dtype == np.float32


def test_inputs_are_not_modified(rng):
    x, w, b, dy = _case(rng, 5, 7, np.float32)
    copies = [a.copy() for a in (x, w, b, dy)]
    y, mean, rstd = kernels.layer_norm_fwd(x, w, b, 1e-5)
    kernels.layer_norm_bwd(dy, x, w, mean, rstd)
    kernels.layer_norm_bwd(dy, x, None, mean, rstd)
    for a, c in zip((x, w, b, dy), copies):
        np.testing.assert_array_equal(a, c)


def test_empty_batch(rng):
    x = np.zeros((0, 4), np.float32)
    y, mean, rstd = kernels.layer_norm_fwd(x, np.ones(4, np.float32), None, 1e-5)
    assert y.shape == (0, 4) and mean.shape == (0, 1)
    dx, dw, db = kernels.layer_norm_bwd(x, x, np.ones(4, np.float32), mean, rstd)
    assert dx.shape == (0, 4) and np.all(dw == 0) and np.all(db == 0)


# ==================================================================================================
# Values: forward against a float64 reference, backward against PyTorch and the chain rule
# ==================================================================================================


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 1e-5), (np.float16, 2e-3)])
@pytest.mark.parametrize("N,D", [(1, 1), (3, 2), (7, 33), (64, 768)])
def test_forward_against_float64_reference(dtype, tol, N, D, rng):
    x, w, b, _ = _case(rng, N, D, dtype, loc=3.0, scale=2.0)
    y, mean, rstd = kernels.layer_norm_fwd(x, w, b, 1e-5)
    ry, rmean, rrstd = _ref_fwd(x, w.astype(np.float64), b.astype(np.float64), 1e-5)
    np.testing.assert_allclose(y.astype(np.float64), ry, rtol=tol, atol=tol * (1 + np.abs(ry).max()))
    np.testing.assert_allclose(mean, rmean, rtol=tol if dtype != np.float16 else 1e-6)
    np.testing.assert_allclose(rstd, rrstd, rtol=tol if dtype != np.float16 else 1e-5)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 1e-4)])
@pytest.mark.parametrize("affine", [True, False])
def test_backward_matches_torch(dtype, tol, affine, rng):
    x, w, b, dy = _case(rng, 12, 20, dtype, affine)
    y, mean, rstd = kernels.layer_norm_fwd(x, w, b, 1e-5)
    dx, dw, db = kernels.layer_norm_bwd(dy, x, w, mean, rstd)
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True) if affine else None
    bt = torch.tensor(b, requires_grad=True) if affine else None
    yt = torch.nn.functional.layer_norm(xt, (20,), wt, bt, 1e-5)
    yt.backward(torch.tensor(dy))
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=tol, atol=tol)
    if affine:
        np.testing.assert_allclose(dw, wt.grad.numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(db, bt.grad.numpy(), rtol=tol, atol=tol)


@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 9)),
                  elements=st.floats(-50, 50, allow_nan=False)),
       st.booleans(), st.sampled_from([1e-12, 1e-5, 1e-1]), st.integers(0, 2**31 - 1))
def test_compact_form_equals_step_by_step_chain_rule(x, affine, eps, seed):
    # The form that runs and the form to learn from (docs, sections 2 and 3) are one function.
    rng = np.random.default_rng(seed)
    D = x.shape[1]
    w = rng.standard_normal(D) if affine else None
    dy = rng.standard_normal(x.shape)
    _, mean, rstd = kernels.layer_norm_fwd(x, w, None, eps)
    compact = kernels.layer_norm_bwd(dy, x, w, mean, rstd)
    chain = kernels.layer_norm_bwd_chain_rule(dy, x, w, mean, rstd)
    scale = 1 + np.abs(dy).max() * rstd.max() * (1 if w is None else 1 + np.abs(w).max())
    for c, s in zip(compact, chain):
        if c is None:
            assert s is None
        else:
            np.testing.assert_allclose(c, s, rtol=1e-9, atol=1e-12 * scale * D)


# ==================================================================================================
# The backward's terms, each against its own finite-difference counterpart
# ==================================================================================================


def _fd(f, x, h=1e-6):
    """Central differences of the scalar ``f`` at every element of ``x``."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (f(xp) - f(xm)) / (2 * h)
    return g


def test_backward_terms_against_their_finite_differences(rng):
    x, w, b, dy = _case(rng, 3, 6, np.float64)
    eps = 1e-5
    _, mean, rstd = kernels.layer_norm_fwd(x, w, b, eps)
    t = kernels.layer_norm_bwd_terms(dy, x, w, mean, rstd)
    assert set(t) == {"xhat", "dxhat", "dx_direct", "dx_via_mean", "dx_via_rstd", "dx", "dweight", "dbias"}

    mu = lambda z: z.mean(-1, keepdims=True)  # noqa: E731
    rs = lambda z: 1 / np.sqrt(((z - mu(z)) ** 2).mean(-1, keepdims=True) + eps)  # noqa: E731

    def loss(x_direct, x_mean, x_rstd):  # Σ dy·y, where each path sees its own copy of x
        return float(np.sum(dy * ((x_direct - mu(x_mean)) * rs(x_rstd) * w + b)))

    np.testing.assert_allclose(t["dx_direct"], _fd(lambda z: loss(z, x, x), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(t["dx_via_mean"], _fd(lambda z: loss(x, z, x), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(t["dx_via_rstd"], _fd(lambda z: loss(x, x, z), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(t["dx"], t["dx_direct"] + t["dx_via_mean"] + t["dx_via_rstd"], rtol=1e-14)
    np.testing.assert_allclose(t["dx"], kernels.layer_norm_bwd(dy, x, w, mean, rstd)[0], rtol=1e-12, atol=1e-14)
    fw = lambda z: float(np.sum(dy * ((x - mu(x)) * rs(x) * z + b)))  # noqa: E731
    np.testing.assert_allclose(t["dweight"], _fd(fw, w), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(t["dbias"], dy.sum(0), rtol=1e-14)
    np.testing.assert_allclose(t["dxhat"], dy * w, rtol=1e-14)
    np.testing.assert_allclose(t["xhat"], (x - mu(x)) * rs(x), rtol=1e-12)


# ==================================================================================================
# Numerics
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("value", [0.0, 1.0, -3.3, 1e4 + 0.1, 7e-5])
def test_constant_row_is_exactly_bias(dtype, value, rng):
    D = 37
    x = np.full((4, D), value, dtype=dtype)
    w, b = rng.standard_normal(D).astype(dtype), rng.standard_normal(D).astype(dtype)
    y, mean, rstd = kernels.layer_norm_fwd(x, w, b, 1e-5)
    np.testing.assert_array_equal(y, np.broadcast_to(b, (4, D)))
    y0, _, _ = kernels.layer_norm_fwd(x, None, None, 1e-5)
    assert np.all(y0 == 0)
    dx, dw, db = kernels.layer_norm_bwd(rng.standard_normal((4, D)).astype(dtype), x, w, mean, rstd)
    assert np.all(np.isfinite(dx)) and np.all(dw == 0)


def test_large_mean_small_spread_backward_is_recentred(rng):
    # float32 rows 1e4 + 1e-3·noise: the saved float32 mean is off by up to half the spread, and
    # without re-centring the xhat terms of dx would be wrong by that much (kernel docstring).
    x = (1e4 + 1e-3 * rng.standard_normal((8, 64))).astype(np.float32)
    w, dy = rng.standard_normal(64).astype(np.float32), rng.standard_normal((8, 64)).astype(np.float32)
    y, mean, rstd = kernels.layer_norm_fwd(x, w, None, 1e-12)
    dx, dw, _ = kernels.layer_norm_bwd(dy, x, w, mean, rstd)
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    wt = torch.tensor(w.astype(np.float64), requires_grad=True)
    yt = torch.nn.functional.layer_norm(xt, (64,), wt, None, 1e-12)
    yt.backward(torch.tensor(dy.astype(np.float64)))
    np.testing.assert_allclose(y, yt.detach().numpy(), atol=1e-4 * np.abs(w).max())
    np.testing.assert_allclose(dw, wt.grad.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=1e-3, atol=1e-4 * np.abs(xt.grad.numpy()).max())
    assert np.all(np.abs(dx.astype(np.float64).sum(-1)) < 1e-3 * np.abs(dx).max())  # Σ_D dx = 0


@pytest.mark.parametrize("scale", [3e19, 1e30])
def test_float32_rows_whose_squares_overflow(scale, rng):
    # (x - mean)² overflows float32 beyond about 1.8e19; rstd = 1/sqrt(inf) = 0 once made every
    # such row exactly β without a word. The variance is then summed in float64, so y and dx
    # match the float64 computation (the variance itself may exceed float32: rstd does not).
    x = (rng.standard_normal((3, 16)) * scale).astype(np.float32)
    x[2] = (x[2] / scale).astype(np.float32)                  # and one ordinary row beside them
    w, b, dy = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32), \
        rng.standard_normal((3, 16)).astype(np.float32)
    y, mean, rstd = kernels.layer_norm_fwd(x, w, b, 1e-5)
    dx, dw, db = kernels.layer_norm_bwd(dy, x, w, mean, rstd)
    xt, wt, bt = (torch.tensor(a.astype(np.float64), requires_grad=True) for a in (x, w, b))
    yt = torch.nn.functional.layer_norm(xt, (16,), wt, bt, 1e-5)
    yt.backward(torch.tensor(dy.astype(np.float64)))
    assert np.all(np.isfinite(rstd)) and np.all(rstd > 0)
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx * scale, xt.grad.numpy() * scale, rtol=1e-4, atol=1e-4)   # dx ~ 1/scale
    np.testing.assert_allclose(dw, wt.grad.numpy(), rtol=1e-4, atol=1e-4)
    y_rms, _ = kernels.rms_norm_fwd(x, w, 1e-6)
    np.testing.assert_allclose(y_rms, torch.nn.functional.rms_norm(xt, (16,), wt, 1e-6).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_variance_is_two_pass_not_expectation_of_squares():
    # E[x²] - E[x]² of these float32 rows cancels to garbage (even negative); two passes do not.
    x = (np.float32(3e3) + np.array([[0, 1, 2, 3]], np.float32))
    _, _, rstd = kernels.layer_norm_fwd(x, None, None, 1e-12)
    np.testing.assert_allclose(rstd, 1 / np.sqrt(1.25), rtol=1e-6)


# ==================================================================================================
# RMSNorm and BatchNorm kernels
# ==================================================================================================


def test_rms_norm_kernels_against_torch(rng):
    x, w, _, dy = _case(rng, 9, 16, np.float64)
    y, rstd = kernels.rms_norm_fwd(x, w, 1e-6)
    dx, dw = kernels.rms_norm_bwd(dy, x, w, rstd)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    yt = torch.nn.functional.rms_norm(xt, (16,), wt, 1e-6)
    yt.backward(torch.tensor(dy))
    for ours, theirs in ((y, yt), (dx, xt.grad), (dw, wt.grad)):
        np.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_batch_norm_kernels_against_torch(rng):
    C, N, L = 3, 5, 4
    x = rng.standard_normal((N, C, L))
    w, b, dy = rng.standard_normal(C), rng.standard_normal(C), rng.standard_normal((N, C, L))
    rows = lambda a: np.ascontiguousarray(a.transpose(1, 0, 2).reshape(C, N * L))  # noqa: E731
    y, mean, rstd, var = kernels.batch_norm_fwd(rows(x), w, b, 1e-5)
    dx, dw, db = kernels.batch_norm_bwd(rows(dy), rows(x), w, mean, rstd)
    np.testing.assert_allclose(var[:, 0], x.transpose(1, 0, 2).reshape(C, -1).var(-1), rtol=1e-12)
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    yt = torch.nn.functional.batch_norm(xt, None, None, wt, bt, training=True)
    yt.backward(torch.tensor(dy))
    np.testing.assert_allclose(y, rows(yt.detach().numpy()), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dx, rows(xt.grad.numpy()), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dw, wt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(db, bt.grad.numpy(), rtol=1e-10)


# ==================================================================================================
# On the GPU: whatever kernels dispatches to for CuPy arrays agrees with the NumPy kernels
# ==================================================================================================


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("N,D", [(5, 8), (300, 768), (7, 1), (3, 1025)])
def test_cupy_arrays_match_numpy_kernels(dtype, N, D, rng):
    cp = mt.backend.cupy_or_error()
    x, w, b, dy = _case(rng, N, D, dtype, loc=1.0)
    ref = kernels.layer_norm_fwd(x, w, b, 1e-5)
    ref_b = kernels.layer_norm_bwd(dy, x, w, ref[1], ref[2])
    got = kernels.layer_norm_fwd(cp.asarray(x), cp.asarray(w), cp.asarray(b), 1e-5)
    got_b = kernels.layer_norm_bwd(cp.asarray(dy), cp.asarray(x), cp.asarray(w), got[1], got[2])
    tol = {np.float64: 1e-10, np.float32: 1e-4, np.float16: 1e-2}[dtype]
    for r, g in zip(ref + ref_b, got + got_b):
        assert g.dtype == r.dtype and g.shape == r.shape
        np.testing.assert_allclose(cp.asnumpy(g).astype(np.float64), r.astype(np.float64), rtol=tol,
                                   atol=tol * (1 + np.abs(r.astype(np.float64)).max()))


@pytest.mark.parametrize("scale", [1e155, 1e200, 1e300])
def test_float64_rows_whose_squares_overflow(scale, rng):
    # float64 squares overflow beyond about 1.3e154: rstd = 1/sqrt(inf) = 0 once made every such
    # row exactly β (found by the break-it trial; PyTorch gives NaN). The squares are now summed
    # scaled by the row's largest deviation, so y and dx are the scale-free values: LayerNorm of
    # s·x is LayerNorm of x (eps negligible), and its dx is dx(x) / s.
    x1 = rng.standard_normal((3, 16))
    w, b, dy = rng.standard_normal(16), rng.standard_normal(16), rng.standard_normal((3, 16))
    x = x1 * scale
    y, mean, rstd = kernels.layer_norm_fwd(x, w, b, 1e-5)
    dx, dw, db = kernels.layer_norm_bwd(dy, x, w, mean, rstd)
    ry, rmean, rrstd = kernels.layer_norm_fwd(x1, w, b, 0.0)
    rdx, rdw, _ = kernels.layer_norm_bwd(dy, x1, w, rmean, rrstd)
    assert np.all(np.isfinite(rstd)) and np.all(rstd > 0)
    np.testing.assert_allclose(y, ry, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dx * scale, rdx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dw, rdw, rtol=1e-10, atol=1e-12)
    y_rms, _ = kernels.rms_norm_fwd(x, w, 1e-6)
    np.testing.assert_allclose(y_rms, kernels.rms_norm_fwd(x1, w, 0.0)[0], rtol=1e-12, atol=1e-12)
