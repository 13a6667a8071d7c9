"""``axis=`` as PyTorch's alias of ``dim=`` (issue 14), and small-int tensors with out-of-range Python
ints wrapping as PyTorch does (``uint8 [1, 2] + 300 -> [45, 46]``).

Table-driven: a new function is one entry in FUNCTION_CASES / METHOD_CASES; a new scalar case one
entry in WRAP_SCALARS / WRAP_OPS.
"""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitorch_ln as mt
from helpers import torch

# ---- strategies / data of this file -------------------------------------------------------------
X = np.array([[3.0, -1.0, 2.0, 0.5], [0.0, 4.0, -2.0, 1.0], [1.5, 1.25, -0.5, 2.5]])  # (3, 4), no ties (tie indices differ)


def _pair(lib):
    """The (3, 4) float64 input as ``lib``'s tensor."""
    return lib.tensor(X.tolist(), dtype=lib.float64)


# (name, call(lib, x, **kw)): every public function of ours for which PyTorch 2.13 accepts axis=
# (checked by calling torch; torch.split/flatten/flip/roll do NOT, see REJECTED_CASES)
FUNCTION_CASES = [
    ("sort", lambda m, x, **k: m.sort(x, **k)),
    ("argsort", lambda m, x, **k: m.argsort(x, **k)),
    ("softmax", lambda m, x, **k: m.softmax(x, **k)),
    ("log_softmax", lambda m, x, **k: m.log_softmax(x, **k)),
    ("cumsum", lambda m, x, **k: m.cumsum(x, **k)),
    ("cumprod", lambda m, x, **k: m.cumprod(x, **k)),
    ("cummax", lambda m, x, **k: m.cummax(x, **k)),
    ("cummin", lambda m, x, **k: m.cummin(x, **k)),
    ("logcumsumexp", lambda m, x, **k: m.logcumsumexp(x, **k)),
    ("median", lambda m, x, **k: m.median(x, **k)),
    ("nanmedian", lambda m, x, **k: m.nanmedian(x, **k)),
    ("mode", lambda m, x, **k: m.mode(x, **k)),
    ("kthvalue", lambda m, x, **k: m.kthvalue(x, 2, **k)),
    ("quantile", lambda m, x, **k: m.quantile(x, 0.3, **k)),
    ("squeeze", lambda m, x, **k: m.squeeze(m.unsqueeze(x, 0), **{n: 0 for n in k})),
    ("unsqueeze", lambda m, x, **k: m.unsqueeze(x, **k)),
    ("cat", lambda m, x, **k: m.cat([x, x * 2], **k)),
    ("stack", lambda m, x, **k: m.stack([x, x * 2], **k)),
    ("chunk", lambda m, x, **k: m.chunk(x, 2, **k)),
    ("tensor_split", lambda m, x, **k: m.tensor_split(x, 2, **k)),
    ("repeat_interleave", lambda m, x, **k: m.repeat_interleave(x, 2, **k)),
    ("count_nonzero", lambda m, x, **k: m.count_nonzero(x, **k)),
    ("prod", lambda m, x, **k: m.prod(x, **k)),
    ("var_mean", lambda m, x, **k: m.var_mean(x, **k)),
    ("std_mean", lambda m, x, **k: m.std_mean(x, **k)),
    ("aminmax", lambda m, x, **k: m.aminmax(x, **k)),
    # the reductions of ops/reduction.py (already taking axis=)
    ("sum", lambda m, x, **k: m.sum(x, **k)),
    ("mean", lambda m, x, **k: m.mean(x, **k)),
    ("logsumexp", lambda m, x, **k: m.logsumexp(x, **k)),
    ("amax", lambda m, x, **k: m.amax(x, **k)),
    ("argmax", lambda m, x, **k: m.argmax(x, **k)),
    ("std", lambda m, x, **k: m.std(x, **k)),
]

