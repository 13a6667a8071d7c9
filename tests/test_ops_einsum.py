"""einsum (ops/einsum.py): gradcheck to second order, PyTorch comparison, properties, bad input, edges."""

import string

import numpy as np
import pytest
from helpers import compare_with_torch, t64, torch
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.ops.einsum import einsum

# ---------------------------------------------------------------------------------------------------
# Strategies (this file only)
# ---------------------------------------------------------------------------------------------------


@st.composite
def einsum_cases(draw):
    """A random equation over letters a-e (repeats allowed, an optional explicit output, size-1 dims
    that broadcast) with the operand shapes that fit it."""
    letters = "abcde"
    size = {c: draw(st.integers(1, 3)) for c in letters}
    n_ops = draw(st.integers(1, 3))
    terms, shapes = [], []
    for _ in range(n_ops):
        term = "".join(draw(st.lists(st.sampled_from(letters), min_size=0, max_size=3)))
        terms.append(term)
        shapes.append(tuple(1 if draw(st.integers(0, 5)) == 0 and term.count(c) == 1 else size[c] for c in term))
    used = sorted(set("".join(terms)))
    eq = ",".join(terms)
    if draw(st.booleans()):
        eq += "->" + "".join(draw(st.permutations(used))[:draw(st.integers(0, len(used)))])
    return eq, shapes


# ---------------------------------------------------------------------------------------------------

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),          # matmul
    ("ij,jk", [(2, 3), (3, 4)]),              # implicit output
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("ii", [(3, 3)]),                          # trace
    ("ii->i", [(3, 3)]),                       # diagonal
    ("iij,jk->ik", [(2, 2, 3), (3, 2)]),       # a diagonal inside a product
    ("iji->j", [(2, 3, 2)]),
    ("...ij,...jk", [(3, 1, 2, 3), (2, 3, 2)]),  # ellipsis broadcasting
    ("i...->...", [(2, 3, 4)]),
    ("...,...->...", [(3,), (2, 1)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),           # a size-1 dim broadcasts
    ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij->", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("Ab,aB", [(2, 3), (2, 2)]),              # upper case sorts first
    ("bij,bjk,bkl->bil", [(2, 2, 3), (2, 3, 2), (2, 2, 2)]),
    ("i,i,i->", [(3,), (3,), (3,)]),           # the same letter in three operands
    ("", [()]),                                # a 0-d operand
    ("i,->i", [(3,), ()]),
]


@pytest.mark.parametrize("eq,shapes", CASES, ids=[c[0] or "scalar" for c in CASES])
def test_einsum_gradcheck_and_gradgradcheck(eq, shapes, rng):
    args = tuple(t64(rng.standard_normal(s)) for s in shapes)
    fn = lambda *t: einsum(eq, *t)
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


def test_einsum_gradcheck_non_contiguous(rng):
    a, b = t64(rng.standard_normal((3, 2))), t64(rng.standard_normal((4, 3, 3)))
    assert gradcheck(lambda x, y: einsum("ij,kjj->ik", x.transpose(0, 1), y.transpose(1, 2)), (a, b))
    assert gradgradcheck(lambda x, y: einsum("ij,kjj->ik", x.transpose(0, 1), y.transpose(1, 2)), (a, b))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("eq,shapes", CASES, ids=[c[0] or "scalar" for c in CASES])
def test_einsum_matches_torch(eq, shapes, dtype, rng, device):
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    compare_with_torch(lambda *t: einsum(eq, *t), lambda *t: torch.einsum(eq, *t), arrays, device=device)


