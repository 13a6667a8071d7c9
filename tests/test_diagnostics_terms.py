"""Gradient-check reports: worst-entry tables, LayerNorm's backward term by term, precision-aware mode."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.diagnostics import check_layer_norm_terms, jacobian_heatmap
from minitorch_ln.autograd import (
    Function, GradcheckError, gradcheck, precision_report,
)
from minitorch_ln.diagnostics.terms import layer_norm_term_check
from minitorch_ln.kernels import layer_norm as K
from minitorch_ln.kernels import layer_norm_forms
from minitorch_ln.tensor import Tensor

PLANTS = {  # term key -> (label the report must name, the bug)
    "dx_direct": ("dx term 1", "forgot rstd: dxhat instead of rstd·dxhat"),
    "dx_via_mean": ("dx term 2", "sign flipped"),
    "dx_via_rstd": ("dx term 3", "mean over D - 1 instead of D"),
    "dweight": ("dγ (dweight)", "x - mean instead of xhat"),
    "dbias": ("dβ (dbias)", "a mean over rows instead of a sum"),
}


def copied_layer_norm_bwd_terms(dy, x, weight, mean, rstd, plant=None):
    """A copy of ``kernels.layer_norm.layer_norm_bwd_terms`` (on ``(N, D)`` rows) with one term broken.

    Left exactly as the original when ``plant`` is None.
    """
    D = x.shape[1]
    xc = x - mean                                                         # (N, D)
    xc -= xc.mean(axis=1, keepdims=True)                                  # re-centred, as the original
    xhat = xc * rstd                                                      # (N, D)
    dxhat = dy * weight if weight is not None else dy                     # (N, D)
    dx_direct = rstd * dxhat                                              # (N, D)
    dx_via_mean = np.broadcast_to(-rstd * dxhat.sum(axis=1, keepdims=True) / D, dxhat.shape).copy()
    dx_via_rstd = -rstd * xhat * ((dxhat * xhat).sum(axis=1, keepdims=True) / D)
    dweight, dbias = (dy * xhat).sum(axis=0), dy.sum(axis=0)              # (D,)
    if plant == "dx_direct":
        dx_direct = dxhat
    elif plant == "dx_via_mean":
        dx_via_mean = -dx_via_mean
    elif plant == "dx_via_rstd":
        dx_via_rstd = -rstd * xhat * ((dxhat * xhat).sum(axis=1, keepdims=True) / (D - 1))
    elif plant == "dweight":
        dweight = (dy * xc).sum(axis=0)
    elif plant == "dbias":
        dbias = dy.mean(axis=0)
    return {"xhat": xhat, "dxhat": dxhat, "dx_direct": dx_direct, "dx_via_mean": dx_via_mean,
            "dx_via_rstd": dx_via_rstd, "dx": dx_direct + dx_via_mean + dx_via_rstd, "dweight": dweight,
            "dbias": dbias}


def make_layer_norm(plant=None, combine=None):
    """A LayerNorm Function: the library's forward kernel, the copied backward (planted or not).

    ``combine`` overrides how ``dx`` is built from the terms (a bug in the combination, not a term).
    Its ``term_check`` is what ``gradcheck`` calls on failure.
    """

    def terms_fn(dy, x, weight, mean, rstd):
        return copied_layer_norm_bwd_terms(dy, x, weight, mean, rstd, plant)

    class CopiedLayerNorm(Function):
        @staticmethod
        def forward(ctx, x, weight, bias, eps=1e-5):
            D = x.shape[-1]
            y, mean, rstd = K.layer_norm_fwd(np.ascontiguousarray(x.reshape(-1, D)), weight, bias, eps)
            ctx.eps = eps
            ctx.save_for_backward(x, weight, mean, rstd)
            return y.reshape(x.shape)

        @staticmethod
        def backward(ctx, dy):
            x, weight, mean, rstd = ctx.saved_tensors
            D = x.shape[-1]
            sdt = mean.dtype
            t = terms_fn(dy.array.reshape(-1, D).astype(sdt), x.array.reshape(-1, D).astype(sdt),
                         weight.array.astype(sdt), mean.array, rstd.array)
            dx = t["dx"] if combine is None else combine(t)
            return (Tensor._from_op(dx.astype(x.dtype).reshape(x.shape)),
                    Tensor._from_op(t["dweight"].astype(weight.dtype)), Tensor._from_op(t["dbias"].astype(weight.dtype)))

        @staticmethod
        def term_check(ctx):
            x, weight, _, _ = ctx.saved_tensors
            return check_layer_norm_terms(x, weight, eps=ctx.eps, terms_fn=terms_fn)

    return CopiedLayerNorm.apply


def ln_inputs(shape=(2, 3, 4), dtype=np.float64, offset=0.0, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    D = shape[-1]
    x = mt.tensor((offset + scale * rng.standard_normal(shape)).astype(dtype), requires_grad=True)
    w = mt.tensor((1 + 0.5 * rng.standard_normal(D)).astype(dtype), requires_grad=True)
    b = mt.tensor(rng.standard_normal(D).astype(dtype), requires_grad=True)
    return x, w, b


# ---------------------------------------------------------------------------- term by term
def test_the_copy_and_the_library_terms_pass_term_by_term():
    x, w, b = ln_inputs()
    for terms_fn in (layer_norm_forms.layer_norm_bwd_terms, copied_layer_norm_bwd_terms):
        report = check_layer_norm_terms(x, w, b, terms_fn=terms_fn)
        assert report.ok and report.failed == [] and report.culprit() is None
        assert [r["label"] for r in report.rows] == ["dβ (dbias)", "dγ (dweight)", "dx term 1", "dx term 2",
                                                     "dx term 3", "dx (sum)"]
        assert all(r["max_abs_err"] < 1e-7 for r in report.rows)
    assert gradcheck(make_layer_norm(), (x, w, b))


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_planted_wrong_term_is_named(plant):
    label, _ = PLANTS[plant]
    x, w, b = ln_inputs()
    report = check_layer_norm_terms(x, w, b, terms_fn=lambda *a: copied_layer_norm_bwd_terms(*a, plant=plant))
    assert report.culprit() == label
    assert set(report.failed) == ({plant, "dx"} if plant.startswith("dx") else {plant})
    assert f"disagreeing: {label} = " in str(report)
    # through gradcheck: the failure report ends with the term table of the LayerNorm node
    with pytest.raises(GradcheckError) as info:
        gradcheck(make_layer_norm(plant), (x, w, b))
    err = info.value
    assert [name for name, _ in err.terms] == ["CopiedLayerNormBackward0"]
    assert err.terms[0][1].culprit() == label
    assert "worst entries:" in str(err) and f"disagreeing: {label}" in str(err)


def test_a_wrong_combination_of_right_terms_is_told_apart():
    x, w, b = ln_inputs()
    dy = np.random.default_rng(3).standard_normal(x.shape)
    x2, mean = x.array.reshape(-1, 4), x.array.reshape(-1, 4).mean(1, keepdims=True)
    rstd = 1 / np.sqrt(((x2 - mean) ** 2).mean(1, keepdims=True) + 1e-5)
    t = layer_norm_forms.layer_norm_bwd_terms(dy.reshape(-1, 4), x2, w.array, mean, rstd)
    report = check_layer_norm_terms(x, w, b, dy=dy, dx=t["dx_direct"] + t["dx_via_mean"])  # term 3 dropped
    assert report.failed == [] and not report.ok
    assert "the bug is in how the backward combines them" in str(report)


def test_terms_against_pytorch_detached_statistics():
    """Each finite-difference counterpart equals PyTorch's gradient with the other statistics detached."""
    torch = pytest.importorskip("torch")
    for dtype in (np.float64, np.float32):
        x, w, b = ln_inputs((3, 5), dtype=dtype, offset=1.0, seed=4)
        dy = np.random.default_rng(5).standard_normal((3, 5))
        report = check_layer_norm_terms(x, w, b, dy=dy)
        xt = torch.tensor(x.array.astype(np.float64), requires_grad=True)
        wt, bt, dyt = (torch.tensor(a.astype(np.float64)) for a in (w.array, b.array, dy))

        def grad_of(mean_free, rstd_free, direct=True):
            xt.grad = None
            x0 = xt.detach()
            mean = xt.mean(-1, keepdim=True) if mean_free else x0.mean(-1, keepdim=True)
            var = ((xt - xt.mean(-1, keepdim=True)) ** 2).mean(-1, keepdim=True)
            rstd = (var + 1e-5).rsqrt() if rstd_free else (var.detach() + 1e-5).rsqrt()
            y = ((xt if direct else x0) - mean) * rstd * wt + bt
            (y * dyt).sum().backward()
            return xt.grad.numpy()

        np.testing.assert_allclose(report.numerical["dx_direct"], grad_of(False, False), atol=1e-7)
        np.testing.assert_allclose(report.numerical["dx_via_mean"], grad_of(True, False, direct=False), atol=1e-7)
        np.testing.assert_allclose(report.numerical["dx_via_rstd"], grad_of(False, True, direct=False), atol=1e-7)
        np.testing.assert_allclose(report.numerical["dx"], grad_of(True, True), atol=1e-7)


