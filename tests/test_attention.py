"""scaled_dot_product_attention and MultiheadAttention: PyTorch parity, gradchecks, masks, causality."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from helpers import compare_with_torch, gradcheck_noncontiguous, noncontiguous_leaf, t64, to_torch, torch
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.nn import functional as F
from minitorch_ln.nn.attention import MultiheadAttention
from minitorch_ln.ops.attention import causal_mask
from parity import module_parity

# every test runs on both CPU kernel choices: the softmax rows compiled (kernels/cpu_softmax.py) and in NumPy
pytestmark = pytest.mark.usefixtures("cpu_kernels")

TF = torch.nn.functional
DTYPES = [np.float64, np.float32]


def randn(rng, *shape):
    return rng.standard_normal(shape)


# ==================================================================================================
# scaled_dot_product_attention
# ==================================================================================================


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "causal", "causal_rect"])
def test_sdpa_matches_torch(rng, dtype, mask_kind, device):
    B, H, L, S, E, Ev = 2, 3, 4, 5, 6, 7
    if mask_kind == "causal_rect":
        S = 3  # L > S: top-left aligned causal mask (every query still sees key 0)
    q, k, v = (randn(rng, B, H, n, d).astype(dtype) for n, d in ((L, E), (S, E), (S, Ev)))
    mask, kwargs = None, {}
    if mask_kind == "bool":
        mask = rng.random((L, S)) < 0.6
        mask[:, 0] = True  # no fully masked row: PyTorch returns NaN there
    elif mask_kind == "float":
        mask = randn(rng, B, 1, L, S).astype(dtype)
    elif mask_kind.startswith("causal"):
        kwargs["is_causal"] = True

    def ours(q, k, v):
        m = None if mask is None else mt.tensor(mask, device=device)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, **kwargs)

    def theirs(q, k, v):
        m = None if mask is None else to_torch(mask, device=q.device)
        return TF.scaled_dot_product_attention(q, k, v, attn_mask=m, **kwargs)

    compare_with_torch(ours, theirs, [q, k, v], device=device)


def test_sdpa_scale_and_broadcast_batch(rng):
    # query with batch dims (2, 3) against keys shared over the first batch dim: (1, 3)
    q, k, v = randn(rng, 2, 3, 4, 5), randn(rng, 1, 3, 6, 5), randn(rng, 1, 3, 6, 2)
    compare_with_torch(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.37),
        lambda q, k, v: TF.scaled_dot_product_attention(q.contiguous(), k.expand(2, -1, -1, -1),
                                                        v.expand(2, -1, -1, -1), scale=0.37),
        [q, k, v],
    )


def test_sdpa_learned_additive_mask_gets_its_gradient(rng):
    q, k, v, m = randn(rng, 2, 3, 4), randn(rng, 2, 5, 4), randn(rng, 2, 5, 3), randn(rng, 3, 5)
    compare_with_torch(
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        lambda q, k, v, m: TF.scaled_dot_product_attention(q, k, v, attn_mask=m),
        [q, k, v, m],
    )


def test_sdpa_gradcheck_and_gradgradcheck(rng):
    q, k, v = t64(randn(rng, 2, 3, 2)), t64(randn(rng, 2, 4, 2)), t64(randn(rng, 2, 4, 3))
    allowed = mt.tensor(np.array([[True, False, True, True], [False, False, False, False], [True, True, False, False]]))
    fm = t64(randn(rng, 3, 4))

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)

    assert gradcheck(f, (q, k, v))
    assert gradgradcheck(f, (q, k, v))
    assert gradcheck(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), (q, k, v, fm))
    assert gradgradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v))


def test_sdpa_fully_masked_row_gives_zeros_and_zero_grad(rng):
    q, k, v = (mt.tensor(randn(rng, 2, n, 3), requires_grad=True) for n in (3, 4, 4))
    allowed = np.ones((2, 3, 4), dtype=bool)
    allowed[0, 1] = False  # query 1 of batch 0 may attend to nothing
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mt.tensor(allowed))
    (out * mt.tensor(randn(rng, 2, 3, 3))).sum().backward()
    assert np.all(out.array[0, 1] == 0)
    assert np.all(q.grad.array[0, 1] == 0)
    for t in (out, q.grad, k.grad, v.grad):
        assert np.all(np.isfinite(t.array))
    # the other rows are untouched by the masked one: equal to PyTorch on the same inputs
    ref = TF.scaled_dot_product_attention(*(torch.from_numpy(t.array) for t in (q, k, v)),
                                          attn_mask=torch.from_numpy(allowed))
    keep = np.ones((2, 3), dtype=bool)
    keep[0, 1] = False
    np.testing.assert_allclose(out.array[keep], ref.numpy()[keep], rtol=1e-12, atol=1e-12)


def test_sdpa_dropout_scales_kept_weights(rng):
    L = S = 40
    q, k = mt.tensor(randn(rng, L, 4)), mt.tensor(randn(rng, S, 4))
    eye = mt.tensor(np.eye(S))  # value = identity: the output *is* the (dropped-out) weight matrix
    p = 0.3
    mt.manual_seed(5)
    out = F.scaled_dot_product_attention(q, k, eye, dropout_p=p).array
    weights = F.scaled_dot_product_attention(q, k, eye).array
    kept = out != 0
    np.testing.assert_allclose(out[kept], weights[kept] / (1 - p), rtol=1e-12)
    assert abs((~kept).mean() - p) < 0.05
    mt.manual_seed(5)
    np.testing.assert_array_equal(F.scaled_dot_product_attention(q, k, eye, dropout_p=p).array, out)


def test_causal_mask_is_cached_and_sliced():
    like = np.zeros(1, dtype=np.float32)
    a = causal_mask(5, 7, like)
    b = causal_mask(3, 3, like)
    assert a.shape == (5, 7) and b.shape == (3, 3)
    assert np.shares_memory(a, b)
    np.testing.assert_array_equal(np.isinf(a), ~np.tril(np.ones((5, 7), dtype=bool)))
    assert a.dtype == np.float32 and causal_mask(2, 2, np.zeros(1)).dtype == np.float64


@given(L=st.integers(2, 6), E=st.integers(1, 4), t=st.integers(0, 5), seed=st.integers(0, 2**16))
def test_sdpa_causal_output_ignores_later_positions(L, E, t, seed):
    t = t % L
    r = np.random.default_rng(seed)
    q, k, v = (r.standard_normal((2, L, E)) for _ in range(3))
    out1 = F.scaled_dot_product_attention(mt.tensor(q), mt.tensor(k), mt.tensor(v), is_causal=True).array
    k2, v2 = k.copy(), v.copy()
    k2[:, t + 1 :] = r.standard_normal(k2[:, t + 1 :].shape) * 10
    v2[:, t + 1 :] = r.standard_normal(v2[:, t + 1 :].shape) * 10
    q2 = q.copy()
    q2[:, t + 1 :] += 1.0
    out2 = F.scaled_dot_product_attention(mt.tensor(q2), mt.tensor(k2), mt.tensor(v2), is_causal=True).array
    np.testing.assert_array_equal(out1[:, : t + 1], out2[:, : t + 1])


@given(shape=st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3)),
       seed=st.integers(0, 2**16), density=st.floats(0.0, 1.0))
def test_sdpa_property_rows_are_convex_combinations(shape, seed, density):
    """Each output row is a convex combination of value rows (or zero when every key is masked)."""
    B, L, S, E = shape
    r = np.random.default_rng(seed)
    q, k = r.standard_normal((B, L, E)), r.standard_normal((B, S, E))
    v = r.standard_normal((B, S, E))
    allowed = r.random((B, L, S)) < density
    eye = np.broadcast_to(np.eye(S), (B, S, S))
    w = F.scaled_dot_product_attention(mt.tensor(q), mt.tensor(k), mt.tensor(eye), attn_mask=mt.tensor(allowed)).array
    assert np.all(np.isfinite(w)) and np.all(w >= 0)
    assert np.all(w[~allowed] == 0)
    sums = w.sum(-1)
    any_allowed = allowed.any(-1)
    np.testing.assert_allclose(sums[any_allowed], 1.0, rtol=1e-12)
    assert np.all(sums[~any_allowed] == 0)
    out = F.scaled_dot_product_attention(mt.tensor(q), mt.tensor(k), mt.tensor(v), attn_mask=mt.tensor(allowed)).array
    np.testing.assert_allclose(out, w @ v, rtol=1e-10, atol=1e-12)


def test_sdpa_bad_input(rng):
    q, k, v = mt.tensor(randn(rng, 2, 3, 4)), mt.tensor(randn(rng, 2, 5, 4)), mt.tensor(randn(rng, 2, 5, 6))
    with pytest.raises(ValueError, match=r"attn_mask of shape \(3, 4\).*\(2, 3, 5\)"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=mt.ones(3, 4, dtype=bool))
    with pytest.raises(ValueError, match="same last dimension E, got 4 and 3"):
        F.scaled_dot_product_attention(q, mt.tensor(randn(rng, 2, 5, 3)), v)
    with pytest.raises(ValueError, match="key .* and value"):
        F.scaled_dot_product_attention(q, k, mt.tensor(randn(rng, 2, 4, 6)))
    with pytest.raises(ValueError, match="either attn_mask or is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=mt.ones(3, 5, dtype=bool), is_causal=True)
    with pytest.raises(TypeError, match="bool and floating point masks.*int64"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=mt.ones(3, 5, dtype="int64"))
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\), got 1.5"):
        F.scaled_dot_product_attention(q, k, v, dropout_p=1.5)
    with pytest.raises(TypeError, match="floating point, got dtype int64"):
        F.scaled_dot_product_attention(mt.ones(2, 3, 4, dtype="int64"), k, v)


# ==================================================================================================
# MultiheadAttention
# ==================================================================================================

E, H, L, S, B = 8, 2, 5, 6, 3


def _mha_pair(**kw):
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(E, H, **kw)
    return MultiheadAttention(E, H, **kw), theirs


def _layout(bf, n, d, rng):
    return randn(rng, B, n, d) if bf else randn(rng, n, B, d)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("kind", ["self", "kv", "cross"])
def test_mha_matches_torch(rng, dtype, batch_first, kind, device):
    ours, theirs = _mha_pair(batch_first=batch_first)
    q = _layout(batch_first, L, E, rng)
    k = q if kind == "self" else _layout(batch_first, S, E, rng)
    v = k if kind in ("self", "kv") else _layout(batch_first, S, E, rng)
    module_parity(ours, theirs, [q, k, v], lambda m, q, k, v: m(q, k, v), dtype=dtype, device=device)


@pytest.mark.parametrize("kw", [dict(bias=False), dict(kdim=5, vdim=7), dict(add_bias_kv=True),
                                dict(add_zero_attn=True), dict(add_bias_kv=True, add_zero_attn=True)],
                         ids=["no_bias", "kdim_vdim", "bias_kv", "zero_attn", "bias_kv_zero_attn"])
def test_mha_options_match_torch(rng, kw):
    ours, theirs = _mha_pair(**kw)
    q = randn(rng, L, B, E)
    k, v = randn(rng, S, B, kw.get("kdim", E)), randn(rng, S, B, kw.get("vdim", E))
    mask = rng.random((L, S)) < 0.3
    mask[:, 0] = False
    module_parity(ours, theirs, [q, k, v, mask], lambda m, q, k, v, am: m(q, k, v, attn_mask=am))


def _masks(rng, kind, dtype):
    """(attn_mask, key_padding_mask) of one kind, with no fully masked row (True = blocked)."""
    am = kpm = None
    if kind in ("bool2d", "both_bool", "bool_kpm_float_am"):
        am = rng.random((L, S)) < 0.4
        am[:, 0] = False
    if kind == "bool3d":
        am = rng.random((B * H, L, S)) < 0.4
        am[..., 0] = False
    if kind in ("float2d", "both_float"):
        am = randn(rng, L, S).astype(dtype)
        am[rng.random((L, S)) < 0.3] = -np.inf
        am[:, 0] = 0.0
    if kind == "bool_kpm_float_am":
        am = np.where(am, -np.inf, randn(rng, L, S)).astype(dtype)
    if kind in ("kpm_bool", "both_bool", "bool_kpm_float_am"):
        kpm = np.zeros((B, S), dtype=bool)
        kpm[0, -2:] = True
        kpm[2, 1:3] = True
    if kind in ("kpm_float", "both_float"):
        kpm = np.zeros((B, S), dtype=dtype)
        kpm[1, -1] = -np.inf
        kpm[2] = randn(rng, S)
    return am, kpm


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["bool2d", "bool3d", "float2d", "kpm_bool", "kpm_float", "both_bool", "both_float",
                                  "bool_kpm_float_am"])
@pytest.mark.parametrize("average", [True, False])
@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
def test_mha_masks_match_torch(rng, dtype, kind, average, device):
    ours, theirs = _mha_pair(batch_first=True)
    q, k = randn(rng, B, L, E), randn(rng, B, S, E)
    am, kpm = _masks(rng, kind, dtype)
    module_parity(ours, theirs, [q, k, am, kpm],
                  lambda m, q, k, am, kpm: m(q, k, k, attn_mask=am, key_padding_mask=kpm, average_attn_weights=average),
                  dtype=dtype, device=device)


def test_mha_need_weights_false_and_causal(rng):
    ours, theirs = _mha_pair(batch_first=True)
    x = randn(rng, B, L, E)
    causal = np.triu(np.ones((L, L), dtype=bool), 1)
    module_parity(ours, theirs, [x, causal],
                  lambda m, x, c: m(x, x, x, attn_mask=c, need_weights=False, is_causal=True))
    # is_causal alone (PyTorch insists on the mask too): the same result as the explicit mask
    ours.zero_grad()
    xt = mt.tensor(x)
    a = ours(xt, xt, xt, is_causal=True)
    b = ours(xt, xt, xt, attn_mask=mt.tensor(causal))
    np.testing.assert_allclose(a[0].array, b[0].array, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(a[1].array, b[1].array, rtol=1e-13, atol=1e-13)


def test_mha_unbatched_matches_torch(rng):
    ours, theirs = _mha_pair()
    q, k = randn(rng, L, E), randn(rng, S, E)
    kpm = np.array([False, False, True, False, False, True])
    module_parity(ours, theirs, [q, k, kpm], lambda m, q, k, kpm: m(q, k, k, key_padding_mask=kpm))


def test_mha_fully_masked_key_padding_is_zero_and_finite(rng):
    """Batch 1 masks every key: its output is out_proj's bias, its gradient zero, nobody gets NaN."""
    ours = MultiheadAttention(E, H, batch_first=True)
    ours.in_proj_bias.array[:] = rng.standard_normal(3 * E)
    ours.out_proj.bias.array[:] = rng.standard_normal(E)
    x = mt.tensor(randn(rng, B, L, E).astype(np.float32), requires_grad=True)
    kpm = np.zeros((B, L), dtype=bool)
    kpm[1] = True
    out, w = ours(x, x, x, key_padding_mask=mt.tensor(kpm))
    (out * mt.tensor(randn(rng, B, L, E).astype(np.float32))).sum().backward()
    np.testing.assert_allclose(out.array[1], np.broadcast_to(ours.out_proj.bias.array, (L, E)), rtol=1e-6)
    assert np.all(w.array[1] == 0)
    assert np.all(x.grad.array[1] == 0)
    for p in [x.grad] + [p.grad for p in ours.parameters()]:
        assert np.all(np.isfinite(p.array))
    # the other batch elements agree with PyTorch
    theirs = torch.nn.MultiheadAttention(E, H, batch_first=True)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in ours.state_dict().items()})
    xt = torch.from_numpy(x.array)
    ref = theirs(xt, xt, xt, key_padding_mask=torch.from_numpy(kpm))[0].detach().numpy()
    np.testing.assert_allclose(out.array[[0, 2]], ref[[0, 2]], rtol=1e-5, atol=1e-6)


