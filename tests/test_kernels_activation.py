"""GELU kernels (kernels/activation.py): against a float64 reference and PyTorch, blocks, dtypes, shapes."""

import math

import numpy as np
import pytest
from scipy.special import erf

from minitorch_ln import kernels
from minitorch_ln.kernels import _threads as _blocks_module

from helpers import torch

pytestmark = pytest.mark.usefixtures("cpu_kernels")  # every test on the compiled loop and on the NumPy form


def reference(x, dy):
    """GELU and its input gradient in float64 with SciPy's erf."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    cdf = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return x * cdf, dy * (cdf + x * pdf)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-14), (np.float32, 2e-6), (np.float16, 4e-3)])
def test_exact_gelu_against_float64_reference(dtype, tol, rng):
    x = (rng.standard_normal((300, 257)) * 4).astype(dtype)  # more than one block, tails included
    dy = rng.standard_normal(x.shape).astype(dtype)
    y_ref, dx_ref = reference(x, dy)
    y, dx = kernels.gelu_fwd(x), kernels.gelu_bwd(dy, x)
    assert y.dtype == dtype and dx.dtype == dtype and y.shape == x.shape and dx.shape == x.shape
    scale = np.maximum(1.0, np.abs(y_ref))
    assert np.max(np.abs(y - y_ref) / scale) < tol
    assert np.max(np.abs(dx - dx_ref) / np.maximum(1.0, np.abs(dx_ref))) < tol


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_float32_kernels_match_torch(approximate, rng):
    x = (rng.standard_normal((64, 96)) * 3).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.gelu(xt, approximate=approximate).backward(torch.from_numpy(dy))
    yt = torch.nn.functional.gelu(torch.from_numpy(x), approximate=approximate).numpy()
    np.testing.assert_allclose(kernels.gelu_fwd(x, approximate), yt, rtol=1e-5, atol=3e-6)
    np.testing.assert_allclose(kernels.gelu_bwd(dy, x, approximate), xt.grad.numpy(), rtol=1e-5, atol=3e-6)


@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 0, 2), (2, 3, 4)])
def test_any_shape(shape, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    dy = rng.standard_normal(shape).astype(np.float32)
    y_ref, dx_ref = reference(x, dy)
    assert kernels.gelu_fwd(x).shape == shape and kernels.gelu_bwd(dy, x).shape == shape
    np.testing.assert_allclose(kernels.gelu_fwd(x), y_ref, atol=2e-6)
    np.testing.assert_allclose(kernels.gelu_bwd(dy, x), dx_ref, atol=2e-6)


def test_non_contiguous_input_and_inputs_unchanged(rng):
    x = rng.standard_normal((40, 30)).astype(np.float32).T  # a transposed view
    dy = rng.standard_normal((30, 40)).astype(np.float32)
    x0, dy0 = x.copy(), dy.copy()
    y_ref, dx_ref = reference(x, dy)
    np.testing.assert_allclose(kernels.gelu_fwd(x), y_ref, atol=2e-6)
    np.testing.assert_allclose(kernels.gelu_bwd(dy, x), dx_ref, atol=2e-6)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(dy, dy0)


def test_blocks_and_threads_change_nothing(rng, monkeypatch, thread_any_size):
    x = rng.standard_normal((50, 70)).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    whole = kernels.gelu_fwd(x), kernels.gelu_bwd(dy, x)
    monkeypatch.setattr(_blocks_module, "BLOCK_ELEMENTS", 64)  # many blocks, spread over the threads
    threads = kernels.get_num_threads()
    try:
        kernels.set_num_threads(2)
        blocked = kernels.gelu_fwd(x), kernels.gelu_bwd(dy, x)
    finally:
        kernels.set_num_threads(threads)
    np.testing.assert_array_equal(whole[0], blocked[0])
    np.testing.assert_array_equal(whole[1], blocked[1])


def test_far_tails_are_exact():
    x = np.array([0.0, 40.0, -40.0, 1e30, -1e30], dtype=np.float32)
    y = kernels.gelu_fwd(x)
    assert y[0] == 0.0 and y[1] == 40.0 and y[2] == 0.0 and y[3] == np.float32(1e30) and y[4] == 0.0
    dy = np.array([2.0, -3.0, 5.0, 0.25, -7.0], dtype=np.float32)  # non-uniform: dx = dy · GELU'(x)
    np.testing.assert_array_equal(kernels.gelu_bwd(dy, x), dy * np.array([0.5, 1.0, 0.0, 1.0, 0.0], np.float32))
