"""Silently wrong reductions found by the session-7 break-it run, each against PyTorch and by hand.

One section per fix on branch s7-reductions: mean = sum / n (and the losses, var/std computed in
float64 and rounded once, std one op with var), empty ``dim`` meaning every dim, ``prod(dtype=)``,
NaN and int64's minimum in topk/sort, softmax of a row holding +inf, the gradient of ``max()`` with
NaN entries, -0.0 in maximum/minimum/clamp/cumsum, RMSNorm of a row holding inf, a uint8 index as
a mask. PyTorch comparisons go through ``compare_with_torch`` (forward and gradients under a random
upstream gradient); the edge values are worked out by hand (each comment says how).
"""

from __future__ import annotations

import importlib
import warnings
from fractions import Fraction

import numpy as np
import pytest
from helpers import (
    compare_with_torch,
    gradcheck_noncontiguous,
    noncontiguous_leaf,
    t64,
    to_numpy,
)
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional
NAN, INF = float("nan"), float("inf")


def bits(a):
    """The raw bits of a float array (so -0.0 and 0.0, and NaN payloads aside, compare exactly)."""
    a = np.ascontiguousarray(to_numpy(a) if not isinstance(a, np.ndarray) else a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def exact_sum_f32(rng, shape, k=60, scale=8):
    """float32 multiples of 1/scale in [-k/scale, k/scale): every partial sum (and, for mse, every sum of
    squares) of fewer than 2**10 of them is a multiple of 1/64 below 2**17, exact in float32's 24 bits,
    so the summation order cannot matter and only the final division rounds."""
    return (rng.integers(-k, k, size=shape) / scale).astype(np.float32)


# ==================================================================================================
# 1. mean = sum / n (one rounding, as PyTorch); losses' reduction='mean'; var/std rounded once
# ==================================================================================================


def test_mean_is_sum_over_n_by_hand():
    # mean([1, 2, 2]) = 5/3. 2/3 · 2**23 = 5592405.33, so the nearest float32 is 1 + 5592405 · 2**-23
    # (bits 0x3FD55555). sum · (1/3) rounds twice: fl(1/3) = 0x3EAAAAAB is above 1/3, and 5 · fl(1/3)
    # = 1.66666674 rounds up to 0x3FD55556 (one unit too high)
    x = mt.tensor(np.array([1.0, 2.0, 2.0], np.float32), requires_grad=True)
    y = x.mean()
    assert bits(y) == 0x3FD55555
    assert bits(torch.tensor([1.0, 2.0, 2.0]).mean()) == 0x3FD55555
    # backward dy / n, as PyTorch: 5 / 3 is 0x3FD55555 again (5 · fl(1/3) would be 0x3FD55556)
    y.backward(mt.tensor(np.float32(5.0)))
    np.testing.assert_array_equal(bits(x.grad), [0x3FD55555] * 3)
    xt = torch.tensor([1.0, 2.0, 2.0], requires_grad=True)
    xt.mean().backward(torch.tensor(5.0))
    np.testing.assert_array_equal(bits(x.grad), bits(xt.grad))


def test_losses_and_var_by_hand():
    a = np.array([1.0, 2.0, 0.0], np.float32)
    z = np.zeros(3, np.float32)
    # mse: (1 + 4 + 0) / 3 = 5/3 and l1: (1 + 2 + 0) / 3 = 1; l1 of [1, 2, 2]: 5/3 -> 0x3FD55555 (see above)
    assert bits(F.mse_loss(mt.tensor(a), mt.tensor(z))) == 0x3FD55555
    assert float(F.l1_loss(mt.tensor(a), mt.tensor(z))) == 1.0
    assert bits(F.l1_loss(mt.tensor(np.array([1.0, 2.0, 2.0], np.float32)), mt.tensor(z))) == 0x3FD55555
    # var([0, 0, 1]) unbiased: mean 1/3, Σ(x - mean)² = 1/9 + 1/9 + 4/9 = 2/3, / 2 = 1/3 exactly, so the
    # result is fl(1/3) = 0x3EAAAAAB; std = sqrt(1/3) = 0.57735026918962..., float32 0x3F13CD3A
    v = mt.tensor(np.array([0.0, 0.0, 1.0], np.float32))
    assert bits(v.var()) == 0x3EAAAAAB == bits(torch.tensor([0.0, 0.0, 1.0]).var())
    assert bits(v.std()) == 0x3F13CD3A == bits(torch.tensor([0.0, 0.0, 1.0]).std())


def test_exact_sum_float32_cases_are_bit_equal_to_pytorch():
    # sums exact in float32 (see exact_sum_f32): PyTorch's result is fl(S / n) whatever its summation
    # order, and so must ours be (before the fix: mean 161/300 cases differed, var 329, l1 140, mse 138)
    rng = np.random.default_rng(7)
    for _ in range(150):
        n = int(rng.integers(2, 40))
        a, b = exact_sum_f32(rng, (3, n)), exact_sum_f32(rng, (3, n))
        A, B = torch.from_numpy(a), torch.from_numpy(b)
        ma, mb = mt.tensor(a), mt.tensor(b)
        for ours, theirs, what in [
            (ma.mean(), A.mean(), "mean()"), (ma.mean(-1), A.mean(-1), "mean(-1)"),
            (ma.mean(0), A.mean(0), "mean(0)"),
            (F.mse_loss(ma, mb), TF.mse_loss(A, B), "mse_loss"), (F.l1_loss(ma, mb), TF.l1_loss(A, B), "l1_loss"),
            (ma.var(), A.var(), "var()"), (ma.var(-1), A.var(-1), "var(-1)"), (ma.std(-1), A.std(-1), "std(-1)"),
            (ma.var(0, unbiased=False), A.var(0, unbiased=False), "var(0, unbiased=False)"),
        ]:
            np.testing.assert_array_equal(bits(ours), bits(theirs), err_msg=f"{what} of {a!r}")


def test_var_std_on_random_float32_match_pytorch_bitwise():
    # not exact-sum data: PyTorch accumulates in double (Welford), this in double (two-pass); both round
    # once, so they agree unless the double results straddle a float32 rounding boundary (none here)
    rng = np.random.default_rng(3)
    for _ in range(100):
        a = (rng.standard_normal((4, int(rng.integers(2, 100)))) * rng.uniform(0.01, 100)).astype(np.float32)
        A, ma = torch.from_numpy(a), mt.tensor(a)
        for ours, theirs in [(ma.var(-1), A.var(-1)), (ma.var(), A.var()), (ma.std(1), A.std(1))]:
            np.testing.assert_array_equal(bits(ours), bits(theirs))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, ours, theirs", [
    ("mean", lambda x: x.mean(), lambda x: x.mean()),
    ("mean_dims", lambda x: x.mean((0, 2), keepdim=True), lambda x: x.mean((0, 2), keepdim=True)),
    ("var", lambda x: x.var(1), lambda x: x.var(1)),
    ("var_corr", lambda x: x.var((0, 2), correction=0), lambda x: x.var((0, 2), correction=0)),
    ("std", lambda x: x.std(-1, keepdim=True), lambda x: x.std(-1, keepdim=True)),
    ("std_all", lambda x: x.std(), lambda x: x.std()),
    ("var_mean", lambda x: mt.var_mean(x, 1), lambda x: torch.var_mean(x, 1)),
    ("std_mean", lambda x: mt.std_mean(x, (0, 1)), lambda x: torch.std_mean(x, (0, 1))),
])
def test_mean_var_std_against_pytorch(name, ours, theirs, dtype, rng):
    compare_with_torch(ours, theirs, [rng.standard_normal((3, 4, 5)).astype(dtype)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss"])
def test_losses_against_pytorch(loss, reduction, rng):
    a, b = rng.standard_normal((4, 7)).astype(np.float32), rng.standard_normal((4, 7)).astype(np.float32)
    compare_with_torch(lambda x, y: getattr(F, loss)(x, y, reduction=reduction),
                       lambda x, y: getattr(TF, loss)(x, y, reduction=reduction), [a, b])


def test_float16_std_is_not_rounded_through_the_variance():
    # float16 holds [60000, 49984, 40000] (50000 is not representable: the spacing is 32 there and
    # 1562.5 · 32 rounds to even, 1562 · 32). The mean is 149984/3 = 49994.67, the deviations
    # 10005.33, -10.67, -9994.67; Σ squares / 2 = 100000028.4 (above float16's 65504: a variance rounded
    # to float16 first is inf, the old result), and its square root 10000.0014 rounds to 10000 (spacing 8)
    x = mt.tensor([6e4, 5e4, 4e4]).half()
    assert float(x.std()) == 10000.0 and x.std().dtype == mt.float16
    assert float(mt.std_mean(x)[0]) == 10000.0
    assert float(torch.tensor([6e4, 5e4, 4e4]).half().std()) == 10000.0
    # var itself overflows float16, as PyTorch's
    assert float(x.var()) == INF == float(torch.tensor([6e4, 5e4, 4e4]).half().var())
    # bfloat16: 10000.0014 lies between 9984 and 10048 (spacing 64), nearer 9984
    assert float(mt.tensor([6e4, 5e4, 4e4]).bfloat16().std()) == 9984.0


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_mean_std_against_pytorch_bitwise(dt, rng):
    a = (rng.standard_normal((50, 33)) * 3).astype(np.float32)
    A, ma = torch.from_numpy(a).to(getattr(torch, dt)), mt.tensor(a).to(getattr(mt, dt))
    for ours, theirs in [(ma.mean(1), A.mean(1)), (ma.std(1), A.std(1)), (ma.std(0), A.std(0)),
                         (ma.var(1), A.var(1)), (ma.mean(), A.mean())]:
        np.testing.assert_array_equal(bits(ours), bits(theirs.view(torch.int16).numpy().view(np.uint16)))
    compare_with_torch(lambda x: x.to(getattr(mt, dt)).std(1).float(), lambda x: x.to(getattr(torch, dt)).std(1).float(),
                       [a], rtol=2e-2, atol=2e-2)


def test_std_is_one_op_with_zero_gradient_at_zero_spread():
    # a constant row: std 0, whose gradient PyTorch defines as 0 (not inf · 0 = NaN)
    a = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]], np.float64)
    compare_with_torch(lambda x: x.std(1), lambda x: x.std(1), [a])
    y = mt.tensor(a, requires_grad=True).std(1)
    assert "VarBackward" in repr(y.grad_fn) and "Sqrt" not in repr(y.grad_fn)  # one op: no rounded variance


