"""The GroupNorm kernels on raw arrays: the interface, every implementation equal to the xp form, numerics.

Run once with each CPU implementation (``cpu_kernels`` fixture: the compiled loops of
``cpu_group_norm`` and the NumPy kernels of ``group_norm``) through ``kernels/group_norm_dispatch.py``; the compiled
loops are also held equal to the xp form directly. The CUDA kernels are checked in
``test_cuda_emulated_group_norm.py`` (emulator) and, with a GPU, on CuPy arrays here.
"""

import numpy as np
import pytest
from helpers import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln import kernels
from minitorch_ln.kernels import group_norm_dispatch
from minitorch_ln.kernels import cpu_group_norm, group_norm
from minitorch_ln.kernels._numba import AVAILABLE as NUMBA

pytestmark = pytest.mark.usefixtures("cpu_kernels")


def fwd(x, w, b, G, eps=1e-5):
    return group_norm_dispatch.group_norm_fwd_for(x)(x, w, b, G, eps)


def bwd(dy, x, w, mean, rstd, G):
    return group_norm_dispatch.group_norm_bwd_for(x)(dy, x, w, mean, rstd, G)


def _case(rng, N, C, L, dtype, affine=True, loc=0.0, scale=1.0):
    x = (rng.standard_normal((N, C, L)) * scale + loc).astype(dtype)
    w = rng.standard_normal(C).astype(dtype) if affine else None
    b = rng.standard_normal(C).astype(dtype) if affine else None
    return x, w, b, rng.standard_normal((N, C, L)).astype(dtype)


def _torch_ref(x, w, b, dy, G, eps=1e-5):
    """float64 PyTorch: ``(y, dx, dweight, dbias)``."""
    t = lambda a: None if a is None else torch.tensor(a.astype(np.float64), requires_grad=True)
    xt, wt, bt = t(x), t(w), t(b)
    yt = torch.nn.functional.group_norm(xt, G, wt, bt, eps)
    yt.backward(torch.tensor(dy.astype(np.float64)))
    return yt.detach().numpy(), xt.grad.numpy(), None if w is None else wt.grad.numpy(), None if b is None else bt.grad.numpy()


@pytest.mark.parametrize("dtype,stat", [(np.float64, np.float64), (np.float32, np.float32), (np.float16, np.float32)])
def test_interface_shapes_and_dtypes(dtype, stat, rng):
    x, w, b, dy = _case(rng, 3, 6, 5, dtype)
    y, mean, rstd = fwd(x, w, b, 3)
    assert y.shape == (3, 6, 5) and y.dtype == dtype
    assert mean.shape == rstd.shape == (3, 3) and mean.dtype == rstd.dtype == stat
    dx, dw, db = bwd(dy, x, w, mean, rstd, 3)
    assert dx.shape == x.shape and dx.dtype == dtype and dw.shape == db.shape == (6,) and dw.dtype == db.dtype == dtype
    assert bwd(dy, x, None, mean, rstd, 3)[1:] == (None, None)
    if dtype == np.float16:  # float32 parameters with float16 data: gradients in float32
        _, dw32, db32 = bwd(dy, x, w.astype(np.float32), mean, rstd, 3)
        assert dw32.dtype == db32.dtype == np.float32


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("N,C,L,G", [(2, 6, 5, 3), (3, 4, 1, 2), (1, 8, 16, 1), (2, 6, 4, 6), (4, 32, 9, 8)])
@pytest.mark.parametrize("affine", [True, False])
def test_forward_and_backward_match_torch(dtype, tol, N, C, L, G, affine, rng):
    x, w, b, dy = _case(rng, N, C, L, dtype, affine, loc=2.0, scale=3.0)
    y, mean, rstd = fwd(x, w, b, G)
    dx, dw, db = bwd(dy, x, w, mean, rstd, G)
    ry, rdx, rdw, rdb = _torch_ref(x, w, b, dy, G)
    scale = np.abs(dy).max() * rstd.max() * (1 if w is None else np.abs(w).max())   # dx's terms cancel
    np.testing.assert_allclose(y, ry, rtol=tol, atol=tol * np.abs(ry).max())
    np.testing.assert_allclose(dx, rdx, rtol=tol, atol=tol * scale)
    if affine:
        np.testing.assert_allclose(dw, rdw, rtol=tol, atol=tol * np.abs(rdw).max())
        np.testing.assert_allclose(db, rdb, rtol=tol, atol=tol * np.abs(rdb).max())


