"""Autograd edges where minitorch_ln was silently different from PyTorch (session 7's probe), each run
against PyTorch and, where there is a value, checked by hand:

1. an in-place op through a view that requires grad of a leaf base (``b.view(3).requires_grad_().mul_(2)``);
2. a tensor hook returning a gradient of another shape, dtype or type (also leaf and post-accumulate hooks);
3. ``retain_grad``'s hook runs after the tensor's other hooks, whatever the order of registration;
4. an in-place op or ``out=`` whose input shares part of the written memory (``a[1:].add_(a[:-1])``),
   on the general path and on ``_number_inplace``'s fast path."""

from __future__ import annotations

import functools
import warnings
from unittest import mock

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln.ops import inplace

torch = pytest.importorskip("torch")

OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
           "memory location")


def outcome(fn, lib):
    """``("ok", value)`` or ``(exception class name, message)`` of ``fn(lib)``."""
    try:
        return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__, str(e)


def both(fn):
    return outcome(fn, torch), outcome(fn, mt)


# ------------------------------------------------------------------ 1. in-place through a leaf's view

VIEW_LEAF_WRITES = {
    "mul_": lambda x, lib: x.mul_(2),
    "add_ number": lambda x, lib: x.add_(1),
    "iadd tensor": lambda x, lib: x.__iadd__(lib.ones(3)),
    "zero_": lambda x, lib: x.zero_(),
    "sin_": lambda x, lib: x.sin_(),
    "copy_": lambda x, lib: x.copy_(lib.zeros(3)),
    "uniform_": lambda x, lib: x.uniform_(),
}


@pytest.mark.parametrize("op", sorted(VIEW_LEAF_WRITES))
@pytest.mark.parametrize("make", ["view", "view of view", "view of the leaf view"])
def test_in_place_through_a_view_that_requires_grad_of_a_leaf_raises(op, make):
    def run(lib):
        b = lib.ones(3)
        if make == "view":
            x = b.view(3).requires_grad_()  # a leaf *and* a view of the leaf b
        elif make == "view of view":
            x = b.view(3)
            x.requires_grad = True
            x = x.view(3)  # requires grad through the leaf view
        else:
            x = b[:3].requires_grad_()[:3]
        VIEW_LEAF_WRITES[op](x, lib)
        return b.tolist()

    (tk, tmsg), (mk, mmsg) = both(run)
    assert tk == mk == "RuntimeError", (tmsg, mmsg)
    assert "a view of a leaf" in tmsg and "a view of a leaf" in mmsg


def test_a_leaf_view_stays_writable_where_pytorch_allows_it():
    def run(lib):
        b = lib.ones(3)
        x = b[:2].requires_grad_()
        with lib.no_grad():
            x.mul_(2)  # not recorded
        x.detach().add_(1)
        x.data.add_(1)
        y = x * 3
        b.mul_(2)  # b does not require grad: x keeps no history and stays a leaf
        y.sum().backward()
        return x.grad.tolist(), x.is_leaf, b.tolist()

    assert both(run) == (("ok", ([3.0, 3.0], True, [8.0, 8.0, 2.0])),) * 2


def test_a_leaf_view_moved_into_the_graph_by_its_base_raises_at_backward():
    def run(lib):
        b = lib.ones(3)
        x = b[:2].requires_grad_()
        p = lib.full((3,), 2.0, requires_grad=True)
        y = x * 3  # reaches x's AccumulateGrad
        b.mul_(p)  # b gets a history, and x, a view of it, too: no longer a leaf
        assert not x.is_leaf
        (y.sum() + (x * 5).sum()).backward()

    (tk, tmsg), (mk, mmsg) = both(run)
    assert tk == mk == "RuntimeError"
    assert mmsg.startswith(tmsg) and tmsg == "leaf variable has been moved into the graph interior"


def test_a_no_grad_view_that_requires_grad_written_in_grad_mode_gets_the_no_grad_error():
    def run(lib):
        b = lib.ones(3)
        with lib.no_grad():
            v = b[:2]
        v.requires_grad_()
        v.mul_(2)

    (tk, tmsg), (mk, mmsg) = both(run)
    assert tk == mk == "RuntimeError"
    assert "view was created in no_grad mode" in tmsg and "view was created in no_grad mode" in mmsg


