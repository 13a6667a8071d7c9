"""GroupNorm and InstanceNorm ops: gradients (first and second order), PyTorch, properties, edge values, errors.

The kernels themselves are tested in ``test_kernels_group_norm.py``; here everything is seen through
Tensors, once with each CPU kernel implementation (the ``cpu_kernels`` fixture).
"""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import grad, gradcheck, gradgradcheck
from minitorch_ln.errors import OptionError, ShapeError
from minitorch_ln.ops.group_norm import group_norm, group_norm_composed, instance_norm
from minitorch_ln.ops.layer_norm import layer_norm

pytestmark = pytest.mark.usefixtures("cpu_kernels")

TF = torch.nn.functional

# (input shape, num_groups)
LAYOUTS = [((2, 6), 3), ((2, 6, 4), 2), ((3, 4, 5), 4), ((2, 6, 3, 2), 3), ((1, 4, 2, 3), 1), ((2, 2, 2, 1, 3), 2)]
AFFINE = [(True, True), (True, False), (False, True), (False, False)]


def _case(rng, shape, affine, bias):
    C = shape[1]
    args = [t64(rng.standard_normal(shape) * 2 + 1)]
    args += [t64(rng.standard_normal(C)) for flag in (affine, bias) if flag]

    def pick(p):
        it = iter(p)
        return (next(it) if affine else None), (next(it) if bias else None)

    return pick, tuple(args)


# ==================================================================================================
# Gradient checks in float64
# ==================================================================================================


@pytest.mark.parametrize("shape,G", LAYOUTS)
@pytest.mark.parametrize("affine,bias", AFFINE)
def test_group_norm_gradcheck_and_gradgradcheck(shape, G, affine, bias, rng):
    pick, args = _case(rng, shape, affine, bias)
    fn = lambda x, *p: group_norm(x, G, *pick(p))
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


@pytest.mark.parametrize("shape,G", [((2, 6, 4), 3), ((2, 4, 3, 2), 2)])
def test_group_norm_gradcheck_noncontiguous(shape, G, rng):
    x, w, b = rng.standard_normal(shape), rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    gradcheck_noncontiguous(lambda x, w, b: group_norm(x, G, w, b), [x, w, b], gg=True)
    gradcheck_noncontiguous(lambda x: instance_norm(x), [x], gg=True)


def test_third_order_against_finite_differences(rng):
    x, w = t64(rng.standard_normal((2, 4, 3))), t64(rng.standard_normal(4))
    v, u = mt.tensor(rng.standard_normal((2, 4, 3))), mt.tensor(rng.standard_normal((2, 4, 3)))

    def second(x, w):
        (gx,) = grad(group_norm(x, 2, w), [x], grad_outputs=[v], create_graph=True)
        return grad((gx * u).sum(), [x, w], create_graph=True)

    assert gradcheck(second, (x, w))


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 2, 2)])
def test_instance_norm_gradcheck_and_gradgradcheck(shape, rng):
    x, w, b = t64(rng.standard_normal(shape)), t64(rng.standard_normal(3)), t64(rng.standard_normal(3))
    fn = lambda x, w, b: instance_norm(x, weight=w, bias=b)
    assert gradcheck(fn, (x, w, b)) and gradgradcheck(fn, (x, w, b))
    rm, rv = mt.tensor(rng.standard_normal(3)), mt.tensor(rng.uniform(0.5, 2, 3))
    ev = lambda x, w, b: instance_norm(x, rm, rv, w, b, use_input_stats=False)
    assert gradcheck(ev, (x, w, b)) and gradgradcheck(ev, (x, w, b))


# ==================================================================================================
# Fused vs composed, one node
# ==================================================================================================


@pytest.mark.parametrize("shape,G", LAYOUTS)
def test_fused_equals_composed_values_and_gradients(shape, G, rng):
    x0, w0, b0, up = (rng.standard_normal(shape), rng.standard_normal(shape[1]), rng.standard_normal(shape[1]),
                      rng.standard_normal(shape))
    results = []
    for fn in (group_norm, group_norm_composed):
        x, w, b = t64(x0), t64(w0), t64(b0)
        y = fn(x, G, w, b)
        y.backward(mt.tensor(up))
        results.append([y.array, x.grad.array, w.grad.array, b.grad.array])
    for a, c in zip(*results):
        np.testing.assert_allclose(a, c, rtol=1e-11, atol=1e-12)


