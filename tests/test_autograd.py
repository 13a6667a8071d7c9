"""The engine: graph recording, accumulation, iterative order, errors, hooks, higher orders, gradcheck."""

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln.autograd import Function, GradcheckError, grad, gradcheck, gradgradcheck, no_grad, enable_grad

from helpers import t64


def test_tensor_used_twice_gets_sum_of_gradients():
    x = t64([1.0, 2.0, 3.0])
    y = x * x + x  # dy/dx = 2x + 1
    y.backward(mt.tensor([1.0, 1.0, 1.0], dtype="float64"))
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 5.0, 7.0])


def test_gradients_accumulate_across_backward_calls():
    x = t64([2.0])
    (x * 3).sum().backward()
    (x * 4).sum().backward()
    assert x.grad.item() == 7.0


def test_distinct_leaves_never_share_grad_buffers():
    a, b = t64([1.0, 2.0]), t64([3.0, 4.0])
    (a + b).sum().backward()
    a.grad.zero_()
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0])


def test_chain_of_100000_ops_has_no_recursion_error():
    x = t64([1.0])
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.item() == 1.0


def test_backward_on_non_scalar_needs_gradient():
    x = t64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="only for scalar outputs.*shape \\(2,\\)"):
        (x * 2).backward()


def test_second_backward_through_freed_graph_raises():
    x = t64([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = t64([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])  # 2 * 2x


def test_inplace_on_leaf_requiring_grad_raises():
    x = t64([1.0])
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad.*in-place"):
        x.add_(1.0)
    with no_grad():
        x.add_(1.0)
    assert x.item() == 2.0


def test_inplace_change_of_saved_tensor_raises():
    x = t64([1.0, 2.0])
    y = x * 1.0
    z = (y * y).sum()  # saves y
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z.backward()


def test_inplace_on_nonleaf_is_differentiated():
    x = t64([1.0, 2.0])
    y = x * 3.0
    y.add_(x)  # y = 4x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])


def test_integer_tensor_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point.*int64"):
        mt.tensor([1, 2], requires_grad=True)


def test_no_grad_and_enable_grad():
    x = t64([1.0])
    with no_grad():
        y = x * 2
        with enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad

    @no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad


def test_grad_mode_is_per_thread_and_concurrent_backward_is_right():
    # As in PyTorch: no_grad in one thread leaves recording on in the others, and each new
    # thread starts with recording on, whatever the thread that started it is doing.
    import threading

    started, release, seen = threading.Event(), threading.Event(), {}

    def in_no_grad():
        with no_grad():
            started.set()
            release.wait(10)

    t = threading.Thread(target=in_no_grad)
    t.start()
    started.wait(10)
    assert mt.autograd.is_grad_enabled()
    with no_grad():
        child = threading.Thread(target=lambda: seen.setdefault("child", mt.autograd.is_grad_enabled()))
        child.start()
        child.join()
    release.set()
    t.join()
    assert seen["child"] is True and mt.autograd.is_grad_enabled()

    # eight threads, each its own graph: d/dx_k Σ w_k (x_k · c)² = 2 c² w_k x_k, worked out by hand
    # (the weights w = (1, -2, 3) make the upstream gradient of the square non-uniform)
    errors, grads = [], {}
    w = np.array([1.0, -2.0, 3.0])

    def work(c):
        try:
            for _ in range(20):
                x = mt.tensor(np.arange(1.0, 4.0), requires_grad=True)
                ((x * c) ** 2).backward(mt.tensor(w))
            grads[c] = x.grad.numpy()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(float(c),)) for c in range(1, 9)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    for c, g in grads.items():
        np.testing.assert_allclose(g, 2 * c * c * w * np.arange(1.0, 4.0))
    assert mt.autograd.is_grad_enabled()


def test_autograd_grad_does_not_touch_leaves_and_supports_higher_order():
    x = t64([0.5, -1.0])
    y = (x**3).sum()
    (g,) = grad(y, x, create_graph=True)  # 3x^2
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.25, 1.0]))
    (g2,) = grad(g.sum(), x, create_graph=True)  # 6x
    np.testing.assert_allclose(g2.detach().numpy(), [3.0, -6.0])
    (g3,) = grad(g2.sum(), x)  # 6
    np.testing.assert_allclose(g3.numpy(), [6.0, 6.0])
    assert x.grad is None


