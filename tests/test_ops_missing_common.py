"""Ops PyTorch code uses most that were missing (issue 24): ``Tensor.unfold``, ``diff``, ``nansum``,
``nanmean``, ``bincount``, ``isin``, ``unique_consecutive``; and the arguments that were missing:
``add``/``sub(alpha=)``, ``softmax``/``log_softmax(dtype=)``, a uint8 ``where`` condition, legacy empty
tensors in ``cat``.

The standard checks for each differentiable op: float64 gradcheck (also at a non-contiguous leaf),
PyTorch comparison in float64 and float32 with a random upstream gradient, a Hypothesis property,
bad input and edge values checked against the math.
"""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import array_and_dim, arrays, shapes

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck

NAN = float("nan")


# ------------------------------------------------------------------ Tensor.unfold


@pytest.mark.parametrize("dim,size,step", [(1, 3, 2), (1, 2, 3), (0, 1, 1), (-1, 4, 1), (1, 0, 1), (2, 4, 4)])
def test_unfold_gradcheck_and_noncontiguous(dim, size, step, rng):
    a = rng.standard_normal((3, 6, 4))
    assert gradcheck(lambda t: t.unfold(dim, size, step), (t64(a),))
    assert gradgradcheck(lambda t: t.unfold(dim, size, step), (t64(a),))
    gradcheck_noncontiguous(lambda t: t.unfold(dim, size, step), [a])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("dim,size,step", [(1, 3, 2), (1, 2, 1), (0, 2, 1)])
def test_unfold_matches_torch(dtype, dim, size, step, rng):
    a = rng.standard_normal((3, 7, 2)).astype(dtype)
    compare_with_torch(lambda x: x.unfold(dim, size, step), lambda x: x.unfold(dim, size, step), [a])


