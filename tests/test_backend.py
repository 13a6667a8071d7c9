"""The CPU side of the backend: devices, the missing-CuPy/GPU errors, dtypes, generators, nvcc checks.

Everything here runs without a GPU. What needs one is in ``tests/test_gpu.py``; the CUDA kernels'
logic is tested on the CPU through the emulator in ``tests/test_cuda_emulated.py``.
"""

import os
import shutil
import subprocess
import sys
import types

import numpy as np

from minitorch_ln.kernels.scatter import scatter_add
import pytest

import minitorch_ln as mt
from minitorch_ln import backend
from minitorch_ln.backend import Device, DeviceError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
no_gpu = pytest.mark.skipif(mt.cuda_is_available(), reason="checks the errors raised where there is no GPU")


# ------------------------------------------------------------------------------------ devices


@pytest.mark.parametrize(
    "spec, kind, index, text",
    [("cpu", "cpu", None, "cpu"), ("CPU", "cpu", None, "cpu"), ("cpu:0", "cpu", None, "cpu"),
     ("cuda", "cuda", 0, "cuda:0"), ("cuda:0", "cuda", 0, "cuda:0"), (" cuda:3 ", "cuda", 3, "cuda:3")],
)
def test_device_parsing(spec, kind, index, text):
    d = Device(spec)
    assert (d.type, d.index, str(d)) == (kind, index, text)
    assert d == text and d == Device(text) and hash(d) == hash(Device(text))
    assert Device(d) == d
    assert backend.device(spec) == d


def test_device_repr_and_none():
    assert repr(Device("cuda:1")) == "device(type='cuda', index=1)"
    assert repr(Device("cpu")) == "device(type='cpu')"
    assert backend.device(None) == "cpu"
    assert Device("cpu") != "cuda" and Device("cpu") != "not a device" and Device("cpu") != 3


@pytest.mark.parametrize(
    "bad, words",
    [("gpu", "expected 'cpu', 'cuda' or 'cuda:N'"), ("cuda:x", "must be an integer"), ("cpu:1", "no index"),
     ("", "unknown device"), (1.5, "expected a device string"), (-1, "device index >= 0"),
     (None.__class__, "expected a device string")],  # a bare index >= 0 is GPU N, as PyTorch's torch.device(0)
)
def test_bad_device_strings(bad, words):
    with pytest.raises(DeviceError, match=words):
        Device(bad)


def test_get_array_module_and_device_of_on_cpu():
    a = np.zeros(3)
    assert backend.get_array_module(a) is np
    assert backend.get_array_module([1, 2], 3.0) is np
    assert backend.device_of(a) == "cpu"
    assert backend.to_device(a, "cpu") is a  # no copy when already there


# ------------------------------------------------------------------------- no CuPy / no GPU


@no_gpu
@pytest.mark.parametrize(
    "make",
    [lambda: mt.zeros(2, device="cuda"), lambda: mt.randn(2, 3, device="cuda:0"), lambda: mt.tensor([1.0], device="cuda"),
     lambda: mt.tensor([1.0]).to("cuda"), lambda: mt.tensor([1.0]).cuda(), lambda: mt.arange(3, device="cuda"),
     lambda: mt.nn.Linear(2, 3).to("cuda")],
    ids=["zeros", "randn", "tensor", "to", "dot_cuda_method", "arange", "module_to"],
)
def test_cuda_without_gpu_names_the_extras(make):
    with pytest.raises(DeviceError) as info:
        make()
    msg = str(info.value)
    assert "cuda12" in msg and "cuda13" in msg and "pip install" in msg


def _fresh_backend(monkeypatch, fake_cupy):
    monkeypatch.setattr(backend, "_cupy", None)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)


def test_missing_cupy_message(monkeypatch):
    _fresh_backend(monkeypatch, None)  # a None entry in sys.modules makes `import cupy` raise ImportError
    with pytest.raises(DeviceError, match="needs CuPy, which is not installed.*cuda12.*cuda13"):
        backend.cupy_or_error()
    assert not backend.cuda_is_available()


def test_cupy_without_gpu_message(monkeypatch):
    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=lambda: 0))
    _fresh_backend(monkeypatch, fake)
    with pytest.raises(DeviceError, match="no GPU was found.*cuda12"):
        backend.cupy_or_error()


def test_cupy_driver_error_message(monkeypatch):
    def broken():
        raise RuntimeError("cudaErrorInsufficientDriver")

    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=broken))
    _fresh_backend(monkeypatch, fake)
    with pytest.raises(DeviceError, match="no usable GPU.*cudaErrorInsufficientDriver"):
        backend.cupy_or_error()


