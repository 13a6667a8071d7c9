"""LayerNorm, RMSNorm and BatchNorm ops and layers: gradients (first to third order), PyTorch, invariants, errors.

The kernels themselves (compact form vs chain rule, terms, threads, numerics) are tested in
``test_kernels_layer_norm.py``; here is everything seen through Tensors and modules, once with each
CPU kernel implementation (the ``cpu_kernels`` fixture: compiled loops and NumPy).
"""


import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln import nn
from minitorch_ln.autograd import grad, gradcheck, gradgradcheck
from minitorch_ln.ops.batch_norm import batch_norm_composed
from minitorch_ln.ops.layer_norm import layer_norm_composed
from minitorch_ln.ops.rms_norm import rms_norm_composed

from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch

pytestmark = pytest.mark.usefixtures("cpu_kernels")

TF = torch.nn.functional


def _params(rng, shape, affine, bias, dtype=np.float64):
    w = rng.standard_normal(shape).astype(dtype) if affine else None
    b = rng.standard_normal(shape).astype(dtype) if bias else None
    return w, b


# ==================================================================================================
# Gradient checks in float64: first and second order over shapes, dim= forms, affine, bias, eps
# ==================================================================================================

# (input shape, kwargs selecting the normalized axes, the parameters' shape)
LAYOUTS = [
    ((3, 4), dict(normalized_shape=4), (4,)),
    ((2, 3, 4), dict(normalized_shape=(4,)), (4,)),
    ((2, 3, 4), dict(normalized_shape=(3, 4)), (3, 4)),
    ((2, 2, 3), dict(normalized_shape=(2, 2, 3)), (2, 2, 3)),
    ((5,), dict(normalized_shape=5), (5,)),
    ((2, 3, 4), dict(dim=1), (3,)),                    # the channels of (N, C, L)
    ((2, 3, 2, 2), dict(dim=1), (3,)),                 # the channels of (N, C, H, W)
    ((2, 3, 4), dict(dim=(0, 2)), (2, 4)),
    ((2, 3, 4), dict(dim=-1), (4,)),
    ((2, 3, 2, 2), dict(dim=(1, 3)), (3, 2)),
]
LAYOUT_IDS = [f"{s}-{k}" for s, k, _ in LAYOUTS]


def _layer_norm_case(rng, shape, kw, pshape, affine, bias):
    """``(fn, inputs)`` for a float64 check of ``F.layer_norm`` with optional weight and bias."""
    w, b = _params(rng, pshape, affine, bias)
    x = t64(rng.standard_normal(shape))
    args = [x] + [t64(a) for a in (w, b) if a is not None]

    def fn(x, *p):
        it = iter(p)
        return F.layer_norm(x, weight=next(it) if affine else None, bias=next(it) if bias else None, **kw)

    return fn, tuple(args)


