"""``F.grid_sample`` in every mode (bilinear/trilinear, nearest, bicubic) x padding x align_corners, in 2-D
(4-D input) and 3-D (5-D input), and ``F.affine_grid`` for 5-D sizes (the 4-D basics are in
tests/test_ops_missing_common.py).

PyTorch comparison in float64 and float32 (values, and the input's and grid's gradients under a random
upstream gradient), float64 gradcheck at points away from the kinks (also at non-contiguous leaves and a
gradgradcheck, the op being composed of Tensor ops), a Hypothesis property against PyTorch and the identity
resampling, hand-worked bicubic values that tell the padding modes apart, bad input, and edge values.
"""

import itertools
import re

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck

F = mt.nn.functional
PADDINGS = ("zeros", "border", "reflection")
CASES = [(dim, mode, pad, ac) for dim, mode, pad, ac in itertools.product((2, 3), ("bilinear", "nearest", "bicubic"),
                                                                       PADDINGS, (False, True))
         if not (dim == 3 and mode == "bicubic")]  # PyTorch has no 3-D bicubic


def _normalize(ix, size, align):
    """The grid coordinate whose unnormalized position is ``ix`` (PyTorch's unnormalize, inverted)."""
    return ix * 2 / (size - 1) - 1 if align else (2 * ix + 1) / size - 1


def _grid_away_from_kinks(rng, n, out, sizes, align):
    """A grid ``(n, *out, k)`` whose unnormalized coordinates lie 0.1 to 0.4 from every integer and half-integer
    (the kinks of linear weights, border clipping and reflection), inside and outside the image."""
    k = len(sizes)
    g = np.empty((n, *out, k))
    for j in range(k):  # grid's x, y, z run along W, H, D
        size = sizes[k - 1 - j]
        ix = rng.integers(-3, size + 2, (n, *out)) + rng.uniform(0.1, 0.4, (n, *out)) + 0.5 * rng.integers(0, 2, (n, *out))
        g[..., j] = _normalize(ix, size, align) if size > 1 or not align else rng.uniform(-2, 2, (n, *out))
    return g


@pytest.mark.parametrize("dim,mode,padding_mode,align_corners", CASES)
def test_grid_sample_matches_torch_every_mode_2d_and_3d(dim, mode, padding_mode, align_corners, rng):
    a = rng.standard_normal((2, 3, *(4, 5, 3)[:dim]))  # (N, C, [D,] H, W)
    g = rng.uniform(-1.4, 1.4, (2, *(3, 2, 4)[:dim], dim))  # inside and outside the image
    kw = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    for dtype in (np.float64, np.float32):
        compare_with_torch(lambda x, y: F.grid_sample(x, y, **kw),
                           lambda x, y: torch.nn.functional.grid_sample(x, y, **kw), [a.astype(dtype), g.astype(dtype)])


@pytest.mark.parametrize("dim,mode,padding_mode,align_corners", CASES)
def test_grid_sample_one_pixel_wide_dims_match_torch(dim, mode, padding_mode, align_corners, rng):
    # size-1 dims: align_corners maps every point to that pixel, reflection has an empty span
    a, g = rng.standard_normal((1, 2, *(1, 3, 1)[:dim])), rng.uniform(-2, 2, (1, 4, *(3, 1)[:dim - 1], dim))
    kw = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    compare_with_torch(lambda x, y: F.grid_sample(x, y, **kw), lambda x, y: torch.nn.functional.grid_sample(x, y, **kw),
                       [a, g])


@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_bicubic_gradcheck_input_and_grid(padding_mode, align_corners, rng):
    a = rng.standard_normal((2, 2, 4, 5))
    g = _grid_away_from_kinks(rng, 2, (3, 2), (4, 5), align_corners)
    kw = {"mode": "bicubic", "padding_mode": padding_mode, "align_corners": align_corners}
    assert gradcheck(lambda x, y: F.grid_sample(x, y, **kw), (t64(a), t64(g)))
    gradcheck_noncontiguous(lambda x, y: F.grid_sample(x, y, **kw), [a, g])


