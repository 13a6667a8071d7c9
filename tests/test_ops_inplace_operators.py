"""Python's augmented assignments (``x += y``, ``p -= lr * g``, ...) change the tensor in place, as in
PyTorch, and the protocol methods PyTorch's Tensor defines behave as PyTorch's.

Without ``__iadd__`` and its siblings Python falls back to ``x = x + y``: a new tensor bound to the
name, the original untouched, so the tutorial loop ``p -= lr * p.grad`` never trained. Every test
here runs the same body on PyTorch and on minitorch_ln (``lib`` is either module) and compares
values, dtypes, identity and the errors raised.
"""

import copy
import operator
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitorch_ln as mt
from helpers import assert_close, noncontiguous_leaf, to_numpy, torch
from minitorch_ln import nn
from minitorch_ln.autograd import gradcheck

# operator -> (its in-place Python operator, its named in-place method)
IOPS = {
    "+=": (operator.iadd, "add_"), "-=": (operator.isub, "sub_"), "*=": (operator.imul, "mul_"),
    "/=": (operator.itruediv, "div_"), "//=": (operator.ifloordiv, "floor_divide_"),
    "%=": (operator.imod, "remainder_"), "**=": (operator.ipow, "pow_"),
    "&=": (operator.iand, "bitwise_and_"), "|=": (operator.ior, "bitwise_or_"),
    "^=": (operator.ixor, "bitwise_xor_"), "<<=": (operator.ilshift, "bitwise_left_shift_"),
    ">>=": (operator.irshift, "bitwise_right_shift_"),
}
DTYPES = ["float32", "float64", "int32", "int64", "uint8", "bool"]
RHS_KINDS = ["int", "float", "bool", "tensor0d", "row", "same"]


def _values(dtype, shape, rng, positive=False):
    """Values every operator accepts for ``dtype``: small, and >= 1 where they may divide or shift."""
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("float"):
        return rng.uniform(0.5, 2.0, shape).astype(dtype)
    return rng.integers(1, 4, shape).astype(dtype)


def _rhs(lib, kind, dtype, shape, rng):
    """The right operand: a Python number, a 0-d tensor, a broadcast row, or a same-shape tensor."""
    if kind == "int":
        return 2
    if kind == "float":
        return 1.5
    if kind == "bool":
        return True
    arr = _values(dtype, () if kind == "tensor0d" else shape[-1:] if kind == "row" else shape, rng)
    return lib.tensor(arr)


def _outcome(lib, op, dtype, kind, view="plain", seed=0):
    """Run ``target op= rhs`` where ``target`` is a plain tensor or a view of a base; return what
    happened: values of target and base, dtype, whether the name still names the same object and
    whether the alias saw the change -- or the exception's class."""
    rng = np.random.default_rng(seed)
    base = lib.tensor(_values(dtype, (3, 3), rng))
    target = {"plain": lambda b: b, "row": lambda b: b[1], "transpose": lambda b: b.t(),
              "diagonal": lambda b: b.diagonal(), "expand": lambda b: b[0:1].expand(3, 3)}[view](base)
    alias = target
    rhs = _rhs(lib, kind, dtype, tuple(target.shape), rng)
    fn = IOPS[op][0]
    try:
        with np.errstate(all="ignore"):
            result = fn(target, rhs)
    except Exception as exc:  # noqa: BLE001 - the class is compared with PyTorch's
        return ("raises", _family(exc))
    return ("ok", result is alias, str(result.dtype).replace("torch.", ""), to_numpy(result).tolist(),
            to_numpy(base).tolist())


def _family(exc):
    """The exception kinds PyTorch scripts catch: RuntimeError/TypeError/ZeroDivisionError."""
    for kind in (ZeroDivisionError, RuntimeError, TypeError, ValueError):
        if isinstance(exc, kind):
            return kind.__name__
    return type(exc).__name__


