"""``autograd.tracing``: the hook ONNX export records a forward with (off by default)."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln.autograd import function
from minitorch_ln.autograd.tracing import tracing
from minitorch_ln.ops.elementwise import Add, Mul
from minitorch_ln.ops.indexing import Split


def test_off_by_default_and_after_a_trace():
    assert function._tracer is None
    with tracing(lambda *a: None):
        assert function._tracer is not None
    assert function._tracer is None


def test_sees_ops_on_constants_under_no_grad_with_their_arguments_and_outputs():
    seen = []
    x = mt.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))  # requires no grad
    with mt.no_grad(), tracing(lambda cls, ctx, args, kwargs, out: seen.append((cls, args, kwargs, out))):
        y = x * 2.0
        z = y + x
        a, b = mt.split(z, [1, 2], dim=1)
    assert [s[0] for s in seen] == [Mul, Add, Split]
    assert seen[0][1][0] is x and seen[1][1] == (y, x) and seen[1][3] is z
    assert list(seen[2][1][1]) == [1, 2] and seen[2][1][2] == 1 and seen[2][3] == (a, b)  # a multi-output op: its tuple
    np.testing.assert_array_equal(z.numpy(), 3 * x.numpy())  # values unchanged by tracing


def test_the_graph_is_still_recorded_while_tracing():
    w = mt.randn(3, requires_grad=True)
    dy = mt.randn(3)
    with tracing(lambda *a: None):
        y = w * w
    y.backward(dy)
    np.testing.assert_allclose(w.grad.numpy(), 2 * w.detach().numpy() * dy.numpy(), rtol=1e-6)


def test_traces_do_not_nest_and_an_error_ends_the_trace():
    with tracing(lambda *a: None), pytest.raises(RuntimeError, match="do not nest"), tracing(lambda *a: None):
        pass
    with pytest.raises(ZeroDivisionError), tracing(lambda *a: None):
        raise ZeroDivisionError
    assert function._tracer is None


def test_in_place_writes_are_reported_and_take_the_op_path():
    ops, writes = [], []
    x = mt.tensor(np.array([[1.0, -2.0, 3.0]], dtype=np.float32))
    with mt.no_grad(), tracing(lambda cls, *a: ops.append(cls), lambda t, r: writes.append((t, r))):
        y = x * 1.0
        y += 1.0  # without a trace, the NumPy fast path: no op, no report
        y.mul_(3.0)
        y[:, 0] = 5.0  # the setitem fast path also steps aside
    assert ops[:3] == [Mul, Add, Mul] and len(writes) == 3
    assert all(t is y for t, _ in writes)
    # [[1, -2, 3]] + 1 = [[2, -1, 4]], * 3 = [[6, -3, 12]]; the write results are those values
    np.testing.assert_array_equal(writes[1][1].numpy(), [[6.0, -3.0, 12.0]])
    np.testing.assert_array_equal(y.numpy(), [[5.0, -3.0, 12.0]])
    from minitorch_ln.autograd import tracing as tracing_module
    assert tracing_module._on_write is None and not tracing_module.active()  # off after the block