def test_std_onnx_export_takes_the_square_root(tmp_path):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from minitorch_ln import nn
    from minitorch_ln.onnx import export

    class M(nn.Module):
        def forward(self, x):
            return mt.std(x, 1), mt.var(x, 0)

    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    proto = export(M(), (mt.tensor(x),), None, input_names=["x"])
    assert "Sqrt" in {n.op_type for n in proto.graph.node}
    s, v = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(s, x.std(1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(v, x.var(0, ddof=1), rtol=1e-5)


# ==================================================================================================
# 3. dim=() / dim=[] reduces every dim, as PyTorch
# ==================================================================================================

EMPTY_DIM = [
    ("sum", lambda L, x, d, k: L.sum(x, dim=d, keepdim=k)),
    ("mean", lambda L, x, d, k: L.mean(x, dim=d, keepdim=k)),
    ("amax", lambda L, x, d, k: L.amax(x, dim=d, keepdim=k)),
    ("amin", lambda L, x, d, k: L.amin(x, dim=d, keepdim=k)),
    ("nansum", lambda L, x, d, k: L.nansum(x, dim=d, keepdim=k)),
    ("nanmean", lambda L, x, d, k: L.nanmean(x, dim=d, keepdim=k)),
    ("std", lambda L, x, d, k: L.std(x, dim=d, keepdim=k)),
    ("var", lambda L, x, d, k: L.var(x, dim=d, keepdim=k)),
    ("var_mean", lambda L, x, d, k: L.var_mean(x, dim=d, keepdim=k)),
    ("std_mean", lambda L, x, d, k: L.std_mean(x, dim=d, keepdim=k)),
    ("norm", lambda L, x, d, k: L.norm(x, dim=d, keepdim=k)),
    ("vector_norm", lambda L, x, d, k: L.linalg.vector_norm(x, dim=d, keepdim=k)),
]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("empty", [(), []], ids=["tuple", "list"])
@pytest.mark.parametrize("name, fn", EMPTY_DIM, ids=[c[0] for c in EMPTY_DIM])
def test_empty_dim_reduces_every_dim(name, fn, empty, keepdim, rng):
    a = rng.standard_normal((3, 4))
    if name in ("std", "var", "var_mean", "std_mean"):
        # PyTorch 2.13's forward reduces every dim, but its backward counts the elements of no dim (n = 1,
        # dof = 0) and returns ±inf: the math (and ours) is the gradient over every dim, so the
        # gradient is compared with PyTorch's dim=(0, 1) and the forward with its dim=()
        compare_with_torch(lambda x: fn(mt, x, empty, keepdim), lambda x: fn(torch, x, (0, 1), keepdim), [a])
        got, want = fn(mt, mt.tensor(a), empty, keepdim), fn(torch, torch.tensor(a), empty, keepdim)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-14)
    else:
        compare_with_torch(lambda x: fn(mt, x, empty, keepdim), lambda x: fn(torch, x, empty, keepdim), [a])
    # by hand: the same as dim=None (every dim), i.e. a 0-d result (all-ones shape with keepdim)
    whole = fn(mt, mt.tensor(a), (0, 1), keepdim)
    got = fn(mt, mt.tensor(a), empty, keepdim)
    for g, w in zip(got if isinstance(got, tuple) else (got,), whole if isinstance(whole, tuple) else (whole,)):
        assert g.shape == ((1, 1) if keepdim else ()) and np.array_equal(g.numpy(), w.numpy())


def test_empty_dim_count_nonzero_logsumexp_and_the_ops_that_keep_it_as_no_dim():
    a = np.array([[1.0, 0.0], [0.0, 3.0]])
    for empty in [(), []]:
        # count_nonzero: 2 non-zeros in all, as PyTorch
        assert int(mt.count_nonzero(mt.tensor(a), dim=empty)) == 2 == int(torch.count_nonzero(torch.tensor(a), dim=empty))
        # logsumexp: PyTorch 2.13 reduces every dim with keepdim=True (with keepdim=False it raises, a bug in
        # its out= plumbing), so ours with keepdim=False is compared with its dim=(0, 1)
        compare_with_torch(lambda x, e=empty: mt.logsumexp(x, e, keepdim=True),
                           lambda x, e=empty: torch.logsumexp(x, e, keepdim=True), [a])
        compare_with_torch(lambda x, e=empty: mt.logsumexp(x, e), lambda x: torch.logsumexp(x, (0, 1)), [a])
        # any/all take () as no dim (the input as bool), as PyTorch
        for op in ["any", "all"]:
            np.testing.assert_array_equal(getattr(mt, op)(mt.tensor(a), dim=empty).numpy(),
                                          getattr(torch, op)(torch.tensor(a), dim=empty).numpy())


@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_norm_over_every_dim_double_backward(op, rng):
    # normalized_shape = the whole shape: the parameter gradients sum over no axis (sum_over), where
    # sum(dim=()) would now sum every axis; the composed (double) backward goes through that path
    a, w, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    if op == "layer_norm":
        fn, args = (lambda x, w, b: F.layer_norm(x, (3, 4), w, b)), (a, w, b)
        tfn = lambda x, w, b: TF.layer_norm(x, (3, 4), w, b)
    else:
        fn, args = (lambda x, w: F.rms_norm(x, (3, 4), w, eps=1e-5)), (a, w)
        tfn = lambda x, w: TF.rms_norm(x, (3, 4), w, eps=1e-5)
    compare_with_torch(fn, tfn, list(args))
    assert gradgradcheck(fn, tuple(t64(v) for v in args))


# ==================================================================================================
# 4. prod(dtype=) keeps the requested dtype, multiplying in it
# ==================================================================================================


def test_prod_dtype_wraps_by_hand():
    # 2 · 180 = 360 = 256 + 104: uint8 wraps to 104; 300 · 300 = 90000 = 65536 + 24464 in int16;
    # 100 · 2 = 200 = 256 - 56 in int8; bool's product is the logical and
    x = mt.tensor([2, 180])
    assert mt.prod(x, dtype=mt.uint8).dtype == mt.uint8 and int(mt.prod(x, dtype=mt.uint8)) == 104
    assert int(mt.prod(mt.tensor([300, 300]), dtype=mt.int16)) == 24464
    assert int(mt.prod(mt.tensor([100, 2]), dtype=mt.int8)) == -56
    assert mt.prod(mt.tensor([2, 0]), dtype=mt.bool).item() is False
    assert mt.prod(mt.tensor([2, 3]), dtype=mt.bool).item() is True


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool", "float32"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (None, True), (0, False), (1, True)])
def test_prod_dtype_against_pytorch(dtype, dim, keepdim):
    a = np.array([[2, 180, 3], [7, 0, 255], [11, 13, 17]], np.int64)
    got = mt.prod(mt.tensor(a), dim, keepdim, dtype=getattr(mt, dtype)) if dim is not None else \
        mt.prod(mt.tensor(a), dtype=getattr(mt, dtype))
    want = torch.prod(torch.tensor(a), dim, keepdim, dtype=getattr(torch, dtype)) if dim is not None else \
        torch.prod(torch.tensor(a), dtype=getattr(torch, dtype))
    if dim is None and keepdim:  # torch.prod has no keepdim without dim
        got = mt.prod(mt.tensor(a), None, True, dtype=getattr(mt, dtype))
        want = want.reshape(1, 1)
    assert str(got.dtype) == str(want.dtype).replace("torch.", "") and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# ==================================================================================================
# 5. NaN is the largest value in topk/sort/kthvalue; int64's minimum is the smallest
# ==================================================================================================


def test_topk_nan_and_int64_min_by_hand():
    # NaN sorts above every number (PyTorch's order for topk, sort and max): topk(1) of [1, nan, 3] is NaN
    # at index 1, not 3 at index 2
    v, i = mt.tensor([1.0, NAN, 3.0]).topk(1)
    assert np.isnan(v.numpy()).all() and i.tolist() == [1]
    v, i = mt.tensor([1.0, NAN, 3.0]).topk(2, largest=False)  # the two smallest: NaN never among them
    assert v.tolist() == [1.0, 3.0] and i.tolist() == [0, 2]
    # -(-2**63) wraps to -2**63 in int64: a descending sort of -x took the minimum for the largest
    m = -(2**63)
    v, i = mt.tensor([m, 5, 0]).topk(2)
    assert v.tolist() == [5, 0] and i.tolist() == [1, 2]
    v, i = mt.tensor([m, 5, 0]).topk(1, largest=False)
    assert v.tolist() == [m] and i.tolist() == [0]


ROWS = np.array([[1.0, NAN, 3.0, -0.0, 0.0, 3.0],
                 [NAN, 2.0, NAN, -INF, INF, 0.0],
                 [0.0, -0.0, 0.0, -0.0, 5.0, 5.0]], np.float32)


@pytest.mark.parametrize("k", [1, 2, 4, 6])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_with_nan_rows_against_pytorch(k, largest):
    v, i = mt.tensor(ROWS).topk(k, largest=largest)
    tv, _ = torch.tensor(ROWS).topk(k, largest=largest)
    np.testing.assert_array_equal(v.numpy(), tv.numpy())  # values, NaN included, in PyTorch's order
    # ties: ours keep the lower index first (PyTorch leaves them unspecified): a stable sort's order
    sv, si = torch.sort(torch.tensor(ROWS), descending=largest, stable=True)
    np.testing.assert_array_equal(i.numpy(), si[:, :k].numpy())
    np.testing.assert_array_equal(bits(v), bits(sv[:, :k]))  # -0.0 and 0.0 where the stable order puts them
    # and along dim 0, with a gradient (it goes to the selected entries; compare_with_torch checks it)
    data = np.where(np.isnan(ROWS), ROWS, np.arange(ROWS.size, dtype=np.float32).reshape(ROWS.shape) % 7)
    compare_with_torch(lambda x: x.topk(2, dim=0, largest=largest), lambda x: x.topk(2, dim=0, largest=largest), [data])


@pytest.mark.parametrize("name, ours, theirs", [
    ("sort", lambda x: mt.sort(x, -1), lambda x: torch.sort(x, dim=-1, stable=True)),
    ("sort_desc", lambda x: mt.sort(x, -1, descending=True), lambda x: torch.sort(x, dim=-1, descending=True, stable=True)),
    ("sort_dim0", lambda x: mt.sort(x, 0, descending=True), lambda x: torch.sort(x, dim=0, descending=True, stable=True)),
    ("argsort", lambda x: mt.argsort(x, -1, descending=True),
     lambda x: torch.argsort(x, dim=-1, descending=True, stable=True)),
    ("msort", lambda x: mt.msort(x), lambda x: torch.msort(x)),
    ("kthvalue", lambda x: mt.kthvalue(x, 6, -1), lambda x: torch.kthvalue(x, 6, -1)),
    ("kthvalue_2", lambda x: mt.kthvalue(x, 2, -1), lambda x: torch.kthvalue(x, 2, -1)),
    ("max_dim", lambda x: mt.max(x, -1), lambda x: torch.max(x, -1)),
    ("min_dim", lambda x: mt.min(x, -1), lambda x: torch.min(x, -1)),
])
def test_sorting_with_nan_and_signed_zeros_against_pytorch(name, ours, theirs):
    got, want = ours(mt.tensor(ROWS)), theirs(torch.tensor(ROWS))
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        if w.dtype.is_floating_point and name.startswith("kthvalue"):
            # the k-th of tied values -0.0 and 0.0: PyTorch's quickselect returns either (unspecified)
            np.testing.assert_array_equal(g.numpy(), w.numpy())
        elif w.dtype.is_floating_point:
            np.testing.assert_array_equal(bits(g), bits(w))
        elif name.startswith("kthvalue") or name in ("max_dim", "min_dim"):
            # the index of a tied value is unspecified in PyTorch: it must hold the selected value
            sel = np.take_along_axis(ROWS, g.numpy()[..., None], -1)[..., 0]
            np.testing.assert_array_equal(sel, want[0].numpy())  # NaN at NaN; -0.0 == 0.0 (either may be picked)
        else:
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_sort_int64_min_descending():
    m = -(2**63)
    a = np.array([m, 5, 0, m + 1, 2**63 - 1], np.int64)
    for desc in [False, True]:
        v, i = mt.sort(mt.tensor(a), descending=desc)
        tv, ti = torch.sort(torch.tensor(a), descending=desc, stable=True)
        assert v.tolist() == tv.tolist() and i.tolist() == ti.tolist()
    v, i = mt.tensor(a).topk(5)
    assert v.tolist() == [2**63 - 1, 5, 0, m + 1, m]


@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
                  elements=st.one_of(st.floats(-4, 4, width=32), st.just(NAN), st.just(-0.0), st.just(INF))),
       st.data())
