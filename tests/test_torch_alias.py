"""The ``torch`` alias (interop/torch_alias.py, interop/torch_namespaces.py): imports, the extras,
clear errors for missing names, no leak, and docs/torch_compat.md up to date."""

import pathlib
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitorch_ln as mt
import minitorch_ln.distributed as mt_dist
from helpers import torch  # the real PyTorch, the reference
from minitorch_ln.interop import torch_alias as ta
from minitorch_ln.interop.torch_alias import TorchCompatError, torch_alias

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "torch_compat.md"


@pytest.fixture
def T():
    """The alias's ``torch`` for the test's duration (then the real one again)."""
    with torch_alias():
        import torch as alias_torch
        yield alias_torch


def _alias_modules():
    return [k for k, m in sys.modules.items() if isinstance(m, ta._AliasModule)]


def test_every_import_form_resolves_to_minitorch_ln():
    with torch_alias():
        import torch as t
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.nn import functional as F2
        import torch.optim
        from torch.utils.data import DataLoader, Dataset
        import torch.backends.cuda
        import torch.cuda.amp
        import torch.amp
        import torch.distributed as dist
        import torch.linalg
        from torch.nn.parallel import DistributedDataParallel  # noqa: F401 - nanoGPT imports it
        from torch.utils.data.dataloader import DataLoader as DL2  # minGPT's import

        assert F is F2 and t.nn is nn and t.nn.functional is F
        assert nn.Linear is mt.nn.Linear and nn.Module is mt.nn.Module and nn.Parameter is mt.nn.Parameter
        assert F.layer_norm is mt.nn.functional.layer_norm and t.optim.AdamW is mt.optim.AdamW
        assert DataLoader is DL2 is mt.utils.data.DataLoader and Dataset is mt.utils.data.Dataset
        assert t.Tensor is mt.Tensor and t.no_grad is mt.no_grad and t.tensor is mt.tensor
        assert t.linalg.vector_norm is mt.linalg.vector_norm and dist.init_process_group is mt_dist.init_process_group
        assert t.cuda.amp.GradScaler is not None and t.amp.autocast is t.autocast
        x = t.randn(2, 3)
        assert isinstance(x, mt.Tensor) and x.dtype == np.float32


def test_submodules_reachable_as_attributes_after_import_torch(T):
    assert T.nn.functional.softmax is mt.nn.functional.softmax
    assert T.nn.utils.clip_grad_norm_ is mt.optim.clip_grad_norm_
    assert T.optim.lr_scheduler.LambdaLR is mt.optim.lr_scheduler.LambdaLR
    assert T.backends.cudnn.is_available() is False and T.distributed.is_initialized() is False


@pytest.mark.parametrize("stmt, name, exc", [
    ("torch.bogus_fn", "torch.bogus_fn", AttributeError),
    ("torch.nn.functional.bogus_fn", "torch.nn.functional.bogus_fn", AttributeError),
    ("torch.cuda.bogus", "torch.cuda.bogus", AttributeError),
    ("import torch.bogus_mod", "torch.bogus_mod", ImportError),
    ("from torch import bogus_name", "torch.bogus_name", ImportError),
    ("from torch.nn import BogusLayer", "torch.nn.BogusLayer", ImportError),
    ("import torch._dynamo", "torch._dynamo", ImportError),
])
def test_missing_names_say_which_and_point_to_the_docs(T, stmt, name, exc):
    with pytest.raises(exc, match=rf"{name.replace('.', '[.]')} is not provided .*docs/torch_compat\.md"):
        exec(stmt, {"torch": T})


def test_missing_names_keep_hasattr_probes_false(T):
    # nanoGPT: self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
    assert hasattr(T.nn.functional, "scaled_dot_product_attention")
    assert not hasattr(T.nn.functional, "bogus_fn") and not hasattr(T, "__wrapped__")
    assert issubclass(TorchCompatError, AttributeError)