def test_mha_state_dict_and_init_mirror_torch():
    ours, theirs = _mha_pair(add_bias_kv=True)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    m = MultiheadAttention(64, 4)
    bound = np.sqrt(6 / (64 + 3 * 64))  # xavier_uniform on (3E, E)
    w = m.in_proj_weight.array
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.all(m.in_proj_bias.array == 0) and np.all(m.out_proj.bias.array == 0)
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    sep = MultiheadAttention(8, 2, kdim=3, vdim=5)
    assert sep.in_proj_weight is None and tuple(sep.k_proj_weight.shape) == (8, 3)
    assert "in_proj_weight" not in sep.state_dict()


def test_mha_gradcheck(rng):
    m = MultiheadAttention(4, 2, batch_first=True).double()
    x = t64(randn(rng, 2, 3, 4))
    mem = t64(randn(rng, 2, 4, 4))
    kpm = mt.tensor(np.array([[False, False, True, False], [True, False, False, False]]))
    params = tuple(m.parameters())

    def f(x, mem, *ps):  # ps are the module's own parameters: gradcheck perturbs them in place
        return m(x, mem, mem, key_padding_mask=kpm)

    assert gradcheck(f, (x, mem) + params)
    assert gradgradcheck(lambda x: m(x, x, x, is_causal=True, need_weights=False)[0], (x,))


