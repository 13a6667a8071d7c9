"""Pooling: max/avg/adaptive pools — gradcheck (to second order), PyTorch comparison (float64/float32,
non-contiguous inputs, indices, ties, NaN), Hypothesis over geometry, bad input."""

import numpy as np
import pytest
import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.ops.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)

F = torch.nn.functional


# ==================================================================================================
# Strategies for this file: a valid pooling geometry for one axis
# ==================================================================================================
MAX2D = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": (3, 2), "stride": (2, 3), "padding": (1, 1), "dilation": (2, 1), "ceil_mode": True},
    {"kernel_size": 3, "stride": 1, "padding": 1, "dilation": 2},
    {"kernel_size": (2, 3), "stride": 2, "ceil_mode": True},
]
AVG2D = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": (3, 2), "stride": (2, 3), "padding": (1, 1), "ceil_mode": True, "count_include_pad": False},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "divisor_override": 4},
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kw", MAX2D)
def test_max_pool2d_matches_torch_with_indices(kw, dtype, rng, device):
    a = rng.standard_normal((2, 3, 7, 8)).astype(dtype)
    compare_with_torch(lambda x: max_pool2d(x, return_indices=True, **kw),
                       lambda x: F.max_pool2d(x, return_indices=True, **kw), [a], device=device)
    compare_with_torch(lambda x: max_pool2d(x[0], **kw), lambda x: F.max_pool2d(x[0], **kw), [a])  # unbatched


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kw", AVG2D)
def test_avg_pool2d_matches_torch(kw, dtype, rng, device):
    a = rng.standard_normal((2, 3, 7, 8)).astype(dtype)
    compare_with_torch(lambda x: avg_pool2d(x, **kw), lambda x: F.avg_pool2d(x, **kw), [a], device=device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pool1d_matches_torch(dtype, rng):
    a = rng.standard_normal((2, 3, 11)).astype(dtype)
    compare_with_torch(lambda x: max_pool1d(x, 3, 2, 1, 2, True, True), lambda x: F.max_pool1d(x, 3, 2, 1, 2, True, True),
                       [a])
    compare_with_torch(lambda x: avg_pool1d(x, 4, 3, 2, True, False), lambda x: F.avg_pool1d(x, 4, 3, 2, True, False), [a])
    compare_with_torch(lambda x: max_pool1d(x[0], 2), lambda x: F.max_pool1d(x[0], 2), [a])
    compare_with_torch(lambda x: adaptive_avg_pool1d(x, 4), lambda x: F.adaptive_avg_pool1d(x, 4), [a])
    compare_with_torch(lambda x: adaptive_max_pool1d(x, 5, True), lambda x: F.adaptive_max_pool1d(x, 5, True), [a])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("out", [(3, 4), 1, (5, None), (7, 8), (10, 11), (2, 3)])
def test_adaptive_pool2d_matches_torch(out, dtype, rng, device):
    a = rng.standard_normal((2, 3, 7, 8)).astype(dtype)
    compare_with_torch(lambda x: adaptive_avg_pool2d(x, out), lambda x: F.adaptive_avg_pool2d(x, out), [a], device=device)
    compare_with_torch(lambda x: adaptive_max_pool2d(x, out, True), lambda x: F.adaptive_max_pool2d(x, out, True), [a],
                       device=device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pools_on_non_contiguous_input_match_torch(dtype, rng):
    a = rng.standard_normal((2, 8, 3, 7)).astype(dtype)
    for ours, theirs in [(lambda x: max_pool2d(x, 3, 2, 1, return_indices=True), lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True)),
                         (lambda x: avg_pool2d(x, 2, 1, 1), lambda x: F.avg_pool2d(x, 2, 1, 1)),
                         (lambda x: adaptive_avg_pool2d(x, (3, 2)), lambda x: F.adaptive_avg_pool2d(x, (3, 2))),
                         (lambda x: adaptive_max_pool2d(x, (3, 2)), lambda x: F.adaptive_max_pool2d(x, (3, 2)))]:
        compare_with_torch(lambda x, f=ours: f(x.transpose(1, 2)[:, :, ::2]),
                           lambda x, f=theirs: f(x.transpose(1, 2)[:, :, ::2]), [a])


def test_max_pool_ties_and_nan_pick_the_element_pytorch_picks():
    # ties: the first maximum in row-major window order; NaN: the last NaN of the window
    rows = [[1.0, 3.0, 3.0, 2.0], [3.0, 3.0, 1.0, 1.0], [1.0, np.nan, 2.0, np.nan], [5.0, 5.0, 5.0, 5.0]]
    a = np.array(rows).reshape(1, 1, 4, 4)
    for fn, tfn in [(lambda x: max_pool2d(x, 2, 1, return_indices=True), lambda x: F.max_pool2d(x, 2, 1, return_indices=True)),
                    (lambda x: max_pool2d(x, 3, 1, 1, return_indices=True), lambda x: F.max_pool2d(x, 3, 1, 1, return_indices=True)),
                    (lambda x: adaptive_max_pool2d(x, 3, True), lambda x: F.adaptive_max_pool2d(x, 3, True))]:
        (_y, i), (_yt, it) = compare_with_torch(fn, tfn, [a])
        assert np.array_equal(i, it)
    x = mt.tensor(np.array([[[2.0, 2.0, 1.0]]]), requires_grad=True)
    max_pool1d(x, 3).sum().backward()
    assert x.grad.array.tolist() == [[[1.0, 0.0, 0.0]]]


def test_max_pool_integer_input_and_float16():
    a = np.arange(16).reshape(1, 1, 4, 4)[:, :, ::-1].copy()
    y, i = max_pool2d(mt.tensor(a), 2, return_indices=True)
    yt, _it = F.max_pool2d(torch.tensor(a), 2, return_indices=True)
    assert y.dtype == np.int64 and i.dtype == np.int64 and np.array_equal(y.array, yt.numpy())
    h = avg_pool2d(mt.tensor(np.ones((1, 1, 4, 4), np.float16)), 2)
    assert h.dtype == np.float16 and np.all(h.array == 1)
    inf = max_pool2d(mt.tensor(np.full((1, 1, 2, 2), -np.inf)), 2)
    assert inf.item() == -np.inf


POOL_FNS = [
    lambda t: max_pool2d(t, 2, 1, 1),
    lambda t: max_pool2d(t.transpose(2, 3), (2, 3), 2, 1, ceil_mode=True),
    lambda t: avg_pool2d(t, 3, 2, 1, True, False),
    lambda t: avg_pool2d(t.transpose(2, 3), 2, 1, 1, divisor_override=3),
    lambda t: adaptive_avg_pool2d(t, (3, 2)),
    lambda t: adaptive_max_pool2d(t.transpose(2, 3), (3, 3)),
    lambda t: max_pool1d(t[0], 2, 1, 1),
    lambda t: avg_pool1d(t[0], 3, 2, 1, True),
]


@pytest.mark.parametrize("i", range(len(POOL_FNS)))
def test_pool_gradcheck_and_gradgradcheck(i, rng):
    x = t64(rng.standard_normal((1, 2, 5, 4)))
    assert gradcheck(POOL_FNS[i], (x,))
    assert gradgradcheck(POOL_FNS[i], (x,))


@given(S.pool_axis(), S.pool_axis(), st.booleans(), st.booleans())
def test_max_pool2d_property_matches_torch(ax_h, ax_w, ceil, as_1d):
    (h, kh, sh, ph, dh), (w, kw, sw, pw, dw) = ax_h, ax_w
    a = np.random.default_rng(0).standard_normal((1, 2, h, w))
    if as_1d:
        grad = bool(np.isfinite(F.max_pool1d(torch.tensor(a[0]), kw, sw, pw, dw, ceil).numpy()).all())
        compare_with_torch(lambda x: max_pool1d(x[0], kw, sw, pw, dw, ceil, True),
                           lambda x: F.max_pool1d(x[0], kw, sw, pw, dw, ceil, True), [a], requires_grad=[grad])
    else:
        kw_ = {"kernel_size": (kh, kw), "stride": (sh, sw), "padding": (ph, pw), "dilation": (dh, dw), "ceil_mode": ceil,
                   "return_indices": True}
        # a window lying wholly in the padding: PyTorch's gradient is wrong there (see the test below)
        grad = bool(np.isfinite(F.max_pool2d(torch.tensor(a), **kw_)[0].numpy()).all())
        compare_with_torch(lambda x: max_pool2d(x, **kw_), lambda x: F.max_pool2d(x, **kw_), [a], requires_grad=[grad])


def test_max_pool_window_wholly_in_padding_gives_minus_inf_and_no_gradient():
    # k=2, dilation=2, padding=1 on a length-1 axis: the one window reads positions -1 and 1, both
    # padding. The output is the constant -inf, so the gradient is 0; PyTorch sends it to flat index
    # 1 (the next channel's element), which finite differences contradict.
    a = np.random.default_rng(0).standard_normal((1, 2, 1, 1))
    kw = {"kernel_size": (1, 2), "stride": 1, "padding": (0, 1), "dilation": (1, 2), "return_indices": True}
    (y, i), (_yt, it) = compare_with_torch(lambda x: max_pool2d(x, **kw), lambda x: F.max_pool2d(x, **kw), [a],
                                          requires_grad=[False])
    assert np.all(y == -np.inf) and np.array_equal(i, it)
    x = t64(a)
    assert gradcheck(lambda t: max_pool2d(t, **kw)[0].clamp(min=-1.0), (x,))
    max_pool2d(x, **kw)[0].sum().backward()
    assert np.all(x.grad.array == 0)


@given(S.pool_axis(dilate=False), S.pool_axis(dilate=False), st.booleans(), st.booleans(),
       st.one_of(st.none(), st.integers(1, 5)))
def test_avg_pool2d_property_matches_torch(ax_h, ax_w, ceil, cip, div):
    (h, kh, sh, ph, _), (w, kw, sw, pw, _) = ax_h, ax_w
    a = np.random.default_rng(0).standard_normal((2, 1, h, w))
    kw_ = {"kernel_size": (kh, kw), "stride": (sh, sw), "padding": (ph, pw), "ceil_mode": ceil, "count_include_pad": cip,
               "divisor_override": div}
    compare_with_torch(lambda x: avg_pool2d(x, **kw_), lambda x: F.avg_pool2d(x, **kw_), [a])


@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9), st.integers(1, 9))
def test_adaptive_pools_property_match_torch(h, w, oh, ow):
    a = np.random.default_rng(0).standard_normal((1, 2, h, w))
    compare_with_torch(lambda x: adaptive_avg_pool2d(x, (oh, ow)), lambda x: F.adaptive_avg_pool2d(x, (oh, ow)), [a])
    compare_with_torch(lambda x: adaptive_max_pool2d(x, (oh, ow), True),
                       lambda x: F.adaptive_max_pool2d(x, (oh, ow), True), [a])


