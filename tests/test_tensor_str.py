"""Tensors print as PyTorch's (issue 25): the same text for the same values, dtype and flags; and
``float(t)`` of a tensor that requires grad warns as PyTorch warns."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import minitorch_ln as mt
from helpers import torch

# (name, make(lib)): one tensor per case, the same values in both libraries
CASES = [
    ("scalar", lambda lib: lib.tensor(0.0130)),
    ("fixed", lambda lib: lib.tensor([1.5, 2.0])),
    ("whole", lambda lib: lib.tensor([1.0, 2.0])),
    ("sci-range", lambda lib: lib.tensor([1e-5, 1e3])),
    ("sci-big", lambda lib: lib.tensor([1e10, 1.0])),
    ("sci-small", lambda lib: lib.tensor([[1e-8]])),
    ("zeros", lambda lib: lib.tensor([0.0, 0.0])),
    ("neg-zero", lambda lib: lib.tensor(-0.0)),
    ("nan-inf", lambda lib: lib.tensor([float("nan"), float("inf"), -float("inf"), 1.5])),
    ("int64", lambda lib: lib.tensor([1, 2, 300])),
    ("int-scalar", lambda lib: lib.tensor(3)),
    ("int32", lambda lib: lib.tensor([1, -2], dtype=lib.int32)),
    ("uint8", lambda lib: lib.tensor([1, 2], dtype=lib.uint8)),
    ("bool", lambda lib: lib.tensor([True, False])),
    ("float64", lambda lib: lib.tensor([[1.5, -2.25], [3.0, 4.0]], dtype=lib.float64)),
    ("float16", lambda lib: lib.tensor([1.5, 0.1], dtype=lib.float16)),
    ("wrapped", lambda lib: lib.arange(30.0) / 7),
    ("summarized", lambda lib: lib.arange(2000.0).reshape(40, 50)),
    ("summarized-int", lambda lib: lib.arange(1100)),
    ("3d", lambda lib: (lib.arange(24.0).reshape(2, 3, 4) - 11) / 4),
    ("cubes", lambda lib: lib.linspace(-100, 100, 30, dtype=lib.float64).reshape(3, 10) ** 3),
    ("empty-2d", lambda lib: lib.zeros(0, 3)),
    ("empty", lambda lib: lib.zeros(0)),
    ("empty-int", lambda lib: lib.zeros(0, dtype=lib.int64)),
    ("requires-grad", lambda lib: lib.tensor([1.0, 2.0], requires_grad=True)),
    ("requires-grad-f64", lambda lib: lib.tensor([1.0, 2.5], dtype=lib.float64, requires_grad=True)),
]


@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_repr_is_pytorchs(name, make):
    assert repr(make(mt)) == repr(make(torch))
    assert str(make(mt)) == str(make(torch))


def test_grad_fn_suffix_has_pytorchs_format():
    y = -mt.tensor([1.0, 2.0], requires_grad=True)
    assert repr(y) == f"tensor([-1., -2.], grad_fn=<{y.grad_fn.name()}>)"


def test_printoptions_as_pytorch():
    from minitorch_ln.tensor_str import get_printoptions, printoptions

    assert get_printoptions() == torch._tensor_str.get_printoptions()
    for lib, ctx in ((mt, printoptions), (torch, torch._tensor_str.printoptions)):
        with ctx(precision=2):
            short = repr(lib.tensor([1.12345, 2.5]))
        assert short == "tensor([1.12, 2.50])"
        assert repr(lib.tensor([1.12345])) == "tensor([1.1235])"
    try:
        mt.set_printoptions(profile="short")
        assert repr(mt.tensor([1.12345])) == "tensor([1.12])"
    finally:
        mt.set_printoptions(profile="default")


def test_a_long_suffix_goes_to_the_next_line():
    assert repr(mt.arange(12.0, dtype=mt.float64) / 3) == repr(torch.arange(12.0, dtype=torch.float64) / 3)


# ---- the warning for float(t) of a tensor that requires grad ------------------------------------------

# expression -> number of warnings PyTorch 2.13 gives in a fresh process (each checked by running torch)
WARNS = {
    "float(t)": 1, "complex(t)": 1, "'%.2f' % t": 1, "float(t * 2)": 1, "float(lib.tensor([1.5], requires_grad=True))": 1,
    "float(t); float(t)": 1,  # once per process, as PyTorch's TORCH_WARN_ONCE
    "int(t)": 0, "bool(t)": 0, "t.item()": 0, "f'{t:.2f}'": 0, "float(t.detach())": 0,
}


@pytest.fixture
def fresh_warning(monkeypatch):
    monkeypatch.setattr(sys.modules["minitorch_ln.tensor"], "_warned_scalar", [False])


@pytest.mark.parametrize("expr,n", WARNS.items(), ids=list(WARNS))
def test_scalar_conversion_warns_as_pytorch(expr, n, fresh_warning):
    lib, t = mt, mt.tensor(1.5, requires_grad=True)  # noqa: F841 - used by expr
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        exec(expr)
    assert len(w) == n
    for x in w:
        assert x.category is UserWarning and x.filename == "<string>"
        assert str(x.message) == ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                                  "behavior.\nConsider using tensor.detach() first.")


def test_no_scalar_warning_under_no_grad(fresh_warning):
    t = mt.tensor(1.5, requires_grad=True)
    with warnings.catch_warnings(record=True) as w, mt.no_grad():
        warnings.simplefilter("always")
        float(t)
    assert not w


def test_pytorch_warns_as_the_table_says():
    # the reference, in a fresh process: float(t) warns, int(t) does not, and only once
    code = ("import warnings, torch; warnings.simplefilter('always'); t = torch.tensor(1.5, requires_grad=True)\n"
            "with warnings.catch_warnings(record=True) as w:\n warnings.simplefilter('always'); int(t); float(t); "
            "float(t)\nprint(len(w), w[0].category.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", "UserWarning"]


def test_scalar_warning_names_the_callers_line(fresh_warning):
    t = mt.tensor(2.0, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert float(t) == 2.0
    assert len(w) == 1 and w[0].filename == __file__