@pytest.mark.parametrize("shape,kw,pshape", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("affine,bias", [(True, True), (True, False), (False, True), (False, False)])
def test_layer_norm_gradcheck(shape, kw, pshape, affine, bias, rng):
    fn, args = _layer_norm_case(rng, shape, kw, pshape, affine, bias)
    assert gradcheck(fn, args)


@pytest.mark.parametrize("shape,kw,pshape", LAYOUTS[:3] + LAYOUTS[5:8], ids=LAYOUT_IDS[:3] + LAYOUT_IDS[5:8])
@pytest.mark.parametrize("affine,bias", [(True, True), (False, False), (False, True)])
def test_layer_norm_gradgradcheck(shape, kw, pshape, affine, bias, rng):
    fn, args = _layer_norm_case(rng, shape, kw, pshape, affine, bias)
    assert gradgradcheck(fn, args)


@pytest.mark.parametrize("eps", [1e-12, 1e-5, 1e-1])
@pytest.mark.parametrize("recompute_stats", [False, True])
def test_layer_norm_eps_gradcheck_and_gradgradcheck(eps, recompute_stats, rng):
    x, w, b = t64(rng.standard_normal((3, 5))), t64(rng.standard_normal(5)), t64(rng.standard_normal(5))
    fn = lambda x, w, b: F.layer_norm(x, 5, w, b, eps=eps, recompute_stats=recompute_stats)  # noqa: E731
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def _second_derivative(norm, v, u):
    """``(x, *params) -> ∂/∂(x, params) [uᵀ ∂(vᵀ norm)/∂x]``: a second derivative, built with create_graph."""

    def fn(x, *params):
        y = norm(x, *params)
        (gx,) = grad(y, [x], grad_outputs=[v], create_graph=True)
        return grad((gx * u).sum(), [x, *params], create_graph=True, allow_unused=True)

    return fn


def test_layer_norm_third_order_against_finite_differences(rng):
    # gradcheck of a second derivative = its finite differences checked against our third derivative.
    x, w, b = t64(rng.standard_normal((2, 5))), t64(rng.standard_normal(5)), t64(rng.standard_normal(5))
    v, u = mt.tensor(rng.standard_normal((2, 5))), mt.tensor(rng.standard_normal((2, 5)))
    assert gradcheck(_second_derivative(lambda x, w, b: F.layer_norm(x, 5, w, b), v, u), (x, w, b))
    xd = t64(rng.standard_normal((2, 3, 2)))
    vd, ud = mt.tensor(rng.standard_normal((2, 3, 2))), mt.tensor(rng.standard_normal((2, 3, 2)))
    assert gradcheck(_second_derivative(lambda x: F.layer_norm(x, dim=1), vd, ud), (xd,))


def test_layer_norm_third_order_matches_composed_torch_not_native(rng):
    # PyTorch 2.13's native CPU layer_norm gets the third derivative wrong: its backward's saved
    # statistics carry no history. A layer norm composed of primitive torch ops is right at every
    # order, and so must we be; finite differences (the test above) decide between them.
    x0, w0, b0 = rng.standard_normal((2, 5)), rng.standard_normal(5), rng.standard_normal(5)
    v0, u0, r0 = (rng.standard_normal((2, 5)) for _ in range(3))

    def torch_third(norm):
        x = torch.tensor(x0, requires_grad=True)
        w = torch.tensor(w0)
        (g,) = torch.autograd.grad(norm(x, w), x, torch.tensor(v0), create_graph=True)
        (gg,) = torch.autograd.grad((g * torch.tensor(u0)).sum(), x, create_graph=True)
        return torch.autograd.grad((gg * torch.tensor(r0)).sum(), x)[0].numpy()

    def composed(x, w):
        xc = x - x.mean(-1, keepdim=True)
        return xc * torch.rsqrt((xc * xc).mean(-1, keepdim=True) + 1e-5) * w + torch.tensor(b0)

    x = t64(x0)
    second = _second_derivative(lambda x: F.layer_norm(x, 5, mt.tensor(w0), mt.tensor(b0)), mt.tensor(v0), mt.tensor(u0))
    (gg,) = second(x)
    (ours,) = grad((gg * mt.tensor(r0)).sum(), [x])
    np.testing.assert_allclose(ours.array, torch_third(composed), rtol=1e-9, atol=1e-10)
    native = torch_third(lambda x, w: TF.layer_norm(x, (5,), w, torch.tensor(b0)))
    if np.allclose(native, ours.array, rtol=1e-6, atol=1e-8):  # pragma: no cover - a future PyTorch fixed it
        pytest.skip("PyTorch's native layer_norm third derivative is right in this version")


# ==================================================================================================
# Fused vs composed, and the two save-for-backward options
# ==================================================================================================


@pytest.mark.parametrize("shape,kw,pshape", LAYOUTS, ids=LAYOUT_IDS)
def test_fused_equals_composed_values_and_gradients(shape, kw, pshape, rng):
    x0, w0, b0, up = rng.standard_normal(shape), rng.standard_normal(pshape), rng.standard_normal(pshape), \
        rng.standard_normal(shape)
    results = []
    for fn in (F.layer_norm, layer_norm_composed):
        x, w, b = t64(x0), t64(w0), t64(b0)
        y = fn(x, weight=w, bias=b, **kw)
        y.backward(mt.tensor(up))
        results.append([y.array, x.grad.array, w.grad.array, b.grad.array])
    for a, c in zip(*results):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)


