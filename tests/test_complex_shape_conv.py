"""Complex inputs of the padding, linear, convolution, fold/unfold, rearranging and indexing ops: values
and gradients against PyTorch (tests/helpers.py, random complex upstream gradients), complex gradcheck
(finite differences on the real and imaginary part of every element, docs/complex.md), a check that a
missing conjugate is caught, Hypothesis properties and bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import complex_arrays

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln.autograd import GradcheckError, gradcheck
from minitorch_ln.errors import DtypeError

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(7)


def cx(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


DTYPES = (np.complex128, np.complex64)


# ---------------------------------------------------------------- padding


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,pad", [("constant", (1, 2, -1, 1)), ("reflect", (2, 1, 1, 0)),
                                      ("replicate", (3, 0, 1, 2)), ("circular", (-1, 2, 1, 1))])
def test_pad_modes_match_torch(dtype, mode, pad):
    value = {"value": -1.5} if mode == "constant" else {}
    compare_with_torch(lambda x: F.pad(x, pad, mode=mode, **value), lambda x: TF.pad(x, pad, mode=mode, **value),
                       [cx(2, 3, 4, 5, dtype=dtype)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_constant_pad_nd_takes_a_complex_value(dtype):
    # torch.constant_pad_nd's value is a Scalar (complex allowed); F.pad's is a float (below: bad input)
    compare_with_torch(lambda x: mt.constant_pad_nd(x, (1, 2, 0, -1), 2 - 1j),
                       lambda x: torch.constant_pad_nd(x, (1, 2, 0, -1), 2 - 1j), [cx(3, 4, dtype=dtype)])


def test_pad_gradcheck_complex_noncontiguous():
    gradcheck_noncontiguous(lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"), [cx(2, 3, 4)], gg=True)
    gradcheck_noncontiguous(lambda x: F.pad(x, (1, -1), value=3.0), [cx(2, 4)])


# ---------------------------------------------------------------- linear and convolutions


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_matches_torch(dtype):
    compare_with_torch(F.linear, TF.linear, [cx(2, 3, 4, dtype=dtype), cx(5, 4, dtype=dtype), cx(5, dtype=dtype)])


def test_linear_gradcheck_complex():
    gradcheck_noncontiguous(F.linear, [cx(3, 4), cx(2, 4), cx(2)], gg=True)


CONVS = [
    (F.conv1d, TF.conv1d, (2, 4, 7), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    (F.conv2d, TF.conv2d, (2, 2, 5, 6), (3, 2, 2, 3), dict(padding=(1, 0), dilation=(1, 2))),
    (F.conv3d, TF.conv3d, (1, 2, 4, 4, 3), (2, 1, 2, 2, 2), dict(stride=(1, 2, 1), groups=2)),
    (F.conv_transpose1d, TF.conv_transpose1d, (2, 4, 5), (4, 3, 3), dict(stride=2, output_padding=1)),
    (F.conv_transpose2d, TF.conv_transpose2d, (1, 2, 3, 4), (2, 3, 2, 2), dict(stride=2, padding=1, dilation=1)),
    (F.conv_transpose3d, TF.conv_transpose3d, (1, 2, 2, 3, 2), (2, 2, 2, 1, 2), dict(groups=2)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ours,theirs,xs,ws,kw", CONVS, ids=[c[0].__name__ for c in CONVS])
def test_convolutions_match_torch(dtype, ours, theirs, xs, ws, kw):
    is_t = "transpose" in ours.__name__
    nb = ws[1] * kw.get("groups", 1) if is_t else ws[0]
    compare_with_torch(lambda x, w, b: ours(x, w, b, **kw), lambda x, w, b: theirs(x, w, b, **kw),
                       [cx(*xs, dtype=dtype), cx(*ws, dtype=dtype), cx(nb, dtype=dtype)])


@pytest.mark.parametrize("ours,xs,ws,kw", [(F.conv2d, (1, 2, 4, 3), (2, 2, 2, 2), dict(padding=1)),
                                           (F.conv_transpose1d, (1, 2, 4), (2, 1, 3), dict(stride=2))])
def test_convolution_gradcheck_and_gradgradcheck_complex(ours, xs, ws, kw):
    gradcheck_noncontiguous(lambda x, w: ours(x, w, **kw), [cx(*xs), cx(*ws)], gg=True)


def test_missing_conjugate_in_conv_backward_is_caught(monkeypatch):
    """With the conjugate of the saved operand removed (the real formula), gradcheck on complex input
    fails, while on real input it still passes: only a complex check can catch it."""
    from minitorch_ln.ops import convolution  # noqa: PLC0415

    x, w = cx(1, 2, 4, 4), cx(3, 2, 2, 2)
    assert gradcheck(F.conv2d, (t64(x), t64(w)))
    monkeypatch.setattr(convolution, "cj", lambda t: t)
    assert gradcheck(F.conv2d, (t64(x.real), t64(w.real)))
    with pytest.raises(GradcheckError):
        gradcheck(F.conv2d, (t64(x), t64(w)))


# ---------------------------------------------------------------- sliding blocks, rearranging


@pytest.mark.parametrize("dtype", DTYPES)
def test_unfold_fold_pixel_shuffle_rot90_block_diag_match_torch(dtype):
    x = cx(2, 3, 5, 4, dtype=dtype)
    compare_with_torch(lambda t: F.unfold(t, (2, 3), padding=1, stride=(2, 1)),
                       lambda t: TF.unfold(t, (2, 3), padding=1, stride=(2, 1)), [x])
    compare_with_torch(lambda t: F.fold(t, (4, 5), (2, 2)), lambda t: TF.fold(t, (4, 5), (2, 2)),
                       [cx(2, 12, 12, dtype=dtype)])
    compare_with_torch(lambda t: F.pixel_shuffle(t, 2), lambda t: TF.pixel_shuffle(t, 2), [cx(1, 8, 2, 3, dtype=dtype)])
    compare_with_torch(lambda t: F.pixel_unshuffle(t, 2), lambda t: TF.pixel_unshuffle(t, 2), [x[..., :4, :4]])
    compare_with_torch(lambda t: mt.rot90(t, 3, (1, 3)), lambda t: torch.rot90(t, 3, (1, 3)), [x])
    compare_with_torch(lambda a, b, c: mt.block_diag(a, b, c), lambda a, b, c: torch.block_diag(a, b, c),
                       [cx(2, 3, dtype=dtype), cx(4, dtype=dtype), cx(1, 1, dtype=dtype)])


def test_fold_unfold_gradcheck_complex():
    gradcheck_noncontiguous(lambda t: F.unfold(t, 2, dilation=2), [cx(1, 2, 4, 5)], gg=True)
    gradcheck_noncontiguous(lambda t: F.fold(t, (3, 4), 2), [cx(1, 8, 6)])
    gradcheck_noncontiguous(lambda t: F.pixel_shuffle(t, 2), [cx(1, 4, 2, 3)])


# ---------------------------------------------------------------- products, indexing


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_trace_dist_match_torch(dtype):
    compare_with_torch(lambda a, b: mt.linalg.cross(a, b), lambda a, b: torch.linalg.cross(a, b),
                       [cx(4, 3, dtype=dtype), cx(4, 3, dtype=dtype)])
    compare_with_torch(mt.trace, torch.trace, [cx(3, 4, dtype=dtype)])
    for p in (2, 1, 0.5, float("inf")):
        compare_with_torch(lambda a, b: mt.dist(a, b, p), lambda a, b: torch.dist(a, b, p),
                           [cx(3, 4, dtype=dtype), cx(4, dtype=dtype)])


def test_cross_gradcheck_catches_conjugate():
    # a, b non-real: cross's backward needs conj(b) × dc; the check below perturbs both parts
    gradcheck_noncontiguous(lambda a, b: mt.cross(a, b, dim=0), [cx(3, 2), cx(3, 2)], gg=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_indexing_ops_match_torch(dtype):
    x = cx(4, 5, dtype=dtype)
    idx = np.array([[0, 3, 1], [2, 2, 0]])
    compare_with_torch(lambda t, s: mt.scatter(t, 1, mt.tensor(idx), s),
                       lambda t, s: torch.scatter(t, 1, torch.tensor(idx), s), [x, cx(2, 3, dtype=dtype)])
    compare_with_torch(lambda t: mt.gather(t, 1, mt.tensor(idx)), lambda t: torch.gather(t, 1, torch.tensor(idx)), [x])
    rows = np.array([3, 0])
    compare_with_torch(lambda t, s: mt.index_copy(t, 0, mt.tensor(rows), s),
                       lambda t, s: torch.index_copy(t, 0, torch.tensor(rows), s), [x, cx(2, 5, dtype=dtype)])
    # a 0-d value tensor that requires grad: PyTorch's complex64 index_fill drops its imaginary part (its
    # own slip), so there the value is a Python complex number
    value = cx(dtype=dtype) if dtype == np.complex128 else complex(cx())
    compare_with_torch(lambda t, v: mt.index_fill(t, 1, mt.tensor(rows), v),
                       lambda t, v: torch.index_fill(t, 1, torch.tensor(rows), v), [x, value])
    mask = RNG.random((4, 5)) > 0.5
    compare_with_torch(lambda t: mt.masked_select(t, mt.tensor(mask)),
                       lambda t: torch.masked_select(t, torch.tensor(mask)), [x])
    compare_with_torch(lambda t, s: mt.masked_scatter(t, mt.tensor(mask), s),
                       lambda t, s: torch.masked_scatter(t, torch.tensor(mask), s), [x, cx(20, dtype=dtype)])


def test_scatter_reduce_prod_complex_gradient():
    x, src = cx(2, 4), cx(2, 3)
    idx = np.array([[0, 0, 2], [1, 3, 3]])
    for include_self in (True, False):
        compare_with_torch(lambda t, s: mt.scatter_reduce(t, 1, mt.tensor(idx), s, "prod", include_self=include_self),
                           lambda t, s: torch.scatter_reduce(t, 1, torch.tensor(idx), s, "prod",
                                                             include_self=include_self), [x, src],
                           requires_grad=[False, False])  # PyTorch has no complex gradient here; ours: gradcheck
        assert gradcheck(lambda t, s: mt.scatter_reduce(t, 1, mt.tensor(idx), s, "prod", include_self=include_self),
                         (t64(x), t64(src)))


# ---------------------------------------------------------------- properties


@settings(max_examples=25, deadline=None)
@given(complex_arrays(max_dims=3, max_side=4), st.integers(0, 3), st.integers(0, 3))
def test_property_constant_pad_is_adjoint_of_crop(a, lo, hi):
    """<pad(x), y> = <x, crop(y)> for the complex inner product, and the pad's gradient is the crop."""
    if a.ndim == 0:
        return
    x = mt.tensor(a, requires_grad=True)
    y = F.pad(x, (lo, hi))
    up = (RNG.standard_normal(y.shape) + 1j * RNG.standard_normal(y.shape))
    y.backward(mt.tensor(up))
    crop = up[..., lo:lo + a.shape[-1]]
    np.testing.assert_allclose(x.grad.numpy(), crop, rtol=1e-12)
    np.testing.assert_allclose(np.vdot(y.detach().numpy(), up), np.vdot(a, crop), rtol=1e-10)


