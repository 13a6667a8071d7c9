"""DistributedDataParallel's gradient reducer: buckets reduced while the backward is still running.

PyTorch's design (``torch/csrc/distributed/c10d/reducer.cpp``), in NumPy and MPI:

- at wrap, the parameters are put in buckets in the reverse order of ``module.parameters()`` (about
  the order the backward produces their gradients), one dtype per bucket, the first bucket capped
  at 1 MiB (so that the first reduction starts early) and the others at 25 MB (a ``bucket_cap_mb``
  given caps every bucket, the first one too, as PyTorch 2.13);
- each parameter gets a post-accumulate-grad hook (:mod:`minitorch_ln.autograd.post_accumulate`):
  when the engine has added its gradient into ``.grad``, the hook copies it into its bucket's flat
  buffer; when a bucket is full, it is divided by the world size and handed to MPI's non-blocking
  ``Iallreduce`` (SUM), buckets strictly in index order so every rank posts the same sequence;
- every hook also calls ``Test`` on the reductions in flight, which lets MPI move them on while
  the backward keeps computing (MPICH progresses only inside MPI calls); ``stats["hidden_bytes"]``
  counts the bytes whose reduction finished before the backward's end;
- the hook of the last parameter waits for all of them and copies the averages back into the
  ``.grad`` tensors (in place): the wait at the end of the backward.

``find_unused_parameters=True``: after the forward, the graph is walked from the outputs; the
parameters it does not reach count as ready at once (their slots are zeros), and a mask of which
parameters each rank used is reduced alongside, so a parameter no rank used keeps ``grad is None``.
Without it, a parameter that gets no gradient leaves the reduction unfinished, and the next forward
raises PyTorch's error saying so.
"""

from __future__ import annotations

import time

import numpy as np

from ..tensor import Tensor
from ._mpi import load_mpi

__all__ = ["Reducer", "DEFAULT_FIRST_BUCKET_BYTES", "DEFAULT_BUCKET_CAP_MB"]

DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024  # torch.distributed.constants: dist._DEFAULT_FIRST_BUCKET_BYTES
DEFAULT_BUCKET_CAP_MB = 25


def assign_buckets(params, cap_bytes: int, first_cap_bytes: int = DEFAULT_FIRST_BUCKET_BYTES) -> list:
    """``[[param index, ...], ...]``: reverse order, one dtype per bucket, the first capped at ``first_cap_bytes``."""
    buckets, open_by_dtype = [], {}
    for i in reversed(range(len(params))):
        a = params[i].array
        key = a.dtype
        b = open_by_dtype.get(key)
        if b is None:
            b = open_by_dtype[key] = {"idx": [], "bytes": 0, "cap": first_cap_bytes if not buckets else cap_bytes}
            buckets.append(b)
        b["idx"].append(i)
        b["bytes"] += a.nbytes
        if b["bytes"] >= b["cap"]:
            del open_by_dtype[key]
    return [b["idx"] for b in buckets]


class _Bucket:
    def __init__(self, params, idx):
        self.idx = idx
        self.offsets, n = [], 0
        for i in idx:
            self.offsets.append(n)
            n += params[i].array.size
        self.buffer = np.zeros(n, params[idx[0]].array.dtype)  # (N,)
        self.pending = len(idx)
        self.request = None
        self.done = False  # its reduction finished while the backward was still running


