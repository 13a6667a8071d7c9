"""Conv and pooling modules: PyTorch state dicts load and give PyTorch's outputs, padding modes,
initialisation, repr, bad arguments."""

import math

import numpy as np
import pytest
from helpers import assert_close, t64, torch
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck
from minitorch_ln.nn.conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d

tnn = torch.nn


def _load_and_compare(ours, theirs, x_shape, dtype=np.float64, rng=None, **fwd):
    """Load ``theirs``' state dict into ``ours``; outputs and parameter/input gradients must agree."""
    rng = rng or np.random.default_rng(0)
    theirs = theirs.to(torch.float64 if dtype == np.float64 else torch.float32)
    ours = ours.double() if dtype == np.float64 else ours
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    a = rng.standard_normal(x_shape).astype(dtype)
    x, xt = mt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, yt = ours(x, **fwd), theirs(xt, **fwd)
    assert_close(y, yt, dtype, "output")
    up = rng.standard_normal(yt.shape).astype(dtype)
    y.backward(mt.tensor(up))
    yt.backward(torch.tensor(up))
    assert_close(x.grad, xt.grad, dtype, "input grad")
    for name, p in ours.named_parameters():
        assert_close(p.grad, dict(theirs.named_parameters())[name].grad, dtype, f"grad of {name}")


MODULES = [
    (Conv2d, tnn.Conv2d, (3, 4, 3), {}, (2, 3, 7, 6)),
    (Conv2d, tnn.Conv2d, (4, 6, (3, 2)), {"stride": 2, "padding": 1, "dilation": (1, 2), "groups": 2}, (2, 4, 8, 9)),
    (Conv2d, tnn.Conv2d, (4, 4, 3), {"groups": 4, "bias": False, "padding": "same"}, (4, 6, 6)),
    (Conv2d, tnn.Conv2d, (2, 3, (4, 3)), {"padding": "same", "padding_mode": "reflect"}, (1, 2, 6, 5)),
    (Conv2d, tnn.Conv2d, (2, 3, 3), {"padding": (2, 1), "padding_mode": "replicate", "stride": 2}, (1, 2, 6, 5)),
    (Conv2d, tnn.Conv2d, (2, 3, 3), {"padding": 2, "padding_mode": "circular"}, (1, 2, 6, 5)),
    (Conv1d, tnn.Conv1d, (3, 4, 3), {"stride": 2, "padding": 1}, (2, 3, 9)),
    (Conv1d, tnn.Conv1d, (2, 4, 4), {"padding": "same", "padding_mode": "circular", "groups": 2}, (2, 2, 9)),
    (ConvTranspose2d, tnn.ConvTranspose2d, (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}, (2, 4, 3, 4)),
    (ConvTranspose1d, tnn.ConvTranspose1d, (3, 2, 4), {"stride": 3, "dilation": 2, "bias": False}, (2, 3, 5)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ours,theirs,args,kw,x_shape", MODULES)
def test_module_loads_torch_state_dict_and_matches(ours, theirs, args, kw, x_shape, dtype):
    torch.manual_seed(0)
    _load_and_compare(ours(*args, **kw), theirs(*args, **kw), x_shape, dtype)


@pytest.mark.parametrize("ours,theirs,args,kw,x_shape", MODULES)
def test_module_repr_and_parameter_shapes_match_torch(ours, theirs, args, kw, x_shape):
    m, t = ours(*args, **kw), theirs(*args, **kw)
    assert repr(m) == repr(t)
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == {k: tuple(v.shape) for k, v in t.state_dict().items()}
    assert m.weight.dtype == np.float32


def test_conv_transpose_output_size_matches_torch():
    torch.manual_seed(0)
    args, kw = (3, 2, 3), {"stride": 3, "padding": 1}
    _load_and_compare(ConvTranspose2d(*args, **kw), tnn.ConvTranspose2d(*args, **kw), (1, 3, 4, 4),
                      output_size=[11, 12])
    with pytest.raises(ValueError, match="valid sizes range from 10 to 12"):
        ConvTranspose2d(*args, **kw)(mt.randn(1, 3, 4, 4), output_size=[13, 12])


def test_init_follows_pytorch_bounds():
    mt.manual_seed(0)
    m = Conv2d(8, 16, (3, 5), groups=2)
    fan_in = 4 * 15
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) gives gain·sqrt(3/fan_in) = 1/sqrt(fan_in)
    w, b = m.weight.array, m.bias.array
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(b).max() <= bound and w.std() > 0.5 * bound  # uniform: std = bound/sqrt(3)
    t = ConvTranspose2d(4, 6, 3, groups=2)  # PyTorch's fan_in of a transposed weight: weight.size(1)·k·k
    assert np.abs(t.bias.array).max() <= 1 / math.sqrt(3 * 9)


def test_module_gradcheck_with_padding_mode():
    m = Conv2d(1, 2, 2, padding=1, padding_mode="reflect", dtype=np.float64)
    x = t64(np.random.default_rng(0).standard_normal((1, 1, 3, 4)))
    assert gradcheck(lambda x, w: m(x), (x, m.weight))


@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.sampled_from(["zeros", "reflect", "replicate",
                                                                                  "circular"]))
