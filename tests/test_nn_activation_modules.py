"""Activation modules against PyTorch: repr, attributes, forward/backward (float64/float32), PReLU's
state dict and gradients, gradcheck through the modules, properties, bad arguments."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.nn import activation_modules as M

import strategies as S
from helpers import compare_with_torch, t64, torch
from parity import module_parity

nn = torch.nn

# ================================================================================ strategies (this file)

slopes = st.floats(0.0, 1.0, allow_nan=False)

# ================================================================================ the table

# (our class, torch's class, constructor args, constructor kwargs)
MODULES = [
    (M.SiLU, nn.SiLU, (), {}), (M.SiLU, nn.SiLU, (True,), {}),
    (M.Mish, nn.Mish, (), {}), (M.Mish, nn.Mish, (), {"inplace": True}),
    (M.SELU, nn.SELU, (), {}), (M.SELU, nn.SELU, (True,), {}),
    (M.Hardsigmoid, nn.Hardsigmoid, (), {}), (M.Hardsigmoid, nn.Hardsigmoid, (True,), {}),
    (M.Hardswish, nn.Hardswish, (), {}), (M.Hardswish, nn.Hardswish, (True,), {}),
    (M.LeakyReLU, nn.LeakyReLU, (), {}), (M.LeakyReLU, nn.LeakyReLU, (0.2, True), {}),
    (M.RReLU, nn.RReLU, (), {}), (M.RReLU, nn.RReLU, (0.1, 0.3), {"inplace": True}),
    (M.ELU, nn.ELU, (), {}), (M.ELU, nn.ELU, (0.5,), {"inplace": True}),
    (M.CELU, nn.CELU, (), {}), (M.CELU, nn.CELU, (2.0,), {}),
    (M.Softplus, nn.Softplus, (), {}), (M.Softplus, nn.Softplus, (2.0, 3.0), {}),
    (M.Softsign, nn.Softsign, (), {}), (M.LogSigmoid, nn.LogSigmoid, (), {}), (M.Tanhshrink, nn.Tanhshrink, (), {}),
    (M.Hardtanh, nn.Hardtanh, (), {}), (M.Hardtanh, nn.Hardtanh, (-2, 3, True), {}),
    (M.ReLU6, nn.ReLU6, (), {}), (M.ReLU6, nn.ReLU6, (True,), {}),
    (M.Threshold, nn.Threshold, (0.1, 20), {}), (M.Threshold, nn.Threshold, (0.1, 20.0, True), {}),
    (M.Softshrink, nn.Softshrink, (), {}), (M.Softshrink, nn.Softshrink, (1,), {}),
    (M.Hardshrink, nn.Hardshrink, (), {}), (M.Hardshrink, nn.Hardshrink, (1.0,), {}),
    (M.GLU, nn.GLU, (), {}), (M.GLU, nn.GLU, (1,), {}),
    (M.Softmin, nn.Softmin, (1,), {}), (M.Softmin, nn.Softmin, (), {"dim": -1}),
    (M.PReLU, nn.PReLU, (), {}), (M.PReLU, nn.PReLU, (4, 0.1), {}),
]
IDS = [f"{c.__name__}{a}{k or ''}" for c, _, a, k in MODULES]


# ================================================================================ repr and attributes


@pytest.mark.parametrize("ours,theirs,args,kwargs", MODULES, ids=IDS)
def test_repr_and_attributes_match_pytorch(ours, theirs, args, kwargs):
    m, t = ours(*args, **kwargs), theirs(*args, **kwargs)
    assert repr(m) == repr(t)
    for name in ("inplace", "negative_slope", "alpha", "beta", "threshold", "value", "min_val", "max_val",
                 "lambd", "dim", "lower", "upper", "num_parameters", "init"):
        if hasattr(t, name):
            assert getattr(m, name) == getattr(t, name), name
    assert sorted(n for n, _ in m.named_parameters()) == sorted(n for n, _ in t.named_parameters())
    assert m.training and not m.eval().training


def test_relu6_is_a_hardtanh_as_in_pytorch():
    m = M.ReLU6()
    assert isinstance(m, M.Hardtanh) and (m.min_val, m.max_val) == (0.0, 6.0)
    for a, b in [(M.CELU, M.ELU), (M.Hardshrink, M.Softshrink), (M.SELU, M.ELU)]:
        assert not issubclass(a, b)  # as in PyTorch, so isinstance checks written for it agree


# ================================================================================ against PyTorch


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ours,theirs,args,kwargs", MODULES, ids=IDS)
def test_forward_and_backward_match_pytorch(ours, theirs, args, kwargs, dtype, rng, device):
    x = rng.standard_normal((2, 4, 3, 6)) * 3
    call = lambda mod, x: mod(x * 1.0)  # noqa: E731 - PyTorch's inplace=True needs a non-leaf input
    m, t = ours(*args, **kwargs), theirs(*args, **kwargs)
    if ours is M.RReLU:  # random slopes while training (our generator is not PyTorch's): compare in eval
        m.eval(), t.eval()
    if ours is M.PReLU:
        t.weight.data.uniform_(-0.5, 0.5)  # non-trivial per-channel slopes, loaded into ours
    tol = 1e-7 if ours is M.Hardsigmoid and dtype == np.float64 else None  # PyTorch's float32 1/6 (see the ops tests)
    module_parity(m, t, [x], call, dtype=dtype, device=device, tol=tol)


def test_prelu_state_dict_from_pytorch_loads_and_gives_equal_outputs(rng):
    t = nn.PReLU(3).double()
    with torch.no_grad():
        t.weight.copy_(torch.tensor([0.05, -0.3, 0.7], dtype=torch.float64))
    m = M.PReLU(3, dtype="float64")
    result = m.load_state_dict(t.state_dict())
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    np.testing.assert_array_equal(m.weight.array, [0.05, -0.3, 0.7])
    x = rng.standard_normal((5, 3, 7))
    np.testing.assert_allclose(m(mt.tensor(x)).array, t(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    assert list(m.state_dict()) == list(t.state_dict()) == ["weight"]
    # and back: ours into PyTorch's
    t2 = nn.PReLU(3).double()
    t2.load_state_dict({k: torch.from_numpy(np.asarray(v.array)) for k, v in m.state_dict().items()})
    np.testing.assert_array_equal(t2.weight.detach().numpy(), m.weight.array)


def test_prelu_weight_is_a_float32_parameter_filled_with_init_and_learns():
    m = M.PReLU(2, init=0.3)
    assert isinstance(m.weight, mt.nn.Parameter) and m.weight.requires_grad
    assert m.weight.shape == (2,) and m.weight.dtype == np.float32
    np.testing.assert_array_equal(m.weight.array, np.float32([0.3, 0.3]))
    x = mt.tensor([[-1.0, -2.0], [3.0, -4.0]])
    m(x).sum().backward()
    np.testing.assert_allclose(m.weight.grad.array, [-1.0, -6.0])  # Σ x over x <= 0, per channel
    m.weight.grad = None
    with mt.no_grad():
        m.weight.fill_(0.0)
    m.reset_parameters()
    np.testing.assert_array_equal(m.weight.array, np.float32([0.3, 0.3]))
    assert M.PReLU(dtype="float64").weight.dtype == np.float64


def test_gradcheck_through_modules():
    rng = np.random.default_rng(2)
    x = t64(rng.standard_normal((2, 4, 3)) + 0.05)
    m = M.PReLU(4, dtype="float64")
    assert gradcheck(lambda x, w: m(x), (x, m.weight))  # w is m.weight: both gradients are checked
    assert gradgradcheck(lambda x: m(x), (x,))
    for mod in (M.SiLU(), M.Mish(), M.ELU(0.7), M.Softplus(2.0), M.GLU(1), M.Softmin(2), M.LogSigmoid()):
        assert gradcheck(mod, (x,)), repr(mod)


def test_rrelu_trains_with_random_slopes_and_evaluates_with_their_mean():
    m = M.RReLU(0.1, 0.3)
    x = mt.tensor(-np.ones(500))
    y_train = m(x).array
    assert np.all((y_train <= -0.1) & (y_train >= -0.3)) and y_train.std() > 0.03
    np.testing.assert_allclose(m.eval()(x).array, -0.2)


# ================================================================================ properties


@given(S.nonscalar_shapes.flatmap(lambda s: S.arrays(s)), slopes)
def test_property_leaky_relu_and_prelu_agree_with_a_shared_slope(a, slope):
    x = mt.tensor(a)
    m = M.PReLU(1, init=slope, dtype="float64")
    np.testing.assert_allclose(m(x).array, M.LeakyReLU(slope)(x).array, rtol=1e-12, atol=1e-300)
    compare_with_torch(M.LeakyReLU(slope), nn.LeakyReLU(slope), [a])


@given(S.nonscalar_shapes.flatmap(lambda s: S.arrays(s, min_value=-10, max_value=10)))
def test_property_shape_preserving_modules_keep_shape_and_dtype(a):
    x = mt.tensor(a.astype(np.float32))
    for mod in (M.SiLU(), M.Hardtanh(-2, 2), M.ReLU6(), M.Threshold(0.0, -1.0), M.Softshrink(0.3), M.Softmin(0)):
        y = mod(x)
        assert y.shape == x.shape and y.dtype == np.float32, repr(mod)
    assert np.all(M.ReLU6()(x).array <= 6) and np.all(M.Hardtanh(-2, 2)(x).array >= -2)


# ================================================================================ bad arguments


def test_bad_arguments_raise_pytorchs_errors():
    with pytest.raises(AssertionError, match=r"max_val \(-1.0\) must be greater than min_val \(1.0\)"):
        M.Hardtanh(1.0, -1.0)
    with pytest.raises(ValueError, match="must be greater than min_val"):  # also a ValueError
        M.Hardtanh(0.5, 0.5)
    with pytest.warns(UserWarning, match="`min_value` is deprecated"):
        assert M.Hardtanh(min_value=-3.0).min_val == -3.0
    with pytest.raises(RuntimeError, match="Found parameter numbers = 4 and channel size = 3"):
        M.PReLU(4)(mt.randn(2, 3))
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        M.GLU(1)(mt.randn(2, 3))
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        M.CELU(0.0)(mt.randn(2))
    with pytest.raises(TypeError, match="expected a floating point tensor.*int64"):
        M.SiLU()(mt.tensor([1, 2]))
    with pytest.raises(TypeError, match="dtype"):
        M.PReLU(dtype="complex")


def test_softmin_without_dim_warns_at_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = M.Softmin()(mt.randn(2, 3))
    assert len(caught) == 1 and caught[0].filename == __file__
    assert "Implicit dimension choice for softmin" in str(caught[0].message)
    np.testing.assert_allclose(y.array.sum(1), 1.0, rtol=1e-6)  # dim 1 for 2-D, as PyTorch
