"""Which LayerNorm kernel runs for an array, decided here and nowhere else.

===================================  ===============================================================
the array                            the kernel
===================================  ===============================================================
on the GPU (CuPy)                    ``cuda_layer_norm.py`` (the statistics alone: ``layer_norm.py``
                                     on CuPy arrays)
on the CPU, float32/float64,         ``cpu_layer_norm.py``: the formulas as a compiled loop over
compiled loops chosen ("numba")      each row (the default where Numba imports)
on the CPU, otherwise (float16, or   ``layer_norm.py``: the same formulas in whole-array NumPy
the "numpy" choice)
===================================  ===============================================================

The file a student reads beside ``docs/layernorm_backward.md`` is ``layer_norm.py``: the readable
form, which is also the oracle the others are tested against. Each function returns the kernel
(the op then calls it), so no frame is added between the op and the row loop.
"""

from __future__ import annotations

from . import layer_norm
from .choice import COMPILED_DTYPES, compiled_cpu, on_gpu

__all__ = ["layer_norm_fwd_for", "layer_norm_bwd_for", "layer_norm_stats_for"]


def layer_norm_fwd_for(x):
    """``layer_norm_fwd(x, weight, bias, eps) -> (y, mean, rstd)`` for ``x`` ``(N, D)``."""
    if on_gpu(x):
        from . import cuda_layer_norm  # noqa: PLC0415 - CuPy's kernels are built on first use

        return cuda_layer_norm.layer_norm_fwd
    if compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_layer_norm  # noqa: PLC0415 - Numba is imported on first use

        return cpu_layer_norm.layer_norm_fwd
    return layer_norm.layer_norm_fwd


def layer_norm_bwd_for(x):
    """``layer_norm_bwd(dy, x, weight, mean, rstd) -> (dx, dweight, dbias)`` for ``x`` ``(N, D)``."""
    if on_gpu(x):
        from . import cuda_layer_norm  # noqa: PLC0415

        return cuda_layer_norm.layer_norm_bwd
    if compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_layer_norm  # noqa: PLC0415

        return cpu_layer_norm.layer_norm_bwd
    return layer_norm.layer_norm_bwd


def layer_norm_stats_for(x):
    """``layer_norm_stats(x, eps) -> (mean, rstd)`` for ``x`` ``(N, D)`` (no CUDA kernel: the
    NumPy form runs on CuPy arrays)."""
    if not on_gpu(x) and compiled_cpu() and x.dtype in COMPILED_DTYPES:
        from . import cpu_layer_norm  # noqa: PLC0415

        return cpu_layer_norm.layer_norm_stats
    return layer_norm.layer_norm_stats
