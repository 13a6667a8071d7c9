"""``nn.GroupNorm`` and ``nn.InstanceNorm1d/2d/3d``: PyTorch parity (state_dict, outputs, gradients, running
statistics), gradchecks through the modules, properties, input checks and PyTorch's warning."""

import warnings

import numpy as np
import pytest
from helpers import gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from parity import module_parity

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.nn.normalization_groups import (
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)

pytestmark = pytest.mark.usefixtures("cpu_kernels")

INSTANCE = {1: (InstanceNorm1d, torch.nn.InstanceNorm1d), 2: (InstanceNorm2d, torch.nn.InstanceNorm2d),
            3: (InstanceNorm3d, torch.nn.InstanceNorm3d)}


def _randomize(tm, rng):
    """Give a torch module random parameters and running statistics, so that loading them matters."""
    with torch.no_grad():
        for name, t in list(tm.named_parameters()) + list(tm.named_buffers()):
            if t.dtype.is_floating_point:
                t.copy_(torch.tensor(rng.uniform(0.5, 1.5, t.shape) if name == "running_var" else rng.standard_normal(t.shape)))
    return tm


# ==================================================================================================
# Construction: parameters, buffers, init and repr as PyTorch's
# ==================================================================================================


@pytest.mark.parametrize("kwargs", [dict(), dict(affine=False), dict(bias=False), dict(eps=1e-3)])
def test_group_norm_construction_matches_torch(kwargs):
    ours, theirs = GroupNorm(2, 6, **kwargs), torch.nn.GroupNorm(2, 6, **kwargs)
    assert repr(ours) == repr(theirs)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[k].array, v.numpy())


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("kwargs", [dict(), dict(affine=True), dict(track_running_stats=True),
                                    dict(affine=True, track_running_stats=True, momentum=None, bias=False)])
def test_instance_norm_construction_matches_torch(dim, kwargs):
    ours_cls, theirs_cls = INSTANCE[dim]
    ours, theirs = ours_cls(4, **kwargs), theirs_cls(4, **kwargs)
    assert repr(ours) == repr(theirs)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        assert ours.state_dict()[k].dtype == np.dtype(str(v.dtype).replace("torch.", ""))
        np.testing.assert_array_equal(ours.state_dict()[k].array, v.numpy())


def test_reset_parameters_and_running_stats():
    m = InstanceNorm1d(3, affine=True, track_running_stats=True)
    for t in (m.weight, m.bias, m.running_mean, m.running_var):
        t.array[...] = 7
    m.num_batches_tracked.array[...] = 5
    m.reset_parameters()
    assert np.all(m.weight.array == 1) and np.all(m.bias.array == 0) and np.all(m.running_mean.array == 0)
    assert np.all(m.running_var.array == 1) and m.num_batches_tracked.item() == 0
    g = GroupNorm(1, 3)
    g.weight.array[...] = 3
    g.reset_parameters()
    assert np.all(g.weight.array == 1)


# ==================================================================================================
# Parity with PyTorch: state_dict loaded from the torch module, outputs and every gradient
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("G,C,shape", [(2, 6, (3, 6, 5)), (3, 6, (2, 6, 4, 3)), (1, 4, (2, 4, 3, 2, 2)), (2, 4, (5, 4))])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_module_parity(dtype, G, C, shape, affine, rng):
    theirs = _randomize(torch.nn.GroupNorm(G, C, affine=affine), rng)
    module_parity(GroupNorm(G, C, affine=affine), theirs, [rng.standard_normal(shape) * 2 + 1], lambda m, x: m(x), dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("affine,track", [(False, False), (True, False), (True, True), (False, True)])
@pytest.mark.parametrize("batched", [True, False])
def test_instance_norm_module_parity_train_then_eval(dtype, dim, affine, track, batched, rng):
    ours_cls, theirs_cls = INSTANCE[dim]
    theirs = _randomize(theirs_cls(3, momentum=0.2, affine=affine, track_running_stats=track), rng)
    ours = ours_cls(3, momentum=0.2, affine=affine, track_running_stats=track)
    shape = ((2,) if batched else ()) + (3,) + (4, 3, 2)[:dim]
    for step in range(2):  # two training steps: the running statistics move (when tracked)
        x = rng.standard_normal(shape) * 2 + step
        module_parity(ours, theirs, [x], lambda m, x: m(x), dtype=dtype, load=step == 0)
    for k, v in theirs.state_dict().items():
        tol = 1e-12 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(ours.state_dict()[k].array, v.numpy(), rtol=tol, atol=tol, err_msg=k)
    ours.eval()
    theirs.eval()
    module_parity(ours, theirs, [rng.standard_normal(shape)], lambda m, x: m(x), dtype=dtype, load=False)


def test_groups_of_one_value_give_exactly_bias(rng):
    # GroupNorm(C, C) of (N, C): every group is one value, xhat = 0, so y = β and dx = dγ = 0 exactly.
    # PyTorch's float32 CPU kernel returns rounding noise there (about 5e-5), so it is left out of
    # the parity tests above; the math and float64 finite differences decide.
    m = GroupNorm(4, 4)
    m.bias.array[...] = rng.standard_normal(4)
    x = mt.tensor(rng.standard_normal((5, 4)).astype(np.float32) * 100, requires_grad=True)
    y = m(x)
    np.testing.assert_array_equal(y.array, np.broadcast_to(m.bias.array, (5, 4)))
    y.backward(mt.tensor(rng.standard_normal((5, 4)).astype(np.float32)))
    assert np.all(x.grad.array == 0) and np.all(m.weight.grad.array == 0)
    assert gradcheck(lambda x: GroupNorm(4, 4).double()(x), (t64(rng.standard_normal((3, 4))),))


def test_instance_norm_momentum_none_leaves_running_stats(rng):
    # PyTorch passes momentum 0.0 for None: the running statistics do not move, nothing is counted
    ours, theirs = InstanceNorm1d(3, momentum=None, track_running_stats=True), \
        torch.nn.InstanceNorm1d(3, momentum=None, track_running_stats=True)
    x = rng.standard_normal((2, 3, 5))
    ours(mt.tensor(x))
    theirs(torch.tensor(x))
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[k].array, v.numpy())
    assert ours.num_batches_tracked.item() == 0


