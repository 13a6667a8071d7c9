"""interpolate: every supported mode against PyTorch (float64/float32, size and scale_factor, with and
without recompute_scale_factor, align_corners, non-contiguous input, empty batch), the index rules
by hand, gradcheck to second order (also on non-contiguous leaves), Hypothesis over shapes and
scale factors, float16 and integer input, unsupported modes and bad arguments."""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import assume, given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.kernels import interpolate as KI
from minitorch_ln.ops.interpolate import interpolate

F = torch.nn.functional

# (mode, input rank, align_corners values)
MODES = [("nearest", 3, [None]), ("nearest", 4, [None]), ("nearest-exact", 3, [None]), ("nearest-exact", 4, [None]),
         ("linear", 3, [False, True]), ("bilinear", 4, [False, True])]
RESIZES = [{"size": 4}, {"size": 11}, {"scale_factor": 1.7}, {"scale_factor": 0.6}, {"scale_factor": 2},
           {"scale_factor": 1.1}, {"scale_factor": 2.1}, {"scale_factor": 1.7, "recompute_scale_factor": True},
           {"scale_factor": 0.45, "recompute_scale_factor": False}]
CASES = [(m, r, ac, kw) for m, r, acs in MODES for ac in acs for kw in RESIZES]


def _torch_interpolate(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's notes about align_corners / recompute_scale_factor
        return F.interpolate(*args, **kw)


def _torch_grad_is_right(a, mode, kw):
    """False where PyTorch's gradient contradicts its own forward: its 1-D 'nearest' forward uses the generic
    kernel (no shortcut, scale in the input's dtype) but its backward uses the planar ``nearest_idx`` (copy at
    equal sizes, ``o // 2`` at double size, float32 scale), so e.g. ``scale_factor=1.1`` on 5 cells reads
    [0, 0, 1, 2, 3] forward and sends dy back as if it had copied (torch.autograd.gradcheck fails there).
    Finite differences decide: in those cases only the forward is compared with PyTorch and our gradient
    is checked against float64 finite differences."""
    if mode != "nearest" or a.ndim != 3:
        return True
    n = a.shape[-1]
    if "size" in kw:
        out, scale = kw["size"], None
    else:
        out, scale = int(n * kw["scale_factor"]), None if kw.get("recompute_scale_factor") else kw["scale_factor"]
    opmath = np.float64 if a.dtype == np.float64 else np.float32
    fwd = KI.nearest_taps(n, out, scale, False, opmath, planar=False)[0][0]
    return np.array_equal(fwd, KI.nearest_taps(n, out, scale, False, opmath, planar=True)[0][0])


def _compare(a, mode, ac, kw, device="cpu"):
    """compare_with_torch for ``interpolate(x, mode=mode, align_corners=ac, **kw)`` (see above for the
    cases where PyTorch's gradient is wrong)."""
    ok = _torch_grad_is_right(a, mode, kw)
    compare_with_torch(lambda x: interpolate(x, mode=mode, align_corners=ac, **kw),
                       lambda x: _torch_interpolate(x, mode=mode, align_corners=ac, **kw), [a],
                       requires_grad=[ok], device=device)
    if not ok:
        assert gradcheck(lambda x: interpolate(x, mode=mode, align_corners=ac, **kw), (t64(a),))


def _shape(rank):
    return (2, 3, 5) if rank == 3 else (2, 3, 5, 7)


# ==================================================================================================
# PyTorch comparison
# ==================================================================================================
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode,rank,ac,kw", CASES, ids=[f"{m}-{r}d-{ac}-{kw}" for m, r, ac, kw in CASES])
def test_interpolate_matches_torch(mode, rank, ac, kw, dtype, rng, device):
    a = rng.standard_normal(_shape(rank)).astype(dtype)
    _compare(a, mode, ac, kw, device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_per_axis_sizes_and_scales_and_non_contiguous_input_match_torch(dtype, rng):
    a = rng.standard_normal((2, 8, 3, 7)).astype(dtype)
    for kw in [{"size": (4, 9)}, {"size": [2, 1]}, {"scale_factor": (2.5, 0.7)}, {"scale_factor": [1.0, 3.0]},
               {"scale_factor": (1.3, 2.0), "recompute_scale_factor": True}]:
        for mode, ac in [("nearest", None), ("nearest-exact", None), ("bilinear", False), ("bilinear", True)]:
            compare_with_torch(lambda x, m=mode, c=ac, k=kw: interpolate(x.transpose(1, 2)[:, :, ::2], mode=m,
                                                                         align_corners=c, **k),
                               lambda x, m=mode, c=ac, k=kw: _torch_interpolate(x.transpose(1, 2)[:, :, ::2], mode=m,
                                                                                align_corners=c, **k), [a])
    compare_with_torch(lambda x: interpolate(x[:, 0].transpose(1, 2), 5, None, "linear", True),  # positional args
                       lambda x: _torch_interpolate(x[:, 0].transpose(1, 2), 5, None, "linear", True), [a])


@pytest.mark.parametrize("mode,rank", [("nearest", 3), ("nearest", 4), ("nearest-exact", 4), ("linear", 3),
                                       ("bilinear", 4)])
def test_empty_batch_matches_torch(mode, rank):
    a = np.zeros((0,) + _shape(rank)[1:])
    (y,), _ = compare_with_torch(lambda x: interpolate(x, scale_factor=2, mode=mode),
                                 lambda x: _torch_interpolate(x, scale_factor=2, mode=mode), [a])
    assert y.shape == (0, 3) + tuple(2 * n for n in _shape(rank)[2:])


def test_one_pixel_and_one_output_cases_match_torch(rng):
    for shape, kw in [((1, 2, 1, 1), {"size": (3, 4)}), ((1, 2, 4, 4), {"size": (1, 1)}), ((1, 1, 1), {"size": 5}),
                      ((1, 1, 6), {"size": 1})]:
        a = rng.standard_normal(shape)
        for mode, ac in [("nearest", None), ("nearest-exact", None), ("linear" if len(shape) == 3 else "bilinear", True),
                         ("linear" if len(shape) == 3 else "bilinear", False)]:
            _compare(a, mode, ac, kw)


# ==================================================================================================
# the index rules, by hand
# ==================================================================================================
def _resize(values, **kw):
    return interpolate(mt.tensor(np.asarray(values, dtype=np.float64).reshape(1, 1, -1)), **kw).array.ravel().tolist()


def test_nearest_rules_by_hand():
    x = [0, 1, 2, 3, 4]
    # legacy nearest: source floor(o / scale_factor), the given scale used as it is (not out/in = 5/5)
    assert _resize(x, scale_factor=1.1) == [0, 0, 1, 2, 3]
    # recompute_scale_factor: source floor(o · in/out) with out = floor(5·1.1) = 5 → a copy
    assert _resize(x, scale_factor=1.1, recompute_scale_factor=True) == [0, 1, 2, 3, 4]
    assert _resize(x, scale_factor=2.1) == [0, 0, 0, 1, 1, 2, 2, 3, 3, 4]  # floor(o / 2.1)
    assert _resize(x, size=10) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    # nearest-exact: floor((o + 0.5) · in/out), the pixel centres
    assert _resize(x, size=3, mode="nearest-exact") == [0, 2, 4]
    assert _resize(x, size=3) == [0, 1, 3]  # legacy: floor(o · 5/3) = 0, 1, 3
    # a 4-D input keeps PyTorch's planar shortcut: equal sizes copy even with scale_factor 1.1
    y = interpolate(mt.tensor(np.arange(5.0).reshape(1, 1, 5, 1)), scale_factor=(1.1, 1.0)).array.ravel()
    assert y.tolist() == [0, 1, 2, 3, 4]


def test_linear_rules_by_hand():
    # align_corners=True: src = o·(in-1)/(out-1): the corners meet, the rest is evenly spaced
    assert _resize([0, 10], size=5, mode="linear", align_corners=True) == [0, 2.5, 5, 7.5, 10]
    # align_corners=False: src = (o + 0.5)·in/out - 0.5, clamped at 0 (the edges replicate)
    assert _resize([0, 10], size=4, mode="linear") == [0, 2.5, 7.5, 10]
    # equal sizes: a copy, even when scale_factor would move the samples
    assert _resize([1, 5, 2], scale_factor=1.2, mode="linear") == [1, 5, 2]
    # one output with align_corners=True reads the first input
    assert _resize([3, 5, 9], size=1, mode="linear", align_corners=True) == [3]
    img = np.array([[0.0, 1.0], [2.0, 3.0]]).reshape(1, 1, 2, 2)
    y = interpolate(mt.tensor(img), size=3, mode="bilinear", align_corners=True).array[0, 0]
    assert y.tolist() == [[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]]  # x + 2y sampled on a 3x3 grid


def test_backward_is_the_scatter_of_dy_with_the_interpolation_weights():
    x = mt.tensor(np.zeros((1, 1, 2)), requires_grad=True)
    y = interpolate(x, size=4, mode="linear")  # weights: [1, 0], [.75, .25], [.25, .75], [0, 1]
    y.backward(mt.tensor(np.array([[[1.0, 2.0, 4.0, 8.0]]])))
    assert x.grad.array.ravel().tolist() == [1 + 1.5 + 1, 0.5 + 3 + 8]
    x = mt.tensor(np.zeros((1, 1, 3)), requires_grad=True)
    interpolate(x, scale_factor=2).backward(mt.tensor(np.arange(1.0, 7.0).reshape(1, 1, 6)))
    assert x.grad.array.ravel().tolist() == [1 + 2, 3 + 4, 5 + 6]  # each source cell gets its two copies


def test_float16_integer_and_extreme_values():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 2, 5, 6))
    for mode, ac in [("nearest", None), ("nearest-exact", None), ("bilinear", False), ("bilinear", True)]:
        h = interpolate(mt.tensor(a.astype(np.float16)), scale_factor=1.6, mode=mode, align_corners=ac)
        assert h.dtype == np.float16
        ref = interpolate(mt.tensor(a), scale_factor=1.6, mode=mode, align_corners=ac).array
        np.testing.assert_allclose(h.array.astype(np.float64), ref, rtol=1e-2, atol=1e-2)
    ints = np.arange(12).reshape(1, 1, 3, 4)
    y = interpolate(mt.tensor(ints), scale_factor=2)
    assert y.dtype == np.int64 and np.array_equal(y.array, ints.repeat(2, 2).repeat(2, 3))
    u8 = ints.astype(np.uint8)
    assert np.array_equal(interpolate(mt.tensor(u8), size=(5, 3)).array,
                          _torch_interpolate(torch.tensor(u8), size=(5, 3)).numpy())
    with pytest.raises(TypeError, match="floating point"):
        interpolate(mt.tensor(ints), scale_factor=2, mode="bilinear")
    const = interpolate(mt.tensor(np.full((1, 1, 3, 3), 7.25)), size=(5, 4), mode="bilinear")
    assert np.all(const.array == 7.25)  # weights sum to one
    big = interpolate(mt.tensor(np.array([[[1e300, 1e300]]])), size=3, mode="linear")
    assert np.all(np.isfinite(big.array)) and np.allclose(big.array, 1e300)