def _assert_same(ours, theirs):
    assert ours[0] == theirs[0], f"minitorch_ln {ours} vs torch {theirs}"
    if ours[0] == "raises":
        # our errors subclass RuntimeError where PyTorch raises one; a TypeError there may be ours too
        assert ours[1] == theirs[1] or theirs[1] == "RuntimeError", (ours, theirs)
        return
    assert ours[1] and theirs[1], "the operator must return the tensor it changed"
    assert ours[2] == theirs[2], f"dtype {ours[2]} vs torch {theirs[2]}"
    np.testing.assert_allclose(np.array(ours[3], dtype=float), np.array(theirs[3], dtype=float), rtol=1e-6)
    np.testing.assert_allclose(np.array(ours[4], dtype=float), np.array(theirs[4], dtype=float), rtol=1e-6)


# ==================================================================================================
# Every operator x dtype x right operand, on a plain tensor
# ==================================================================================================


@pytest.mark.parametrize("kind", RHS_KINDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(IOPS))
def test_operator_matches_torch(op, dtype, kind):
    _assert_same(_outcome(mt, op, dtype, kind), _outcome(torch, op, dtype, kind))


@pytest.mark.parametrize("op", list(IOPS))
def test_operator_is_the_named_inplace_method(op):
    fn, name = IOPS[op]
    dtype = "int64" if op in ("&=", "|=", "^=", "<<=", ">>=") else "float64"
    rng = np.random.default_rng(1)
    a, b = _values(dtype, (4,), rng), _values(dtype, (4,), rng)
    x, y = mt.tensor(a), mt.tensor(a)
    version = x._version[0]
    fn(x, mt.tensor(b))
    getattr(y, name)(mt.tensor(b))
    np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert x._version[0] == version + 1


def test_aliases_see_the_change():
    # a = zeros(3); b = a; b += 1 leaves a at ones in PyTorch (one tensor, two names)
    a = mt.zeros(3)
    b = a
    b += 1
    assert b is a
    np.testing.assert_array_equal(a.numpy(), [1.0, 1.0, 1.0])
    # v = y[0]; v += 5; v *= 2 writes through to y: row 0 becomes (0 + 5) * 2 = 10
    y = mt.zeros(2, 3)
    v = y[0]
    v += 5
    v *= 2
    np.testing.assert_array_equal(y.numpy(), [[10, 10, 10], [0, 0, 0]])


def test_imatmul_rebinds_as_in_torch():
    # PyTorch's Tensor defines no __imatmul__: ``x @= w`` is ``x = x @ w``, a new tensor; the alias keeps
    # the old values. The same here (an in-place matmul would have to change the shape).
    for lib in (mt, torch):
        x = lib.ones(2, 2)
        alias = x
        x @= lib.full((2, 2), 2.0)
        assert x is not alias
        np.testing.assert_array_equal(to_numpy(x), [[4, 4], [4, 4]])
        np.testing.assert_array_equal(to_numpy(alias), [[1, 1], [1, 1]])


# ==================================================================================================
# Views: writes land in the base; an expanded view is refused
# ==================================================================================================


@pytest.mark.parametrize("view", ["row", "transpose", "diagonal", "expand"])
@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/=", "**=", "//=", "%="])
def test_operator_on_views_matches_torch(op, view):
    for kind in ("float", "same"):
        _assert_same(_outcome(mt, op, "float64", kind, view), _outcome(torch, op, "float64", kind, view))


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/=", "**="])
@pytest.mark.parametrize("view", ["row", "transpose", "diagonal"])
def test_gradient_through_operator_on_a_view(op, view):
    # base = w * 1 (a non-leaf), an in-place op on a view of it, then a loss of the whole base: the
    # base's history is rewritten (CopySlices), so w and r get PyTorch's gradients.
    rng = np.random.default_rng(2)
    w0, r0 = rng.uniform(0.5, 2.0, (3, 3)), rng.uniform(0.5, 2.0, 3)
    up = rng.standard_normal((3, 3))
    grads = []
    for lib in (mt, torch):
        w = lib.tensor(w0, requires_grad=True)
        r = lib.tensor(r0, requires_grad=True)
        base = w * 1
        v = {"row": lambda b: b[1], "transpose": lambda b: b.t()[0], "diagonal": lambda b: b.diagonal()}[view](base)
        IOPS[op][0](v, r)
        (base * lib.tensor(up)).sum().backward()
        grads.append((w.grad, r.grad, base))
    (wg, rg, b), (wg_t, rg_t, b_t) = grads
    assert_close(b, b_t, np.float64, "base")
    assert_close(wg, wg_t, np.float64, "dw")
    assert_close(rg, rg_t, np.float64, "dr")