@given(shape=st.tuples(st.integers(1, 3), st.integers(2, 6)), two_dims=st.booleans(),
       offset=st.floats(-5, 5), scale=st.floats(0.1, 5), seed=st.integers(0, 1000))
def test_property_library_terms_agree_and_a_planted_term_is_found(shape, two_dims, offset, scale, seed):
    full = (*shape, 3) if two_dims else shape
    normalized = full[-2:] if two_dims else full[-1:]
    rng = np.random.default_rng(seed)
    x = offset + scale * rng.standard_normal(full)
    w = 1 + 0.5 * rng.standard_normal(normalized)
    assert check_layer_norm_terms(x, w, normalized_shape=normalized).ok
    report = check_layer_norm_terms(x, w, normalized_shape=normalized,
                                    terms_fn=lambda *a: copied_layer_norm_bwd_terms(*a, plant="dx_via_mean"))
    assert report.culprit() == "dx term 2"


def copied_layer_norm_bwd_fused(dy, x, weight, mean, rstd, plant=None):
    """A copy of the fused formula of ``kernels.layer_norm.layer_norm_bwd`` (no terms exposed), one bug planted."""
    D = x.shape[1]
    xc = x - mean                                                         # (N, D)
    xc -= xc.mean(axis=1, keepdims=True)
    xhat = xc * rstd                                                      # (N, D)
    dxhat = dy * weight                                                   # (N, D)
    mean_dxhat = dxhat.sum(axis=1, keepdims=True) / D                     # (N, 1)
    mean_dxhat_xhat = (dxhat * xhat).sum(axis=1, keepdims=True) / D       # (N, 1)
    dx = dxhat - (0 if plant == "drop term 2" else mean_dxhat)            # term 1 and term 2
    dx = dx + xhat * mean_dxhat_xhat if plant == "term 3 sign" else dx - xhat * mean_dxhat_xhat  # term 3
    return dx * rstd, (dy * xhat).sum(axis=0), dy.sum(axis=0)