# ==================================================================================================
# gradcheck and gradgradcheck
# ==================================================================================================
FNS = [
    lambda t: interpolate(t, scale_factor=1.7),
    lambda t: interpolate(t.transpose(2, 3), size=(3, 7), mode="nearest-exact"),
    lambda t: interpolate(t, scale_factor=(0.6, 2.3), mode="bilinear"),
    lambda t: interpolate(t.transpose(2, 3), size=(7, 2), mode="bilinear", align_corners=True),
    lambda t: interpolate(t[0], size=9, mode="linear"),
    lambda t: interpolate(t[0], scale_factor=0.7, mode="linear", align_corners=True, recompute_scale_factor=True),
    lambda t: interpolate(t[0], size=3),
]


@pytest.mark.parametrize("i", range(len(FNS)))
def test_gradcheck_and_gradgradcheck(i, rng):
    x = t64(rng.standard_normal((1, 2, 5, 4)))
    assert gradcheck(FNS[i], (x,))
    assert gradgradcheck(FNS[i], (x,))


@pytest.mark.parametrize("i", [0, 2, 3, 4])
def test_gradcheck_noncontiguous_leaf(i, rng):
    gradcheck_noncontiguous(FNS[i], [rng.standard_normal((1, 2, 5, 4))], gg=True)