# ------------------------------------------------------------------ 2. what a hook may return


def named_hook(g):
    return g.double()


class CallableHook:
    def __call__(self, g):
        return g.double()


HOOKS = {  # name: (hook given lib, error class, PyTorch's message)
    "shape": (lambda lib: lambda g: lib.ones(4), "RuntimeError", "hook '<lambda>' has changed the size of value"),
    "shape (3, 1)": (lambda lib: lambda g: g.view(3, 1), "RuntimeError", "hook '<lambda>' has changed the size of value"),
    "0-d": (lambda lib: lambda g: lib.tensor(1.0), "RuntimeError", "hook '<lambda>' has changed the size of value"),
    "dtype": (lambda lib: lambda g: g.double(), "RuntimeError",
              "hook '<lambda>' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)"),
    "named": (lambda lib: named_hook, "RuntimeError",
              "hook 'named_hook' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)"),
    "callable object": (lambda lib: CallableHook(), "RuntimeError",
                        "hook '<unknown>' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)"),
    "partial": (lambda lib: functools.partial(lambda g, k: g.double(), k=1), "RuntimeError",
                "hook '<unknown>' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)"),
    "int": (lambda lib: lambda g: 3, "TypeError", "expected Variable, but hook returned 'int'"),
    "ndarray": (lambda lib: lambda g: np.ones(3, np.float32), "TypeError",
                "expected Variable, but hook returned 'numpy.ndarray'"),
}


@pytest.mark.parametrize("where", ["non-leaf", "leaf", "root", "autograd.grad"])
@pytest.mark.parametrize("name", sorted(HOOKS))
def test_a_hook_changing_the_gradient_type_or_size_raises_at_the_hook(name, where):
    make_hook, cls, message = HOOKS[name]

    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        (x if where == "leaf" else y).register_hook(make_hook(lib))
        if where == "root":
            y.backward(lib.ones(3))
        elif where == "autograd.grad":
            lib.autograd.grad((y * 2).sum(), x)
        else:
            (y * 2).sum().backward()
        return x.grad

    (tk, tmsg), (mk, mmsg) = both(run)
    assert tk == mk == cls
    assert tmsg == message and mmsg.startswith(message), mmsg  # ours adds what was expected and what came


def test_the_size_error_names_both_shapes_and_a_same_shape_replacement_is_taken():
    x = mt.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: mt.ones(4))
    with pytest.raises(RuntimeError, match=r"changed the size of value \(was \(3,\) got \(4,\)\)"):
        y.sum().backward()

    def run(lib):  # a non-contiguous gradient of the same shape and dtype is fine
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: lib.stack([g * 5, g], 1)[:, 0])
        (y * x).sum().backward()
        return x.grad.tolist()

    assert both(run) == (("ok", [12.0, 24.0, 36.0]),) * 2  # loss y·x: y's gradient x, hooked 5x; x's 2·5x + y = 12x


@pytest.mark.parametrize("ret", ["same shape", "other shape", "int", "None"])
def test_post_accumulate_grad_hooks_must_return_none(ret):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        value = {"same shape": lambda t: t * 5, "other shape": lambda t: lib.ones(4), "int": lambda t: 3,
                 "None": lambda t: None}[ret]
        x.register_post_accumulate_grad_hook(value)
        (x * 2).sum().backward()
        return x.grad.tolist()

    (tk, tmsg), (mk, mmsg) = both(run)
    assert tk == mk
    if ret == "None":
        assert tmsg == mmsg == [2.0, 2.0, 2.0]
    else:
        assert mmsg.startswith(tmsg), (tmsg, mmsg)


# ------------------------------------------------------------------ 3. retain_grad runs last

# "r": retain_grad(), "h": hook g·3, "k": hook g+1; y = 2x, loss = sum(5y): y's gradient is 5 before hooks
RETAIN = {"rh": (15.0, 30.0), "hr": (15.0, 30.0), "rhr": (15.0, 30.0), "rhk": (16.0, 32.0),
          "rkh": (18.0, 36.0), "hrk": (16.0, 32.0), "r": (5.0, 10.0)}