@pytest.mark.skipif(not NUMBA, reason="needs Numba")
@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3), st.integers(1, 7), st.sampled_from([np.float32, np.float64]),
       st.sampled_from(["both", "weight", "bias", "none"]), st.sampled_from([1e-12, 1e-5, 0.1]), st.integers(0, 2**31 - 1))
def test_compiled_loops_equal_the_xp_form(N, G, cpg, L, dtype, affine, eps, seed):
    rng = np.random.default_rng(seed)
    C = G * cpg
    x, w, b, dy = _case(rng, N, C, L, dtype, loc=rng.uniform(-5, 5), scale=rng.uniform(0.1, 10))
    w = w if affine in ("both", "weight") else None
    b = b if affine in ("both", "bias") else None
    got = cpu_group_norm.group_norm_fwd(x, w, b, G, eps)
    ref = group_norm.group_norm_fwd(x, w, b, G, eps)
    tol = 1e-12 if dtype == np.float64 else 3e-5
    for g, r in zip(got, ref):
        assert g.dtype == r.dtype and g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=tol, atol=tol * (1 + np.abs(r).max()))
    got_b = cpu_group_norm.group_norm_bwd(dy, x, w, *ref[1:], G)
    ref_b = group_norm.group_norm_bwd(dy, x, w, *ref[1:], G)
    scale = 1 + np.abs(dy).max() * ref[2].max() * (1 if w is None else np.abs(w).max()) * cpg * L
    for g, r in zip(got_b, ref_b):
        if r is None:
            assert g is None
            continue
        assert g.dtype == r.dtype and g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=tol, atol=tol * scale)


