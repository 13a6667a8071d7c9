"""The BatchNorm kernels on the input's own layout ``(N, C, L)``: the NumPy form (reducing over the axes
``(0, 2)``) against the channel-rows form ``(C, N·L)``, the compiled loops against the NumPy form, and
the dispatch under both CPU kernel choices."""

import numpy as np
import pytest

from minitorch_ln import kernels
from minitorch_ln.kernels import batch_norm, batch_norm_dispatch, cpu_batch_norm
from minitorch_ln.kernels._numba import AVAILABLE

SHAPES = [(4, 3, 5), (7, 2, 1), (2, 3, 70), (1, 4, 9), (5, 1, 3)]
TOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 2e-5, np.dtype(np.float16): 0.0}


def _case(rng, shape, dtype, pdtype, affine):
    x = (rng.standard_normal(shape) * 2 + 1).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    C = shape[1]
    w = rng.standard_normal(C).astype(pdtype) if affine in ("weight", "both") else None
    b = rng.standard_normal(C).astype(pdtype) if affine == "both" else None
    return x, dy, w, b


def _rows(a):
    return np.ascontiguousarray(a.transpose(1, 0, 2)).reshape(a.shape[1], -1)


def _close(got, ref, tol, what):
    assert got.dtype == ref.dtype and got.shape == ref.shape, what
    scale = max(1.0, float(np.abs(ref.astype(np.float64)).max()))
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol * scale, err_msg=what)


@pytest.mark.parametrize("dtype,pdtype", [(np.float64,) * 2, (np.float32,) * 2, (np.float16,) * 2,
                                          (np.float16, np.float32)])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_ncl_form_equals_channel_rows_form(dtype, pdtype, shape, affine, rng):
    x, dy, w, b = _case(rng, shape, dtype, pdtype, affine)
    y, mean, rstd, var = batch_norm.batch_norm_fwd_ncl(x, w, b, 1e-5)
    y2, mean2, rstd2, var2 = batch_norm.batch_norm_fwd(_rows(x), w, b, 1e-5)
    tol = max(TOL[np.dtype(dtype)], 1e-6 if dtype == np.float16 else 0)
    _close(_rows(y), y2, tol, "y")
    for name, g, r in (("mean", mean, mean2), ("rstd", rstd, rstd2), ("var", var, var2)):
        assert g.shape == (shape[1], 1)
        _close(g, r, tol, name)
    dx, dw, db = batch_norm.batch_norm_bwd_ncl(dy, x, w, mean, rstd)
    dx2, dw2, db2 = batch_norm.batch_norm_bwd(_rows(dy), _rows(x), w, mean2, rstd2)
    _close(_rows(dx), dx2, max(tol, 3e-3 if dtype == np.float16 else 0), "dx")
    if w is None:
        assert dw is None and db is None
    else:
        _close(dw, dw2, max(tol, 1e-5), "dweight")
        _close(db, db2, max(tol, 1e-5), "dbias")


@pytest.mark.skipif(not AVAILABLE, reason="Numba is not installed")
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_compiled_equals_numpy_form(dtype, shape, affine, rng):
    x, dy, w, b = _case(rng, shape, dtype, dtype, affine)
    ref = batch_norm.batch_norm_fwd_ncl(x, w, b, 1e-5)
    got = cpu_batch_norm.batch_norm_fwd_ncl(x, w, b, 1e-5)
    tol = TOL[np.dtype(dtype)]  # float16 goes to the NumPy form in both: the same bits
    for name, g, r in zip(("y", "mean", "rstd", "var"), got, ref):
        _close(g, r, tol, name)
    got_b = cpu_batch_norm.batch_norm_bwd_ncl(dy, x, w, got[1], got[2])
    ref_b = batch_norm.batch_norm_bwd_ncl(dy, x, w, ref[1], ref[2])
    for name, g, r in zip(("dx", "dweight", "dbias"), got_b, ref_b):
        if r is None:
            assert g is None
        else:
            _close(g, r, tol * 10, name)


@pytest.mark.parametrize("choice", ["numba", "numpy"])
def test_dispatch_under_both_cpu_kernel_choices(choice, rng):
    if choice == "numba" and not AVAILABLE:
        pytest.skip("Numba is not installed")
    before = kernels.get_cpu_kernels()
    kernels.set_cpu_kernels(choice)
    try:
        x, dy, w, b = _case(rng, (6, 3, 8), np.float32, np.float32, "both")
        fwd, bwd = batch_norm_dispatch.batch_norm_fwd_ncl_for(x), batch_norm_dispatch.batch_norm_bwd_ncl_for(x)
        assert fwd.__module__.endswith("cpu_batch_norm" if choice == "numba" else ".batch_norm")
        y, mean, rstd, var = fwd(x, w, b, 1e-5)
        dx, dw, db = bwd(dy, x, w, mean, rstd)
        x64 = x.astype(np.float64)
        m, v = x64.mean(axis=(0, 2)), x64.var(axis=(0, 2))
        xhat = (x64 - m[:, None]) / np.sqrt(v[:, None] + 1e-5)
        np.testing.assert_allclose(y, xhat * w[:, None] + b[:, None], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(var[:, 0], v, rtol=1e-5)
        np.testing.assert_allclose(db, dy.astype(np.float64).sum(axis=(0, 2)), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(dw, (dy * xhat).sum(axis=(0, 2)), rtol=1e-4, atol=1e-4)
        assert dx.shape == x.shape and abs(float(dx.astype(np.float64).sum())) < 1e-3  # Σ dx = 0 per channel
    finally:
        kernels.set_cpu_kernels(before)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_constant_channel_gives_exactly_bias_in_both_forms(dtype, rng):
    x = rng.standard_normal((3, 2, 4)).astype(dtype)
    x[:, 0] = 7.3
    w, b = np.array([2.0, 0.5], dtype), np.array([-1.5, 0.25], dtype)
    forms = [batch_norm.batch_norm_fwd_ncl] + ([cpu_batch_norm.batch_norm_fwd_ncl] if AVAILABLE else [])
    for fwd in forms:
        y, mean, rstd, var = fwd(x, w, b, 1e-5)
        np.testing.assert_array_equal(y[:, 0], np.full((3, 4), b[0], dtype))
        assert var[0, 0] == 0


def test_overflowing_float32_channel_is_summed_again_in_float64(rng):
    x = (rng.standard_normal((4, 2, 5)) * 1e20).astype(np.float32)
    y, mean, rstd, var = batch_norm.batch_norm_fwd_ncl(x, None, None, 1e-5)
    v = x.astype(np.float64).var(axis=(0, 2))
    np.testing.assert_allclose(rstd[:, 0], 1 / np.sqrt(v), rtol=1e-5)  # not 1/sqrt(inf) = 0
    assert np.all(np.isinf(var)) or np.allclose(var[:, 0], v, rtol=1e-5)  # var itself may exceed float32
    if AVAILABLE:
        got = cpu_batch_norm.batch_norm_fwd_ncl(x, None, None, 1e-5)
        np.testing.assert_allclose(got[2], rstd, rtol=1e-5)
        np.testing.assert_allclose(got[0], y, rtol=1e-4, atol=1e-4)
