"""Which in-place row softmax kernel (attention's, and ``F.softmax`` over the last axis) runs.

- on the CPU, float32, compiled loops chosen ("numba"): ``cpu_softmax.py``;
- otherwise (the GPU, float16/float64, or the "numpy" choice): ``softmax.py``, the readable form
  and the oracle, on NumPy or CuPy arrays. (``F.softmax`` on the GPU runs ``cuda_softmax.py``,
  chosen in ``ops/softmax.py``.)
"""

from __future__ import annotations

import numpy as np

from . import softmax
from .choice import compiled_cpu

__all__ = ["softmax_rows_for", "softmax_bwd_rows_for"]


def softmax_rows_for(s):
    """``softmax_rows_(s) -> s``: softmax over the last axis of ``s``, in place."""
    if compiled_cpu() and type(s) is np.ndarray and s.dtype == np.float32:
        from . import cpu_softmax  # noqa: PLC0415 - Numba is imported on first use

        return cpu_softmax.softmax_rows_
    return softmax.softmax_rows_


def softmax_bwd_rows_for(dp):
    """``softmax_bwd_rows_(dp, p) -> dp``: ``p ⊙ (dp - rowsum(dp ⊙ p))``, in place in ``dp``."""
    if compiled_cpu() and type(dp) is np.ndarray and dp.dtype == np.float32:
        from . import cpu_softmax  # noqa: PLC0415

        return cpu_softmax.softmax_bwd_rows_
    return softmax.softmax_bwd_rows_
