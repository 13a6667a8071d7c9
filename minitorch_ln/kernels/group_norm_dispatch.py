"""Which GroupNorm kernel runs for an input viewed as ``(N, C, L)``, decided here and nowhere else.

- on the GPU (CuPy): ``cuda_group_norm.py``;
- on the CPU, float32/float64, compiled loops chosen ("numba", the default where Numba imports):
  ``cpu_group_norm.py``;
- otherwise (float16, or the "numpy" choice): ``group_norm.py``, the readable form and the oracle.
"""

from __future__ import annotations

from . import group_norm
from .choice import COMPILED_DTYPES, compiled_cpu, on_gpu

__all__ = ["group_norm_fwd_for", "group_norm_bwd_for"]


def group_norm_fwd_for(x):
    """``group_norm_fwd(x, weight, bias, num_groups, eps) -> (y, mean, rstd)``: the forward kernel for ``x``."""
    if on_gpu(x):
        from . import cuda_group_norm  # noqa: PLC0415 - CuPy's kernels are built on first use

        return cuda_group_norm.group_norm_fwd
    if compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_group_norm  # noqa: PLC0415 - Numba is imported on first use

        return cpu_group_norm.group_norm_fwd
    return group_norm.group_norm_fwd


def group_norm_bwd_for(x):
    """``group_norm_bwd(dy, x, weight, mean, rstd, num_groups) -> (dx, dweight, dbias)``: the backward kernel for ``x``."""
    if on_gpu(x):
        from . import cuda_group_norm  # noqa: PLC0415

        return cuda_group_norm.group_norm_bwd
    if compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_group_norm  # noqa: PLC0415

        return cpu_group_norm.group_norm_bwd
    return group_norm.group_norm_bwd
