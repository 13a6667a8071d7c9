"""interpolate's 'area', 5-D 'nearest'/'nearest-exact', 'trilinear' and 'bicubic' modes: against PyTorch
(float64/float32, size and scale_factor, recompute_scale_factor, align_corners, non-contiguous input, empty
batch), the cubic weights and area means by hand, gradcheck/gradgradcheck (also at non-contiguous leaves),
Hypothesis over shapes and scales, float16, and bad input."""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.kernels import interpolate as KI
from minitorch_ln.ops.interpolate import interpolate

F = torch.nn.functional

# (mode, input rank, align_corners values)
MODES = [("area", 3, [None]), ("area", 4, [None]), ("area", 5, [None]), ("nearest", 5, [None]),
         ("nearest-exact", 5, [None]), ("trilinear", 5, [False, True]), ("bicubic", 4, [False, True])]
RESIZES = [{"size": 4}, {"size": 9}, {"scale_factor": 1.7}, {"scale_factor": 0.6}, {"scale_factor": 2},
           {"scale_factor": 1.1}, {"scale_factor": 1.7, "recompute_scale_factor": True},
           {"scale_factor": 0.45, "recompute_scale_factor": False}]
CASES = [(m, r, ac, kw) for m, r, acs in MODES for ac in acs for kw in RESIZES]
SHAPES = {3: (2, 3, 5), 4: (2, 3, 5, 6), 5: (1, 2, 3, 4, 5)}