def test_pool_bad_input():
    x = mt.randn(2, 5, 8, 8)
    with pytest.raises(RuntimeError, match="pad should be at most half of kernel size, but got pad=2, kernel_size=2"):
        max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="pad should be at most half of kernel size, but got pad=2, kernel_size=3"):
        avg_pool2d(x, 3, padding=2)
    with pytest.raises(RuntimeError, match=r"given input size \[1, 1\], calculated output size \[0, 0\]. Output size is too small"):
        max_pool2d(x[:, :, :1, :1], 2)
    with pytest.raises(RuntimeError, match=r"expected a 3D \(unbatched\) or 4D \(batched\) input, but got input of size: \[8, 8\]"):
        max_pool2d(x[0, 0], 2)
    with pytest.raises(RuntimeError, match=r"expected a 2D \(unbatched\) or 3D \(batched\) input"):
        avg_pool1d(x, 2)
    with pytest.raises(RuntimeError, match="greater than zero"):
        max_pool2d(x, 2, stride=0)
    with pytest.raises(TypeError, match="floating point"):
        avg_pool2d(mt.tensor(np.ones((1, 1, 4, 4), np.int64)), 2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match=r"non-zero sizes .* size: \[2, 5, 0, 8\]"):
        adaptive_avg_pool2d(x[:, :, :0], 2)
    with pytest.raises(RuntimeError, match="output_size must have 2 elements"):
        adaptive_max_pool2d(x, (1, 2, 3))


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("i", range(len(POOL_FNS)))
def test_pool_gradcheck_noncontiguous_leaf(i, rng):
    gradcheck_noncontiguous(POOL_FNS[i], [rng.standard_normal((1, 2, 5, 4))], gg=True)  # distinct values: no ties


