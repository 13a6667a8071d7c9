"""What runs inside each of ``DataLoader``'s worker processes, and what a worker can learn about itself.

Mirrors ``torch.utils.data._utils.worker``. A worker reads ``(task index, sampler index)`` pairs
from its own index queue, fetches and collates the batch, and puts ``(task index, batch)`` on the
result queue shared by all workers; the main process puts the batches back in order. Results
are pickled here, in the worker, so that a batch that cannot be pickled comes back as an error
naming the worker instead of being lost in the queue's feeder thread.
"""

from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler

import numpy as np

from ... import backend
from ._fetch import create_fetcher

__all__ = ["WorkerInfo", "get_worker_info"]

MP_STATUS_CHECK_INTERVAL = 0.5  # seconds between checks that the other side is still alive

_worker_info = None  # set in each worker process; None in the main process


class WorkerInfo:
    """The current worker's ``id`` (0 .. num_workers - 1), ``num_workers``, ``seed`` and ``dataset`` (its own copy).

    Read-only: assigning an attribute raises RuntimeError (as PyTorch).
    """

    __initialized = False

    def __init__(self, **kwargs) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val) -> None:
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        super().__setattr__(key, val)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({', '.join(f'{k}={getattr(self, k)}' for k in self.__keys)})"


def get_worker_info():
    """The :class:`WorkerInfo` of the current ``DataLoader`` worker process, or ``None`` in the main process.

    Use it in an ``IterableDataset.__iter__`` or a ``worker_init_fn`` to give each worker its
    own share of the data, or its ``seed`` to seed other libraries.
    """
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """Sent by a worker whose copy of an IterableDataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back once they have restarted."""


class _KeyErrorMessage(str):
    def __repr__(self) -> str:  # KeyError shows repr(message): keep the traceback readable
        return self


class ExceptionWrapper:
    """An exception plus its formatted traceback, to re-raise in another process."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise ``exc_type("Caught <Type> in DataLoader worker process <id>.\\nOriginal Traceback ...")``."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type that takes other arguments
            raise RuntimeError(msg) from None
        raise exception


def _generate_state(base_seed: int, worker_id: int) -> list:
    """Four 32-bit words to seed NumPy's legacy global RNG in a worker, distinct per worker.

    PyTorch's ``_generate_state``, itself NumPy's SeedSequence hashing, so that ``np.random`` in
    workers draws the same numbers as under PyTorch for the same base seed.
    """
    INIT_A, MULT_A, INIT_B, MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    MIX_MULT_L, MIX_MULT_R, XSHIFT, MASK32 = 0xCA01F9DD, 0x4973F715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    hash_const_a = INIT_A

    def hash_(value):
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & MASK32
        hash_const_a = (hash_const_a * MULT_A) & MASK32
        value = (value * hash_const_a) & MASK32
        return (value ^ (value >> XSHIFT)) & MASK32

    def mix(x, y):
        result = ((MIX_MULT_L * x) & MASK32) - ((MIX_MULT_R * y) & MASK32)
        result &= MASK32
        return (result ^ (result >> XSHIFT)) & MASK32

    pool = [hash_(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_const_b, state = INIT_B, []
    for value in pool:
        value = (value ^ hash_const_b) & MASK32
        hash_const_b = (hash_const_b * MULT_B) & MASK32
        value = (value * hash_const_b) & MASK32
        state.append((value ^ (value >> XSHIFT)) & MASK32)
    return state


def _seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed Python's ``random``, minitorch_ln's generators and NumPy's global RNG as PyTorch seeds its workers."""
    seed = base_seed + worker_id
    random.seed(seed)
    backend.manual_seed(seed % 2**64)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


def _worker_loop(is_iterable, dataset, index_queue, result_queue, done_event, auto_collation, collate_fn,
                 drop_last, base_seed, init_fn, worker_id, num_workers) -> None:
    """The body of worker ``worker_id``: fetch what the index queue asks for until told ``None``."""
    global _worker_info
    where = f"in DataLoader worker process {worker_id}"

    def put(idx, data):
        try:
            payload = bytes(ForkingPickler.dumps((idx, data)))
        except Exception:  # e.g. a batch holding a lambda or an open file
            payload = bytes(ForkingPickler.dumps((idx, ExceptionWrapper(where=where))))
        result_queue.put(payload)

    def new_fetcher():
        return create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)

    parent_pid = os.getppid()  # the main process, or the fork server that started this worker
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception, fetcher = None, None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = new_fetcher()
        except Exception:
            init_exception = ExceptionWrapper(where=where)  # reported with the first task
        iteration_end = False
        while os.getppid() == parent_pid:  # orphaned (the parent died): exit
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                iteration_end = False
                try:
                    fetcher = new_fetcher()
                except Exception:
                    init_exception = ExceptionWrapper(where=where)
                put(r, None)
                continue
            if r is None:  # shut down
                break
            if done_event.is_set() or iteration_end:
                continue  # drain what is left of the queue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and is_iterable:
                        data, iteration_end = _IterableDatasetStopIteration(worker_id), True
                    else:
                        data = ExceptionWrapper(where=where)
            put(idx, data)
            del data, idx, index, r  # do not hold a batch while waiting for the next task
    except KeyboardInterrupt:  # the main process sees it too and shuts the workers down
        pass
    if done_event.is_set():
        result_queue.cancel_join_thread()  # exit without waiting for the main process to read
        result_queue.close()