def _torch_interpolate(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's notes about align_corners / recompute_scale_factor
        return F.interpolate(*args, **kw)


def _torch_grad_is_right(a, mode, ac, kw):
    """Whether PyTorch's gradient agrees with float64 finite differences of its own forward. It does not for
    5-D 'nearest' and for 'bicubic' at some scale factors (e.g. scale_factor=1.1: its backward kernels
    compute the source index with other arithmetic than the forward's; torch.autograd.gradcheck fails).
    There only the forward is compared with PyTorch, and our gradient is checked by finite differences."""
    small = torch.tensor(np.random.default_rng(1).standard_normal((1, 1) + a.shape[2:]), requires_grad=True)
    return torch.autograd.gradcheck(lambda x: _torch_interpolate(x, mode=mode, align_corners=ac, **kw), (small,),
                                     raise_exception=False)


def _compare(a, mode, ac, kw):
    ok = _torch_grad_is_right(a, mode, ac, kw)
    compare_with_torch(lambda x: interpolate(x, mode=mode, align_corners=ac, **kw),
                       lambda x: _torch_interpolate(x, mode=mode, align_corners=ac, **kw), [a], requires_grad=[ok])
    if not ok:
        assert gradcheck(lambda x: interpolate(x, mode=mode, align_corners=ac, **kw),
                         (t64(a[:1, :1].astype(np.float64)),))


# ==================================================================================================
# PyTorch comparison
# ==================================================================================================
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode,rank,ac,kw", CASES, ids=[f"{m}-{r}d-{ac}-{kw}" for m, r, ac, kw in CASES])
def test_modes_match_torch(mode, rank, ac, kw, dtype, rng):
    _compare(rng.standard_normal(SHAPES[rank]).astype(dtype), mode, ac, kw)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_per_axis_sizes_scales_and_non_contiguous_input_match_torch(dtype, rng):
    a4 = rng.standard_normal((2, 8, 3, 7)).astype(dtype)
    a5 = rng.standard_normal((1, 2, 6, 3, 5)).astype(dtype)
    for kw in [{"size": (4, 9)}, {"scale_factor": (2.5, 0.7)}, {"scale_factor": (1.3, 2.0), "recompute_scale_factor": True}]:
        for mode, ac in [("area", None), ("bicubic", False), ("bicubic", True)]:
            compare_with_torch(lambda x, m=mode, c=ac, k=kw: interpolate(x.transpose(1, 2)[:, :, ::2], mode=m,
                                                                         align_corners=c, **k),
                               lambda x, m=mode, c=ac, k=kw: _torch_interpolate(x.transpose(1, 2)[:, :, ::2], mode=m,
                                                                                align_corners=c, **k), [a4])
    for kw in [{"size": (2, 5, 3)}, {"scale_factor": (1.5, 0.7, 2.0)}]:
        for mode, ac in [("area", None), ("nearest", None), ("nearest-exact", None), ("trilinear", False),
                         ("trilinear", True)]:
            compare_with_torch(lambda x, m=mode, c=ac, k=kw: interpolate(x.transpose(2, 4)[:, :, ::2], mode=m,
                                                                         align_corners=c, **k),
                               lambda x, m=mode, c=ac, k=kw: _torch_interpolate(x.transpose(2, 4)[:, :, ::2], mode=m,
                                                                                align_corners=c, **k), [a5])


@pytest.mark.parametrize("mode,rank", [(m, r) for m, r, _ in MODES])
def test_empty_batch_and_one_cell_match_torch(mode, rank, rng):
    a = np.zeros((0,) + SHAPES[rank][1:])
    (y,), _ = compare_with_torch(lambda x: interpolate(x, scale_factor=2, mode=mode),
                                 lambda x: _torch_interpolate(x, scale_factor=2, mode=mode), [a])
    assert y.shape == (0,) + SHAPES[rank][1:2] + tuple(2 * n for n in SHAPES[rank][2:])
    for ac in dict(MODES_AC)[mode, rank]:
        _compare(rng.standard_normal((1, 2) + (1,) * (rank - 2)), mode, ac, {"size": 3})
        _compare(rng.standard_normal(SHAPES[rank]), mode, ac, {"size": 1})


MODES_AC = [((m, r), acs) for m, r, acs in MODES]


# ==================================================================================================
# by hand
# ==================================================================================================
def test_bicubic_weights_by_hand():
    # Keys' kernel with A = -0.75 at t = 0.5: c2(1.5) = c2(0.5 + 1) = -0.09375, c1(0.5) = 0.59375 (each pair
    # sums to 0.5, all four to 1): ((A·1.5 - 5A)·1.5 + 8A)·1.5 - 4A = -0.09375, ((A+2)·.5 - (A+3))·.25 + 1 = .59375
    (i0, w0), (i1, w1), (i2, w2), (i3, w3) = KI.cubic_taps(2, 4, None, False, np.float64)
    # out 4 from in 2: src = (o + .5)/2 - .5 = -.25, .25, .75, 1.25; o = 1 sits at t = .25 between cells 0, 1
    assert [i0[1], i1[1], i2[1], i3[1]] == [0, 0, 1, 1]  # indices -1 and 2 clamped to the border
    t = 0.25
    c1 = lambda x: ((-0.75 + 2) * x - (-0.75 + 3)) * x * x + 1
    c2 = lambda x: ((-0.75 * x + 3.75) * x - 6) * x + 3
    np.testing.assert_allclose([w0[1], w1[1], w2[1], w3[1]], [c2(1 + t), c1(t), c1(1 - t), c2(2 - t)], rtol=1e-15)
    assert c2(1.5) == -0.09375 and c1(0.5) == 0.59375
    np.testing.assert_allclose(sum(w for _, w in KI.cubic_taps(5, 13, None, False, np.float64)), 1.0, rtol=1e-14)
    # a linear ramp is reproduced exactly by cubic convolution away from the clamped borders
    x = np.arange(8.0).reshape(1, 1, 1, 8)
    y = interpolate(mt.tensor(x), size=(1, 15), mode="bicubic", align_corners=True).array.ravel()
    np.testing.assert_allclose(y[2:-2], np.arange(15)[2:-2] * 0.5, atol=1e-12)


def test_area_is_the_window_mean_by_hand():
    x = mt.tensor(np.array([1.0, 2.0, 4.0, 8.0, 16.0]).reshape(1, 1, 5))
    # out 2 from 5: windows [0, 3) and [2, 5) (floor(o·5/2), ceil((o+1)·5/2)): means 7/3 and 28/3
    np.testing.assert_allclose(interpolate(x, size=2, mode="area").array.ravel(), [7 / 3, 28 / 3], rtol=1e-15)
    cube = np.arange(8.0).reshape(1, 1, 2, 2, 2)  # area to one cell: the mean 3.5
    assert interpolate(mt.tensor(cube), size=1, mode="area").array.ravel().tolist() == [3.5]
    # trilinear at align_corners=True on 2x2x2 -> 3x3x3: the centre is the mean of the eight corners
    assert interpolate(mt.tensor(cube), size=3, mode="trilinear", align_corners=True).array[0, 0, 1, 1, 1] == 3.5


def test_float16_and_edge_values():
    rng = np.random.default_rng(0)
    for mode, shape in [("area", (1, 2, 5, 6)), ("bicubic", (1, 2, 5, 6)), ("trilinear", (1, 2, 3, 5, 6)),
                        ("nearest", (1, 2, 3, 5, 6))]:
        a = rng.standard_normal(shape)
        h = interpolate(mt.tensor(a.astype(np.float16)), scale_factor=1.6, mode=mode)
        assert h.dtype == np.float16
        ref = interpolate(mt.tensor(a), scale_factor=1.6, mode=mode).array
        np.testing.assert_allclose(h.array.astype(np.float64), ref, rtol=1e-2, atol=1e-2)
    const = interpolate(mt.tensor(np.full((1, 1, 3, 4), 7.25)), size=(5, 7), mode="bicubic")
    np.testing.assert_allclose(const.array, 7.25, rtol=1e-14)  # the four weights sum to one
    x = np.array([1.0, np.inf, 3.0, 4.0, 5.0, 6.0, np.nan]).reshape(1, 1, 1, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for mode in ("bicubic",):
            ours = interpolate(mt.tensor(x), size=(1, 11), mode=mode).numpy()
            np.testing.assert_allclose(ours, _torch_interpolate(torch.tensor(x), size=(1, 11), mode=mode).numpy(),
                                       rtol=1e-13)  # NaN and inf where PyTorch has them
    ints5 = np.arange(24).reshape(1, 1, 2, 3, 4)
    y = interpolate(mt.tensor(ints5), scale_factor=2)
    assert y.dtype == np.int64 and np.array_equal(y.array, ints5.repeat(2, 2).repeat(2, 3).repeat(2, 4))


# ==================================================================================================
# gradcheck and gradgradcheck
# ==================================================================================================
FNS = [
    lambda t: interpolate(t, size=(3, 7), mode="area"),
    lambda t: interpolate(t, scale_factor=(0.6, 2.3), mode="bicubic"),
    lambda t: interpolate(t.transpose(2, 3), size=(7, 2), mode="bicubic", align_corners=True),
    lambda t: interpolate(t.unsqueeze(2).expand(1, 2, 3, 5, 4), scale_factor=(0.7, 1.5, 1.3), mode="trilinear"),
    lambda t: interpolate(t.unsqueeze(2).expand(1, 2, 2, 5, 4), size=(3, 2, 6), mode="trilinear", align_corners=True),
    lambda t: interpolate(t.unsqueeze(2).expand(1, 2, 2, 5, 4), scale_factor=1.7, mode="nearest"),
    lambda t: interpolate(t.unsqueeze(2).expand(1, 2, 2, 5, 4), size=(3, 3, 5), mode="nearest-exact"),
    lambda t: interpolate(t.unsqueeze(2).expand(1, 2, 2, 5, 4), size=(1, 2, 3), mode="area"),
]


@pytest.mark.parametrize("i", range(len(FNS)))
def test_gradcheck_and_gradgradcheck(i, rng):
    x = t64(rng.standard_normal((1, 2, 5, 4)))
    assert gradcheck(FNS[i], (x,))
    assert gradgradcheck(FNS[i], (x,))


@pytest.mark.parametrize("i", range(len(FNS)))
def test_gradcheck_noncontiguous_leaf(i, rng):
    gradcheck_noncontiguous(FNS[i], [rng.standard_normal((1, 2, 5, 4))], gg=i in (1, 3))


# ==================================================================================================
# Hypothesis
# ==================================================================================================
@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODES), st.lists(st.integers(1, 6), min_size=3, max_size=3), st.booleans(),
       st.lists(st.floats(0.3, 3.0), min_size=3, max_size=3), st.lists(st.integers(1, 8), min_size=3, max_size=3),
       st.sampled_from([None, True]), st.sampled_from([np.float32, np.float64]))
