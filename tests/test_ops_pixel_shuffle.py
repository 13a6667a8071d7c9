"""pixel_shuffle / pixel_unshuffle: PyTorch comparison (float64/float32, extra batch dims, unbatched,
zero sizes, non-contiguous input), the element map by hand, the two as inverses, gradcheck to second
order (also on non-contiguous leaves), Hypothesis over shapes and factors, dtypes, bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.errors import ShapeError
from minitorch_ln.ops.pixel_shuffle import pixel_shuffle, pixel_unshuffle

F = torch.nn.functional


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,r", [((2, 8, 3, 4), 2), ((9, 2, 3), 3), ((2, 3, 4, 2, 5), 2), ((1, 5, 2, 2), 1),
                                     ((0, 8, 3, 4), 2), ((4, 0, 3), 2)])
def test_pixel_shuffle_matches_torch(shape, r, dtype, rng, device):
    a = rng.standard_normal(shape).astype(dtype)
    compare_with_torch(lambda x: pixel_shuffle(x, r), lambda x: F.pixel_shuffle(x, r), [a], device=device,
                       requires_grad=[a.size > 0])  # PyTorch's backward fails on empty input (see below)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,r", [((2, 2, 6, 4), 2), ((1, 6, 9), 3), ((2, 3, 1, 4, 6), 2), ((1, 5, 2, 2), 1),
                                     ((0, 2, 4, 6), 2), ((2, 0, 6), 2)])
def test_pixel_unshuffle_matches_torch(shape, r, dtype, rng, device):
    a = rng.standard_normal(shape).astype(dtype)
    if a.size == 0:  # PyTorch 2.x returns an empty input unchanged, shape and all: the math decides
        *B, C, H, W = shape
        assert pixel_unshuffle(mt.tensor(a), r).shape == (*B, C * r * r, H // r, W // r)
        assert tuple(F.pixel_unshuffle(torch.tensor(a), r).shape) == shape  # (PyTorch's shape)
        return
    compare_with_torch(lambda x: pixel_unshuffle(x, r), lambda x: F.pixel_unshuffle(x, r), [a], device=device)


def test_empty_input_backward_gives_an_empty_gradient_of_the_input_shape():
    # PyTorch 2.x: PixelShuffleBackward0 "returned an invalid gradient ... got [0, 2, 6, 8] but expected
    # shape compatible with [0, 8, 3, 4]"; the gradient of a map from an empty tensor is the empty tensor.
    for fn, shape in [(lambda t: pixel_shuffle(t, 2), (0, 8, 3, 4)), (lambda t: pixel_unshuffle(t, 2), (0, 2, 4, 6)),
                      (lambda t: pixel_shuffle(t, 2), (4, 0, 3))]:
        x = mt.tensor(np.zeros(shape), requires_grad=True)
        y = fn(x)
        y.backward(mt.tensor(np.zeros(y.shape)))
        assert x.grad.shape == shape


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_non_contiguous_input_matches_torch(dtype, rng):
    a = rng.standard_normal((2, 6, 8, 8)).astype(dtype)
    compare_with_torch(lambda x: pixel_shuffle(x.transpose(2, 3)[:, :4], 2),
                       lambda x: F.pixel_shuffle(x.transpose(2, 3)[:, :4], 2), [a])
    compare_with_torch(lambda x: pixel_unshuffle(x.transpose(1, 3)[:, ::2], 2),
                       lambda x: F.pixel_unshuffle(x.transpose(1, 3)[:, ::2], 2), [a])


def test_element_map_by_hand_and_inverse():
    r, C, H, W = 3, 2, 2, 4
    x = np.arange(C * r * r * H * W, dtype=np.float64).reshape(1, C * r * r, H, W)
    y = pixel_shuffle(mt.tensor(x), r).array
    assert y.shape == (1, C, H * r, W * r)
    c, h, w, i, j = 1, 1, 2, 2, 0
    assert y[0, c, h * r + i, w * r + j] == x[0, c * r * r + i * r + j, h, w]
    assert np.array_equal(pixel_unshuffle(mt.tensor(y), r).array, x)  # unshuffle undoes shuffle
    assert sorted(y.ravel().tolist()) == x.ravel().tolist()  # a permutation: nothing lost, nothing repeated


def test_dtypes_are_kept():
    ints = np.arange(16).reshape(4, 2, 2)
    y = pixel_shuffle(mt.tensor(ints), 2)
    assert y.dtype == np.int64 and np.array_equal(y.array, F.pixel_shuffle(torch.tensor(ints), 2).numpy())
    h = pixel_unshuffle(mt.tensor(ints.astype(np.float16)), 2)
    assert h.dtype == np.float16 and np.array_equal(h.array, F.pixel_unshuffle(torch.tensor(ints).half(), 2).numpy())
    b = pixel_shuffle(mt.tensor(ints % 3 == 0), 2)
    assert b.dtype == np.bool_ and np.array_equal(b.array, F.pixel_shuffle(torch.tensor(ints % 3 == 0), 2).numpy())


FNS = [
    lambda t: pixel_shuffle(t, 2),
    lambda t: pixel_unshuffle(t, 2),
    lambda t: pixel_shuffle(t.transpose(2, 3), 2),
    lambda t: pixel_unshuffle(pixel_shuffle(t, 2) * pixel_shuffle(t, 2), 2),  # second derivative non-zero
    lambda t: pixel_shuffle(t.reshape(2, 4, 2, 4)[0], 2),
]


@pytest.mark.parametrize("i", range(len(FNS)))
def test_gradcheck_and_gradgradcheck(i, rng):
    x = t64(rng.standard_normal((1, 4, 4, 4)))
    assert gradcheck(FNS[i], (x,))
    assert gradgradcheck(FNS[i], (x,))


def test_gradcheck_noncontiguous_leaves(rng):
    gradcheck_noncontiguous(lambda t: pixel_shuffle(t, 2), [rng.standard_normal((2, 4, 3, 2))], gg=True)
    gradcheck_noncontiguous(lambda t: pixel_unshuffle(t, 3), [rng.standard_normal((1, 2, 3, 6))], gg=True)


def test_gradient_of_shuffle_is_unshuffle(rng):
    x = mt.tensor(rng.standard_normal((2, 8, 3, 2)), requires_grad=True)
    dy = rng.standard_normal((2, 2, 6, 4))
    pixel_shuffle(x, 2).backward(mt.tensor(dy))
    assert np.array_equal(x.grad.array, pixel_unshuffle(mt.tensor(dy), 2).array)


@given(st.lists(st.integers(0, 2), min_size=0, max_size=2), st.integers(0, 3), st.integers(0, 3), st.integers(0, 3),
       st.integers(1, 3))
def test_shuffle_property_matches_torch_and_round_trips(batch, c, h, w, r):
    rng = np.random.default_rng(c * 16 + h * 4 + w)
    a = rng.standard_normal(tuple(batch) + (c * r * r, h, w))
    grad = [a.size > 0]  # PyTorch's backward fails on empty input
    (y,), _ = compare_with_torch(lambda x: pixel_shuffle(x, r), lambda x: F.pixel_shuffle(x, r), [a], requires_grad=grad)
    if a.size:  # PyTorch returns an empty input to pixel_unshuffle unchanged (see above)
        compare_with_torch(lambda x: pixel_unshuffle(x, r), lambda x: F.pixel_unshuffle(x, r), [y])
    assert np.array_equal(pixel_unshuffle(mt.tensor(y), r).array, a)


def test_bad_input():
    with pytest.raises(ShapeError, match=r"input.size\(-3\)=7 is not divisible by 4"):
        pixel_shuffle(mt.randn(7, 3, 4), 2)
    with pytest.raises(RuntimeError, match="expects input to have at least 3 dimensions, but got input with 2"):
        pixel_shuffle(mt.randn(3, 4), 2)
    with pytest.raises(RuntimeError, match="expects a positive upscale_factor, but got 0"):
        pixel_shuffle(mt.randn(8, 3, 4), 0)
    with pytest.raises(TypeError, match="'upscale_factor' must be int, not float"):
        pixel_shuffle(mt.randn(8, 3, 4), 2.0)
    with pytest.raises(RuntimeError, match=r"expects height to be divisible by downscale_factor, but input.size\(-2\)=5"):
        pixel_unshuffle(mt.randn(2, 5, 6), 2)
    with pytest.raises(RuntimeError, match=r"expects width to be divisible by downscale_factor, but input.size\(-1\)=5"):
        pixel_unshuffle(mt.randn(2, 4, 5), 2)
    with pytest.raises(RuntimeError, match="expects a positive downscale_factor, but got -1"):
        pixel_unshuffle(mt.randn(2, 4, 6), -1)
    with pytest.raises(TypeError, match="'downscale_factor' must be int, not bool"):
        pixel_unshuffle(mt.randn(2, 4, 6), True)
    with pytest.raises(TypeError, match="must be a Tensor"):
        pixel_unshuffle(np.zeros((2, 4, 6)), 2)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_edge_values_move_bitwise(dtype):
    # A pixel shuffle only moves values (the math: out[c, h·r + i, w·r + j] = x[c·r² + i·r + j, h, w]),
    # so inf, NaN, -0, the largest and the smallest subnormal come out bitwise where the formula
    # puts them, in every float dtype; and the unshuffle puts them back.
    fi = np.finfo(dtype)
    vals = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, fi.max, -fi.max, fi.smallest_subnormal, 1.0], dtype)
    x = np.resize(vals, (1, 8, 3, 3)).astype(dtype)                      # C·r² = 8, r = 2: C = 2
    y = pixel_shuffle(mt.tensor(x), 2).numpy()
    r = 2
    expect = np.empty((1, 2, 6, 6), dtype)
    for c in range(2):
        for i in range(r):
            for j in range(r):
                expect[0, c, i::r, j::r] = x[0, c * r * r + i * r + j]
    assert y.dtype == dtype
    np.testing.assert_array_equal(y.view(np.uint8), expect.view(np.uint8))
    back = pixel_unshuffle(mt.tensor(y), 2).numpy()
    np.testing.assert_array_equal(back.view(np.uint8), x.view(np.uint8))