def test_fused_is_one_graph_node():
    x = mt.randn(2, 3, 4, requires_grad=True)
    y = F.layer_norm(x, 4, mt.ones(4, requires_grad=True), mt.zeros(4, requires_grad=True))
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
    assert all(e is None or e[0].name() == "AccumulateGrad" for e in y.grad_fn.next_edges)


def _saved_bytes(t):
    return sum(s.array.nbytes for s in t.grad_fn.saved_tensors if s is not None)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_recompute_stats_same_gradients_fewer_bytes(dtype, rng):
    B, L, D = 4, 6, 8
    x0, up = rng.standard_normal((B, L, D)).astype(dtype), rng.standard_normal((B, L, D)).astype(dtype)
    grads, kept = [], []
    for recompute in (False, True):
        x, w = mt.tensor(x0, requires_grad=True), mt.ones(D, dtype=dtype, requires_grad=True)
        y = F.layer_norm(x, D, w, recompute_stats=recompute)
        kept.append(_saved_bytes(y))
        y.backward(mt.tensor(up))
        grads.append((x.grad.array, w.grad.array))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])
    stat_bytes = 4 if dtype == np.float16 else np.dtype(dtype).itemsize  # float16 keeps float32 statistics
    assert kept[1] == x0.nbytes + D * np.dtype(dtype).itemsize               # x and weight
    assert kept[0] - kept[1] == 2 * B * L * stat_bytes                      # + mean and rstd, (B, L, 1) each


def test_saved_statistics_have_keepdim_shape_and_float32_for_half():
    x = mt.randn(2, 3, 4, dtype=mt.float16, requires_grad=True)
    y = F.layer_norm(x, 4)
    _, _, mean, rstd = y.grad_fn.saved_tensors
    assert mean.shape == rstd.shape == (2, 3, 1) and mean.dtype == rstd.dtype == np.float32
    y2 = F.layer_norm(mt.randn(2, 3, 4, requires_grad=True), None, dim=(0, 2))
    assert y2.grad_fn.saved_tensors[2].shape == (1, 3, 1)


# ==================================================================================================
# PyTorch: float64 and float32, random upstream gradients, random weight and bias
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,nshape", [((4, 6, 16), (16,)), ((3, 5, 4), (5, 4)), ((7, 2), (2,)), ((2, 3, 33), (33,))])
@pytest.mark.parametrize("affine,bias", [(True, True), (True, False), (False, False), (False, True)])
def test_layer_norm_matches_torch(dtype, shape, nshape, affine, bias, device, rng):
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    w, b = _params(rng, nshape, affine, bias, dtype)
    arrays = [x] + [a for a in (w, b) if a is not None]

    def call(lib_ln):
        def f(x, *p):
            it = iter(p)
            return lib_ln(x, nshape, next(it) if affine else None, next(it) if bias else None, 1e-5)
        return f

    compare_with_torch(call(F.layer_norm), call(TF.layer_norm), arrays, device=device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("dim", [1, (0, 2)])
def test_layer_norm_dim_matches_torch_on_moved_axes(dtype, dim, rng):
    # PyTorch has no dim=: move the axes last, normalize the trailing dims, move them back.
    x = rng.standard_normal((3, 4, 5)).astype(dtype)
    dims = (dim,) if isinstance(dim, int) else dim
    keep = [i for i in range(3) if i not in dims]
    perm = keep + list(dims)
    pshape = tuple(x.shape[d] for d in dims)
    w, b = rng.standard_normal(pshape).astype(dtype), rng.standard_normal(pshape).astype(dtype)

    def theirs(x, w, b):
        return TF.layer_norm(x.permute(*perm), pshape, w, b).permute(*np.argsort(perm).tolist())

    compare_with_torch(lambda x, w, b: F.layer_norm(x, dim=dim, weight=w, bias=b), theirs, [x, w, b])


def test_normalized_size_one_gives_bias_and_zero_gradients(rng):
    # Every row of one element normalizes to xhat = 0, so y = bias and dx = dweight = 0 exactly.
    # PyTorch's CPU kernel returns gradients of rounding size there (about 1e-15 in float64, 3e-5
    # in float32), so it is left out of the torch comparisons; the math and float64 finite
    # differences say 0.
    x, w, b = t64(rng.standard_normal((6, 1)) * 100), t64([1.7]), t64([0.3])
    y = F.layer_norm(x, 1, w, b)
    np.testing.assert_array_equal(y.array, np.full((6, 1), 0.3))
    y.backward(mt.tensor(rng.standard_normal((6, 1))))
    assert np.all(x.grad.array == 0) and np.all(w.grad.array == 0)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, 1, w, b), (t64(rng.standard_normal((3, 1))), t64([2.0]), t64([1.0])))