# ==================================================================================================
# Hypothesis: shapes, sizes and scale factors
# ==================================================================================================
@given(st.sampled_from([m for m in MODES]), st.integers(1, 9), st.integers(1, 9), st.booleans(),
       st.floats(0.3, 3.5), st.floats(0.3, 3.5), st.integers(1, 12), st.integers(1, 12), st.sampled_from([None, True]),
       st.sampled_from([np.float32, np.float64]))
def test_interpolate_property_matches_torch(mode_rank, h, w, by_scale, sh, sw, oh, ow, recompute, dtype):
    mode, rank, acs = mode_rank
    shape = (2, 2, h) if rank == 3 else (2, 2, h, w)
    if by_scale:
        assume(int(h * sh) >= 1 and (rank == 3 or int(w * sw) >= 1))
        kw = {"scale_factor": sh if rank == 3 else (sh, sw), "recompute_scale_factor": recompute}
    else:
        kw = {"size": oh if rank == 3 else (oh, ow)}
    a = np.random.default_rng(h * 100 + w).standard_normal(shape).astype(dtype)
    for ac in acs:
        _compare(a, mode, ac, kw)


# ==================================================================================================
# unsupported modes and bad arguments
# ==================================================================================================
def test_unsupported_modes_name_what_is_supported():
    x4 = mt.randn(1, 2, 4, 4)
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        interpolate(x4, size=3, mode="lanczos")
    with pytest.raises(NotImplementedError, match="antialias=True is not supported.*'bicubic' \\(4-D\\)"):
        interpolate(x4, size=3, mode="lanczos", antialias=True)
    with pytest.raises(NotImplementedError, match="antialias=True is not supported.*supported"):
        interpolate(x4, size=2, mode="bilinear", antialias=True)
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear"):
        interpolate(x4, size=2, antialias=True)
    with pytest.raises(NotImplementedError, match=r"Only 3D, 4D and 5D input Tensors supported \(got 4D\).*\(got foo\)"):
        interpolate(x4, size=2, mode="foo")
    with pytest.raises(NotImplementedError, match=r"Only 3D, 4D and 5D input Tensors supported \(got 2D\)"):
        interpolate(mt.randn(2, 4), size=2)