def test_fused_is_one_graph_node_saving_group_statistics():
    x = mt.randn(2, 6, 5, dtype=mt.float16, requires_grad=True)
    y = group_norm(x, 3, mt.ones(6, dtype=mt.float16, requires_grad=True), mt.zeros(6, dtype=mt.float16, requires_grad=True))
    assert y.grad_fn.name() == "NativeGroupNormBackward0"
    assert all(e is None or e[0].name() == "AccumulateGrad" for e in y.grad_fn.next_edges)
    _, _, mean, rstd = y.grad_fn.saved_tensors
    assert mean.shape == rstd.shape == (2, 3) and mean.dtype == rstd.dtype == np.float32


# ==================================================================================================
# PyTorch: float64 and float32, random upstream gradients
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,G", [((4, 6, 16), 3), ((3, 8, 4, 5), 4), ((5, 4), 2), ((2, 6, 3, 3), 1), ((2, 6, 7), 6)])
@pytest.mark.parametrize("affine,bias", AFFINE)
def test_group_norm_matches_torch(dtype, shape, G, affine, bias, device, rng):
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    ps = [rng.standard_normal(shape[1]).astype(dtype) for flag in (affine, bias) if flag]

    def call(fn, unit_weight=False):
        def f(x, *p):
            it = iter(p)
            w = next(it) if affine else None
            if w is None and unit_weight:
                w = torch.ones(shape[1], dtype=x.dtype, device=x.device)
            return fn(x, G, w, next(it) if bias else None, 1e-5)
        return f

    # PyTorch 2.13's backward of group_norm with a bias but no weight fails ("tensor does not have a
    # device"); with a weight of ones (not requiring grad) it is the same function.
    compare_with_torch(call(group_norm), call(TF.group_norm, unit_weight=bias and not affine), [x, *ps], device=device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(3, 4, 7), (2, 3, 4, 5), (2, 2, 2, 3, 2)])
def test_instance_norm_matches_torch_including_running_stats(dtype, shape, rng):
    C = shape[1]
    x, w, b = (rng.standard_normal(shape) * 2 + 3).astype(dtype), rng.standard_normal(C).astype(dtype), \
        rng.standard_normal(C).astype(dtype)
    rm0, rv0 = rng.standard_normal(C).astype(dtype), rng.uniform(0.5, 2, C).astype(dtype)
    ours_stats, theirs_stats = (mt.tensor(rm0), mt.tensor(rv0)), (torch.tensor(rm0), torch.tensor(rv0))
    compare_with_torch(lambda x, w, b: instance_norm(x, *ours_stats, w, b, True, 0.3, 1e-5),
                       lambda x, w, b: TF.instance_norm(x, *theirs_stats, w, b, True, 0.3, 1e-5), [x, w, b])
    for o, t in zip(ours_stats, theirs_stats):  # per-(n, c) mean and unbiased variance, averaged over n
        np.testing.assert_allclose(o.array, t.numpy(), rtol=1e-6 if dtype == np.float32 else 1e-12)
    compare_with_torch(lambda x, w, b: instance_norm(x, *ours_stats, w, b, False, 0.3, 1e-5),
                       lambda x, w, b: TF.instance_norm(x, *theirs_stats, w, b, False, 0.3, 1e-5), [x, w, b])
    compare_with_torch(lambda x: instance_norm(x), lambda x: TF.instance_norm(x), [x])


# ==================================================================================================
# Properties over shapes and groups
# ==================================================================================================


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
       st.lists(st.integers(1, 4), min_size=0, max_size=2), st.booleans(), st.integers(0, 2**31 - 1))
