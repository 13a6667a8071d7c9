"""The GroupNorm CUDA kernels (``kernels/cuda_group_norm.py``) and their wrappers, run on the CPU in the emulator.

As ``test_cuda_emulated.py``: the kernel text is the one the GPU compiles, the wrappers are the ones
the GPU path calls, here on NumPy arrays, every launch checked against the kernel's C++ signature.
The GroupNorm wrappers also run LayerNorm's row kernels (``cuda_layer_norm``) on the group rows, so
both sources are emulated. The reference is the NumPy kernel ``kernels/group_norm.py``.
"""

import cuda_emu
import numpy as np
import pytest
from helpers import torch

from minitorch_ln.kernels import cuda_common, cuda_group_norm, cuda_layer_norm
from minitorch_ln.kernels import group_norm as oracle

pytestmark = pytest.mark.skipif(not cuda_emu.compiler_available(), reason="the CUDA emulator needs g++")

# (N, C, L, G): group rows of C/G·L values
SHAPES = [(2, 6, 5, 3), (3, 4, 1, 2), (1, 8, 16, 1), (2, 6, 4, 6), (4, 32, 8, 4), (3, 4, 9000, 1)]
DTYPES = [(np.float32, np.float32), (np.float64, np.float64), (np.float16, np.float16), (np.float16, np.float32)]


@pytest.fixture(scope="module")
def emulator():
    ln_names = set()
    for dt, _ in DTYPES:
        sdt = np.dtype(np.float32) if dt == np.float16 else np.dtype(dt)
        for N, C, L, G in SHAPES + [(2, 4, 3, 2), (2, 8, 4, 2), (6, 4, 5, 2)]:
            for kind, budget in (("ln_fwd", cuda_layer_norm.FWD_ELEMENTS), ("ln_bwd", cuda_layer_norm.BWD_ELEMENTS)):
                cfg = cuda_layer_norm.row_config(C // G * L, sdt, budget)
                if cfg is not None:
                    vec, items, wpr, _ = cfg
                    ln_names.add(f"{kind}<{cuda_common.CTYPE[sdt]}, {cuda_common.CTYPE[sdt]}, {vec}, {items}, {wpr}>")
    with cuda_emu.installed({cuda_layer_norm.SOURCE: sorted(ln_names), cuda_group_norm.SOURCE: cuda_group_norm.example_kernels()}) as emu:
        yield emu


rel_err = cuda_emu.rel_err


TOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 2e-5, np.dtype(np.float16): 3e-3}


def _case(rng, N, C, L, dtype, pdtype, loc=1.0):
    x = (rng.standard_normal((N, C, L)) * 2 + loc).astype(dtype)
    w, b = rng.standard_normal(C).astype(pdtype), rng.standard_normal(C).astype(pdtype)
    return x, w, b, rng.standard_normal((N, C, L)).astype(dtype)


@pytest.mark.parametrize("dtype, pdtype", DTYPES)
@pytest.mark.parametrize("N, C, L, G", SHAPES)
def test_group_norm_matches_numpy_oracle(emulator, dtype, pdtype, N, C, L, G, rng):
    x, w, b, dy = _case(rng, N, C, L, dtype, pdtype)
    got = cuda_group_norm.group_norm_fwd(x, w, b, G, 1e-5)
    ref = oracle.group_norm_fwd(x, w, b, G, 1e-5)
    got_b = cuda_group_norm.group_norm_bwd(dy, x, w, got[1], got[2], G)
    ref_b = oracle.group_norm_bwd(dy, x, w, ref[1], ref[2], G)
    tol = TOL[np.dtype(dtype)]
    # dx's terms cancel (exactly, for groups of one or two values): its error is relative to their size
    dx_scale = float(np.max(ref[2]) * np.abs(dy.astype(np.float64) * w[:, None]).max())
    for name, g, r in zip(("y", "mean", "rstd", "dx", "dweight", "dbias"), got + got_b, ref + ref_b):
        assert g.dtype == r.dtype and g.shape == r.shape, (name, g.dtype, r.dtype, g.shape, r.shape)
        if name == "dx":
            assert np.abs(g.astype(np.float64) - r).max() <= tol * dx_scale, name
        else:
            assert rel_err(g, r) <= tol, (name, rel_err(g, r))


