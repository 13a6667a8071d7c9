"""unfold/fold: PyTorch comparison (float64/float32, unbatched, empty batch, non-contiguous), the
adjoint identity, gradcheck to second order (also on non-contiguous leaves), Hypothesis over the
geometry, float16 and integer input, bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.errors import DtypeError
from minitorch_ln.ops.fold import fold, unfold

F = torch.nn.functional
# fold runs on kernels/im2col.py's col2im, which has a compiled CPU form (Numba) and the NumPy one: test both
pytestmark = pytest.mark.usefixtures("cpu_kernels")

GEOMS = [
    {"kernel_size": 2},
    {"kernel_size": 3, "padding": 1},
    {"kernel_size": (3, 2), "dilation": (2, 1), "padding": (1, 2), "stride": (2, 3)},
    {"kernel_size": (1, 3), "stride": 2, "dilation": 2},
    {"kernel_size": [2, 2], "stride": [1, 2], "padding": [0, 1]},
]


def _blocks(n, k, s, p, d):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _pairs(kw):
    def two(v):
        return tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    return [two(kw.get(name, default)) for name, default in
            (("kernel_size", None), ("stride", 1), ("padding", 0), ("dilation", 1))]


def _num_blocks(hw, kw):
    (kh, kw_), (sh, sw), (ph, pw), (dh, dw) = _pairs(kw)
    return _blocks(hw[0], kh, sh, ph, dh) * _blocks(hw[1], kw_, sw, pw, dw)


# ==================================================================================================
# PyTorch comparison
# ==================================================================================================
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kw", GEOMS)
def test_unfold_matches_torch(kw, dtype, rng, device):
    a = rng.standard_normal((2, 3, 7, 8)).astype(dtype)
    compare_with_torch(lambda x: unfold(x, **kw), lambda x: F.unfold(x, **kw), [a], device=device)
    compare_with_torch(lambda x: unfold(x[1], **kw), lambda x: F.unfold(x[1], **kw), [a])  # unbatched


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kw", GEOMS)
def test_fold_matches_torch(kw, dtype, rng, device):
    (kh, kw_), *_ = _pairs(kw)
    L = _num_blocks((7, 8), kw)
    a = rng.standard_normal((2, 3 * kh * kw_, L)).astype(dtype)
    compare_with_torch(lambda c: fold(c, (7, 8), **kw), lambda c: F.fold(c, (7, 8), **kw), [a], device=device)
    compare_with_torch(lambda c: fold(c[0], [7, 8], **kw), lambda c: F.fold(c[0], [7, 8], **kw), [a])  # unbatched


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fold_unfold_on_non_contiguous_input_and_positional_args_match_torch(dtype, rng):
    a = rng.standard_normal((2, 8, 3, 7)).astype(dtype)
    compare_with_torch(lambda x: unfold(x.transpose(1, 2)[:, :, ::2], 2, 1, 1, 2),
                       lambda x: F.unfold(x.transpose(1, 2)[:, :, ::2], 2, 1, 1, 2), [a])
    c = rng.standard_normal((2, 16, 6)).astype(dtype)  # a (4, 12)-block layout read through a transpose
    compare_with_torch(lambda x: fold(x.transpose(1, 2).reshape(2, 16, 6)[:, ::2], (3, 4), (2, 2), 1, 0, 1),
                       lambda x: F.fold(x.transpose(1, 2).reshape(2, 16, 6)[:, ::2], (3, 4), (2, 2), 1, 0, 1),
                       [c.reshape(2, 6, 16)])


def test_empty_batch_matches_torch():
    a = np.zeros((0, 3, 5, 6))
    compare_with_torch(lambda x: unfold(x, 2), lambda x: F.unfold(x, 2), [a])
    compare_with_torch(lambda c: fold(c, (5, 6), 2), lambda c: F.fold(c, (5, 6), 2), [np.zeros((0, 12, 20))])


# ==================================================================================================
# the math: fold is the adjoint of unfold; fold ∘ unfold counts the blocks covering each pixel
# ==================================================================================================
@pytest.mark.parametrize("kw", GEOMS)
def test_fold_is_the_adjoint_of_unfold(kw, rng):
    x = rng.standard_normal((2, 3, 7, 8))
    c = rng.standard_normal(unfold(mt.tensor(x), **kw).shape)
    lhs = float((unfold(mt.tensor(x), **kw).array * c).sum())  # <unfold x, c>
    rhs = float((x * fold(mt.tensor(c), (7, 8), **kw).array).sum())  # <x, fold c>
    assert abs(lhs - rhs) < 1e-10 * max(1.0, abs(lhs))


def test_fold_of_unfold_of_ones_counts_covering_blocks():
    # 3x3 kernel, stride 1, padding 1 on a 4x4 image: corners are in 4 blocks, edges in 6, inside in 9
    counts = fold(unfold(mt.ones(1, 1, 4, 4, dtype=mt.float64), 3, padding=1), (4, 4), 3, padding=1)
    want = np.array([[4, 6, 6, 4], [6, 9, 9, 6], [6, 9, 9, 6], [4, 6, 6, 4]], dtype=np.float64)
    assert np.array_equal(counts.array[0, 0], want)
    # the column layout: row (c·kh + i)·kw + j, column oh·OW + ow
    x = np.arange(2 * 3 * 4, dtype=np.float64).reshape(1, 2, 3, 4)
    cols = unfold(mt.tensor(x), (2, 3)).array  # (1, 2·2·3, 2·2)
    c, i, j, oh, ow = 1, 1, 2, 1, 0
    assert cols[0, (c * 2 + i) * 3 + j, oh * 2 + ow] == x[0, c, oh + i, ow + j]


def test_float16_integer_and_bool_input():
    a = np.random.default_rng(0).standard_normal((1, 2, 5, 5))
    h = unfold(mt.tensor(a.astype(np.float16)), 3, padding=1, stride=2)
    assert h.dtype == np.float16
    np.testing.assert_allclose(h.array.astype(np.float64), unfold(mt.tensor(a), 3, padding=1, stride=2).array,
                               rtol=1e-2, atol=1e-2)
    hf = fold(h, (5, 5), 3, padding=1, stride=2)
    assert hf.dtype == np.float16
    np.testing.assert_allclose(hf.array.astype(np.float64),
                               fold(unfold(mt.tensor(a), 3, padding=1, stride=2), (5, 5), 3, padding=1, stride=2).array,
                               rtol=1e-2, atol=1e-2)
    ints = np.arange(30).reshape(1, 1, 5, 6)
    cols = unfold(mt.tensor(ints), 2)
    assert cols.dtype == np.int64 and cols.array[0, :, 0].tolist() == [0, 1, 6, 7]
    assert fold(cols, (5, 6), 2).array[0, 0, 1, 1] == 7 * 4  # an inside pixel lies in 4 blocks
    b = unfold(mt.tensor(ints % 2 == 0), (1, 3))
    assert b.dtype == np.bool_ and np.array_equal(b.array, F.unfold(torch.tensor(ints % 2 == 0), (1, 3)).numpy())
    with pytest.raises(DtypeError, match="bool"):
        fold(b, (5, 6), (1, 3))


def test_huge_and_tiny_magnitudes_are_copied_exactly():
    a = np.array([1e300, -1e-300, 3.0, np.inf]).reshape(1, 1, 2, 2)
    assert np.array_equal(unfold(mt.tensor(a), 1).array.ravel(), a.ravel())
    assert np.array_equal(fold(mt.tensor(a.reshape(1, 1, 4)), (2, 2), 1).array, a)


# ==================================================================================================
# gradcheck and gradgradcheck (unfold's backward is fold and vice versa)
# ==================================================================================================
FNS = [
    lambda t: unfold(t, 2, 1, 1, 2),
    lambda t: unfold(t.transpose(2, 3), (3, 2), (1, 2), (1, 0), (1, 1)),
    lambda t: fold(t.reshape(1, 8, 6), (3, 4), 2, stride=(2, 1), padding=(1, 0)),  # 2·2·2 rows, 2·3 blocks
    lambda t: fold(unfold(t, 2, stride=1), (5, 4), 2),
    lambda t: unfold(t[0], 3, padding=1),
]


@pytest.mark.parametrize("i", range(len(FNS)))
def test_gradcheck_and_gradgradcheck(i, rng):
    x = t64(rng.standard_normal((1, 2, 5, 4)))
    if i == 2:
        x = t64(rng.standard_normal((1, 2, 4, 6)))  # 48 values → (1, 8, 6)
    assert gradcheck(FNS[i], (x,))
    assert gradgradcheck(FNS[i], (x,))


def test_gradcheck_noncontiguous_leaves(rng):
    gradcheck_noncontiguous(lambda t: unfold(t, (2, 3), 2, 1, (2, 1)), [rng.standard_normal((2, 2, 5, 6))], gg=True)
    gradcheck_noncontiguous(lambda c: fold(c, (4, 5), (2, 2), 1, 1, 2), [rng.standard_normal((2, 8, 9))], gg=True)


def test_double_backward_of_unfold_is_unfold_of_the_direction(rng):
    # d/dc <fold(c), v> = unfold(v): the gradient of the gradient is again an unfold, exactly
    x = mt.tensor(rng.standard_normal((1, 2, 4, 5)), requires_grad=True)
    y = unfold(x, 2, padding=1)
    u = mt.tensor(rng.standard_normal(y.shape), requires_grad=True)
    (dx,) = mt.autograd.grad(y, x, grad_outputs=u, create_graph=True)
    v = rng.standard_normal(dx.shape)
    (du,) = mt.autograd.grad((dx * mt.tensor(v)).sum(), u)
    np.testing.assert_allclose(du.array, unfold(mt.tensor(v), 2, padding=1).array, rtol=1e-12, atol=1e-12)


# ==================================================================================================
# Hypothesis: any valid geometry
# ==================================================================================================
@st.composite
def block_geometry(draw):
    k = tuple(draw(st.integers(1, 3)) for _ in range(2))
    d = tuple(draw(st.integers(1, 2)) for _ in range(2))
    s = tuple(draw(st.integers(1, 3)) for _ in range(2))
    p = tuple(draw(st.integers(0, 2)) for _ in range(2))
    hw = tuple(max(1, dd * (kk - 1) + 1 - 2 * pp) + draw(st.integers(0, 4)) for kk, dd, pp in zip(k, d, p))
    return hw, {"kernel_size": k, "dilation": d, "padding": p, "stride": s}, draw(st.integers(0, 2)), draw(st.integers(1, 3))


@given(block_geometry(), st.booleans())
def test_unfold_fold_property_match_torch(geom, unbatched):
    hw, kw, n, c = geom
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, c) + hw)
    pick = (lambda t: t[0]) if unbatched and n else (lambda t: t)
    compare_with_torch(lambda x: unfold(pick(x), **kw), lambda x: F.unfold(pick(x), **kw), [a])
    cols = rng.standard_normal((n, c * kw["kernel_size"][0] * kw["kernel_size"][1], _num_blocks(hw, kw)))
    compare_with_torch(lambda x: fold(pick(x), hw, **kw), lambda x: F.fold(pick(x), hw, **kw), [cols])


# ==================================================================================================
# bad input
# ==================================================================================================
def test_unfold_bad_input():
    x = mt.randn(2, 3, 5, 6)
    with pytest.raises(RuntimeError, match=r"calculated shape of the array of sliding blocks as \(-1, 0\)"):
        unfold(x, 7)
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero, but got kernel_height: 0"):
        unfold(x, 0)
    with pytest.raises(RuntimeError, match="stride should be greater than zero"):
        unfold(x, 2, stride=(1, 0))
    with pytest.raises(RuntimeError, match="padding should be non-negative, but got pad_height: -1"):
        unfold(x, 2, padding=-1)
    with pytest.raises(RuntimeError, match="dilation should be greater than zero"):
        unfold(x, 2, dilation=0)
    with pytest.raises(RuntimeError, match="It is expected kernel_size equals to 2, but got size 3"):
        unfold(x, (2, 2, 2))
    with pytest.raises(TypeError, match="kernel_size must be an int"):
        unfold(x, 2.0)
    with pytest.raises(RuntimeError, match=r"expected 3D or 4D \(batch mode\) tensor .* but got: \[1, 2, 5, 6, 7\]"):
        unfold(mt.randn(1, 2, 5, 6, 7), 2)
    with pytest.raises(RuntimeError, match=r"non-zero dimensions for input, but got: \[2, 0, 5, 6\]"):
        unfold(mt.randn(2, 0, 5, 6), 2)
    with pytest.raises(TypeError, match="must be a Tensor"):
        unfold(np.zeros((1, 1, 3, 3)), 2)


def test_fold_bad_input():
    c = mt.randn(2, 12, 20)
    with pytest.raises(RuntimeError, match=r"expected size of input's dimension 2 to match the calculated number of "
                                           r"sliding blocks 4 \* 5 = 20, but got input.size\(2\)=21"):
        fold(mt.randn(2, 12, 21), (5, 6), 2)
    with pytest.raises(RuntimeError, match=r"divisible by the product of kernel_size, but got input.size\(1\)=13"):
        fold(mt.randn(2, 13, 20), (5, 6), 2)
    with pytest.raises(RuntimeError, match=r"expected 2D or 3D \(batch mode\) tensor .* but got: \[2, 12, 20, 1\]"):
        fold(c.unsqueeze(-1), (5, 6), 2)
    with pytest.raises(RuntimeError, match=r"but got: \[2, 12, 0\]"):
        fold(c[:, :, :0], (5, 6), 2)
    with pytest.raises(RuntimeError, match=r"sliding blocks 0 \* 0 = 0"):
        fold(c, (1, 1), 2)
    with pytest.raises(RuntimeError, match="It is expected output_size equals to 2, but got size 3"):
        fold(c, (5, 6, 1), 2)
    with pytest.raises(RuntimeError, match="stride should be greater than zero"):
        fold(c, (5, 6), 2, stride=0)