def test_topk_property_sorted_nan_first(a, data):
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    k = data.draw(st.integers(0, a.shape[dim]))
    largest = data.draw(st.booleans())
    v, i = mt.tensor(a).topk(k, dim, largest=largest)
    v, i = v.numpy(), i.numpy()
    # the indices hold the values
    np.testing.assert_array_equal(bits(np.take_along_axis(a, i, dim)), bits(v))
    vv = np.moveaxis(v, dim, -1)
    nan = np.isnan(vv)
    if largest:
        # NaN first (the largest), then non-increasing; as many NaN as the row has, up to k
        n_nan = np.minimum(np.isnan(np.moveaxis(a, dim, -1)).sum(-1), k)
        np.testing.assert_array_equal(nan.sum(-1), n_nan)
        assert not (nan[..., 1:] & ~nan[..., :-1]).any()  # no NaN after a number
        assert np.all((vv[..., :-1] >= vv[..., 1:]) | nan[..., :-1])
    else:
        # the smallest: NaN only once the numbers are used up, non-decreasing before
        assert not (~nan[..., 1:] & nan[..., :-1]).any()
        assert np.all((vv[..., :-1] <= vv[..., 1:]) | nan[..., 1:])
    # the same values as PyTorch's
    tv, _ = torch.from_numpy(a).topk(k, dim, largest=largest)
    np.testing.assert_array_equal(v, tv.numpy())