def test_bad_combinations_raise_as_torch():
    x3, x4 = mt.randn(2, 3, 4), mt.randn(2, 3, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        interpolate(x4, size=(3, 3), scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        interpolate(x4)
    for mode in ["nearest", "nearest-exact", "area"]:
        with pytest.raises(ValueError, match="align_corners option can only be set with the interpolating modes"):
            interpolate(x4, size=3, mode=mode, align_corners=False)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        interpolate(x4, size=3, mode="linear")
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D input"):
        interpolate(x3, size=3, mode="bilinear")
    with pytest.raises(ValueError, match=r"same number of spatial dimensions, but got input with spatial dimensions "
                                         r"of \[4\] and output size of \(3, 3\)"):
        interpolate(x3, size=(3, 3))
    with pytest.raises(ValueError, match=r"Input and scale_factor must have the same number of spatial dimensions"):
        interpolate(x4, scale_factor=(2.0,))
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful with an explicit size"):
        interpolate(x4, size=3, recompute_scale_factor=True)
    with pytest.raises(TypeError, match="expected size to be one of int"):
        interpolate(x3, size=(3.0,))
    with pytest.raises(TypeError, match="scale_factor"):
        interpolate(x4, scale_factor="2")
    with pytest.raises(TypeError, match="must be a Tensor"):
        interpolate(np.zeros((1, 1, 3)), size=2)


def test_empty_sizes_raise_as_torch():
    with pytest.raises(RuntimeError, match=r"Input and output sizes should be greater than 0, but got input \(H: 4, "
                                           r"W: 4\) output \(H: 0, W: 0\)"):
        interpolate(mt.randn(2, 2, 4, 4), scale_factor=0.1)
    with pytest.raises(RuntimeError, match=r"but got input \(W: 0\) and output \(W: 0\)"):
        interpolate(mt.randn(2, 2, 0), scale_factor=2, mode="linear")
    with pytest.raises(RuntimeError, match=r"Non-empty 4D data tensor expected but got a tensor with sizes \[2, 0, 4, 4\]"):
        interpolate(mt.randn(2, 0, 4, 4), scale_factor=2, mode="bilinear")
    with pytest.raises(RuntimeError, match="output"):
        interpolate(mt.randn(2, 2, 4, 4), size=-1)


def test_1d_nearest_gradient_follows_the_forward_where_pytorch_does_not():
    # scale_factor=1.1 on 5 cells: the forward reads [0, 0, 1, 2, 3] (PyTorch's too), so dx = [dy0 + dy1,
    # dy2, dy3, dy4, 0]; PyTorch's backward copies dy instead (its gradcheck fails). The math decides.
    dy = np.array([1.0, 2.0, 4.0, 8.0, 16.0]).reshape(1, 1, 5)
    x = t64(np.zeros((1, 1, 5)))
    interpolate(x, scale_factor=1.1).backward(mt.tensor(dy))
    assert x.grad.array.ravel().tolist() == [3.0, 4.0, 8.0, 16.0, 0.0]
    assert gradcheck(lambda t: interpolate(t, scale_factor=1.1), (t64(np.random.default_rng(0).standard_normal((1, 1, 5))),))
    xt = torch.zeros((1, 1, 5), dtype=torch.float64, requires_grad=True)
    _torch_interpolate(xt, scale_factor=1.1).backward(torch.tensor(dy))
    assert xt.grad.numpy().ravel().tolist() == dy.ravel().tolist()  # PyTorch 2.x: the copy (a wrong gradient)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_nearest_copies_edge_values_bitwise_and_linear_follows_pytorch_at_infinities(dtype):
    # nearest only copies values: inf, NaN, -0, the largest and smallest numbers come out bitwise
    # (output i takes input floor(i · in / out), PyTorch's rule); 9 -> 18 repeats each value twice
    fi = np.finfo(dtype)
    vals = np.array([[[1.0, np.inf, -0.0, np.nan, fi.max, -np.inf, fi.smallest_subnormal, -fi.max, 2.0]]], dtype)
    y = interpolate(mt.tensor(vals), size=18, mode="nearest").numpy()
    np.testing.assert_array_equal(y.view(np.uint8), np.repeat(vals, 2, axis=-1).view(np.uint8))
    # linear with an infinite neighbour: a weight of 0 times inf is NaN, in PyTorch as here (even at
    # an output that sits exactly on a finite sample); the finite part of the row is unaffected
    x = np.array([[[1.0, np.inf, 3.0, 4.0, 5.0]]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ours = interpolate(mt.tensor(x), size=9, mode="linear", align_corners=True).numpy()
    theirs = torch.nn.functional.interpolate(torch.tensor(x), size=9, mode="linear", align_corners=True).numpy()
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_allclose(ours[0, 0, 4:], [3.0, 3.5, 4.0, 4.5, 5.0])   # by hand: midpoints of 3, 4, 5
