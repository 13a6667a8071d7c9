"""Factories: ``randint`` forms, ``randint_like``, ``linspace``/``logspace``, ``from_numpy``/``as_tensor``, ``new_*``."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from helpers import assert_close, torch
from minitorch_ln.ops.creation import as_tensor, from_numpy, linspace, logspace, randint, randint_like


def _meta(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.") and tuple(ours.shape) == tuple(theirs.shape)


def test_randint_forms_as_pytorch():
    for args, kw in [((3, (10,)), {}), ((2, 7, (4, 2)), {}), ((5,), {"size": (2, 2)}), ((), {"high": 4, "size": (3,)}),
                     ((3, (2,)), {"dtype": "float32"}), ((0, 2, (3,)), {"dtype": "bool"}), ((-4, -1, ()), {})]:
        ours, theirs = randint(*args, **kw), torch.randint(*args, **{k: getattr(torch, v) if k == "dtype" else v
                                                                       for k, v in kw.items()})
        _meta(ours, theirs)
    x = randint(2, 7, (1000,)).numpy()
    assert x.min() == 2 and x.max() == 6
    assert randint(3, (10,)).shape == (10,)  # not one number in [3, 10)
    t = mt.zeros(2, 3, dtype="int32")
    _meta(randint_like(t, 5), torch.randint_like(torch.zeros(2, 3, dtype=torch.int32), 5))
    _meta(randint_like(mt.zeros(4), 2, 5), torch.randint_like(torch.zeros(4), 2, 5))
    assert set(randint_like(mt.zeros(500), 2, 5).numpy().tolist()) == {2.0, 3.0, 4.0}


@given(st.integers(-1000, 1000), st.integers(1, 1000), st.lists(st.integers(0, 3), max_size=3))
def test_randint_stays_in_range(low, width, size):
    x = randint(low, low + width, tuple(size)).numpy()
    assert x.shape == tuple(size) and x.dtype == np.int64 and np.all((x >= low) & (x < low + width))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("start,end,steps", [(0, 10, 5), (0, 1, 7), (-3, 7, 4), (2.5, -1.25, 9), (2, 10, 1), (2, 10, 0),
                                             (0, 1, 1001), (1e-3, 1e3, 3)])
def test_linspace_and_logspace_match_pytorch(start, end, steps, dtype):
    tdt = getattr(torch, dtype)
    for ours, theirs in [(linspace(start, end, steps, dtype=dtype), torch.linspace(start, end, steps, dtype=tdt)),
                         (logspace(start / 1e3, end / 1e3, steps, dtype=dtype), torch.logspace(start / 1e3, end / 1e3, steps, dtype=tdt)),
                         (logspace(start / 4, end / 4, steps, base=2, dtype=dtype),
                          torch.logspace(start / 4, end / 4, steps, base=2, dtype=tdt))]:
        _meta(ours, theirs)
        if dtype.startswith("int"):  # truncation of the same float ramp: exact
            assert ours.tolist() == theirs.tolist()
        else:
            assert_close(ours, theirs, dtype, "linspace/logspace")
    _meta(linspace(0, 10, 5), torch.linspace(0, 10, 5))  # float32 by default, also for int bounds
    assert linspace(mt.tensor(0.0), mt.tensor(1.0), 3).tolist() == [0.0, 0.5, 1.0]


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6.0).reshape(2, 3)[:, ::2]  # non-contiguous, still no copy
    t = from_numpy(a)
    assert t.dtype == np.float64 and t.shape == (2, 2)
    a[0, 0] = 42.0
    assert t.tolist()[0][0] == 42.0
    t.array[1, 1] = -1.0
    assert a[1, 1] == -1.0
    assert type(from_numpy(np.arange(3, dtype=np.uint8)).array) is np.ndarray


def test_as_tensor_copies_only_when_it_must():
    a = np.arange(4, dtype=np.int64)
    assert np.shares_memory(as_tensor(a).array, a)
    assert not np.shares_memory(as_tensor(a, dtype="float32").array, a)
    t = mt.ones(3)
    assert as_tensor(t) is t and as_tensor(t, dtype=mt.float32) is t
    assert as_tensor(t, dtype=mt.float64).dtype == np.float64
    _meta(as_tensor([1, 2]), torch.as_tensor([1, 2]))
    _meta(as_tensor(3.5), torch.as_tensor(3.5))
    r = np.arange(3.0)[::-1]
    assert as_tensor(r).tolist() == [2.0, 1.0, 0.0]  # negative strides: copied, as torch
    x = mt.ones(2, dtype=mt.float32, requires_grad=True)
    assert as_tensor(x, dtype=mt.float64).requires_grad  # the cast is recorded


def test_new_methods_take_the_tensors_dtype_and_device(device):
    t, tt = mt.zeros(2, 3, dtype="int32", device=device), torch.zeros(2, 3, dtype=torch.int32)
    for name, args in [("new_zeros", (2, 3)), ("new_zeros", ((2, 3),)), ("new_ones", ([2],)), ("new_full", ((2,), 1.5)),
                       ("new_empty", (3,)), ("new_tensor", ([1.5, 2],))]:
        ours, theirs = getattr(t, name)(*args), getattr(tt, name)(*args)
        _meta(ours, theirs)
        assert ours.device == device
        if name != "new_empty":
            assert ours.tolist() == theirs.tolist(), name
    y = t.new_zeros(2, dtype=mt.float64, requires_grad=True)
    assert y.dtype == np.float64 and y.requires_grad
    src = mt.ones(2)
    c = mt.zeros(1).new_tensor(src)
    assert not np.shares_memory(c.array, src.array)
    assert mt.zeros(2).new_full((2,), True).dtype == np.float32


def test_bad_input():
    cases = [
        (TypeError, r"argument 'size' \(position 2\) must be tuple of ints, not int", lambda: randint(3, 10)),
        (TypeError, "missing the required argument 'size'", lambda: randint()),
        (RuntimeError, "from=3 >= to=3", lambda: randint(3, 3, (2,))),
        (RuntimeError, "to - 1 is out of bounds for unsigned char", lambda: randint(0, 300, (2,), dtype="uint8")),
        (RuntimeError, "from is out of bounds for unsigned char", lambda: randint(-1, 3, (2,), dtype="uint8")),
        (RuntimeError, "floating point tensors can require gradients", lambda: randint(3, (2,), requires_grad=True)),
        (RuntimeError, "number of steps must be non-negative, got -1", lambda: linspace(0, 1, -1)),
        (TypeError, "'steps' must be int, not float", lambda: logspace(0, 1, 2.5)),
        (TypeError, r"expected np.ndarray \(got list\)", lambda: from_numpy([1, 2])),
        (TypeError, "can't convert np.ndarray of type numpy.str_", lambda: from_numpy(np.array(["a"]))),
        (ValueError, "byte order", lambda: from_numpy(np.array([1.0], dtype=">f4"))),
        (ValueError, "negative", lambda: from_numpy(np.arange(3.0)[::-1])),
        (TypeError, r"new_full\(\): argument 'size' \(position 1\) must be tuple of ints, not int", lambda: mt.zeros(1).new_full(2, 1.0)),
    ]
    for exc, match, fn in cases:
        with pytest.raises(exc, match=match):
            fn()