@given(t=st.integers(0, 4), seed=st.integers(0, 2**16))
def test_mha_causal_output_ignores_later_positions(t, seed):
    r = np.random.default_rng(seed)
    mt.manual_seed(seed)
    m = MultiheadAttention(6, 3, batch_first=True).double()
    x = r.standard_normal((2, 5, 6))
    x2 = x.copy()
    x2[:, t + 1 :] = r.standard_normal(x2[:, t + 1 :].shape) * 5
    a = m(mt.tensor(x), mt.tensor(x), mt.tensor(x), is_causal=True)[0].array
    b = m(mt.tensor(x2), mt.tensor(x2), mt.tensor(x2), is_causal=True)[0].array
    np.testing.assert_allclose(a[:, : t + 1], b[:, : t + 1], rtol=1e-13, atol=1e-13)


def test_mha_dropout_only_in_training(rng):
    m = MultiheadAttention(E, H, dropout=0.5, batch_first=True).double()
    x = mt.tensor(randn(rng, B, L, E))
    m.eval()
    a = m(x, x, x)
    b = m(x, x, x)
    np.testing.assert_array_equal(a[0].array, b[0].array)
    m.train()
    _, w = m(x, x, x, average_attn_weights=False)
    vals = w.array[w.array != 0]
    assert (w.array == 0).mean() > 0.3  # dropped weights are returned as zeros (PyTorch returns them dropped too)
    assert vals.max() > 1.0 / L  # kept ones scaled by 1 / (1 - p)