@pytest.mark.parametrize("shape,nshape", [((2, 0), (0,)), ((3, 0, 2), (0, 2)), ((0, 0), (0,)), ((0, 4), (4,))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_layer_norm_and_rms_norm_over_zero_elements_are_empty_as_torch(shape, nshape, dtype, rng):
    # nothing to normalize: PyTorch returns an empty tensor of the input's shape, and empty gradients
    # for the input and the (empty) weight and bias; this raised a ValueError
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in (shape, nshape, nshape))
    compare_with_torch(lambda t, g, c: F.layer_norm(t, nshape, g, c),
                       lambda t, g, c: torch.nn.functional.layer_norm(t, nshape, g, c), [x, w, b])
    compare_with_torch(lambda t: F.layer_norm(t, nshape), lambda t: torch.nn.functional.layer_norm(t, nshape), [x])
    compare_with_torch(lambda t, g: F.rms_norm(t, nshape, g), lambda t, g: torch.nn.functional.rms_norm(t, nshape, g),
                       [x, w])
    assert F.layer_norm(mt.zeros(*shape), nshape).shape == shape


def test_plain_sum_loss_with_unit_gamma_gives_zero_input_gradient(rng):
    # Why every check here uses a random upstream gradient: with dy = 1 and γ = 1, dxhat is
    # constant on each row, so dx = rstd·(1 - 1 - xhat·mean(xhat)) = 0 (docs, section 5).
    x = t64(rng.standard_normal((4, 8)))
    F.layer_norm(x, 8).sum().backward()
    np.testing.assert_allclose(x.grad.array, 0, atol=1e-14)


@pytest.mark.parametrize("D", [8, 64])
def test_float16_rule_against_float64_reference(D, rng):
    x0 = (rng.standard_normal((5, D)) * 4 + 2).astype(np.float16)
    w0, b0 = rng.standard_normal(D).astype(np.float16), rng.standard_normal(D).astype(np.float16)
    up = rng.standard_normal((5, D)).astype(np.float16)
    x, w, b = (mt.tensor(a, requires_grad=True) for a in (x0, w0, b0))
    y = F.layer_norm(x, D, w, b)
    y.backward(mt.tensor(up))
    assert y.dtype == x.grad.dtype == w.grad.dtype == b.grad.dtype == np.float16
    xr, wr, br = (torch.tensor(a.astype(np.float64), requires_grad=True) for a in (x0, w0, b0))
    yr = TF.layer_norm(xr, (D,), wr, br)
    yr.backward(torch.tensor(up.astype(np.float64)))
    for ours, ref in ((y, yr), (x.grad, xr.grad), (w.grad, wr.grad), (b.grad, br.grad)):
        ref = ref.detach().numpy()
        # float16 keeps 11 bits: within a few units in the last place of the result's scale
        np.testing.assert_allclose(ours.array.astype(np.float64), ref, atol=4e-3 * max(1.0, np.abs(ref).max()))


def test_float16_input_with_float32_parameters(rng):
    x = mt.tensor(rng.standard_normal((3, 8)).astype(np.float16), requires_grad=True)
    w, b = mt.ones(8, requires_grad=True), mt.zeros(8, requires_grad=True)  # float32
    y = F.layer_norm(x, 8, w, b)
    y.backward(mt.tensor(rng.standard_normal((3, 8)).astype(np.float16)))
    assert y.dtype == x.grad.dtype == np.float16 and w.grad.dtype == b.grad.dtype == np.float32


# ==================================================================================================
# Hypothesis: stress inputs and invariants
# ==================================================================================================


def _ref_layer_norm_f64(x, w, b, eps):
    x = x.astype(np.float64)
    xc = x - x.mean(-1, keepdims=True)
    return xc / np.sqrt((xc * xc).mean(-1, keepdims=True) + eps) * w + b


@given(st.integers(2, 40), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_large_mean_tiny_spread_float32(D, N, seed):
    # 1e4 + 1e-3·noise in float32: the spread is about one unit in the last place of the mean.
    rng = np.random.default_rng(seed)
    x0 = (1e4 + 1e-3 * rng.standard_normal((N, D))).astype(np.float32)
    up = rng.standard_normal((N, D)).astype(np.float32)
    w0, b0 = rng.standard_normal(D).astype(np.float32), rng.standard_normal(D).astype(np.float32)
    x, w, b = (mt.tensor(a, requires_grad=True) for a in (x0, w0, b0))
    y = F.layer_norm(x, D, w, b)
    y.backward(mt.tensor(up))
    xr, wr, br = (torch.tensor(a.astype(np.float64), requires_grad=True) for a in (x0, w0, b0))
    yr = TF.layer_norm(xr, (D,), wr, br)  # the same float32 inputs, normalized in float64
    yr.backward(torch.tensor(up.astype(np.float64)))
    np.testing.assert_allclose(y.array, yr.detach().numpy(), atol=2e-4 * (1 + np.abs(w0).max()))
    np.testing.assert_allclose(w.grad.array, wr.grad.numpy(), rtol=1e-3, atol=1e-3 * np.sqrt(N))
    dx_ref = xr.grad.numpy()
    np.testing.assert_allclose(x.grad.array, dx_ref, rtol=1e-3, atol=1e-4 * np.abs(dx_ref).max())


@given(st.integers(1, 30), st.floats(-1e4, 1e4, width=32), st.sampled_from([np.float16, np.float32, np.float64]),
       st.sampled_from([1e-12, 1e-5, 1e-1]))
def test_constant_rows_give_exactly_bias(D, value, dtype, eps):
    if dtype == np.float16:
        # dx on a constant row is rstd·(dxhat - mean(dxhat)) with rstd = 1/sqrt(eps): 1e6 for
        # eps = 1e-12, a true value that float16 (max 65504) cannot hold.
        eps = max(eps, 1e-5)
    x0 = np.full((3, D), value, dtype=dtype)
    x0[1] = 0  # an all-zero row too
    b0 = np.linspace(-1, 1, D).astype(dtype)
    x = mt.tensor(x0, requires_grad=True)
    w, b = mt.ones(D, dtype=dtype, requires_grad=True), mt.tensor(b0, requires_grad=True)
    y = F.layer_norm(x, D, w, b, eps=eps)
    np.testing.assert_array_equal(y.array, np.broadcast_to(b0, (3, D)))
    y.backward(mt.tensor(np.linspace(-2, 2, 3 * D).reshape(3, D).astype(dtype)))
    assert all(np.all(np.isfinite(g.array)) for g in (x.grad, w.grad, b.grad))


@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.just(1)), elements=st.floats(-1e6, 1e6)))
def test_one_element_rows(x0):
    x, b = t64(x0), t64([0.25])
    y = F.layer_norm(x, 1, t64([3.0]), b)
    np.testing.assert_array_equal(y.array, np.full(x0.shape, 0.25))
    y.backward(mt.tensor(np.linspace(-2.0, 3.0, x0.size).reshape(x0.shape)))  # non-constant upstream
    assert np.all(x.grad.array == 0)


