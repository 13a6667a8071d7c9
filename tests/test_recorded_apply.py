"""``Function.apply``'s lean recording path (autograd/recorded.py) against the general path it skips.

Every case runs twice on fresh inputs built the same way, once with the lean path and once with
``function._LEAN[0] = False`` (every op through the general path), and compares: output values bit for bit,
dtype, shape, ``requires_grad``; the recorded graph node by node (Function, ``needs_input_grad``, ``outputs_meta``,
edges, saved tensors with their versions, an input saved as that very Tensor); the gradients of a backward with a
random upstream gradient, and of a second backward through ``create_graph``; the error class and message of a
forward that raises. Plus the cases the lean path must leave to the general one (subclasses, stale views, complex,
bfloat16, anomaly mode, a tracer, keyword arguments, nothing requiring grad) and hooks on its inputs.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import arrays, broadcastable_pair

import minitorch_ln as mt
from minitorch_ln.autograd import function as _function
from minitorch_ln.autograd.function import AccumulateGrad, Function
from minitorch_ln.autograd.grad_mode import is_grad_enabled
from minitorch_ln.autograd.recorded import NOT_TAKEN, apply_recorded
from minitorch_ln.nn import Parameter
from minitorch_ln.ops.elementwise import Mul
from minitorch_ln.ops.joining import Split


def _run(lean, make, fn):
    prev = _function._LEAN[0]
    _function._LEAN[0] = lean
    try:
        inputs = make()
        return inputs, fn(*inputs)
    finally:
        _function._LEAN[0] = prev


def _describe(outputs, inputs):
    """The graph behind ``outputs`` as plain data; input Tensors are named by their position."""
    def name(t):
        for i, x in enumerate(inputs):
            if t is x:
                return ("input", i)
        return ("tensor", t.dtype.str, tuple(t.shape), t.array.tobytes(), t.requires_grad, t._saved_output_nr)

    seen, order, stack = {}, [], [o.grad_fn for o in outputs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = len(seen)
        order.append(node)
        stack += [e for e in node._edges[::2] if e is not None and type(e) is not AccumulateGrad]
    out = []
    for node in order:
        edges = []
        for child, idx in zip(node._edges[::2], node._edges[1::2]):
            if child is None:
                edges.append(None)
            elif type(child) is AccumulateGrad:
                edges.append(("leaf", name(child.leaf), child.outputs_meta))
            else:
                edges.append(("node", seen.get(id(child)), idx))
        saved = [(None if t is None else name(t), v) for t, v in (node._saved or [])]
        out.append((node.fn, node.needs_input_grad, node.outputs_meta, edges, saved, node._to_save))
    return out


def _compare(make, fn, second_order=True, seed=0):
    (ins_l, out_l), (ins_g, out_g) = _run(True, make, fn), _run(False, make, fn)
    outs_l = out_l if isinstance(out_l, tuple) else (out_l,)
    outs_g = out_g if isinstance(out_g, tuple) else (out_g,)
    for a, b in zip(outs_l, outs_g):
        assert a.dtype == b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
        assert type(a.array) is type(b.array) is np.ndarray
        np.testing.assert_array_equal(a.array, b.array, strict=True)
        assert a._output_nr == b._output_nr
    assert _describe(outs_l, ins_l) == _describe(outs_g, ins_g)
    diff = [i for i, o in enumerate(outs_l) if o.requires_grad]
    if not diff:
        return
    rng = np.random.default_rng(seed)
    ups = [rng.standard_normal(outs_l[i].shape).astype(outs_l[i].dtype) for i in diff]
    leaves_l = [t for t in ins_l if isinstance(t, mt.Tensor) and t.requires_grad]
    leaves_g = [t for t in ins_g if isinstance(t, mt.Tensor) and t.requires_grad]
    create = second_order and all(o.dtype.kind == "f" for o in outs_l)
    grads = []
    for lean, outs, leaves in ((True, outs_l, leaves_l), (False, outs_g, leaves_g)):
        prev = _function._LEAN[0]
        _function._LEAN[0] = lean
        try:
            g = mt.autograd.grad([outs[i] for i in diff], leaves, [mt.tensor(u) for u in ups],
                                 create_graph=create, allow_unused=True)
            gg = None
            if create and g and all(x is not None and x.requires_grad for x in g):
                gg = mt.autograd.grad(sum((x * x).sum() for x in g), leaves, allow_unused=True)
            grads.append((g, gg))
        finally:
            _function._LEAN[0] = prev
    (g1, gg1), (g2, gg2) = grads
    assert (gg1 is None) == (gg2 is None)
    for a, b in zip(list(g1) + list(gg1 or ()), list(g2) + list(gg2 or ())):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a.array, b.array, strict=True)


def _leaf(a, rg=True):
    return mt.tensor(np.array(a), requires_grad=rg)


SHAPES = [(), (3,), (2, 3)]
DTYPES = [np.float16, np.float32, np.float64]

BINARY = {
    "mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "div": lambda a, b: a / b,
    "pow": lambda a, b: a.abs() ** b, "mul_number": lambda a, b: a * 2.0 + b * 3, "rsub_number": lambda a, b: 1.5 - a / b,
    "div_number": lambda a, b: a / 3.0, "pow_number": lambda a, b: (a ** 2 + b ** 3) ** -1.5,
    "scalar_autograd": lambda a, b: (a * b + b ** 2).tanh() + ((a * b + b ** 2) * 2.0).relu() - a / 3.0,
    "used_twice": lambda a, b: (a * a) * (a + b),
}
UNARY = {
    "tanh": lambda x: x.tanh(), "relu": lambda x: x.relu(), "exp": lambda x: x.exp(), "log": lambda x: (x * x + 0.5).log(),
    "neg": lambda x: -x, "sigmoid": lambda x: x.sigmoid(), "sum": lambda x: x.sum(), "getitem": lambda x: (x[..., :1] if x.ndim else x[None]) * 2,
    "split": lambda x: Split.apply(x.reshape(-1), [1, x.numel() - 1], 0) if x.numel() > 1 else (x * 1.0,),
    "chain": lambda x: ((x.exp() - 1.0) * x).tanh().relu(),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_binary_ops_both_paths(name, shape, dtype, needs, rng):
    a, b = (rng.uniform(0.5, 2.0, shape).astype(dtype) for _ in range(2))
    _compare(lambda: (_leaf(a, needs[0]), _leaf(b, needs[1])), BINARY[name], second_order=dtype != np.float16)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_both_paths(name, shape, dtype, rng):
    x = rng.uniform(-2.0, 2.0, shape).astype(dtype)
    _compare(lambda: (_leaf(x),), UNARY[name], second_order=dtype != np.float16)


def test_views_and_non_leaf_inputs_both_paths(rng):
    x = rng.standard_normal((3, 4))
    _compare(lambda: (_leaf(x),), lambda t: t.t()[1] * t[0, :3] + t[2, 1])
    _compare(lambda: (_leaf(x),), lambda t: (t * 2)[1:].exp() * (t * 2)[:2])


def test_a_stale_view_gets_its_history_first():
    def fn(w):
        y = w * 1.0
        v = y[0]
        y.mul_(3.0)  # v's base changed: the general path brings v's history up to date before recording
        return v * w[1]
    _compare(lambda: (_leaf(np.arange(6.0).reshape(2, 3)),), fn)


def test_saved_inputs_are_the_input_tensors_and_versions_are_checked():
    a, b = _leaf(2.0), _leaf(3.0)
    y = a * b
    assert [t is x for (t, _), x in zip(y.grad_fn._saved, (a, b))] == [True, True]
    c = a * 1.0
    z = c * b
    with mt.no_grad():
        c.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z.backward()


def test_hooks_and_retain_grad_on_inputs_of_the_lean_path():
    def fn(a, b):
        seen.append("x")
        c = a * b
        c.retain_grad()
        c.register_hook(lambda g: g * 2)
        d = c.tanh()
        return d, c
    for lean in (True, False):
        seen = []
        (a, b), (d, c) = _run(lean, lambda: (_leaf(0.3), _leaf(-0.7)), fn)
        d.backward()
        if lean:
            want = (a.grad.item(), b.grad.item(), c.grad.item())
        else:
            assert (a.grad.item(), b.grad.item(), c.grad.item()) == want


def test_forward_errors_are_the_same_and_grad_mode_is_restored():
    class Boom(Function):
        @staticmethod
        def forward(ctx, x, y):
            raise ValueError(f"boom {x.shape} {y}")

    for lean in (True, False):
        _function._LEAN[0] = lean
        try:
            with pytest.raises(ValueError, match=r"boom \(2,\) 3"):
                Boom.apply(_leaf([1.0, 2.0]), 3)
            assert is_grad_enabled()
        finally:
            _function._LEAN[0] = True


def test_what_the_lean_path_leaves_to_the_general_one():
    a = _leaf(1.5)
    assert apply_recorded(Mul, _function.Node, (_leaf(1.0, False), _leaf(2.0, False))) is NOT_TAKEN
    assert apply_recorded(Mul, _function.Node, (Parameter(mt.tensor(1.0)), a)) is NOT_TAKEN
    assert apply_recorded(Mul, _function.Node, (mt.tensor(1 + 2j, requires_grad=True), a)) is NOT_TAKEN
    assert apply_recorded(Mul, _function.Node, (mt.ones(2, dtype=mt.bfloat16, requires_grad=True), a)) is NOT_TAKEN
    base = mt.ones(2, 3) * a
    view = base[0]
    with mt.no_grad():
        base.mul_(2.0)
    assert apply_recorded(Mul, _function.Node, (view, a)) is NOT_TAKEN
    assert apply_recorded(Mul, _function.Node, (a, _leaf(2.0))) is not NOT_TAKEN


def test_anomaly_mode_and_a_tracer_take_the_general_path():
    a, b = _leaf(1.5), _leaf(2.0)
    with mt.autograd.detect_anomaly():
        y = a * b
    assert y.grad_fn.creation_trace is not None  # recorded by the general path's anomaly hook
    seen = []
    prev = _function._tracer
    _function._tracer = lambda cls, ctx, args, kwargs, out: seen.append(cls)
    try:
        a * b
    finally:
        _function._tracer = prev
    assert seen == [Mul]


@settings(max_examples=40, deadline=None)
@given(shapes=broadcastable_pair(max_dims=3), data=st.data(), dtype=st.sampled_from([np.float32, np.float64]))
def test_property_broadcasting_binary_ops(shapes, data, dtype):
    a = data.draw(arrays(shapes[0], dtype, 0.5, 2.0))
    b = data.draw(arrays(shapes[1], dtype, 0.5, 2.0))
    op = data.draw(st.sampled_from(["mul", "add", "sub", "div", "pow", "scalar_autograd"]))
    _compare(lambda: (_leaf(a), _leaf(b)), BINARY[op])
