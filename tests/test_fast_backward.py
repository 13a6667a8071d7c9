"""The engine's array backwards (``ops/fast_backward.py``, issue 26) against the general path they replace
(``engine._FAST_ON = False``: every backward through its Function in Tensor ops): gradients bit for bit with
their dtypes, for each op, float16/32/64, edge values, broadcasting, non-contiguous inputs; and that everything
the fast path must not change still holds: hooks, ``retain_grad``, ``create_graph`` (the fast path is off and the
second derivatives exact), anomaly mode, ``retain_graph``, version counters, a freed graph, tracers."""

import importlib.util
import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import engine
from minitorch_ln.ops import fast_backward

from helpers import compare_with_torch, gradcheck_noncontiguous
from strategies import arrays, shapes

FLOATS = ["float16", "float32", "float64"]
EDGES = [0.0, -0.0, 1e-30, -1e-30, 0.5, -2.0, 9.0, 1e4, -1e4, 1e30, math.inf, -math.inf, math.nan]

# one expression per fast op (and the ops mixed), of leaves x, w (and a Python number)
EXPRS = {
    "neg": lambda x, w: -x,
    "add": lambda x, w: x + w,
    "add_number": lambda x, w: x + 2.5,
    "sub": lambda x, w: x - w,
    "rsub_number": lambda x, w: 1.5 - x,
    "mul": lambda x, w: x * w,
    "mul_number": lambda x, w: x * 3.0,
    "mul_self": lambda x, w: x * x,
    "div": lambda x, w: x / w,
    "div_number": lambda x, w: x / 3.0,
    "rdiv_number": lambda x, w: 2.0 / w,
    "exp": lambda x, w: x.exp(),
    "log": lambda x, w: w.log(),
    "relu": lambda x, w: x.relu(),
    "tanh": lambda x, w: x.tanh(),
    "pow": lambda x, w: x**2,
    "pow_half": lambda x, w: w**0.5,
    "pow_0_and_1": lambda x, w: x**0 + x**1,
    "mixed": lambda x, w: (x * w + w**2).tanh() + (x * 2.0).relu() - x / 3.0 + (-w).exp() * x.log(),
}


def _grads(expr, x, w, dy, fast=True, **backward_kwargs):
    """``expr``'s gradients for x and w (bytes, dtypes) after ``backward(dy)``, fast path on or off."""
    xt, wt = mt.tensor(x, requires_grad=True), mt.tensor(w, requires_grad=True)
    with mock.patch.object(engine, "_FAST_ON", fast), np.errstate(all="ignore"):
        y = expr(xt, wt)
        y.backward(mt.tensor(dy), **backward_kwargs)
    out = []
    for t in (xt, wt):
        g = t.grad
        out.append(None if g is None else (g.dtype, g.shape, type(g.array), g.numpy().tobytes()))
    return out


def _inputs(dtype, shape=(13,), seed=0):  # 13 = len(EDGES)
    rng = np.random.default_rng(seed)
    with np.errstate(over="ignore"):  # 1e30 and 1e4 are inf in float16
        x = np.resize(np.array(EDGES), shape).astype(dtype) if shape else np.array(0.7, dtype=dtype)
        w = (rng.standard_normal(shape) * 3).astype(dtype)
        dy = rng.standard_normal(shape).astype(dtype)  # random upstream gradient, never all ones
    return x, w, dy


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(EXPRS))
def test_fast_backward_is_the_general_path_bit_for_bit(name, dtype):
    for shape in [(len(EDGES),), (), (2, 3)]:
        x, w, dy = _inputs(dtype, shape)
        assert _grads(EXPRS[name], x, w, dy) == _grads(EXPRS[name], x, w, dy, fast=False), shape