def make_fused_layer_norm(plant=None):
    class FusedCopy(Function):
        term_check = staticmethod(layer_norm_term_check)  # what the library's LayerNorm gets by default

        @staticmethod
        def forward(ctx, x, weight, bias, eps=1e-5):
            D = x.shape[-1]
            y, mean, rstd = K.layer_norm_fwd(np.ascontiguousarray(x.reshape(-1, D)), weight, bias, eps)
            ctx.axes, ctx.eps = (x.ndim - 1,), eps
            ctx.save_for_backward(x, weight, mean, rstd)
            return y.reshape(x.shape)

        @staticmethod
        def backward(ctx, dy):
            x, weight, mean, rstd = ctx.saved_tensors
            D = x.shape[-1]
            dx, dweight, dbias = copied_layer_norm_bwd_fused(dy.array.reshape(-1, D), x.array.reshape(-1, D),
                                                             weight.array, mean.array, rstd.array, plant)
            return tuple(Tensor._from_op(a) for a in (dx.reshape(x.shape), dweight, dbias))

    return FusedCopy.apply


@pytest.mark.parametrize("plant,named", [("term 3 sign", "dx term 3 (coefficient -1, expected 1)"),
                                         ("drop term 2", "dx term 2 (coefficient 0, expected 1)")])