def test_mha_bad_input(rng):
    with pytest.raises(ValueError, match="embed_dim must be divisible by num_heads, got embed_dim=10 and num_heads=3"):
        MultiheadAttention(10, 3)
    m = MultiheadAttention(E, H, batch_first=True)
    x = mt.tensor(randn(rng, B, L, E).astype(np.float32))
    with pytest.raises(ValueError, match=r"attn_mask must have shape \(L, S\) = \(5, 5\) .*\(6, 5, 5\), got \(4, 5\)"):
        m(x, x, x, attn_mask=mt.ones(4, 5, dtype=bool))
    with pytest.raises(ValueError, match=r"attn_mask .* got \(3, 5, 5\)"):
        m(x, x, x, attn_mask=mt.ones(3, 5, 5, dtype=bool))
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(B, S\) = \(3, 5\), got \(5, 3\)"):
        m(x, x, x, key_padding_mask=mt.ones(5, 3, dtype=bool))
    with pytest.raises(TypeError, match="only bool and floating point masks.*int64"):
        m(x, x, x, attn_mask=mt.zeros(5, 5, dtype="int64"))
    with pytest.raises(ValueError, match="must have last dimension 8, got 7"):
        m(mt.tensor(randn(rng, B, L, 7).astype(np.float32)), x, x)
    with pytest.raises(ValueError, match="different batch sizes 3 and 2"):
        y = mt.tensor(randn(rng, 2, L, E).astype(np.float32))
        m(x, y, y)
    with pytest.raises(ValueError, match=r"query must be \(B, L, E\) or unbatched \(L, E\), got shape \(8,\)"):
        m(mt.zeros(8), mt.zeros(8), mt.zeros(8))


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("case", ["bool_mask", "float_mask", "causal"])
def test_sdpa_gradcheck_noncontiguous_leaves(case, rng):
    allowed = mt.tensor(np.array([[True, False, True, True], [False, True, False, False], [True, True, False, False]]))
    arrays = [randn(rng, 2, 3, 2), randn(rng, 2, 4, 2), randn(rng, 2, 4, 3)]
    if case == "float_mask":
        fn = lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)  # noqa: E731
        arrays.append(randn(rng, 3, 4))
    else:
        kw = {"attn_mask": allowed} if case == "bool_mask" else {"is_causal": True}
        fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kw)  # noqa: E731
    gradcheck_noncontiguous(fn, arrays, gg=case != "float_mask")