def test_cpu_work_never_imports_cupy():
    # A whole CPU training step (LayerNorm, softmax cross-entropy, Adam) in a fresh interpreter.
    code = (
        "import sys, numpy as np, minitorch_ln as mt\n"
        "from minitorch_ln import nn\n"
        "import minitorch_ln.nn.functional as F\n"
        "m = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 3))\n"
        "opt = mt.optim.AdamW(m.parameters(), lr=1e-2)\n"
        "x = mt.randn(5, 4); t = mt.tensor([0, 1, 2, 1, 0])\n"
        "loss = F.cross_entropy(m(x), t); loss.backward(); opt.step()\n"
        "y = mt.randn(3, 5).softmax(-1).sum(); mt.tensor([1.0]).to('cpu')\n"
        "print('cupy' in sys.modules, any(k.startswith('cupy') for k in sys.modules))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "False"]


# ----------------------------------------------------------------------------------- dtypes


@pytest.mark.parametrize(
    "spec, want",
    [("float32", np.float32), ("float", np.float32), ("half", np.float16), ("double", np.float64), ("long", np.int64),
     ("bool", np.bool_), (np.float16, np.float16), (np.dtype("int32"), np.int32), (mt.float64, np.float64)],
)
def test_as_dtype(spec, want):
    assert backend.as_dtype(spec) == np.dtype(want)


@pytest.mark.parametrize("bad, words", [("float128", "unknown dtype"), (np.float128 if hasattr(np, "float128") else "float128", "dtype"), (object(), "expected a dtype")])
def test_as_dtype_errors(bad, words):
    with pytest.raises(TypeError, match=words):
        backend.as_dtype(bad)


def test_dtype_helpers():
    assert backend.default_float_dtype() == np.float32
    assert backend.is_floating(np.float16) and not backend.is_floating(np.int64)


@pytest.mark.parametrize(
    "a, a_sc, b, b_sc, want",
    [(np.float32, False, np.float64, True, np.float32),   # tensor * Python float stays float32
     (np.int64, False, np.float64, True, np.float32),     # int tensor * 0.5 -> default float
     (np.float32, False, np.float64, False, np.float64),  # two tensors: NumPy's promotion
     (np.float16, False, np.int64, True, np.float16),
     (np.bool_, False, np.int64, True, np.int64),
     (np.float64, True, np.float16, False, np.float16)],
)
def test_result_dtype(a, a_sc, b, b_sc, want):
    assert backend.result_dtype(a, a_sc, b, b_sc) == np.dtype(want)


# ------------------------------------------------------------------------------- generators


def test_manual_seed_reproduces_and_resets():
    backend.manual_seed(7)
    g = backend.generator("cpu")
    assert backend.generator("cpu") is g  # one generator per device until reseeded
    first = mt.randn(4).numpy()
    backend.manual_seed(7)
    assert backend.generator("cpu") is not g
    np.testing.assert_array_equal(mt.randn(4).numpy(), first)


def test_rng_state_round_trip():
    backend.manual_seed(3)
    state = backend.get_rng_state()
    a = mt.rand(5).numpy()
    backend.set_rng_state(state)
    np.testing.assert_array_equal(mt.rand(5).numpy(), a)


@pytest.mark.parametrize("bad", [1.5, "1", True, None])
def test_manual_seed_rejects_non_ints(bad):
    with pytest.raises(TypeError, match="manual_seed expects an int"):
        backend.manual_seed(bad)


@no_gpu
def test_cuda_generator_without_gpu_is_a_clear_error():
    with pytest.raises(DeviceError, match="cuda13"):
        backend.generator("cuda")


def test_scatter_add_sums_repeated_indices():
    target = np.zeros((3, 2))
    scatter_add(target, np.array([0, 2, 0]), np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    np.testing.assert_array_equal(target, [[6.0, 8.0], [0.0, 0.0], [3.0, 4.0]])


# ------------------------------------------------------------------- CUDA sources, statically


def test_kernel_configs_fit_the_hardware():
    # launch shapes chosen by the wrappers: <= 1024 threads, warps whole, rows covered by the threads
    from minitorch_ln.kernels import cuda_layer_norm as L
    from minitorch_ln.kernels import cuda_softmax as S

    for dt in (np.float16, np.float32, np.float64):
        for D in (1, 2, 3, 8, 33, 768, 1000, 4096, 12288, 16384):
            for budget in (L.FWD_ELEMENTS, L.BWD_ELEMENTS):
                cfg = L.row_config(D, dt, budget)
                if cfg is None:
                    continue
                vec, items, wpr, rpb = cfg
                assert D % vec == 0 and vec * np.dtype(dt).itemsize <= 16
                assert 32 * wpr * items * vec >= D, (D, cfg)          # every element has a thread
                assert 32 * wpr * rpb <= 1024 and (rpb == 1 or wpr <= 4)
                assert items * vec <= budget
    assert L.row_config(40000, np.float32, L.FWD_ELEMENTS) is None  # composed fallback
    for C in (1, 10, 1000, 50257):
        wpr, rpb = S.row_config(C)
        assert 32 * wpr * rpb <= 1024


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA toolkit) not installed")
def test_cuda_sources_compile_with_nvcc():
    res = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "check_cuda_sources.py")],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    for name in ("cuda_layer_norm: ok", "cuda_softmax: ok", "cuda_optim: ok"):
        assert name in res.stdout