@pytest.mark.parametrize("fn", [adaptive_avg_pool1d, adaptive_max_pool1d], ids=["adaptive_avg_pool1d", "adaptive_max_pool1d"])
def test_adaptive_pool1d_gradcheck_noncontiguous_leaf(fn, rng):
    gradcheck_noncontiguous(lambda t: fn(t, 3), [rng.standard_normal((2, 3, 7))], gg=True)


@pytest.mark.parametrize("name,call", [
    ("max_pool2d", lambda F, x: F.max_pool2d(x, 2)),
    ("max_pool2d_indices", lambda F, x: F.max_pool2d(x, 2, return_indices=True)[0]),
    ("adaptive_max_pool2d", lambda F, x: F.adaptive_max_pool2d(x, (3, 2))),
    ("max_pool1d", lambda F, x: F.max_pool1d(x[:, :, 0], 2, padding=1)),
    ("avg_pool2d", lambda F, x: F.avg_pool2d(x, 2, ceil_mode=True)),
])
def test_pools_of_an_empty_batch_are_empty_as_pytorch(name, call):
    # N = 0: an empty output of PyTorch's shape, and an empty gradient (a reshape with -1 once failed)
    import minitorch_ln.nn.functional as MF

    x = mt.zeros(0, 3, 5, 4, requires_grad=True)
    y = call(MF, x)
    assert tuple(y.shape) == tuple(call(torch.nn.functional, torch.zeros(0, 3, 5, 4)).shape)
    y.sum().backward()
    assert x.grad.shape == (0, 3, 5, 4)


