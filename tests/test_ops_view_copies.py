"""The view-scatter ops (ops/view_scatter.py) and the ``*_copy`` twins and splits (ops/view_copies.py): float64
gradcheck (also at non-contiguous leaves), PyTorch in float64 and float32 with random upstream gradients, a
Hypothesis property, bad input, edge values."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from strategies import shape_dim_seed

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck

SCATTERS = [
    ("diagonal_scatter", lambda x, s: mt.diagonal_scatter(x, s, 1), lambda x, s: torch.diagonal_scatter(x, s, 1),
     [(3, 4), (3,)]),
    ("diagonal_scatter_dims", lambda x, s: mt.diagonal_scatter(x, s, -1, 2, 0),
     lambda x, s: torch.diagonal_scatter(x, s, -1, 2, 0), [(3, 2, 4), (2, 3)]),
    ("select_scatter", lambda x, s: mt.select_scatter(x, s, 1, -1), lambda x, s: torch.select_scatter(x, s, 1, -1),
     [(3, 4, 2), (3, 2)]),
    ("slice_scatter", lambda x, s: mt.slice_scatter(x, s, 1, 1, None, 2),
     lambda x, s: torch.slice_scatter(x, s, 1, 1, None, 2), [(2, 5), (2, 2)]),
    ("slice_scatter_default", mt.slice_scatter, torch.slice_scatter, [(3, 2), (3, 2)]),
    ("as_strided_scatter", lambda x, s: mt.as_strided_scatter(x, s, (2, 2), (1, 3), 1),
     lambda x, s: torch.as_strided_scatter(x, s, (2, 2), (1, 3), 1), [(3, 3), (2, 2)]),
]
COPIES = [
    ("expand_copy", lambda x: mt.expand_copy(x, (2, 3, -1)), lambda x: torch.expand_copy(x, (2, 3, -1)), (3, 1)),
    ("permute_copy", lambda x: mt.permute_copy(x, (2, 0, 1)), lambda x: torch.permute_copy(x, (2, 0, 1)), (2, 3, 4)),
    ("view_copy", lambda x: mt.view_copy(x, (4, -1)), lambda x: torch.view_copy(x, (4, -1)), (2, 6)),
    ("diagonal_copy", lambda x: mt.diagonal_copy(x, -1), lambda x: torch.diagonal_copy(x, -1), (4, 3)),
    ("alias_copy", mt.alias_copy, torch.alias_copy, (3,)),
    ("as_strided_copy", lambda x: mt.as_strided_copy(x, (2, 2), (2, 1)),
     lambda x: torch.as_strided_copy(x, (2, 2), (2, 1)), (6,)),
    ("squeeze_copy", lambda x: mt.squeeze_copy(x, 1), lambda x: torch.squeeze_copy(x, 1), (3, 1, 2)),
    ("unsqueeze_copy", lambda x: mt.unsqueeze_copy(x, -1), lambda x: torch.unsqueeze_copy(x, -1), (3, 2)),
    ("t_copy", mt.t_copy, torch.t_copy, (3, 2)),
    ("transpose_copy", lambda x: mt.transpose_copy(x, 0, 2), lambda x: torch.transpose_copy(x, 0, 2), (2, 3, 4)),
    ("unfold_copy", lambda x: mt.unfold_copy(x, 1, 2, 2), lambda x: torch.unfold_copy(x, 1, 2, 2), (2, 5)),
    ("narrow_copy", lambda x: mt.narrow_copy(x, 0, 1, 2), lambda x: torch.narrow_copy(x, 0, 1, 2), (4, 2)),
    ("unbind_copy", lambda x: mt.unbind_copy(x, 1), lambda x: torch.unbind_copy(x, 1), (2, 3)),
    ("split_with_sizes", lambda x: mt.split_with_sizes(x, [1, 3], 1), lambda x: torch.split_with_sizes(x, [1, 3], 1),
     (2, 4)),
    ("split_with_sizes_copy", lambda x: mt.split_with_sizes_copy(x, [2, 1]),
     lambda x: torch.split_with_sizes_copy(x, [2, 1]), (3, 2)),
    ("unsafe_split", lambda x: mt.unsafe_split(x, 2, 1), lambda x: torch.unsafe_split(x, 2, 1), (2, 5)),
    ("unsafe_chunk", lambda x: mt.unsafe_chunk(x, 3), lambda x: torch.unsafe_chunk(x, 3), (7, 2)),
]


@pytest.mark.parametrize("name,ours,theirs,shapes", SCATTERS, ids=[c[0] for c in SCATTERS])
def test_scatter_gradcheck(name, ours, theirs, shapes, rng):
    gradcheck_noncontiguous(ours, [rng.standard_normal(s) for s in shapes], gg=name == "select_scatter")


@pytest.mark.parametrize("name,ours,theirs,shapes", [c for c in SCATTERS if c[0] != "as_strided_scatter"],
                         ids=[c[0] for c in SCATTERS if c[0] != "as_strided_scatter"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scatter_matches_torch(name, ours, theirs, shapes, dtype, rng):
    compare_with_torch(ours, theirs, [rng.standard_normal(s).astype(dtype) for s in shapes])


def test_as_strided_scatter_values_match_torch_and_its_input_gradient_is_the_maths(rng):
    x, s = rng.standard_normal((3, 3)), rng.standard_normal((2, 2))
    ours = mt.as_strided_scatter(mt.tensor(x), mt.tensor(s), (2, 2), (1, 3), 1)
    np.testing.assert_array_equal(ours.numpy(), torch.as_strided_scatter(torch.tensor(x), torch.tensor(s), (2, 2),
                                                                         (1, 3), 1).numpy())
    # the overwritten elements do not reach the output: their gradient is 0 (finite differences agree,
    # test_scatter_gradcheck); PyTorch passes the upstream gradient to them (KNOWN in test_torch_op_db.py)
    xt = mt.tensor(x, requires_grad=True)
    mt.as_strided_scatter(xt, mt.tensor(s), (2, 2), (1, 3), 1).backward(mt.ones(3, 3, dtype="float64"))
    flat = np.ones(9)
    flat[[1, 4, 2, 5]] = 0.0  # offset 1 + i*1 + j*3
    np.testing.assert_array_equal(xt.grad.numpy(), flat.reshape(3, 3))


@pytest.mark.parametrize("name,ours,theirs,shape", COPIES, ids=[c[0] for c in COPIES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_copies_match_torch_and_own_their_memory(name, ours, theirs, shape, dtype, rng):
    x = rng.standard_normal(shape).astype(dtype)
    compare_with_torch(lambda t: tuple(_as_tuple(ours(t))), lambda t: tuple(_as_tuple(theirs(t))), [x])
    if "copy" in name:
        src = mt.tensor(x)
        for piece in _as_tuple(ours(src)):
            piece.array[...] = 7.0  # a copy: the input never changes
        np.testing.assert_array_equal(src.numpy(), x)


@pytest.mark.parametrize("name,ours,theirs,shape", COPIES[:6], ids=[c[0] for c in COPIES[:6]])
def test_copies_gradcheck(name, ours, theirs, shape, rng):
    if name == "as_strided_copy":  # as_strided needs memory of its own (a clear error on a view), so contiguous only
        assert gradcheck(ours, (t64(rng.standard_normal(shape)),))
        return
    gradcheck_noncontiguous(ours, [rng.standard_normal(shape)])


def _as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


@settings(max_examples=40, deadline=None)
@given(sds=shape_dim_seed())
def test_property_select_scatter_inverts_select(sds):
    shape, dim, seed = sds
    r = np.random.default_rng(seed)
    x = mt.tensor(r.standard_normal(shape))
    index = int(r.integers(0, shape[dim]))
    src = mt.tensor(r.standard_normal(tuple(x.select(dim, index).shape)))
    out = mt.select_scatter(x, src, dim, index)
    np.testing.assert_array_equal(out.select(dim, index).numpy(), src.numpy())
    mask = np.ones(shape, bool)
    np.moveaxis(mask, dim, 0)[index] = False
    np.testing.assert_array_equal(out.numpy()[mask], x.numpy()[mask])  # everything else unchanged


def test_edge_values_pass_through_unchanged():
    x = mt.tensor([[np.inf, np.nan], [-np.inf, 1e-310]], dtype="float64")
    out = mt.slice_scatter(x, mt.tensor([[np.nan, 0.0]], dtype="float64"), 0, 1)
    np.testing.assert_array_equal(out.numpy(), [[np.inf, np.nan], [np.nan, 0.0]])
    assert mt.diagonal_scatter(mt.zeros(2, 2, dtype="float16"), mt.tensor([1.0, 2.0])).dtype == np.float16


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match=r"expected src to have a size equal to the slice of self, \(3,\), but got \(2,\)"):
        mt.diagonal_scatter(mt.zeros(3, 3), mt.zeros(2))
    with pytest.raises(ValueError, match=r"slice step must be a positive integer, got 0"):
        mt.slice_scatter(mt.zeros(3), mt.zeros(1), 0, 0, 1, 0)
    with pytest.raises(RuntimeError, match=r"overlaps itself"):
        mt.as_strided_scatter(mt.zeros(4), mt.zeros(2, 2), (2, 2), (1, 1))
    with pytest.raises(TypeError, match=r"select_scatter\(\): argument 'src' must be a Tensor, not float"):
        mt.select_scatter(mt.zeros(3), 1.0, 0, 0)
    with pytest.raises(TypeError, match=r"split_with_sizes\(\): split_sizes must be a sequence of ints, got 2"):
        mt.split_with_sizes(mt.zeros(4), 2)
    with pytest.raises(RuntimeError, match=r"sum to 4"):
        mt.split_with_sizes(mt.zeros(4), [1, 2])
    with pytest.raises(TypeError, match=r"expand_copy\(\): argument 'input' must be a Tensor, not list"):
        mt.expand_copy([1.0], (2,))
