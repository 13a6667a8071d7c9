"""The CPU kernels' threads (``kernels/_threads.py``): fixed row blocks, runs per thread, the pool.

Results must be bitwise the same on any number of threads, survive ``set_num_threads`` from another
thread and a fork. Run with the compiled kernels (the ones that use the threads).
"""

import multiprocessing
import os
import threading

import numpy as np
import pytest

from minitorch_ln import kernels
from minitorch_ln.kernels import _threads as T

from test_kernels_layer_norm import _case

pytestmark = pytest.mark.usefixtures("cpu_kernels", "thread_any_size")


def test_row_runs_are_whole_blocks_one_per_thread():
    T.set_num_threads(3)
    try:
        # 1000 rows of 100 values: blocks of 655 rows (65,536 values), so two blocks on two of the threads
        assert T.row_runs(1000, 100) == [(0, 655), (655, 1000)]
        assert T.row_runs(10, 20) == [(0, 10)]          # a small input is one block, one run
        assert T.row_runs(0, 5) == [(0, 0)]             # no rows: one empty run
        # 100 blocks of 16 rows over 3 threads: 34 + 34 + 32 blocks
        assert T.row_runs(1600, 1 << 14) == [(0, 544), (544, 1088), (1088, 1600)]
    finally:
        T.set_num_threads(T._default_threads())


# ==================================================================================================
# Blocks and threads (CPU)
# ==================================================================================================


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(T, "BLOCK_ELEMENTS", 64)  # many blocks from a small array
    yield
    T.set_num_threads(T._default_threads())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_blocks_and_threads_change_nothing(dtype, small_blocks, rng):
    # float32/float64 run the compiled loops on the threads; float16 the NumPy kernels (no threads)
    x, w, b, dy = _case(rng, 50, 12, dtype)
    results = []
    for threads in (1, 2, 3):
        T.set_num_threads(threads)
        y, mean, rstd = kernels.layer_norm_fwd(x, w, b, 1e-5)
        results.append((y, mean, rstd, *kernels.layer_norm_bwd(dy, x, w, mean, rstd),
                        *kernels.rms_norm_fwd(x, w, 1e-5)))
    for other in results[1:]:  # bitwise: the same blocks, summed in the same order
        for a, c in zip(results[0], other):
            np.testing.assert_array_equal(a, c)
    T.BLOCK_ELEMENTS = 1 << 20  # one block: the same values up to rounding
    y1, _, _ = kernels.layer_norm_fwd(x, w, b, 1e-5)
    np.testing.assert_allclose(y1.astype(np.float64), results[0][0].astype(np.float64), rtol=1e-3 if dtype == np.float16 else 1e-6)


def test_blocks_keep_the_partial_sums_small_for_long_rows():
    # At least MIN_BLOCK_ROWS rows a block: dγ/dβ partial sums (blocks, D) stay <= 1/16 of dx.
    assert T.rows_per_block(500, 100_000) == T.MIN_BLOCK_ROWS == 16
    assert T.rows_per_block(4096, 768) == (1 << 16) // 768        # 85 rows: 256 KB of float32
    assert T.rows_per_block(10, 20) == 10                          # a small input is one block


def test_bad_thread_count_in_the_environment_warns(monkeypatch):
    for env, expected in (("3", 3), (" 2", 2), ("0", None), ("-2", None), ("abc", None), ("3.5", None)):
        monkeypatch.setenv("MINITORCH_LN_NUM_THREADS", env)
        if expected is None:
            with pytest.warns(UserWarning, match=f"MINITORCH_LN_NUM_THREADS: expected a positive integer, got {env!r}"):
                assert T._default_threads() == max(1, min(os.cpu_count() or 1, 4))
        else:
            assert T._default_threads() == expected


def test_set_num_threads_while_other_threads_run_kernels(rng):
    # Changing the thread count drops the pool; a kernel call running on it finishes there.
    x, w, b, dy = _case(rng, 2000, 64, np.float32)
    ref = kernels.layer_norm_fwd(x, w, b, 1e-5)[0]
    errors, stop = [], threading.Event()

    def worker():
        try:
            while not stop.is_set():
                np.testing.assert_array_equal(kernels.layer_norm_fwd(x, w, b, 1e-5)[0], ref)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for n in [2, 3, 1, 4, 2] * 4:
            T.set_num_threads(n)
    finally:
        stop.set()
        for t in threads:
            t.join()
        T.set_num_threads(T._default_threads())
    assert errors == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_kernels_on_threads_of_its_own(rng):
    # The parent's pool has threads; a forked child has none of them, and once hung on its first
    # large op waiting for them.
    x, w, b, _ = _case(rng, 2000, 64, np.float32)
    T.set_num_threads(2)
    try:
        ref = kernels.layer_norm_fwd(x, w, b, 1e-5)[0]      # the pool now exists
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(1) as pool:
            child = pool.apply_async(kernels.layer_norm_fwd, (x, w, b, 1e-5)).get(timeout=60)[0]
        np.testing.assert_array_equal(child, ref)
    finally:
        T.set_num_threads(T._default_threads())


def test_set_num_threads_rejects_bad_values():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="expected an int >= 1"):
            kernels.set_num_threads(bad)




def test_small_inputs_stay_on_one_thread(monkeypatch):
    # without the fixture's override: at most one run per MIN_THREAD_ELEMENTS values
    monkeypatch.setattr(T, "MIN_THREAD_ELEMENTS", 1 << 18)
    T.set_num_threads(4)
    try:
        assert T.row_runs(768, 128) == [(0, 768)]                # 98,304 values: one thread
        # 524,288 values: two runs of whole 512-row blocks (rows_per_block = 65,536 // 128)
        assert T.row_runs(4096, 128) == [(0, 2048), (2048, 4096)]
        assert len(T.row_runs(4096, 768)) == 4                   # 3.1 M values: every thread
    finally:
        T.set_num_threads(T._default_threads())