def test_mha_gradcheck_noncontiguous_inputs_and_parameters(rng):
    m = MultiheadAttention(4, 2, batch_first=True).double()
    for p in m.parameters():  # the module's own parameters non-contiguous too
        p.array = noncontiguous_leaf(p.array).array
    kpm = mt.tensor(np.array([[False, False, True, False], [True, False, False, False]]))
    x, mem = noncontiguous_leaf(randn(rng, 2, 3, 4)), noncontiguous_leaf(randn(rng, 2, 4, 4))
    params = tuple(m.parameters())
    assert gradcheck(lambda x, mem, *ps: m(x, mem, mem, key_padding_mask=kpm), (x, mem) + params)
    assert gradgradcheck(lambda x: m(x, x, x, is_causal=True, need_weights=False)[0], (x,))


@pytest.mark.parametrize("L, S", [(3, 0), (0, 0), (0, 4)])
def test_attention_over_no_keys_or_no_queries_is_pytorchs(L, S):
    # S = 0 keys: every output row is 0 (PyTorch's result), gradients zero or empty; once a bare
    # NumPy "zero-size array to reduction operation maximum" error (found by the break-it trial)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((2, L, 4), (2, S, 4), (2, S, 5))]
    ours = [mt.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = F.scaled_dot_product_attention(*ours)
    out_t = torch.nn.functional.scaled_dot_product_attention(*theirs)
    g = rng.standard_normal(tuple(out_t.shape)).astype(np.float32)
    out.backward(mt.tensor(g))
    out_t.backward(torch.tensor(g))
    assert out.shape == tuple(out_t.shape) == (2, L, 5)
    np.testing.assert_array_equal(out.detach().numpy(), out_t.detach().numpy())
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
