"""The small-tensor fast paths of issue 26 against the general paths they skip: ``x += n`` / ``x -= n`` /
``x *= n`` with a Python number (``inplace._number_inplace``), ``x[i, j]`` of a tensor without history
(``indexing.getitem``) and the write-back of ``N[a, b] += 1`` (``indexing.setitem_``). Each case runs
twice, once with the fast path disabled, and the values, dtypes, version counters, view links, histories
and errors (class and message) must agree."""

import itertools
import math
from unittest import mock

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln.ops import indexing, inplace

DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"]
NUMBERS = [1, -3, 0, 300, 2**40, 2**70, 0.5, -2.5, math.inf, -math.inf, math.nan, 1e300, True, np.float32(2.0)]
OPS = [("add_", "__iadd__"), ("sub_", "__isub__"), ("mul_", "__imul__")]


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as exc:  # noqa: BLE001 - the class and message are compared
        return ("raises", type(exc), str(exc))


def _state(t):
    """What a fast path must leave as the general path does: values, dtype, version, history."""
    return (t.numpy().tobytes() if not t.requires_grad else t.detach().numpy().tobytes(), t.dtype,
            t._version[0], t.requires_grad, type(t.grad_fn).__name__)


def _make(kind, dtype):
    base = mt.tensor(np.arange(6).reshape(2, 3) % 5, dtype=getattr(mt, dtype))
    if kind == "plain":
        return base, base
    if kind == "zero_d":
        t = mt.tensor(3, dtype=getattr(mt, dtype))
        return t, t
    if kind == "view":
        return base, base[1]
    if kind == "expanded":  # not writable: the same RuntimeError either way
        return base, base[0:1].expand(4, 3)
    if kind == "leaf_requires_grad":
        base.requires_grad_(True)
        return base, base
    if kind == "view_of_leaf":
        base.requires_grad_(True)
        return base, base[0]
    raise AssertionError(kind)


def _tensor_operands(dtype):
    """Tensor operands of ``target.op_(other)``, made from the target: same dtype and shape, 0-d, another
    dtype, a broadcast row, the target itself (overlapping memory), one that requires grad, a float64 one."""
    dt = getattr(mt, dtype)
    return [
        lambda t: mt.ones(t.shape, dtype=dt) * 2 if dtype != "bool" else mt.ones(t.shape, dtype=dt),
        lambda t: mt.tensor(3, dtype=dt),
        lambda t: mt.ones(t.shape, dtype=mt.int16),
        lambda t: mt.arange(t.shape[-1]).to(dt) if t.ndim else mt.arange(2).to(dt),
        lambda t: t,
        lambda t: t.flip(-1) if t.ndim else t,
        lambda t: mt.full(t.shape, 0.5, requires_grad=True),
        lambda t: mt.full(t.shape, 0.5, dtype=mt.float64),
    ]


def _run(kind, dtype, method, number, grad):
    base, target = _make(kind, dtype)
    with mt.enable_grad() if grad else mt.no_grad():
        other = number(target) if callable(number) else number
        result = _outcome(lambda: _state(getattr(target, method)(other)))
    return result, _state(base)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("kind", ["plain", "zero_d", "view", "expanded", "leaf_requires_grad", "view_of_leaf"])
def test_number_inplace_agrees_with_the_general_path(kind):
    for dtype, (name, dunder), grad in itertools.product(DTYPES, OPS, (True, False)):
        if kind in ("leaf_requires_grad", "view_of_leaf") and not dtype.startswith("float"):
            continue
        for number, method in itertools.product(NUMBERS + _tensor_operands(dtype), (name, dunder)):
            fast = _run(kind, dtype, method, number, grad)
            with mock.patch.object(inplace, "_number_inplace", lambda *a: None):
                general = _run(kind, dtype, method, number, grad)
            assert repr(fast) == repr(general), (kind, dtype, method, number, grad)  # repr: NaN bytes compare


def test_number_inplace_takes_only_unrecorded_python_numbers():
    x = mt.ones(3, requires_grad=True)
    assert inplace._number_inplace(mt.ones(3), "add_", "add", 1) is not None  # nothing to record
    assert inplace._number_inplace(mt.ones(3), "add_", "add", np.float64(1.0)) is None  # a NumPy scalar
    assert inplace._number_inplace(mt.ones(3, dtype=mt.int64), "add_", "add", 0.5) is None  # int += float refuses
    with mt.no_grad():
        assert inplace._number_inplace(x, "add_", "add", 1) is x  # not recorded under no_grad
    y = x * 2  # has a history: recorded, so the general path
    assert inplace._number_inplace(y, "mul_", "multiply", 3) is None


