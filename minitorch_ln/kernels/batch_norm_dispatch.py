"""Which BatchNorm kernel runs for an input viewed as ``(N, C, L)``, decided here and nowhere else.

- on the GPU (CuPy): ``cuda_batch_norm.py``;
- on the CPU, float32/float64, compiled loops chosen ("numba", the default where Numba imports):
  ``cpu_batch_norm.py``;
- otherwise (float16, or the "numpy" choice): ``batch_norm.py``, the readable form and the oracle.
"""

from __future__ import annotations

from . import batch_norm
from .choice import COMPILED_DTYPES, compiled_cpu, on_gpu

__all__ = ["batch_norm_fwd_ncl_for", "batch_norm_bwd_ncl_for"]


def batch_norm_fwd_ncl_for(x):
    """``batch_norm_fwd_ncl(x, weight, bias, eps) -> (y, mean, rstd, var)``: the forward kernel for ``x``."""
    if on_gpu(x):
        from . import cuda_batch_norm  # noqa: PLC0415 - CuPy's kernels are built on first use

        return cuda_batch_norm.batch_norm_fwd_ncl
    if compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_batch_norm  # noqa: PLC0415 - Numba is imported on first use

        return cpu_batch_norm.batch_norm_fwd_ncl
    return batch_norm.batch_norm_fwd_ncl


def batch_norm_bwd_ncl_for(x):
    """``batch_norm_bwd_ncl(dy, x, weight, mean, rstd) -> (dx, dweight, dbias)``: the backward kernel for ``x``."""
    if on_gpu(x):
        from . import cuda_batch_norm  # noqa: PLC0415

        return cuda_batch_norm.batch_norm_bwd_ncl
    if compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_batch_norm  # noqa: PLC0415

        return cpu_batch_norm.batch_norm_bwd_ncl
    return batch_norm.batch_norm_bwd_ncl