def test_the_fast_path_runs_for_each_op_and_0d_gradients_are_arrays():
    seen = []
    spied = {cls: (lambda node, g, d, f=f: seen.append(node.fn.__name__) or f(node, g, d))
             for cls, f in engine._FAST_BACKWARD.items()}
    with mock.patch.dict(engine._FAST_BACKWARD, spied):
        a, b = mt.tensor(0.5, requires_grad=True), mt.tensor(-1.5, requires_grad=True)
        c = a * b + b**2
        d = c.tanh() + (c * 2.0).relu() - a / 3.0 + (-a).exp() + (-b).log()
        d.backward()
    assert sorted(set(seen)) == ["Add", "Div", "Exp", "Log", "Mul", "Neg", "PowScalar", "ReLU", "Sub", "Tanh"]
    # c reaches d twice: the engine's array sum of its gradients is a 0-d array, as Add.apply makes it
    assert type(a.grad.array) is np.ndarray and type(b.grad.array) is np.ndarray
    # hand-worked: c = -0.75 + 2.25 = 1.5; dd/dc = sech²(1.5) + 2; dd/da = b·dd/dc - 1/3 - e^(-a);
    # dd/db = (a + 2b)·dd/dc + 1/b (d/db log(-b) = 1/b)
    dc = 1 / math.cosh(1.5) ** 2 + 2
    assert math.isclose(a.grad.item(), -1.5 * dc - 1 / 3 - math.exp(-0.5), rel_tol=1e-6)
    assert math.isclose(b.grad.item(), (0.5 - 3.0) * dc + 1 / -1.5, rel_tol=1e-6)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_broadcast_operands_take_the_general_path_with_the_same_values(name):
    rng = np.random.default_rng(1)
    x, w, dy = rng.standard_normal((3, 4)), rng.uniform(0.5, 2, (1, 4)), rng.standard_normal((3, 4))
    fast = _grads(EXPRS[name], x, w, dy)
    assert fast == _grads(EXPRS[name], x, w, dy, fast=False)
    assert fast[1][1] == (1, 4)  # summed back over the broadcast axis


def test_noncontiguous_inputs_and_gradcheck_through_the_fast_path():
    rng = np.random.default_rng(2)
    x = rng.uniform(0.5, 2.0, (3, 4)) * rng.choice([-1, 1], (3, 4))  # the mixed expression logs x: NaN below 0
    w = rng.uniform(0.5, 2.0, (3, 4))
    gradcheck_noncontiguous(EXPRS["mul"], [x, w])
    x = np.abs(x)
    gradcheck_noncontiguous(EXPRS["mixed"], [x, w])  # gradcheck's backward passes record nothing: fast path
    xt = mt.tensor(np.asfortranarray(x), requires_grad=True)  # a transposed-layout leaf
    xt.exp().tanh().backward(mt.tensor(x.T.copy().T))
    want = mt.tensor(x, requires_grad=True)
    want.exp().tanh().backward(mt.tensor(x))
    assert xt.grad.numpy().tobytes() == want.grad.numpy().tobytes()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_scalar_autograd_against_torch(dtype):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(()).astype(dtype), rng.uniform(0.5, 2.0, ()).astype(dtype)

    def f(a, b):
        c = a * b + b**2
        return c.tanh() + (c * 2.0).relu() - a / 3.0 + (-a).exp() + b.log() / b

    compare_with_torch(f, f, [a, b])


def test_hooks_see_and_replace_the_gradients_as_on_the_general_path():
    def run(fast):
        seen = []
        x = mt.tensor([0.5, -1.0, 2.0], requires_grad=True)
        h = x * 3.0
        h.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 2.0)  # doubles h's gradient
        k = h.tanh()
        k.retain_grad()
        # a non-contiguous replacement (a strided view of a larger array): the array backwards take it as it is
        k.register_hook(lambda g: mt.stack([g * 0.5, g], dim=1)[:, 0])
        x.register_hook(lambda g: seen.append(g.numpy().copy()))
        with mock.patch.object(engine, "_FAST_ON", fast):
            (k.exp() * x).sum().backward()
        return x.grad.numpy().tobytes(), x.grad.dtype, k.grad.numpy().tobytes(), [s.tobytes() for s in seen]

    assert run(True) == run(False)


