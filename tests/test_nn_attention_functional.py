"""F.multi_head_attention_forward: against PyTorch (float64/float32, random upstream gradient; packed and
separate projections, bias_k/bias_v, add_zero_attn, masks, dropout under one seed), gradcheck at a
non-contiguous query, Hypothesis over shapes, bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

F = torch.nn.functional
RNG = np.random.default_rng(59)
E, H, L, S, N = 4, 2, 3, 5, 2


def _call(lib, q, k, v, w_in, b_in, w_out, b_out, **kw):
    mod = lib.nn.functional
    kw.setdefault("need_weights", True)
    return mod.multi_head_attention_forward(q, k, v, E, H, w_in, b_in, kw.pop("bias_k", None), kw.pop("bias_v", None),
                                            kw.pop("add_zero_attn", False), kw.pop("dropout_p", 0.0), w_out, b_out,
                                            **kw)


def _arrays(dtype):
    shapes = ((L, N, E), (S, N, E), (S, N, E), (3 * E, E), (3 * E,), (E, E), (E,))
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kw", [{}, {"average_attn_weights": False}, {"add_zero_attn": True}])
def test_matches_torch(kw, dtype):
    compare_with_torch(lambda *a: _call(mt, *a, **dict(kw)), lambda *a: _call(torch, *a, **dict(kw)), _arrays(dtype))


def test_masks_bias_kv_and_separate_projections_match_torch():
    arrs = _arrays(np.float64)
    mask = RNG.standard_normal((L, S))
    kpm = np.zeros((N, S), dtype=bool)
    kpm[0, -1] = True
    bk, bv = RNG.standard_normal((1, 1, E)), RNG.standard_normal((1, 1, E))
    compare_with_torch(lambda *a: _call(mt, *a[:7], attn_mask=a[7], key_padding_mask=a[8], bias_k=a[9], bias_v=a[10]),
                       lambda *a: _call(torch, *a[:7], attn_mask=a[7], key_padding_mask=a[8], bias_k=a[9],
                                        bias_v=a[10]), arrs + [mask, kpm, bk, bv],
                       requires_grad=[True] * 7 + [False, False, True, True])
    wq, wk, wv = (RNG.standard_normal((E, E)) for _ in range(3))
    compare_with_torch(lambda q, k, v, a, b, c, d, e, f: _call(mt, q, k, v, None, None, c, d, use_separate_proj_weight=True,
                                                               q_proj_weight=a, k_proj_weight=b, v_proj_weight=e),
                       lambda q, k, v, a, b, c, d, e, f: _call(torch, q, k, v, None, None, c, d,
                                                               use_separate_proj_weight=True, q_proj_weight=a,
                                                               k_proj_weight=b, v_proj_weight=e),
                       arrs[:3] + [wq, wk, arrs[5], arrs[6], wv, arrs[4]])


def test_dropout_under_one_seed_matches_torch():
    def seeded(lib):
        def run(*a):
            lib.manual_seed(3)
            return _call(lib, *a, dropout_p=0.5, training=True)
        return run
    compare_with_torch(seeded(mt), seeded(torch), _arrays(np.float64))


def test_gradcheck_noncontiguous_and_no_weights():
    gradcheck_noncontiguous(lambda *a: _call(mt, *a)[0], _arrays(np.float64))
    out, weights = _call(mt, *(mt.tensor(a) for a in _arrays(np.float64)), need_weights=False)
    assert weights is None and tuple(out.shape) == (L, N, E)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_property_matches_torch(n, lq, ls, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((lq, n, E)), rng.standard_normal((ls, n, E))
    w = [rng.standard_normal(s) for s in ((3 * E, E), (3 * E,), (E, E), (E,))]
    ours = _call(mt, mt.tensor(q), mt.tensor(k), mt.tensor(k), *(mt.tensor(a) for a in w))
    theirs = _call(torch, torch.tensor(q), torch.tensor(k), torch.tensor(k), *(torch.tensor(a) for a in w))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-10, atol=1e-10)


def test_bad_input():
    q, k, v, w_in, b_in, w_out, b_out = (mt.tensor(a) for a in _arrays(np.float64))
    with pytest.raises(ValueError, match="was expecting embedding dimension of 6, but got 4"):
        mt.nn.functional.multi_head_attention_forward(q, k, v, 6, H, w_in, b_in, None, None, False, 0.0, w_out, b_out)
    with pytest.raises(ValueError, match="not divisible by num_heads"):
        mt.nn.functional.multi_head_attention_forward(q, k, v, E, 3, w_in, b_in, None, None, False, 0.0, w_out, b_out)
    with pytest.raises(NotImplementedError, match="static_k/static_v"):
        mt.nn.functional.multi_head_attention_forward(q, k, v, E, H, w_in, b_in, None, None, False, 0.0, w_out, b_out,
                                                      static_k=k)
    with pytest.raises(ValueError, match="q_proj_weight, k_proj_weight or v_proj_weight is None"):
        mt.nn.functional.multi_head_attention_forward(q, k, v, E, H, None, None, None, None, False, 0.0, w_out, b_out,
                                                      use_separate_proj_weight=True)