# (name, call(x, **kw)) through the Tensor method
METHOD_CASES = [
    ("sort", lambda x, **k: x.sort(**k)),
    ("argsort", lambda x, **k: x.argsort(**k)),
    ("cumsum", lambda x, **k: x.cumsum(**k)),
    ("cummax", lambda x, **k: x.cummax(**k)),
    ("median", lambda x, **k: x.median(**k)),
    ("kthvalue", lambda x, **k: x.kthvalue(1, **k)),
    ("quantile", lambda x, **k: x.quantile(0.5, **k)),
    ("mode", lambda x, **k: x.mode(**k)),
    ("prod", lambda x, **k: x.prod(**k)),
    ("count_nonzero", lambda x, **k: x.count_nonzero(**k)),
    ("aminmax", lambda x, **k: x.aminmax(**k)),
    ("tensor_split", lambda x, **k: x.tensor_split(2, **k)),
    ("repeat_interleave", lambda x, **k: x.repeat_interleave(2, **k)),
    ("sum", lambda x, **k: x.sum(**k)),
]
# Tensor methods defined with a fixed signature in ops/tensor_methods.py (not editable in this
# change): they refuse axis= until that file forwards it (see the report of issue 14)
METHOD_CASES_PENDING = [
    ("softmax", lambda x, **k: x.softmax(**k)),
    ("log_softmax", lambda x, **k: x.log_softmax(**k)),
    ("squeeze", lambda x, **k: x.unsqueeze(0).squeeze(**{n: 0 for n in k})),
    ("unsqueeze", lambda x, **k: x.unsqueeze(**k)),
    ("chunk", lambda x, **k: x.chunk(2, **k)),
]

# PyTorch refuses axis= here (TypeError); so do we
REJECTED_CASES = [
    ("split", lambda m, x, **k: m.split(x, 2, **k)),
    ("flatten", lambda m, x, **k: m.flatten(x, **k)),
    ("flip", lambda m, x, **k: m.flip(x, **k)),
    ("roll", lambda m, x, **k: m.roll(x, 1, **k)),
]


def _arrays(out):
    """``out`` (a Tensor, a tuple/namedtuple/list of them) as a list of NumPy arrays."""
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in _arrays(o)]
    return [out.detach().cpu().numpy() if isinstance(out, torch.Tensor) else np.asarray(out.array)]


def _same(ours, theirs, what):
    a, b = _arrays(ours), _arrays(theirs)
    assert len(a) == len(b), f"{what}: {len(a)} results, torch gives {len(b)}"
    for u, v in zip(a, b):
        assert u.shape == v.shape, f"{what}: shape {u.shape}, torch {v.shape}"
        assert u.dtype == v.dtype, f"{what}: dtype {u.dtype}, torch {v.dtype}"
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12, err_msg=what)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("name,call", FUNCTION_CASES, ids=[c[0] for c in FUNCTION_CASES])
def test_function_axis_matches_torch_and_dim(name, call, axis):
    x, tx = _pair(mt), _pair(torch)
    ours = call(mt, x, axis=axis)
    _same(ours, call(torch, tx, axis=axis), f"{name}(axis={axis}) vs torch")
    _same(ours, call(mt, x, dim=axis), f"{name}(axis={axis}) vs ours(dim={axis})")


@pytest.mark.parametrize("name,call", FUNCTION_CASES, ids=[c[0] for c in FUNCTION_CASES])
def test_function_dim_and_axis_both_is_type_error(name, call):
    with pytest.raises(TypeError):
        call(torch, _pair(torch), dim=0, axis=0)
    with pytest.raises(TypeError, match="axis"):
        call(mt, _pair(mt), dim=0, axis=0)


@pytest.mark.parametrize("name,call", METHOD_CASES, ids=[c[0] for c in METHOD_CASES])
def test_method_axis_matches_torch_and_dim(name, call):
    x = _pair(mt)
    _same(call(x, axis=1), call(_pair(torch), axis=1), f"Tensor.{name}(axis=1) vs torch")
    _same(call(x, axis=1), call(x, dim=1), f"Tensor.{name}(axis=1) vs dim=1")
    with pytest.raises(TypeError, match="axis"):
        call(x, dim=0, axis=0)


@pytest.mark.parametrize("name,call", METHOD_CASES_PENDING, ids=[c[0] for c in METHOD_CASES_PENDING])
def test_method_axis_forwarded(name, call):  # softmax, log_softmax, squeeze, unsqueeze, chunk as Tensor methods
    _same(call(_pair(mt), axis=0), call(_pair(torch), axis=0), f"Tensor.{name}(axis=0) vs torch")


@pytest.mark.parametrize("name,call", REJECTED_CASES, ids=[c[0] for c in REJECTED_CASES])
def test_axis_refused_where_torch_refuses_it(name, call):
    with pytest.raises(TypeError):
        call(torch, _pair(torch), axis=0)
    with pytest.raises(TypeError):
        call(mt, _pair(mt), axis=0)


