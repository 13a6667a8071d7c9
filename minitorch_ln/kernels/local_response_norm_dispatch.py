"""Which local response normalization kernel runs for an input ``(N, C, L)``, decided here alone.

- on the GPU (CuPy): ``cuda_local_response_norm.py``;
- on the CPU, float32/float64, compiled loops chosen ("numba", the default where Numba imports):
  ``cpu_local_response_norm.py``;
- otherwise (float16, or the "numpy" choice): ``local_response_norm.py``, the readable form and the oracle.
"""

from __future__ import annotations

from . import local_response_norm
from .choice import COMPILED_DTYPES, compiled_cpu, on_gpu

__all__ = ["local_response_norm_fwd_for", "local_response_norm_bwd_for"]


def local_response_norm_fwd_for(x):
    """``local_response_norm_fwd(x, size, alpha, beta, k) -> y)``: the forward kernel for ``x``."""
    if on_gpu(x):
        from . import cuda_local_response_norm  # noqa: PLC0415 - CuPy's kernels are built on first use

        return cuda_local_response_norm.local_response_norm_fwd
    if compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_local_response_norm  # noqa: PLC0415 - Numba is imported on first use

        return cpu_local_response_norm.local_response_norm_fwd
    return local_response_norm.local_response_norm_fwd


def local_response_norm_bwd_for(x):
    """``local_response_norm_bwd(dy, x, size, alpha, beta, k) -> dx)``: the backward kernel for ``x``."""
    if on_gpu(x):
        from . import cuda_local_response_norm  # noqa: PLC0415

        return cuda_local_response_norm.local_response_norm_bwd
    if compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_local_response_norm  # noqa: PLC0415

        return cpu_local_response_norm.local_response_norm_bwd
    return local_response_norm.local_response_norm_bwd