@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_trilinear_gradcheck_input_and_grid(padding_mode, align_corners, rng):
    a = rng.standard_normal((2, 2, 3, 4, 2))
    g = _grid_away_from_kinks(rng, 2, (2, 3, 2), (3, 4, 2), align_corners)
    kw = {"mode": "bilinear", "padding_mode": padding_mode, "align_corners": align_corners}
    assert gradcheck(lambda x, y: F.grid_sample(x, y, **kw), (t64(a), t64(g)))
    gradcheck_noncontiguous(lambda x, y: F.grid_sample(x, y, **kw), [a, g])


def test_nearest_3d_gradcheck_input_and_zero_grid_gradient(rng):
    a, g = rng.standard_normal((1, 2, 3, 2, 4)), _grid_away_from_kinks(rng, 1, (2, 2, 3), (3, 2, 4), False)
    gradcheck_noncontiguous(lambda x: F.grid_sample(x, mt.tensor(g), mode="nearest", align_corners=False), [a])
    grid = t64(g)
    F.grid_sample(t64(a), grid, mode="nearest", align_corners=False).sum().backward()
    assert np.array_equal(grid.grad.numpy(), np.zeros_like(g))  # a step function of the grid, as PyTorch's


def test_bicubic_and_trilinear_gradgradcheck(rng):
    a, g = rng.standard_normal((1, 1, 3, 4)), _grid_away_from_kinks(rng, 1, (2, 2), (3, 4), True)
    assert gradgradcheck(lambda x, y: F.grid_sample(x, y, mode="bicubic", padding_mode="reflection", align_corners=True),
                         (t64(a), t64(g)))
    a, g = rng.standard_normal((1, 1, 2, 3, 2)), _grid_away_from_kinks(rng, 1, (2, 1, 2), (2, 3, 2), False)
    assert gradgradcheck(lambda x, y: F.grid_sample(x, y, padding_mode="border", align_corners=False), (t64(a), t64(g)))


# Keys' cubic convolution with A = -0.75 at offset t = 0.5: W(1.5) = -0.75 (1.5^3 - 5 1.5^2 + 8 1.5 - 4)
# = -0.09375 for the outer taps, W(0.5) = 1.25 0.5^3 - 2.25 0.5^2 + 1 = 0.59375 for the inner ones (sum 1).
# Row [1, 2, 4, 8] (H = 1, W = 4, align_corners=True, so x = -1 + 2 ix / 3 and every y reads row 0 exactly):
@pytest.mark.parametrize("ix,padding_mode,want", [
    (1.5, "zeros", -0.09375 * 1 + 0.59375 * 2 + 0.59375 * 4 - 0.09375 * 8),  # 2.71875: all four taps inside
    (0.5, "zeros", -0.09375 * 0 + 0.59375 * 1 + 0.59375 * 2 - 0.09375 * 4),  # tap -1 outside reads 0: 1.40625
    (0.5, "border", -0.09375 * 1 + 0.59375 * 1 + 0.59375 * 2 - 0.09375 * 4),  # tap -1 clipped to pixel 0: 1.3125
    (0.5, "reflection", -0.09375 * 2 + 0.59375 * 1 + 0.59375 * 2 - 0.09375 * 4),  # tap -1 reflected to 1: 1.21875
    (3.0, "zeros", 8.0),  # t = 0: the weights are (0, 1, 0, 0), the pixel itself
    (-0.5, "reflection", -0.09375 * 4 + 0.59375 * 2 + 0.59375 * 1 - 0.09375 * 2),  # taps -2, -1, 0, 1 -> 2, 1, 0, 1
])
def test_bicubic_hand_worked_values_tell_the_padding_modes_apart(ix, padding_mode, want):
    x = mt.tensor([[[[1.0, 2.0, 4.0, 8.0]]]], dtype=mt.float64)
    for y in (-1.0, 0.3, 1.0):
        g = mt.tensor([[[[-1 + 2 * ix / 3, y]]]], dtype=mt.float64)
        out = F.grid_sample(x, g, mode="bicubic", padding_mode=padding_mode, align_corners=True)
        np.testing.assert_allclose(out.numpy().ravel(), [want], rtol=1e-13)


