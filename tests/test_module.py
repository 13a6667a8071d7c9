"""``Module`` and the containers: registration, traversal, repr, modes, ``to``, hooks, state dicts."""

import copy
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln import nn
from minitorch_ln.nn import StateDictError

from helpers import torch


class Block(nn.Module):
    """A small module with a parameter, a persistent and a non-persistent buffer, and a child."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(mt.ones(3))
        self.register_buffer("running", mt.zeros(3))
        self.register_buffer("steps", mt.tensor(0))
        self.register_buffer("cache", mt.ones(2), persistent=False)
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x) * self.scale


def test_registration_and_traversal_names():
    m = nn.Sequential(Block(), nn.ReLU(), Block())
    assert [n for n, _ in m.named_parameters()] == [
        "0.scale", "0.fc.weight", "0.fc.bias", "2.scale", "2.fc.weight", "2.fc.bias"]
    assert [n for n, _ in m.named_buffers()] == [
        "0.running", "0.steps", "0.cache", "2.running", "2.steps", "2.cache"]
    assert [n for n, _ in m.named_modules()] == ["", "0", "0.fc", "1", "2", "2.fc"]
    assert [n for n, _ in m.named_children()] == ["0", "1", "2"]
    assert len(list(m.parameters())) == 6 and len(list(m.buffers())) == 6
    assert [n for n, _ in m[0].named_parameters(recurse=False)] == ["scale"]
    assert m.get_submodule("2.fc") is m[2].fc
    with pytest.raises(AttributeError, match="no submodule 'nope'"):
        m.get_submodule("2.nope")


def test_state_dict_skips_non_persistent_buffers_and_lists_tied_weights_twice():
    m = Block()
    assert list(m.state_dict()) == ["scale", "running", "steps", "fc.weight", "fc.bias"]
    tied = nn.Module()
    tied.a, tied.b = nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False)
    tied.b.weight = tied.a.weight
    assert list(tied.state_dict()) == ["a.weight", "b.weight"]  # as PyTorch
    assert len(list(tied.parameters())) == 1  # but the optimizer sees it once


def test_reassigning_keeps_the_place_of_a_module_parameter_or_buffer_as_torch():
    # PyTorch writes an existing name back into its dict, which keeps the key's position; popping it first
    # moved it to the end, so named_parameters() (and an optimizer's state zipped by position) shifted
    # and a Sequential with a replaced first layer ran it last (ReLU before Linear).
    m = Block()
    m.fc = nn.Linear(3, 3)
    m.scale = nn.Parameter(mt.zeros(3))
    m.running = mt.ones(3)
    m.register_buffer("steps", mt.tensor(1))
    m.register_parameter("scale", nn.Parameter(mt.ones(3)))
    assert [n for n, _ in m.named_parameters()] == ["scale", "fc.weight", "fc.bias"]
    assert [n for n, _ in m.named_buffers()] == ["running", "steps", "cache"]
    assert list(m.state_dict()) == ["scale", "running", "steps", "fc.weight", "fc.bias"]
    m.register_buffer("running", mt.zeros(3), persistent=False)  # re-registered as non-persistent: dropped
    assert list(m.state_dict()) == ["scale", "steps", "fc.weight", "fc.bias"]
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    setattr(seq, "0", nn.Linear(2, 2))
    seq.add_module("1", nn.Tanh())
    assert [type(c).__name__ for c in seq] == ["Linear", "Tanh"]
    x = mt.tensor([[-3.0, 2.0]])
    lin = seq[0]
    np.testing.assert_allclose(seq(x).detach().numpy(), mt.tanh(lin(x)).detach().numpy())  # Linear, then Tanh
    ref = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    setattr(ref, "0", torch.nn.Linear(2, 2))
    assert [type(c).__name__ for c in ref] == ["Linear", "ReLU"]


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(TypeError, match="must be a Parameter or None, got Tensor"):
        m.register_parameter("w", mt.ones(2))
    with pytest.raises(TypeError, match="must be a Tensor or None, got list"):
        m.register_buffer("b", [1, 2])
    with pytest.raises(KeyError, match="can't be empty or contain '.'"):
        m.register_buffer("a.b", mt.ones(1))
    m.w = nn.Parameter(mt.ones(2))
    with pytest.raises(TypeError, match="cannot assign Tensor to parameter 'w'"):
        m.w = mt.ones(2)

    class Early(nn.Module):
        def __init__(self):
            self.x = 1  # before super().__init__()

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_apply_visits_children_first_then_self():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU(), nn.Linear(2, 1)))
    seen = []
    assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
    assert seen == ["Linear", "ReLU", "Linear", "Sequential", "Sequential"]

    def init_zero(mod):
        if isinstance(mod, nn.Linear):
            nn.init.zeros_(mod.weight)

    m.apply(init_zero)
    assert all(not np.any(p.array) for n, p in m.named_parameters() if n.endswith("weight"))


def test_repr_matches_pytorch_line_for_line():
    ours = nn.Sequential(
        nn.Linear(4, 8), nn.ReLU(), nn.GELU(approximate="tanh"), nn.Dropout(0.1), nn.Tanh(), nn.Sigmoid(),
        nn.Softmax(dim=-1), nn.Embedding(10, 4, padding_idx=0), nn.Identity(),
        nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()]),
        nn.ModuleDict({"head": nn.Linear(8, 2, bias=False)}),
    )
    theirs = torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.GELU(approximate="tanh"), torch.nn.Dropout(0.1),
        torch.nn.Tanh(), torch.nn.Sigmoid(), torch.nn.Softmax(dim=-1), torch.nn.Embedding(10, 4, padding_idx=0),
        torch.nn.Identity(), torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)] + [torch.nn.ReLU()]),
        torch.nn.ModuleDict({"head": torch.nn.Linear(8, 2, bias=False)}),
    )
    assert repr(ours) == repr(theirs)
    assert repr(nn.Module()) == "Module()"


def test_train_eval_propagate_and_reject_non_bool():
    m = nn.Sequential(nn.Dropout(), nn.Sequential(nn.Dropout()))
    m.eval()
    assert not any(mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    with pytest.raises(ValueError, match="expected to be a bool"):
        m.train("yes")


def test_zero_grad_to_none_or_zeros_in_place():
    m = nn.Linear(3, 2)
    m(mt.randn(4, 3)).sum().backward()
    buf = m.weight.grad.array
    m.zero_grad(set_to_none=False)
    assert m.weight.grad.array is buf and not np.any(buf)
    m.zero_grad()
    assert m.weight.grad is None and m.bias.grad is None


def test_to_dtype_keeps_parameter_objects_and_integer_buffers(device):
    m = Block()
    params = list(m.parameters())
    m(mt.randn(2, 3)).sum().backward()
    m.to(device).double()
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]
    assert all(p.dtype == np.float64 and p.device == device for p in m.parameters())
    assert m.fc.weight.grad.dtype == np.float64  # existing gradients are cast too
    assert m.steps.dtype == np.int64 and m.cache.dtype == np.float64  # non-persistent buffers move too
    m.zero_grad()
    out = m(mt.randn(2, 3, dtype="float64", device=device))
    out.sum().backward()  # the leaves' recorded dtype followed the cast
    assert m.fc.weight.grad.dtype == np.float64 and m.fc.weight.grad.device == device
    m.float()
    assert m.scale.dtype == np.float32
    with pytest.raises(TypeError, match="floating point dtypes, got int64"):
        m.to("int64")


def test_forward_hooks_see_and_replace_outputs_and_can_be_removed():
    m = nn.Linear(2, 2)
    seen = []
    h = m.register_forward_hook(lambda mod, args, out: seen.append((mod, args[0].shape, out.shape)))
    x = mt.randn(5, 2)
    m(x)
    assert seen == [(m, (5, 2), (5, 2))]
    h.remove()
    m(x)
    assert len(seen) == 1
    with m.register_forward_hook(lambda mod, args, out: out * 0):
        assert not np.any(m(x).array)
    assert np.any(m(x).array)
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    np.testing.assert_allclose(m(x).array, np.broadcast_to(m.bias.array, (5, 2)))
    pre.remove()


def _filled(module, value):
    sd = module.state_dict()
    return OrderedDict((k, np.full(v.shape, value, dtype=v.dtype)) for k, v in sd.items())


def test_load_state_dict_round_trip_keeps_dtype_and_returns_incompatible_keys():
    src, dst = Block(), Block()
    src.running.array[:] = [1, 2, 3]
    src.steps.array[...] = 7
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (k, a), b in zip(src.state_dict().items(), dst.state_dict().values()):
        np.testing.assert_array_equal(a.array, b.array, err_msg=k)
    x = mt.randn(4, 3)
    np.testing.assert_array_equal(src(x).array, dst(x).array)
    # float64 arrays load into the float32 module as float32 (the module's dtype wins)
    dst.load_state_dict({k: v.astype(np.float64) for k, v in _filled(dst, 0.5).items()})
    assert dst.scale.dtype == np.float32 and np.all(dst.scale.array == 0.5)


def test_load_state_dict_lists_every_problem_at_once_and_changes_nothing():
    m = Block()
    before = {k: v.array.copy() for k, v in m.state_dict().items()}
    bad = _filled(m, 9.0)
    del bad["running"]
    bad["fc.weight"] = np.zeros((2, 3), np.float32)
    bad["extra.weight"] = np.zeros(1, np.float32)
    with pytest.raises(StateDictError) as info:
        m.load_state_dict(bad)
    msg = str(info.value)
    assert "missing keys (1): running" in msg
    assert "unexpected keys (1): extra.weight" in msg
    assert "wrong shapes (1): fc.weight: expected shape (3, 3), got (2, 3)" in msg
    assert info.value.missing_keys == ["running"] and info.value.unexpected_keys == ["extra.weight"]
    for k, v in m.state_dict().items():  # nothing was written, not even the good keys
        np.testing.assert_array_equal(v.array, before[k], err_msg=k)
    # strict=False: missing and unexpected are reported, the rest loads; wrong shapes still raise
    del bad["fc.weight"]
    result = m.load_state_dict(bad, strict=False)
    assert result == (["running", "fc.weight"], ["extra.weight"])
    assert np.all(m.scale.array == 9.0)
    with pytest.raises(StateDictError, match="wrong shapes"):
        m.load_state_dict({"scale": np.zeros(4, np.float32)}, strict=False)
    with pytest.raises(TypeError, match="mapping of names to tensors"):
        m.load_state_dict([("scale", np.zeros(3))])


def test_load_state_dict_accepts_pytorch_tensors():
    theirs = torch.nn.Linear(3, 2)
    ours = nn.Linear(3, 2)
    ours.load_state_dict(theirs.state_dict())
    np.testing.assert_array_equal(ours.weight.array, theirs.weight.detach().numpy())


def test_deepcopy_gives_an_independent_module():
    m = Block()
    c = copy.deepcopy(m)
    c.fc.weight.array += 1
    assert not np.allclose(c.fc.weight.array, m.fc.weight.array)
    assert [n for n, _ in c.named_parameters()] == [n for n, _ in m.named_parameters()]


@given(widths=st.lists(st.integers(1, 5), min_size=2, max_size=5), act=st.sampled_from(["relu", "gelu", "tanh"]))
def test_state_dict_round_trip_reproduces_outputs(widths, act):
    def make():
        layers = []
        for a, b in zip(widths, widths[1:]):
            layers += [nn.Linear(a, b), {"relu": nn.ReLU, "gelu": nn.GELU, "tanh": nn.Tanh}[act]()]
        return nn.Sequential(*layers)

    src = make()
    dst = make()
    dst.load_state_dict(src.state_dict())
    x = mt.randn(3, widths[0])
    np.testing.assert_array_equal(src(x).array, dst(x).array)
    assert list(src.state_dict()) == [f"{2 * i}.{p}" for i in range(len(widths) - 1) for p in ("weight", "bias")]


# ----------------------------------------------------------------------------------------------- containers


def test_sequential_indexing_slicing_and_editing():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and s[0] is a and s[-1] is c and list(s) == [a, b, c]
    head = s[:2]
    assert isinstance(head, nn.Sequential) and list(head) == [a, b]
    x = mt.randn(4, 2)
    np.testing.assert_array_equal(s(x).array, c(b(a(x))).array)
    s.append(nn.Tanh())
    assert len(s) == 4
    del s[1]
    assert [n for n, _ in s.named_children()] == ["0", "1", "2"] and s[1] is c
    named = nn.Sequential(OrderedDict([("enc", a), ("act", b)]))
    assert [n for n, _ in named.named_children()] == ["enc", "act"]
    with pytest.raises(IndexError, match="index 5 is out of range for 3"):
        s[5]
    with pytest.raises(TypeError, match="expected a Module, got int"):
        nn.Sequential(nn.ReLU(), 3)


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(2)])
    ml.append(nn.ReLU())
    ml.insert(0, nn.Tanh())
    ml += [nn.Sigmoid()]
    assert [type(m).__name__ for m in ml] == ["Tanh", "Linear", "Linear", "ReLU", "Sigmoid"]
    assert [n for n, _ in ml.named_parameters()] == ["1.weight", "1.bias", "2.weight", "2.bias"]
    del ml[0]
    assert type(ml[0]).__name__ == "Linear" and len(ml) == 4
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    with pytest.raises(TypeError, match="expected a Module, got str"):
        ml.append("relu")
    with pytest.raises(NotImplementedError, match="iterate over it"):
        ml(mt.ones(1))
    md = nn.ModuleDict({"a": nn.Linear(1, 2)})
    md["b"] = nn.ReLU()
    md.update([("c", nn.Tanh())])
    assert list(md.keys()) == ["a", "b", "c"] and "b" in md and len(md) == 3
    assert isinstance(md.pop("c"), nn.Tanh) and list(md) == ["a", "b"]
    assert list(md.state_dict()) == ["a.weight", "a.bias"]
    with pytest.raises(KeyError, match="no key 'z'"):
        md["z"]