def test_grad_unused_input():
    x, z = t64([1.0]), t64([2.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="not used"):
        grad(y, [x, z], retain_graph=True)
    gx, gz = grad(y, [x, z], allow_unused=True)
    assert gz is None and gx.item() == 2.0


def test_hooks_and_retain_grad():
    x = t64([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(g.numpy().copy()))
    x.register_hook(lambda g: g * 10)  # replaces the leaf's incoming grad
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [4.0, 8.0])  # 2y
    np.testing.assert_allclose(seen[0], [4.0, 8.0])
    np.testing.assert_allclose(x.grad.numpy(), [80.0, 160.0])  # 10 * 2 * 2y


def test_mixed_devices_error_names_both(monkeypatch):
    # Without a GPU we fake a second device to check the message of Function.apply.
    from minitorch_ln import backend

    class FakeGPUArray(np.ndarray):  # another array type sends apply() to its detailed device check
        pass

    a, b = mt.tensor([1.0]), mt.tensor([2.0])
    b.array = b.array.view(FakeGPUArray)
    real = backend.device_of
    monkeypatch.setattr(backend, "device_of", lambda arr: backend.Device("cuda:0") if arr is b.array else real(arr))
    with pytest.raises(RuntimeError, match="cpu and cuda:0"):
        a * b


class WrongCube(Function):
    """x**3 with a deliberately wrong backward (2x² instead of 3x²)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy * 2 * x * x


class RightCube(WrongCube):
    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy * 3 * x * x


def test_gradcheck_catches_wrong_backward_and_names_element():
    x = t64([[0.5, -1.0], [2.0, 1.5]])
    assert gradcheck(RightCube.apply, (x,))
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongCube.apply, (x,))
    msg = str(info.value)
    assert "input 0" in msg and "analytical" in msg and "numerical" in msg
    # the worst element is where 3x² - 2x² = x² is largest: x = 2.0 at (1, 0), derivative 12 vs 8
    w = info.value.worst[0]
    assert w["input_index"] == (1, 0)
    assert w["analytical"] == pytest.approx(8.0) and w["numerical"] == pytest.approx(12.0, rel=1e-6)
    assert not gradcheck(WrongCube.apply, (x,), raise_exception=False)
    with pytest.raises(GradcheckError, match="fast-mode"):
        gradcheck(WrongCube.apply, (x,), fast_mode=True)


def test_gradgradcheck_catches_wrong_double_backward():
    class ConstBackward(Function):  # backward right at first order but saved as a constant
        @staticmethod
        def forward(ctx, x):
            ctx.deriv = 3 * x * x
            return x**3

        @staticmethod
        def backward(ctx, dy):
            return dy * mt.tensor(ctx.deriv)

    x = t64([0.5, -1.0, 2.0])
    assert gradcheck(ConstBackward.apply, (x,))
    with pytest.raises(GradcheckError, match=r"Jacobian mismatch for input 0"):
        gradgradcheck(ConstBackward.apply, (x,))
    assert gradgradcheck(RightCube.apply, (x,))


def test_gradcheck_warns_for_float32():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="not float64"):
        gradcheck(lambda t: t * 2, (x,), eps=1e-2, atol=1e-2, rtol=1e-2)


def test_custom_op_doc_runs(capsys):
    """The worked example of docs/custom_op.md, run block by block in one namespace."""
    import pathlib
    import re

    doc = pathlib.Path(__file__).resolve().parent.parent / "docs" / "custom_op.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) >= 4
    namespace = {"__name__": "custom_op_doc"}
    for block in blocks:
        exec(compile(block, str(doc), "exec"), namespace)  # noqa: S102 - our own documentation
    assert "SoftplusBackward0" in capsys.readouterr().out


def test_inplace_op_on_a_non_leaf_does_not_invalidate_its_own_node():
    # y.mul_(3) must not save the y it overwrites (it used to raise "modified by an in-place operation")
    x = t64([1.0, 2.0])
    y = x * 2.0
    y.mul_(3.0)
    y.div_(4.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.5, 1.5])


def test_shared_subgraph_and_diamond_accumulate():
    x = t64([1.0, -2.0])
    a = x.exp()
    b = a * 2.0
    c = a * a  # a feeds two consumers, which both feed the output
    (b + c).sum().backward()
    e = np.exp([1.0, -2.0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * e + 2 * e * e)


def test_multi_output_function_with_an_unused_output():
    x = t64(np.arange(6.0))
    first, second = x.split(3)
    (first * 2).sum().backward()  # the second output's gradient is filled with zeros
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2, 0, 0, 0])


@pytest.mark.parametrize("kw", [dict(rtol=float("nan")), dict(atol=-1.0), dict(eps=0.0), dict(eps=float("inf"))])
def test_gradcheck_rejects_meaningless_tolerances(kw):
    x = t64([1.0, 2.0])
    with pytest.raises(ValueError, match="must be a finite number"):
        gradcheck(lambda t: t * 2, (x,), **kw)


def test_backward_pauses_the_garbage_collector_and_restores_it():
    # the pass runs with Python's cyclic collector paused (autograd/engine.py: a full collection
    # in the middle of a long graph cost more than the pass) and restores the state it found
    import gc  # noqa: PLC0415

    seen = []
    x = t64([1.0, 2.0])
    x.register_hook(lambda g: seen.append(gc.isenabled()))
    y = (x * 3).sum()
    assert gc.isenabled()
    y.backward(retain_graph=True)
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        y.backward(retain_graph=True)  # a collector the caller disabled stays disabled
        assert seen == [False, False] and not gc.isenabled()
    finally:
        gc.enable()

    def failing(g):
        raise ValueError("hook failed")

    x.register_hook(failing)
    with pytest.raises(ValueError, match="hook failed"):
        y.backward()
    assert gc.isenabled()  # restored after an error too
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])  # two passes of d(3x)/dx = 3 each


def test_assigning_a_grad_that_does_not_match_is_refused():
    # As PyTorch: .grad must match the tensor. A float16 gradient of a float32 parameter once made
    # Adam compute its second moment in float16 (it underflowed to 0: a step of -100 instead of -1e-3).
    p = mt.tensor(np.zeros(3, np.float32), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"assigned grad has dtype float16, expected the tensor's float32"):
        p.grad = mt.tensor(np.full(3, 1e-3, np.float16))
    with pytest.raises(RuntimeError, match=r"assigned grad has shape \(2,\), expected the tensor's \(3,\)"):
        p.grad = mt.tensor(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None, got ndarray"):
        p.grad = np.zeros(3, np.float32)
    assert p.grad is None  # nothing was assigned
    g = mt.tensor(np.full(3, 0.5, np.float32))
    p.grad = g
    assert p.grad is g
    p.grad = None
    assert p.grad is None