def test_operator_is_differentiable_gradcheck():
    # y = x * 1; y += x^2; y *= x; y /= (x + 3); y -= 0.5; y **= 2: float64 finite differences, on a
    # contiguous and a non-contiguous leaf
    def f(x):
        y = x * 1
        y += x ** 2
        y *= x
        y /= x + 3
        y -= 0.5
        y **= 2
        return y

    rng = np.random.default_rng(3)
    a = rng.uniform(0.5, 1.5, (3, 4))
    assert gradcheck(f, (mt.tensor(a, requires_grad=True),))
    assert gradcheck(f, (noncontiguous_leaf(a),))


# ==================================================================================================
# Leaves, saved tensors, version counters
# ==================================================================================================


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/=", "**="])
def test_leaf_that_requires_grad(op):
    fn = IOPS[op][0]
    for lib in (mt, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf"):
            fn(w, 2.0)
        with lib.no_grad():
            alias = w
            fn(w, 2.0)
        assert w is alias and w.requires_grad and w.is_leaf and w.grad_fn is None
    # the values under no_grad: PyTorch's
    ours, theirs = mt.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], requires_grad=True)
    with mt.no_grad(), torch.no_grad():
        fn(ours, 2.0)
        fn(theirs, 2.0)
    assert_close(ours, theirs, np.float32, op)


