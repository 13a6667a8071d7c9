"""Threads for the CPU kernels: rows cut into fixed blocks, the blocks shared out over a small pool.

The compiled kernels (``cpu_layer_norm``, ``cpu_batch_norm``) release the GIL, and NumPy releases it
inside its loops, so a few Python threads really run on different cores. Two rules keep results
the same on any number of threads:

1. the rows are cut into blocks that depend only on the shape (:func:`rows_per_block`), never on
   the thread count; per-block partial sums (LayerNorm's ``dγ``/``dβ``) are added in block order;
2. each thread gets one contiguous run of whole blocks (:func:`row_runs`).

A kernel does the first run itself and hands the others to the pool (:func:`start` / :func:`join`),
so the row loop is called directly by the kernel function, with no plumbing in between.
"""

from __future__ import annotations

import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

__all__ = ["set_num_threads", "get_num_threads", "rows_per_block", "row_runs", "start", "join", "map_blocks"]

BLOCK_ELEMENTS = 1 << 16  # 65,536 values: 256 KB of float32, a block's passes stay in the L2 cache
# At least this many rows per block, even when fewer fit in BLOCK_ELEMENTS: the per-block partial
# sums of dweight/dbias, (blocks, D) each, then cost at most 1/16 of dx (at D = 100,000 a block of
# one row each would double the backward's memory).
MIN_BLOCK_ROWS = 16
# At least this many values per thread: handing a run to the pool and joining it costs about 20-40 µs
# (a futex wake-up on each side), as much as one thread's pass over ~100,000 values. A LayerNorm over
# (768, 128) float32 (one layer of nanoGPT's CPU recipe) took 271 µs forward+backward on two threads and
# 172 µs on one (issue 26). Which thread runs a block never changes the values (rule 1 above).
MIN_THREAD_ELEMENTS = 1 << 18  # 262,144 values: 1 MB of float32


def _default_threads() -> int:
    """``MINITORCH_LN_NUM_THREADS`` if it is a positive integer, else ``min(cpus, 4)``."""
    default = max(1, min(os.cpu_count() or 1, 4))
    env = os.environ.get("MINITORCH_LN_NUM_THREADS")
    if env is None:
        return default
    if env.strip().isdigit() and int(env) > 0:
        return int(env)
    warnings.warn(f"MINITORCH_LN_NUM_THREADS: expected a positive integer, got {env!r}; using {default} threads",
                  stacklevel=2)
    return default


_num_threads = _default_threads()
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forget_pool() -> None:
    # A forked child has none of the parent's threads: a pool inherited from it would never run
    # anything, so the child makes its own on first use.
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for the CPU kernels (1 turns threading off; default ``min(cpus, 4)``,
    or the environment variable ``MINITORCH_LN_NUM_THREADS``).

    Safe while other threads run kernels: they finish on the pool they started with, which is
    then dropped (its idle threads exit when it is garbage-collected).

    Raises:
        ValueError: ``n`` is not an int >= 1.
    """
    global _num_threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: expected an int >= 1, got {n!r}")
    with _pool_lock:
        _num_threads = n
        _forget_pool()


def get_num_threads() -> int:
    """The number of threads the CPU kernels use."""
    return _num_threads


def rows_per_block(n_rows: int, row_len: int) -> int:
    """Rows in each block: all of them for a small input, else about ``BLOCK_ELEMENTS`` values' worth
    (at least ``MIN_BLOCK_ROWS``)."""
    if n_rows * row_len <= BLOCK_ELEMENTS:
        return max(n_rows, 1)
    return max(MIN_BLOCK_ROWS, BLOCK_ELEMENTS // max(row_len, 1))


def row_runs(n_rows: int, row_len: int) -> list[tuple[int, int]]:
    """``(start, stop)`` row ranges, one per thread (at most ``get_num_threads()``, and at most one per
    ``MIN_THREAD_ELEMENTS`` values), each a run of whole blocks (the blocks depend only on the shape)."""
    step = rows_per_block(n_rows, row_len)
    n_blocks = max(1, -(-n_rows // step))
    n_runs = min(_num_threads, n_blocks, max(1, n_rows * row_len // max(MIN_THREAD_ELEMENTS, 1)))
    per = -(-n_blocks // n_runs) * step  # rows per run: whole blocks
    return [(i, min(i + per, n_rows)) for i in range(0, n_rows, per)] or [(0, 0)]


def start(kernel, args: tuple, n_rows: int, row_len: int):
    """Start ``kernel(*args, start, stop)`` on the pool for every run of rows but the first.

    Returns ``(futures, (start, stop))``: the caller runs the first run itself meanwhile, then
    calls :func:`join` on the futures.
    """
    first, *rest = row_runs(n_rows, row_len)
    return _submit(kernel, args, rest), first


def _submit(kernel, args: tuple, runs: list) -> list:
    if not runs:
        return []
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_num_threads, thread_name_prefix="minitorch_ln-kernels")
        pool = _pool  # this call's pool, even if set_num_threads drops it meanwhile
    return [pool.submit(kernel, *args, lo, hi) for lo, hi in runs]


def join(futures: list) -> None:
    """Wait for the runs :func:`start` began; an exception in one of them is raised here."""
    for f in futures:
        f.result()


def map_blocks(fn, n_rows: int, row_len: int) -> None:
    """``fn(rows)`` for every block ``rows`` (a slice) of ``n_rows`` rows, spread over the threads
    (for kernels written as whole-array NumPy passes over a block, e.g. GELU)."""
    step = rows_per_block(n_rows, row_len)

    def run(lo, hi):
        for i in range(lo, hi, step):
            fn(slice(i, min(i + step, hi)))

    others, (lo, hi) = start(run, (), n_rows, row_len)
    run(lo, hi)
    join(others)
