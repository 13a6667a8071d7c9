"""BatchNorm1d/2d/3d: one ``_BatchNorm`` implementation over any ``(N, C, ...)``. Gradients (first and
second order, strided inputs), PyTorch (training, eval, running statistics over several steps), shapes,
edge values, errors, PyTorch state dicts. Everything runs once with each CPU kernel implementation."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.nn.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm
from minitorch_ln.nn.normalization import BatchNorm2d as ReExported2d
from minitorch_ln.ops.batch_norm import batch_norm_composed

pytestmark = pytest.mark.usefixtures("cpu_kernels")

TF = torch.nn.functional
CLASSES = {2: (BatchNorm1d, torch.nn.BatchNorm1d), 3: (BatchNorm1d, torch.nn.BatchNorm1d),
           4: (BatchNorm2d, torch.nn.BatchNorm2d), 5: (BatchNorm3d, torch.nn.BatchNorm3d)}


def _train(x, w, b):
    return F.batch_norm(x, None, None, w, b, training=True)


# ==================================================================================================
# Gradient checks in float64: 4-D and 5-D, strided layouts, second order
# ==================================================================================================


@pytest.mark.parametrize("shape", [(3, 2, 2, 3), (2, 3, 2, 2, 2), (4, 2, 1, 1)])
def test_gradcheck_and_gradgradcheck(shape, rng):
    C = shape[1]
    args = (t64(rng.standard_normal(shape)), t64(rng.standard_normal(C)), t64(rng.standard_normal(C)))
    assert gradcheck(_train, args)
    assert gradgradcheck(_train, args)
    assert gradgradcheck(lambda x: F.batch_norm(x, None, None, training=True), args[:1])


def test_gradcheck_noncontiguous_and_channels_last(rng):
    x, w, b = rng.standard_normal((3, 2, 2, 3)), rng.standard_normal(2), rng.standard_normal(2)
    gradcheck_noncontiguous(_train, [x, w, b], gg=True)
    # channels last: an (N, H, W, C) buffer seen as (N, C, H, W), the channel axis with stride 1
    nhwc = t64(rng.standard_normal((3, 2, 2, 4)))
    wt, bt = t64(rng.standard_normal(4)), t64(rng.standard_normal(4))
    assert gradcheck(lambda t, w, b: _train(t.permute(0, 3, 1, 2), w, b), (nhwc, wt, bt))
    assert gradgradcheck(lambda t, w, b: _train(t.permute(0, 3, 1, 2), w, b), (nhwc, wt, bt))
    ndhwc = t64(rng.standard_normal((2, 2, 2, 2, 3)))
    assert gradcheck(lambda t: _train(t.permute(0, 4, 1, 2, 3), None, None), (ndhwc,))


def test_module_gradcheck_in_eval_and_training(rng):
    bn = BatchNorm2d(3, dtype=mt.float64)
    x = t64(rng.standard_normal((2, 3, 2, 2)))
    assert gradcheck(lambda x: bn(x), (x,))  # training: batch statistics (running ones move, harmlessly)
    bn.eval()
    assert gradcheck(lambda x, w, b: F.batch_norm(x, bn.running_mean, bn.running_var, w, b), (x, bn.weight, bn.bias))
    assert gradgradcheck(lambda x: bn(x), (x,))


def test_fused_equals_composed(rng):
    x0, w0, b0 = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal(3), rng.standard_normal(3)
    up = rng.standard_normal((2, 3, 4, 5))
    results = []
    for fn in (_train, batch_norm_composed):
        x, w, b = t64(x0), t64(w0), t64(b0)
        y = fn(x, w, b)
        y.backward(mt.tensor(up))
        results.append([y.array, x.grad.array, w.grad.array, b.grad.array])
    for a, c in zip(*results):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)


# ==================================================================================================
# PyTorch: float64 and float32, training and eval, running statistics over several steps
# ==================================================================================================


def _pair(ndim, dtype, **kw):
    cls, ref_cls = CLASSES[ndim]
    ours, ref = cls(4, dtype=mt.float64 if dtype == np.float64 else mt.float32, **kw), ref_cls(4, **kw)
    ref = ref.double() if dtype == np.float64 else ref
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_()
    ours.load_state_dict(ref.state_dict())
    return ours, ref


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-10) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(5, 4, 3, 2), (3, 4, 2, 3, 2), (6, 4), (3, 4, 5)])
@pytest.mark.parametrize("kw", [dict(), dict(momentum=None), dict(affine=False), dict(momentum=0.3, eps=1e-3),
                                dict(bias=False)], ids=["default", "cumulative", "no-affine", "momentum-eps", "no-bias"])
def test_steps_then_eval_match_torch(dtype, shape, kw, rng):
    ours, ref = _pair(len(shape), dtype, **kw)
    tol = _tol(dtype)
    for step in range(3):
        x = (rng.standard_normal(shape) * (step + 1) + step).astype(dtype)
        up = rng.standard_normal(shape).astype(dtype)
        xm, xt = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ym, yt = ours(xm), ref(xt)
        assert ym.dtype == dtype and ym.requires_grad
        ym.backward(mt.tensor(up))
        yt.backward(torch.tensor(up))
        np.testing.assert_allclose(ym.array, yt.detach().numpy(), **tol)
        np.testing.assert_allclose(xm.grad.array, xt.grad.numpy(), **tol)
        for name in ("running_mean", "running_var"):
            np.testing.assert_allclose(getattr(ours, name).array, getattr(ref, name).numpy(), **tol)
        assert ours.num_batches_tracked.item() == ref.num_batches_tracked.item() == step + 1
    for name in ("weight", "bias"):
        if getattr(ref, name) is not None:
            np.testing.assert_allclose(getattr(ours, name).grad.array, getattr(ref, name).grad.numpy(), **tol)
        else:
            assert getattr(ours, name) is None
    ours.eval()
    ref.eval()
    x = rng.standard_normal(shape).astype(dtype)
    compare_with_torch(lambda t: ours(t), lambda t: ref(t), [x])  # eval: running statistics, random upstream


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ndim", [4, 5])
@pytest.mark.parametrize("training", [True, False])
def test_without_running_stats_matches_torch(dtype, ndim, training, rng):
    ours, ref = _pair(ndim, dtype, track_running_stats=False)
    assert ours.running_mean is None and ours.num_batches_tracked is None
    assert list(ours.state_dict()) == list(ref.state_dict()) == ["weight", "bias"]
    ours.train(training)
    ref.train(training)  # no running statistics: batch statistics in eval too
    x = rng.standard_normal((3, 4, 2, 3, 2)[:ndim]).astype(dtype)
    compare_with_torch(lambda t: ours(t), lambda t: ref(t), [x])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("training", [True, False])
def test_functional_4d_matches_torch(dtype, training, rng):
    x = rng.standard_normal((4, 3, 5, 2)).astype(dtype)
    w, b = rng.standard_normal(3).astype(dtype), rng.standard_normal(3).astype(dtype)
    rm, rv = rng.standard_normal(3).astype(dtype), rng.uniform(0.5, 2, 3).astype(dtype)
    bufs = [(mt.tensor(rm), mt.tensor(rv)), (torch.tensor(rm), torch.tensor(rv))]
    compare_with_torch(lambda x, w, b: F.batch_norm(x, *bufs[0], w, b, training=training, momentum=0.2),
                       lambda x, w, b: TF.batch_norm(x, *bufs[1], w, b, training=training, momentum=0.2), [x, w, b])
    for ours, theirs in zip(bufs[0], bufs[1]):
        np.testing.assert_allclose(ours.array, theirs.numpy(), **_tol(dtype))


def test_torch_state_dict_loads_and_outputs_agree(rng):
    for cls, ref_cls, shape in ((BatchNorm2d, torch.nn.BatchNorm2d, (4, 3, 5, 5)),
                                (BatchNorm3d, torch.nn.BatchNorm3d, (2, 3, 2, 4, 3))):
        ref = ref_cls(3)
        ref.train()
        for _ in range(3):  # non-trivial running statistics and num_batches_tracked
            ref(torch.randn(*shape) * 2 + 1)
        with torch.no_grad():
            ref.weight.normal_()
            ref.bias.normal_()
        ref.eval()
        ours = cls(3)
        assert list(ours.state_dict()) == list(ref.state_dict()) == [
            "weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
        assert repr(ours) == repr(ref)
        ours.load_state_dict(ref.state_dict())
        ours.eval()
        assert ours.num_batches_tracked.item() == 3 and ours.num_batches_tracked.dtype == np.int64
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(ours(mt.tensor(x)).array, ref(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_reset_parameters_and_running_stats(rng):
    bn = BatchNorm2d(3)
    for _ in range(2):
        bn(mt.tensor(rng.standard_normal((4, 3, 2, 2)).astype(np.float32) + 3))
    bn.weight.array[...] = 5.0
    assert bn.num_batches_tracked.item() == 2 and not np.allclose(bn.running_mean.array, 0)
    bn.reset_running_stats()
    assert bn.num_batches_tracked.item() == 0 and np.all(bn.running_mean.array == 0) and np.all(bn.running_var.array == 1)
    assert np.all(bn.weight.array == 5.0)
    bn.reset_parameters()
    assert np.all(bn.weight.array == 1.0) and np.all(bn.bias.array == 0.0)
    BatchNorm3d(2, affine=False, track_running_stats=False).reset_parameters()  # nothing to reset: no error
    assert ReExported2d is BatchNorm2d and issubclass(BatchNorm1d, _BatchNorm)
    with pytest.raises(NotImplementedError):
        _BatchNorm(3)(mt.randn(2, 3))


# ==================================================================================================
# Hypothesis: shapes and strides against PyTorch in float64
# ==================================================================================================


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.lists(st.integers(1, 4), min_size=2, max_size=3),
       st.booleans(), st.booleans(), st.integers(0, 2**31 - 1))
def test_property_shapes_and_layouts_match_torch(N, C, rest, channels_last, affine, seed):
    shape = (N, C, *rest)
    if N * int(np.prod(rest)) < 2:
        rest = [r + 1 for r in rest]
        shape = (N, C, *rest)
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal(shape) * rng.uniform(0.1, 10) + rng.uniform(-5, 5)
    w0, b0, up = rng.standard_normal(C), rng.standard_normal(C), rng.standard_normal(shape)
    perm = (0, *range(2, len(shape)), 1)  # channels last in memory, then viewed as (N, C, ...)
    back = (0, len(shape) - 1, *range(1, len(shape) - 1))
    xm = t64(np.ascontiguousarray(x0.transpose(perm)) if channels_last else x0)
    wm, bm = (t64(w0), t64(b0)) if affine else (None, None)
    xin = xm.permute(*back) if channels_last else xm
    ym = _train(xin, wm, bm)
    ym.backward(mt.tensor(up))
    xt = torch.tensor(x0, requires_grad=True)
    wt, bt = (torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)) if affine else (None, None)
    yt = TF.batch_norm(xt, None, None, wt, bt, training=True)
    yt.backward(torch.tensor(up))
    np.testing.assert_allclose(ym.array, yt.detach().numpy(), rtol=1e-9, atol=1e-9)
    dx = xm.grad.array.transpose(back) if channels_last else xm.grad.array
    np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=1e-8, atol=1e-8)
    if affine:
        np.testing.assert_allclose(wm.grad.array, wt.grad.numpy(), rtol=1e-9, atol=1e-9)


# ==================================================================================================
# Edge values: constant channels, float16, large values
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("value", [0.0, 1.0, -3.3, 1e4 + 0.1])
def test_constant_channel_gives_exactly_bias(dtype, value, rng):
    x0 = rng.standard_normal((3, 2, 4, 4)).astype(dtype)
    x0[:, 1] = value  # channel 1 constant over the whole batch
    b0 = np.array([0.5, -1.25], dtype)
    x, w, b = mt.tensor(x0, requires_grad=True), mt.tensor(np.array([2.0, 3.0], dtype)), mt.tensor(b0)
    y = _train(x, w, b)
    np.testing.assert_array_equal(y.array[:, 1], np.full((3, 4, 4), b0[1], dtype))
    y.backward(mt.tensor(rng.standard_normal(x0.shape).astype(dtype)))
    assert np.all(np.isfinite(x.grad.array))


def test_float16_input_against_float64_torch(rng):
    x0 = (rng.standard_normal((4, 3, 5, 5)) * 3 + 2).astype(np.float16)
    up = rng.standard_normal(x0.shape).astype(np.float16)
    bn = BatchNorm2d(3, dtype=mt.float16)
    with mt.no_grad():
        bn.weight.array[...] = np.array([0.5, 1.5, -2.0], np.float16)
    x = mt.tensor(x0, requires_grad=True)
    y = bn(x)
    y.backward(mt.tensor(up))
    assert y.dtype == x.grad.dtype == bn.weight.grad.dtype == bn.running_mean.dtype == np.float16
    ref = torch.nn.BatchNorm2d(3).double()
    with torch.no_grad():
        ref.weight.copy_(torch.tensor([0.5, 1.5, -2.0]))
    xr = torch.tensor(x0.astype(np.float64), requires_grad=True)
    yr = ref(xr)
    yr.backward(torch.tensor(up.astype(np.float64)))
    np.testing.assert_allclose(y.array.astype(np.float64), yr.detach().numpy(), atol=1e-2)
    np.testing.assert_allclose(x.grad.array.astype(np.float64), xr.grad.numpy(), atol=1e-2 * np.abs(xr.grad.numpy()).max())
    np.testing.assert_allclose(bn.running_mean.array.astype(np.float64), ref.running_mean.numpy(), rtol=2e-3, atol=1e-3)
    np.testing.assert_allclose(bn.running_var.array.astype(np.float64), ref.running_var.numpy(), rtol=2e-3)


def test_large_float32_values_keep_a_finite_rstd(rng):
    # squares of 1e20 overflow float32: the variance is summed again in float64 (rstd = 1e-20, not 0)
    x0 = (rng.standard_normal((4, 2, 3, 3)) * 1e20).astype(np.float32)
    y = _train(mt.tensor(x0), None, None)
    ref = TF.batch_norm(torch.tensor(x0.astype(np.float64)), None, None, training=True).numpy()
    np.testing.assert_allclose(y.array, ref, rtol=1e-4, atol=1e-4)


# ==================================================================================================
# Bad input: PyTorch's messages, with what came
# ==================================================================================================


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected 4D input \(got 3D input\).*\(2, 3, 4\)"):
        BatchNorm2d(3)(mt.randn(2, 3, 4))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 5D input\)"):
        BatchNorm2d(3)(mt.randn(2, 3, 4, 4, 4))
    with pytest.raises(ValueError, match=r"BatchNorm3d: expected 5D input \(got 4D input\)"):
        BatchNorm3d(3)(mt.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match=r"BatchNorm1d: expected 2D or 3D input \(got 4D input\)"):
        BatchNorm1d(3)(mt.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match=r"expected 3 channels.*\(2, 4, 2, 2\)"):
        BatchNorm2d(3)(mt.randn(2, 4, 2, 2))
    with pytest.raises(ValueError, match="more than 1 value per channel when training"):
        BatchNorm2d(3)(mt.randn(1, 3, 1, 1))
    with pytest.raises(TypeError, match="floating point"):
        BatchNorm2d(3)(mt.tensor(np.ones((2, 3, 2, 2), np.int64)))
    with pytest.raises(ValueError, match="num_features must be a positive int"):
        BatchNorm3d(0)
    with pytest.raises(ValueError, match="BatchNorm2d: eps must be a finite number > 0"):
        BatchNorm2d(3, eps=-1.0)
    with pytest.raises(TypeError, match="momentum must be a float or None"):
        BatchNorm2d(3, momentum="0.1")
    bn = BatchNorm2d(3)
    bn.eval()
    assert bn(mt.randn(1, 3, 1, 1)).shape == (1, 3, 1, 1)  # eval: running statistics, one value is fine


def test_functional_batch_norm_refuses_what_pytorch_refuses():
    # each case silently truncated running averages or fell back to batch statistics before
    import minitorch_ln.nn.functional as MF
    from minitorch_ln.errors import DtypeError

    x = mt.randn(3, 4, 2, 2)
    with pytest.raises(DtypeError, match="expected running_mean of dtype float32 .* got int64"):
        MF.batch_norm(x, mt.zeros(4, dtype=mt.int64), mt.ones(4, dtype=mt.int64), training=True)
    with pytest.raises(DtypeError, match="got float16"):
        MF.batch_norm(x, mt.zeros(4, dtype=mt.float16), mt.ones(4, dtype=mt.float16), training=True)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        MF.batch_norm(x, None, None, training=False)
    with pytest.raises(RuntimeError, match="running_var must be defined in evaluation mode"):
        MF.batch_norm(x, mt.zeros(4), None, training=False)
    with pytest.raises(ValueError, match="both be None or neither be None"):
        MF.batch_norm(x, None, mt.ones(4), training=True)
    with pytest.raises(TypeError, match="argument 'momentum' must be float, not NoneType"):
        MF.batch_norm(x, mt.zeros(4), mt.ones(4), training=True, momentum=None)
    # float16 input with float32 statistics is PyTorch's mixed precision: allowed
    assert MF.batch_norm(x.half(), mt.zeros(4), mt.ones(4), training=True).dtype == mt.float16


def test_batch_norm_of_an_empty_batch_is_empty_as_pytorch():
    import minitorch_ln.nn.functional as MF

    x = mt.zeros(0, 4, 2, 2, requires_grad=True)
    rm, rv = mt.zeros(4), mt.ones(4)
    y = MF.batch_norm(x, rm, rv, training=True)
    assert y.shape == (0, 4, 2, 2)
    y.sum().backward()
    assert x.grad.shape == (0, 4, 2, 2)
    assert (rm.numpy() == 0).all() and (rv.numpy() == 1).all()  # nothing averaged in
