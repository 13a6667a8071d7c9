"""Which BatchNorm kernel runs for an input viewed as ``(N, C, L)``, decided here and nowhere else.

- on the GPU (CuPy): ``cuda_batchnorm.py``;
- on the CPU, float32/float64, compiled loops chosen ("numba", the default where Numba imports):
  ``cpu_batchnorm.py``;
- otherwise (float16, or the "numpy" choice): ``batchnorm.py``, the readable form and the oracle.
"""

from __future__ import annotations

from . import batchnorm
from .choice import COMPILED_DTYPES, compiled_cpu, on_gpu

__all__ = ["batch_norm_fwd_ncl_for", "batch_norm_bwd_ncl_for"]


def batch_norm_fwd_ncl_for(x):
    """``batch_norm_fwd_ncl(x, weight, bias, eps) -> (y, mean, rstd, var)``: the forward kernel for ``x``."""
    if on_gpu(x):
        from . import cuda_batchnorm  # noqa: PLC0415 - CuPy's kernels are built on first use

        return cuda_batchnorm.batch_norm_fwd_ncl
    if compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_batchnorm  # noqa: PLC0415 - Numba is imported on first use

        return cpu_batchnorm.batch_norm_fwd_ncl
    return batchnorm.batch_norm_fwd_ncl


def batch_norm_bwd_ncl_for(x):
    """``batch_norm_bwd_ncl(dy, x, weight, mean, rstd) -> (dx, dweight, dbias)``: the backward kernel for ``x``."""
    if on_gpu(x):
        from . import cuda_batchnorm  # noqa: PLC0415

        return cuda_batchnorm.batch_norm_bwd_ncl
    if compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_batchnorm  # noqa: PLC0415

        return cpu_batchnorm.batch_norm_bwd_ncl
    return batchnorm.batch_norm_bwd_ncl
