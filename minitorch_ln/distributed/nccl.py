"""The ``"nccl"`` backend: collectives on GPU (CuPy) arrays through ``cupy.cuda.nccl``.

MPI starts the ranks and carries NCCL's unique id from rank 0 to the others; each rank uses the GPU
``LOCAL_RANK`` (or ``device_id``) and one NCCL communicator over all ranks. all_reduce and broadcast
run on NCCL, on the current CuPy stream (stream-ordered, as PyTorch's); the other collectives of a
GPU tensor raise, naming the op. NOT TESTED: the machine this was written on has no GPU; the CPU
path (MPI) is the tested one. Needs CuPy built with NCCL (``pip install cupy-cuda12x`` and
``python -m cupyx.tools.install_library --library nccl``).
"""

from __future__ import annotations

import os

import numpy as np

from .work import ReduceOp, Work

__all__ = ["nccl_available", "make_communicator", "nccl_all_reduce", "nccl_broadcast"]


def _nccl():
    try:
        from cupy.cuda import nccl  # noqa: PLC0415 - optional: CuPy with NCCL
    except Exception as exc:  # noqa: BLE001 - CuPy missing, or built without NCCL
        raise RuntimeError(f"backend='nccl' needs CuPy with NCCL ({exc}); install cupy-cuda12x and its NCCL "
                           "library, or use backend='gloo' (MPI, CPU tensors)") from exc
    if not getattr(nccl, "available", True):
        raise RuntimeError("backend='nccl': this CuPy has no NCCL; use backend='gloo' (MPI, CPU tensors)")
    return nccl


def nccl_available() -> bool:
    try:
        _nccl()
    except RuntimeError:
        return False
    return True


def make_communicator(comm, device_id=None):
    """One NCCL communicator over ``comm``'s ranks, on GPU ``device_id`` (default ``LOCAL_RANK``)."""
    nccl = _nccl()
    import cupy  # noqa: PLC0415

    index = getattr(device_id, "index", device_id)
    if index is None:
        index = int(os.environ.get("LOCAL_RANK", os.environ.get("MPI_LOCALRANKID", "0")))
    cupy.cuda.Device(index).use()
    uid = nccl.get_unique_id() if comm.Get_rank() == 0 else None
    uid = comm.bcast(uid, root=0)
    return nccl.NcclCommunicator(comm.Get_size(), uid, comm.Get_rank())


def _dtype(nccl, dtype):
    table = {np.dtype(np.float16): nccl.NCCL_FLOAT16, np.dtype(np.float32): nccl.NCCL_FLOAT32,
             np.dtype(np.float64): nccl.NCCL_FLOAT64, np.dtype(np.int32): nccl.NCCL_INT32,
             np.dtype(np.int64): nccl.NCCL_INT64, np.dtype(np.uint8): nccl.NCCL_UINT8,
             np.dtype(np.int8): nccl.NCCL_INT8}
    if np.dtype(dtype) not in table:
        raise RuntimeError(f"backend='nccl': dtype {dtype} is not supported (float16/32/64, int8/32/64, uint8)")
    return table[np.dtype(dtype)]


def _op(nccl, op):
    table = {ReduceOp.SUM: nccl.NCCL_SUM, ReduceOp.PRODUCT: nccl.NCCL_PROD, ReduceOp.MIN: nccl.NCCL_MIN,
             ReduceOp.MAX: nccl.NCCL_MAX, ReduceOp.AVG: getattr(nccl, "NCCL_AVG", None)}
    if table.get(ReduceOp.RedOpType(op)) is None:
        raise RuntimeError(f"backend='nccl': ReduceOp {ReduceOp.RedOpType(op).name} is not supported here")
    return table[ReduceOp.RedOpType(op)]


def nccl_all_reduce(pg, tensor, op, write) -> Work:
    nccl = _nccl()
    import cupy  # noqa: PLC0415

    buf = cupy.ascontiguousarray(tensor.array)
    stream = cupy.cuda.get_current_stream().ptr
    pg.nccl.allReduce(buf.data.ptr, buf.data.ptr, buf.size, _dtype(nccl, buf.dtype), _op(nccl, op), stream)
    if buf is not tensor.array:
        write(tensor, buf)
    else:
        tensor._bump_version()
    return Work([], None, [tensor])


def nccl_broadcast(pg, tensor, src, write) -> Work:
    nccl = _nccl()
    import cupy  # noqa: PLC0415

    buf = cupy.ascontiguousarray(tensor.array)
    stream = cupy.cuda.get_current_stream().ptr
    pg.nccl.bcast(buf.data.ptr, buf.size, _dtype(nccl, buf.dtype), src, stream)
    if buf is not tensor.array:
        write(tensor, buf)
    else:
        tensor._bump_version()
    return Work([], None, [tensor])
