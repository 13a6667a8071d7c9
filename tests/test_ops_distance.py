"""normalize, cosine_similarity, pairwise_distance, cdist (ops/distance.py): gradcheck, PyTorch, properties, bad input, edges."""

import numpy as np
import pytest
from helpers import compare_with_torch, t64, torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.ops.distance import (
    cdist,
    cosine_similarity,
    normalize,
    pairwise_distance,
)

F = torch.nn.functional

# ---------------------------------------------------------------------------------------------------
# Strategies for this file
# ---------------------------------------------------------------------------------------------------

vec_shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


def _n(r, dt, *shape):
    return r.standard_normal(shape).astype(dt)


OPS = [
    ("normalize", lambda x: normalize(x), lambda x: F.normalize(x), lambda r, dt: [_n(r, dt, 3, 4)], True),
    ("normalize_p1_dim0", lambda x: normalize(x, 1, 0), lambda x: F.normalize(x, 1, 0),
     lambda r, dt: [_n(r, dt, 3, 4)], False),
    ("normalize_p3_neg", lambda x: normalize(x, 3.0, -1), lambda x: F.normalize(x, 3.0, -1),
     lambda r, dt: [_n(r, dt, 2, 3, 4)], True),
    ("cosine_similarity", lambda a, b: cosine_similarity(a, b), lambda a, b: F.cosine_similarity(a, b),
     lambda r, dt: [_n(r, dt, 3, 4), _n(r, dt, 3, 4)], True),
    ("cosine_similarity_bcast", lambda a, b: cosine_similarity(a, b, dim=-1),
     lambda a, b: F.cosine_similarity(a, b, dim=-1), lambda r, dt: [_n(r, dt, 2, 3, 4), _n(r, dt, 3, 1)], True),
    ("pairwise", lambda a, b: pairwise_distance(a, b), lambda a, b: F.pairwise_distance(a, b),
     lambda r, dt: [_n(r, dt, 5, 3), _n(r, dt, 5, 3)], True),
    ("pairwise_p1_keep_bcast", lambda a, b: pairwise_distance(a, b, 1.0, keepdim=True),
     lambda a, b: F.pairwise_distance(a, b, 1.0, keepdim=True), lambda r, dt: [_n(r, dt, 5, 3), _n(r, dt, 3)], False),
    ("pairwise_p3_1d", lambda a, b: pairwise_distance(a, b, 3.0), lambda a, b: F.pairwise_distance(a, b, 3.0),
     lambda r, dt: [_n(r, dt, 4), _n(r, dt, 4)], True),
    ("cdist", lambda a, b: cdist(a, b), lambda a, b: torch.cdist(a, b),
     lambda r, dt: [_n(r, dt, 4, 3), _n(r, dt, 5, 3)], True),
    ("cdist_batched_p1", lambda a, b: cdist(a, b, 1.0), lambda a, b: torch.cdist(a, b, 1.0),
     lambda r, dt: [_n(r, dt, 2, 4, 3), _n(r, dt, 1, 5, 3)], False),
    ("cdist_pinf", lambda a, b: cdist(a, b, float("inf")), lambda a, b: torch.cdist(a, b, float("inf")),
     lambda r, dt: [_n(r, dt, 4, 3), _n(r, dt, 2, 3)], False),
]
IDS = [o[0] for o in OPS]


@pytest.mark.parametrize("name,ours,theirs,make,gg", OPS, ids=IDS)
def test_gradcheck(name, ours, theirs, make, gg, rng):
    args = tuple(t64(a) for a in make(rng, np.float64))
    assert gradcheck(ours, args)
    if gg:
        assert gradgradcheck(ours, args)


@pytest.mark.parametrize("name,ours,theirs,make,gg", [o for o in OPS if o[2] is not None and "1d" not in o[0]],
                         ids=[i for i in IDS if "1d" not in i])
def test_gradcheck_non_contiguous_input(name, ours, theirs, make, gg, rng):
    arrays = make(rng, np.float64)
    x = t64(np.ascontiguousarray(np.swapaxes(arrays[0], 0, -1)))  # a contiguous leaf; the op sees its transpose
    rest = [t64(a) for a in arrays[1:]]
    assert gradcheck(lambda xt, *r: ours(xt.transpose(0, -1), *r), (x, *rest))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,make,gg", OPS, ids=IDS)
def test_matches_torch(name, ours, theirs, make, gg, dtype, rng):
    compare_with_torch(ours, theirs, make(rng, dtype))


# ---------------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------------