# ==================================================================================================
# 6. softmax/log_softmax of a row holding +inf is NaN (inf - inf); an all -inf row keeps the zeros
# ==================================================================================================


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_plus_inf_row_is_nan(op, dtype, cpu_kernels):
    # [inf, 1, 0]: the maximum inf is subtracted, inf - inf = NaN, exp(NaN) = NaN, every entry NaN (by hand,
    # and PyTorch); before, a non-finite maximum was replaced by 0, giving [nan, 0, 0]
    a = np.array([[INF, 1.0, 0.0], [1.0, 2.0, 3.0], [0.0, INF, INF]], dtype)
    y = getattr(F, op)(mt.tensor(a), -1).numpy()
    assert np.isnan(y[0]).all() and np.isnan(y[2]).all() and np.isfinite(y[1]).all()
    compare_with_torch(lambda x: getattr(F, op)(x, -1), lambda x: getattr(TF, op)(x, -1), [a])
    compare_with_torch(lambda x: getattr(F, op)(x, 0), lambda x: getattr(TF, op)(x, 0), [a])  # not the last axis


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_all_minus_inf_row_keeps_the_documented_zeros(op, cpu_kernels):
    # deliberate (ops/softmax.py's docstring): a fully masked row gives softmax 0 / log_softmax -inf, and a
    # zero gradient, where PyTorch gives NaN (-inf - (-inf)); the other rows are PyTorch's
    a = np.array([[-INF, -INF, -INF], [1.0, 2.0, 3.0]], np.float32)
    x = mt.tensor(a, requires_grad=True)
    y = getattr(F, op)(x, -1)
    assert (y.detach().numpy()[0] == (0.0 if op == "softmax" else -INF)).all()
    np.testing.assert_allclose(y.detach().numpy()[1], getattr(TF, op)(torch.tensor(a[1]), -1).numpy(), rtol=1e-6)
    (y[1:] * mt.tensor(np.array([[0.3, -1.0, 2.0]], np.float32))).sum().backward()
    assert np.array_equal(x.grad.numpy()[0], np.zeros(3, np.float32))
    softmax_module = importlib.import_module("minitorch_ln.ops.softmax")
    assert "deliberate" in softmax_module.__doc__ and "-inf" in softmax_module.__doc__  # the doc says why