def test_a_planted_error_in_a_fused_backward_is_attributed_to_its_term(plant, named):
    x, w, b = ln_inputs()
    assert gradcheck(make_fused_layer_norm(), (x, w, b))
    with pytest.raises(GradcheckError) as info:
        gradcheck(make_fused_layer_norm(plant), (x, w, b))
    report = info.value.terms[0][1]
    assert report.failed == []  # the library's terms are right ...
    assert "the bug is in how the backward combines them" in str(info.value)  # ... the fused code is not
    assert named in str(info.value)


def test_the_library_layer_norm_node_is_checked_term_by_term():
    rng = np.random.default_rng(7)
    x = mt.tensor(rng.standard_normal((3, 2, 4)), requires_grad=True)
    w = mt.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    y = mt.ops.layer_norm(x, weight=w, dim=(0, 2))  # normalized axes not last: moved there for the check
    assert y.grad_fn.fn.__name__ == "NativeLayerNorm"
    report = layer_norm_term_check(y.grad_fn)
    assert report.ok, str(report)
    assert gradcheck(lambda a, c: mt.ops.layer_norm(a, weight=c, dim=(0, 2)), (x, w))


def test_term_check_bad_input():
    x, w, b = ln_inputs()
    with pytest.raises(ValueError, match=r"does not end with normalized_shape \(5,\)"):
        check_layer_norm_terms(x, normalized_shape=5)
    with pytest.raises(ValueError, match="weight has 3 elements, expected 4"):
        check_layer_norm_terms(x, np.ones(3))
    with pytest.raises(ValueError, match="dy has 5 elements, x has 24"):
        check_layer_norm_terms(x, w, dy=np.ones(5))
    with pytest.raises(ValueError, match=r"terms_fn returned no \['dbias'"):
        check_layer_norm_terms(x, w, terms_fn=lambda *a: {"dx": 0})


# ---------------------------------------------------------------------------- worst-entry tables
def test_failure_table_lists_worst_entries_per_input():
    x, w, b = ln_inputs((2, 4))
    with pytest.raises(GradcheckError) as info:
        gradcheck(make_layer_norm("dweight"), (x, w, b))
    err = info.value
    assert err.input_index == 1  # x passes; the weight fails
    text = str(err)
    assert "Jacobian mismatch for input 1 (shape (4,), dtype float64)" in text
    assert "analytical" in text and "numerical" in text and "abs err" in text and "rel err" in text
    row = err.worst[0]
    assert abs(row["analytical"] - row["numerical"]) == pytest.approx(row["abs_err"])
    # the worst row's numerical value is xhat of that output element (∂y/∂γ = xhat)
    xr = x.array[row["output_index"][0]]
    xhat = (xr - xr.mean()) / np.sqrt(xr.var() + 1e-5)
    assert row["numerical"] == pytest.approx(xhat[row["output_index"][1]], abs=1e-6)