def test_a_hook_changing_the_dtype_raises_on_both_paths():
    # as PyTorch: a hook may not change the gradient's dtype (it did here once, and the fast path then had to
    # step aside for a gradient of another dtype than its node's output); the same error with and without it
    def run(fast):
        x = mt.tensor([0.5, -1.0], requires_grad=True)
        k = (x * 3.0).tanh()
        k.register_hook(lambda g: g.to(mt.float64))
        with mock.patch.object(engine, "_FAST_ON", fast), pytest.raises(RuntimeError) as e:
            (k.exp() * x).sum().backward()
        return str(e.value), x.grad

    assert run(True) == run(False) == (
        "hook '<lambda>' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)", None)


def test_create_graph_records_the_tensor_op_backward_and_second_derivatives_are_exact():
    calls = []
    spied = {cls: (lambda node, g, d, f=f: calls.append(1) or f(node, g, d))
             for cls, f in engine._FAST_BACKWARD.items()}
    x = mt.tensor(0.8, dtype=mt.float64, requires_grad=True)
    with mock.patch.dict(engine._FAST_BACKWARD, spied):
        (g,) = mt.autograd.grad(x * x * x - x.exp(), x, create_graph=True)
        assert not calls and g.requires_grad
        (gg,) = mt.autograd.grad(g, x)  # records nothing: the fast path differentiates g's graph
    assert calls
    assert g.item() == pytest.approx(3 * 0.8**2 - math.exp(0.8), rel=1e-15)  # 3x² - eˣ
    assert gg.item() == pytest.approx(6 * 0.8 - math.exp(0.8), rel=1e-15)  # 6x - eˣ


def test_anomaly_mode_and_tracers_take_the_general_path():
    calls = []
    spied = {cls: (lambda node, g, d, f=f: calls.append(1) or f(node, g, d))
             for cls, f in engine._FAST_BACKWARD.items()}
    x = mt.tensor([0.0, 1.0], requires_grad=True)
    with mock.patch.dict(engine._FAST_BACKWARD, spied):
        with mt.autograd.detect_anomaly(), np.errstate(invalid="ignore"):  # inf · 0 in Mul's backward: NumPy warns
            y = (x.log() * 0.0).sum()  # log's gradient at 0 is inf; times 0 gives NaN there
            with pytest.raises(RuntimeError, match="NaN"):
                y.backward()
        from minitorch_ln.autograd import function

        with mock.patch.object(function, "_tracer", lambda *a: None):
            (x * 2.0).sum().backward()
        assert not calls
        (x * 2.0).sum().backward()
        assert calls  # and without either, the fast path runs


def test_retain_graph_freed_graph_and_version_counters_as_the_general_path():
    def run(fast):
        out = []
        with mock.patch.object(engine, "_FAST_ON", fast):
            x = mt.tensor([1.0, 2.0], requires_grad=True)
            y = (x * x).sum()
            y.backward(retain_graph=True)
            y.backward()  # gradients accumulate: 2 · 2x
            out.append(x.grad.numpy().tobytes())
            with pytest.raises(RuntimeError, match="backward through the graph a second time") as e:
                y.backward()
            out.append(str(e.value))
            z = x.detach().requires_grad_()
            v = z * 1.0
            u = v.log()
            v.mul_(2.0)  # log saved its input: it changed in place
            with pytest.raises(RuntimeError, match="modified by an in-place operation") as e:
                u.sum().backward()
            out.append(str(e.value))
        return out

    assert run(True) == run(False)


def test_gradients_of_non_leaf_tensors_and_autograd_grad():
    def run(fast):
        with mock.patch.object(engine, "_FAST_ON", fast):
            x = mt.tensor([0.3, -0.7], requires_grad=True)
            h = x.tanh()
            h.retain_grad()
            y = (h * h - h / 2.0).sum()
            gh, gx = mt.autograd.grad(y, (h, x), retain_graph=True)
            y.backward()
        return [t.numpy().tobytes() for t in (gh, gx, h.grad, x.grad)]

    fast = run(True)
    assert fast == run(False)
    # as PyTorch: autograd.grad fires h's retain_grad hook too, so h.grad is 2·gh (exact in float); x.grad is gx
    assert fast[2] == (2 * np.frombuffer(fast[0], np.float32)).tobytes() and fast[1] == fast[3]


