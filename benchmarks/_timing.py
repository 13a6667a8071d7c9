"""Timing shared by the benchmark scripts: two functions timed in alternation."""

from __future__ import annotations

import time

import numpy as np


def time_pair(ours, theirs, repeat, clock=time.perf_counter):
    """Best and median seconds of ``ours`` and ``theirs``, timed in alternation (repetition i of one
    right after repetition i of the other, so that a busy machine slows both alike), after one
    warm-up call each (Numba compiles on first use)."""
    ours(), theirs()
    t_ours, t_theirs = [], []
    for _ in range(repeat):
        for fn, out in ((ours, t_ours), (theirs, t_theirs)):
            t0 = clock()
            fn()
            out.append(clock() - t0)
    return min(t_ours), float(np.median(t_ours)), min(t_theirs), float(np.median(t_theirs))
