"""What every kernel dispatch module asks: is the array on the GPU, and are the compiled CPU loops chosen?

The dispatch modules (``layer_norm_dispatch.py``, ``batch_norm_dispatch.py``, ...) each answer
"which kernel runs for this array?" with a plain ``if`` over these two facts and the dtype. The
CPU choice is ``"numba"`` (the loops compiled by Numba, the default where Numba imports) or
``"numpy"`` (the readable whole-array forms, which are also the oracle); the environment variable
``MINITORCH_LN_CPU_KERNELS`` sets the starting choice.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from ..backend import get_array_module

__all__ = ["CPU_KERNELS", "COMPILED_DTYPES", "set_cpu_kernels", "get_cpu_kernels", "compiled_cpu", "on_gpu"]

CPU_KERNELS = ("numba", "numpy")
COMPILED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # what the compiled norm loops take
_cpu_kernels: str | None = None  # chosen on first use (importing Numba takes a few tenths of a second)


def _numba_importable() -> bool:
    """Whether the compiled kernels can run: ``_numba`` imports Numba (once) and says."""
    from . import _numba  # noqa: PLC0415 - Numba is imported on first use

    return _numba.AVAILABLE


def set_cpu_kernels(name: str) -> None:
    """Choose the CPU kernels: ``"numba"`` (compiled loops, the default when Numba is installed) or
    ``"numpy"`` (whole-array NumPy operations). The environment variable ``MINITORCH_LN_CPU_KERNELS``
    sets the starting choice. Both compute the same formulas and agree to rounding.

    Raises:
        ValueError: ``name`` is not one of ``"numba"``, ``"numpy"``.
        ImportError: ``"numba"`` was asked for and Numba is not installed.
    """
    global _cpu_kernels
    if name not in CPU_KERNELS:
        raise ValueError(f"set_cpu_kernels: expected one of {CPU_KERNELS}, got {name!r}")
    if name == "numba" and not _numba_importable():
        raise ImportError("set_cpu_kernels('numba'): Numba is not installed (pip install numba); "
                          "the NumPy kernels ('numpy') need nothing more")
    _cpu_kernels = name


def get_cpu_kernels() -> str:
    """The CPU kernels in use: ``"numba"`` or ``"numpy"`` (see :func:`set_cpu_kernels`)."""
    if _cpu_kernels is None:
        env = os.environ.get("MINITORCH_LN_CPU_KERNELS", "").strip().lower()
        if env == "numpy" or (env == "numba" and _numba_importable()):
            choice = env
        else:  # unset or unusable: the fastest kernels this machine has
            choice = "numba" if _numba_importable() else "numpy"
            if env:
                warnings.warn(f"MINITORCH_LN_CPU_KERNELS={env!r}: expected one of {CPU_KERNELS} "
                              f"('numba' needs Numba installed); using {choice!r}", stacklevel=2)
        set_cpu_kernels(choice)
    return _cpu_kernels


def compiled_cpu() -> bool:
    """Whether the compiled CPU loops are chosen (``get_cpu_kernels() == "numba"``)."""
    return (_cpu_kernels or get_cpu_kernels()) == "numba"


def on_gpu(array) -> bool:
    """Whether ``array`` is a CuPy array (its kernels are the ``cuda_*`` modules)."""
    return type(array) is not np.ndarray and get_array_module(array) is not np