def test_cross_entropy_with_plus_inf_logit_is_nan_as_pytorch():
    logits = np.array([[INF, 1.0, 0.0], [0.5, 1.0, -2.0]], np.float32)
    target = np.array([1, 2], np.int64)
    compare_with_torch(lambda x, t: F.cross_entropy(x, t, reduction="none"),
                       lambda x, t: TF.cross_entropy(x, t, reduction="none"), [logits, target])


# ==================================================================================================
# 7. max()/min() gradient with NaN entries; -0.0 ties; cumsum from +0; RMSNorm of a row with inf
# ==================================================================================================


@pytest.mark.parametrize("a", [
    [1.0, NAN, 3.0],                # one NaN: the gradient is a one-hot at it (by hand: the NaN is "the" maximum)
    [1.0, NAN, 3.0, NAN],           # two NaN: shared evenly, 1/2 each (PyTorch's evenly_distribute_backward)
    [[1.0, NAN], [3.0, 4.0]],       # 2-d
    [3.0, 1.0, 3.0],                # no NaN: ties share (1/2 each)
], ids=["one_nan", "two_nan", "2d", "ties"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_of_all_gradient_with_nan(op, a):
    a = np.array(a, np.float32)
    compare_with_torch(lambda x: getattr(x, op)(), lambda x: getattr(x, op)(), [a])
    x = mt.tensor(a, requires_grad=True)
    getattr(x, op)().backward()
    nan = np.isnan(a)
    want = nan / nan.sum() if nan.any() else (a == getattr(np, op)(a)) / (a == getattr(np, op)(a)).sum()
    np.testing.assert_array_equal(x.grad.numpy(), want.astype(np.float32))


def test_amax_gradient_with_nan_stays_nan_as_pytorch():
    # amax's NaN maximum ties with nothing: 0/0 = NaN everywhere in its gradient, as PyTorch's amax
    compare_with_torch(lambda x: x.amax(), lambda x: x.amax(), [np.array([1.0, NAN, 3.0], np.float32)])
    compare_with_torch(lambda x: x.amax(1), lambda x: x.amax(1), [np.array([[1.0, NAN], [3.0, 4.0]], np.float32)])


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_gradcheck_noncontiguous(op, rng):
    fn = lambda x: getattr(x, op)()
    gradcheck_noncontiguous(fn, [rng.standard_normal((3, 4))])
    assert gradcheck(fn, (t64(rng.standard_normal((2, 5))),))


PAIRS = np.array([-0.0, 0.0, -0.0, 0.0, 1.0, NAN], np.float32), np.array([0.0, -0.0, -0.0, 0.0, NAN, 1.0], np.float32)


@pytest.mark.parametrize("name, ours, theirs", [
    ("maximum", lambda a, b: mt.maximum(a, b), lambda a, b: torch.maximum(a, b)),
    ("minimum", lambda a, b: mt.minimum(a, b), lambda a, b: torch.minimum(a, b)),
    ("max_binary", lambda a, b: mt.max(a, b), lambda a, b: torch.max(a, b)),
    ("min_binary", lambda a, b: mt.min(a, b), lambda a, b: torch.min(a, b)),
    ("fmax", lambda a, b: mt.fmax(a, b), lambda a, b: torch.fmax(a, b)),
])
def test_maximum_minimum_keep_the_first_argument_on_a_tie(name, ours, theirs):
    # by hand: maximum(-0.0, 0.0) is -0.0 and maximum(0.0, -0.0) is 0.0 (PyTorch keeps the first argument
    # on a tie; NumPy gives the second); NaN propagates
    a, b = PAIRS
    if name == "fmax" and not hasattr(mt, "fmax"):
        pytest.skip("no fmax")
    got, want = ours(mt.tensor(a), mt.tensor(b)), theirs(torch.tensor(a), torch.tensor(b))
    np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if name == "maximum":
        assert np.signbit(got.numpy()[:3]).tolist() == [True, False, True]
    # the tie gradient: 1/2 each, as PyTorch. (At a NaN output PyTorch passes the whole gradient to both
    # inputs, this gives 0 to both: a gradient through a NaN has no meaning, so that is left alone)
    compare_with_torch(ours, theirs, [a[:4], b[:4]])


@pytest.mark.parametrize("kw", [{"min": 0.0}, {"max": 0.0}, {"min": -0.0, "max": 0.0}, {"min": 0.0, "max": -0.0},
                                {"min": -1.0, "max": 1.0}])
def test_clamp_keeps_x_at_a_bound(kw):
    # by hand: clamp(-0.0, min=0) is -0.0 (x equals the bound, x itself is returned, as PyTorch)
    a = np.array([-0.0, 0.0, -1.0, 1.0, 0.5, -2.0, NAN], np.float32)
    got, want = mt.clamp(mt.tensor(a), **kw), torch.clamp(torch.tensor(a), **kw)
    np.testing.assert_array_equal(bits(got), bits(want))
    compare_with_torch(lambda x: mt.clamp(x, **kw), lambda x: torch.clamp(x, **kw), [a[:-1]])
    assert np.signbit(mt.clamp(mt.tensor([-0.0]), min=0.0).numpy()).all()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_cumsum_starts_from_plus_zero(dtype):
    # by hand: a running sum starts at +0 (as sum: tensor([-0.]).sum() is +0), -0 + (+0) = +0, so a leading
    # -0.0 gives 0.0; later -0.0 entries add to a +0 already there
    a = np.array([[-0.0, 1.0, -0.0], [-0.0, -0.0, -1.0]], dtype)
    got = mt.cumsum(mt.tensor(a), 1)
    assert not np.signbit(got.numpy()[:, :2]).any() and got.numpy()[1, 2] == -1.0
    np.testing.assert_array_equal(bits(got), bits(torch.cumsum(torch.tensor(a), 1)))
    np.testing.assert_array_equal(bits(mt.cumsum(mt.tensor(a), 0)), bits(torch.cumsum(torch.tensor(a), 0)))
    compare_with_torch(lambda x: mt.cumsum(x, 1), lambda x: torch.cumsum(x, 1), [a.astype(np.float32)])
    assert np.array_equal(bits(mt.tensor(a).sum(1)), bits(torch.tensor(a).sum(1)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rms_norm_row_with_inf(dtype, cpu_kernels):
    # [inf, 1, 0]: the mean square is inf, rstd = 1/sqrt(inf + eps) = 0, y = x · 0 = [inf·0, 0, 0] =
    # [nan, 0, 0] (by hand and PyTorch); the overflow redo (which scales by max |x| = inf) made it all NaN.
    # A finite float32 row whose squares overflow still takes the redo: [2e38, 3e38] / sqrt((4 + 9) / 2 · 1e76)
    a = np.array([[INF, 1.0, 0.0], [1.0, 2.0, 3.0], [-INF, INF, 2.0]], dtype)
    y = F.rms_norm(mt.tensor(a), (3,)).numpy()
    assert np.isnan(y[0, 0]) and (y[0, 1:] == 0).all() and np.isnan(y[2, :2]).all() and y[2, 2] == 0
    compare_with_torch(lambda x: F.rms_norm(x, (3,)), lambda x: TF.rms_norm(x, (3,)), [a])
    big = np.array([[2e38, 3e38]], dtype)
    np.testing.assert_allclose(F.rms_norm(mt.tensor(big), (2,), eps=0.0).numpy(),
                               [[2 / np.sqrt(6.5), 3 / np.sqrt(6.5)]], rtol=1e-6)
    w = np.array([0.5, -1.0, 2.0], dtype)
    compare_with_torch(lambda x, w: F.rms_norm(x, (3,), w), lambda x, w: TF.rms_norm(x, (3,), w), [a[1:2], w])


# ==================================================================================================
# 8. a uint8 index is a boolean mask (PyTorch's deprecated meaning), with PyTorch's warning
# ==================================================================================================

UINT8_WARNING = "indexing with dtype torch.uint8 is now deprecated"


def test_uint8_index_is_a_mask_by_hand():
    # [1, 0, 1] as a mask picks rows 0 and 2 (as integer indices it picked rows 1, 0, 1: the old result)
    x = mt.tensor([10.0, 20.0, 30.0])
    with pytest.warns(UserWarning, match=UINT8_WARNING):
        assert x[mt.tensor([1, 0, 1], dtype=mt.uint8)].tolist() == [10.0, 30.0]
    with pytest.warns(UserWarning, match=UINT8_WARNING):
        assert x[np.array([0, 2, 1], np.uint8)].tolist() == [20.0, 30.0]  # non-zero is true


@pytest.mark.parametrize("case", ["1d", "2d_mask", "second_axis", "zero_d"])
def test_uint8_index_against_pytorch(case):
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 3
    if case == "1d":
        m, ours, theirs = np.array([1, 0, 1], np.uint8), (lambda x, m: x[m]), (lambda x, m: x[m])
    elif case == "2d_mask":
        m = (np.arange(12).reshape(3, 4) % 3 == 0).astype(np.uint8)
        ours = theirs = lambda x, m: x[m]
    elif case == "second_axis":
        m, ours, theirs = np.array([0, 1, 1, 0], np.uint8), (lambda x, m: x[:, m]), (lambda x, m: x[:, m])
    else:  # a 0-d uint8 index: a 0-d mask (adds a dim of 1), no warning in PyTorch nor here
        m, ours, theirs = np.array(1, np.uint8), (lambda x, m: x[m]), (lambda x, m: x[m])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        compare_with_torch(ours, theirs, [a, m])
    ours_w = [x for x in w if str(x.message).startswith(UINT8_WARNING) and "Triggered internally" not in str(x.message)]
    theirs_w = [x for x in w if "Triggered internally" in str(x.message)]  # PyTorch warns again in its backward
    assert len(ours_w) == (0 if case == "zero_d" else 1) and bool(theirs_w) == bool(ours_w)


# ==================================================================================================
# float64 gradcheck of the ops whose backward changed (mean, var/std as one Function), non-contiguous too
# ==================================================================================================


@pytest.mark.parametrize("name, fn, gg", [
    ("mean", lambda x: x.mean(), True),
    ("mean_dims", lambda x: x.mean((0, 2), keepdim=True), True),
    ("var", lambda x: x.var(1), True),
    ("var_corr0", lambda x: x.var((0, 2), correction=0), True),
    ("std", lambda x: x.std(-1), True),
    ("std_all", lambda x: x.std(), True),
    ("std_mean", lambda x: mt.std_mean(x, 1), True),
    ("std_empty_dim", lambda x: x.std(dim=()), False),
])
def test_gradcheck_changed_backwards(name, fn, gg, rng):
    gradcheck_noncontiguous(fn, [rng.standard_normal((3, 4, 5))], gg=gg)
    x = noncontiguous_leaf(rng.standard_normal((2, 3, 4)))
    assert gradcheck(fn, (x,))


@given(st.integers(1, 300), st.integers(0, 2**31 - 1))
def test_mean_property_is_sum_over_n_bitwise(n, seed):
    # exact-sum float32 data (see exact_sum_f32): the sum is exact, so mean must be the one rounding
    # fl32(S / n), IEEE float32 division, whatever n (1/n not representable, or a power of two), as PyTorch
    rng = np.random.default_rng(seed)
    a = exact_sum_f32(rng, (n,))
    s = sum(Fraction(float(v)) for v in a)  # exact
    assert s == Fraction(float(np.float32(s)))  # and a float32
    want = np.float32(float(s)) / np.float32(n)
    got = mt.tensor(a).mean()
    assert bits(got) == bits(np.array(want)) == bits(torch.from_numpy(a).mean())