@pytest.mark.parametrize("order", sorted(RETAIN))
def test_retain_grad_keeps_the_gradient_after_every_other_hook(order):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        for step in order:
            if step == "r":
                y.retain_grad()
            elif step == "h":
                y.register_hook(lambda g: g * 3)
            else:
                y.register_hook(lambda g: g + 1)
        (y * 5).sum().backward()
        return y.grad.tolist(), x.grad.tolist()

    yg, xg = RETAIN[order]
    assert both(run) == (("ok", ([yg] * 3, [xg] * 3)),) * 2

    def run_uneven(lib):  # an upstream gradient that differs per element (0.5, -2, 3): ours equals PyTorch's
        x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = x * 2
        for step in order:
            if step == "r":
                y.retain_grad()
            else:
                y.register_hook((lambda g: g * 3) if step == "h" else (lambda g: g + 1))
        (y * lib.tensor([0.5, -2.0, 3.0])).sum().backward()
        return y.grad.tolist(), x.grad.tolist()

    (tk, theirs), (mk, ours) = both(run_uneven)
    assert tk == mk == "ok" and ours == theirs and len(set(ours[0])) == 3  # three different gradients


def test_retain_grad_moves_to_the_new_history_after_an_in_place_change_and_still_runs_last():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 3)  # stays with y's old history (MulBackward0 of x * 2)
        y.mul_(5)
        y.register_hook(lambda g: g + 1)  # on the new history, before the retained gradient is taken
        (y * 7).sum().backward()
        return y.grad.tolist(), x.grad.tolist()

    # y.grad = 7 + 1; through mul_: 8·5 = 40, the old hook ·3 = 120, through x·2: 240
    assert both(run) == (("ok", ([8.0] * 3, [240.0] * 3)),) * 2


def test_retain_grad_on_a_leaf_is_a_no_op_and_its_hook_counts():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        x.retain_grad()
        x.register_hook(lambda g: g * 3)
        (x * 2).sum().backward()
        return x.grad.tolist()

    assert both(run) == (("ok", [6.0] * 3),) * 2


# ------------------------------------------------------------------ 4. overlapping in-place and out=

RAISES_IN_BOTH = [
    "a[1:].add_(a[:-1])", "a[:-1].add_(a[1:])", "a[1:].sub_(a[:-1])", "a[1:].mul_(a[:-1])", "a[1:].div_(a[:-1])",
    "a[1:].__iadd__(a[:-1])", "a[1:].add_(a[:-1], alpha=2)", "a[1:].div_(a[:-1], rounding_mode='floor')",
    "a[1:].floor_divide_(a[:-1])", "a[1:].pow_(a[:-1])", "a[1:].copy_(a[:-1])", "a[1:].clamp_(max=a[:-1])",
    "a[1:].clamp_(a[:-1], a[:-1] + 10)", "a[1:].atan2_(a[:-1])", "a[1:].lt_(a[:-1])", "a[1:].hypot_(a[:-1])",
    "a[1:].xlogy_(a[:-1])", "a[1:].lerp_(a[:-1], 0.5)", "a.div_(a[0])", "a.add_(a[0])", "a[:5].mul_(a[1])",
    "a[1:2].add_(a[1])", "a[0].add_(a)", "a.view(1, 6).add_(a)", "m.add_(m.t())", "m.view(3, 3).add_(m[1])",
    "torch.add(a[:-1], 1, out=a[1:])", "torch.add(a[:-1], a[1:], out=a[1:])", "torch.sin(a[:-1], out=a[1:])",
    "torch.cumsum(a[:-1], 0, out=a[1:])", "a[1:].addcmul_(a[:-1], a[:-1])", "a[1:].addcdiv_(a[:-1], a[:-1] + 1)",
    "a[1:].addcmul_(a[1:], a[:-1])", "m[1:].index_add_(0, i, m[:2])", "m.index_copy_(0, i, m[1:])",
    "m[1:].scatter_(0, z, m[:2])", "m[1:].scatter_add_(0, z, m[:2])", "a[1:].put_(i, a[:2])",
    "m[1:].index_reduce_(0, i, m[:2], 'prod')", "a[1:].index_put_((i,), a[:2])",
]
ALLOWED_IN_BOTH = [  # the very same memory, or none shared
    "a.add_(a)", "a.mul_(a)", "a.add_(a.view(6))", "a.add_(a.detach())", "a[0].add_(a[0])", "a[0].add_(a[1])",
    "a[:3].add_(a[3:])", "a[1:2].add_(a[0:1])", "a.fill_(a[0])", "a.copy_(a.flip(0))", "m[:, 0].add_(m[:, 1])",
    "a[::2].add_(a[1::2])", "a[1:].copy_(a[:-1].clone())", "a[1:].mul_(torch.tensor(2.0))", "a[:0].add_(a[:0])",
    "torch.add(a, a, out=a)", "torch.abs(a, out=a)", "torch.neg(a, out=a.view(6))", "a.addcmul_(a, a)",
    "a[1:].masked_fill_(a[1:] > 2, a[0])", "m[1:].index_add_(0, i, m[:1].clone().expand(2, 3))", "a.add_(a.view(2, 3).t().reshape(6))",
]