@given(st.integers(2, 32), st.floats(1e3, 6e4), st.integers(0, 2**31 - 1))
def test_float16_rows_near_overflow(D, scale, seed):
    rng = np.random.default_rng(seed)
    x0 = np.clip(rng.uniform(-1, 1, (3, D)) * scale, -65000, 65000).astype(np.float16)
    x = mt.tensor(x0, requires_grad=True)
    y = F.layer_norm(x, D)
    y.backward(mt.tensor(rng.standard_normal((3, D)).astype(np.float16)))
    assert np.all(np.isfinite(y.array)) and np.all(np.isfinite(x.grad.array))
    ref = _ref_layer_norm_f64(x0, 1.0, 0.0, 1e-5)
    np.testing.assert_allclose(y.array.astype(np.float64), ref, atol=5e-3 * max(1.0, np.abs(ref).max()))


row_arrays = hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(2, 12)),
                        elements=st.floats(-100, 100, allow_nan=False))


@given(row_arrays, st.floats(-1e3, 1e3), st.floats(1e-2, 1e2), st.integers(0, 2**31 - 1))
def test_invariants_on_well_spread_rows(x0, shift, scale, seed):
    rng = np.random.default_rng(seed)
    x0 = x0 + rng.standard_normal(x0.shape)
    D = x0.shape[1]
    eps = 1e-12
    # rows whose variance, scaled too, is well above eps (else eps itself breaks the invariances)
    assume(x0.var(-1).min() * min(scale, 1.0) ** 2 > 1e-3)
    y = F.layer_norm(t64(x0, False), D, eps=eps).array
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-9)                       # mean 0
    np.testing.assert_allclose((y * y).mean(-1), 1, rtol=1e-6)                  # variance 1
    np.testing.assert_allclose(F.layer_norm(t64(x0 + shift, False), D, eps=eps).array, y, atol=1e-7)  # shift
    np.testing.assert_allclose(F.layer_norm(t64(x0 * scale, False), D, eps=eps).array, y, atol=1e-7)  # positive scale
    x = t64(x0)
    F.layer_norm(x, D, t64(rng.standard_normal(D)), eps=eps).backward(mt.tensor(rng.standard_normal(x0.shape)))
    assert np.all(np.abs(x.grad.array.sum(-1)) <= 1e-9 * (1 + np.abs(x.grad.array).max(-1)))  # Σ_D dx = 0