def test_trilinear_hand_worked_centre_is_the_cube_mean():
    x = mt.tensor(np.arange(8.0).reshape(1, 1, 2, 2, 2) ** 2)  # values 0, 1, 4, ..., 49
    out = F.grid_sample(x, mt.zeros(1, 1, 1, 1, 3, dtype=mt.float64), align_corners=True)  # the centre: weights 1/8
    assert out.item() == pytest.approx(np.mean(np.arange(8.0) ** 2))  # 17.5
    # z = 1 is the back face (d = 1) only: the mean of its four pixels, 16, 25, 36, 49
    out = F.grid_sample(x, mt.tensor([[[[[0.0, 0.0, 1.0]]]]], dtype=mt.float64), align_corners=True)
    assert out.item() == pytest.approx(31.5)


@settings(max_examples=25, deadline=None)
@given(dim=st.sampled_from([2, 3]), mode=st.sampled_from(["bilinear", "nearest", "bicubic"]),
       padding_mode=st.sampled_from(PADDINGS), align_corners=st.booleans(),
       sizes=st.lists(st.integers(1, 4), min_size=3, max_size=3), n=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_grid_sample_property_matches_torch_and_identity_resamples(dim, mode, padding_mode, align_corners, sizes, n, seed):
    if dim == 3 and mode == "bicubic":
        mode = "bilinear"
    rng = np.random.default_rng(seed)
    sizes = sizes[:dim]
    a = rng.standard_normal((n, 2, *sizes))
    g = rng.uniform(-1.6, 1.6, (n, *sizes[::-1], dim))
    kw = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    ours = F.grid_sample(mt.tensor(a), mt.tensor(g), **kw).numpy()
    np.testing.assert_allclose(ours, torch.nn.functional.grid_sample(torch.tensor(a), torch.tensor(g), **kw).numpy(),
                               rtol=1e-10, atol=1e-12)
    codes = ("bilinear", "nearest", "bicubic").index(mode), PADDINGS.index(padding_mode)  # torch.grid_sampler's
    np.testing.assert_array_equal(mt.grid_sampler(mt.tensor(a), mt.tensor(g), *codes, align_corners).numpy(), ours)
    # the identity transform's grid hits every pixel centre: every mode and padding gives the input back
    eye = mt.tensor(np.tile(np.eye(dim, dim + 1), (n, 1, 1)))
    grid = F.affine_grid(eye, (n, 2, *sizes), align_corners=align_corners)
    np.testing.assert_allclose(F.grid_sample(mt.tensor(a), grid, **kw).numpy(), a, atol=1e-12)


@pytest.mark.filterwarnings("ignore:Since version 1.3.0, affine_grid")  # PyTorch's, for its unit-size dims
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_5d_matches_torch_and_gradcheck(align_corners, rng):
    theta = rng.standard_normal((2, 3, 4))
    for size in [(2, 3, 4, 5, 6), (2, 1, 1, 3, 1)]:
        for dtype in (np.float64, np.float32):
            compare_with_torch(lambda t, size=size: F.affine_grid(t, size, align_corners),
                               lambda t, size=size: torch.nn.functional.affine_grid(t, size, align_corners),
                               [theta.astype(dtype)])
    assert gradcheck(lambda t: F.affine_grid(t, (2, 1, 2, 3, 2), align_corners), (t64(theta),))
    gradcheck_noncontiguous(lambda t: F.affine_grid(t, (2, 1, 2, 3, 2), align_corners), [theta])


def test_grid_sample_bad_input():
    x4, g4 = mt.zeros(1, 1, 2, 2), mt.zeros(1, 2, 2, 2)
    x5, g5 = mt.zeros(1, 1, 2, 2, 2), mt.zeros(1, 2, 2, 2, 3)
    with pytest.raises(RuntimeError, match="grid to have size 2 in its last dim for a 4-D input"):
        F.grid_sample(x4, mt.zeros(1, 2, 2, 3))  # a 3-D grid for a 2-D image
    with pytest.raises(RuntimeError, match="bicubic interpolation supports only 4-D input"):
        F.grid_sample(x5, g5, mode="bicubic")  # PyTorch refuses it too
    with pytest.raises(RuntimeError, match="same batch size N, got input \\(1, 1, 2, 2\\) and grid \\(2, 2, 2, 2\\)"):
        F.grid_sample(x4, mt.zeros(2, 2, 2, 2))
    with pytest.raises(RuntimeError, match="expected a 4-D input .* or a 5-D input"):
        F.grid_sample(x4, g5)  # ranks differ
    with pytest.raises(RuntimeError, match="non-empty spatial dims"):
        F.grid_sample(mt.zeros(1, 1, 0, 2), g4)
    with pytest.raises(TypeError, match="floating input and grid of one dtype, got float32 and float64"):
        F.grid_sample(x4, g4.double())
    with pytest.raises(RuntimeError, match="floating input and grid of one dtype, got int64"):
        F.grid_sample(x4.long(), g4.long())
    with pytest.raises(ValueError, match="got 'trilinear'"):
        F.grid_sample(x5, g5, mode="trilinear")  # PyTorch's name for it is 'bilinear'
    with pytest.raises(ValueError, match="theta of shape \\(N, 3, 4\\) = \\(1, 3, 4\\)"):
        F.affine_grid(mt.zeros(1, 2, 3), (1, 1, 2, 2, 2))
    with pytest.raises(RuntimeError, match="only 4-D sizes .* and 5-D sizes"):
        F.affine_grid(mt.zeros(1, 3, 4), (1, 1, 2, 2, 2, 2))
    with pytest.raises(TypeError, match="floating point dtype, got int64"):
        F.affine_grid(mt.zeros(1, 3, 4, dtype=mt.int64), (1, 1, 2, 2, 2))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_edge_values_non_finite_and_huge_points(mode):
    # NaN and ±inf points read 0 (PyTorch: NaN for some, docs/torch_compat.md), 1e30 is far outside (0 with zeros
    # padding, the last column with border); the input's gradient stays finite and is 0 at the points read as 0
    x = t64(np.arange(1.0, 13.0).reshape(1, 1, 3, 4))
    g = t64(np.array([[[[np.nan, 0.0], [np.inf, 0.0], [-np.inf, 0.2], [1e30, 0.0]]]]))
    out = F.grid_sample(x, g, mode=mode, align_corners=True)
    assert out.detach().numpy().ravel().tolist() == [0.0, 0.0, 0.0, 0.0]
    out.sum().backward()
    assert np.array_equal(x.grad.numpy(), np.zeros((1, 1, 3, 4)))
    assert np.isfinite(g.grad.numpy()[0, 0, 1:]).all()  # ±inf and huge points: a finite (zero) grid gradient
    border = F.grid_sample(x.detach(), g.detach()[:, :, 3:], mode=mode, padding_mode="border", align_corners=True)
    assert border.item() == 8.0  # x = 1e30 clipped to the last column, y = 0 the middle row: [5, 6, 7, 8]


def test_edge_values_zeros_float16_and_empty(rng):
    g = rng.uniform(-1.5, 1.5, (2, 3, 2, 2))
    for mode in ("bilinear", "nearest", "bicubic"):  # zeros in, zeros out
        assert not F.grid_sample(mt.zeros(2, 3, 4, 4), mt.tensor(g, dtype=mt.float32), mode=mode).numpy().any()
    a = rng.standard_normal((1, 2, 3, 4))
    for mode in ("bilinear", "nearest", "bicubic"):  # float16 stays float16, within its precision of the float64 math
        want = F.grid_sample(mt.tensor(a.astype(np.float16).astype(np.float64)), mt.tensor(g[:1].astype(np.float16)
                             .astype(np.float64)), mode=mode, align_corners=False).numpy()
        half = F.grid_sample(mt.tensor(a, dtype=mt.float16), mt.tensor(g[:1], dtype=mt.float16), mode=mode,
                             align_corners=False)
        assert half.dtype == mt.float16
        np.testing.assert_allclose(half.numpy().astype(np.float64), want, atol=1e-2)
    for shape, gshape in [((0, 2, 3, 4), (0, 2, 2, 2)), ((1, 0, 3, 4), (1, 2, 2, 2)), ((1, 2, 2, 3, 4), (1, 0, 2, 2, 3))]:
        out = F.grid_sample(mt.zeros(*shape), mt.zeros(*gshape), align_corners=False)
        assert tuple(out.shape) == (shape[0], shape[1], *gshape[1:-1])  # PyTorch's shapes


# ------------------------------------------------------------------ torch.grid_sampler*, affine_grid_generator


@pytest.mark.parametrize("mode,padding_mode,align_corners", list(itertools.product((0, 1, 2), (0, 1, 2), (False, True))))
def test_grid_sampler_codes_match_torch(mode, padding_mode, align_corners, rng):
    a2, g2 = rng.standard_normal((2, 3, 4, 5)), rng.uniform(-1.4, 1.4, (2, 3, 2, 2))
    a3, g3 = rng.standard_normal((1, 2, 3, 2, 4)), rng.uniform(-1.4, 1.4, (1, 2, 3, 2, 3))
    args = (mode, padding_mode, align_corners)
    for dtype in (np.float64, np.float32):
        compare_with_torch(lambda x, y: mt.grid_sampler_2d(x, y, *args), lambda x, y: torch.grid_sampler_2d(x, y, *args),
                           [a2.astype(dtype), g2.astype(dtype)])
        compare_with_torch(lambda x, y: mt.grid_sampler(x, y, *args), lambda x, y: torch.grid_sampler(x, y, *args),
                           [a2.astype(dtype), g2.astype(dtype)])
        if mode != 2:  # no 3-D bicubic
            compare_with_torch(lambda x, y: mt.grid_sampler_3d(x, y, *args),
                               lambda x, y: torch.grid_sampler_3d(x, y, *args), [a3.astype(dtype), g3.astype(dtype)])
    if mode != 1:
        g = _grid_away_from_kinks(rng, 1, (2, 2), (4, 5), align_corners)
        gradcheck_noncontiguous(lambda x, y: mt.grid_sampler_2d(x, y, *args), [a2[:1], g])


def test_affine_grid_generator_matches_torch(rng):
    theta2, theta3 = rng.standard_normal((2, 2, 3)), rng.standard_normal((2, 3, 4))
    for theta, size in ((theta2, [2, 1, 3, 4]), (theta3, [2, 1, 2, 3, 4])):
        for dtype in (np.float64, np.float32):
            compare_with_torch(lambda t, size=size: mt.affine_grid_generator(t, size, False),
                               lambda t, size=size: torch.affine_grid_generator(t, size, False), [theta.astype(dtype)])
        assert gradcheck(lambda t, size=size: mt.affine_grid_generator(t, size, True), (t64(theta),))


def test_grid_sampler_bad_input():
    x4, g4 = mt.zeros(1, 1, 2, 2), mt.zeros(1, 2, 2, 2)
    x5, g5 = mt.zeros(1, 1, 2, 2, 2), mt.zeros(1, 2, 2, 2, 3)
    with pytest.raises(ValueError, match="interpolation_mode must be one of 0 \\(bilinear\\), 1 \\(nearest\\), 2 "
                                         "\\(bicubic\\), got 3"):
        mt.grid_sampler_2d(x4, g4, 3, 0, False)  # PyTorch accepts 3 and returns whatever is in memory
    with pytest.raises(ValueError, match="padding_mode must be one of 0 \\(zeros\\), 1 \\(border\\), 2 "
                                         "\\(reflection\\), got 'zeros'"):
        mt.grid_sampler(x4, g4, 0, "zeros", False)
    with pytest.raises(TypeError, match="align_corners must be a bool, got int"):
        mt.grid_sampler_2d(x4, g4, 0, 0, 1)
    with pytest.raises(RuntimeError, match="grid_sampler_2d: expected a 4-D input and a 4-D grid, got \\(1, 1, 2, 2, 2\\)"):
        mt.grid_sampler_2d(x5, g5, 0, 0, False)
    with pytest.raises(RuntimeError, match="grid_sampler_3d: expected a 5-D input"):
        mt.grid_sampler_3d(x4, g4, 0, 0, False)
    with pytest.raises(RuntimeError, match="bicubic interpolation supports only 4-D input"):
        mt.grid_sampler_3d(x5, g5, 2, 0, False)
    with pytest.raises(TypeError, match="align_corners must be a bool, got NoneType"):
        mt.affine_grid_generator(mt.zeros(1, 2, 3), [1, 1, 2, 2], None)


def test_affine_grid_refuses_empty_negative_and_fractional_sizes():
    # PyTorch: "Expected non-zero, positive output size"; before, a 0 gave an empty grid, a -1 NumPy's bare "negative
    # dimensions are not allowed", and 4.5 was silently truncated to 4
    theta2, theta3 = mt.zeros(2, 2, 3), mt.zeros(2, 3, 4)
    for theta, size in ((theta2, (2, 3, 0, 5)), (theta3, (2, 3, 2, 0, 1)), (theta2, (2, 3, -1, 4))):
        with pytest.raises(ValueError, match="non-zero, positive output size, got " + re.escape(str(size))):
            F.affine_grid(theta, size, align_corners=False)
    with pytest.raises(TypeError, match="size to be a sequence of ints, got \\(2, 3, 4.5, 5\\)"):
        F.affine_grid(theta2, (2, 3, 4.5, 5), align_corners=False)
    assert tuple(F.affine_grid(theta2, mt.Size([2, 3, 4, 5]), align_corners=False).shape) == (2, 4, 5, 2)


def test_align_corners_must_be_a_bool_or_none():
    # PyTorch refuses a non-bool (grid_sampler's argument parser); before, "False" was read for its truth: True
    x, g = mt.zeros(1, 1, 2, 2), mt.zeros(1, 2, 2, 2)
    for bad in ("False", 1):
        with pytest.raises(TypeError, match=f"grid_sample: expected align_corners to be a bool or None, got "
                                            f"{type(bad).__name__}"):
            F.grid_sample(x, g, align_corners=bad)
        with pytest.raises(TypeError, match="affine_grid: expected align_corners to be a bool or None"):
            F.affine_grid(mt.zeros(1, 2, 3), (1, 1, 2, 2), align_corners=bad)
    assert F.grid_sample(x, g, align_corners=np.bool_(True)).shape == (1, 1, 2, 2)


@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dim", [2, 3])
def test_identity_affine_grid_on_the_borders_matches_torch_gradients(dim, padding_mode, align_corners, rng):
    # a spatial transformer starts at the identity theta, whose grid puts points exactly on the border pixels; PyTorch
    # gives a clipped coordinate gradient 0 on the border ("borders are considered out of bounds",
    # clip_coordinates_set_grad); before, `clamp`'s gradient 1 there gave theta a gradient off by ~10-20
    size = (2, 3, *(3, 4, 5)[3 - dim:])
    theta = np.tile(np.eye(dim, dim + 1), (2, 1, 1))
    a = rng.standard_normal(size)
    for dtype in (np.float64, np.float32):
        compare_with_torch(
            lambda t, x: F.grid_sample(x, F.affine_grid(t, size, align_corners), padding_mode=padding_mode,
                                       align_corners=align_corners),
            lambda t, x: torch.nn.functional.grid_sample(x, torch.nn.functional.affine_grid(t, size, align_corners),
                                                         padding_mode=padding_mode, align_corners=align_corners),
            [theta.astype(dtype), a.astype(dtype)])


def test_reflection_is_exact_far_outside():
    # the place of a point in reflection's period 2 * span is fmod(dist, 2 * span), exact for every finite float;
    # before, dist - floor(dist / span) * span lost it past ~1e16 (PyTorch casts the flip count to int: undefined
    # past 2^31, docs/torch_compat.md). Checked against exact rational arithmetic on the same float coordinates.
    from fractions import Fraction

    from minitorch_ln.ops.grid_sample import _reflect

    size = 5  # align_corners=False: reflect about -0.5 and 4.5, span 5, period 10
    ix = np.array([3.25, -7.75, 1e6 + 0.25, 2.0**60 + 2.0**9, -3e17, 1e30, -7.3e29, 2.0**80 * 3])
    got = _reflect(mt.tensor(ix), -1, 2 * size - 1).numpy()
    for x, y in zip(ix, got):
        place = Fraction(abs(x + 0.5)) % 10  # the distance from the low edge is a float sum; the rest is exact
        want = place - Fraction(1, 2) if place <= 5 else 10 - place - Fraction(1, 2)
        assert abs(y - float(want)) <= 1e-12, (x, y, float(want))


@pytest.mark.parametrize("dim,mode,padding_mode,align_corners", CASES)
def test_a_non_finite_pixel_reaches_only_the_points_that_read_it(dim, mode, padding_mode, align_corners, rng):
    # taps outside the image read pixel 0 and were zeroed by a 0 weight: NaN or inf at pixel 0 times 0 made NaN at
    # points that never read it (PyTorch skips outside taps); the input's gradient stays finite
    for bad in (np.nan, np.inf):
        a = rng.standard_normal((1, 2, *(4, 5, 6)[:dim]))
        a[(slice(None), slice(None), *([0] * dim))] = bad
        g = rng.uniform(-1.3, 1.3, (1, 12, *([2] * (dim - 1)), dim))
        kw = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
        want = torch.nn.functional.grid_sample(torch.tensor(a), torch.tensor(g), **kw).numpy()
        x = mt.tensor(a, requires_grad=True)
        out = F.grid_sample(x, mt.tensor(g), **kw)
        np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12, atol=1e-12)  # NaN where PyTorch's
        out.backward(mt.tensor(rng.standard_normal(want.shape)))
        assert np.isfinite(x.grad.numpy()).all()


def test_cpu_autocast_samples_in_float32_as_pytorch(rng):
    # grid_sampler is on PyTorch's CPU float32 autocast list: float16/bfloat16 inputs (even of two dtypes) are sampled
    # in float32; before, they stayed in their lower precision (or were refused as two dtypes)
    a, g = rng.standard_normal((1, 2, 4, 5)), rng.uniform(-1.2, 1.2, (1, 3, 2, 2))
    for dt_a, dt_g in (("bfloat16", "bfloat16"), ("float16", "float16"), ("float16", "float32")):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            want = torch.nn.functional.grid_sample(torch.tensor(a).to(getattr(torch, dt_a)),
                                                   torch.tensor(g).to(getattr(torch, dt_g)), align_corners=False)
        with mt.autocast("cpu", dtype=mt.bfloat16):
            got = F.grid_sample(mt.tensor(a).to(getattr(mt, dt_a)), mt.tensor(g).to(getattr(mt, dt_g)),
                                align_corners=False)
        assert got.dtype == mt.float32 and want.dtype == torch.float32
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    with mt.autocast("cpu", dtype=mt.bfloat16):  # float64 is never cast
        assert F.grid_sample(mt.tensor(a), mt.tensor(g), align_corners=False).dtype == mt.float64