def test_conv2d_module_property_matches_torch(k, s, p, mode):
    torch.manual_seed(0)
    p = min(p, 3) if mode != "reflect" else min(p, 4)
    _load_and_compare(Conv2d(2, 3, k, stride=s, padding=p, padding_mode=mode),
                      tnn.Conv2d(2, 3, k, stride=s, padding=p, padding_mode=mode), (1, 2, 5, 6))


def test_module_bad_arguments():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode must be one of .* but got padding_mode='foo'"):
        Conv2d(4, 3, 3, padding_mode="foo")
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        Conv1d(4, 3, 3, padding="full")
    with pytest.raises(ValueError, match="not supported for strided"):
        Conv2d(4, 3, 3, padding="same", stride=2)
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        ConvTranspose2d(4, 3, 3, padding_mode="reflect")
    with pytest.raises(RuntimeError, match=r"expected input\[1, 3, 5, 5\] to have 4 channels"):
        Conv2d(4, 3, 3)(mt.randn(1, 3, 5, 5))


# ==================================================================================================
# Pooling modules
# ==================================================================================================
from minitorch_ln.nn import pooling as P

POOL_MODULES = [
    ("MaxPool1d", (3, 2, 1), {"dilation": 2, "ceil_mode": True}, (2, 3, 11)),
    ("MaxPool2d", ((3, 2), 2, 1), {"ceil_mode": True}, (2, 3, 7, 6)),
    ("AvgPool1d", (3, 2, 1), {"count_include_pad": False}, (2, 3, 11)),
    ("AvgPool2d", (3, 2, 1), {"ceil_mode": True, "divisor_override": 2}, (2, 3, 7, 6)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 11)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (3, 7, 6)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 11)),
    ("AdaptiveMaxPool2d", ((3, 4),), {}, (2, 3, 7, 6)),
]


@pytest.mark.parametrize("name,args,kw,x_shape", POOL_MODULES, ids=[m[0] for m in POOL_MODULES])
def test_pool_modules_match_torch_and_repr(name, args, kw, x_shape):
    ours, theirs = getattr(P, name)(*args, **kw), getattr(tnn, name)(*args, **kw)
    assert repr(ours) == repr(theirs)
    _load_and_compare(ours, theirs, x_shape)
    if "Max" in name:  # return_indices gives (values, int64 indices) as PyTorch
        a = np.random.default_rng(1).standard_normal(x_shape)
        y, i = getattr(P, name)(*args, return_indices=True, **kw)(mt.tensor(a))
        yt, it = getattr(tnn, name)(*args, return_indices=True, **kw)(torch.tensor(a))
        assert i.dtype == np.int64 and np.array_equal(i.array, it.numpy()) and np.array_equal(y.array, yt.numpy())


def test_zero_element_weights_initialise_as_pytorch():
    # PyTorch builds modules with zero input channels and warns that initialising them is a no-op;
    # the fan-in of 0 once raised ZeroDivisionError here
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        m = mt.nn.Conv2d(0, 2, 3)
    assert m.weight.shape == (2, 0, 3, 3)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        torch.nn.Conv2d(0, 2, 3)
