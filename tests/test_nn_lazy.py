"""Lazy convolutions: in_channels inferred at the first forward, UninitializedParameter materialized and
initialized, the object becoming its cls_to_become; outputs and gradients then agree with PyTorch's module
holding the same values; state_dict loading materializes; bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, torch

import minitorch_ln as mt

RNG = np.random.default_rng(23)
CASES = [("LazyConv1d", (4, 3), {"groups": 2}, (2, 6, 9)), ("LazyConv2d", (3, 2), {"padding": 1}, (2, 4, 5, 5)),
         ("LazyConv3d", (2, 2), {}, (1, 3, 4, 4, 4)), ("LazyConvTranspose1d", (4, 3), {"stride": 2}, (2, 6, 5)),
         ("LazyConvTranspose2d", (2, 2), {"groups": 2, "output_padding": 1, "stride": 2}, (2, 4, 3, 3)),
         ("LazyConvTranspose3d", (2, 2), {"bias": False}, (1, 3, 2, 3, 2))]


@pytest.mark.parametrize("name, args, kw, shape", CASES)
def test_first_forward_infers_shapes_then_becomes_the_full_class(name, args, kw, shape):
    m = getattr(mt.nn, name)(*args, **kw).double()
    assert isinstance(m.weight, mt.nn.UninitializedParameter) and m.has_uninitialized_params()
    params_before = list(m.parameters())
    x = RNG.standard_normal(shape)
    m(mt.tensor(x))
    full = name.removeprefix("Lazy")
    assert type(m).__name__ == full and type(m.weight) is mt.nn.Parameter
    assert [id(p) for p in m.parameters()] == [id(p) for p in params_before]  # the same objects, materialized
    assert m.in_channels == shape[1] and m.weight.dtype == mt.float64
    theirs = getattr(torch.nn, name)(*args, **kw).double()
    theirs(torch.tensor(x))
    assert tuple(m.weight.shape) == tuple(theirs.weight.shape)
    # PyTorch's initialization bounds: kaiming_uniform(a=sqrt(5)) is uniform on ±1/sqrt(fan_in)
    fan_in = (m.weight.shape[1]) * int(np.prod(m.kernel_size))
    assert np.abs(m.weight.detach().numpy()).max() <= 1 / np.sqrt(fan_in) + 1e-12
    m.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    compare_with_torch(m, theirs, [x])
    compare_with_torch(m, theirs, [x[0]])  # unbatched, after the switch


def test_load_state_dict_materializes_a_lazy_module():
    theirs = torch.nn.Conv2d(3, 2, 2).double()
    m = mt.nn.LazyConv2d(2, 2).double()
    m.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    assert tuple(m.weight.shape) == (2, 3, 2, 2) and not m.has_uninitialized_params()
    x = RNG.standard_normal((1, 3, 4, 4))
    compare_with_torch(m, theirs, [x])
    assert type(m) is mt.nn.Conv2d


def test_uninitialized_parameter_follows_to_and_repr():
    m = mt.nn.LazyConv1d(2, 1).to(mt.float64)
    assert m.weight.dtype == mt.float64 and repr(m.weight) == "<UninitializedParameter>"
    p = mt.nn.UninitializedParameter(dtype=mt.float32)
    p.materialize((2, 3))
    assert type(p) is mt.nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == mt.float32 and p.requires_grad


def test_bad_input():
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to LazyConv2d"):
        mt.nn.LazyConv2d(2, 1)(mt.zeros(2, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        mt.nn.LazyConv1d(4, 1, groups=2)(mt.zeros(1, 3, 4))
