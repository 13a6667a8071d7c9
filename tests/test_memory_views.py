"""view(dtype), data_ptr, the in-place view ops (t_, transpose_, squeeze_, unsqueeze_) and apply_ against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.errors import ShapeError

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("src,dst,shape", [
    ("float32", "int32", (2, 3)), ("float32", "uint8", (2, 3)), ("uint8", "float32", (2, 8)),
    ("float64", "int16", (3,)), ("int64", "float64", (2, 2)), ("float16", "int16", (4,)), ("bool", "uint8", (3,)),
    ("int32", "float16", (1, 2)),
])
def test_view_dtype_reads_the_same_bytes_as_pytorch(src, dst, shape):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape) * 100).astype(src)
    ours = mt.tensor(a).view(getattr(mt, dst))
    theirs = torch.from_numpy(a.copy()).view(getattr(torch, dst))
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == dst
    np.testing.assert_array_equal(ours.numpy().view(np.uint8), theirs.numpy().view(np.uint8))


def test_view_dtype_by_hand_and_shares_memory():
    # 1.0f is 0x3F800000 = 1065353216; the view shares memory and the version counter
    x = mt.ones(2)
    v = x.view(mt.int32)
    assert v.tolist() == [1065353216, 1065353216]
    v[0] = 0
    assert x[0].item() == 0.0 and x._version is v._version
    assert not mt.ones(2, requires_grad=True).view(mt.int32).requires_grad  # not differentiable, as PyTorch
    assert x.view(mt.float32) is not x and x.view(-1).shape == (2,)  # a size still reshapes


@pytest.mark.parametrize("make,dst", [
    (lambda m: m.ones(2, 3).t(), "float16"),        # last dim not contiguous, other element size
    (lambda m: m.ones(2, 3, dtype=m.uint8), "float32"),  # 3 bytes do not divide by 4
    (lambda m: m.tensor(1.0), "float16"),             # 0-d, other element size
])
def test_view_dtype_errors_where_pytorch_raises(make, dst):
    with pytest.raises(RuntimeError):
        make(torch).view(getattr(torch, dst))
    with pytest.raises(ShapeError):
        make(mt).view(getattr(mt, dst))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(allow_nan=False, width=32), min_size=1, max_size=12))
def test_view_dtype_round_trip_is_bit_exact(values):
    x = mt.tensor(np.array(values, np.float32))
    back = x.view(mt.int32).view(mt.float32)
    np.testing.assert_array_equal(back.numpy().view(np.uint32), x.numpy().view(np.uint32))


def test_data_ptr_offsets_like_pytorch():
    for lib in (mt, torch):
        a = lib.ones(5)
        assert isinstance(a.data_ptr(), int) and a.data_ptr() != 0
        assert a[2:].data_ptr() - a.data_ptr() == 2 * 4  # two float32 elements further
        assert a.view(-1).data_ptr() == a.data_ptr()
        assert lib.ones(0).data_ptr() == 0


@pytest.mark.parametrize("op", [
    lambda t: t.t_(), lambda t: t.transpose_(0, 1), lambda t: t.swapdims_(1, 0), lambda t: t.unsqueeze_(1),
    lambda t: t.unsqueeze_(-1), lambda t: t.squeeze_(), lambda t: t.unsqueeze_(0).squeeze_(0),
])
def test_inplace_view_ops_match_pytorch(op):
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    ours, theirs = mt.tensor(a), torch.from_numpy(a.copy())
    v0 = ours._version[0]
    r_ours, r_theirs = op(ours), op(theirs)
    assert r_ours is ours and r_theirs is theirs
    assert tuple(ours.shape) == tuple(theirs.shape) and tuple(ours.stride()) == tuple(theirs.stride())
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours._version[0] > v0


def test_t_on_small_and_big_tensors():
    assert tuple(mt.ones(3).t_().shape) == (3,) and tuple(mt.tensor(2.0).t_().shape) == ()
    with pytest.raises(RuntimeError, match="<= 2 dimensions"):
        mt.ones(1, 2, 3).t_()
    with pytest.raises(RuntimeError, match="<= 2 dimensions"):
        torch.ones(1, 2, 3).t_()


def test_inplace_view_ops_refuse_what_would_break_gradients_or_views():
    with pytest.raises(RuntimeError, match="requires grad"):
        mt.ones(2, 3, requires_grad=True).t_()
    base = mt.ones(2, 3)
    with pytest.raises(RuntimeError, match="view"):
        base[0:1].t_()


def test_apply_matches_pytorch_and_refuses_grad():
    a = np.arange(6.0).reshape(2, 3)
    for make in (lambda lib, x: lib.tensor(x), lambda lib, x: lib.tensor(x).t()):  # contiguous and not
        ours = make(mt, a).apply_(lambda v: v * v + 1)
        theirs = make(torch, a).apply_(lambda v: v * v + 1)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert mt.tensor([1, 2, 3]).apply_(lambda v: v * 10).tolist() == [10, 20, 30]  # ints stay ints
    with pytest.raises(RuntimeError, match="apply_"):
        mt.ones(2, requires_grad=True).apply_(lambda v: v)
    with pytest.raises(RuntimeError, match="apply_"):
        torch.ones(2, requires_grad=True).apply_(lambda v: v)


def test_torch_embedding_takes_pytorchs_argument_order():
    from minitorch_ln.interop.torch_alias import torch_alias

    w = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    idx = np.array([[1, 3], [0, 0]])
    with torch_alias():
        import torch as alias  # noqa: PLC0415 - the alias, inside the hook

        ours = alias.embedding(alias.tensor(w), alias.tensor(idx), padding_idx=0)
        assert alias.is_floating_point(alias.ones(1, dtype=alias.bfloat16))
    theirs = torch.embedding(torch.from_numpy(w), torch.from_numpy(idx), padding_idx=0)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
