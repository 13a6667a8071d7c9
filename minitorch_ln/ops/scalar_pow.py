"""``x ** p`` on arrays for a real float array ``x`` and a Python float exponent ``p``, kept a double.

Used by ``PowScalar.forward`` (``x ** 2.5``), by its backward's ``x ** (p - 1)`` (``PowScalarBackward`` and the
array backward of ``ops/fast_backward.py``), so that the three agree bit for bit.

The exponent is a Python float (a C double), as PyTorch's float32/float64 kernels keep it
(``pow_tensor_scalar_optimized_kernel<float, double>``: ``std::pow(float(x), double(p))``). Rounding it to
``x``'s dtype first changes the result wherever ``p`` is not representable there: float32 rounds
``2**24 + 1`` to the even ``2**24``, so ``(-1) ** (2**24 + 1)`` came out ``+1``, and ``1e-300`` to ``0``, so
``0 ** 1e-300`` came out ``1``. Where ``p`` is representable in ``x``'s dtype (``2``, ``0.5``, ``-3``, ``1.25``:
nearly every exponent written in a program) the power is taken in that dtype, as before (same values,
no float64 pass); otherwise in float64 with the double ``p``, then rounded once to ``x``'s dtype.

float16 and bfloat16 take the same rule. PyTorch rounds the exponent to those dtypes (``Scalar::to<Half>``,
a RuntimeError when it overflows: ``half_tensor ** 65505.0``); the math is ``x ** p`` with the ``p`` the caller
wrote, so we keep ``p`` (DESIGN: the math decides where PyTorch is wrong) and give its correctly computed value.

``p = -0.5``: PyTorch computes ``rsqrt(x) = 1 / sqrt(x)`` (its ``pow`` dispatches ``-0.5`` to ``rsqrt_kernel``,
as ``0.5`` to ``sqrt_kernel``; NumPy's ``x ** 0.5`` is ``sqrt`` too). C99's ``pow(-0, -0.5)`` is ``+inf`` and
``pow(-inf, -0.5)`` is ``+0``, but ``sqrt(-0) = -0`` (IEEE 754), so ``1 / sqrt(-0) = -inf`` and
``1 / sqrt(-inf) = NaN``; IEEE 754-2008's own ``rSqrt(±0)`` is ``±inf`` as well. ``x ** 0.5`` here already
is ``sqrt(x)`` (``-0`` at ``-0``, NaN at ``-inf``), so ``x ** -0.5`` is taken as ``1 / x ** 0.5`` at the two
points where C's ``pow`` disagrees with it, the sign bit set and ``x`` zero or infinite: ``-inf`` and NaN, as
PyTorch and as ``rsqrt`` here. Elsewhere ``x ** -0.5`` keeps ``pow``'s single rounding (PyTorch's
``1 / sqrt(x)`` rounds twice and can differ in the last bit).
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module
from ._fperr import Quiet


def float_pow(x, p: float):
    """``x ** p`` for a real float array ``x`` (any shape; float16, bfloat16, float32 or float64) and a Python
    number ``p`` taken as a double; the result has ``x``'s shape and dtype. No NumPy warnings (``0 ** -1 = inf``).
    """
    dt = x.dtype
    q = dt.type(p)
    with Quiet():
        if float(q) == p:  # float(): a bfloat16 scalar compares with a float in bfloat16
            y = x ** q
        else:  # p not representable in x's dtype: a double exponent, one rounding at the end
            y = (x.astype(np.float64) ** p).astype(dt)
        if p == -0.5 and (neg := (xp := get_array_module(x)).signbit(x)).any():  # rare: one pass when all are >= +0
            odd = neg & ((x == 0) | xp.isinf(x))  # -0 and -inf: 1 / sqrt(x) = -inf, NaN
            y = xp.where(odd, dt.type(1) / xp.sqrt(x), y)
    return y