def test_unfold_is_a_view_and_refuses_bad_sizes():
    base = mt.zeros(6)
    base.unfold(0, 2, 2).add_(1.0)  # disjoint windows: a writable view
    np.testing.assert_array_equal(base.numpy(), np.ones(6))
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 6 but size is 7"):
        base.unfold(0, 7, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        base.unfold(0, 2, 0)
    with pytest.raises(IndexError):
        base.unfold(1, 2, 1)


@settings(max_examples=30, deadline=None)
@given(data=array_and_dim(), size=st.integers(0, 4), step=st.integers(1, 4))
def test_property_unfold_windows_are_the_slices(data, size, step):
    a, dim = data
    dim %= a.ndim
    length = a.shape[dim]
    if size > length:
        return
    got = mt.tensor(a).unfold(dim, size, step).numpy()
    for w in range((length - size) // step + 1):
        want = np.moveaxis(np.take(a, np.arange(w * step, w * step + size), axis=dim), dim, -1)
        np.testing.assert_array_equal(np.take(got, w, axis=dim), want)


# ------------------------------------------------------------------ diff


@pytest.mark.parametrize("n,dim", [(1, -1), (2, 0), (3, 1), (0, 1), (7, 1)])
def test_diff_gradcheck_and_matches_torch(n, dim, rng):
    a = rng.standard_normal((4, 5))
    assert gradcheck(lambda t: mt.diff(t, n, dim), (t64(a),))
    gradcheck_noncontiguous(lambda t: mt.diff(t, n, dim), [a])
    for dtype in (np.float64, np.float32):
        compare_with_torch(lambda x: mt.diff(x, n, dim), lambda x: torch.diff(x, n, dim), [a.astype(dtype)])


def test_diff_prepend_append_bool_and_errors(rng):
    a, p, q = rng.standard_normal((2, 3)), rng.standard_normal((2, 1)), rng.standard_normal((2, 2))
    compare_with_torch(lambda x, y, z: mt.diff(x, 2, prepend=y, append=z),
                       lambda x, y, z: torch.diff(x, 2, prepend=y, append=z), [a, p, q])
    np.testing.assert_array_equal(mt.diff(mt.tensor([True, False, False])).numpy(), [True, False])
    assert mt.diff(mt.tensor([1, 3, 6]), n=5).shape == (0,)
    assert mt.diff(mt.ones(5, 5), 0, 0, mt.ones(1, 5), mt.ones(2, 5)).shape == (5, 5)  # n=0: the input, as PyTorch
    with pytest.raises(RuntimeError, match="0 sized dimensions"):
        mt.unique_consecutive(mt.zeros(0, 3), dim=1)
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        mt.diff(mt.tensor(1.0))
    with pytest.raises(RuntimeError, match="order must be non-negative"):
        mt.diff(mt.tensor([1.0, 2.0]), n=-1)
    with pytest.raises(RuntimeError, match="same dimension as input"):
        mt.diff(mt.ones(2, 3), prepend=mt.ones(3))
    with pytest.raises(RuntimeError, match="except along the differencing dimension"):
        mt.diff(mt.ones(2, 3), dim=0, prepend=mt.ones(2, 1))
    with pytest.raises(TypeError, match="'prepend' must be Tensor"):
        mt.diff(mt.ones(2), prepend=1)


def test_diff_edge_values_follow_the_math():
    with np.errstate(invalid="ignore", over="ignore"):
        y = mt.diff(mt.tensor([1.0, np.inf, np.inf, 1e308, -1e308], dtype=mt.float64))
    np.testing.assert_array_equal(y.numpy(), [np.inf, NAN, -np.inf, -np.inf], strict=False)


@settings(max_examples=30, deadline=None)
@given(data=array_and_dim())
def test_property_diff_undoes_cumsum(data):
    a, dim = data
    c = mt.cumsum(mt.tensor(a), dim)
    np.testing.assert_allclose(mt.diff(c, dim=dim).numpy(), np.take(a, np.arange(1, a.shape[dim]), axis=dim),
                               rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------ nansum, nanmean


def _with_nan(rng, shape=(3, 4)):
    a = rng.standard_normal(shape)
    a[0, 1] = a[2, 3] = NAN
    return a


@pytest.mark.parametrize("name", ["nansum", "nanmean"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (0, True), ((0, 1), False)])
def test_nan_reductions_match_torch_and_gradcheck(name, dim, keepdim, rng):
    a = _with_nan(rng)
    kw = {} if dim is None else dict(dim=dim, keepdim=keepdim)
    ours, theirs = getattr(mt, name), getattr(torch, name)
    for dtype in (np.float64, np.float32):
        compare_with_torch(lambda x: ours(x, **kw), lambda x: theirs(x, **kw), [a.astype(dtype)])
    clean = rng.standard_normal((3, 4))
    assert gradcheck(lambda t: ours(t, **kw), (t64(clean),))
    gradcheck_noncontiguous(lambda t: ours(t, **kw), [clean])


def test_nan_reductions_dtypes_and_edge_values():
    assert mt.nansum(mt.tensor([1, 2, 3])).item() == 6 and mt.nansum(mt.tensor([1, 2])).dtype == mt.int64
    assert mt.nansum(mt.tensor([1, 2]), dtype=mt.float32).dtype == mt.float32
    assert mt.nanmean(mt.tensor([1.0, 2.0]), dtype=mt.float64).dtype == mt.float64
    row = mt.tensor([[NAN, NAN], [1.0, np.inf]])
    np.testing.assert_array_equal(mt.nansum(row, 1).numpy(), [0.0, np.inf])
    assert np.isnan(mt.nanmean(row, 1).numpy()[0]) and mt.nanmean(row, 1).numpy()[1] == np.inf
    assert mt.nansum(mt.tensor([1.0, 2.0], dtype=mt.float16)).dtype == mt.float16
    x = mt.tensor([NAN, 1.0, 3.0], requires_grad=True)
    x.nanmean().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 0.5])
    with pytest.raises(TypeError, match="floating point or complex dtype"):
        mt.nanmean(mt.tensor([1, 2]))
    with pytest.raises(TypeError, match="Optional dtype must be either a floating"):
        mt.nanmean(mt.tensor([1.0]), dtype=mt.int64)


@settings(max_examples=30, deadline=None)
@given(shape=shapes, data=st.data())
def test_property_nansum_is_sum_of_the_non_nan(shape, data):
    a = data.draw(arrays(shape))
    a = np.where(a > 1.5, NAN, a)
    np.testing.assert_allclose(mt.nansum(mt.tensor(a)).item(), np.nansum(a), rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------ bincount, isin, unique_consecutive


def test_bincount_matches_torch_and_refuses_bad_input():
    x = [0, 1, 1, 3, 7]
    w = [0.5, 1.0, 2.0, -1.0, 3.0]
    for kw in ({}, {"minlength": 10}):
        np.testing.assert_array_equal(mt.bincount(mt.tensor(x), **kw).numpy(), torch.bincount(torch.tensor(x), **kw))
    for wd, want in ((mt.float32, mt.float32), (mt.float64, mt.float64), (mt.int64, mt.float64)):
        wm = mt.tensor(w).to(wd)
        got = mt.bincount(mt.tensor(x), weights=wm)
        assert got.dtype == want
        np.testing.assert_allclose(got.numpy(), torch.bincount(torch.tensor(x), torch.tensor(wm.numpy())).numpy())
    assert mt.bincount(mt.tensor([], dtype=mt.int64)).dtype == mt.int64
    with pytest.raises(RuntimeError, match="non-negative integral"):
        mt.bincount(mt.tensor([-1]))
    with pytest.raises(RuntimeError, match="non-negative integral"):
        mt.bincount(mt.tensor([1.0]))
    with pytest.raises(RuntimeError, match="non-negative integral"):
        mt.bincount(mt.tensor([[1]]))
    with pytest.raises(RuntimeError, match="minlength"):
        mt.bincount(mt.tensor([1]), minlength=-1)
    with pytest.raises(RuntimeError, match="same length as input"):
        mt.bincount(mt.tensor([1, 2]), weights=mt.ones(3))


def test_isin_matches_torch():
    x = torch.tensor([[0, 1], [3, 5]])
    for test, kw in (([1, 3], {}), ([1.0, 5.0], {}), ([1], {"invert": True}), ([0, 1, 3, 5], {"assume_unique": True})):
        want = torch.isin(x, torch.tensor(test), **kw)
        np.testing.assert_array_equal(mt.isin(mt.tensor(x.numpy()), mt.tensor(test), **kw).numpy(), want.numpy())
    assert mt.isin(mt.tensor([1, 2]), 2).numpy().tolist() == [False, True]
    assert mt.isin(2, mt.tensor([1, 2])).item() is True
    assert not mt.isin(mt.tensor([NAN]), mt.tensor([NAN])).item()
    with pytest.raises(TypeError, match="expected elements or test_elements to be a Tensor"):
        mt.isin(1, 2)


@pytest.mark.parametrize("values,dim", [([1, 1, 2, 2, 3, 1, 1], None), ([[1, 1], [1, 1], [2, 3]], 0),
                                        ([[1, 1], [1, 1], [2, 3]], 1), ([[1, 2], [1, 2]], None), (3, None),
                                        ([1.0, 1.0, NAN, NAN], None), ([], None)])
def test_unique_consecutive_matches_torch(values, dim):
    t = torch.tensor(values)
    want = torch.unique_consecutive(t, return_inverse=True, return_counts=True, dim=dim)
    got = mt.unique_consecutive(mt.tensor(t.numpy()), return_inverse=True, return_counts=True, dim=dim)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape) and str(g.dtype) == str(w.dtype).replace("torch.", "")
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert isinstance(mt.unique_consecutive(mt.tensor([1, 1])), mt.Tensor)


# ------------------------------------------------------------------ arguments that were missing


def test_add_sub_alpha_as_torch(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    for dtype in (np.float64, np.float32):
        compare_with_torch(lambda x, y: mt.add(x, y, alpha=2.5), lambda x, y: torch.add(x, y, alpha=2.5),
                           [a.astype(dtype), b.astype(dtype)])
        compare_with_torch(lambda x, y: x.sub(y, alpha=-3), lambda x, y: x.sub(y, alpha=-3),
                           [a.astype(dtype), b.astype(dtype)])
    assert mt.add(mt.tensor([1, 2]), mt.tensor([1, 2]), alpha=3).numpy().tolist() == [4, 8]
    assert mt.add(mt.tensor([1.0]), 2, alpha=3).item() == 7.0
    # PyTorch raises RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
        mt.add(mt.tensor([1, 2]), mt.tensor([1, 2]), alpha=0.5)
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
        torch.add(torch.tensor([1, 2]), torch.tensor([1, 2]), alpha=0.5)
    with pytest.raises(TypeError, match="'alpha' must be a Number, got str"):
        mt.add(mt.tensor([1.0]), mt.tensor([2.0]), alpha="2")
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -mt.tensor([True, False])
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -torch.tensor([True, False])


def test_softmax_dtype_where_uint8_and_cat_legacy_empty(rng):
    a = rng.standard_normal((2, 5)).astype(np.float32)
    compare_with_torch(lambda x: mt.log_softmax(x, 1, dtype=mt.float64),
                       lambda x: torch.log_softmax(x, 1, dtype=torch.float64), [a])
    compare_with_torch(lambda x: x.softmax(0, dtype=mt.float64), lambda x: x.softmax(0, dtype=torch.float64), [a])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = mt.where(mt.tensor([1, 0, 2], dtype=mt.uint8), mt.tensor([1.0, 2.0, 3.0]), 0.0)
    np.testing.assert_array_equal(got.numpy(), [1.0, 0.0, 3.0])
    with pytest.raises(TypeError, match="condition must be a bool tensor"):
        mt.where(mt.tensor([1, 0]), 1.0, 0.0)
    x = mt.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    y = mt.cat([mt.tensor([], dtype=mt.float64), x, mt.tensor([])])
    assert y.shape == (2, 3) and y.dtype == mt.float64
    e = mt.tensor([], requires_grad=True)
    mt.cat([e, x], 1).sum().backward()
    assert e.grad is not None and e.grad.shape == (0,)
    assert mt.cat([mt.tensor([]), mt.tensor([])]).shape == (0,)
    with pytest.raises(RuntimeError):
        mt.cat([mt.zeros(0, 3), mt.ones(2, 4)])


# ------------------------------------------------------------------ as_strided, embedding(scale_grad_by_freq=)


@pytest.mark.parametrize("size,stride,offset", [((3, 3), (3, 1), 0), ((2, 2), (1, 2), 1), ((3, 4), (2, 1), 0),
                                                ((2, 3), (0, 1), 2), ((0, 2), (1, 1), 12), ((), (), 5)])
def test_as_strided_matches_torch_and_gradcheck(size, stride, offset, rng):
    a = rng.standard_normal((3, 4))
    for dtype in (np.float64, np.float32):
        compare_with_torch(lambda x: mt.as_strided(x, size, stride, offset),
                           lambda x: torch.as_strided(x, size, stride, offset), [a.astype(dtype)])
    assert gradcheck(lambda t: t.as_strided(size, stride, offset), (t64(a),))
    assert gradgradcheck(lambda t: t.as_strided(size, stride, offset), (t64(a),))


def test_as_strided_views_writes_and_refusals():
    base = mt.zeros(4)
    base.as_strided((2,), (2,)).add_(1.0)
    np.testing.assert_array_equal(base.numpy(), [1.0, 0.0, 1.0, 0.0])
    with pytest.raises(RuntimeError, match="more than one element"):
        mt.as_strided(mt.zeros(4), (2, 2), (1, 1)).add_(1.0)  # overlapping: a write would hit one element twice
    with pytest.raises(RuntimeError, match="reach past the end"):
        mt.as_strided(mt.zeros(4), (5,), (1,))
    with pytest.raises(RuntimeError, match="not a view"):
        mt.as_strided(mt.zeros(4, 2).t(), (2,), (1,))
    with pytest.raises(RuntimeError, match="mismatch in length"):
        mt.as_strided(mt.zeros(4), (2,), (1, 2))
    with pytest.raises(RuntimeError, match=">= 0"):
        mt.as_strided(mt.zeros(4), (2,), (-1,), 3)


def test_embedding_scale_grad_by_freq_matches_torch(rng):
    w = rng.standard_normal((5, 3))
    ids = np.array([[0, 0, 1], [4, 0, 1]])
    compare_with_torch(lambda x: mt.nn.functional.embedding(mt.tensor(ids), x, scale_grad_by_freq=True),
                       lambda x: torch.nn.functional.embedding(torch.tensor(ids), x, scale_grad_by_freq=True), [w])
    got = mt.nn.functional.embedding(mt.tensor(ids), mt.tensor(w), None, None, 2.0, False, True)
    np.testing.assert_array_equal(got.numpy(), w[ids])


# ------------------------------------------------------------------ affine_grid, grid_sample

F = mt.nn.functional


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_matches_torch(mode, padding_mode, align_corners, rng):
    a, g = rng.standard_normal((2, 3, 5, 6)), rng.uniform(-1.3, 1.3, (2, 4, 3, 2))
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    for dtype in (np.float64, np.float32):
        compare_with_torch(lambda x, y: F.grid_sample(x, y, **kw), lambda x, y: torch.nn.functional.grid_sample(x, y, **kw),
                           [a.astype(dtype), g.astype(dtype)])


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_gradcheck_input_and_grid(padding_mode, rng):
    a, g = rng.standard_normal((1, 2, 4, 5)), rng.uniform(-1.2, 1.2, (1, 3, 2, 2))
    g = np.where(np.abs(g * 2 - np.round(g * 2)) < 0.05, g + 0.07, g)  # away from the pixel kinks
    assert gradcheck(lambda x, y: F.grid_sample(x, y, padding_mode=padding_mode, align_corners=False),
                     (t64(a), t64(g)))
    gradcheck_noncontiguous(lambda x: F.grid_sample(x, mt.tensor(g), align_corners=True), [a])


@pytest.mark.parametrize("align_corners", [True, False])
def test_affine_grid_matches_torch_and_identity_resamples_exactly(align_corners, rng):
    theta = rng.standard_normal((2, 2, 3))
    for dtype in (np.float64, np.float32):
        compare_with_torch(lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners),
                           lambda t: torch.nn.functional.affine_grid(t, (2, 3, 4, 5), align_corners), [theta.astype(dtype)])
    assert gradcheck(lambda t: F.affine_grid(t, (2, 1, 3, 2), align_corners), (t64(theta),))
    x = mt.tensor(rng.standard_normal((2, 3, 4, 5)))
    eye = mt.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    grid = F.affine_grid(eye, (2, 3, 4, 5), align_corners)
    np.testing.assert_allclose(F.grid_sample(x, grid, align_corners=align_corners).numpy(), x.numpy(), atol=1e-12)


def test_grid_sample_bad_input():
    x, g = mt.zeros(1, 1, 2, 2), mt.zeros(1, 2, 2, 2)
    with pytest.raises(ValueError, match="mode to be 'bilinear', 'nearest' or 'bicubic'"):
        F.grid_sample(x, g, mode="area")
    with pytest.raises(ValueError, match="padding_mode must be"):
        F.grid_sample(x, g, padding_mode="circular")
    with pytest.raises(RuntimeError, match="expected a 4-D input"):
        F.grid_sample(mt.zeros(1, 2, 2), g)
    with pytest.raises(RuntimeError, match="theta of shape"):
        F.affine_grid(mt.zeros(1, 3, 3), (1, 1, 2, 2))
    out = F.grid_sample(mt.ones(1, 1, 2, 2), mt.tensor([[[[5.0, 5.0], [np.inf, 0.0]]]]), align_corners=False)
    # far outside, or at infinity, with zeros padding reads 0 (PyTorch gives NaN at inf: a deliberate difference)
    assert out.numpy().ravel().tolist() == [0.0, 0.0]