@settings(max_examples=40, deadline=None)
@given(shape=shapes, data=st.data(), dtype=st.sampled_from(FLOATS), name=st.sampled_from(sorted(EXPRS)))
def test_property_fast_equals_general(shape, data, dtype, name):
    x = data.draw(arrays(shape, dtype=np.float64, min_value=-5, max_value=5)).astype(dtype)
    w = data.draw(arrays(shape, dtype=np.float64, min_value=0.1, max_value=5)).astype(dtype)
    dy = data.draw(arrays(shape, dtype=np.float64)).astype(dtype)
    assert _grads(EXPRS[name], x, w, dy) == _grads(EXPRS[name], x, w, dy, fast=False)


def test_bfloat16_and_complex_take_the_general_path():
    calls = []
    spied = {cls: (lambda node, g, d, f=f: calls.append(1) or f(node, g, d))
             for cls, f in engine._FAST_BACKWARD.items()}
    with mock.patch.dict(engine._FAST_BACKWARD, spied):
        z = mt.tensor([1 + 2j, -0.5j], requires_grad=True)
        (z * z).exp().abs().sum().backward()
        if importlib.util.find_spec("ml_dtypes") is not None:  # bfloat16 needs ml_dtypes (an extra)
            b = mt.tensor([1.5, -2.0], dtype=mt.bfloat16, requires_grad=True)
            (b * b).tanh().sum().backward()
            assert b.grad.dtype == mt.bfloat16
    assert calls == []  # no fast call for either
    # d|e^{z²}|/dz̄ for PyTorch's convention checked elsewhere; here the values are the general path's
    z2 = mt.tensor([1 + 2j, -0.5j], requires_grad=True)
    with mock.patch.object(engine, "_FAST_ON", False):
        (z2 * z2).exp().abs().sum().backward()
    assert z.grad.numpy().tobytes() == z2.grad.numpy().tobytes()


def test_the_module_registers_only_first_order_array_forms():
    assert fast_backward.__all__ == []
    assert set(engine._FAST_BACKWARD) >= {mt.ops.elementwise.Mul, mt.ops.activation.Tanh}


@pytest.mark.parametrize("dtype", FLOATS)
def test_sigmoid_pair_is_two_sigmoids_bit_for_bit(dtype):
    # TanhBackward and SigmoidBackward share one e^(-|x|) between σ(x) and σ(-x): the values must be those of
    # two sigmoid_array calls (the form they replace), incl. ±0, ±inf, NaN, 0-d arrays and float16 overflow
    from minitorch_ln.ops.fused_backward import sigmoid_array, sigmoid_pair_array

    rng = np.random.default_rng(5)
    with np.errstate(over="ignore"):
        x = np.concatenate([np.array(EDGES), rng.standard_normal(50) * 20]).astype(dtype)
    for arr in (x, x[::3], x[4].copy().reshape(())):
        s, s_neg = sigmoid_pair_array(arr)
        assert s.dtype == s_neg.dtype == np.dtype(dtype)
        assert s.tobytes() == sigmoid_array(arr).tobytes()
        assert s_neg.tobytes() == sigmoid_array(-arr).tobytes()
    # hand-worked: σ(0) = σ(-0) = 1/2; σ(inf) = 1, σ(-inf) = 0
    s, s_neg = sigmoid_pair_array(np.array([0.0, math.inf], dtype=dtype))
    assert s.tolist() == [0.5, 1.0] and s_neg.tolist() == [0.5, 0.0]


# ---------------------------------------------------------------------------------- Function.apply, unrecorded


