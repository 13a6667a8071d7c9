"""The Tensor API: factories, conversion, printing, NumPy interop, in-place ops and version counters."""

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln.autograd import no_grad

from helpers import t64


# ---------------------------------------------------------------------------------------- factories


def test_tensor_from_data_dtypes_as_torch():
    assert mt.tensor([1.0, 2.0]).dtype == np.float32
    assert mt.tensor([1, 2]).dtype == np.int64
    assert mt.tensor([True]).dtype == np.bool_
    assert mt.tensor(np.array([1.0], dtype=np.float64)).dtype == np.float64
    assert mt.tensor([1, 2], dtype="float64").dtype == np.float64
    assert mt.tensor(3.5).shape == () and mt.tensor(3.5).item() == 3.5
    a = np.array([1.0, 2.0])
    t = mt.tensor(a)
    a[0] = 9.0
    assert t.tolist() == [1.0, 2.0]  # tensor() copies


@pytest.mark.parametrize("fn,value", [(mt.zeros, 0.0), (mt.ones, 1.0)])
def test_zeros_ones(fn, value, device):
    t = fn(2, 3, device=device)
    assert t.shape == (2, 3) and t.dtype == np.float32 and t.device == device
    np.testing.assert_array_equal(np.asarray(t), np.full((2, 3), value))
    assert fn((4,), dtype="float64").dtype == np.float64


def test_other_factories(device):
    assert mt.full((2, 2), 7).dtype == np.int64 and mt.full((2, 2), 7.0).dtype == np.float32
    np.testing.assert_array_equal(mt.full((2,), 1.5, device=device).tolist(), [1.5, 1.5])
    assert mt.empty(3, 2).shape == (3, 2)
    np.testing.assert_array_equal(mt.arange(5).numpy(), np.arange(5))
    assert mt.arange(5).dtype == np.int64 and mt.arange(0, 1, 0.25).dtype == np.float32
    np.testing.assert_array_equal(mt.arange(1, 7, 2).numpy(), [1, 3, 5])
    np.testing.assert_array_equal(mt.eye(3, dtype="float64").numpy(), np.eye(3))
    assert mt.eye(2, 3).shape == (2, 3)
    r = mt.rand(1000)
    assert r.dtype == np.float32 and 0.0 <= r.numpy().min() and r.numpy().max() < 1.0
    n = mt.randn(2000, dtype="float64")
    assert abs(n.numpy().mean()) < 0.1 and abs(n.numpy().std() - 1.0) < 0.1
    i = mt.randint(3, 7, (100,))
    assert i.dtype == np.int64 and set(i.tolist()) <= {3, 4, 5, 6}
    assert mt.randint(5, size=(2, 2)).shape == (2, 2)
    with pytest.raises(ValueError, match="non-negative integers"):
        mt.zeros(-1, 2)


def test_like_factories():
    ref = mt.ones(2, 3, dtype="float64")
    for fn in (mt.zeros_like, mt.ones_like, mt.empty_like, mt.rand_like, mt.randn_like):
        t = fn(ref)
        assert t.shape == (2, 3) and t.dtype == np.float64 and not t.requires_grad
    assert mt.zeros_like(ref, dtype="float32").dtype == np.float32
    assert mt.full_like(ref, 4.0).tolist() == [[4.0] * 3] * 2
    assert mt.ones_like(ref, requires_grad=True).requires_grad


def test_manual_seed_reproducibility():
    mt.manual_seed(42)
    a, b = mt.randn(5).numpy(), mt.rand(3).numpy()
    mt.manual_seed(42)
    np.testing.assert_array_equal(mt.randn(5).numpy(), a)
    np.testing.assert_array_equal(mt.rand(3).numpy(), b)
    mt.manual_seed(43)
    assert not np.array_equal(mt.randn(5).numpy(), a)
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        mt.manual_seed(1.5)  # (PyTorch truncates 1.5 to 1 without a word; a seed that is not an int is refused here)


# ---------------------------------------------------------------------------------------- attributes, conversion


def test_attributes():
    t = mt.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.dim() == 3 and t.size() == (2, 3, 4) and t.size(1) == 3
    assert t.numel() == 24 and len(t) == 2 and t.device == "cpu" and t.is_leaf and t.grad is None
    assert not t.requires_grad and t.requires_grad_().requires_grad


