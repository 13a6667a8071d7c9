"""``torch.nn.parallel.DistributedDataParallel`` on MPI: one model replica per rank, gradients averaged.

At wrap, rank 0's parameters and buffers are broadcast to every rank (``init_sync``). Each forward
in grad mode arms the :class:`~.reducer.Reducer`, whose per-parameter hooks reduce the gradients in
buckets while the backward runs; after ``loss.backward()`` every rank holds the same averaged
``.grad``, so identical optimizer steps keep the replicas identical. With ``broadcast_buffers``
(default) rank 0's buffers (BatchNorm's running statistics) are broadcast at each forward.
``no_sync()`` (or ``require_backward_grad_sync = False``, as nanoGPT's gradient accumulation sets)
lets gradients accumulate locally until the next synchronised backward. The wrapped model is
``ddp.module``; ``state_dict`` keys start with ``module.`` as PyTorch's.

The module must be on the CPU (the reducer runs on MPI; a GPU module raises, saying so).
``device_ids`` must then be None (PyTorch's ValueError otherwise); ``output_device``,
``gradient_as_bucket_view`` and ``static_graph`` are accepted and change nothing here (one device
per process; gradients are copied out of the buckets).
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import backend
from ..autograd.grad_mode import is_grad_enabled
from ..nn.module import Module
from ._mpi import load_mpi
from .process_group import check_group
from .reducer import Reducer

__all__ = ["DistributedDataParallel"]


def _broadcast_arrays(pg, tensors) -> None:
    """Broadcast rank 0's arrays of ``tensors`` to every rank, one flat message per dtype."""
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.array.dtype, []).append(t)
    for dtype, group in by_dtype.items():
        flat = np.concatenate([np.asarray(t.array).reshape(-1) for t in group]) if group else None  # (N,)
        pg.comm.Bcast(flat, root=0)
        if pg.rank() != 0:
            n = 0
            for t in group:
                t.array[...] = flat[n:n + t.array.size].reshape(t.array.shape)
                t._bump_version()
                n += t.array.size


class DistributedDataParallel(Module):
    """Wrap ``module`` for data-parallel training over the default process group.

    Raises TypeError when ``module`` is not a Module; RuntimeError when it has no parameter that
    requires grad (as PyTorch), when the process group is not initialised (ValueError), or, at a
    forward, when the previous backward left parameters unreduced (see ``find_unused_parameters``).
    """

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0, broadcast_buffers: bool = True,
                 init_sync: bool = True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False, **kwargs):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: module must be an nn.Module, got {type(module).__name__}")
        pg = check_group(process_group)
        params, seen = [], set()
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        if bucket_cap_mb is not None and not bucket_cap_mb > 0:
            raise ValueError(f"bucket_cap_mb must be > 0, got {bucket_cap_mb}")
        devices = {str(p.device) for p in params}
        if backend.CUDA_AS_CPU and devices == {"cpu"}:  # `run --cuda-as-cpu`: the script's GPU ids name the CPU
            device_ids = output_device = None
        if device_ids is not None and devices == {"cpu"}:  # PyTorch's check, message and type
            raise ValueError(f"DistributedDataParallel device_ids and output_device arguments only work with "
                             f"single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{list(device_ids)}, output_device {output_device}, and module parameters "
                             f"{{device(type='cpu')}}.")
        if devices != {"cpu"}:
            raise RuntimeError(f"DistributedDataParallel: the module's parameters are on {sorted(devices)}, but "
                               "minitorch_ln's gradient reducer runs on MPI with CPU tensors; move the model to the "
                               "CPU (the nccl backend's all_reduce and broadcast take GPU tensors, DDP does not)")
        self.module = module
        object.__setattr__(self, "process_group", pg)
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view, self.static_graph = gradient_as_bucket_view, static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        if init_sync and pg.size() > 1:
            _broadcast_arrays(pg, list(module.parameters()) + list(module.buffers()))
        self.reducer = Reducer(params, pg, bucket_cap_mb, find_unused_parameters)

    def forward(self, *inputs, **kwargs):
        sync = is_grad_enabled() and self.require_backward_grad_sync
        if sync:
            self.reducer.prepare_forward()
        if self.broadcast_buffers and self.require_forward_param_sync and self.process_group.size() > 1:
            buffers = [b for b in self.module.buffers() if b is not None]
            if buffers:
                _broadcast_arrays(self.process_group, buffers)
        out = self.module(*inputs, **kwargs)
        if sync:
            self.reducer.prepare_for_backward(out)
        elif is_grad_enabled():  # a no_sync() forward: its backward accumulates locally
            self.reducer.armed = False
        return out  # (a forward under no_grad leaves a pending synchronised backward armed)

    @contextlib.contextmanager
    def no_sync(self):
        """Inside, backward accumulates gradients locally; the first synchronised backward after reduces them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def extra_repr(self) -> str:
        return f"world_size={self.process_group.size()}, buckets={len(self.reducer.buckets)}"


def comm_hidden_fraction(ddp: DistributedDataParallel, blocking_s: float) -> float:
    """1 - (time waited at the end of each backward) / (time the same reductions take blocking)."""
    stats = ddp.reducer.stats
    return 1.0 - (stats["wait_s"] / max(stats["backwards"], 1)) / blocking_s


def time_blocking_reduction(ddp: DistributedDataParallel, repeats: int = 5) -> float:
    """Seconds one blocking ``Allreduce`` of all of ``ddp``'s buckets takes (the best of ``repeats``)."""
    import time  # noqa: PLC0415

    MPI = load_mpi()
    best = float("inf")
    for _ in range(repeats):
        ddp.process_group.comm.Barrier()
        t0 = time.perf_counter()
        for b in ddp.reducer.buckets:
            ddp.process_group.comm.Allreduce(MPI.IN_PLACE, b.buffer.copy(), op=MPI.SUM)
        best = min(best, time.perf_counter() - t0)
    return best
