"""Local response normalization: gradients (first and second order), PyTorch, shapes, edge values, errors,
and the two CPU kernels against each other. Everything runs once with each CPU kernel implementation."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.kernels import cpu_local_response_norm
from minitorch_ln.kernels import local_response_norm as lrn_kernels
from minitorch_ln.nn.normalization_lrn import LocalResponseNorm
from minitorch_ln.ops.local_response_norm import (
    local_response_norm,
    local_response_norm_backward_composed,
    local_response_norm_composed,
)

pytestmark = pytest.mark.usefixtures("cpu_kernels")

TF = torch.nn.functional


def _ref(x, size, alpha, beta, k):
    """The formula in float64, one channel window at a time (a loop: slow, obviously right)."""
    x = np.asarray(x, np.float64)
    C = x.shape[1]
    s = np.empty_like(x)
    for c in range(C):
        lo, hi = max(0, c - size // 2), min(C, c + (size - 1) // 2 + 1)
        s[:, c] = k + alpha / size * (x[:, lo:hi] ** 2).sum(axis=1)
    return x / s ** beta


# ==================================================================================================
# Gradient checks in float64
# ==================================================================================================

CASES = [((2, 5, 3), 3), ((2, 5, 3), 2), ((2, 4, 2, 3), 4), ((1, 3, 2, 2, 2), 5), ((2, 6, 1), 1), ((3, 2, 2), 7)]


@pytest.mark.parametrize("shape,size", CASES)
def test_gradcheck_and_gradgradcheck(shape, size, rng):
    fn = lambda x: local_response_norm(x, size, alpha=0.7, beta=0.6, k=1.3)
    x = t64(rng.standard_normal(shape))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_gradcheck_noncontiguous_and_channels_last(rng):
    fn = lambda x: local_response_norm(x, 3, alpha=0.5, beta=0.8, k=0.9)
    gradcheck_noncontiguous(fn, [rng.standard_normal((2, 4, 3))], gg=True)
    # an (N, H, W, C) buffer seen as (N, C, H, W): the channel axis has the smallest stride
    nhwc = t64(rng.standard_normal((2, 3, 2, 5)))
    assert gradcheck(lambda t: fn(t.permute(0, 3, 1, 2)), (nhwc,))


def test_third_order_through_the_composed_backward(rng):
    x = t64(rng.standard_normal((1, 4, 2)))
    v, u = mt.tensor(rng.standard_normal((1, 4, 2))), mt.tensor(rng.standard_normal((1, 4, 2)))

    def second(x):
        (g,) = mt.autograd.grad(local_response_norm(x, 2, 0.6, 0.7, 1.1), [x], grad_outputs=[v], create_graph=True)
        return mt.autograd.grad((g * u).sum(), [x], create_graph=True)

    assert gradcheck(second, (x,))


def test_fused_equals_composed_and_the_reference(rng):
    x0, up = rng.standard_normal((2, 6, 3, 2)), rng.standard_normal((2, 6, 3, 2))
    grads = []
    for fn in (local_response_norm, local_response_norm_composed):
        x = t64(x0)
        y = fn(x, 4, 0.4, 0.9, 1.5)
        np.testing.assert_allclose(y.array, _ref(x0, 4, 0.4, 0.9, 1.5), rtol=1e-13)
        y.backward(mt.tensor(up))
        grads.append(x.grad.array)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-14)
    dx = local_response_norm_backward_composed(mt.tensor(up), mt.tensor(x0), 4, 0.4, 0.9, 1.5)
    np.testing.assert_allclose(dx.array, grads[0], rtol=1e-12, atol=1e-14)


def test_one_fused_graph_node():
    x = mt.randn(2, 3, 4, requires_grad=True)
    y = local_response_norm(x, 3)
    assert y.grad_fn.name() == "LocalResponseNormBackward0"
    assert [e[0].name() for e in y.grad_fn.next_edges if e is not None] == ["AccumulateGrad"]


# ==================================================================================================
# PyTorch: float64 and float32, random upstream gradients
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,size,alpha,beta,k", [
    ((4, 6, 5), 5, 1e-4, 0.75, 1.0), ((2, 7, 3, 4), 3, 0.5, 0.75, 2.0), ((2, 5, 2, 3, 2), 2, 1.0, 0.5, 1.0),
    ((3, 4, 6), 4, 2.0, 1.2, 0.5), ((2, 3, 4), 9, 0.3, 0.75, 1.0),
])
def test_matches_torch(dtype, shape, size, alpha, beta, k, device, rng):
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    compare_with_torch(lambda x: local_response_norm(x, size, alpha, beta, k),
                       lambda x: TF.local_response_norm(x, size, alpha, beta, k), [x], device=device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_module_matches_torch(dtype, rng):
    ours, ref = LocalResponseNorm(3, alpha=0.2, beta=0.6, k=1.5), torch.nn.LocalResponseNorm(3, alpha=0.2, beta=0.6, k=1.5)
    assert repr(ours) == repr(ref) and list(ours.state_dict()) == []
    x = rng.standard_normal((2, 5, 4, 4)).astype(dtype)
    compare_with_torch(ours, ref, [x])


# ==================================================================================================
# Hypothesis: shapes, window sizes and constants against the looped float64 reference
# ==================================================================================================


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(1, 9), st.lists(st.integers(1, 4), min_size=1, max_size=3),
       st.integers(1, 12), st.floats(1e-3, 3.0), st.floats(0.0, 2.0), st.floats(0.1, 3.0), st.integers(0, 2**31 - 1))
def test_property_against_reference(N, C, rest, size, alpha, beta, k, seed):
    rng = np.random.default_rng(seed)
    shape = (N, C, *rest)
    x0, up = rng.standard_normal(shape) * 3, rng.standard_normal(shape)
    x = t64(x0)
    y = local_response_norm(x, size, alpha, beta, k)
    np.testing.assert_allclose(y.array, _ref(x0, size, alpha, beta, k), rtol=1e-12, atol=1e-14)
    y.backward(mt.tensor(up))
    xt = torch.tensor(x0, requires_grad=True)
    TF.local_response_norm(xt, size, alpha, beta, k).backward(torch.tensor(up))
    np.testing.assert_allclose(x.grad.array, xt.grad.numpy(), rtol=1e-9, atol=1e-11)


# ==================================================================================================
# Edge values, checked against the math
# ==================================================================================================


def test_zeros_input_gives_zeros_and_dx_dy_over_k_beta(rng):
    x = mt.zeros(2, 4, 3, dtype=mt.float64, requires_grad=True)
    up = rng.standard_normal((2, 4, 3))
    y = local_response_norm(x, 3, alpha=0.5, beta=0.75, k=2.0)
    y.backward(mt.tensor(up))
    assert np.all(y.array == 0)
    np.testing.assert_allclose(x.grad.array, up / 2.0 ** 0.75, rtol=1e-15)


def test_beta_zero_is_the_identity(rng):
    x0, up = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 3))
    x = t64(x0)
    y = local_response_norm(x, 3, alpha=0.9, beta=0.0, k=1.0)
    y.backward(mt.tensor(up))
    np.testing.assert_array_equal(y.array, x0)
    np.testing.assert_array_equal(x.grad.array, up)


def test_size_one_is_elementwise(rng):
    x0 = rng.standard_normal((3, 4, 2))
    x = t64(x0)
    y = local_response_norm(x, 1, alpha=0.5, beta=0.75, k=1.0)
    np.testing.assert_allclose(y.array, x0 / (1 + 0.5 * x0 ** 2) ** 0.75, rtol=1e-14)
    up = rng.standard_normal(x0.shape)
    y.backward(mt.tensor(up))
    s = 1 + 0.5 * x0 ** 2
    np.testing.assert_allclose(x.grad.array, up * (s ** -0.75 - 0.75 * x0 * s ** -1.75 * x0), rtol=1e-12)


def test_size_larger_than_channels_still_divides_by_size(rng):
    # every window holds all 3 channels (at least the ones it reaches), and the divisor stays 10
    x0 = rng.standard_normal((2, 3, 4))
    y = local_response_norm(t64(x0, False), 10, alpha=1.0, beta=1.0, k=1.0)
    before, after = 5, 4
    for c in range(3):
        lo, hi = max(0, c - before), min(3, c + after + 1)
        np.testing.assert_allclose(y.array[:, c], x0[:, c] / (1 + (x0[:, lo:hi] ** 2).sum(1) / 10), rtol=1e-14)


def test_large_channel_does_not_swamp_distant_windows():
    # a running total and P[hi] - P[lo] would give rounding noise of size 1e16·1e-16 for the later windows
    x0 = np.ones((1, 12, 1))
    x0[0, 0, 0] = 1e8
    y = local_response_norm(t64(x0, False), 3, alpha=1.0, beta=1.0, k=1.0)
    np.testing.assert_allclose(y.array, _ref(x0, 3, 1.0, 1.0, 1.0), rtol=1e-15)
    np.testing.assert_array_equal(y.array[0, 3:-1, 0], np.full(8, 1 / (1 + 3 / 3)))


def test_huge_float32_values_follow_the_math_not_torch():
    # float32 1e20: PyTorch squares in float32 (inf) and returns 0; computed in float64 the output is
    # a / (k + α/n·Σa²)^β, a small non-zero number. The math (float64) decides.
    x0 = np.full((1, 3, 2), 1e20, np.float32)
    y = local_response_norm(mt.tensor(x0), 3)
    ref = _ref(x0, 3, 1e-4, 0.75, 1.0)
    assert y.dtype == np.float32 and np.all(y.array > 0)
    np.testing.assert_allclose(y.array, ref, rtol=1e-6)
    assert np.all(TF.local_response_norm(torch.tensor(x0), 3).numpy() == 0)  # PyTorch's float32 overflow
    # the gradient too, with a random upstream gradient, against PyTorch in float64 (no overflow there)
    up = np.random.default_rng(5).standard_normal(x0.shape).astype(np.float32)
    x = mt.tensor(x0, requires_grad=True)
    local_response_norm(x, 3).backward(mt.tensor(up))
    xt = torch.tensor(x0.astype(np.float64), requires_grad=True)
    TF.local_response_norm(xt, 3).backward(torch.tensor(up.astype(np.float64)))
    assert np.all(np.isfinite(x.grad.array))
    np.testing.assert_allclose(x.grad.array, xt.grad.numpy(), rtol=1e-5, atol=1e-6 * np.abs(xt.grad.numpy()).max())


def test_float16_against_float64_reference(rng):
    x0 = (rng.standard_normal((2, 6, 5)) * 4).astype(np.float16)
    up = rng.standard_normal((2, 6, 5)).astype(np.float16)
    x = mt.tensor(x0, requires_grad=True)
    y = local_response_norm(x, 3, alpha=0.3, beta=0.75, k=1.0)
    y.backward(mt.tensor(up))
    assert y.dtype == x.grad.dtype == np.float16
    xr = torch.tensor(x0.astype(np.float64), requires_grad=True)
    yr = TF.local_response_norm(xr, 3, 0.3, 0.75, 1.0)
    yr.backward(torch.tensor(up.astype(np.float64)))
    np.testing.assert_allclose(y.array.astype(np.float64), yr.detach().numpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(x.grad.array.astype(np.float64), xr.grad.numpy(), rtol=5e-3, atol=5e-3)


def test_empty_input_is_returned_as_is():
    x = mt.zeros(0, 3, 4, requires_grad=True)
    assert local_response_norm(x, 2) is x  # as PyTorch


# ==================================================================================================
# The two CPU kernels: compiled loops and the NumPy form agree
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("shape,size", [((2, 7, 5), 3), ((3, 1, 4), 2), ((1, 9, 1), 4), ((2, 5, 3), 12), ((2, 6, 8), 1)])
def test_compiled_kernel_equals_numpy_form(dtype, shape, size, rng):
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    args = (size, 0.6, 0.7, 1.2)
    y, yc = lrn_kernels.local_response_norm_fwd(x, *args), cpu_local_response_norm.local_response_norm_fwd(x, *args)
    dx, dxc = lrn_kernels.local_response_norm_bwd(dy, x, *args), cpu_local_response_norm.local_response_norm_bwd(dy, x, *args)
    assert y.dtype == yc.dtype == dx.dtype == dxc.dtype == dtype
    tol = 0 if dtype == np.float16 else 1e-14  # float16 goes to the NumPy form in both
    np.testing.assert_allclose(yc, y, rtol=tol, atol=tol)
    np.testing.assert_allclose(dxc, dx, rtol=tol, atol=tol)


# ==================================================================================================
# Bad input
# ==================================================================================================


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2 dimensions\)"):
        local_response_norm(mt.randn(3, 4), 2)
    with pytest.raises(RuntimeError, match="3D or higher"):
        LocalResponseNorm(2)(mt.randn(4))
    with pytest.raises(TypeError, match="floating point.*int64"):
        local_response_norm(mt.tensor(np.ones((2, 3, 4), np.int64)), 2)
    for size in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="size .* must be a positive int"):
            local_response_norm(mt.randn(2, 3, 4), size)
    with pytest.raises(TypeError, match="beta must be a real number"):
        local_response_norm(mt.randn(2, 3, 4), 2, beta="0.75")
    with pytest.raises(TypeError, match="expected input to be a Tensor"):
        local_response_norm(np.ones((2, 3, 4)), 2)
