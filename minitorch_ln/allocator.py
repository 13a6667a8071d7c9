"""glibc malloc settings for a training loop's working set (issue 26).

A training step allocates and frees the same large arrays every iteration: activations of a
``(B, L, D)`` batch, their gradients, the LayerNorm and attention temporaries. glibc serves every
request above ``M_MMAP_THRESHOLD`` (128 KiB at start, raised adaptively up to 32 MiB as mmapped
blocks are freed) with a fresh ``mmap`` and returns it with ``munmap`` on ``free``, so each such
array is page-faulted in, zeroed by the kernel, on *every* iteration. nanoGPT's CPU recipe through
``minitorch-ln run`` took about 7,800 page faults per iteration that way (``/usr/bin/time -v``).

On import this module, on glibc only, sets

- ``M_MMAP_THRESHOLD`` to 32 MiB (glibc's own adaptive ceiling, ``DEFAULT_MMAP_THRESHOLD_MAX`` on 64-bit):
  arrays below it come from the heap and are reused by the next iteration's request of the same size;
- ``M_TRIM_THRESHOLD`` to 256 MiB: the heap top is given back to the system only when that much is free
  at its end, not after each step (setting either value turns glibc's adaptive threshold off).

Peak resident memory is unchanged (the same arrays are live at the same time); the pages stay mapped
between iterations instead of being returned and faulted in again. The price: memory a program frees is
kept by the process rather than given back at once (allocating and freeing 240 MiB of 4 MiB arrays left
290 MiB resident, against 50 MiB with glibc's defaults), until 256 MiB lie free at the heap's top. The
setting is process-wide: other libraries in the process (PyTorch too) allocate under it. Set ``MINITORCH_LN_MALLOC_TUNING=0``
(or ``false``/``off``/``no``) before the first import to keep glibc's defaults. On musl, macOS and Windows
nothing is done. The arrays NumPy makes are the same either way: only where their memory comes from
changes. Reference: ``man 3 mallopt``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["MALLOC_TUNING_ENV", "MMAP_THRESHOLD", "TRIM_THRESHOLD", "glibc_version", "tune_malloc", "tuned"]

MALLOC_TUNING_ENV = "MINITORCH_LN_MALLOC_TUNING"
MMAP_THRESHOLD = 32 << 20  # bytes: requests below it are served from the heap
TRIM_THRESHOLD = 256 << 20  # bytes: free memory kept at the top of the heap before it is trimmed

# mallopt parameter numbers from glibc's <malloc.h>
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

#: whether :func:`tune_malloc` changed glibc's settings in this process
tuned = False


def glibc_version() -> str | None:
    """The running C library's glibc version (``"2.39"``), or ``None`` when it is not glibc."""
    try:
        name = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.39"; absent or None off glibc
    except (AttributeError, ValueError, OSError):
        return None
    if not name or not name.startswith("glibc "):
        return None
    return name.split()[1]


def _opted_out() -> bool:
    return os.environ.get(MALLOC_TUNING_ENV, "1").strip().lower() in ("0", "false", "off", "no")


def tune_malloc() -> bool:
    """Set glibc's mmap and trim thresholds (module docstring); returns whether they were set.

    Does nothing (returns ``False``) off glibc, when ``MINITORCH_LN_MALLOC_TUNING`` opts out, or when
    ``mallopt`` refuses a value. Safe to call more than once.
    """
    global tuned
    if tuned:
        return True
    if _opted_out() or glibc_version() is None:
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success, 0 on a value it refuses
    tuned = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return tuned


tune_malloc()
