"""The collectives of ``torch.distributed`` on MPI's non-blocking operations (``Iallreduce``, ...).

Each one checks its arguments on this rank (Tensors, shapes, dtypes, ranks in range), posts the MPI
operation on contiguous arrays, and returns a :class:`~.process_group.Work` whose ``wait()`` copies
the result into the output tensors (in place, marking their version); without ``async_op`` it waits
before returning None, as PyTorch. The arguments must match across ranks (the same shapes and
dtypes, in the same order), as MPI and PyTorch require: a mismatch there is not detected.

float16 and bfloat16 are reduced in float32 and rounded back once; bool reduces as logical
or (SUM, MAX, BOR) or and (PRODUCT, MIN, BAND). ``AVG`` is the SUM divided by the world size (floating
dtypes only). GPU (CuPy) arrays go through NCCL when the group's backend is "nccl" (:mod:`.nccl`).
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module
from ..tensor import Tensor
from ._mpi import load_mpi
from .process_group import ReduceOp, Work, check_group

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor",
           "gather", "scatter", "barrier", "monitored_barrier", "send", "recv", "isend", "irecv"]

_WIDEN = {np.dtype(np.float16): np.float32}


def _check_tensor(t, what: str, pg=None) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what} must be a Tensor, got {type(t).__name__}")
    if pg is not None and pg.nccl is None and get_array_module(t.array) is not np:
        raise RuntimeError(f"{what} is on {t.device}, but the process group's backend {pg.backend!r} runs on MPI "
                           "with CPU tensors: move it to the CPU, or init_process_group('nccl') for GPU tensors")


def _check_rank(value, pg, what: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not 0 <= value < pg.size():
        raise ValueError(f"{what} must be a rank in [0, {pg.size()}), got {value!r}")
    return int(value)


def _op(op, dtype):
    """``(MPI.Op, kind)``: the MPI operation for ``op`` on ``dtype``; ``kind`` says how to post-process."""
    MPI = load_mpi()
    try:
        op = ReduceOp.RedOpType(op)
    except ValueError:
        raise ValueError(f"op must be a torch.distributed.ReduceOp, got {op!r}") from None
    if dtype == np.bool_:
        if op in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.BOR):
            return MPI.LOR, "plain"
        if op in (ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.BAND):
            return MPI.LAND, "plain"
    table = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
             ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}
    if op not in table:
        raise RuntimeError(f"ReduceOp.{op.name} is not supported by minitorch_ln.distributed (use SUM, AVG, PRODUCT, "
                           "MIN, MAX, BAND, BOR or BXOR)")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and dtype.kind not in "iu":
        raise RuntimeError(f"ReduceOp.{op.name} needs an integer or bool tensor, got {dtype}")
    if op == ReduceOp.AVG:
        if dtype.kind not in "fc" and str(dtype) != "bfloat16":
            raise RuntimeError(f"ReduceOp.AVG needs a floating-point tensor, got {dtype} (use SUM and divide)")
        return table[op], "avg"
    if op in (ReduceOp.MIN, ReduceOp.MAX) and dtype.kind == "c":
        raise RuntimeError(f"ReduceOp.{op.name} is not defined for complex tensors ({dtype})")
    return table[op], "plain"


def _send_array(t: Tensor):
    """A contiguous array of ``t``'s values in a dtype MPI reduces (float16/bfloat16 widened to float32)."""
    a = t.array
    xp = get_array_module(a)
    if a.dtype in _WIDEN or str(a.dtype) == "bfloat16":
        return xp.ascontiguousarray(a, dtype=np.float32)
    return xp.ascontiguousarray(a)


def _write(t: Tensor, values) -> None:
    """Copy ``values`` into ``t`` in place (through views too) and mark the change."""
    t.array[...] = values.reshape(t.array.shape).astype(t.array.dtype, copy=False)
    t._bump_version()


def _done(work: Work, async_op: bool):
    if async_op:
        return work
    work.wait()
    return None