class Reducer:
    """The buckets, hooks and in-flight reductions of one DistributedDataParallel."""

    def __init__(self, params, pg, bucket_cap_mb=None, find_unused_parameters: bool = False):
        self.params, self.pg = params, pg
        cap = int((DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        first = DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None else cap  # PyTorch 2.13: a given cap caps all
        self.buckets = [_Bucket(params, idx) for idx in assign_buckets(params, cap, first)]
        self.where = {}  # param index -> (bucket, position in it)
        for b, bucket in enumerate(self.buckets):
            for pos, i in enumerate(bucket.idx):
                self.where[i] = (b, pos)
        self.find_unused_parameters = find_unused_parameters
        self.armed = False  # a backward is expected to reduce (set by the forward)
        self.started = False  # a hook of this iteration has run, and the reduction is not finished
        # per backward summed: the wait at its end; bytes reduced; bytes whose reduction finished during it
        self.stats = {"backwards": 0, "wait_s": 0.0, "reduce_bytes": 0, "hidden_bytes": 0}
        self._handles = [p.register_post_accumulate_grad_hook(self._hook(i)) for i, p in enumerate(params)]

    def _hook(self, i):
        def hook(param):
            if self.armed:
                self._mark_ready(i, param.grad)
        return hook

    # ------------------------------------------------------------------ per iteration
    def prepare_forward(self) -> None:
        if self.started:
            unready = [i for i in range(len(self.params)) if self._unready(i)]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This "
                "error indicates that your module has parameters that were not used in producing loss. You can "
                "enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` "
                "to `torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function "
                "outputs participate in calculating loss. Parameter indices which did not receive grad for rank "
                f"{self.pg.rank()}: {' '.join(map(str, unready))}")

    def _unready(self, i) -> bool:
        return not self._ready[i]

    def prepare_for_backward(self, outputs) -> None:
        """Arm the hooks for the next backward; with ``find_unused_parameters``, mark the unreached ones."""
        if self.armed and getattr(self, "_used", None) is not None:
            self._used_request.Wait()  # a forward without a backward: its mask reduction is still posted
        for bucket in self.buckets:
            bucket.pending, bucket.request, bucket.done = len(bucket.idx), None, False
        self._ready = [False] * len(self.params)
        self._next = 0
        self.armed, self.started = True, False
        self._used = None
        if self.find_unused_parameters:
            reached = _reached_leaves(outputs)
            used = np.array([id(p) in reached for p in self.params], np.uint8)  # (P,)
            self._used = np.empty_like(used)
            self._used_request = self.pg.comm.Iallreduce(used, self._used, op=load_mpi().MAX)
            for i in np.flatnonzero(used == 0):
                self._mark_ready(int(i), None)

    def _mark_ready(self, i: int, grad) -> None:
        if self._ready[i]:
            raise RuntimeError(f"DistributedDataParallel: parameter {i} got a gradient twice in one backward (a "
                               "reentrant backward, or a parameter shared without find_unused_parameters?)")
        self.started = True
        self._ready[i] = True
        b, pos = self.where[i]
        bucket = self.buckets[b]
        n = self.params[i].array.size
        view = bucket.buffer[bucket.offsets[pos]:bucket.offsets[pos] + n]  # (n,)
        if grad is None:
            view[...] = 0
        else:
            view[...] = grad.array.reshape(-1)
        bucket.pending -= 1
        self._launch_ready()
        for bk in self.buckets[:self._next]:  # Test lets MPI progress the reductions during the backward
            if not bk.done and bk.request.Test():
                bk.done = True
        if self._next == len(self.buckets) and all(self._ready):
            self._finalize()

    def _launch_ready(self) -> None:
        MPI = load_mpi()
        while self._next < len(self.buckets) and self.buckets[self._next].pending == 0:
            bucket = self.buckets[self._next]
            bucket.buffer /= self.pg.size()  # PyTorch divides before the SUM
            bucket.request = self.pg.comm.Iallreduce(MPI.IN_PLACE, bucket.buffer, op=MPI.SUM)
            self.stats["reduce_bytes"] += bucket.buffer.nbytes
            self._next += 1

    def _finalize(self) -> None:
        MPI = load_mpi()
        t0 = time.perf_counter()
        MPI.Request.Waitall([b.request for b in self.buckets])
        if self._used is not None:
            self._used_request.Wait()
        self.stats["wait_s"] += time.perf_counter() - t0
        self.stats["backwards"] += 1
        self.stats["hidden_bytes"] += sum(b.buffer.nbytes for b in self.buckets if b.done)
        for bucket in self.buckets:
            for pos, i in enumerate(bucket.idx):
                p = self.params[i]
                values = bucket.buffer[bucket.offsets[pos]:bucket.offsets[pos] + p.array.size].reshape(p.array.shape)
                if p.grad is not None:
                    p.grad.array[...] = values
                elif self._used is None or self._used[i]:
                    p.grad = Tensor(values.copy())
        self.armed = self.started = False

    def remove_hooks(self) -> None:
        for h in self._handles:
            h.remove()


def _reached_leaves(outputs) -> set:
    """The ids of the leaf tensors the autograd graph of ``outputs`` reaches (iterative walk)."""
    stack, seen, leaves = [], set(), set()
    for t in _tensors_in(outputs):
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
        elif t.requires_grad:
            leaves.add(id(t))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        leaf = getattr(node, "leaf", None)
        if leaf is not None:
            leaves.add(id(leaf))
        edges = node._edges
        for k in range(0, len(edges), 2):
            if edges[k] is not None:
                stack.append(edges[k])
    return leaves


def _tensors_in(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _tensors_in(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors_in(x)
