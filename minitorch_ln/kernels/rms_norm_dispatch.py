"""Which RMSNorm kernel runs for an array, decided here and nowhere else.

- on the GPU: ``rms_norm.py`` on CuPy arrays (there is no CUDA kernel for RMSNorm yet);
- on the CPU, float32/float64, compiled loops chosen: ``cpu_layer_norm.py`` (RMSNorm's rows beside
  LayerNorm's);
- otherwise (float16, or the "numpy" choice): ``rms_norm.py``, the readable form and the oracle.
"""

from __future__ import annotations

from . import rms_norm
from .choice import COMPILED_DTYPES, compiled_cpu, on_gpu

__all__ = ["rms_norm_fwd_for", "rms_norm_bwd_for"]


def rms_norm_fwd_for(x):
    """``rms_norm_fwd(x, weight, eps) -> (y, rstd)`` for ``x`` ``(N, D)``."""
    if not on_gpu(x) and compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_layer_norm  # noqa: PLC0415 - Numba is imported on first use

        return cpu_layer_norm.rms_norm_fwd
    return rms_norm.rms_norm_fwd


def rms_norm_bwd_for(x):
    """``rms_norm_bwd(dy, x, weight, rstd) -> (dx, dweight)`` for ``x`` ``(N, D)``."""
    if not on_gpu(x) and compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_layer_norm  # noqa: PLC0415

        return cpu_layer_norm.rms_norm_bwd
    return rms_norm.rms_norm_bwd