def test_modes_property_match_torch(mode_rank, ins, by_scale, scales, outs, recompute, dtype):
    mode, rank, acs = mode_rank
    k = rank - 2
    if by_scale:
        assume(all(int(n * s) >= 1 for n, s in zip(ins[:k], scales[:k])))
        kw = {"scale_factor": tuple(scales[:k]), "recompute_scale_factor": recompute}
    else:
        kw = {"size": tuple(outs[:k])}
    a = np.random.default_rng(sum(ins)).standard_normal((1, 2) + tuple(ins[:k])).astype(dtype)
    for ac in acs:
        _compare(a, mode, ac, kw)


# ==================================================================================================
# bad input
# ==================================================================================================
def test_bad_input_raises_as_torch():
    x3, x4, x5 = mt.randn(1, 2, 4), mt.randn(1, 2, 4, 4), mt.randn(1, 2, 3, 3, 3)
    for x in (x3, x5):
        with pytest.raises(NotImplementedError, match=r"Only 3D, 4D and 5D input Tensors supported \(got .D\).*"
                                                      r"\(got bicubic\)"):
            interpolate(x, size=2, mode="bicubic")
    with pytest.raises(NotImplementedError, match="Got 4D input, but trilinear mode needs 5D input"):
        interpolate(x4, size=2, mode="trilinear")
    with pytest.raises(ValueError, match="align_corners option can only be set with the interpolating modes"):
        interpolate(x5, size=2, mode="area", align_corners=True)
    with pytest.raises(RuntimeError, match=r"but got input \(D: 3, H: 3, W: 3\) output \(D: 0, H: 1, W: 1\)"):
        interpolate(x5, size=(0, 1, 1), mode="trilinear")
    with pytest.raises(RuntimeError, match=r"Non-empty 5D data tensor expected but got a tensor with sizes \[1, 0, 3, 3, 3\]"):
        interpolate(mt.randn(1, 0, 3, 3, 3), size=2, mode="nearest")
    with pytest.raises(RuntimeError, match="adaptive_avg_pool2d.*non-zero sizes"):
        interpolate(mt.randn(1, 2, 0, 4), size=2, mode="area")
    for mode, x in (("area", x4), ("bicubic", x4), ("trilinear", x5)):
        with pytest.raises(TypeError, match="floating point"):
            interpolate(mt.tensor(np.ones(x.shape, dtype=np.int64)), size=2, mode=mode)
    with pytest.raises(NotImplementedError, match="antialias=True is not supported.*'bicubic' \\(4-D\\)"):
        interpolate(x4, size=2, mode="bicubic", antialias=True)
    with pytest.raises(ValueError, match="Input and scale_factor must have the same number of spatial dimensions"):
        interpolate(x5, scale_factor=(2.0, 2.0), mode="trilinear")