def test_axis_alias_keeps_gradients():
    x = mt.tensor(X.tolist(), requires_grad=True)
    tx = torch.tensor(X.tolist(), requires_grad=True)
    g = np.random.default_rng(0).standard_normal((2, 3, 4))
    mt.stack([mt.softmax(x, axis=1), mt.cumsum(x, axis=0)], axis=0).backward(mt.tensor(g.tolist()))
    torch.stack([torch.softmax(tx, axis=1), torch.cumsum(tx, axis=0)], axis=0).backward(torch.tensor(g))
    np.testing.assert_allclose(np.asarray(x.grad.array), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


# ==================================================================================================
# Small-int tensors with an out-of-range Python int: PyTorch wraps the number into the dtype
# ==================================================================================================
WRAP_DTYPES = [(mt.uint8, torch.uint8), (mt.int8, torch.int8), (mt.int16, torch.int16), (mt.int32, torch.int32)]
WRAP_SCALARS = [300, -1, 1000, -1000, 70000, -70000, 2**31 + 5, 2**40, -(2**40) - 3]
WRAP_OPS = [
    ("add", lambda a, n: a + n), ("radd", lambda a, n: n + a), ("sub", lambda a, n: a - n),
    ("rsub", lambda a, n: n - a), ("mul", lambda a, n: a * n), ("rmul", lambda a, n: n * a),
    ("and", lambda a, n: a & n), ("or", lambda a, n: a | n), ("xor", lambda a, n: a ^ n),
]
VALS = [0, 1, 2, 100, 127]


@pytest.mark.parametrize("n", WRAP_SCALARS)
@pytest.mark.parametrize("op,fn", WRAP_OPS, ids=[o[0] for o in WRAP_OPS])
@pytest.mark.parametrize("md,td", WRAP_DTYPES, ids=str)
def test_out_of_range_int_wraps_as_torch(md, td, op, fn, n):
    ours, theirs = fn(mt.tensor(VALS, dtype=md), n), fn(torch.tensor(VALS, dtype=td), n)
    _same(ours, theirs, f"{td} {op} {n}")


@given(st.sampled_from(WRAP_DTYPES[:3]), st.integers(-(2**40), 2**40),
       st.lists(st.integers(0, 100), min_size=1, max_size=5))
def test_wrap_property(pair, n, vals):
    md, td = pair
    for _, fn in WRAP_OPS[:6]:
        _same(fn(mt.tensor(vals, dtype=md), n), fn(torch.tensor(vals, dtype=td), n), f"{td} with {n}")


def test_wrap_examples_from_the_issue():
    assert (mt.tensor([1, 2], dtype=mt.uint8) + 300).tolist() == [45, 46]
    assert (mt.tensor([3, -2], dtype=mt.int8) * 1000).tolist() == [-72, 48]  # 3000 -> -72, -2000 -> 48


def test_floor_divide_and_remainder_wrap_as_torch():
    u, tu = mt.tensor([1, 2, 250], dtype=mt.uint8), torch.tensor([1, 2, 250], dtype=torch.uint8)
    _same(u // 300, tu // 300, "uint8 // 300")  # 300 -> 44
    _same(u % 300, tu % 300, "uint8 % 300")


def test_comparisons_keep_the_math_not_the_wrap():
    # see tests/test_dtypes.py: comparisons widen, they do not wrap (PyTorch's `u > -1` is all False)
    u = mt.tensor([0, 200], dtype=mt.uint8)
    assert (u > -1).tolist() == [True, True] and (u == 300).tolist() == [False, False]
    assert (u + 300).dtype == mt.uint8


def test_where_refuses_out_of_range_int_as_torch():
    u, tu = mt.tensor([1, 2], dtype=mt.uint8), torch.tensor([1, 2], dtype=torch.uint8)
    with pytest.raises(RuntimeError):
        torch.where(tu > 1, tu, 300)
    with pytest.raises(RuntimeError, match=r"300 cannot be converted to type uint8.*\[0, 255\]"):
        mt.where(u > 1, u, 300)


def test_beyond_int64_is_overflow_error_as_torch():
    u, tu = mt.tensor([1, 2], dtype=mt.uint8), torch.tensor([1, 2], dtype=torch.uint8)
    with pytest.raises(OverflowError):
        tu + 2**70
    with pytest.raises(OverflowError):
        u + 2**70