def test_group_norm_properties(N, G, cpg, spatial, transposed, seed):
    rng = np.random.default_rng(seed)
    shape = (N, G * cpg, *spatial)
    if N * cpg * int(np.prod(spatial)) == 1:  # one value in all: PyTorch's refusal, tested below
        return
    x0 = rng.standard_normal(shape) * rng.uniform(0.1, 10) + rng.uniform(-5, 5)
    w0, b0 = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    x = t64(np.ascontiguousarray(np.swapaxes(x0, 0, 1))).transpose(0, 1) if transposed else t64(x0)  # a strided view
    y = group_norm(x, G, t64(w0), t64(b0))
    xt = torch.tensor(x0)
    np.testing.assert_allclose(y.array, TF.group_norm(xt, G, torch.tensor(w0), torch.tensor(b0)).numpy(),
                               rtol=1e-9, atol=1e-9)
    # each group of xhat has mean 0 and, when its spread dominates eps, mean square ≈ 1; Σ dx = 0 per group
    xhat = group_norm(x, G).array.reshape(N, G, -1)
    np.testing.assert_allclose(xhat.mean(2), 0, atol=1e-9)
    var = x0.reshape(N, G, -1).var(2)
    np.testing.assert_allclose((xhat ** 2).mean(2), var / (var + 1e-5), rtol=1e-9, atol=1e-12)
    up = rng.standard_normal(shape)
    (dx,) = grad(group_norm(x, G, t64(w0)), [x], grad_outputs=[mt.tensor(up)])
    np.testing.assert_allclose(dx.array.reshape(N, G, -1).sum(2), 0, atol=1e-8 * (1 + np.abs(dx.array).max()))


# ==================================================================================================
# Edge values, against the math
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("value", [0.0, -2.5, 1e4 + 0.1])
def test_constant_group_gives_exactly_bias_and_zero_weight_grad(dtype, value, rng):
    x = mt.tensor(np.full((2, 4, 3, 2), value, dtype), requires_grad=True)
    w = mt.tensor(rng.standard_normal(4).astype(dtype), requires_grad=True)
    b = mt.tensor(rng.standard_normal(4).astype(dtype), requires_grad=True)
    y = group_norm(x, 2, w, b)
    np.testing.assert_array_equal(y.array, np.broadcast_to(b.array[:, None, None], (2, 4, 3, 2)))
    y.backward(mt.tensor(rng.standard_normal((2, 4, 3, 2)).astype(dtype)))
    assert np.all(w.grad.array == 0) and np.all(np.isfinite(x.grad.array))


