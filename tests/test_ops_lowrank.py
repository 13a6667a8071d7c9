"""pca_lowrank, the svd_lowrank under it (not a torch.* name here), and hash_tensor (ops/lowrank.py): PyTorch in float64/float32 (signs of singular vectors
normalized; exact agreement when rank <= q), gradients of a gauge-invariant rebuild (gradcheck, non-contiguous
too), Hypothesis properties, bad input, edge values."""

import numpy as np
import pytest
from helpers import assert_close, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.ops.lowrank import svd_lowrank


def _signed(u):
    return u * np.sign(u[np.argmax(np.abs(u), axis=0), np.arange(u.shape[1])])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch_for_low_rank_inputs(dtype, rng):
    a = (rng.standard_normal((6, 2)) @ rng.standard_normal((2, 5))).astype(dtype)  # rank 2 <= q
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-8, "atol": 1e-8}
    for ours, theirs in ((svd_lowrank(mt.tensor(a), q=3), torch.svd_lowrank(torch.tensor(a), q=3)),
                         (mt.pca_lowrank(mt.tensor(a), q=2, center=False), torch.pca_lowrank(torch.tensor(a), q=2,
                                                                                             center=False))):
        k = 2  # the third singular value is 0: its vectors are arbitrary
        assert_close(ours.S[:k], theirs[1][:k], dtype, "S", **tol)
        for i in (0, 2):
            np.testing.assert_allclose(_signed(ours[i].numpy()[:, :k]), _signed(theirs[i].numpy()[:, :k]), **tol)


def test_gradient_of_the_rank_q_rebuild(rng):
    def rebuilt(t):
        u, s, v = svd_lowrank(t, q=2)
        return (u * s) @ v.mT

    gradcheck_noncontiguous(rebuilt, [rng.standard_normal((4, 3))])


def test_hash_tensor_matches_torch(rng):
    for a in (rng.standard_normal((3, 4)), rng.standard_normal(5).astype(np.float32), rng.integers(-9, 9, (2, 3)),
              np.array([True, False, True])):
        for dim, keepdim in ((None, False), (1 if a.ndim > 1 else 0, True)):
            ours = mt.hash_tensor(mt.tensor(a), dim, keepdim=keepdim)
            theirs = torch.hash_tensor(torch.tensor(a), dim, keepdim=keepdim)
            assert ours.dtype == np.uint64
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_edge_values():
    assert mt.hash_tensor(mt.zeros(0)).item() == 0  # xor over nothing
    h = mt.hash_tensor(mt.tensor([np.nan, np.inf, -0.0], dtype="float64")).item()
    assert h == int(np.bitwise_xor.reduce(np.array([np.nan, np.inf, -0.0]).view(np.uint64)))
    _, s, _ = svd_lowrank(mt.zeros(3, 3), q=2)
    assert s.tolist() == [0.0, 0.0]


@settings(max_examples=25, deadline=None)
@given(m=st.integers(2, 5), n=st.integers(2, 5), seed=st.integers(0, 10**6))
def test_property_svd_lowrank_is_the_best_rank_q_approximation(m, n, seed):
    a = np.random.default_rng(seed).standard_normal((m, n))
    q = min(m, n) - 1
    u, s, v = svd_lowrank(mt.tensor(a), q=q)
    err = np.linalg.norm(a - (u.numpy() * s.numpy()) @ v.numpy().T, 2)
    assert err == pytest.approx(np.linalg.svd(a, compute_uv=False)[q], rel=1e-9)  # Eckart-Young


def test_bad_input_names_what_came():
    with pytest.raises(ValueError, match=r"q\(=4\) must be a non-negative integer and not greater than min\(m, n\)=3"):
        svd_lowrank(mt.ones(3, 5), q=4)
    with pytest.raises(ValueError, match="only mode=0"):
        mt.hash_tensor(mt.ones(2), mode=1)
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        mt.pca_lowrank(mt.ones(3))
