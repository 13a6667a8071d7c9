"""The local response normalization CUDA kernels (``kernels/cuda_local_response_norm.py``) run on the CPU through the
emulator (``cuda_emu.py``), against the NumPy form of ``kernels/local_response_norm.py``; then the op with its kernels
sent there, against the CPU op."""

import cuda_emu
import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln.kernels import cuda_local_response_norm
from minitorch_ln.kernels import local_response_norm as oracle
from minitorch_ln.ops.local_response_norm import local_response_norm

pytestmark = pytest.mark.skipif(not cuda_emu.compiler_available(), reason="the CUDA emulator needs g++")

TOL = {np.dtype(np.float64): 1e-13, np.dtype(np.float32): 1e-6, np.dtype(np.float16): 1e-3}


@pytest.fixture(scope="module")
def emulator():
    with cuda_emu.installed({cuda_local_response_norm.SOURCE: cuda_local_response_norm.example_kernels()}) as emu:
        yield emu


rel_err = cuda_emu.rel_err


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape,size", [((2, 7, 5), 3), ((3, 1, 4), 2), ((1, 9, 1), 4), ((2, 5, 33), 12),
                                        ((2, 6, 8), 1), ((1, 300, 2), 5)])
def test_matches_numpy_oracle(emulator, dtype, shape, size, rng):
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    args = (size, 0.6, 0.7, 1.2)
    y, ry = cuda_local_response_norm.local_response_norm_fwd(x, *args), oracle.local_response_norm_fwd(x, *args)
    dx, rdx = cuda_local_response_norm.local_response_norm_bwd(dy, x, *args), oracle.local_response_norm_bwd(dy, x, *args)
    tol = TOL[np.dtype(dtype)]
    for name, g, r in (("y", y, ry), ("dx", dx, rdx)):
        assert g.dtype == r.dtype == dtype and g.shape == r.shape, name
        assert rel_err(g, r) <= tol, (name, rel_err(g, r))


def test_edge_values(emulator, rng):
    z = np.zeros((2, 4, 3))
    up = rng.standard_normal((2, 4, 3))
    assert np.all(cuda_local_response_norm.local_response_norm_fwd(z, 3, 0.5, 0.75, 2.0) == 0)
    np.testing.assert_allclose(cuda_local_response_norm.local_response_norm_bwd(up, z, 3, 0.5, 0.75, 2.0), up / 2.0 ** 0.75, rtol=1e-15)
    x = rng.standard_normal((2, 4, 3))
    np.testing.assert_array_equal(cuda_local_response_norm.local_response_norm_fwd(x, 3, 0.9, 0.0, 1.0), x)       # beta = 0
    np.testing.assert_array_equal(cuda_local_response_norm.local_response_norm_bwd(up, x, 3, 0.9, 0.0, 1.0), up)
    big = np.full((1, 3, 2), 1e20, np.float32)  # float32 squares overflow; computed in double
    y = cuda_local_response_norm.local_response_norm_fwd(big, 3, 1e-4, 0.75, 1.0)
    assert np.all(y > 0) and rel_err(y, oracle.local_response_norm_fwd(big, 3, 1e-4, 0.75, 1.0)) < 1e-6


@pytest.mark.parametrize(
    "call, err, words",
    [(lambda x: cuda_local_response_norm.local_response_norm_fwd(x.transpose(2, 1, 0), 3, 1e-4, 0.75, 1.0), ValueError,
      "C-contiguous array of shape \\(N, C, L\\)"),
     (lambda x: cuda_local_response_norm.local_response_norm_fwd(x.astype(np.int64), 3, 1e-4, 0.75, 1.0), TypeError, "got int64"),
     (lambda x: cuda_local_response_norm.local_response_norm_bwd(x[:1], x, 3, 1e-4, 0.75, 1.0), ValueError, "dy must match x")],
)
def test_bad_input(emulator, call, err, words):
    with pytest.raises(err, match=words):
        call(np.ones((2, 3, 4)))


def test_op_through_the_cuda_kernels_matches_cpu(emulator, monkeypatch, rng):
    from minitorch_ln.kernels import local_response_norm_dispatch

    x0, up = rng.standard_normal((2, 6, 3, 2)), rng.standard_normal((2, 6, 3, 2))

    def step():
        x = mt.tensor(x0, requires_grad=True)
        y = local_response_norm(x, 4, 0.5, 0.75, 1.0)
        y.backward(mt.tensor(up))
        return y.array, x.grad.array

    ref = step()
    monkeypatch.setattr(local_response_norm_dispatch, "on_gpu", lambda a: True)
    before = len(emulator.launches)
    got = step()
    assert {n.split("<")[0] for n, _, _ in emulator.launches[before:]} == {"lrn_fwd", "lrn_bwd_terms", "lrn_bwd_dx"}
    for g, r in zip(got, ref):
        assert rel_err(g, r) < 1e-13