def test_item_tolist_numpy_array():
    t = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert t[1, 0].item() == 3.0 and isinstance(t[1, 0].item(), float)
    assert mt.tensor([7]).item() == 7 and isinstance(mt.tensor([7]).item(), int)
    with pytest.raises(ValueError, match=r"one element, this one has shape \(2, 2\)"):
        t.item()
    n = t.numpy()
    n[0, 0] = 10.0  # numpy() shares memory on the CPU
    assert t[0, 0].item() == 10.0
    arr = np.asarray(t)
    assert arr.shape == (2, 2) and np.array(t, dtype=np.float64).dtype == np.float64
    assert float(mt.tensor(2.5)) == 2.5 and int(mt.tensor(3)) == 3
    assert [10, 20, 30][mt.tensor(1)] == 20  # __index__
    with pytest.raises(RuntimeError, match="use .detach\\(\\).numpy\\(\\)"):
        t64([1.0]).numpy()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(mt.tensor([1.0, 2.0]))


def test_detach_clone_to():
    x = t64([1.0, 2.0])
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None and d.array is x.array
    c = x.clone()
    assert c.array is not x.array and c.grad_fn is not None
    (c * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])  # clone is differentiable
    assert x.float().dtype == np.float32 and x.double() is x
    assert x.to("float32").dtype == np.float32 and x.to(mt.float32).dtype == np.float32
    assert x.to("cpu") is x and x.to(device="cpu", dtype="float64") is x
    assert x.detach().long().dtype == np.int64 and x.detach().half().dtype == np.float16
    assert x.detach().bool().tolist() == [True, True]


def test_requires_grad_rules():
    with pytest.raises(RuntimeError, match="only floating point tensors can require gradients.*int64"):
        mt.tensor([1, 2]).requires_grad_()
    y = t64([1.0]) * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf tensors"):
        y.requires_grad_(False)


def test_repr_shows_values_dtype_and_grad_fn():
    assert repr(mt.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"  # PyTorch's format (tensor_str.py)
    assert repr(mt.tensor([1, 2])) == "tensor([1, 2])"
    r = repr(t64([1.0, 2.0]))
    assert "dtype=torch.float64" in r and "requires_grad=True" in r
    y = t64([1.0, 2.0]) * 2
    assert "grad_fn=<MulBackward0>" in repr(y) and "2." in repr(y) and "4." in repr(y)
    assert "grad_fn=<SumBackward0>" in repr(y.sum())


# ---------------------------------------------------------------------------------------- in-place ops


def test_inplace_ops_values_and_versions():
    x = mt.zeros(3)
    x.add_(2.0).mul_(3.0)
    assert x.tolist() == [6.0, 6.0, 6.0] and x._version[0] == 2
    x.sub_(1.0, alpha=2).div_(2.0)
    assert x.tolist() == [2.0, 2.0, 2.0]
    x.masked_fill_(mt.tensor([True, False, True]), -1.0)
    assert x.tolist() == [-1.0, 2.0, -1.0]
    x.copy_(mt.tensor([7.0, 8.0, 9.0]))
    assert x.tolist() == [7.0, 8.0, 9.0]
    x.copy_(mt.tensor(1.0))  # broadcasts
    assert x.tolist() == [1.0, 1.0, 1.0]
    x.fill_(5.0)
    assert x.tolist() == [5.0] * 3
    v = x._version[0]
    x.zero_()
    assert x.tolist() == [0.0] * 3 and x._version[0] == v + 1
    x.add_(mt.tensor([1.0, 2.0, 3.0]), alpha=2)
    assert x.tolist() == [2.0, 4.0, 6.0]
    x.clamp_(max=3.0)
    assert x.tolist() == [2.0, 3.0, 3.0]


def test_inplace_ops_on_non_leaves_are_differentiated():
    x = t64([1.0, 2.0, 3.0])
    y = x * 2.0
    y.mul_(3.0)
    y.add_(x)  # y = 7x
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [7.0, 7.0, 7.0])

    x.grad = None
    y = x * 2.0
    y.masked_fill_(mt.tensor([True, False, False]), 0.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 2.0])

    x.grad = None
    s = t64([4.0, 5.0, 6.0])
    y = x * 2.0
    y.copy_(s)  # x no longer matters; s does
    (y * y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(s.grad.numpy(), [8.0, 10.0, 12.0])

    x.grad = None
    y = x * 2.0
    y.zero_()  # fill_ on a non-leaf cuts its history
    (y + x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])


def test_copy_into_inf_does_not_give_nan():
    x = mt.full((2,), float("inf"))
    x.copy_(mt.zeros(2))
    assert x.tolist() == [0.0, 0.0]


def test_inplace_version_counter_errors():
    x = t64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad is being used in an in-place operation"):
        x.mul_(2.0)
    for op in (lambda t: t.add_(1.0), lambda t: t.fill_(0.0), lambda t: t.zero_(), lambda t: t.copy_(t64([0.0, 0.0])),
               lambda t: t.masked_fill_(mt.tensor([True, False]), 0.0)):
        with pytest.raises(RuntimeError, match="in-place"):
            op(x)
    with no_grad():
        x.mul_(2.0)  # allowed: that is how optimizers update parameters
    assert x.tolist() == [2.0, 4.0]

    y = x * 1.0
    z = y.exp()  # saves its output
    z.add_(1.0)
    with pytest.raises(RuntimeError, match=r"modified by an in-place operation: it was saved at version 0 and is now at version 1"):
        z.sum().backward()

    w = x * 1.0
    loss = (w * w).sum()  # saves w
    w.fill_(0.0)
    with pytest.raises(RuntimeError, match="ExpBackward|MulBackward"):
        loss.backward()