@given(shape=vec_shapes, seed=st.integers(0, 2**31 - 1), scale=st.sampled_from([1e-3, 1.0, 1e3]))
def test_normalize_and_cosine_properties(shape, seed, scale):
    r = np.random.default_rng(seed)
    x, y = r.standard_normal(shape) * scale, r.standard_normal(shape)
    dim = len(shape) - 1
    n = normalize(mt.tensor(x), dim=dim).array
    np.testing.assert_allclose(np.linalg.norm(n, axis=dim), 1.0, rtol=1e-10)
    c = cosine_similarity(mt.tensor(x), mt.tensor(y), dim=dim).array
    assert np.all(np.abs(c) <= 1.0 + 1e-12)
    np.testing.assert_allclose(cosine_similarity(mt.tensor(x), mt.tensor(x), dim=dim).array, 1.0, rtol=1e-12)
    np.testing.assert_allclose(c, F.cosine_similarity(torch.tensor(x), torch.tensor(y), dim=dim).numpy(), atol=1e-12)


@given(p=st.integers(2, 5), r_=st.integers(1, 5), m=st.integers(1, 4), seed=st.integers(0, 2**31 - 1),
       ord_=st.sampled_from([1.0, 2.0, 3.0]))
def test_cdist_matches_pairwise_and_torch(p, r_, m, seed, ord_):
    r = np.random.default_rng(seed)
    a, b = r.standard_normal((p, m)), r.standard_normal((r_, m))
    d = cdist(mt.tensor(a), mt.tensor(b), ord_).array
    np.testing.assert_allclose(d, torch.cdist(torch.tensor(a), torch.tensor(b), ord_).numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d[:, 0], pairwise_distance(mt.tensor(a), mt.tensor(b[:1]), ord_, eps=0.0).array,
                               rtol=1e-12)


# ---------------------------------------------------------------------------------------------------
# Edges
# ---------------------------------------------------------------------------------------------------


def test_zero_vectors_match_torch():
    z = np.zeros((2, 3))
    compare_with_torch(lambda a: normalize(a), lambda a: F.normalize(a), [z])
    compare_with_torch(lambda a, b: cosine_similarity(a, b), lambda a, b: F.cosine_similarity(a, b), [z, z + 1])
    compare_with_torch(lambda a, b: pairwise_distance(a, b), lambda a, b: F.pairwise_distance(a, b), [z, z])
    compare_with_torch(lambda a, b: cdist(a, b), lambda a, b: torch.cdist(a, b), [z, z])


def test_cosine_similarity_tiny_norm_gradient_as_torch():
    # PyTorch clamps the norms under no_grad, so the gradient is that of x/‖x‖ even below eps.
    compare_with_torch(lambda a, b: cosine_similarity(a, b), lambda a, b: F.cosine_similarity(a, b),
                       [np.array([[1e-9, 0.0, 0.0]]), np.array([[1.0, 2.0, 0.5]])], requires_grad=[True, False],
                       rtol=1e-8)


def test_integer_inputs_and_empty():
    compare_with_torch(lambda a, b: cosine_similarity(a, b, dim=0), lambda a, b: F.cosine_similarity(a, b, dim=0),
                       [np.array([1, 2]), np.array([1.0, 2.0])])
    e = np.zeros((0, 3))
    compare_with_torch(lambda a, b: pairwise_distance(a, b), lambda a, b: F.pairwise_distance(a, b), [e, e])
    compare_with_torch(lambda a: normalize(a), lambda a: F.normalize(a), [e])
    compare_with_torch(lambda a, b: cdist(a, b), lambda a, b: torch.cdist(a, b), [e, np.zeros((2, 3))])
    x16 = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float16)
    compare_with_torch(lambda a: normalize(a), lambda a: F.normalize(a), [x16])


def test_bad_input():
    z = mt.zeros(3, 2)
    with pytest.raises(IndexError, match="dimension 2 is out of range"):
        normalize(z, dim=2)
    with pytest.raises(TypeError, match="floating point or complex input, got int64"):
        normalize(mt.tensor([1, 2]), dim=0)
    with pytest.raises(RuntimeError, match="common dtype to be floating point, yet common dtype is int64"):
        cosine_similarity(mt.tensor([1, 2]), mt.tensor([1, 2]), dim=0)
    with pytest.raises(RuntimeError, match=r"shapes \(3, 2\) and \(4, 2\) do not broadcast"):
        cosine_similarity(z, mt.zeros(4, 2))
    with pytest.raises(RuntimeError, match=r"shapes \(3, 2\) and \(3,\) do not broadcast"):
        pairwise_distance(z, mt.zeros(3))
    with pytest.raises(RuntimeError, match="same number of columns. X1: 2 X2: 4"):
        cdist(z, mt.zeros(3, 4))
    with pytest.raises(RuntimeError, match="at least 2D tensors, X1 got: 1D"):
        cdist(mt.zeros(3), z)
    with pytest.raises(RuntimeError, match="non-negative p values, got p=-1"):
        cdist(z, z, p=-1)
    with pytest.raises(ValueError, match="'fast' is not a valid value for compute_mode"):
        cdist(z, z, compute_mode="fast")
    with pytest.raises(TypeError, match="x2 must be a Tensor, got list"):
        pairwise_distance(z, [1.0, 2.0])
