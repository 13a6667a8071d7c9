"""embedding_bag / nn.EmbeddingBag: against PyTorch (float64/float32, random upstream gradient; sum, mean,
max; 2-D input, offsets, include_last_offset, per_sample_weights, padding_idx, empty bags,
scale_grad_by_freq), gradcheck at a non-contiguous weight, hand-worked values, Hypothesis, bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

F = torch.nn.functional
RNG = np.random.default_rng(47)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}, {"include_last_offset": True}])
def test_offsets_match_torch(mode, kw, dtype):
    w = RNG.standard_normal((6, 3)).astype(dtype)
    ids = np.array([1, 2, 4, 5, 4, 3, 2, 9 % 6])
    offsets = np.array([0, 2, 2, 5]) if not kw.get("include_last_offset") else np.array([0, 2, 2, 5, 8])
    compare_with_torch(lambda i, v, o: mt.nn.functional.embedding_bag(i, v, o, mode=mode, **kw),
                       lambda i, v, o: F.embedding_bag(i, v, o, mode=mode, **kw), [ids, w, offsets],
                       requires_grad=[False, True, False])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_2d_input_and_per_sample_weights_match_torch(dtype):
    w = RNG.standard_normal((5, 4)).astype(dtype)
    ids = RNG.integers(0, 5, (3, 4))
    psw = RNG.standard_normal((3, 4)).astype(dtype)
    compare_with_torch(lambda i, v, p: mt.nn.functional.embedding_bag(i, v, mode="sum", per_sample_weights=p),
                       lambda i, v, p: F.embedding_bag(i, v, mode="sum", per_sample_weights=p), [ids, w, psw],
                       requires_grad=[False, True, True])
    for mode in ("mean", "max"):
        compare_with_torch(lambda i, v, m=mode: mt.nn.functional.embedding_bag(i, v, mode=m),
                           lambda i, v, m=mode: F.embedding_bag(i, v, mode=m), [ids, w], requires_grad=[False, True])


def test_module_matches_torch_and_hand_worked():
    torch.manual_seed(0)
    theirs = torch.nn.EmbeddingBag(6, 3, mode="max", padding_idx=1).double()
    ours = mt.nn.EmbeddingBag(6, 3, mode="max", padding_idx=1).double()
    ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    compare_with_torch(lambda i, o: ours(i, o), lambda i, o: theirs(i, o), [np.array([0, 1, 3, 1, 5]), np.array([0, 3])],
                       requires_grad=[False, False])
    assert repr(ours) == repr(theirs)
    # hand-worked: rows [1, 0], [3, 4], [5, -2]; bags {0, 1} and {2}: mean [2, 2] and [5, -2]; max [3, 4], [5, -2]
    w = mt.tensor([[1.0, 0.0], [3.0, 4.0], [5.0, -2.0]])
    ids, off = mt.tensor([0, 1, 2]), mt.tensor([0, 2])
    assert mt.nn.functional.embedding_bag(ids, w, off).numpy().tolist() == [[2.0, 2.0], [5.0, -2.0]]
    assert mt.nn.functional.embedding_bag(ids, w, off, mode="max").numpy().tolist() == [[3.0, 4.0], [5.0, -2.0]]


def test_gradcheck_noncontiguous():
    ids, off = np.array([0, 3, 1, 1, 2]), np.array([0, 2, 2])
    for mode in ("sum", "mean", "max"):
        gradcheck_noncontiguous(lambda v, i, o, mode=mode: mt.nn.functional.embedding_bag(i, v, o, mode=mode),
                                [RNG.standard_normal((4, 3)), ids, off], gg=True)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(0, 6), st.sampled_from(["sum", "mean", "max"]), st.integers(0, 2**31 - 1))
def test_property_matches_torch(bags, n_ids, mode, seed):
    rng = np.random.default_rng(seed)
    w, ids = rng.standard_normal((5, 2)), rng.integers(0, 5, n_ids)
    offsets = np.sort(rng.integers(0, n_ids + 1, bags))
    offsets[0] = 0
    ours = mt.nn.functional.embedding_bag(mt.tensor(ids), mt.tensor(w), mt.tensor(offsets), mode=mode).numpy()
    theirs = F.embedding_bag(torch.tensor(ids), torch.tensor(w), torch.tensor(offsets), mode=mode).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_bad_input():
    w = mt.zeros(4, 2)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        mt.nn.functional.embedding_bag(mt.tensor([[0, 1]]), w, mt.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        mt.nn.functional.embedding_bag(mt.tensor([0, 1]), w)
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        mt.nn.functional.embedding_bag(mt.tensor([0, 1]), w, mt.tensor([1]))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        mt.nn.functional.embedding_bag(mt.tensor([[0, 1]]), w, per_sample_weights=mt.ones(1, 2))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        mt.nn.functional.embedding_bag(mt.tensor([[0, 1]]), w, mode="min")
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq=True with a weight that requires grad"):
        mt.nn.functional.embedding_bag(mt.tensor([[0, 1]]), w.requires_grad_(), scale_grad_by_freq=True)
    ours = mt.nn.functional.embedding_bag(mt.tensor([[0, 1]]), w.detach(), scale_grad_by_freq=True)  # forward only
    assert ours.numpy().tolist() == [[0.0, 0.0]]
    with pytest.raises(IndexError, match="out of range"):
        mt.nn.functional.embedding_bag(mt.tensor([[0, 7]]), w)