def test_group_of_all_channels_is_layer_norm_and_one_channel_is_instance_norm(rng):
    # G = 1: one LayerNorm row per sample over (C, L); G = C: one row per (n, c), InstanceNorm.
    x, _, _, dy = _case(rng, 3, 4, 6, np.float64)
    y1, m1, r1 = fwd(x, None, None, 1)
    ly, lm, lr = kernels.layer_norm_fwd(x.reshape(3, 24), None, None, 1e-5)
    np.testing.assert_allclose(y1.reshape(3, 24), ly, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(m1, lm, rtol=1e-12)
    dx1 = bwd(dy, x, None, m1, r1, 1)[0]
    np.testing.assert_allclose(dx1.reshape(3, 24), kernels.layer_norm_bwd(dy.reshape(3, 24), x.reshape(3, 24), None, lm, lr)[0],
                               rtol=1e-10, atol=1e-12)
    yc, mc, _ = fwd(x, None, None, 4)
    iy, im, _ = kernels.layer_norm_fwd(x.reshape(12, 6), None, None, 1e-5)
    np.testing.assert_allclose(yc.reshape(12, 6), iy, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mc.reshape(12, 1), im, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("value", [0.0, 1.0, -3.3, 1e4 + 0.1, 7e-5])
def test_constant_group_is_exactly_bias(dtype, value, rng):
    x = np.full((2, 6, 5), value, dtype=dtype)
    x[:, 3:] = 2 * value + 1                                   # the second group: another constant
    w, b = rng.standard_normal(6).astype(dtype), rng.standard_normal(6).astype(dtype)
    y, mean, rstd = fwd(x, w, b, 2)
    np.testing.assert_array_equal(y, np.broadcast_to(b[:, None], x.shape))
    dy = rng.standard_normal(x.shape).astype(dtype)
    dx, dw, db = bwd(dy, x, w, mean, rstd, 2)
    assert np.all(np.isfinite(dx)) and np.all(dw == 0)
    np.testing.assert_allclose(db, dy.astype(np.float64).sum((0, 2)), rtol=2e-3)


def test_huge_offset_small_spread_float64(rng):
    # 1e8 + noise: the shift by the first value keeps x - shift exact; float64 finite math decides
    x = 1e8 + rng.standard_normal((2, 4, 50))
    w, dy = rng.standard_normal(4), rng.standard_normal((2, 4, 50))
    y, mean, rstd = fwd(x, w, None, 2)
    dx, dw, _ = bwd(dy, x, w, mean, rstd, 2)
    xc = (x - 1e8).reshape(2, 2, 100)                           # exact: the offset removed first
    ref_y = ((xc - xc.mean(2, keepdims=True)) / np.sqrt(xc.var(2, keepdims=True) + 1e-5)).reshape(x.shape) * w[:, None]
    np.testing.assert_allclose(y, ref_y, rtol=1e-7, atol=1e-7)
    ry, rdx, rdw, _ = _torch_ref(x - 1e8, w, None, dy, 2)       # GroupNorm is shift-invariant
    np.testing.assert_allclose(y, ry, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(dx, rdx, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(dw, rdw, rtol=1e-6, atol=1e-6)


def test_float16_is_normalized_in_float32(rng):
    x, w, b, dy = _case(rng, 2, 8, 16, np.float16, scale=300.0)
    y, mean, rstd = fwd(x, w, b, 4)
    ry, rdx, rdw, rdb = _torch_ref(x, w, b, dy, 4)
    np.testing.assert_allclose(y, ry, rtol=3e-3, atol=3e-3 * np.abs(ry).max())
    dx, dw, db = bwd(dy, x, w, mean, rstd, 4)
    np.testing.assert_allclose(dx, rdx, rtol=3e-3, atol=3e-3 * np.abs(rdx).max())
    np.testing.assert_allclose(dw, rdw, rtol=3e-3, atol=3e-3 * np.abs(rdw).max())
    np.testing.assert_allclose(db, rdb, rtol=3e-3, atol=3e-3 * np.abs(rdb).max())


def test_empty_input_and_inputs_not_modified(rng):
    x = np.zeros((0, 4, 3), np.float32)
    y, mean, rstd = fwd(x, np.ones(4, np.float32), None, 2)
    assert y.shape == (0, 4, 3) and mean.shape == (0, 2)
    dx, dw, db = bwd(x, x, np.ones(4, np.float32), mean, rstd, 2)
    assert dx.shape == (0, 4, 3) and dw.shape == (4,) and np.all(dw == 0) and np.all(db == 0)
    x, w, b, dy = _case(rng, 2, 4, 3, np.float32)
    copies = [a.copy() for a in (x, w, b, dy)]
    y, mean, rstd = fwd(x, w, b, 2)
    bwd(dy, x, w, mean, rstd, 2)
    for a, c in zip((x, w, b, dy), copies):
        np.testing.assert_array_equal(a, c)


@pytest.mark.skipif(not NUMBA, reason="needs Numba")
def test_compiled_loops_check_their_arrays():
    x = np.ones((2, 4, 3))
    with pytest.raises(ValueError, match="num_groups dividing the 4 channels"):
        cpu_group_norm.group_norm_fwd(x, None, None, 3, 1e-5)
    with pytest.raises(ValueError, match="weight of shape \\(4,\\)"):
        cpu_group_norm.group_norm_fwd(x, np.ones(5), None, 2, 1e-5)
    with pytest.raises(ValueError, match="mean of shape \\(2, 2\\)"):
        cpu_group_norm.group_norm_bwd(x, x, None, np.zeros((2, 1)), np.ones((2, 2)), 2)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("N,C,L,G", [(2, 6, 5, 3), (4, 32, 64, 8), (3, 4, 9000, 1)])
def test_cupy_arrays_match_numpy_kernels(dtype, N, C, L, G, rng):
    import cupy as cp

    x, w, b, dy = _case(rng, N, C, L, dtype, loc=1.0)
    ref = group_norm.group_norm_fwd(x, w, b, G, 1e-5)
    got = [cp.asnumpy(a) for a in fwd(cp.asarray(x), cp.asarray(w), cp.asarray(b), G)]
    ref_b = group_norm.group_norm_bwd(dy, x, w, ref[1], ref[2], G)
    got_b = [cp.asnumpy(a) for a in bwd(cp.asarray(dy), cp.asarray(x), cp.asarray(w), cp.asarray(ref[1]),
                                        cp.asarray(ref[2]), G)]
    tol = {np.float64: 1e-10, np.float32: 1e-4, np.float16: 3e-3}[dtype]
    for g, r in zip(got + got_b, list(ref) + list(ref_b)):
        assert g.dtype == r.dtype and g.shape == r.shape
        np.testing.assert_allclose(g.astype(np.float64), r, rtol=tol, atol=tol * (1 + np.abs(r.astype(np.float64)).max()))
    assert mt.cuda_is_available()
