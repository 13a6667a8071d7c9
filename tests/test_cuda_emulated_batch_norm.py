"""The BatchNorm CUDA kernels (``kernels/cuda_batch_norm.py``) run on the CPU through the emulator
(``cuda_emu.py``), against the NumPy form of ``kernels/batch_norm.py``; then the BatchNorm op with the
dispatch sending its kernels there, against the CPU op."""

import cuda_emu
import numpy as np
import pytest

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln.kernels import batch_norm as oracle
from minitorch_ln.kernels import cuda_batch_norm

pytestmark = pytest.mark.skipif(not cuda_emu.compiler_available(), reason="the CUDA emulator needs g++")

SHAPES = [(4, 3, 5), (7, 2, 1), (2, 3, 70), (33, 2, 17), (1, 5, 300)]
TOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5, np.dtype(np.float16): 3e-3}


@pytest.fixture(scope="module")
def emulator():
    with cuda_emu.installed({cuda_batch_norm.SOURCE: cuda_batch_norm.example_kernels()}) as emu:
        yield emu


rel_err = cuda_emu.rel_err


@pytest.mark.parametrize("dtype, pdtype", [(np.float32, np.float32), (np.float64, np.float64),
                                            (np.float16, np.float16), (np.float16, np.float32)])
@pytest.mark.parametrize("shape", SHAPES)
def test_matches_numpy_oracle(emulator, dtype, pdtype, shape, rng):
    C = shape[1]
    x = (rng.standard_normal(shape) * 2 + 3).astype(dtype)
    w, b = rng.standard_normal(C).astype(pdtype), rng.standard_normal(C).astype(pdtype)
    dy = rng.standard_normal(shape).astype(dtype)
    got = cuda_batch_norm.batch_norm_fwd_ncl(x, w, b, 1e-5)
    ref = oracle.batch_norm_fwd_ncl(x, w, b, 1e-5)
    got_b = cuda_batch_norm.batch_norm_bwd_ncl(dy, x, w, got[1], got[2])
    ref_b = oracle.batch_norm_bwd_ncl(dy, x, w, ref[1], ref[2])
    tol = TOL[np.dtype(dtype)]
    for name, g, r in zip(("y", "mean", "rstd", "var", "dx", "dweight", "dbias"), got + got_b, ref + ref_b):
        assert g.dtype == r.dtype and g.shape == r.shape, name
        assert rel_err(g, r) <= tol, (name, rel_err(g, r))
    launched = [rec for rec in emulator.launches[-2:]]
    assert [(n.split("<")[0], grid, block) for n, grid, block in launched] == [
        ("bn_fwd_ncl", (C, 1, 1), (cuda_batch_norm.THREADS, 1, 1)), ("bn_bwd_ncl", (C, 1, 1), (cuda_batch_norm.THREADS, 1, 1))]


@pytest.mark.parametrize("affine", ["none", "weight", "bias"])
def test_without_affine_parameters(emulator, affine, rng):
    x, dy = rng.standard_normal((6, 3, 10)), rng.standard_normal((6, 3, 10))
    w = rng.standard_normal(3) if affine == "weight" else None
    b = rng.standard_normal(3) if affine == "bias" else None
    cuda_emu.check_norm_kernels(cuda_batch_norm, oracle, "batch_norm_fwd_ncl", "batch_norm_bwd_ncl", x, dy, w, b, 1e-3)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("value", [0.0, -3.3, 1e4 + 0.1])
def test_constant_channel_gives_exactly_bias(emulator, dtype, value, rng):
    x = rng.standard_normal((5, 2, 7)).astype(dtype)
    x[:, 1] = value
    w, b = rng.standard_normal(2).astype(dtype), rng.standard_normal(2).astype(dtype)
    y, mean, rstd, var = cuda_batch_norm.batch_norm_fwd_ncl(x, w, b, 1e-5)
    np.testing.assert_array_equal(y[:, 1], np.full((5, 7), b[1], dtype))
    assert var[1, 0] == 0
    dx, dw, _ = cuda_batch_norm.batch_norm_bwd_ncl(rng.standard_normal(x.shape).astype(dtype), x, w, mean, rstd)
    assert np.all(np.isfinite(dx)) and dw[1] == 0


