"""Convolutions and padding: conv1d/conv2d, conv_transpose1d/2d, pad — gradcheck (to second order),
PyTorch comparison (float64/float32, non-contiguous inputs), Hypothesis over geometry, bad input."""

import numpy as np
import pytest
import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.ops.convolution import (
    ConvDtypeError,
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
)
from minitorch_ln.ops.padding import pad

F = torch.nn.functional
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")


# ==================================================================================================
# Strategies for this file: a valid convolution geometry
# ==================================================================================================
# ==================================================================================================
# conv2d / conv1d
# ==================================================================================================
# (input shape, weight shape, kwargs)
CONV2D = [
    ((2, 3, 7, 6), (4, 3, 3, 3), {}),
    ((2, 3, 7, 6), (4, 3, 3, 2), {"stride": 2, "padding": 1}),
    ((1, 4, 8, 7), (6, 2, 3, 3), {"stride": (2, 1), "padding": (1, 2), "dilation": (2, 1), "groups": 2}),
    ((2, 4, 6, 6), (4, 1, 3, 3), {"padding": 1, "groups": 4}),  # depthwise
    ((2, 4, 6, 6), (8, 1, 2, 2), {"groups": 4, "stride": 2}),  # depthwise multiplier 2
    ((1, 2, 6, 5), (3, 2, 4, 2), {"padding": "same"}),  # even kernels: asymmetric split
    ((1, 2, 6, 5), (3, 2, 3, 2), {"padding": "same", "dilation": (2, 3)}),
    ((1, 2, 6, 5), (3, 2, 3, 2), {"padding": "valid"}),
    ((3, 6, 5), (2, 3, 2, 2), {"padding": 1}),  # unbatched (C, H, W)
    ((0, 3, 5, 5), (2, 3, 3, 3), {}),  # empty batch
]
CONV1D = [
    ((2, 3, 9), (4, 3, 3), {}),
    ((2, 4, 9), (6, 2, 2), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}),
    ((2, 3, 8), (2, 3, 4), {"padding": "same"}),
    ((3, 8), (2, 3, 3), {"padding": 2}),  # unbatched
]


def _arrays(rng, x_shape, w_shape, dtype, bias=True):
    arrs = [rng.standard_normal(x_shape).astype(dtype), rng.standard_normal(w_shape).astype(dtype)]
    return arrs + ([rng.standard_normal(w_shape[0]).astype(dtype)] if bias else [])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("x_shape,w_shape,kw", CONV2D)