def test_huge_offset_small_spread_float64(rng):
    # 1e8 + N(0, 1): GroupNorm is shift-invariant, so the answer is that of the noise alone
    noise, up = rng.standard_normal((2, 6, 10)), rng.standard_normal((2, 6, 10))
    w = rng.standard_normal(6)
    x = t64(1e8 + noise)
    y = group_norm(x, 3, mt.tensor(w))
    y.backward(mt.tensor(up))
    xn = torch.tensor(noise, requires_grad=True)
    yt = TF.group_norm(xn, 3, torch.tensor(w))
    yt.backward(torch.tensor(up))
    np.testing.assert_allclose(y.array, yt.detach().numpy(), rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(x.grad.array, xn.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_float16_input_is_normalized_in_float32(rng):
    x0 = (rng.standard_normal((2, 8, 5, 5)) * 100 + 300).astype(np.float16)
    w, b = mt.tensor(rng.standard_normal(8).astype(np.float32)), mt.tensor(rng.standard_normal(8).astype(np.float32))
    y = group_norm(mt.tensor(x0), 4, w, b)
    assert y.dtype == np.float16
    ref = TF.group_norm(torch.tensor(x0.astype(np.float64)), 4, torch.tensor(w.array.astype(np.float64)),
                        torch.tensor(b.array.astype(np.float64))).numpy()
    np.testing.assert_allclose(y.array.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())
    compare_with_torch(lambda x: group_norm(x, 4), lambda x: TF.group_norm(x, 4), [x0], check_dtype=True)


def test_one_group_is_layer_norm_and_one_channel_per_group_is_instance_norm(rng):
    x0, up = rng.standard_normal((3, 4, 2, 5)), rng.standard_normal((3, 4, 2, 5))
    outs = []
    for fn in (lambda x: group_norm(x, 1), lambda x: layer_norm(x, (4, 2, 5)),
               lambda x: group_norm(x, 4), lambda x: instance_norm(x)):
        x = t64(x0)
        y = fn(x)
        y.backward(mt.tensor(up))
        outs.append((y.array, x.grad.array))
    for a, b in ((outs[0], outs[1]), (outs[2], outs[3])):
        np.testing.assert_allclose(a[0], b[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a[1], b[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(outs[2][0], TF.instance_norm(torch.tensor(x0)).numpy(), rtol=1e-12, atol=1e-12)


def test_empty_batch_and_empty_spatial(rng):
    for shape in ((0, 4, 3), (2, 4, 0)):
        x = t64(np.zeros(shape))
        y = group_norm(x, 2, t64(np.ones(4)), t64(np.zeros(4)))
        assert y.shape == shape and y.shape == tuple(TF.group_norm(torch.zeros(shape), 2).shape)
        y.sum().backward()
        assert x.grad.shape == shape


# ==================================================================================================
# Bad input: the error type and what the message names
# ==================================================================================================


@pytest.mark.parametrize("call, err, words", [
    (lambda x: group_norm(x, 4), ShapeError, "divisible by num_groups, but got input of shape \\[2, 6, 3\\] and num_groups=4"),
    (lambda x: group_norm(x, 2, mt.ones(4, dtype=mt.float64)), ShapeError,
     "Expected weight to be a vector of size equal to the number of channels.*\\[4\\]"),
    (lambda x: group_norm(x, 2, None, mt.ones(2, 3, dtype=mt.float64)), ShapeError, "bias of shape \\[2, 3\\]"),
    (lambda x: group_norm(x[0, 0], 1), ShapeError, "Expected at least 2 dimensions for input tensor but received 1"),
    (lambda x: group_norm(x.to(mt.int64), 2), TypeError, "floating point input"),
    (lambda x: group_norm(x, 2, eps="1e-5"), TypeError, "eps must be a real number"),  # negative: PyTorch's
    (lambda x: group_norm(x, 0), OptionError, "num groups to be a positive int, got 0"),
    (lambda x: group_norm(x, 2.0), OptionError, "positive int"),
    (lambda x: group_norm(x, 2, mt.ones(6, dtype=mt.float32)), TypeError, "weight has dtype float32"),
    (lambda x: group_norm(x[:1, :, :1], 6), ValueError, "Expected more than 1 value per channel when training"),
    (lambda x: instance_norm(x[:, :, :1]), ValueError, "Expected more than 1 spatial element when training"),
    (lambda x: instance_norm(x[:, :, 0]), ValueError, "Expected more than 1 spatial element"),
    (lambda x: instance_norm(x, use_input_stats=False), RuntimeError,
     "Expected running_mean and running_var to be defined when use_input_stats is false"),
    (lambda x: instance_norm(x, mt.zeros(4, dtype=mt.float64), mt.ones(6, dtype=mt.float64)), ShapeError,
     "running_mean to be a Tensor of shape \\(6,\\).*got \\(4,\\)"),
    (lambda x: instance_norm(x, weight=mt.ones(5, dtype=mt.float64)), ShapeError, "weight.*\\(6,\\).*got \\(5,\\)"),
    (lambda x: instance_norm(x[0, 0]), ShapeError, "expected an input of shape \\(N, C, \\*\\)"),
    (lambda x: instance_norm(x, eps=0), ValueError, "eps must not be 0"),
])
def test_bad_input(call, err, words):
    with pytest.raises(err, match=words):
        call(mt.randn(2, 6, 3, dtype=mt.float64))


def test_errors_are_caught_as_pytorch_code_catches_them():
    x = mt.randn(2, 6, 3, dtype=mt.float64)
    with pytest.raises(RuntimeError):  # PyTorch raises RuntimeError for these
        group_norm(x, 4)
    with pytest.raises(RuntimeError):
        group_norm(x, 2, mt.ones(4, dtype=mt.float64))
    with pytest.raises(RuntimeError):
        TF.group_norm(torch.randn(2, 6, 3), 4)