def _run_expr(expr):
    def run(lib):
        a = lib.arange(6.0)
        m = lib.arange(9.0).view(3, 3)
        i, z = lib.tensor([0, 1]), lib.zeros(2, 3, dtype=lib.int64)
        eval(expr, {"torch": lib, "a": a, "m": m, "i": i, "z": z})  # noqa: S307 - the test's own expressions
        return a.tolist(), m.tolist()

    return run


@pytest.mark.parametrize("expr", RAISES_IN_BOTH)
def test_partially_overlapping_in_place_raises_as_pytorch(expr):
    (tk, tmsg), (mk, mmsg) = both(_run_expr(expr))
    assert tk == mk == "RuntimeError", (tmsg, mmsg)
    assert tmsg.startswith(OVERLAP) and mmsg.startswith(OVERLAP), mmsg


@pytest.mark.parametrize("expr", ALLOWED_IN_BOTH)
def test_the_same_memory_or_none_is_allowed_with_pytorch_s_values(expr):
    t, m = both(_run_expr(expr))
    assert t[0] == m[0] == "ok" and t[1] == m[1], (t, m)


def test_overlap_values_by_hand():
    a = mt.arange(6.0)
    a.add_(a)  # every element read before it is written
    assert a.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    a = mt.arange(6.0)
    with pytest.raises(RuntimeError, match="Please clone"):
        a[1:].add_(a[:-1])
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # raised before anything was written (NumPy gave 0,1,3,5,7,9)
    a[1:].add_(a[:-1].clone())
    assert a.tolist() == [0.0, 1.0, 3.0, 5.0, 7.0, 9.0]


@pytest.mark.parametrize("expr", ["m[:, 1:].add_(m[:, :2])", "m.add_(m[0].expand(3, 3))", "m.add_(m.diagonal())",
                                  "a[1:].masked_scatter_(a[1:] > 0, a[:-1])"])
def test_overlap_of_non_dense_views_raises_here(expr):
    # PyTorch does not check these (its result follows its loop order: m[:, 1:].add_(m[:, :2]) adds running sums,
    # masked_scatter_ copies a[0] everywhere);
    # NumPy's buffered result would be silently different, so they are refused with the same error
    (tk, tmsg), (mk, mmsg) = both(_run_expr(expr))
    assert tk == "ok" and mk == "RuntimeError" and mmsg.startswith(OVERLAP)
    assert "strides" in mmsg  # names both layouts


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("expr", ["x[1:2].add_(x[1])", "x[0].add_(x[0])", "x[0].add_(x[1])", "x[1:].sub_(x[:-1])",
                                  "x[:-1].mul_(x[1:])", "x.add_(x)", "x.mul_(x.view(6))", "x[2:4].sub_(x[:2])"])