def test_conv2d_matches_torch(x_shape, w_shape, kw, dtype, rng, device):
    compare_with_torch(lambda x, w, b: conv2d(x, w, b, **kw), lambda x, w, b: F.conv2d(x, w, b, **kw),
                       _arrays(rng, x_shape, w_shape, dtype), device=device)
    compare_with_torch(lambda x, w: conv2d(x, w, **kw), lambda x, w: F.conv2d(x, w, **kw),
                       _arrays(rng, x_shape, w_shape, dtype, bias=False), device=device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("x_shape,w_shape,kw", CONV1D)
def test_conv1d_matches_torch(x_shape, w_shape, kw, dtype, rng, device):
    compare_with_torch(lambda x, w, b: conv1d(x, w, b, **kw), lambda x, w, b: F.conv1d(x, w, b, **kw),
                       _arrays(rng, x_shape, w_shape, dtype), device=device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_conv2d_non_contiguous_inputs_match_torch(dtype, rng):
    x = rng.standard_normal((2, 3, 6, 7)).astype(dtype)  # used as (2, 3, 7, 6) through a transpose
    w = rng.standard_normal((3, 4, 3, 2)).astype(dtype)  # used as (4, 3, 3, 2) through a transpose
    kw = {"stride": (2, 1), "padding": 1, "dilation": (1, 2)}
    compare_with_torch(lambda x, w: conv2d(x.transpose(2, 3), w.transpose(0, 1), **kw),
                       lambda x, w: F.conv2d(x.transpose(2, 3), w.transpose(0, 1), **kw), [x, w])
    compare_with_torch(lambda x, w: conv2d(x[:, ::2], w.transpose(0, 1)[:, ::2], **kw),
                       lambda x, w: F.conv2d(x[:, ::2], w.transpose(0, 1)[:, ::2], **kw), [x, w])


GRAD_CASES = [
    ((1, 2, 5, 5), (2, 2, 2, 3), {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}),
    ((2, 4, 4, 4), (2, 2, 3, 2), {"groups": 2, "padding": "same"}),
    ((2, 4, 4), (2, 2, 2, 2), {"padding": 1}),  # unbatched
]


@pytest.mark.parametrize("x_shape,w_shape,kw", GRAD_CASES)
def test_conv2d_gradcheck_and_gradgradcheck(x_shape, w_shape, kw, rng):
    x, w, b = (t64(a) for a in _arrays(rng, x_shape, w_shape, np.float64))
    fn = lambda x, w, b: conv2d(x, w, b, **kw)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_conv_gradcheck_non_contiguous_and_1d(rng):
    x = t64(rng.standard_normal((1, 5, 2, 4)))  # used as (1, 2, 5, 4)
    w = t64(rng.standard_normal((2, 2, 2, 2)))
    assert gradcheck(lambda x, w: conv2d(x.transpose(1, 2), w.transpose(2, 3), stride=2, padding=1), (x, w))
    x1, w1, b1 = (t64(a) for a in _arrays(rng, (2, 2, 6), (4, 1, 3), np.float64))
    fn = lambda x, w, b: conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2)
    assert gradcheck(fn, (x1, w1, b1))
    assert gradgradcheck(fn, (x1, w1, b1))


def test_conv2d_third_order_through_create_graph(rng):
    # d/dx of (d/dw <conv(x, w), u>) · v: the backward's own backward is differentiable again
    x, w = t64(rng.standard_normal((1, 2, 4, 4))), t64(rng.standard_normal((3, 2, 2, 2)))
    u = mt.tensor(rng.standard_normal((1, 3, 3, 3)))

    def fn(x, w):
        (dw,) = mt.autograd.grad((conv2d(x, w) * u).sum(), [w], create_graph=True)
        return (dw * dw).sum()

    assert gradgradcheck(fn, (x, w))


@given(S.conv_geometry())
def test_conv2d_property_matches_torch_over_geometry(g):
    rng = np.random.default_rng(0)
    compare_with_torch(lambda x, w, b: conv2d(x, w, b, **g["kw"]), lambda x, w, b: F.conv2d(x, w, b, **g["kw"]),
                       _arrays(rng, g["x"], g["w"], np.float64))


@given(S.conv_geometry(nd=1))
def test_conv1d_property_matches_torch_over_geometry(g):
    rng = np.random.default_rng(0)
    compare_with_torch(lambda x, w: conv1d(x, w, **g["kw"]), lambda x, w: F.conv1d(x, w, **g["kw"]),
                       _arrays(rng, g["x"], g["w"], np.float32, bias=False))


def test_conv2d_edge_values_propagate_like_the_math():
    x = np.zeros((1, 1, 3, 3))
    x[0, 0, 0, 0], x[0, 0, 2, 2] = np.nan, np.inf
    y = conv2d(mt.tensor(x), mt.tensor(np.ones((1, 1, 2, 2)))).array[0, 0]
    assert np.isnan(y[0, 0]) and np.isinf(y[1, 1]) and y[0, 1] == 0 and y[1, 0] == 0
    big = conv2d(mt.tensor(np.full((1, 1, 2, 2), 1e300)), mt.tensor(np.full((1, 1, 2, 2), 1e-300)))
    assert np.isclose(big.item(), 4.0)
    y16 = conv2d(mt.tensor(np.ones((1, 2, 3, 3), np.float16)), mt.tensor(np.ones((1, 2, 2, 2), np.float16)))
    assert y16.dtype == np.float16 and np.all(y16.array == 8)


def test_conv2d_bad_input_names_expected_and_actual():
    x, w = mt.randn(2, 5, 8, 8), mt.randn(4, 3, 3, 3)
    with pytest.raises(RuntimeError, match=r"weight of size \[4, 3, 3, 3\], expected input\[2, 5, 8, 8\] to have 3 "
                                           r"channels, but got 5 channels"):
        conv2d(x, w)
    with pytest.raises(RuntimeError, match=r"expected bias to be 1-dimensional with 4 elements, but got bias of size \[5\]"):
        conv2d(x[:, :3], w, mt.randn(5))
    with pytest.raises(RuntimeError, match=r"padded input size per channel: \(2 x 2\). Kernel size: \(3 x 3\)"):
        conv2d(x[:, :3, :2, :2], w)
    with pytest.raises(RuntimeError, match=r"padded input size per channel: \(4 x 4\). Kernel size: \(5 x 5\)"):
        conv2d(x[:, :3, :4, :4], w, dilation=2)
    with pytest.raises(RuntimeError, match=r"expected weight to be divisible by 2 at dimension 0, but got weight of size \[3"):
        conv2d(x[:, :4], mt.randn(3, 2, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input "
                                           r"of size: \[8, 8\]"):
        conv2d(mt.randn(8, 8), w)
    with pytest.raises(RuntimeError, match="not supported for strided"):
        conv2d(x[:, :3], w, padding="same", stride=2)
    with pytest.raises(RuntimeError, match="Invalid padding string: 'foo'"):
        conv2d(x[:, :3], w, padding="foo")
    with pytest.raises(RuntimeError, match="non-positive stride"):
        conv2d(x[:, :3], w, stride=0)
    with pytest.raises(RuntimeError, match="negative padding"):
        conv2d(x[:, :3], w, padding=-1)
    with pytest.raises(RuntimeError, match=r"list of 2 values .* stride=\[1, 2, 3\]"):
        conv2d(x[:, :3], w, stride=(1, 2, 3))
    with pytest.raises(ConvDtypeError, match=r"input type \(float32\) and weight type \(float64\)"):
        conv2d(x[:, :3], w.double())
    with pytest.raises(TypeError, match="floating point"):
        conv2d(mt.tensor(np.ones((1, 3, 4, 4), np.int64)), mt.tensor(np.ones((1, 3, 2, 2), np.int64)))
    with pytest.raises(RuntimeError, match=r"Expected 2D \(unbatched\) or 3D \(batched\) input to conv1d"):
        conv1d(x, mt.randn(2, 5, 3))
    with pytest.raises(RuntimeError, match=r"expected weight to be 3-dimensional .* weight of size \[4, 3, 3, 3\]"):
        conv1d(mt.randn(2, 3, 8), w)


# ==================================================================================================
# conv_transpose2d / conv_transpose1d
# ==================================================================================================
CONVT2D = [
    ((2, 4, 4, 3), (4, 3, 3, 3), {}),
    ((2, 4, 4, 3), (4, 3, 3, 2), {"stride": 2, "padding": 1, "output_padding": 1}),
    ((1, 4, 3, 4), (4, 2, 2, 3), {"stride": (2, 3), "padding": (0, 1), "output_padding": (1, 0), "groups": 2, "dilation": (1, 2)}),
    ((4, 3, 3), (4, 2, 3, 3), {"stride": 2}),  # unbatched
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("x_shape,w_shape,kw", CONVT2D)
def test_conv_transpose2d_matches_torch(x_shape, w_shape, kw, dtype, rng, device):
    g = kw.get("groups", 1)
    arrs = _arrays(rng, x_shape, w_shape, dtype, bias=False) + [rng.standard_normal(w_shape[1] * g).astype(dtype)]
    compare_with_torch(lambda x, w, b: conv_transpose2d(x, w, b, **kw), lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
                       arrs, device=device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_conv_transpose1d_matches_torch_and_gradchecks(dtype, rng):
    kw = {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2, "dilation": 2}
    arrs = _arrays(rng, (2, 4, 5), (4, 3, 3), dtype, bias=False) + [rng.standard_normal(6).astype(dtype)]
    compare_with_torch(lambda x, w, b: conv_transpose1d(x, w, b, **kw), lambda x, w, b: F.conv_transpose1d(x, w, b, **kw),
                       arrs)
    if dtype == np.float64:
        small = [t64(a[:1]) if i == 0 else t64(a) for i, a in enumerate(arrs)]
        fn = lambda x, w, b: conv_transpose1d(x, w, b, **kw)
        assert gradcheck(fn, small)
        assert gradgradcheck(fn, small)


def test_conv_transpose2d_gradcheck_and_gradgradcheck_non_contiguous(rng):
    x = t64(rng.standard_normal((1, 3, 2, 4)))  # used as (1, 2, 3, 4)
    w = t64(rng.standard_normal((2, 2, 2, 3)))
    fn = lambda x, w: conv_transpose2d(x.transpose(1, 2), w, stride=(2, 1), padding=(1, 0), output_padding=(1, 0))
    assert gradcheck(fn, (x, w))
    assert gradgradcheck(fn, (x, w))


def test_conv_transpose_is_the_adjoint_of_conv(rng):
    # <conv(x, w), y> == <x, conv_transpose(y, w)> for every geometry with matching sizes
    x, w = mt.tensor(rng.standard_normal((2, 4, 7, 6))), mt.tensor(rng.standard_normal((6, 2, 3, 2)))
    kw = {"stride": 2, "padding": 1, "dilation": (1, 2), "groups": 2}
    cy = conv2d(x, w, **kw)
    y = mt.tensor(rng.standard_normal(cy.shape))
    xt = conv_transpose2d(y, w, output_padding=(0, 1), **kw)
    assert xt.shape == x.shape
    np.testing.assert_allclose((cy * y).sum().item(), (x * xt).sum().item(), rtol=1e-12)


def test_conv_transpose2d_bad_input():
    x, w = mt.randn(2, 3, 8, 8), mt.randn(4, 3, 3, 3)
    with pytest.raises(RuntimeError, match=r"weight of size \[4, 3, 3, 3\], expected input\[2, 3, 8, 8\] to have 4 "
                                           "channels, but got 3"):
        conv_transpose2d(x, w)
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or dilation"):
        conv_transpose2d(mt.randn(2, 4, 8, 8), w, output_padding=1)
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 3 elements, but got bias of size"):
        conv_transpose2d(mt.randn(2, 4, 8, 8), w, mt.randn(4))
    with pytest.raises(RuntimeError, match="Output size is too small"):
        conv_transpose2d(mt.randn(1, 4, 1, 1), mt.randn(4, 1, 1, 1), padding=1)


# ==================================================================================================
# pad
# ==================================================================================================
PADS = [
    ("constant", (2, 1), (2, 3, 4)),
    ("constant", (1, -1, 0, 2, 1, 0), (2, 3, 4)),  # negative pads crop
    ("reflect", (2, 3), (2, 5)),
    ("reflect", (1, 3, 2, 0), (2, 3, 4, 5)),
    ("replicate", (3, 1, 0, 4), (3, 2, 3)),
    ("replicate", (1, 2, 0, 1, 2, 1), (1, 2, 2, 3, 2)),
    ("circular", (2, 4, 1, 3), (1, 2, 4, 5)),
    ("circular", (1, 2), (2, 4)),
    # negative pads crop first; circular then wraps within what is left (PyTorch's order)
    ("circular", (-1, 1), (1, 1, 4)),
    ("circular", (2, -1, -2, 1), (1, 2, 4, 5)),
    ("circular", (-1, 2, 1, -3, 0, -1), (1, 1, 4, 5, 3)),
    ("reflect", (-1, 2, 1, -2), (2, 3, 4, 5)),
    ("replicate", (3, -2), (2, 3, 4)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode,p,shape", PADS)
def test_pad_matches_torch(mode, p, shape, dtype, rng, device):
    a = rng.standard_normal(shape).astype(dtype)
    compare_with_torch(lambda x: pad(x, p, mode=mode), lambda x: F.pad(x, p, mode=mode), [a], device=device)


@pytest.mark.parametrize("mode,p,shape", PADS)
def test_pad_gradcheck_gradgradcheck_non_contiguous(mode, p, shape, rng):
    x = t64(rng.standard_normal(shape[::-1]))
    fn = lambda t: pad(t.permute(*reversed(range(t.ndim))), p, mode=mode) * 1.5
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_pad_circular_negative_pad_crops_then_wraps():
    # [0, 1, 2, 3] with (-1, 1): crop the first element -> [1, 2, 3], then wrap one element of that
    # remainder onto the right -> [1, 2, 3, 1] (PyTorch's); wrapping the uncropped input gave [1, 2, 3, 0].
    x = mt.arange(4.0).reshape(1, 1, 4)
    assert pad(x, (-1, 1), mode="circular").array.ravel().tolist() == [1.0, 2.0, 3.0, 1.0]
    assert pad(x, (1, -1), mode="circular").array.ravel().tolist() == [2.0, 0.0, 1.0, 2.0]
    # more pad than the cropped remainder would wrap more than once (PyTorch: an overlap error or garbage)
    with pytest.raises(RuntimeError, match=r"at most .* \(after cropping the negative pads of \(-3, 2\)"):
        pad(x, (-3, 2), mode="circular")
    with pytest.raises(RuntimeError, match="after cropping"):
        pad(x, (-4, 4), mode="circular")


def test_pad_constant_value_and_dtype():
    y = pad(mt.tensor(np.arange(3, dtype=np.int64)), (1, 2), value=-7)
    assert y.dtype == np.int64 and y.array.tolist() == [-7, 0, 1, 2, -7, -7]
    z = pad(mt.tensor(np.ones((2, 2), np.float32)), (1, 1), value=float("inf"))
    assert z.dtype == np.float32 and np.isinf(z.array[:, 0]).all()


@given(st.lists(st.integers(-1, 3), min_size=2, max_size=4).filter(lambda p: len(p) % 2 == 0),
       st.sampled_from(["constant", "reflect", "replicate", "circular"]))
def test_pad_property_matches_torch(p, mode):
    if mode != "constant":
        p = [max(v, 0) for v in p]
    a = np.random.default_rng(0).standard_normal((2, 4, 5))
    compare_with_torch(lambda x: pad(x, tuple(p), mode=mode), lambda x: F.pad(x, tuple(p), mode=mode), [a])


def test_pad_bad_input():
    x = mt.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="divisible by 2"):
        pad(x, (1,))
    with pytest.raises(RuntimeError, match="padding length 8 and input of dimension 3"):
        pad(x, (1,) * 8)
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        pad(x, (1, 1), mode="foo")
    with pytest.raises(RuntimeError, match=r"padding \(4, 1\) at dimension 2 of input \[2, 3, 4\]"):
        pad(x, (4, 1), mode="reflect")
    with pytest.raises(RuntimeError, match=r"at most .* padding \(5, 0\)"):
        pad(x, (5, 0), mode="circular")
    with pytest.raises(NotImplementedError, match="Padding size 6 is not supported for 3D input"):
        pad(x, (1,) * 6, mode="replicate")
    with pytest.raises(RuntimeError, match="doesn't take in value"):
        pad(x, (1, 1), mode="reflect", value=1.0)
    with pytest.raises(RuntimeError, match="would be -1"):
        pad(x, (-3, -2))


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
NONCONTIG_CONV = [
    ("conv2d", lambda x, w, b: conv2d(x, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2)), (1, 2, 5, 5), (2, 2, 2, 3), 2),
    ("conv2d_groups_same", lambda x, w, b: conv2d(x, w, b, groups=2, padding="same"), (1, 4, 3, 3), (2, 2, 3, 2), 2),
    ("conv1d", lambda x, w, b: conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2), (2, 2, 6), (4, 1, 3), 4),
    ("conv_transpose1d", lambda x, w, b: conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1, groups=2,
                                                          dilation=2), (1, 4, 3), (4, 3, 3), 6),
    ("conv_transpose2d", lambda x, w, b: conv_transpose2d(x, w, b, stride=(2, 1), padding=(1, 0), output_padding=(1, 0)),
     (1, 2, 3, 2), (2, 2, 2, 3), 2),
]


@pytest.mark.parametrize("name,fn,x_shape,w_shape,nb", NONCONTIG_CONV, ids=[c[0] for c in NONCONTIG_CONV])
def test_conv_gradcheck_noncontiguous_leaves(name, fn, x_shape, w_shape, nb, rng):
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape), rng.standard_normal(nb)]
    gradcheck_noncontiguous(fn, arrays, gg=name in ("conv1d", "conv_transpose2d"))


