"""native_layer_norm, native_batch_norm, native_group_norm (ops/native_norms.py): PyTorch's tuples in float64 and
float32 (gradients of every output that carries one, random upstream gradients), gradcheck (non-contiguous too),
a Hypothesis property, bad input, edge values (eps <= 0 computed as the aten ops do)."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

CASES = [
    ("layer_norm", lambda x, w, b: mt.native_layer_norm(x, (3, 4), w, b, 1e-5),
     lambda x, w, b: torch.native_layer_norm(x, (3, 4), w, b, 1e-5), [(2, 3, 4), (3, 4), (3, 4)]),
    ("group_norm", lambda x, w, b: mt.native_group_norm(x, w, b, 2, 4, 5, 2, 1e-5),
     lambda x, w, b: torch.native_group_norm(x, w, b, 2, 4, 5, 2, 1e-5), [(2, 4, 5), (4,), (4,)]),
    ("batch_norm", lambda x, w, b: mt.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
     lambda x, w, b: torch.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5), [(4, 3, 2), (3,), (3,)]),
    ("layer_norm_eps0", lambda x, w, b: mt.native_layer_norm(x, (4,), w, b, 0.0),
     lambda x, w, b: torch.native_layer_norm(x, (4,), w, b, 0.0), [(3, 4), (4,), (4,)]),
]


@pytest.mark.parametrize("name,ours,theirs,shapes", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(name, ours, theirs, shapes, dtype, rng):
    compare_with_torch(ours, theirs, [rng.standard_normal(s).astype(dtype) for s in shapes],
                       rtol=1e-4 if dtype == np.float32 else None)


@pytest.mark.parametrize("name,ours,theirs,shapes", CASES[:3], ids=[c[0] for c in CASES[:3]])
def test_gradcheck(name, ours, theirs, shapes, rng):
    # every differentiable output at once: the output, and group norm's mean and rstd
    gradcheck_noncontiguous(lambda *t: tuple(o for o in ours(*t) if o.requires_grad),
                            [rng.standard_normal(s) for s in shapes])


def test_eval_batch_norm_uses_running_stats_and_returns_empty_stats(rng):
    x = rng.standard_normal((4, 3, 2)).astype(np.float32)
    rm, rv = mt.tensor([0.5, -1.0, 0.0]), mt.tensor([2.0, 1.0, 0.5])
    out, m, s = mt.native_batch_norm(mt.tensor(x), None, None, rm, rv, False, 0.1, 1e-5)
    want = (x - rm.numpy()[:, None]) / np.sqrt(rv.numpy()[:, None] + 1e-5)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)
    assert m.shape == (0,) and s.shape == (0,)
    # training updates the running statistics in place, as PyTorch
    rm2, rv2 = mt.zeros(3), mt.ones(3)
    mt.native_batch_norm(mt.tensor(x), None, None, rm2, rv2, True, 0.5, 1e-5)
    np.testing.assert_allclose(rm2.numpy(), 0.5 * x.mean((0, 2)), rtol=1e-5)


def test_edge_values():
    # eps < 0 is computed as the aten op does: var + eps < 0 gives NaN
    out, mean, rstd = mt.native_layer_norm(mt.tensor([[1.0, 1.0, 1.0]]), (3,), None, None, -0.5)
    assert np.isnan(out.numpy()).all() and mean.tolist() == [[1.0]] and np.isnan(rstd.item())
    out, mean, rstd = mt.native_layer_norm(mt.zeros(0, 4), (4,), None, None, 1e-5)
    assert out.shape == (0, 4) and mean.shape == (0, 1)
    out, mean, rstd = mt.native_group_norm(mt.tensor([[[np.inf, 1.0]]]), None, None, 1, 1, 2, 1, 1e-5)
    assert np.isnan(out.numpy()).all() and mean.item() == np.inf


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3), c=st.sampled_from([2, 4]), l=st.integers(2, 4), seed=st.integers(0, 10**6))
def test_property_group_stats_rebuild_the_output(n, c, l, seed):
    x = np.random.default_rng(seed).standard_normal((n, c, l))
    out, mean, rstd = mt.native_group_norm(mt.tensor(x), None, None, n, c, l, 2, 1e-5)
    xg = x.reshape(n, 2, -1)
    want = (xg - mean.numpy()[..., None]) * rstd.numpy()[..., None]
    np.testing.assert_allclose(out.numpy(), want.reshape(x.shape), atol=1e-10)


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match=r"N=2, C=3, HxW=4 do not describe an input of shape \(2, 3, 5\)"):
        mt.native_group_norm(mt.ones(2, 3, 5), None, None, 2, 3, 4, 1, 1e-5)
    with pytest.raises(TypeError, match="argument 'input' must be a Tensor, not list"):
        mt.native_group_norm([1.0], None, None, 1, 1, 1, 1, 1e-5)
    with pytest.raises(Exception, match="normalized_shape"):
        mt.native_layer_norm(mt.ones(2, 3), (4,), None, None, 1e-5)