def test_the_alias_never_leaks():
    real = sys.modules["torch"]  # helpers imported the real PyTorch
    with torch_alias():
        import torch as inside
        import torch.nn.functional as _f  # noqa: F401
        assert inside is not real and ta.is_installed()
        with torch_alias():  # nested: the inner exit keeps the outer alias
            pass
        import torch as still
        assert still is inside
    assert sys.modules["torch"] is real and not ta.is_installed() and not _alias_modules()
    import torch as after
    assert after is real and after.nn.functional.softmax is torch.nn.functional.softmax


def test_compile_returns_its_argument(T):
    model = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.GELU())
    keys = list(model.state_dict())
    compiled = T.compile(model, mode="max-autotune", fullgraph=True)
    assert compiled is model and compiled._orig_mod is model
    assert list(model.state_dict()) == keys and len(list(model.modules())) == 3  # no cycle, no new keys

    @T.compile
    def f(x):
        return x * 2

    @T.compile(dynamic=True)
    def g(x):
        return x + 1

    assert f(3) == 6 and g(3) == 4
    with pytest.raises(RuntimeError, match="expected a Module or a callable, got int"):
        T.compile(3)


def test_backends_flags_settable_with_pytorchs_defaults(T):
    from minitorch_ln.interop.torch_namespaces import BACKENDS_CUDNN, _MatmulFlags

    # PyTorch 2.13's defaults, written out: a script run in this process (test_apps_run runs one in
    # both frameworks) may have set the live flags of either
    assert {n: BACKENDS_CUDNN[n] for n in ("allow_tf32", "benchmark", "deterministic", "enabled")} == {
        "allow_tf32": True, "benchmark": False, "deterministic": False, "enabled": True}
    assert _MatmulFlags().allow_tf32 is False
    before = T.backends.cuda.matmul.allow_tf32
    T.backends.cuda.matmul.allow_tf32 = True
    T.backends.cudnn.allow_tf32 = T.backends.cudnn.benchmark = T.backends.cudnn.deterministic = True
    assert T.backends.cuda.matmul.allow_tf32 and T.backends.cudnn.benchmark
    T.backends.cuda.matmul.allow_tf32 = before
    assert "nothing" in T.backends.cuda.__doc__ and "no effect" in T.backends.cudnn.__doc__
    assert T.backends.mps.is_available() is False


def test_set_float32_matmul_precision(T):
    T.set_float32_matmul_precision("high")
    assert T.get_float32_matmul_precision() == "high"
    T.set_float32_matmul_precision("highest")
    with pytest.raises(ValueError, match="'fast' is not one of 'highest', 'high', or 'medium'"):
        T.set_float32_matmul_precision("fast")


def test_set_grad_enabled_as_function_and_context_manager(T):
    # the same sequence in both frameworks
    for lib in (torch, T):
        log = []
        lib.set_grad_enabled(False)
        log.append(lib.is_grad_enabled())
        lib.set_grad_enabled(True)
        with lib.set_grad_enabled(False):
            log.append(lib.is_grad_enabled())
            log.append((lib.ones(2, requires_grad=True) * 2).requires_grad)
        log.append(lib.is_grad_enabled())

        @lib.set_grad_enabled(False)
        def f():
            return lib.is_grad_enabled()

        log += [lib.is_grad_enabled(), f(), lib.is_grad_enabled()]
        assert log == [False, False, False, True, True, False, True], lib
    with pytest.raises(TypeError, match="argument 'mode' must be bool, not str"):
        T.set_grad_enabled("no")


def test_inference_mode_records_no_graph(T):
    x = T.ones(2, requires_grad=True)
    with T.inference_mode():
        assert not (x * 2).requires_grad
    with T.inference_mode(False):
        assert (x * 2).requires_grad

    @T.inference_mode()
    def f(t):
        return t * 2

    @T.inference_mode
    def g(t):
        return t * 3

    assert not f(x).requires_grad and not g(x).requires_grad and T.is_grad_enabled()