@pytest.mark.parametrize("mode,p,shape", PADS)
def test_pad_gradcheck_noncontiguous_leaf(mode, p, shape, rng):
    gradcheck_noncontiguous(lambda t: pad(t, p, mode=mode) * 1.5, [rng.standard_normal(shape)], gg=True)


# ==================================================================================================
# The kernels behind the convolutions: the compiled col2im equals its readable NumPy twin


@given(n=st.integers(1, 2), c=st.integers(1, 3), h=st.integers(1, 7), w=st.integers(1, 7),
       kh=st.integers(1, 3), kw=st.integers(1, 3), s=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       d=st.tuples(st.integers(1, 2), st.integers(1, 2)), p=st.tuples(*[st.integers(0, 2)] * 4),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_compiled_col2im_equals_the_numpy_form(n, c, h, w, kh, kw, s, d, p, dtype):
    from minitorch_ln.kernels import cpu_im2col, im2col as K

    pads = ((p[0], p[1]), (p[2], p[3]))
    if h + p[0] + p[1] < d[0] * (kh - 1) + 1 or w + p[2] + p[3] < d[1] * (kw - 1) + 1:
        return  # the window does not fit: no columns
    x = np.zeros((n, c, h, w), dtype)
    shape = K.im2col(x, (kh, kw), s, pads, d).shape
    cols = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    want = K.col2im_xp(cols, (h, w), s, pads, d)
    got = cpu_im2col.col2im(cols, (h, w), s, pads, d)
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-13, atol=1e-6)
    # and the adjoint identity with im2col: <col2im(c), x> = <c, im2col(x)>
    x = np.random.default_rng(1).standard_normal((n, c, h, w))
    lhs = float((cpu_im2col.col2im(cols.astype(np.float64), (h, w), s, pads, d) * x).sum())
    rhs = float((cols.astype(np.float64) * K.im2col(x, (kh, kw), s, pads, d)).sum())
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(rhs))


