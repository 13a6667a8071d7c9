"""Which Adam update kernel runs for one parameter's arrays.

- on the CPU, compiled loops chosen ("numba"), float32/float64 contiguous arrays of one shape and
  dtype: ``cpu_adam.py``;
- otherwise: ``adam.py``, the readable form and the oracle, on NumPy or CuPy arrays. (On the GPU
  the optimizer updates whole groups at once with ``cuda_optim.py``, chosen in ``optim/adam.py``.)
"""

from __future__ import annotations

from . import adam
from .choice import compiled_cpu

__all__ = ["adam_update_for"]


def adam_update_for(param, grad, m, v, v_max):
    """``adam_update(param, grad, m, v, v_max, **coefficients)``: one step in place."""
    if compiled_cpu():
        from . import cpu_adam  # noqa: PLC0415 - Numba is imported on first use

        if cpu_adam.compiled_for(param, grad, m, v, v_max):
            return cpu_adam.adam_update
    return adam.adam_update
