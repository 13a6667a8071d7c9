"""3-d convolutions and pools (the 2-d Functions and kernels with a third spatial axis): gradcheck to
second order (also at non-contiguous inputs), PyTorch comparison in float64 and float32 with random
upstream gradients, Hypothesis over the geometry, bad input, edge values."""

import numpy as np
import pytest
import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

F = torch.nn.functional
RNG = np.random.default_rng(3)

CONV3D = [
    {},
    {"stride": (1, 2, 1), "padding": 1, "dilation": (2, 1, 1), "groups": 2},
    {"padding": "same", "dilation": (1, 2, 1)},
]
POOLS = [
    ("max_pool3d", {"kernel_size": (2, 3, 2), "stride": (1, 2, 2), "padding": 1, "dilation": (1, 1, 2),
                    "ceil_mode": True}),
    ("max_pool3d", {"kernel_size": 2}),
    ("avg_pool3d", {"kernel_size": (2, 3, 2), "stride": (1, 2, 2), "padding": 1, "ceil_mode": True,
                    "count_include_pad": False}),
    ("avg_pool3d", {"kernel_size": 2, "divisor_override": 3}),
    ("adaptive_avg_pool3d", {"output_size": (3, 4, None)}),
    ("adaptive_max_pool3d", {"output_size": (3, 2, 5)}),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kw", CONV3D)
def test_conv3d_matches_torch(dtype, kw):
    x, w, b = (RNG.standard_normal(s).astype(dtype) for s in ((2, 4, 5, 6, 5), (6, 4 // kw.get("groups", 1), 2, 3, 2), (6,)))
    compare_with_torch(lambda *a: mt.conv3d(*a, **kw), lambda *a: F.conv3d(*a, **kw), [x, w, b])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_conv_transpose3d_matches_torch(dtype):
    kw = {"stride": (2, 1, 2), "padding": 1, "output_padding": (1, 0, 1), "groups": 2, "dilation": (1, 2, 1)}
    x, w, b = (RNG.standard_normal(s).astype(dtype) for s in ((2, 4, 3, 4, 3), (4, 3, 2, 3, 2), (6,)))
    compare_with_torch(lambda *a: mt.conv_transpose3d(*a, **kw), lambda *a: F.conv_transpose3d(*a, **kw), [x, w, b])


def test_conv3d_unbatched_and_modules_match_torch():
    x = RNG.standard_normal((3, 4, 5, 4))
    torch.manual_seed(0)
    for theirs in (torch.nn.Conv3d(3, 4, 2, padding=1, padding_mode="reflect").double(),
                   torch.nn.ConvTranspose3d(3, 2, (2, 1, 2), stride=2).double()):
        ours = getattr(mt.nn, type(theirs).__name__)(3, theirs.out_channels, theirs.kernel_size, stride=theirs.stride,
                                                     padding=theirs.padding, padding_mode=theirs.padding_mode).double()
        ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
        compare_with_torch(ours, theirs, [x])


def test_conv3d_gradcheck_to_second_order_noncontiguous():
    kw = {"stride": (1, 2, 1), "padding": (1, 0, 1), "groups": 2}
    x, w, b = RNG.standard_normal((1, 2, 3, 4, 3)), RNG.standard_normal((2, 1, 2, 2, 2)), RNG.standard_normal(2)
    gradcheck_noncontiguous(lambda *a: mt.conv3d(*a, **kw), [x, w, b], gg=True)
    wt = RNG.standard_normal((2, 1, 2, 2, 2))
    gradcheck_noncontiguous(lambda a, v: mt.conv_transpose3d(a, v, stride=2, output_padding=1, groups=2),
                            [x, wt], gg=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, kw", POOLS)
def test_pools3d_match_torch(name, kw, dtype):
    x = RNG.standard_normal((2, 3, 5, 6, 7)).astype(dtype)
    compare_with_torch(lambda a: getattr(mt, name)(a, **kw), lambda a: getattr(F, name)(a, **kw), [x])
    compare_with_torch(lambda a: getattr(mt, name)(a, **kw), lambda a: getattr(F, name)(a, **kw), [x[0]])  # unbatched


@pytest.mark.parametrize("name, kw", POOLS)
def test_pools3d_gradcheck_noncontiguous(name, kw):
    x = RNG.permutation(90).reshape(1, 2, 3, 3, 5) / 7.0  # distinct values: no ties at the maxima
    gradcheck_noncontiguous(lambda a: getattr(mt, name)(a, **kw), [x], gg=True)


def test_max_pool3d_indices_ties_nan_and_inf_as_torch():
    # ties: the first maximum in row-major window order wins; a NaN wins over any number (the last NaN)
    x = np.zeros((1, 1, 2, 2, 4))
    x[0, 0, 1, 0, 1] = np.nan
    x[0, 0, 0, 1, 3] = np.inf
    for name in ("max_pool3d", "adaptive_max_pool3d"):
        args = (2,) if name == "max_pool3d" else ((1, 1, 2),)
        ours = getattr(mt, name)(mt.tensor(x), *args, return_indices=True)
        theirs = getattr(F, name)(torch.tensor(x), *args, return_indices=True)
        np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    # hand-worked: the windows are [[0, 0, 0, 0], [NaN, 0, 0, 0]] -> NaN at flat index 1*2*4 + 0*4 + 1 = 9;
    # and [.., inf at 0*8 + 1*4 + 3 = 7]
    y, i = mt.max_pool3d(mt.tensor(x), 2, return_indices=True)
    assert np.isnan(y.numpy()[0, 0, 0, 0, 0]) and i.numpy()[0, 0, 0, 0, 0] == 9
    assert y.numpy()[0, 0, 0, 0, 1] == np.inf and i.numpy()[0, 0, 0, 0, 1] == 7


def test_float16_pools3d_against_the_math():
    x = np.array([[1e-4, 6e4], [-6e4, 2.0]], dtype=np.float16).reshape(1, 1, 1, 2, 2)
    assert mt.max_pool3d(mt.tensor(x), (1, 2, 2)).numpy().item() == np.float16(6e4)
    assert mt.avg_pool3d(mt.tensor(x), (1, 2, 2)).numpy().item() == pytest.approx((1e-4 + 2.0) / 4, rel=1e-2)


@settings(max_examples=25, deadline=None)
@given(S.conv_geometry(nd=3), st.integers(0, 2**31 - 1))
def test_conv3d_property_matches_torch(geom, seed):
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(geom["x"]), rng.standard_normal(geom["w"])
    ours = mt.conv3d(t64(x, False), t64(w, False), **geom["kw"])
    np.testing.assert_allclose(ours.numpy(), F.conv3d(torch.tensor(x), torch.tensor(w), **geom["kw"]).numpy(),
                               rtol=1e-10, atol=1e-10)
    # the adjoint identity <conv(x, w), v> = <x, conv_transpose(v, w)> holds at every geometry
    v = rng.standard_normal(ours.shape)
    xt = t64(x)
    y = mt.conv3d(xt, t64(w, False), **geom["kw"])
    y.backward(mt.tensor(v))
    assert np.isclose((ours.numpy() * v).sum(), (x * xt.grad.numpy()).sum(), rtol=1e-9, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.tuples(S.pool_axis(), S.pool_axis(), S.pool_axis()), st.booleans(), st.integers(0, 2**31 - 1))
def test_pools3d_property_match_torch(axes, ceil_mode, seed):
    size, k, s, p, d = (tuple(a[i] for a in axes) for i in range(5))
    x = np.random.default_rng(seed).standard_normal((1, 2) + size)
    kw = {"kernel_size": k, "stride": s, "padding": p, "ceil_mode": ceil_mode}
    np.testing.assert_allclose(mt.max_pool3d(mt.tensor(x), dilation=d, **kw).numpy(),
                               F.max_pool3d(torch.tensor(x), dilation=d, **kw).numpy())
    if all(n >= kk for n, kk in zip(size, k)):
        np.testing.assert_allclose(mt.avg_pool3d(mt.tensor(x), **kw).numpy(),
                                   F.avg_pool3d(torch.tensor(x), **kw).numpy(), rtol=1e-12, atol=1e-12)
    else:  # PyTorch's avg_pool3d refuses an input smaller than the kernel (padding not counted), as ours
        with pytest.raises(RuntimeError, match="smaller than kernel size"):
            mt.avg_pool3d(mt.tensor(x), **kw)


def test_bad_input_3d():
    x = mt.zeros(1, 2, 3, 3, 3)
    with pytest.raises(RuntimeError, match="Expected 4D \\(unbatched\\) or 5D \\(batched\\) input to conv3d"):
        mt.conv3d(mt.zeros(2, 3, 3, 3, 3, 3), mt.zeros(1, 2, 1, 1, 1))
    with pytest.raises(RuntimeError, match="expected weight to be 5-dimensional"):
        mt.conv3d(x, mt.zeros(1, 2, 1, 1))
    with pytest.raises(RuntimeError, match="expected input\\[1, 2, 3, 3, 3\\] to have 4 channels"):
        mt.conv3d(x, mt.zeros(1, 4, 1, 1, 1))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        mt.conv3d(x, mt.zeros(1, 2, 4, 1, 1))
    with pytest.raises(RuntimeError, match="expected a 4D \\(unbatched\\) or 5D \\(batched\\) input"):
        mt.max_pool3d(mt.zeros(3, 3), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half of kernel size"):
        mt.avg_pool3d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="output_size must have 3 elements"):
        mt.adaptive_avg_pool3d(x, (1, 2))
    with pytest.raises(TypeError):
        mt.avg_pool3d(mt.zeros(1, 2, 3, 3, 3, dtype=mt.int64), 2)