def test_heatmap_png_on_pass_and_on_failure(tmp_path):
    pytest.importorskip("matplotlib")  # the `plot` extra
    x, w, b = ln_inputs((2, 3))
    assert gradcheck(make_layer_norm(), (x, w, b), heatmap=tmp_path / "ok.png")
    assert (tmp_path / "ok.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(GradcheckError, match="Jacobian heat-map saved to .*bad.png"):
        gradcheck(make_layer_norm("dx_via_mean"), (x, w, b), heatmap=tmp_path / "bad.png")
    assert (tmp_path / "bad.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="no Jacobians"):
        jacobian_heatmap({}, tmp_path / "none.png")


# ---------------------------------------------------------------------------- precision-aware
@pytest.mark.parametrize("offset,scale", [(0.0, 1.0), (3.0, 2.0), (100.0, 1.0)])
def test_precision_aware_passes_a_correct_float32_layer_norm(offset, scale):
    x, w, b = ln_inputs((2, 3, 8), np.float32, offset, scale)
    ln = make_layer_norm()
    assert gradcheck(ln, (x, w, b), precision_aware=True)
    report = precision_report(ln, (x, w, b))
    assert report.ok and all(r["max_ratio"] <= 1 for r in report.per_input.values())
    assert "analytical in float32, numerical in float64" in str(report)


def test_a_fixed_tolerance_check_fails_the_same_correct_float32_layer_norm():
    x, w, b = ln_inputs((2, 3, 8), np.float32, 3.0, 2.0)
    with pytest.warns(UserWarning, match="not float64"):
        assert not gradcheck(make_layer_norm(), (x, w, b), raise_exception=False)
    torch = pytest.importorskip("torch")  # PyTorch's own gradcheck agrees that float32 fails it
    tx, tw, tb = (torch.tensor(t.array, requires_grad=True) for t in (x, w, b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not torch.autograd.gradcheck(lambda a, c, d: torch.nn.functional.layer_norm(a, (8,), c, d),
                                            (tx, tw, tb), raise_exception=False)


def test_precision_aware_fails_a_wrong_float32_layer_norm():
    x, w, b = ln_inputs((2, 3, 8), np.float32, 3.0, 2.0)
    with pytest.raises(GradcheckError) as info:
        gradcheck(make_layer_norm("dx_via_rstd"), (x, w, b), precision_aware=True)
    text = str(info.value)
    assert "input 0 (2, 3, 8) float32: FAIL" in text and "exceed their expected error" in text
    assert info.value.input_index == 0 and info.value.worst[0]["abs_err"] > info.value.worst[0]["expected"]
    assert "input 1 (8,) float32: ok" in text  # the weight's gradient is right
    assert not gradcheck(make_layer_norm("dx_via_rstd"), (x, w, b), precision_aware=True, raise_exception=False)


def test_precision_aware_float16():
    x, w, b = ln_inputs((2, 8), np.float16, 0.0, 1.0)
    assert precision_report(make_layer_norm(), (x, w, b)).ok
    assert not precision_report(make_layer_norm("dx_via_mean"), (x, w, b)).ok


def test_precision_aware_says_when_the_dtype_cannot_decide():
    x, w, b = ln_inputs((2, 8), np.float16, 1000.0, 0.1)  # float16 spacing at 1000 is 0.5: the noise is gone
    report = precision_report(make_layer_norm(), (x, w, b))
    assert report.per_input[0]["inconclusive"]
    assert "inconclusive: the expected error reaches half of |J|" in str(report)


@given(D=st.integers(4, 8), rows=st.integers(1, 3), offset=st.floats(-20, 20), scale=st.floats(0.2, 10),
       seed=st.integers(0, 10_000))
def test_property_precision_aware_float32(D, rows, offset, scale, seed):
    x, w, b = ln_inputs((rows, D), np.float32, offset, scale, seed)
    assert precision_report(make_layer_norm(), (x, w, b)).ok
    assert not precision_report(make_layer_norm("dx_direct"), (x, w, b)).ok


def test_precision_report_bad_input():
    x = mt.tensor(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="no input requires grad"):
        precision_report(lambda t: t * 2, (x,))
    with pytest.raises(ValueError, match="safety must be > 0, got 0"):
        precision_report(lambda t: t * 2, (mt.ones(3, requires_grad=True),), safety=0)
    with pytest.raises(ValueError, match="no floating point Tensor"):
        precision_report(lambda t: 3, (mt.ones(3, requires_grad=True),))


def test_precision_aware_and_term_check_on_the_library_layer_norm(device):
    """The library's fused LayerNorm, float32, on each device: passes precision-aware, terms agree."""
    rng = np.random.default_rng(11)
    x = mt.tensor((2 + rng.standard_normal((2, 3, 8))).astype(np.float32), device=device, requires_grad=True)
    w = mt.tensor((1 + 0.5 * rng.standard_normal(8)).astype(np.float32), device=device, requires_grad=True)
    b = mt.tensor(rng.standard_normal(8).astype(np.float32), device=device, requires_grad=True)
    ln = lambda a, c, d: mt.ops.layer_norm(a, (8,), c, d)  # noqa: E731
    report = precision_report(ln, (x, w, b))
    assert report.ok, str(report)
    assert all(r["dtype"] == "float32" for r in report.per_input.values())
    y = ln(x.detach().double().requires_grad_(), w.detach().double(), b.detach().double())
    assert layer_norm_term_check(y.grad_fn).ok
