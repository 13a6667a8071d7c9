"""minitorch_ln.cuda and minitorch_ln.amp: torch.cuda's queries, autocast's rules, GradScaler's
dynamic loss scaling step for step against PyTorch's CPU GradScaler."""

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitorch_ln as mt
from helpers import torch
from minitorch_ln import amp, cuda
from minitorch_ln.backend import DeviceError

no_gpu = pytest.mark.skipif(cuda.is_available(), reason="checks the behaviour without a GPU")


# ------------------------------------------------------------------------------------------ cuda

@no_gpu
def test_cuda_without_a_gpu_is_honest():
    assert cuda.is_available() is False and cuda.device_count() == 0
    assert cuda.memory_allocated() == 0 and cuda.max_memory_allocated() == 0 and cuda.is_bf16_supported() is False
    cuda.manual_seed(0), cuda.manual_seed_all(0), cuda.empty_cache()  # silently ignored, as PyTorch
    for fn in (cuda.current_device, cuda.get_device_name, cuda.synchronize, lambda: cuda.set_device(0)):
        with pytest.raises(DeviceError, match="CuPy"):
            fn()
    assert isinstance(DeviceError("x"), RuntimeError)


def test_cuda_seed_checks():
    with pytest.raises(TypeError, match="manual_seed expects an int, got float"):
        cuda.manual_seed(1.5)
    with pytest.raises(ValueError, match=r"\[-2\*\*63, 2\*\*64\), got 18446744073709551616"):
        cuda.manual_seed_all(2**64)


@pytest.mark.cuda
def test_cuda_with_a_gpu():
    assert cuda.device_count() >= 1 and cuda.current_device() == 0 and cuda.get_device_name()
    cuda.set_device(0)
    x = mt.zeros(1024, 1024, device="cuda")
    assert cuda.memory_allocated() >= 4 * 1024 * 1024
    assert cuda.max_memory_allocated() >= cuda.memory_allocated()
    cuda.synchronize()
    cuda.manual_seed(7)
    a = mt.randn(4, device="cuda").numpy()
    cuda.manual_seed(7)
    np.testing.assert_array_equal(a, mt.randn(4, device="cuda").numpy())
    del x
    cuda.empty_cache()
    with pytest.raises(DeviceError, match="invalid device ordinal 99"):
        cuda.set_device(99)


# ------------------------------------------------------------------------------------------ autocast

def test_autocast_disabled_is_a_no_op_everywhere():
    x = mt.randn(3, 3)
    for dev in ("cpu", "cuda"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with amp.autocast(dev, enabled=False):
                assert not amp.is_autocast_enabled(dev)
                assert (x @ x).dtype == np.float32
    assert not amp.is_autocast_enabled("cpu")


def test_autocast_cpu_bfloat16_default_is_enabled_as_pytorch():
    # PyTorch's CPU default is bfloat16 (ml_dtypes' storage dtype here: matmul computes in float32 and
    # rounds to bfloat16, as PyTorch's CPU kernel)
    with torch.autocast("cpu"):
        theirs = (torch.is_autocast_enabled("cpu"), str(torch.get_autocast_dtype("cpu")),
                  str((torch.randn(2, 2) @ torch.randn(2, 2)).dtype))
    assert theirs == (True, "torch.bfloat16", "torch.bfloat16")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with amp.autocast("cpu"):
            assert amp.is_autocast_enabled("cpu") and amp.get_autocast_dtype("cpu") == amp.bfloat16
            x = mt.randn(2, 2)
            assert (x @ x).dtype == amp.bfloat16
    with amp.autocast("cpu", dtype=mt.float16):
        assert amp.is_autocast_enabled("cpu") and amp.get_autocast_dtype("cpu") == np.float16
        with amp.autocast("cpu", enabled=False):  # nested disable, as PyTorch
            assert not amp.is_autocast_enabled("cpu")
        assert amp.is_autocast_enabled("cpu")
    assert not amp.is_autocast_enabled("cpu") and amp.get_autocast_dtype("cpu") == amp.bfloat16


def test_autocast_disabling_rules_as_pytorch():
    with pytest.warns(UserWarning, match="target dtype is not supported. Disabling autocast"):
        with amp.autocast("cpu", dtype=mt.float64):
            assert not amp.is_autocast_enabled("cpu")
    if not cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available. Disabling"):
            with amp.autocast("cuda"):
                assert not amp.is_autocast_enabled("cuda")
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        amp.autocast("tpu")
    with pytest.raises(TypeError, match="enabled must be a bool, got str"):
        amp.autocast("cpu", enabled="yes")


def test_autocast_as_decorator_and_cuda_amp_form():
    @amp.autocast("cpu", enabled=False)
    def f():
        return amp.is_autocast_enabled("cpu")

    assert f() is False
    with pytest.warns(FutureWarning, match="torch.cuda.amp.autocast"):
        ctx = amp.CudaAutocast(enabled=False)
    with ctx:
        assert not amp.is_autocast_enabled("cuda")


# ------------------------------------------------------------------------------------------ GradScaler

def _run_scaler(lib, pattern, device="cpu", **kw):
    """SGD on one parameter with grads scaled by the scaler; ``pattern[i]`` makes step i's grad inf."""
    Scaler = torch.amp.GradScaler if lib is torch else amp.GradScaler
    w = (torch.nn.Parameter(torch.ones(3)) if lib is torch else mt.nn.Parameter(mt.ones(3)))
    opt = (torch.optim.SGD if lib is torch else mt.optim.SGD)([w], lr=0.1)
    scaler = Scaler(device, **kw)
    scales, weights = [], []
    for bad in pattern:
        x = lib.tensor([1.0, 2.0, float("inf") if bad else 3.0])
        loss = (w * x).sum()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        scales.append(scaler.get_scale())
        weights.append(w.detach().numpy().copy())
    return scales, weights, scaler.state_dict()


@given(st.lists(st.booleans(), min_size=1, max_size=12))
def test_grad_scaler_matches_pytorch_step_for_step(pattern):
    kw = dict(init_scale=8.0, growth_factor=2.0, backoff_factor=0.25, growth_interval=3)
    theirs = _run_scaler(torch, pattern, **kw)
    ours = _run_scaler(mt, pattern, **kw)
    assert ours[0] == theirs[0]  # the scale after every update
    np.testing.assert_allclose(np.array(ours[1]), np.array(theirs[1]), rtol=1e-6)  # skipped steps keep w
    assert ours[2] == theirs[2]


def test_grad_scaler_unscales_gradients_exactly():
    w = mt.nn.Parameter(mt.tensor([1.0, -2.0]))
    opt = mt.optim.SGD([w], lr=1.0)
    s = amp.GradScaler("cpu", init_scale=1024.0)
    scaled = s.scale((w * mt.tensor([3.0, 5.0])).sum())
    assert scaled.dtype == np.float32 and scaled.item() == pytest.approx(1024.0 * (3 - 10))
    scaled.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3072.0, 5120.0])
    s.unscale_(opt)
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 5.0])
    assert s.step(opt) is None and s._per_optimizer  # SGD.step returns None
    s.update()
    np.testing.assert_array_equal(w.detach().numpy(), [-2.0, -7.0])