def test_einsum_list_and_sublist_forms_and_spaces(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    compare_with_torch(lambda x, y: einsum("ij,jk->ik", [x, y]), lambda x, y: torch.einsum("ij,jk->ik", [x, y]), [a, b])
    compare_with_torch(lambda x, y: einsum(x, [0, 1], y, [1, 2], [0, 2]),
                       lambda x, y: torch.einsum(x, [0, 1], y, [1, 2], [0, 2]), [a, b])
    compare_with_torch(lambda x, y: einsum(x, [Ellipsis, 1], y, [1, 2]),
                       lambda x, y: torch.einsum(x, [Ellipsis, 1], y, [1, 2]), [a, b])
    compare_with_torch(lambda x, y: einsum(" i j , j k -> i k ", x, y),
                       lambda x, y: torch.einsum(" i j , j k -> i k ", x, y), [a, b])


def test_einsum_third_order_gradient(rng):
    # d³/dx³ of sum(x_i x_i x_i) = 6: each backward is an einsum of Tensors
    x = t64(rng.standard_normal(3))
    y = einsum("i,i,i->", x, x, x)
    (g,) = mt.autograd.grad(y, x, create_graph=True)
    (h,) = mt.autograd.grad(g.sum(), x, create_graph=True)
    (k,) = mt.autograd.grad(h.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    np.testing.assert_allclose(k.numpy(), np.full(3, 6.0))


def test_einsum_values_and_dtypes():
    a = mt.tensor(np.arange(9.0).reshape(3, 3))
    assert float(einsum("ii", a)) == 12.0
    np.testing.assert_array_equal(einsum("ii->i", a).numpy(), [0.0, 4.0, 8.0])
    ints = mt.tensor(np.arange(6).reshape(2, 3))
    out = einsum("ij->j", ints)
    assert out.dtype == np.int64 and out.tolist() == [3, 5, 7]
    mixed = einsum("i,i", mt.ones(3, dtype="float32"), mt.ones(3, dtype="float64"))
    assert mixed.dtype == np.float64 and float(mixed) == 3.0  # promoted, as PyTorch
    empty = einsum("ij,jk->ik", mt.ones(2, 0), mt.ones(0, 3))
    np.testing.assert_array_equal(empty.numpy(), np.zeros((2, 3)))  # a sum over nothing is 0
    assert einsum("ij->j", mt.ones(0, 3)).shape == (3,)
    inf = einsum("i,i", mt.tensor([np.inf, 1.0]), mt.tensor([1.0, 2.0]))
    assert float(inf) == np.inf
    nan = einsum("i->", mt.tensor([np.nan, 1.0]))
    assert np.isnan(float(nan))


def test_einsum_output_does_not_share_the_input_memory():
    a = mt.tensor(np.ones((2, 2)))
    for eq in ("ij->ji", "ii->i", "ij"):
        out = einsum(eq, a)
        assert not np.shares_memory(out.array, a.array)


def test_einsum_float16_forward():
    a = np.arange(6, dtype=np.float16).reshape(2, 3)
    out = einsum("ij->i", mt.tensor(a))
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.numpy(), torch.einsum("ij->i", torch.from_numpy(a)).numpy())


@given(einsum_cases())
def test_property_einsum_matches_torch(case):
    eq, shapes = case
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    compare_with_torch(lambda *t: einsum(eq, *t), lambda *t: torch.einsum(eq, *t), arrays)


@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4))
def test_property_einsum_is_matmul(n, k, m):
    rng = np.random.default_rng(n * 100 + k * 10 + m)
    a, b = rng.standard_normal((n, k)), rng.standard_normal((k, m))
    np.testing.assert_allclose(einsum("ij,jk", mt.tensor(a), mt.tensor(b)).numpy(), a @ b, rtol=1e-12, atol=1e-12)


BAD = [
    (("ij,jk", (2, 3), (4, 5)), "subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"),
    (("ij", (2,)), r"number of subscripts in the equation \(2\) does not match the number of dimensions \(1\) for operand 0"),
    (("ij->k", (2, 2)), "output subscript k does not appear in the equation for any input operand"),
    (("ij,jk", (2, 3)), r"fewer operands were provided than specified in the equation"),
    (("i", (2,), (2,)), r"more operands were provided than specified in the equation"),
    (("i->ii", (2,)), "output subscript i appears more than once in the output"),
    (("i1", (2,)), r"invalid subscript given at index 1 in the equation string, subscripts must be in \[a-zA-Z\]"),
    (("ii", (2, 3)), r"subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"),
    (("i..j", (2, 3)), "not part of any ellipsis"),
    (("......", (2, 3)), "more than one ellipsis"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[b[1][:30] for b in BAD])
def test_einsum_bad_input_raises_like_torch(args, message):
    eq, *shapes = args
    with pytest.raises(RuntimeError, match=message):
        einsum(eq, *[mt.ones(*s) for s in shapes])
    with pytest.raises(RuntimeError):
        torch.einsum(eq, *[torch.ones(*s) for s in shapes])


def test_einsum_bad_arguments():
    with pytest.raises(ValueError, match="must specify the equation string and at least one operand"):
        einsum("ij")
    with pytest.raises(TypeError, match="expected operand 0 to be a Tensor, got ndarray"):
        einsum("i", np.ones(2))
    with pytest.raises(RuntimeError, match="more than the 52 available"):
        einsum(string.ascii_letters + "...", mt.ones(*([1] * 53)))