def _use_nccl(pg, t: Tensor) -> bool:
    return pg.nccl is not None and get_array_module(t.array) is not np


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` over all ranks with ``op``, in place on every rank (any shape and dtype)."""
    pg = check_group(group)
    _check_tensor(tensor, "all_reduce: tensor", pg)
    mpi_op, kind = _op(op, tensor.array.dtype)
    if _use_nccl(pg, tensor):
        from .nccl import nccl_all_reduce  # noqa: PLC0415

        return _done(nccl_all_reduce(pg, tensor, op, _write), async_op)
    send = _send_array(tensor)
    recv = np.empty_like(send)
    req = pg.comm.Iallreduce(send, recv, op=mpi_op)

    def finish():
        _write(tensor, recv / pg.size() if kind == "avg" else recv)
    return _done(Work([req], finish, [tensor]), async_op)


def broadcast(tensor, src: int = 0, group=None, async_op: bool = False, group_src=None):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank."""
    pg = check_group(group)
    _check_tensor(tensor, "broadcast: tensor", pg)
    src = _check_rank(src if group_src is None else group_src, pg, "broadcast: src")
    if _use_nccl(pg, tensor):
        from .nccl import nccl_broadcast  # noqa: PLC0415

        return _done(nccl_broadcast(pg, tensor, src, _write), async_op)
    buf = np.ascontiguousarray(tensor.array)
    req = pg.comm.Ibcast(buf, root=src)
    return _done(Work([req], lambda: _write(tensor, buf) if pg.rank() != src else None, [tensor]), async_op)


def reduce(tensor, dst: int = 0, op=ReduceOp.SUM, group=None, async_op: bool = False, group_dst=None):
    """Reduce ``tensor`` over all ranks into rank ``dst``'s ``tensor`` (the others' are left as they are)."""
    pg = check_group(group)
    _check_tensor(tensor, "reduce: tensor", pg)
    dst = _check_rank(dst if group_dst is None else group_dst, pg, "reduce: dst")
    mpi_op, kind = _op(op, tensor.array.dtype)
    send = _send_array(tensor)
    recv = np.empty_like(send) if pg.rank() == dst else None
    req = pg.comm.Ireduce(send, recv, op=mpi_op, root=dst)

    def finish():
        if recv is not None:
            _write(tensor, recv / pg.size() if kind == "avg" else recv)
    return _done(Work([req], finish, [tensor]), async_op)


def _check_list(tensors, like: Tensor, n: int, what: str) -> None:
    if not isinstance(tensors, (list, tuple)) or len(tensors) != n:
        got = f"{len(tensors)} tensors" if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise ValueError(f"{what} must be a list of {n} tensors (one per rank), got {got}")
    for i, t in enumerate(tensors):
        _check_tensor(t, f"{what}[{i}]")
        if tuple(t.shape) != tuple(like.shape) or t.dtype != like.dtype:
            raise ValueError(f"{what}[{i}] has shape {tuple(t.shape)} and dtype {t.dtype}, but the tensor has "
                             f"shape {tuple(like.shape)} and dtype {like.dtype}: they must match")


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """``tensor_list[r]`` becomes rank r's ``tensor``, on every rank."""
    pg = check_group(group)
    _check_tensor(tensor, "all_gather: tensor", pg)
    _check_list(tensor_list, tensor, pg.size(), "all_gather: tensor_list")
    send = np.ascontiguousarray(tensor.array)
    recv = np.empty((pg.size(),) + send.shape, send.dtype)  # (W, *shape)
    req = pg.comm.Iallgather(send, recv)

    def finish():
        for r, t in enumerate(tensor_list):
            _write(t, recv[r])
    return _done(Work([req], finish, list(tensor_list)), async_op)


def _check_sizes(big, small, n: int, what: str) -> None:
    if big.numel() != n * small.numel() or big.dtype != small.dtype:
        raise ValueError(f"{what}: the larger tensor must hold world_size ({n}) times the elements of the smaller "
                         f"one, in the same dtype; got {tuple(big.shape)} {big.dtype} and {tuple(small.shape)} "
                         f"{small.dtype}")


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Rank r's ``input_tensor`` fills the r-th slice of ``output_tensor`` (stacked or concatenated on dim 0)."""
    pg = check_group(group)
    _check_tensor(output_tensor, "all_gather_into_tensor: output_tensor", pg)
    _check_tensor(input_tensor, "all_gather_into_tensor: input_tensor", pg)
    _check_sizes(output_tensor, input_tensor, pg.size(), "all_gather_into_tensor")
    send = np.ascontiguousarray(input_tensor.array)
    recv = np.empty((pg.size(),) + send.shape, send.dtype)  # (W, *shape)
    req = pg.comm.Iallgather(send, recv)
    return _done(Work([req], lambda: _write(output_tensor, recv), [output_tensor]), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):  # noqa: A002
    """Reduce ``input`` over ranks; rank r keeps the r-th of its ``world_size`` equal slices in ``output``."""
    pg = check_group(group)
    _check_tensor(output, "reduce_scatter_tensor: output", pg)
    _check_tensor(input, "reduce_scatter_tensor: input", pg)
    _check_sizes(input, output, pg.size(), "reduce_scatter_tensor")
    mpi_op, kind = _op(op, input.array.dtype)
    send = _send_array(input)
    recv = np.empty(output.numel(), send.dtype)  # (N,)
    req = pg.comm.Ireduce_scatter_block(send, recv, op=mpi_op)

    def finish():
        _write(output, recv / pg.size() if kind == "avg" else recv)
    return _done(Work([req], finish, [output]), async_op)


def gather(tensor, gather_list=None, dst: int = 0, group=None, async_op: bool = False, group_dst=None):
    """Rank ``dst``'s ``gather_list[r]`` becomes rank r's ``tensor``; other ranks pass no list."""
    pg = check_group(group)
    _check_tensor(tensor, "gather: tensor", pg)
    dst = _check_rank(dst if group_dst is None else group_dst, pg, "gather: dst")
    if pg.rank() == dst:
        _check_list(gather_list, tensor, pg.size(), "gather: gather_list")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    send = np.ascontiguousarray(tensor.array)
    recv = np.empty((pg.size(),) + send.shape, send.dtype) if pg.rank() == dst else None
    req = pg.comm.Igather(send, recv, root=dst)

    def finish():
        if recv is not None:
            for r, t in enumerate(gather_list):
                _write(t, recv[r])
    return _done(Work([req], finish, list(gather_list or [])), async_op)


def scatter(tensor, scatter_list=None, src: int = 0, group=None, async_op: bool = False, group_src=None):
    """Rank r's ``tensor`` becomes rank ``src``'s ``scatter_list[r]``; other ranks pass no list."""
    pg = check_group(group)
    _check_tensor(tensor, "scatter: tensor", pg)
    src = _check_rank(src if group_src is None else group_src, pg, "scatter: src")
    if pg.rank() == src:
        _check_list(scatter_list, tensor, pg.size(), "scatter: scatter_list")
        send = np.stack([np.asarray(t.array) for t in scatter_list])  # (W, *shape)
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    else:
        send = None
    recv = np.empty(tensor.shape, tensor.array.dtype)
    req = pg.comm.Iscatter(send, recv, root=src)
    return _done(Work([req], lambda: _write(tensor, recv), [tensor]), async_op)


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Wait until every rank has reached it."""
    pg = check_group(group)
    return _done(Work([pg.comm.Ibarrier()]), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False):
    """``barrier`` (a rank that fails aborts the job, so no rank waits for a dead one: see :mod:`.faults`)."""
    barrier(group)


def isend(tensor, dst: int, group=None, tag: int = 0) -> Work:
    """Send ``tensor`` to rank ``dst`` without waiting; the handle's ``wait()`` waits for it."""
    pg = check_group(group)
    _check_tensor(tensor, "isend: tensor", pg)
    buf = np.ascontiguousarray(tensor.array)
    return Work([pg.comm.Isend(buf, dest=_check_rank(dst, pg, "isend: dst"), tag=tag)], None, [tensor])


def irecv(tensor, src=None, group=None, tag: int = 0) -> Work:
    """Receive into ``tensor`` from rank ``src`` (None: any rank) without waiting."""
    pg = check_group(group)
    _check_tensor(tensor, "irecv: tensor", pg)
    MPI = load_mpi()
    source = MPI.ANY_SOURCE if src is None else _check_rank(src, pg, "irecv: src")
    buf = np.empty(tensor.shape, tensor.array.dtype)
    return Work([pg.comm.Irecv(buf, source=source, tag=tag)], lambda: _write(tensor, buf), [tensor])


def send(tensor, dst: int, group=None, tag: int = 0) -> None:
    isend(tensor, dst, group, tag).wait()


def recv(tensor, src=None, group=None, tag: int = 0) -> int:
    """Receive into ``tensor``; returns the sender's rank."""
    pg = check_group(group)
    _check_tensor(tensor, "recv: tensor", pg)
    MPI = load_mpi()
    status = MPI.Status()
    buf = np.empty(tensor.shape, tensor.array.dtype)
    source = MPI.ANY_SOURCE if src is None else _check_rank(src, pg, "recv: src")
    pg.comm.Recv(buf, source=source, tag=tag, status=status)
    _write(tensor, buf)
    return status.Get_source()