def test_saved_tensor_changed_by_an_operator_makes_backward_raise():
    for lib in (mt, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        a = w * 1
        b = a * a  # saves a
        a += 1  # a's version moves on
        with pytest.raises(RuntimeError, match="modified by an inplace operation|version"):
            b.sum().backward()


def test_operator_bumps_the_version_counter():
    x = mt.zeros(3)
    v = x[1:]
    start = x._version[0]
    v += 1
    x *= 2
    assert x._version[0] == start + 2 == v._version[0]


# ==================================================================================================
# Dtype rules (PyTorch's can_cast): a result that would be truncated is refused
# ==================================================================================================


@pytest.mark.parametrize("case", [
    ("int64", "+=", 0.5), ("int64", "*=", 1.5), ("int32", "/=", 2), ("int64", "**=", 0.5),
    ("bool", "+=", 1), ("bool", "*=", 2), ("uint8", "-=", 0.25),
])
def test_result_type_that_cannot_be_stored_raises(case):
    dtype, op, rhs = case
    for lib in (mt, torch):
        x = lib.tensor(_values(dtype, (3,), np.random.default_rng(0)))
        before = to_numpy(x).copy()
        with pytest.raises(RuntimeError, match="can't be cast"):
            IOPS[op][0](x, rhs)
        np.testing.assert_array_equal(to_numpy(x), before)  # a failed step loses nothing


def test_named_inplace_with_float_tensor_on_int_raises():
    # PyTorch: tensor([1, 5]).mul_(tensor([0.5, 0.5])) raises (Double can't be cast to Long); this
    # used to give [0, 2] here
    for lib in (mt, torch):
        x = lib.tensor([1, 5])
        with pytest.raises(RuntimeError, match="can't be cast"):
            x.mul_(lib.tensor([0.5, 0.5], dtype=lib.float64))
        np.testing.assert_array_equal(to_numpy(x), [1, 5])


def test_within_a_category_the_result_is_cast():
    # float32 += float64 tensor stays float32; int32 += int64 tensor stays int32 (as PyTorch)
    for lib in (mt, torch):
        x = lib.ones(2, dtype=lib.float32)
        x += lib.tensor([0.25, 0.5], dtype=lib.float64)
        assert x.dtype == lib.float32
        np.testing.assert_array_equal(to_numpy(x), [1.25, 1.5])
        n = lib.ones(2, dtype=lib.int32)
        n += lib.tensor([2, 3], dtype=lib.int64)
        assert n.dtype == lib.int32
        np.testing.assert_array_equal(to_numpy(n), [3, 4])


# ==================================================================================================
# The tutorial loop trains as under PyTorch
# ==================================================================================================


def _tutorial_losses(lib, steps=100, lr=0.1):
    """Linear regression trained by the most common loop of the tutorials."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((64, 3)).astype(np.float32)
    y = (X @ np.array([[1.5], [-2.0], [0.5]], dtype=np.float32) + 0.3).astype(np.float32)
    lin = (nn if lib is mt else torch.nn).Linear(3, 1)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(rng.standard_normal((1, 3)).astype(np.float32)))
        lin.bias.copy_(lib.tensor(np.zeros(1, dtype=np.float32)))
    Xt, yt = lib.tensor(X), lib.tensor(y)
    losses = []
    for _ in range(steps):
        loss = ((lin(Xt) - yt) ** 2).mean()
        losses.append(loss.item())
        for p in lin.parameters():
            p.grad = None
        loss.backward()
        with lib.no_grad():
            for p in lin.parameters():
                p -= lr * p.grad
    return np.array(losses)


def test_tutorial_loop_trains_as_in_torch():
    ours, theirs = _tutorial_losses(mt), _tutorial_losses(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-7)
    assert ours[-1] < 1e-3 * ours[0]  # it trains: PyTorch reaches ~0 in 100 steps


# ==================================================================================================
# Hypothesis: operator x dtype x view kind
# ==================================================================================================


@settings(max_examples=60, deadline=None)
@given(op=st.sampled_from(list(IOPS)), dtype=st.sampled_from(DTYPES), kind=st.sampled_from(RHS_KINDS),
       view=st.sampled_from(["plain", "row", "transpose", "diagonal", "expand"]), seed=st.integers(0, 2**16))
def test_hypothesis_operator_dtype_view(op, dtype, kind, view, seed):
    _assert_same(_outcome(mt, op, dtype, kind, view, seed), _outcome(torch, op, dtype, kind, view, seed))


# ==================================================================================================
# The other protocol methods of PyTorch's Tensor
# ==================================================================================================


def _both(fn):
    """``fn(lib)`` on both libraries: (ours, theirs), each a value or the exception's family."""
    out = []
    for lib in (mt, torch):
        try:
            out.append(("ok", fn(lib)))
        except Exception as exc:  # noqa: BLE001
            out.append(("raises", _family(exc)))
    return out


@pytest.mark.parametrize("name,fn", [
    ("iter 0-d", lambda lib: list(lib.tensor(1.0))),
    ("iter", lambda lib: [to_numpy(r).tolist() for r in lib.tensor([[1, 2], [3, 4]])]),
    ("contains", lambda lib: (2 in lib.tensor([1, 2]), 5 in lib.tensor([1, 2]), lib.tensor(2) in lib.tensor([[2]]))),
    ("contains list", lambda lib: [1] in lib.tensor([1, 2])),
    ("reversed", lambda lib: to_numpy(reversed(lib.tensor([[1, 2], [3, 4]]))).tolist()),
    ("reversed 0-d", lambda lib: to_numpy(reversed(lib.tensor(3))).tolist()),
    ("del", lambda lib: lib.tensor([1, 2]).__delitem__(0)),
    ("complex", lambda lib: complex(lib.tensor(2.0))),
    ("complex of a vector", lambda lib: complex(lib.tensor([2.0, 3.0]))),
    ("float of a vector", lambda lib: float(lib.tensor([2.0, 3.0]))),
    ("long", lambda lib: lib.tensor(2.7).__long__()),
    ("nonzero", lambda lib: lib.tensor([2.0]).__nonzero__()),
    ("div", lambda lib: to_numpy(lib.tensor([3.0]).__div__(2)).tolist()),
    ("rdiv", lambda lib: to_numpy(lib.tensor([4.0]).__rdiv__(2)).tolist()),
    ("bool of two", lambda lib: bool(lib.tensor([1, 2]))),
    ("bool of none", lambda lib: bool(lib.tensor([]))),
    ("bool of one", lambda lib: (bool(lib.tensor([0])), bool(lib.tensor([[3.0]])))),
    ("index", lambda lib: operator.index(lib.tensor(3))),
    ("index of a float", lambda lib: operator.index(lib.tensor(3.0))),
    ("list index", lambda lib: ["a", "b", "c"][lib.tensor(1)]),
    ("eq None", lambda lib: lib.tensor([1, 2]) == None),  # noqa: E711 - the protocol under test
    ("ne None", lambda lib: lib.tensor([1, 2]) != None),  # noqa: E711
    ("round", lambda lib: round(lib.tensor(2.5))),
    ("divmod", lambda lib: divmod(lib.tensor(7), 2)),
    ("invert float", lambda lib: ~lib.tensor(1.0)),
    ("abs pos neg", lambda lib: [to_numpy(f(lib.tensor(-2))).item() for f in (abs, operator.pos, operator.neg)]),
    ("len 0-d", lambda lib: len(lib.tensor(1.0))),
    ("ufunc", lambda lib: (type(np.sin(lib.tensor([1.0]))).__name__, to_numpy(np.sin(lib.tensor([1.0]))).tolist())),
    ("dlpack", lambda lib: np.from_dlpack(lib.tensor([1.0, 2.0])).tolist()),
    ("dlpack device", lambda lib: tuple(int(v) for v in lib.tensor([1.0]).__dlpack_device__())),
    ("cuda array interface on the cpu", lambda lib: lib.tensor([1.0]).__cuda_array_interface__),
    ("hash is identity", lambda lib: (lambda t: hash(t) == hash(t) and hash(t) != hash(lib.tensor(1)))(lib.tensor(1))),
])
def test_protocol_method_matches_torch(name, fn):
    ours, theirs = _both(fn)
    if ours[0] == "ok" and theirs[0] == "ok" and name == "ufunc":
        assert ours[1][0] == "Tensor" and theirs[1][0] == "Tensor"
        np.testing.assert_allclose(ours[1][1], theirs[1][1], rtol=1e-6)
        return
    assert ours == theirs, f"{name}: minitorch_ln {ours} vs torch {theirs}"


def test_deepcopy_of_a_leaf_used_in_a_graph_gets_its_own_gradient():
    # Regression: the copy used to keep the original's AccumulateGrad, so the copy's gradient (3 per
    # element, from d(3 d)/dd) landed in the original's .grad and the copy's stayed None.
    a = mt.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2  # a's AccumulateGrad is alive while b's graph is
    a.grad = mt.tensor([5.0, 5.0])
    a.note = {"tag": [1]}
    d = copy.deepcopy(a)
    (d * 3).sum().backward()
    np.testing.assert_array_equal(d.grad.numpy(), [8.0, 8.0])  # its copied .grad plus 3
    np.testing.assert_array_equal(a.grad.numpy(), [5.0, 5.0])  # the original's untouched
    assert d.note == a.note and d.note is not a.note and d.requires_grad and d.is_leaf
    d.detach().mul_(0)
    np.testing.assert_array_equal(a.detach().numpy(), [1.0, 2.0])  # its own memory
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(b)
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(torch.tensor([1.0], requires_grad=True) * 2)
    del b


def test_deepcopy_and_pickle_of_modules_and_parameters():
    model = nn.Linear(3, 2)
    out = model(mt.randn(4, 3)).sum()  # a live graph holding the parameters' AccumulateGrads
    twin = copy.deepcopy(model)
    assert type(twin.weight) is type(model.weight) and twin.weight is not model.weight
    out.backward()
    assert twin.weight.grad is None and model.weight.grad is not None
    for obj in (model.weight, mt.tensor([1.0, 2.0], requires_grad=True), mt.arange(5)):
        back = pickle.loads(pickle.dumps(obj))
        assert type(back) is type(obj) and back.requires_grad == obj.requires_grad
        np.testing.assert_array_equal(back.detach().numpy(), obj.detach().numpy())
    # a non-leaf pickles as a leaf that requires grad, as PyTorch's does
    y = mt.tensor([1.0, 2.0], requires_grad=True) * 2
    back = pickle.loads(pickle.dumps(y))
    assert back.is_leaf and back.requires_grad
    ty = pickle.loads(pickle.dumps(torch.tensor([1.0, 2.0], requires_grad=True) * 2))
    assert ty.is_leaf and ty.requires_grad


def test_dlpack_refuses_a_tensor_that_requires_grad():
    with pytest.raises(RuntimeError, match="requires grad"):
        np.from_dlpack(mt.tensor([1.0], requires_grad=True))
    view = np.from_dlpack(mt.tensor([1.0, 2.0]))
    assert view.tolist() == [1.0, 2.0]