def test_fast_path_checks_overlap_as_the_general_path(expr, dtype):
    """``_number_inplace`` (issue 26's path for a tensor operand of the target's dtype, nothing recorded) against
    ``Tensor._inplace`` (the general path) on the same expression: the same values bit for bit, dtype, error."""
    calls = []
    real = inplace._ufunc_into

    def spy(*args):
        calls.append(1)
        return real(*args)

    def run(path):
        x = mt.arange(6, dtype=getattr(mt, dtype))
        target, op, operand = _split(expr, x)
        try:
            if path == "fast":
                with mock.patch.object(inplace, "_ufunc_into", spy):
                    getattr(target, op)(operand)
            else:
                fn = {"add_": mt.add, "sub_": mt.sub, "mul_": mt.mul}[op]
                target._inplace(op, lambda s: fn(s, operand), operand)
        except RuntimeError as e:
            return "RuntimeError", str(e)
        return x.numpy().tobytes(), x.dtype

    fast, general = run("fast"), run("general")
    assert fast == general
    if fast[0] != "RuntimeError":
        assert calls, "the fast path was not taken"
    t = outcome(_run_expr(expr.replace("x", "a")), torch)
    assert (t[0] == "RuntimeError") == (fast[0] == "RuntimeError")


def _split(expr, x):
    """``"x[1:2].add_(x[1])"`` -> (x[1:2], "add_", x[1]), evaluated on ``x``."""
    target, rest = expr.split(".", 1)
    op, arg = rest.split("(", 1)
    return eval(target, {"x": x}), op, eval(arg[:-1], {"x": x})  # noqa: S307 - the test's own expressions


def test_a_python_number_operand_and_counting_loops_still_work():
    n = mt.zeros(3, 3, dtype=mt.int32)
    for a, b in [(0, 1), (0, 1), (2, 2)]:
        n[a, b] += 1  # the fast path with a Python int: nothing to check
    assert n.tolist() == [[0, 2, 0], [0, 0, 0], [0, 0, 1]]
    ll = mt.tensor(0.0)
    p = mt.tensor([[0.5, 0.25]])
    for j in (0, 1):
        ll += mt.log(p[0, j])  # a 0-d tensor operand that owns its memory
    assert ll.item() == pytest.approx(np.log(0.5) + np.log(0.25))


# ------------------------------------------------------------------ further edges met on the way


def test_retain_grad_on_a_tensor_that_does_not_require_grad_raises():
    (tk, tmsg), (mk, mmsg) = both(lambda lib: lib.ones(3).retain_grad())
    assert tk == mk == "RuntimeError" and tmsg == mmsg == "can't retain_grad on Tensor that has requires_grad=False"


def test_reading_the_grad_of_a_non_leaf_warns_as_pytorch():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        z = x * 3
        z.retain_grad()
        (y + z).sum().backward()
        with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):
            assert y.grad is None
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return x.grad.tolist(), z.grad.tolist(), lib.ones(2).grad  # a leaf, a retained non-leaf: no warning

    assert both(run) == (("ok", ([5.0] * 3, [1.0] * 3, None)),) * 2


def test_assigning_a_grad_of_another_dtype_is_a_runtime_error_as_pytorch():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        x.grad = lib.ones(3, dtype=lib.float64)

    (tk, _), (mk, mmsg) = both(run)
    assert tk == mk == "RuntimeError" and "float64" in mmsg and "float32" in mmsg


@pytest.mark.parametrize("pre", [False, True])
@pytest.mark.parametrize("change", ["dtype", "shape"])
def test_module_full_backward_hooks_may_not_change_a_gradient_s_type_or_size(change, pre):
    # PyTorch raises at the hook; here a float64 grad_input was cast back silently and a shape failed later
    def run(lib):
        lin = lib.nn.Linear(3, 2)
        if pre:
            lin.register_full_backward_pre_hook(
                lambda m, go: (go[0].double(),) if change == "dtype" else (lib.ones(4, 5),))
        else:
            lin.register_full_backward_hook(
                lambda m, gi, go: (gi[0].double(),) if change == "dtype" else (lib.ones(5, 3),))
        x = lib.ones(4, 3, requires_grad=True)
        lin(x).sum().backward()

    (tk, tmsg), (mk, mmsg) = both(run)
    assert tk == mk == "RuntimeError"
    what = "type of value (was torch.FloatTensor got torch.DoubleTensor)" if change == "dtype" else "size of value"
    assert what in tmsg and what in mmsg, mmsg