def _forward_outputs(fn, *tensors):
    """``fn``'s outputs (values, dtype, array type, requires_grad), with apply's one-tensor path on and off (a tracer
    that does nothing turns it off: the general path then runs, as under ONNX export)."""
    from minitorch_ln.autograd import function

    out = []
    for tracer in (None, lambda *a: None):
        with mock.patch.object(function, "_tracer", tracer), np.errstate(all="ignore"):
            r = fn(*tensors)
        rs = r if isinstance(r, tuple) else (r,)
        out.append([(type(t.array), t.dtype, t.shape, t.requires_grad, t.grad_fn, t.numpy().tobytes()) for t in rs])
    return out


@pytest.mark.parametrize("dtype", FLOATS + ["int32", "int64", "bool"])
def test_unrecorded_apply_is_the_general_path(dtype):
    with np.errstate(over="ignore", invalid="ignore"):
        x = mt.tensor(np.array(EDGES).astype(dtype))
    fns = [mt.log, mt.exp, mt.tanh, mt.sigmoid, lambda t: t.sum()]
    if dtype != "bool":  # -t and relu refuse bool (as PyTorch); abs of bool is NumPy's bare error, on both paths
        fns += [lambda t: -t, mt.abs, mt.relu]
    for t in (x, x[4], x[::2]):  # 1-d, a 0-d view (P[a, b]), a strided view
        for fn in fns + ([lambda t: t[3], lambda t: t[2:]] if t.ndim else []):
            fast, general = _forward_outputs(fn, t)
            assert fast == general


def test_unrecorded_apply_keeps_views_history_grad_mode_and_errors():
    # a view of a base that gained history in place afterwards: its history is brought up to date, so it records
    w = mt.tensor([2.0, 3.0], requires_grad=True)
    base = mt.zeros(2)
    v = base[1]
    base.add_(w)  # base now requires grad; v's version is stale
    y = v.exp()
    assert y.requires_grad
    y.backward()
    assert w.grad.tolist() == [0.0, pytest.approx(math.exp(3.0))]  # d e^{w1}/dw1 at w1 = 3
    # grad mode is off inside forward and restored afterwards, also when the forward raises
    seen = []

    class Probe(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(mt.autograd.is_grad_enabled())
            if x.ndim:
                raise ValueError("probe")
            return x * 2

    assert Probe.apply(mt.tensor(1.5)).item() == 3.0
    with pytest.raises(ValueError, match="probe"):
        Probe.apply(mt.tensor([1.0]))
    assert seen == [False, False] and mt.autograd.is_grad_enabled()
    with mt.no_grad():
        assert Probe.apply(mt.tensor(2.0)).item() == 4.0 and not mt.autograd.is_grad_enabled()
    # complex and bfloat16 take the general path: its refusal of a complex input stays
    with pytest.raises(TypeError, match="complex"):
        mt.relu(mt.tensor([1 + 1j]))


def test_pow_with_a_python_number_exponent_as_before_and_as_torch():
    # x ** n with a Python int/float skips np.ndim/np.iscomplexobj (they are true of such numbers); the branch taken
    # is the one a NumPy scalar exponent of the same value takes (the path before the change), and PyTorch's
    torch = pytest.importorskip("torch")
    for dt in ("float32", "float64", "int64", "int32", "bool"):
        x = np.array([0.0, 1.5, -2.0, 3.0]).astype(dt)
        for p in (2, 3, 2.5, -1.0, 0, 1, True):
            if dt in ("int64", "int32") and p == -1.0:
                continue  # int ** -1.0 is a float tensor: compared below
            if dt != "bool" or isinstance(p, int):
                with np.errstate(all="ignore"):
                    ours = (mt.tensor(x) ** p)
                    ref = mt.tensor(x) ** (np.float64(p) if isinstance(p, float) else p)
                    theirs = torch.tensor(x) ** p
                assert ours.dtype == ref.dtype and ours.numpy().tobytes() == ref.numpy().tobytes(), (dt, p)
                assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (dt, p)
                np.testing.assert_allclose(ours.numpy().astype(float), theirs.numpy().astype(float), rtol=1e-6)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        mt.tensor([2, 3]) ** -1
    with pytest.raises(TypeError, match="exponent must be a number"):
        mt.tensor([2.0]) ** "2"