@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_group_norm_without_affine_parameters(emulator, affine, rng):
    x, w, b, dy = _case(rng, 2, 8, 4, np.float64, np.float64)
    w = w if affine in ("weight", "both") else None
    b = b if affine in ("bias", "both") else None
    got, ref = cuda_group_norm.group_norm_fwd(x, w, b, 2, 1e-5), oracle.group_norm_fwd(x, w, b, 2, 1e-5)
    for g, r in zip(got, ref):
        assert rel_err(g, r) < 1e-12
    got_b = cuda_group_norm.group_norm_bwd(dy, x, w, got[1], got[2], 2)
    ref_b = oracle.group_norm_bwd(dy, x, w, ref[1], ref[2], 2)
    assert rel_err(got_b[0], ref_b[0]) < 1e-12
    if w is None:
        assert got_b[1:] == (None, None)
    else:
        assert rel_err(got_b[1], ref_b[1]) < 1e-12 and rel_err(got_b[2], ref_b[2]) < 1e-12


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("value", [0.0, -3.3, 1e4 + 0.1])
def test_constant_groups_give_exactly_bias(emulator, dtype, value, rng):
    x = np.full((2, 4, 3), value, dtype=dtype)
    w, b = rng.standard_normal(4).astype(dtype), rng.standard_normal(4).astype(dtype)
    y, mean, rstd = cuda_group_norm.group_norm_fwd(x, w, b, 2, 1e-5)
    np.testing.assert_array_equal(y, np.broadcast_to(b[:, None], (2, 4, 3)))
    dx, dw, _ = cuda_group_norm.group_norm_bwd(rng.standard_normal((2, 4, 3)).astype(dtype), x, w, mean, rstd, 2)
    assert np.all(np.isfinite(dx)) and np.all(dw == 0)


def test_large_mean_small_spread_against_float64_torch(emulator, rng):
    # float32 groups 1e4 + 1e-3·noise: shifted in forward, re-centred in backward (as the oracle)
    x = (1e4 + 1e-3 * rng.standard_normal((3, 4, 64))).astype(np.float32)
    w, dy = rng.standard_normal(4).astype(np.float32), rng.standard_normal((3, 4, 64)).astype(np.float32)
    y, mean, rstd = cuda_group_norm.group_norm_fwd(x, w, None, 2, 1e-12)
    dx, dw, _ = cuda_group_norm.group_norm_bwd(dy, x, w, mean, rstd, 2)
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    wt = torch.tensor(w.astype(np.float64), requires_grad=True)
    torch.nn.functional.group_norm(xt, 2, wt, None, 1e-12).backward(torch.tensor(dy.astype(np.float64)))
    yt = torch.nn.functional.group_norm(xt.detach(), 2, wt.detach(), None, 1e-12).numpy()
    np.testing.assert_allclose(y, yt, atol=1e-4 * np.abs(w).max())
    np.testing.assert_allclose(dw, wt.grad.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=1e-3, atol=1e-4 * np.abs(xt.grad.numpy()).max())


def test_backward_is_deterministic(emulator, rng):
    x, w, _, dy = _case(rng, 6, 4, 5, np.float32, np.float32)
    _, mean, rstd = cuda_group_norm.group_norm_fwd(x, w, None, 2, 1e-5)
    first = cuda_group_norm.group_norm_bwd(dy, x, w, mean, rstd, 2)
    second = cuda_group_norm.group_norm_bwd(dy, x, w, mean, rstd, 2)
    for a, b in zip(first, second):
        assert a.tobytes() == b.tobytes()
    names = [rec[0] for rec in emulator.launches[-8:]]
    assert any(n.startswith("gn_channel_sums") for n in names) and any(n.startswith("ln_bwd") for n in names)


def test_empty_input(emulator):
    x = np.zeros((0, 4, 3), np.float32)
    y, mean, rstd = cuda_group_norm.group_norm_fwd(x, np.ones(4, np.float32), None, 2, 1e-5)
    assert y.shape == (0, 4, 3) and mean.shape == rstd.shape == (0, 2)
    dx, dw, db = cuda_group_norm.group_norm_bwd(x, x, np.ones(4, np.float32), mean, rstd, 2)
    assert dx.shape == (0, 4, 3) and np.all(dw == 0) and np.all(db == 0) and dw.shape == (4,)


@pytest.mark.parametrize(
    "call, err, words",
    [(lambda x: cuda_group_norm.group_norm_fwd(x.transpose(0, 2, 1), None, None, 2, 1e-5), ValueError,
      "C-contiguous array of shape \\(N, C, L\\)"),
     (lambda x: cuda_group_norm.group_norm_fwd(x[0], None, None, 2, 1e-5), ValueError, "got shape \\(4, 6\\)"),
     (lambda x: cuda_group_norm.group_norm_fwd(x.astype(np.int64), None, None, 2, 1e-5), TypeError,
      "float16, float32 or float64, got int64"),
     (lambda x: cuda_group_norm.group_norm_fwd(x, None, None, 3, 1e-5), ValueError, "num_groups dividing the 4 channels"),
     (lambda x: cuda_group_norm.group_norm_fwd(x, np.ones(5), None, 2, 1e-5), ValueError, "expected shape \\(4,\\).*got \\(5,\\)"),
     (lambda x: cuda_group_norm.group_norm_bwd(x[:1], x, None, np.zeros((2, 2)), np.ones((2, 2)), 2), ValueError,
      "dy must match x"),
     (lambda x: cuda_group_norm.group_norm_bwd(x, x, None, np.zeros((2, 4)), np.ones((2, 2)), 2), ValueError,
      "mean and rstd of shape \\(2, 2\\)")],
)
def test_group_norm_bad_input(emulator, call, err, words):
    with pytest.raises(err, match=words):
        call(np.ones((2, 4, 6)))