@settings(max_examples=15, deadline=None)
@given(complex_arrays(max_dims=1, max_side=5), st.integers(1, 3))
def test_property_conv1d_is_correlation(w, n_extra):
    """conv1d of a complex signal is the cross-correlation sum_k w[k] x[i + k] (no conjugate: PyTorch's
    convolution is bilinear, not sesquilinear), and its input gradient is correlation with conj(w)."""
    w = np.atleast_1d(w)
    x = cx(len(w) + n_extra)
    want = np.array([np.sum(w * x[i:i + len(w)]) for i in range(n_extra + 1)])
    xt = mt.tensor(x[None, None], requires_grad=True)
    y = F.conv1d(xt, mt.tensor(w[None, None]))
    np.testing.assert_allclose(y.detach().numpy()[0, 0], want, rtol=1e-10, atol=1e-12)
    up = cx(n_extra + 1)
    y.backward(mt.tensor(up[None, None]))
    dx = np.zeros_like(x)
    for i in range(n_extra + 1):
        dx[i:i + len(w)] += up[i] * np.conj(w)
    np.testing.assert_allclose(xt.grad.numpy()[0, 0], dx, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- bad input


def test_bad_input_complex():
    x = mt.tensor(cx(2, 3, 4))
    with pytest.raises(RuntimeError, match="weight type"):
        F.conv1d(x, mt.tensor(RNG.standard_normal((2, 3, 2))))
    with pytest.raises(DtypeError, match="complex numbers have no order"):
        mt.scatter_reduce(x, 0, mt.zeros(1, 3, 4, dtype=mt.int64), x[:1], "amax")
    with pytest.raises(TypeError, match="must be float, not complex"):  # as PyTorch
        F.pad(x, (1, 1), value=1j)
    with pytest.raises(RuntimeError, match="padding size"):
        F.pad(x, (4, 0), mode="reflect")