@pytest.mark.usefixtures("cpu_kernels")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_conv2d_and_its_backward_on_both_cpu_kernels(dtype, rng):
    # the same comparison with PyTorch whichever col2im (compiled or NumPy) the input gradient takes
    kw = dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    compare_with_torch(lambda x, w, b: conv2d(x, w, b, **kw), lambda x, w, b: F.conv2d(x, w, b, **kw),
                       _arrays(rng, (2, 4, 7, 8), (6, 2, 3, 2), dtype))


@pytest.mark.parametrize("nd,x_shape,w_shape,kw", [
    (1, (1, 1, 3), (1, 1, 2), dict(stride=1, output_padding=1, dilation=2)),
    (2, (2, 2, 4, 5), (2, 3, 3, 3), dict(stride=(1, 2), output_padding=(1, 1), dilation=(2, 3), padding=1)),
])
def test_conv_transpose_output_padding_beyond_the_stride(nd, x_shape, w_shape, kw, rng):
    # output_padding >= stride (allowed while < dilation) makes the output longer than the windows of
    # the input reach: the backward keeps only the positions the input has (it once failed in matmul)
    ours = conv_transpose1d if nd == 1 else conv_transpose2d
    theirs = F.conv_transpose1d if nd == 1 else F.conv_transpose2d
    arrays = _arrays(rng, x_shape, w_shape, np.float64, bias=False)
    compare_with_torch(lambda x, w: ours(x, w, **kw), lambda x, w: theirs(x, w, **kw), arrays)
    assert gradgradcheck(lambda x, w: ours(x, w, **kw), tuple(t64(a) for a in arrays))