def test_large_mean_small_spread_float32(emulator, rng):
    # float32 channels 1e4 + 1e-3·noise: shifted in forward, re-centred in backward (as the oracle)
    x = (1e4 + 1e-3 * rng.standard_normal((8, 3, 40))).astype(np.float32)
    dy, w = rng.standard_normal(x.shape).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    y, mean, rstd, var = cuda_batch_norm.batch_norm_fwd_ncl(x, w, None, 1e-12)
    x64 = x.astype(np.float64)
    m, v = x64.mean(axis=(0, 2), keepdims=True), x64.var(axis=(0, 2), keepdims=True)
    xhat = (x64 - m) / np.sqrt(v + 1e-12)
    np.testing.assert_allclose(y, xhat * w[:, None], atol=1e-3 * np.abs(w).max())
    dx, dw, _ = cuda_batch_norm.batch_norm_bwd_ncl(dy, x, w, mean, rstd)
    np.testing.assert_allclose(dw, (dy * xhat).sum(axis=(0, 2)), rtol=1e-3, atol=1e-2)


def test_float32_squares_beyond_float32_range(emulator, rng):
    x = (rng.standard_normal((4, 2, 6)) * 1e20).astype(np.float32)
    y, mean, rstd, var = cuda_batch_norm.batch_norm_fwd_ncl(x, None, None, 1e-5)
    ry, _, rrstd, _ = oracle.batch_norm_fwd_ncl(x, None, None, 1e-5)
    assert np.all(rstd > 0) and rel_err(rstd, rrstd) < 1e-5 and rel_err(y, ry) < 1e-5


def test_deterministic(emulator, rng):
    x, dy = rng.standard_normal((9, 2, 50)).astype(np.float32), rng.standard_normal((9, 2, 50)).astype(np.float32)
    w = rng.standard_normal(2).astype(np.float32)
    runs = []
    for _ in range(2):
        y, mean, rstd, var = cuda_batch_norm.batch_norm_fwd_ncl(x, w, w, 1e-5)
        runs.append((y, mean, rstd) + cuda_batch_norm.batch_norm_bwd_ncl(dy, x, w, mean, rstd))
    for a, b in zip(*runs):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize(
    "call, err, words",
    [(lambda x: cuda_batch_norm.batch_norm_fwd_ncl(x.transpose(2, 1, 0), None, None, 1e-5), ValueError,
      "C-contiguous array of shape \\(N, C, L\\)"),
     (lambda x: cuda_batch_norm.batch_norm_fwd_ncl(x[0], None, None, 1e-5), ValueError, "got shape \\(3, 4\\)"),
     (lambda x: cuda_batch_norm.batch_norm_fwd_ncl(x.astype(np.int64), None, None, 1e-5), TypeError,
      "float16, float32 or float64, got int64"),
     (lambda x: cuda_batch_norm.batch_norm_fwd_ncl(x, np.ones(4), None, 1e-5), ValueError, "expected shape \\(3,\\).*got \\(4,\\)"),
     (lambda x: cuda_batch_norm.batch_norm_bwd_ncl(x[:1], x, None, np.zeros(3), np.ones(3)), ValueError, "dy must match x"),
     (lambda x: cuda_batch_norm.batch_norm_bwd_ncl(x, x, None, np.zeros(2), np.ones(3)), ValueError, "one per channel")],
)
def test_bad_input(emulator, call, err, words):
    with pytest.raises(err, match=words):
        call(np.ones((2, 3, 4)))


# ==================================================================================================
# The BatchNorm op with its kernels sent to the CUDA module (on NumPy arrays, through the emulator)
# ==================================================================================================


def _train_step(x0, w0, b0, up):
    C = x0.shape[1]
    x, w, b = (mt.tensor(a, requires_grad=True) for a in (x0, w0, b0))
    rm, rv = mt.zeros(C, dtype=mt.float64), mt.ones(C, dtype=mt.float64)
    y = F.batch_norm(x, rm, rv, w, b, training=True)
    y.backward(mt.tensor(up))
    return [y.array, x.grad.array, w.grad.array, b.grad.array, rm.array, rv.array]


@pytest.mark.parametrize("shape", [(4, 3, 2, 5), (3, 2, 2, 2, 3), (6, 4)])
def test_op_through_the_cuda_kernels_matches_cpu(emulator, monkeypatch, shape, rng):
    from minitorch_ln.kernels import batch_norm_dispatch

    x0, up = rng.standard_normal(shape), rng.standard_normal(shape)
    w0, b0 = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    ref = _train_step(x0, w0, b0, up)  # the CPU kernels
    monkeypatch.setattr(batch_norm_dispatch, "on_gpu", lambda a: True)
    before = len(emulator.launches)
    got = _train_step(x0, w0, b0, up)
    assert {n.split("<")[0] for n, _, _ in emulator.launches[before:]} == {"bn_fwd_ncl", "bn_bwd_ncl"}
    for g, r in zip(got, ref):
        assert rel_err(g, r) < 1e-12
