"""Which GELU kernel runs for an array.

- on the CPU, float32/float16, compiled loops chosen ("numba"): ``cpu_activation.py`` (the exact
  and the tanh forms, computed in float32);
- otherwise (the GPU, float64, or the "numpy" choice): ``activation.py``, the readable form and
  the oracle, on NumPy or CuPy arrays.
"""

from __future__ import annotations

import numpy as np

from . import activation
from .choice import compiled_cpu

__all__ = ["gelu_fwd_for", "gelu_bwd_for"]

_COMPILED = (np.dtype(np.float32), np.dtype(np.float16))


def gelu_fwd_for(x):
    """``gelu_fwd(x, approximate) -> y`` for ``x`` (any shape)."""
    if compiled_cpu() and type(x) is np.ndarray and x.dtype in _COMPILED:
        from . import cpu_activation  # noqa: PLC0415 - Numba is imported on first use

        return cpu_activation.gelu_fwd
    return activation.gelu_fwd


def gelu_bwd_for(x):
    """``gelu_bwd(dy, x, approximate) -> dx`` for ``x`` (any shape)."""
    if compiled_cpu() and type(x) is np.ndarray and x.dtype in _COMPILED:
        from . import cpu_activation  # noqa: PLC0415

        return cpu_activation.gelu_bwd
    return activation.gelu_bwd
