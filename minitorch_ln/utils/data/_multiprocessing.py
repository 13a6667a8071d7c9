"""The multi-process ``DataLoader`` iterator: hands out tasks round robin, puts results back in order.

Mirrors PyTorch's ``_MultiProcessingDataLoaderIter`` (without the pin-memory thread). Task ``k``
is ``(k, indices of batch k)``, sent to worker ``k mod num_workers`` (skipping workers whose
IterableDataset copy has ended); at most ``prefetch_factor`` tasks per worker are outstanding.
Results that arrive early wait in ``_task_info`` until their turn.

Shutdown (end of epoch, iterator garbage-collected, or interpreter exit through
``weakref.finalize``): set the done event, send each worker ``None``, join, terminate what is
left, close the queues.
"""

from __future__ import annotations

import itertools
import pickle
import queue
import time
import weakref

from ._worker import (
    MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, _IterableDatasetStopIteration, _ResumeIteration, _worker_loop,
)
from ._iterators import _BaseDataLoaderIter, _default_mp_context

__all__ = []

_JOIN_TIMEOUT = 2.0  # seconds a worker gets to exit by itself before it is terminated


class _WorkerPool:
    """The processes and queues of one iterator, kept apart from it so that a finalizer can shut them down."""

    def __init__(self, ctx, num_workers: int) -> None:
        self.result_queue = ctx.Queue()
        self.done_event = ctx.Event()
        self.index_queues = [ctx.Queue() for _ in range(num_workers)]
        for q in self.index_queues:
            q.cancel_join_thread()  # exiting never waits for tasks nobody will read
        self.workers = []
        self.is_shut = False

    def shutdown(self) -> None:
        if self.is_shut:
            return
        self.is_shut = True
        self.done_event.set()
        for q in self.index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):  # already closed
                pass
        for w in self.workers:
            w.join(timeout=_JOIN_TIMEOUT)
            if w.is_alive():
                w.terminate()
                w.join()
        for q in self.index_queues:
            q.close()
        self.result_queue.cancel_join_thread()
        self.result_queue.close()


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader) -> None:
        super().__init__(loader)
        self._prefetch_factor = max(1, loader.prefetch_factor)
        ctx = loader.multiprocessing_context or _default_mp_context()
        self._pool = pool = _WorkerPool(ctx, self._num_workers)
        # Workers first, the finalizer second: a failed start still shuts down those that started.
        self._finalizer = weakref.finalize(self, pool.shutdown)
        for worker_id in range(self._num_workers):
            w = ctx.Process(
                target=_worker_loop,
                args=(self._is_iterable, self._dataset, pool.index_queues[worker_id], pool.result_queue,
                      pool.done_event, self._auto_collation, self._collate_fn, self._drop_last, self._base_seed,
                      loader.worker_init_fn, worker_id, self._num_workers),
                daemon=True,  # never outlive the main process
            )
            w.start()
            pool.workers.append(w)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task index to send
        self._rcvd_idx = 0  # the next task index to return
        self._task_info = {}  # task -> (worker_id,) while outstanding, (worker_id, data) once early
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers  # False: its IterableDataset copy has ended
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: restart them, dropping what the last epoch left
            for q in self._pool.index_queues:
                q.put(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:  # every worker has ended: the index is not needed
            return
        self._pool.index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self):
        """The next ``(task index, data)`` from any worker; RuntimeError if a worker died or ``timeout`` passed."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = MP_STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            try:
                return pickle.loads(self._pool.result_queue.get(timeout=wait))
            except queue.Empty:
                pass
            dead = [w.pid for i, w in enumerate(self._pool.workers) if self._workers_status[i] and not w.is_alive()]
            if dead:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) exited unexpectedly")
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        while True:
            # Skip tasks given to workers whose IterableDataset ended: no result will come for them.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # it came early and waited
                return self._process_data(self._task_info.pop(self._rcvd_idx)[1])
            if self._pool.is_shut:
                raise StopIteration
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._is_iterable and isinstance(data, _IterableDatasetStopIteration):
                self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if idx in self._task_info:
                    self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            return self._process_data(data)

    def _process_data(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        self._workers_status[worker_id] = False
        if not self._persistent_workers:  # it will not be needed again: let it exit now
            self._pool.index_queues[worker_id].put(None)

    def _shutdown_workers(self) -> None:
        self._finalizer()  # runs pool.shutdown once, however many times it is called
