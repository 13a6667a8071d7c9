"""glibc malloc tuning (minitorch_ln/allocator.py): checked in fresh interpreters, where the settings apply.

glibc's ``mallinfo2()`` reports ``hblkhd``, the bytes currently held in mmapped blocks. With glibc's defaults a
freshly started process serves a 4 MiB array by ``mmap`` (the threshold starts at 128 KiB), so ``hblkhd`` grows
by at least 4 MiB while it is alive; with minitorch_ln's threshold of 32 MiB it comes from the heap and
``hblkhd`` does not grow. A 64 MiB array is above both thresholds and is mmapped either way.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from minitorch_ln import allocator

pytestmark = pytest.mark.skipif(allocator.glibc_version() is None, reason="malloc tuning applies to glibc only")

PROBE = r"""
import ctypes, sys
import numpy as np
class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2
import minitorch_ln
from minitorch_ln import allocator
def mmapped_growth(nbytes):
    before = libc.mallinfo2().hblkhd
    a = np.empty(nbytes, dtype=np.uint8)
    grown = libc.mallinfo2().hblkhd - before
    del a
    return grown
print(int(allocator.tuned), mmapped_growth(4 << 20), mmapped_growth(64 << 20))
"""


def _probe(env_value):
    env = dict(os.environ)
    env.pop(allocator.MALLOC_TUNING_ENV, None)
    if env_value is not None:
        env[allocator.MALLOC_TUNING_ENV] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    tuned, small, large = (int(v) for v in out.stdout.split())
    return tuned, small, large


def test_tuned_process_serves_4mib_from_the_heap():
    tuned, small, large = _probe(None)
    assert tuned == 1
    assert small == 0  # below the 32 MiB threshold: heap, no mmapped block
    assert large >= 64 << 20  # above it: still mmapped


@pytest.mark.parametrize("value", ["0", "false", "OFF", "no"])
def test_opt_out_keeps_glibc_defaults(value):
    tuned, small, large = _probe(value)
    assert tuned == 0
    assert small >= 4 << 20  # glibc's starting threshold (128 KiB) mmaps it
    assert large >= 64 << 20


def test_glibc_version_reads_confstr():
    version = allocator.glibc_version()
    major, minor = version.split(".")[:2]
    assert int(major) >= 2 and int(minor) >= 0


def test_tune_malloc_is_idempotent():
    assert allocator.tune_malloc() is allocator.tuned
    assert allocator.tune_malloc() is allocator.tuned