def test_grad_scaler_state_dict_round_trip_and_disabled():
    s = amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
    _, _, sd = _run_scaler(mt, [False, False, True], init_scale=4.0, growth_interval=2)
    s.load_state_dict(sd)
    assert s.state_dict() == sd == {"scale": 4.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                    "growth_interval": 2, "_growth_tracker": 0}
    off = amp.GradScaler("cpu", enabled=False)
    loss = mt.tensor(2.0, requires_grad=True)
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    w = mt.nn.Parameter(mt.ones(1))
    (w * 3).sum().backward()
    off.step(mt.optim.SGD([w], lr=1.0))
    off.update()
    np.testing.assert_array_equal(w.detach().numpy(), [-2.0])  # stepped as if no scaler


@no_gpu
def test_cuda_grad_scaler_without_a_gpu_disables_itself_as_pytorch():
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling"):
        assert amp.GradScaler().is_enabled() is False
    with pytest.warns(FutureWarning, match="torch.cuda.amp.GradScaler"):
        assert amp.CudaGradScaler(enabled=False).is_enabled() is False


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # the float16 grad: 65536 is inf there
def test_grad_scaler_misuse_errors_as_pytorch():
    w = mt.nn.Parameter(mt.ones(2))
    opt = mt.optim.SGD([w], lr=0.1)
    s = amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="Attempted update but _scale is None"):
        s.update()
    s.scale(w.sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this optimizer"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update"):
        s.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
        s.unscale_(opt)
    s.update()
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
        s.update()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        s.step(opt, closure=lambda: 0)
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        s.load_state_dict({})
    with pytest.raises(TypeError, match="outputs must be a Tensor or a list/tuple of Tensors, got str"):
        s.scale("loss")
    with pytest.raises(ValueError, match="growth factor must be > 1.0, got 0.5"):
        amp.GradScaler("cpu", growth_factor=0.5)
    with pytest.raises(ValueError, match="backoff factor must be < 1.0, got 2"):
        amp.GradScaler("cpu", backoff_factor=2)
    with pytest.raises(ValueError, match="growth_interval must be a positive int, got 0"):
        amp.GradScaler("cpu", growth_interval=0)
    half = mt.nn.Parameter(mt.ones(2, dtype=mt.float16))
    s2 = amp.GradScaler("cpu")
    s2.scale(half.sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        s2.unscale_(mt.optim.SGD([half], lr=0.1))


def test_grad_scaler_growth_overflow_keeps_scale_finite():
    s = amp.GradScaler("cpu", init_scale=3e38, growth_interval=1)
    w = mt.nn.Parameter(mt.ones(1))
    opt = mt.optim.SGD([w], lr=0.0)
    s.scale(w.sum() * 0).backward()
    s.step(opt)
    s.update()
    assert s.get_scale() == float(np.float32(3e38))  # growth to inf is refused, as PyTorch