# ==================================================================================================
# Modules
# ==================================================================================================


def test_layer_norm_module_parameters_aliases_and_torch_state_dict(rng):
    ln = nn.LayerNorm(8)
    assert ln.gamma is ln.weight and ln.beta is ln.bias
    assert list(ln.state_dict()) == ["weight", "bias"]
    np.testing.assert_array_equal(ln.weight.array, np.ones(8, np.float32))
    np.testing.assert_array_equal(ln.bias.array, np.zeros(8, np.float32))
    ref = torch.nn.LayerNorm(8)
    with torch.no_grad():
        ref.weight.normal_()
        ref.bias.normal_()
    ln.load_state_dict(ref.state_dict())
    x = rng.standard_normal((3, 10, 8)).astype(np.float32)
    out = ln(mt.tensor(x))
    assert out.shape == (3, 10, 8)
    np.testing.assert_allclose(out.array, ref(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    assert nn.LayerNorm(8, elementwise_affine=False).weight is None
    no_bias = nn.LayerNorm((2, 4), bias=False, dtype=mt.float64)
    assert no_bias.bias is None and no_bias.weight.shape == (2, 4) and no_bias.weight.dtype == np.float64
    assert "(8,), eps=1e-05, elementwise_affine=True" in repr(ln)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,nshape", [((3, 4, 8), 8), ((2, 3, 4), (3, 4))])
def test_rms_norm_matches_torch(dtype, shape, nshape, device, rng):
    x = rng.standard_normal(shape).astype(dtype)
    ns = (nshape,) if isinstance(nshape, int) else nshape
    w = rng.standard_normal(ns).astype(dtype)
    compare_with_torch(lambda x, w: F.rms_norm(x, nshape, w), lambda x, w: TF.rms_norm(x, ns, w), [x, w], device=device)
    compare_with_torch(lambda x: F.rms_norm(x, nshape, eps=1e-3), lambda x: TF.rms_norm(x, ns, eps=1e-3), [x], device=device)


def test_rms_norm_gradchecks_module_and_composed(rng):
    x, w = t64(rng.standard_normal((3, 5))), t64(rng.standard_normal(5))
    assert gradcheck(lambda x, w: F.rms_norm(x, 5, w), (x, w))
    assert gradgradcheck(lambda x, w: F.rms_norm(x, 5, w, eps=1e-5), (x, w))
    assert gradgradcheck(lambda x: F.rms_norm(x, dim=0), (t64(rng.standard_normal((3, 2))),))
    np.testing.assert_allclose(F.rms_norm(x, 5, w).array, rms_norm_composed(x, 5, w).array, rtol=1e-13)
    m = nn.RMSNorm(5, dtype=mt.float64)
    assert list(m.state_dict()) == ["weight"] and m.eps is None
    xx = rng.standard_normal((2, 5))
    np.testing.assert_allclose(m(t64(xx, False)).array, TF.rms_norm(torch.tensor(xx), (5,)).numpy(), rtol=1e-12)


@pytest.mark.parametrize("shape", [(6, 4), (5, 4, 3)])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm1d_running_stats_over_steps_then_eval(shape, momentum, rng):
    ours, ref = nn.BatchNorm1d(4, momentum=momentum), torch.nn.BatchNorm1d(4, momentum=momentum)
    with torch.no_grad():
        ref.weight.normal_()
        ref.bias.normal_()
    ours.load_state_dict(ref.state_dict())
    for step in range(4):
        x = (rng.standard_normal(shape) * (step + 1) + step).astype(np.float32)
        up = rng.standard_normal(shape).astype(np.float32)
        xm, xt = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ym, yt = ours(xm), ref(xt)
        ym.backward(mt.tensor(up))
        yt.backward(torch.tensor(up))
        np.testing.assert_allclose(ym.array, yt.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(xm.grad.array, xt.grad.numpy(), rtol=1e-4, atol=1e-5)
        for name in ("running_mean", "running_var"):
            np.testing.assert_allclose(getattr(ours, name).array, getattr(ref, name).numpy(), rtol=1e-5, atol=1e-6)
        assert ours.num_batches_tracked.item() == ref.num_batches_tracked.item() == step + 1
    np.testing.assert_allclose(ours.weight.grad.array, ref.weight.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours.bias.grad.array, ref.bias.grad.numpy(), rtol=1e-4, atol=1e-4)
    ours.eval()
    ref.eval()
    x = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(ours(mt.tensor(x)).array, ref(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_batch_norm1d_without_running_stats_or_affine(rng):
    ours, ref = nn.BatchNorm1d(3, affine=False, track_running_stats=False), \
        torch.nn.BatchNorm1d(3, affine=False, track_running_stats=False)
    assert ours.running_mean is None and list(ours.state_dict()) == []
    x = rng.standard_normal((4, 3, 2))
    ours.eval()
    ref.eval()  # no running statistics: batch statistics even in eval
    compare_with_torch(lambda x: ours(x), lambda x: ref(x), [x])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_functional_batch_norm_matches_torch(dtype, rng):
    x = rng.standard_normal((5, 3, 4)).astype(dtype)
    w, b = rng.standard_normal(3).astype(dtype), rng.standard_normal(3).astype(dtype)
    compare_with_torch(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                       lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True), [x, w, b])
    rm, rv = rng.standard_normal(3).astype(dtype), rng.uniform(0.5, 2, 3).astype(dtype)
    compare_with_torch(lambda x, w, b: F.batch_norm(x, mt.tensor(rm), mt.tensor(rv), w, b),
                       lambda x, w, b: TF.batch_norm(x, torch.tensor(rm), torch.tensor(rv), w, b), [x, w, b])


def test_batch_norm_gradchecks(rng):
    x, w, b = t64(rng.standard_normal((4, 3, 2))), t64(rng.standard_normal(3)), t64(rng.standard_normal(3))
    fn = lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)  # noqa: E731
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))
    assert gradgradcheck(lambda x: F.batch_norm(x, None, None, training=True), (t64(rng.standard_normal((5, 2))),))
    np.testing.assert_allclose(fn(x, w, b).array, batch_norm_composed(x, w, b).array, rtol=1e-12, atol=1e-12)


# ==================================================================================================
# Bad input: clear errors naming what was expected and what came
# ==================================================================================================


def test_layer_norm_bad_inputs():
    x = mt.randn(3, 10, 6)
    with pytest.raises(ValueError, match=r"normalized_shape \(8,\).*\(3, 10, 6\)"):
        F.layer_norm(x, 8)
    with pytest.raises(ValueError, match="normalized_shape"):
        nn.LayerNorm(8)(x)
    with pytest.raises(TypeError, match="eps must be a real number, got '1e-5'"):  # any real eps is PyTorch's
        F.layer_norm(x, 6, eps="1e-5")
    with pytest.raises(TypeError, match="floating point.*int64"):
        F.layer_norm(mt.tensor(np.arange(12).reshape(3, 4)), 4)
    with pytest.raises(ValueError, match="exactly one of normalized_shape"):
        F.layer_norm(x, 6, dim=-1)
    with pytest.raises(ValueError, match="exactly one of normalized_shape"):
        F.layer_norm(x)
    with pytest.raises(ValueError, match=r"expected weight of shape \(6,\).*got \(5,\)"):
        F.layer_norm(x, 6, mt.ones(5))
    with pytest.raises(TypeError, match="weight has dtype float64 but the input has dtype float32"):
        F.layer_norm(x, 6, mt.ones(6, dtype=mt.float64))
    with pytest.raises(TypeError, match="weight must be a Tensor"):
        F.layer_norm(x, 6, np.ones(6, np.float32))
    with pytest.raises(IndexError, match="out of range"):
        F.layer_norm(x, dim=3)
    with pytest.raises(ValueError, match="at least one dimension"):
        F.layer_norm(x, ())
    with pytest.raises(ValueError, match="positive"):
        nn.LayerNorm(0)
    with pytest.raises(TypeError, match="eps must be a real number"):
        F.rms_norm(x, 6, eps=mt.tensor(1e-5))
    # the modules refuse a bad eps when they are built, not at every forward
    for cls, arg in ((nn.LayerNorm, 6), (nn.RMSNorm, 6), (nn.BatchNorm1d, 3)):
        with pytest.raises(ValueError, match=f"{cls.__name__}: eps must be a finite number > 0"):
            cls(arg, eps=float("nan"))


def test_batch_norm_bad_inputs():
    bn = nn.BatchNorm1d(4)
    with pytest.raises(ValueError, match="more than 1 value per channel when training"):
        bn(mt.randn(1, 4))
    with pytest.raises(ValueError, match="more than 1 value per channel when training"):
        bn(mt.randn(1, 4, 1))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input"):
        bn(mt.randn(2, 4, 3, 3))
    with pytest.raises(ValueError, match="expected 4 channels"):
        bn(mt.randn(5, 3))
    with pytest.raises(ValueError, match=r"running_mean of shape \(4,\)"):
        F.batch_norm(mt.randn(5, 4), mt.zeros(3), mt.ones(4))
    with pytest.raises(TypeError, match="floating point"):
        bn(mt.tensor(np.ones((3, 4), dtype=np.int64)))
    bn.eval()
    assert bn(mt.randn(1, 4)).shape == (1, 4)  # eval uses the running statistics: one sample is fine


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("shape,kw,pshape", LAYOUTS, ids=LAYOUT_IDS)
def test_layer_norm_gradcheck_noncontiguous_leaves(shape, kw, pshape, rng):
    # x, weight and bias each non-contiguous; once per CPU kernel (the compiled loops see strides)
    w, b = _params(rng, pshape, True, True)
    fn = lambda x, w, b: F.layer_norm(x, weight=w, bias=b, **kw)  # noqa: E731
    gradcheck_noncontiguous(fn, [rng.standard_normal(shape), w, b], gg=len(shape) <= 3)


def test_rms_norm_and_batch_norm_gradcheck_noncontiguous_leaves(rng):
    x, w, b = rng.standard_normal((4, 3, 2)), rng.standard_normal(3), rng.standard_normal(3)
    gradcheck_noncontiguous(lambda x, w: F.rms_norm(x, 2, w[:2]), [x, w], gg=True)
    gradcheck_noncontiguous(lambda x: F.rms_norm(x, dim=1), [x])
    gradcheck_noncontiguous(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [x, w, b], gg=True)