@given(n=st.integers(1, 2), c=st.integers(1, 2), h=st.integers(1, 7), w=st.integers(1, 7),
       k=st.tuples(st.integers(1, 3), st.integers(1, 3)), s=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       d=st.tuples(st.integers(1, 2), st.integers(1, 2)), extra=st.tuples(st.integers(0, 1), st.integers(0, 1)),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16))
def test_compiled_window_argmax_equals_the_numpy_form(n, c, h, w, k, s, d, extra, dtype, seed):
    # the compiled pass picks every window's maximum as the NumPy argmax form does (and as PyTorch):
    # first maximum, last NaN, the first in-bounds cell when all are -inf; with asymmetric padding
    from minitorch_ln import kernels
    from minitorch_ln.kernels import im2col as K

    pads = ((k[0] // 2, k[0] // 2 + extra[0]), (k[1] // 2, k[1] // 2 + extra[1]))
    if h + sum(pads[0]) < d[0] * (k[0] - 1) + 1 or w + sum(pads[1]) < d[1] * (k[1] - 1) + 1:
        return
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w))
    u = rng.random(x.shape)
    x[u < 0.1], x[(u > 0.1) & (u < 0.3)], x[(u > 0.3) & (u < 0.4)] = np.nan, -np.inf, 1.0  # NaNs, -inf, ties
    x = x.astype(dtype)
    before = kernels.get_cpu_kernels()
    try:
        kernels.set_cpu_kernels("numpy")
        want = K.window_argmax(x, k, s, pads, d)
        kernels.set_cpu_kernels("numba")
        got = K.window_argmax(x, k, s, pads, d)
    finally:
        kernels.set_cpu_kernels(before)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