def test_distributed_before_init_process_group(T, monkeypatch):
    # torch.distributed is minitorch_ln.distributed (MPI, an optional extra): nothing works before
    # init_process_group, with PyTorch's errors; without mpi4py it is unavailable and says how to install it
    assert T.distributed.is_initialized() is False
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        T.distributed.get_rank()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        T.nn.parallel.DistributedDataParallel(T.nn.Linear(2, 2))
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # as if not installed
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None)
    assert T.distributed.is_available() is False
    with pytest.raises(RuntimeError, match=r"pip install 'minitorch-ln\[distributed\]'"):
        T.distributed.init_process_group(backend="gloo")


def test_manual_seed_returns_a_generator_and_repeats(T):
    g = T.manual_seed(1234)
    assert g.initial_seed() == 1234 and callable(g.manual_seed)
    a = T.randn(3).numpy()
    T.manual_seed(1234)
    np.testing.assert_array_equal(a, T.randn(3).numpy())


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor", "HalfTensor"])
def test_legacy_constructors_match_pytorch(name):
    data = [1, 0, 3]
    # PyTorch first: its C code looks itself up in sys.modules, where the alias would be
    theirs, theirs_shape, theirs_empty = getattr(torch, name)(data), getattr(torch, name)(2, 3).shape, getattr(torch, name)()
    with torch_alias():
        import torch as T
        ours = getattr(T, name)(data)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert getattr(T, name)(2, 3).shape == tuple(theirs_shape) == (2, 3)
        assert getattr(T, name)().shape == tuple(theirs_empty.shape) == (0,)
        assert isinstance(ours, getattr(T, name)) and not isinstance(T.tensor([1.0], dtype=T.int8), getattr(T, name))
        with pytest.raises(TypeError, match=rf"{name}\(\): expected sizes \(ints\) or one sequence of data, got int, str"):
            getattr(T, name)(2, "x")


@given(st.lists(st.integers(-2**40, 2**40), max_size=6))
def test_long_tensor_from_any_int_list_matches_pytorch(data):
    theirs = torch.LongTensor(data)
    with torch_alias():
        import torch as T
        ours = T.LongTensor(data)
    assert ours.dtype == np.int64 and ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_dtypes_and_devices_have_pytorchs_names(T):
    for name in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
                 "half", "float", "double", "long", "short", "int"):
        assert str(getattr(T, name)) == str(getattr(torch, name)).removeprefix("torch.").replace("bool", "bool"), name
    assert isinstance(T.float32, T.dtype)
    assert T.device("cuda", 1) == "cuda:1" and T.device("cpu") == "cpu" and T.device(0) == "cuda:0"
    assert isinstance(T.zeros(1).device, T.device)
    assert T.bfloat16 == mt.bfloat16 and T.zeros(2, dtype=T.bfloat16).dtype == mt.bfloat16  # a real dtype (ml_dtypes)


def test_compat_doc_is_up_to_date():
    text = DOC.read_text()
    assert ta.render_compat_doc() in text, ("docs/torch_compat.md is stale: run python -m "
                                            "minitorch_ln.interop.torch_alias --write-docs docs/torch_compat.md")
    assert "## What differs on purpose" in text.split(ta._BEGIN)[0]
    names = ta.compat_names()
    assert {"compile", "set_grad_enabled", "LongTensor", "no_grad", "Tensor"} <= set(names["torch"])
    assert {"is_available", "GradScaler", "autocast"} <= set(names["torch.cuda"]) | set(names["torch.cuda.amp"])


def test_write_compat_doc_keeps_the_hand_written_part(tmp_path):
    p = tmp_path / "compat.md"
    p.write_text("# Mine\n\nhand-written\n")
    ta.write_compat_doc(p)
    ta.write_compat_doc(p)  # idempotent
    text = p.read_text()
    assert text.startswith("# Mine\n\nhand-written\n") and text.count(ta._BEGIN) == 1
