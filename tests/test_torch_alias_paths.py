"""Module paths scripts import through the alias (issue 25): ``torch.accelerator``,
``torch.serialization``'s allow-list, ``torch.nn.modules.<file>.<Class>``, ``import torch.onnx``,
``torch.Size``, and the clear error of ``torch.utils.tensorboard`` without its extra."""

import subprocess
import sys

import pytest

import minitorch_ln as mt
from helpers import torch  # the real PyTorch, the reference
from minitorch_ln import accelerator, safe_globals
from minitorch_ln.interop.torch_alias import TorchCompatError, torch_alias
from minitorch_ln.interop.torch_namespaces import NN_MODULE_FILES


@pytest.fixture
def T():
    with torch_alias():
        import torch as alias_torch
        yield alias_torch


# ---- torch.nn.modules.<file> ----------------------------------------------------------------------

@pytest.mark.parametrize("file", sorted(NN_MODULE_FILES))
def test_nn_module_paths_hold_pytorchs_classes(file):
    import importlib

    names = NN_MODULE_FILES[file].split()
    theirs = importlib.import_module(f"torch.nn.modules.{file}")
    assert all(hasattr(theirs, n) for n in names), "a class listed that PyTorch does not define in that file"
    with torch_alias():
        ours = importlib.import_module(f"torch.nn.modules.{file}")
        for n in names:
            assert getattr(ours, n) is getattr(mt.nn, n)


def test_nn_module_paths_in_every_import_form(T):
    from torch.nn.modules.activation import MultiheadAttention
    import torch.nn.modules.linear

    assert MultiheadAttention is mt.nn.MultiheadAttention
    assert T.nn.modules.linear.Linear is mt.nn.Linear and T.nn.modules.Linear is mt.nn.Linear
    with pytest.raises(TorchCompatError, match="torch.nn.modules.linear.Conv2d is not provided"):
        T.nn.modules.linear.Conv2d
    with pytest.raises(ModuleNotFoundError, match="torch.nn.modules.rnn is not provided"):
        import torch.nn.modules.rnn  # noqa: F401


# ---- torch.accelerator ------------------------------------------------------------------------------

def test_accelerator_without_a_gpu_answers_as_pytorch(T):
    if mt.cuda_is_available():
        pytest.skip("this machine has a GPU (see test_accelerator_on_a_gpu)")
    import torch.accelerator as acc

    assert acc is T.accelerator
    assert acc.is_available() is torch.accelerator.is_available() is False
    assert acc.current_accelerator() is torch.accelerator.current_accelerator() is None
    assert acc.device_count() == torch.accelerator.device_count() == 0
    for call in ("current_device_index()", "synchronize()", "empty_cache()", "memory_allocated()",
                 "set_device_index(0)"):
        with pytest.raises(RuntimeError) as theirs:
            eval(f"torch.accelerator.{call}")
        with pytest.raises(RuntimeError) as ours:
            eval(f"acc.{call}")
        assert str(ours.value) == str(theirs.value)
    with acc.device_index(None):
        pass


@pytest.mark.cuda
def test_accelerator_on_a_gpu():
    assert accelerator.is_available() and accelerator.current_accelerator() == mt.device("cuda")
    assert accelerator.device_count() >= 1 and accelerator.current_device_index() == 0
    x = mt.ones(1000, device="cuda")
    accelerator.synchronize()
    assert accelerator.memory_allocated() >= x.numel() * 4
    with accelerator.device_index(0):
        assert accelerator.current_device_index() == 0


# ---- torch.serialization ----------------------------------------------------------------------------

class _Config:
    pass


@pytest.fixture
def clean_globals():
    safe_globals.clear_safe_globals()
    yield
    safe_globals.clear_safe_globals()


def test_safe_globals_as_pytorch(T, clean_globals):
    S = T.serialization
    assert S.get_safe_globals() == [] and callable(S.save) and S.load is mt.load
    S.add_safe_globals([_Config, (dict, "builtins.dict")])
    assert set(S.get_safe_globals()) == {_Config, (dict, "builtins.dict")}
    with S.safe_globals([int]):
        assert int in S.get_safe_globals() and _Config in S.get_safe_globals()
    assert int not in S.get_safe_globals()
    S.clear_safe_globals()
    assert S.get_safe_globals() == []


def test_safe_globals_bad_input_is_a_type_error_as_pytorch(clean_globals):
    with pytest.raises(TypeError):
        torch.serialization.add_safe_globals(_Config)
    with pytest.raises(TypeError):
        safe_globals.add_safe_globals(_Config)


def test_load_still_reads_what_save_wrote_under_safe_globals(tmp_path, clean_globals):
    path = tmp_path / "m.safetensors"
    mt.save({"w": mt.ones(2)}, path)
    with safe_globals.safe_globals([_Config]):
        assert mt.load(path)["w"].tolist() == [1.0, 1.0]


# ---- torch.onnx, torch.Size ---------------------------------------------------------------------------

def test_import_torch_onnx_gives_minitorch_lns_exporter(T):
    import torch.onnx

    import minitorch_ln.onnx

    assert torch.onnx.is_in_onnx_export() is False
    assert torch.onnx.export is minitorch_ln.onnx.export  # tests/test_onnx_export.py checks what it writes


def test_torch_size_through_the_alias(T):
    assert T.Size is mt.Size and T.zeros(2, 3).shape == T.Size([2, 3])
    assert isinstance(T.zeros(2).size(), T.Size)


# ---- torch.utils.tensorboard without tensorboardX ----------------------------------------------------

def test_tensorboard_without_its_extra_names_the_pip_command():
    code = ("import sys; sys.modules['tensorboardX'] = None\n"
            "from minitorch_ln.interop.torch_alias import torch_alias\n"
            "with torch_alias():\n"
            "    try:\n"
            "        from torch.utils.tensorboard import SummaryWriter\n"
            "    except ModuleNotFoundError as e:\n"
            "        print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("ModuleNotFoundError") and "pip install 'minitorch-ln[tensorboard]'" in out