def test_inplace_shape_mismatch():
    x = mt.zeros(3)
    with pytest.raises(RuntimeError, match=r"result has shape \(2, 3\), which does not fit the in-place target of shape \(3,\)"):
        x.add_(mt.ones(2, 3))


def test_bad_input_messages_found_by_a_new_user():
    # ragged lists, a float dim, a negative seed: each a clear message, not NumPy's
    with pytest.raises(ValueError, match="same length"):
        mt.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="dim must be an int or a tuple of ints, got 1.5"):
        mt.ones(3, 4).sum(dim=1.5)
    # a negative seed wraps modulo 2**64, as torch.manual_seed(-1).initial_seed() == 2**64 - 1
    assert mt.manual_seed(-1).initial_seed() == 2**64 - 1


# ------------------------------------------------------------------------------------------ .data


def test_data_is_a_detached_tensor_sharing_memory_as_in_pytorch():
    p = mt.tensor([1.0, 2.0, 4.0], requires_grad=True)
    d = p.data
    assert isinstance(d, mt.Tensor) and not d.requires_grad and d.grad_fn is None
    assert d.array is p.array                              # the same memory, no copy
    d.mul_(0.5)                                             # as `p.data.mul_(0.5)` in PyTorch code: no error
    np.testing.assert_array_equal(p.detach().numpy(), [0.5, 1.0, 2.0])
    c = p.data.clone()                                      # `x.data.clone()`: a copy with its own memory
    c.add_(1.0)
    np.testing.assert_array_equal(p.detach().numpy(), [0.5, 1.0, 2.0])
    w = mt.zeros(1000, requires_grad=True)
    w.data.normal_(0, 0.02)                                 # `w.data.normal_(0, 0.02)`, as in GPT init code
    assert 0.015 < float(w.detach().numpy().std()) < 0.025
    p.data = mt.tensor([7.0, 8.0])                          # assigning replaces the values (and the shape)
    assert p.shape == (2,) and p.requires_grad
    np.testing.assert_array_equal(p.detach().numpy(), [7.0, 8.0])
    with pytest.raises(TypeError, match="Tensor.data must be set to a Tensor or an array, got str"):
        p.data = "seven"


def test_data_matches_torch_data_on_the_same_script():
    # the same three lines in both frameworks give the same values (PyTorch as the reference)
    torch = pytest.importorskip("torch")
    a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    b = mt.tensor([1.0, -2.0, 3.0], requires_grad=True)
    for t in (a, b):
        t.data.mul_(2.0)
        t.data[1] = 5.0
        (t * t).sum().backward()
    np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())
    np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())  # 2·t at the changed values


def test_format_to_and_pin_memory_as_pytorch():
    torch = pytest.importorskip("torch")
    for v in (1.23456, -0.5, 3.0):
        assert f"{mt.tensor(v):.4f}" == f"{torch.tensor(v):.4f}" and f"{mt.tensor(v)}" == f"{torch.tensor(v)}"
    with pytest.raises(TypeError, match="only 0-d tensors take a format spec"):
        f"{mt.tensor([1.0, 2.0]):.2f}"  # noqa: B018 - PyTorch raises TypeError here too
    x = mt.randn(2, 3, requires_grad=True)
    y = x.to("cpu", non_blocking=True)
    assert y is x                                             # nothing to change: the same tensor, as PyTorch
    z = x.to(mt.zeros(1, dtype=mt.float64))                   # to(other): its dtype and device
    assert z.dtype == np.float64 and z.requires_grad
    c = x.to(copy=True)
    assert c is not x and c.array is not x.array
    assert x.pin_memory() is x and not x.is_pinned()
    assert x.to("bfloat16").dtype == mt.bfloat16  # a storage dtype (tests/test_bfloat16.py)
    assert x.sum(axis=1).shape == (2,) and x.mean(dim=0, keepdim=True).shape == (1, 3)


def test_a_pytorch_name_we_lack_points_to_the_compat_page():
    for get in (lambda: mt.nonexistent_op, lambda: mt.nn.AdaptiveLogSoftmaxWithLoss,
                lambda: mt.ones(2).to_sparse_csr):
        with pytest.raises(AttributeError, match="docs/torch_compat.md"):
            get()
    assert not hasattr(mt, "nonexistent_op") and hasattr(mt, "tensor")