# ==================================================================================================
# Gradchecks through the modules, and a property over shapes
# ==================================================================================================


def test_gradchecks_through_modules(rng):
    g = GroupNorm(2, 4).double()
    g.weight.array[...] = rng.standard_normal(4)
    x = rng.standard_normal((2, 4, 3))
    assert gradcheck(lambda x: g(x), (t64(x),)) and gradgradcheck(lambda x: g(x), (t64(x),))
    gradcheck_noncontiguous(lambda x: g(x), [x], gg=True)
    inorm = InstanceNorm2d(4, affine=True).double()
    x2 = rng.standard_normal((4, 3, 2))  # unbatched (C, H, W)
    assert gradcheck(lambda x: inorm(x), (t64(x2),)) and gradgradcheck(lambda x: inorm(x), (t64(x2),))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(2, 5), st.integers(0, 2**31 - 1))
def test_group_norm_module_property(N, G, cpg, L, seed):
    rng = np.random.default_rng(seed)
    C = G * cpg
    theirs = _randomize(torch.nn.GroupNorm(G, C).double(), rng)
    ours = GroupNorm(G, C).double()
    ours.load_state_dict(theirs.state_dict())
    x = rng.standard_normal((N, C, L)) * rng.uniform(0.1, 10)
    np.testing.assert_allclose(ours(mt.tensor(x)).array, theirs(torch.tensor(x)).detach().numpy(), rtol=1e-9, atol=1e-9)


# ==================================================================================================
# Bad input and PyTorch's warning
# ==================================================================================================


def test_group_norm_bad_construction_and_input():
    with pytest.raises(ValueError, match="num_channels \\(4\\) must be divisible by num_groups \\(3\\)"):
        GroupNorm(3, 4)
    with pytest.raises(ValueError, match="num_groups must be a positive int, got 0"):
        GroupNorm(0, 4)
    with pytest.raises(ValueError, match="eps"):
        GroupNorm(2, 4, eps=0)
    with pytest.raises(RuntimeError, match="Expected weight to be a vector of size equal to the number of channels"):
        GroupNorm(2, 4)(mt.randn(2, 6, 3))
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        GroupNorm(2, 4)(mt.randn(2, 5, 3))


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_instance_norm_input_dims(dim):
    cls = INSTANCE[dim][0]
    for bad in (dim, dim + 3):
        with pytest.raises(ValueError, match=f"expected {dim + 1}D or {dim + 2}D input \\(got {bad}D input"):
            cls(3)(mt.randn(*([2] * bad)))
    with pytest.raises(TypeError, match="expected input to be a Tensor"):
        cls(3)(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="expected input's size at dim=1 to match num_features \\(3\\), but got: 4"):
        cls(3, affine=True)(mt.randn(2, 4, *([3] * dim)))


def test_instance_norm_warns_like_torch_when_channels_differ_without_affine(rng):
    x = rng.standard_normal((2, 4, 5))
    with warnings.catch_warnings(record=True) as ours_w:
        warnings.simplefilter("always")
        y = InstanceNorm1d(3)(mt.tensor(x))
    with warnings.catch_warnings(record=True) as theirs_w:
        warnings.simplefilter("always")
        yt = torch.nn.InstanceNorm1d(3)(torch.tensor(x))
    assert [str(w.message) for w in ours_w] == [str(w.message) for w in theirs_w]
    assert all(w.category is UserWarning for w in ours_w) and len(ours_w) == 1
    np.testing.assert_allclose(y.array, yt.numpy(), rtol=1e-12, atol=1e-12)  # and it still normalizes


def test_instance_norm_training_needs_more_than_one_spatial_value():
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        InstanceNorm1d(3)(mt.randn(2, 3, 1))
