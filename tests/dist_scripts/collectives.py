"""Every collective against hand-worked values, on 2 ranks (run by tests/test_distributed.py through mpiexec).

Prints ``COLLECTIVES OK rank R`` at the end; any failed check raises, which aborts the job (non-zero).
"""

import numpy as np

import minitorch_ln as mt
import minitorch_ln.distributed as dist
from minitorch_ln.distributed import ReduceOp


def expect_error(exc_type, fragment, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc_type as exc:
        assert fragment in str(exc), f"{fragment!r} not in {exc!r}"
        return
    raise AssertionError(f"{fn.__name__} did not raise {exc_type.__name__} ({fragment})")


def close(t, expected):
    np.testing.assert_array_equal(t.numpy(), np.asarray(expected, dtype=t.numpy().dtype))


dist.init_process_group("gloo")
r, W = dist.get_rank(), dist.get_world_size()
assert W == 2 and dist.is_initialized() and dist.get_backend() == "gloo"
expect_error(ValueError, "twice", dist.init_process_group, "gloo")

# all_reduce: rank r holds (r + 1) * [1, 2]; the sum over ranks is (1 + 2) * [1, 2]
t = mt.tensor([1.0, 2.0], dtype=mt.float64) * (r + 1)
dist.all_reduce(t)
close(t, [3.0, 6.0])
t = mt.tensor([1.0, 2.0]) * (r + 1)
dist.all_reduce(t, op=ReduceOp.AVG)
close(t, [1.5, 3.0])  # (1 + 2) / 2 * [1, 2]
t = mt.tensor([r + 2.0])
dist.all_reduce(t, op=ReduceOp.PRODUCT)
close(t, [6.0])  # 2 * 3
t = mt.tensor([float(r), -float(r)])
dist.all_reduce(t, op=ReduceOp.MIN)
close(t, [0.0, -1.0])
t = mt.tensor([float(r), -float(r)])
dist.all_reduce(t, op=ReduceOp.MAX)
close(t, [1.0, 0.0])
for op, want in ((ReduceOp.BAND, 8), (ReduceOp.BOR, 14), (ReduceOp.BXOR, 6)):  # 0b1100 with 0b1010
    t = mt.tensor([12 - 2 * r], dtype=mt.int64)
    dist.all_reduce(t, op=op)
    close(t, [want])
# float16: summed in float32 and rounded once
t = mt.tensor([0.1 * (r + 1)], dtype=mt.float16)
dist.all_reduce(t)
close(t, [np.float16(np.float32(np.float16(0.1)) + np.float32(np.float16(0.2)))])
assert t.dtype == mt.float16
# bool: SUM is or, MIN is and
t = mt.tensor([r == 0, False])
dist.all_reduce(t)
close(t, [True, False])
t = mt.tensor([r == 0, True])
dist.all_reduce(t, op=ReduceOp.MIN)
close(t, [False, True])
# +-inf and NaN travel as they are: inf + (-inf) is NaN, inf + 1 is inf
t = mt.tensor([np.inf if r == 0 else -np.inf, np.inf if r == 0 else 1.0, np.nan if r else 0.0])
dist.all_reduce(t)
assert np.isnan(t.numpy()[0]) and t.numpy()[1] == np.inf and np.isnan(t.numpy()[2])
# a non-contiguous view: the result is written through to its base, the other columns untouched
base = mt.zeros(2, 4, dtype=mt.float64) + r + 1  # (2, 4)
view = base[:, ::2]  # (2, 2)
dist.all_reduce(view)
close(base, [[3, r + 1, 3, r + 1]] * 2)  # columns 0, 2: 1 + 2; columns 1, 3: this rank's own
# async_op returns a handle
t = mt.tensor([1.0 + r])
work = dist.all_reduce(t, async_op=True)
assert work.wait() is True and work.is_completed() and work.get_future().value()[0] is t
close(t, [3.0])
expect_error(RuntimeError, "AVG needs a floating-point", dist.all_reduce, mt.tensor([1]), ReduceOp.AVG)
expect_error(TypeError, "must be a Tensor", dist.all_reduce, np.ones(2))
expect_error(ValueError, "must be a torch.distributed.ReduceOp", dist.all_reduce, mt.ones(2), "sum")

# broadcast from rank 1
t = mt.tensor([7.0, 8.0]) if r == 1 else mt.zeros(2)
dist.broadcast(t, src=1)
close(t, [7.0, 8.0])
expect_error(ValueError, "src must be a rank in [0, 2)", dist.broadcast, t, 5)

# reduce into rank 0: the others keep their tensor
t = mt.tensor([1.0 + r])
dist.reduce(t, dst=0)
close(t, [3.0] if r == 0 else [2.0])

# all_gather, all_gather_into_tensor (concatenated and stacked), reduce_scatter_tensor
out = [mt.zeros(2) for _ in range(W)]
dist.all_gather(out, mt.full((2,), float(r)))
close(out[0], [0, 0]), close(out[1], [1, 1])
expect_error(ValueError, "one per rank", dist.all_gather, [mt.zeros(2)], mt.zeros(2))
expect_error(ValueError, "must match", dist.all_gather, [mt.zeros(3), mt.zeros(3)], mt.zeros(2))
flat = mt.zeros(4)
dist.all_gather_into_tensor(flat, mt.full((2,), float(r)))
close(flat, [0, 0, 1, 1])
stacked = mt.zeros(2, 2)
dist.all_gather_into_tensor(stacked, mt.full((2,), float(r)))
close(stacked, [[0, 0], [1, 1]])
expect_error(ValueError, "world_size (2) times", dist.all_gather_into_tensor, mt.zeros(3), mt.zeros(2))
piece = mt.zeros(2)
dist.reduce_scatter_tensor(piece, mt.arange(4, dtype=mt.float32) + 10 * r)  # sum: [10, 12, 14, 16]
close(piece, [10, 12] if r == 0 else [14, 16])
piece = mt.zeros(2)
dist.reduce_scatter_tensor(piece, mt.arange(4, dtype=mt.float32) + 10 * r, op=ReduceOp.AVG)
close(piece, [5, 6] if r == 0 else [7, 8])

# gather to rank 0, scatter from rank 0
gl = [mt.zeros(1) for _ in range(W)] if r == 0 else None
dist.gather(mt.tensor([10.0 + r]), gl, dst=0)
if r == 0:
    close(gl[0], [10.0]), close(gl[1], [11.0])
else:
    expect_error(ValueError, "must NOT be specified", dist.gather, mt.zeros(1), [mt.zeros(1)] * 2, 0)
    dist.gather(mt.zeros(1), None, dst=0)  # pairs with rank 0's second gather below
if r == 0:
    dist.gather(mt.zeros(1), [mt.zeros(1), mt.zeros(1)], dst=0)
t = mt.zeros(1)
dist.scatter(t, [mt.tensor([5.0]), mt.tensor([6.0])] if r == 0 else None, src=0)
close(t, [5.0 + r])

# objects
objs = [{"k": [1, 2]}, "s"] if r == 0 else [None, None]
dist.broadcast_object_list(objs, src=0)
assert objs == [{"k": [1, 2]}, "s"]
got = [None] * W
dist.all_gather_object(got, ("r", r))
assert got == [("r", 0), ("r", 1)]
expect_error(ValueError, "world_size (2) items", dist.all_gather_object, [None], 1)

# point to point
if r == 0:
    dist.send(mt.tensor([42.0]), dst=1)
else:
    t = mt.zeros(1)
    assert dist.recv(t, src=0) == 0
    close(t, [42.0])

# a property over 80 random cases (shapes incl. 0-d, dtypes, ops, transposed views): all_reduce equals NumPy's
# reduction of what every rank holds (gathered with all_gather_object); the same cases on every rank
cases = np.random.default_rng(123)
values = np.random.default_rng(1000 + r)  # this rank's own values
reducers = {ReduceOp.SUM: np.sum, ReduceOp.PRODUCT: np.prod, ReduceOp.MIN: np.min, ReduceOp.MAX: np.max,
            ReduceOp.AVG: np.mean}
for _ in range(80):
    shape = tuple(int(n) for n in cases.integers(1, 5, cases.integers(0, 4)))
    dtype = str(cases.choice(["float64", "float32", "int64", "int32"]))
    op = list(reducers)[cases.integers(len(reducers))]
    if op == ReduceOp.AVG and dtype.startswith("int"):
        op = ReduceOp.SUM
    view = len(shape) >= 2 and cases.random() < 0.5
    raw = values.standard_normal(shape) * 3 if dtype.startswith("float") else values.integers(-5, 6, shape)
    t = mt.tensor(np.asarray(raw, dtype=dtype))  # an array: mt.tensor(np.float64(x)) is float32 (PyTorch: float64)
    if view:
        t = t.transpose(0, 1)  # non-contiguous
    everyone = [None] * W
    dist.all_gather_object(everyone, t.numpy())
    want = reducers[op](np.stack(everyone), axis=0).astype(dtype)
    dist.all_reduce(t, op=op)
    assert str(t.dtype) == dtype and tuple(t.shape) == want.shape, (t.dtype, t.shape, want.shape, dtype, shape)
    np.testing.assert_allclose(t.numpy(), want, rtol={"float64": 1e-15, "float32": 1e-6}.get(dtype, 0), atol=0)

dist.barrier()
dist.barrier(async_op=True).wait()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"COLLECTIVES OK rank {r}", flush=True)
