"""``minitorch_ln.interop.torch``: state dicts both ways and the layer-by-layer comparison report."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln import nn
from minitorch_ln.autograd import Function
from minitorch_ln.interop.torch import (
    compare_modules, load_torch_state_dict, state_dict_from_torch, state_dict_to_torch,
)
from minitorch_ln.nn import StateDictError

from helpers import torch


class Net(nn.Module):
    def __init__(self, act="gelu"):
        super().__init__()
        self.emb = nn.Embedding(11, 6, padding_idx=0)
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(6, 6), nn.GELU() if act == "gelu" else act)
                                     for _ in range(2)])
        self.head = nn.Linear(6, 3)

    def forward(self, ids):
        x = self.emb(ids)
        for b in self.blocks:
            x = x + b(x)
        return self.head(x)


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(11, 6, padding_idx=0)
        self.blocks = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.Linear(6, 6), torch.nn.GELU())
                                           for _ in range(2)])
        self.head = torch.nn.Linear(6, 3)

    def forward(self, ids):
        x = self.emb(ids)
        for b in self.blocks:
            x = x + b(x)
        return self.head(x)


def twins(dtype=torch.float64, act="gelu"):
    torch.manual_seed(0)
    theirs = TorchNet().to(dtype)
    ours = Net(act).to(str(dtype).replace("torch.", ""))
    load_torch_state_dict(ours, theirs)
    return ours, theirs


IDS = np.array([[1, 4, 4, 0], [10, 2, 0, 3]])


def test_state_dicts_convert_both_ways_as_copies_keeping_dtypes():
    ours, theirs = twins(torch.float32)
    sd = state_dict_from_torch(theirs.state_dict())
    assert list(sd) == list(ours.state_dict()) and all(isinstance(v, np.ndarray) for v in sd.values())
    assert sd["head.weight"].dtype == np.float32
    sd["head.weight"][...] = 0  # a copy: the PyTorch model is untouched
    assert theirs.head.weight.abs().sum() > 0
    back = state_dict_to_torch(ours.state_dict())
    assert all(isinstance(v, torch.Tensor) and v.dtype == torch.float32 for v in back.values())
    fresh = TorchNet()
    fresh.load_state_dict(back)  # strict: every name and shape fits
    ids = torch.from_numpy(IDS)
    torch.testing.assert_close(fresh(ids), theirs(ids))
    np.testing.assert_allclose(ours(mt.tensor(IDS)).array, theirs(ids).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_load_torch_state_dict_from_a_module_or_a_dict_and_bfloat16():
    ours, theirs = twins(torch.float64)
    result = load_torch_state_dict(ours, theirs.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    bf = nn.Linear(2, 2)
    tb = torch.nn.Linear(2, 2).to(torch.bfloat16)
    load_torch_state_dict(bf, tb)  # NumPy has no bfloat16: float32 holds it exactly
    np.testing.assert_array_equal(bf.weight.array, tb.weight.float().detach().numpy())


def test_load_torch_state_dict_mismatch_lists_every_key():
    ours = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))
    with pytest.raises(StateDictError) as info:
        load_torch_state_dict(ours, theirs)
    msg = str(info.value)
    assert "missing keys (2): 1.weight, 1.bias" in msg and "unexpected keys (2): 2.weight, 2.bias" in msg
    assert "0.weight: expected shape (4, 3), got (5, 3)" in msg


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_compare_modules_agrees_on_twins_and_reports_every_submodule(dtype):
    ours, theirs = twins(dtype)
    result = compare_modules(ours, theirs, IDS)
    assert result.ok, str(result)
    assert result.first_forward_divergence is None and result.first_backward_divergence is None
    names = [r.name for r in result.rows]
    # forward order of completion: children before the containers that hold them, the model last
    assert names == ["emb", "blocks.0.0", "blocks.0.1", "blocks.0", "blocks.1.0", "blocks.1.1", "blocks.1",
                     "head", "", "blocks"]
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    head = result["head"]
    assert head.calls == 1 and head.out_shape == (2, 4, 3) and head.out_diff <= tol
    assert set(head.param_diffs) == {"weight", "bias"} and head.param_diff <= tol
    assert result["emb"].param_diffs["weight"] <= tol
    assert result["blocks"].calls == 0  # a ModuleList is never called itself
    text = str(result)
    assert "blocks.0.0" in text and "Linear" in text and "all outputs and gradients agree" in text
    assert result.to_dict()[0]["name"] == "emb"


def test_compare_modules_finds_where_the_forward_parts():
    ours, theirs = twins()
    with mt.no_grad():
        ours.blocks[1][0].bias.array[0] += 1e-3
    result = compare_modules(ours, theirs, IDS)
    assert not result.ok
    first = result.first_forward_divergence
    assert first.name == "blocks.1.0" and "weights 'bias' differ" in first.note
    assert result["blocks.0"].forward_ok  # everything before it still agrees
    assert "forward: outputs first part at blocks.1.0 (Linear)" in str(result)


class WrongGradTanh(Function):
    """tanh with a backward that forgets the (1 - y²) factor: right forward, wrong gradient."""

    @staticmethod
    def forward(ctx, x):
        return mt.backend.get_array_module(x).tanh(x)

    @staticmethod
    def backward(ctx, dy):
        return dy


class BadTanh(nn.Module):
    def forward(self, x):
        return WrongGradTanh.apply(x)


def test_compare_modules_finds_a_wrong_backward():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    ours = nn.Sequential(nn.Linear(3, 4), BadTanh(), nn.Linear(4, 2)).double()
    load_torch_state_dict(ours, theirs)
    result = compare_modules(ours, theirs, np.random.default_rng(0).standard_normal((5, 3)))
    assert result.first_forward_divergence is None  # the forward is right
    bad = result.first_backward_divergence
    # going backward, the first difference is the gradient flowing out of the wrong tanh into layer 0
    assert bad.name == "0" and bad.bad_params == ["weight", "bias"]
    assert result["2"].backward_ok and result["1"].dout_diff < 1e-12
    assert not all(ok for _, ok in filter(None, result.input_grad_diffs))
    text = str(result)
    assert "backward: gradients first part at 0 (Linear)" in text and "the next module to run was 1 (BadTanh)" in text


def test_compare_modules_reports_submodules_missing_on_one_side():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Identity())
    ours = nn.Sequential(nn.Linear(3, 3))
    load_torch_state_dict(ours, theirs)
    result = compare_modules(ours, theirs, np.ones((2, 3), np.float32))
    assert result["1"].note == "only in PyTorch's model" and not result.ok


@given(st.integers(1, 4), st.integers(1, 4))
def test_twin_outputs_agree_for_any_batch_shape(b, t):
    ours, theirs = twins()
    ids = np.random.default_rng(b * 10 + t).integers(0, 11, size=(b, t))
    np.testing.assert_allclose(ours(mt.tensor(ids)).array, theirs(torch.from_numpy(ids)).detach().numpy(),
                               rtol=1e-12, atol=1e-12)
