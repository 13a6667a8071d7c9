"""The views of ``ops/view_ops.py`` (diagonal, movedim, swapaxes, narrow, select, unbind, unflatten,
view_as, reshape_as) and the in-place scatter family, against PyTorch and finite differences."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.errors import IndexOutOfRangeError, ShapeError

import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch

SHAPE = (3, 4, 5)
# (name, ours, theirs): each a function of one (3, 4, 5) tensor
VIEWS = [
    ("diagonal", lambda x: x.diagonal(), lambda x: x.diagonal()),
    ("diagonal_offset", lambda x: mt.diagonal(x, 1, 1, 2), lambda x: torch.diagonal(x, 1, 1, 2)),
    ("diagonal_neg", lambda x: x.diagonal(-2, 2, 0), lambda x: x.diagonal(-2, 2, 0)),
    ("movedim", lambda x: x.movedim(0, -1), lambda x: x.movedim(0, -1)),
    ("movedim_many", lambda x: mt.movedim(x, (0, 1), (2, 0)), lambda x: torch.movedim(x, (0, 1), (2, 0))),
    ("swapaxes", lambda x: x.swapaxes(0, 2), lambda x: x.swapaxes(0, 2)),
    ("narrow", lambda x: x.narrow(2, 1, 3), lambda x: x.narrow(2, 1, 3)),
    ("narrow_neg", lambda x: mt.narrow(x, 1, -2, 2), lambda x: torch.narrow(x, 1, -2, 2)),
    ("select", lambda x: x.select(1, -1), lambda x: x.select(1, -1)),
    ("unbind", lambda x: mt.unbind(x, 2), lambda x: torch.unbind(x, 2)),
    ("unflatten", lambda x: x.unflatten(1, (2, -1)), lambda x: x.unflatten(1, (2, -1))),
    ("view_as", lambda x: x.view_as(mt.zeros(12, 5)), lambda x: x.view_as(torch.zeros(12, 5))),
    ("reshape_as", lambda x: x.transpose(0, 1).reshape_as(mt.zeros(60)), lambda x: x.transpose(0, 1).reshape_as(torch.zeros(60))),
]
IDS = [v[0] for v in VIEWS]


@pytest.mark.parametrize("name, ours, theirs", VIEWS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_views_match_torch(name, ours, theirs, dtype, rng):
    compare_with_torch(ours, theirs, [rng.standard_normal(SHAPE).astype(dtype)])


@pytest.mark.parametrize("name, ours, theirs", VIEWS[:-1], ids=IDS[:-1])  # reshape_as of a transpose copies, as PyTorch's
def test_views_share_memory_as_torch(name, ours, theirs, rng):
    x = mt.tensor(rng.standard_normal(SHAPE))
    outs = ours(x)
    for o in (outs if isinstance(outs, tuple) else (outs,)):
        assert np.shares_memory(o.array, x.array) and o._version is x._version


@pytest.mark.parametrize("name, ours, theirs", VIEWS, ids=IDS)
def test_views_gradcheck_and_noncontiguous(name, ours, theirs, rng):
    a = rng.standard_normal(SHAPE)
    assert gradcheck(ours, (t64(a),))
    assert gradgradcheck(ours, (t64(a),))
    if name != "view_as":  # view of a non-contiguous tensor raises, as PyTorch's
        gradcheck_noncontiguous(ours, [a], gg=True)


# unbind left out: PyTorch refuses in-place ops on the outputs of a multi-view function; here they are
# allowed (each output is select(dim, i), and its CopySlices gradient is select's), as for split
@pytest.mark.parametrize("name, ours, theirs", [v for v in VIEWS if v[0] not in ("reshape_as", "unbind")],
                         ids=[i for i in IDS if i not in ("reshape_as", "unbind")])
def test_in_place_on_the_view_rewrites_the_base_as_torch(name, ours, theirs, rng):
    # a = x * 1; view(a).mul_(w); (a * up).sum(): x.grad and w.grad as PyTorch's (CopySlices)
    a0, up = rng.standard_normal(SHAPE), rng.standard_normal(SHAPE)
    grads = []
    for lib, fn in ((mt, ours), (torch, theirs)):
        x = lib.tensor(a0, requires_grad=True)
        base = x * 1
        v = fn(base)
        v = v[0] if isinstance(v, tuple) else v
        w = lib.tensor(np.full(tuple(v.shape), 1.5), requires_grad=True)
        v.mul_(w)
        (base * lib.tensor(up)).sum().backward()
        grads.append((np.asarray(x.grad.numpy()), np.asarray(w.grad.numpy()), base.detach().numpy()))
    for ours_g, theirs_g in zip(*grads):
        np.testing.assert_allclose(ours_g, theirs_g, rtol=1e-12, atol=1e-12)


def test_diagonal_by_hand_and_its_edges():
    x = mt.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(x.diagonal().numpy(), [0.0, 5.0, 10.0])        # x[i, i]
    np.testing.assert_array_equal(x.diagonal(1).numpy(), [1.0, 6.0, 11.0])      # x[i, i + 1]
    np.testing.assert_array_equal(x.diagonal(-2).numpy(), [8.0])                 # x[i + 2, i]
    assert x.diagonal(4).shape == (0,) and x.diagonal(-3).shape == (0,)          # beyond the matrix: empty
    assert mt.zeros(0, 3).diagonal().shape == (0,)


@given(S.nonscalar_shapes, st.data())
def test_property_movedim_and_back_is_the_identity(shape, data):
    a = np.random.default_rng(0).standard_normal(shape)
    n = len(shape)
    src = data.draw(st.integers(-n, n - 1))
    dst = data.draw(st.integers(-n, n - 1))
    x = mt.tensor(a)
    np.testing.assert_array_equal(x.movedim(src, dst).numpy(), np.moveaxis(a, src, dst))
    np.testing.assert_array_equal(x.movedim(src, dst).movedim(dst, src).numpy(), a)


def test_views_bad_input():
    x = mt.zeros(3, 4)
    with pytest.raises(ShapeError, match="dim1 and dim2 cannot be the same dimension"):
        x.diagonal(0, 1, 1)
    with pytest.raises(ShapeError, match="at least 2 dims, got shape \\(3,\\)"):
        mt.zeros(3).diagonal()
    with pytest.raises(ShapeError, match="same number of dims as destination"):
        x.movedim((0, 1), 0)
    with pytest.raises(IndexOutOfRangeError, match="exceeds dimension size \\(4\\)"):
        x.narrow(1, 2, 3)
    with pytest.raises(IndexOutOfRangeError, match="index 3 out of range"):
        x.select(0, 3)
    with pytest.raises(ShapeError, match="don't multiply up to the size of dim 1 \\(4\\)"):
        x.unflatten(1, (3, 2))
    with pytest.raises(RuntimeError):  # ShapeError is a RuntimeError, as PyTorch's
        x.t().view_as(mt.zeros(12))


# -------------------------------------------------------------------------- the in-place scatter family

IDX = np.array([[0, 2, 1], [1, 0, 2]])
INPLACE = [
    ("scatter_", lambda x, s: x.scatter_(1, mt.tensor(IDX), s), lambda x, s: x.scatter_(1, torch.tensor(IDX), s)),
    ("scatter_value", lambda x, s: x.scatter_(1, mt.tensor(IDX), value=2.5) * s.sum(),
     lambda x, s: x.scatter_(1, torch.tensor(IDX), value=2.5) * s.sum()),
    ("scatter_add_", lambda x, s: x.scatter_add_(1, mt.tensor(IDX), s), lambda x, s: x.scatter_add_(1, torch.tensor(IDX), s)),
    ("scatter_reduce_", lambda x, s: x.scatter_reduce_(1, mt.tensor(IDX), s, "amax"),
     lambda x, s: x.scatter_reduce_(1, torch.tensor(IDX), s, "amax")),
    ("index_add_", lambda x, s: x.index_add_(1, mt.tensor([0, 2, 2]), s, alpha=2),
     lambda x, s: x.index_add_(1, torch.tensor([0, 2, 2]), s, alpha=2)),
    ("index_copy_", lambda x, s: x.index_copy_(1, mt.tensor([2, 0, 1]), s), lambda x, s: x.index_copy_(1, torch.tensor([2, 0, 1]), s)),
    ("index_fill_", lambda x, s: x.index_fill_(1, mt.tensor([1]), -1.0) * s.sum(),
     lambda x, s: x.index_fill_(1, torch.tensor([1]), -1.0) * s.sum()),
    ("index_put_", lambda x, s: x.index_put_((mt.tensor([0, 1, 1]), mt.tensor([2, 0, 0])), s[0], accumulate=True),
     lambda x, s: x.index_put_((torch.tensor([0, 1, 1]), torch.tensor([2, 0, 0])), s[0], accumulate=True)),
    ("masked_scatter_", lambda x, s: x.masked_scatter_(mt.tensor(IDX > 0), s),
     lambda x, s: x.masked_scatter_(torch.tensor(IDX > 0), s)),
]


@pytest.mark.parametrize("name, ours, theirs", INPLACE, ids=[i[0] for i in INPLACE])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_in_place_scatter_family_matches_torch(name, ours, theirs, dtype, rng):
    # on a non-leaf (x * 1), so the gradient flows through the in-place op to x and to the source
    compare_with_torch(lambda x, s: ours(x * 1, s), lambda x, s: theirs(x * 1, s),
                       [rng.standard_normal((2, 3)).astype(dtype), rng.standard_normal((2, 3)).astype(dtype)])


def test_index_put_accumulate_sums_repeats_by_hand():
    # positions 1 gets 2 + 3 (a repeated index adds up), 0 gets 1
    z = mt.zeros(4).index_put_((mt.tensor([0, 1, 1]),), mt.tensor([1.0, 2.0, 3.0]), accumulate=True)
    np.testing.assert_array_equal(z.numpy(), [1.0, 5.0, 0.0, 0.0])


def test_in_place_scatter_on_a_leaf_that_requires_grad_raises():
    x = mt.zeros(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place"):
        x.scatter_(1, mt.tensor(IDX), mt.ones(2, 3))