def test_recorded_inplace_number_still_differentiates():
    # the general path runs when the change is recorded: d(sum((x*1) * 3 + 1))/dx = 3
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y *= 3
    y += 1
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_int_number_wraps_as_the_general_path():
    # uint8 [250] + 300: 300 wraps to 44 (PyTorch's C++ cast), then 250 + 44 = 294 wraps to 38
    x = mt.tensor([250], dtype=mt.uint8)
    x += 300
    assert x.tolist() == [38]
    torch = pytest.importorskip("torch")
    t = torch.tensor([250], dtype=torch.uint8)
    t += 300
    assert t.tolist() == [38]


def _getitem_state(x, index, grad):
    with mt.enable_grad() if grad else mt.no_grad():
        v = x[index]
    return (v.numpy().tobytes() if not v.requires_grad else None, v.shape, v.dtype, v._base is (x._base if x._base is not None else x),
            v._version is x._version, v._view_no_grad, v.requires_grad, type(v.grad_fn).__name__)


@pytest.mark.parametrize("grad", [True, False])
def test_int_getitem_fast_path_as_general(grad):
    def no_fast():
        return mock.patch.object(indexing, "_plain_ints", lambda shape, index: None)

    for index in [0, -1, (1, 2), (0, -3), (1,)]:
        for make in (lambda: mt.arange(12.0).reshape(3, 4), lambda: mt.arange(24.0).reshape(2, 3, 4)[1],
                     lambda: mt.arange(12.0).reshape(3, 4).requires_grad_(),
                     lambda: mt.arange(12.0, requires_grad=True).reshape(3, 4) * 1):
            x = make()
            fast = _getitem_state(x, index, grad)
            with no_fast():
                general = _getitem_state(x, index, grad)
            assert fast == general, index


def test_int_getitem_view_follows_later_changes_of_its_base():
    # the fast path's view shares the base's version counter: a saved copy of it notices a write to the base
    x = mt.arange(6.0).reshape(2, 3)
    v = x[1, 2]
    w = mt.tensor(2.0, requires_grad=True)
    y = w * v  # saves v for w's gradient
    x[1, 2] = 7.0
    assert v.item() == 7.0
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.backward()


def test_counting_loop_with_all_fast_paths_as_general():
    rng = np.random.default_rng(1)
    pairs = rng.integers(-5, 5, (300, 2)).tolist()
    results = []
    for fast in (True, False):
        patches = [] if fast else [mock.patch.object(indexing, "_plain_ints", lambda shape, index: None),
                                   mock.patch.object(inplace, "_number_inplace", lambda *a: None)]
        for p in patches:
            p.start()
        try:
            N = mt.zeros((5, 5), dtype=mt.int32)
            for a, b in pairs:
                N[a, b] += 1
                N[a, b] -= 2
                N[a, b] *= -1
            results.append((N.numpy().copy(), N._version[0]))
        finally:
            for p in patches:
                p.stop()
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]


def _tensor_outcome(value, requires_grad):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = _outcome(lambda: _state(mt.tensor(value, requires_grad=requires_grad)))
    return out, [str(w.message) for w in caught]


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_tensor_of_a_python_number_as_the_general_path(default):
    import importlib

    tensor_module = importlib.import_module("minitorch_ln.tensor")  # the module (minitorch_ln.tensor is also the function)

    values = [0.5, -0.0, math.inf, -math.inf, math.nan, 1e300, 1e-50, 3, -3, 0, 2**63 - 1, -(2**63), 2**63, 2**70,
              True, False, np.float32(1.5), np.int64(2)]
    previous = mt.get_default_dtype()
    mt.set_default_dtype(getattr(mt, default))
    try:
        for value, requires_grad in itertools.product(values, (False, True)):
            fast = _tensor_outcome(value, requires_grad)
            with mock.patch.object(tensor_module, "_NUMBER_DTYPES", {}):
                general = _tensor_outcome(value, requires_grad)
            assert repr(fast) == repr(general), (value, requires_grad)
    finally:
        mt.set_default_dtype(previous)


def test_tensor_of_a_number_is_a_leaf_of_its_own():
    # 2.5 as float32, exactly representable; a leaf that requires grad collects its gradient (d(3t)/dt = 3)
    t = mt.tensor(2.5, requires_grad=True)
    assert t.dtype == mt.float32 and t.shape == () and t.is_leaf
    (t * 3).backward()
    assert t.grad.item() == 3.0
    with pytest.raises(RuntimeError, match="only floating point tensors can require gradients"):
        mt.tensor(3, requires_grad=True)


def test_item_of_one_element_any_shape():
    assert mt.tensor([[4.5]]).item() == 4.5 and mt.tensor(7).item() == 7 and type(mt.tensor(7).item()) is int
    with pytest.raises(ValueError, match=r"item\(\) needs a tensor with one element, this one has shape \(2,\)"):
        mt.tensor([1.0, 2.0]).item()
