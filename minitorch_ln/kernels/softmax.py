"""Softmax over the last axis, in place, and its backward, as whole-array operations (NumPy or CuPy).

The readable form, and the oracle of the compiled loops in ``kernels/cpu_softmax.py``, which
compute the same formulas one row at a time. Used by the fused attention of ``ops/attention.py``
on its scores ``s`` ``(..., L, S)``::

    softmax      p = exp(s - max(s)) / Σ exp(s - max(s))       (per row; a row of -inf gives zeros, with +inf NaN)
    backward     ds = p ⊙ (dp - Σ (dp ⊙ p))                     (per row)
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module

__all__ = ["softmax_bwd_rows_", "softmax_rows_"]


def softmax_rows_(s):
    """Softmax over the last axis of ``s``, in place; rows that are all -inf become 0 (not NaN)."""
    if s.size == 0:  # no rows, or rows of no keys (an attention over S = 0 keys): nothing to do
        return s
    xp = get_array_module(s)
    m = s.max(axis=-1, keepdims=True)  # (..., L, 1)
    with np.errstate(invalid="ignore"):  # a +inf row: inf - inf is NaN by intent (as PyTorch), no warning
        s -= xp.where(m == -xp.inf, s.dtype.type(0), m)  # a fully masked row stays -inf (a +inf row: NaN) ...
        xp.exp(s, out=s)  # ... and its exp is 0
        denom = s.sum(axis=-1, keepdims=True)  # (..., L, 1)
        s /= xp.where(denom == 0, s.dtype.type(1), denom)
    return s


def softmax_bwd_rows_(dp, p):
    """``dp ← p ⊙ (dp - Σ_last (dp ⊙ p))`` in place (the softmax's backward; ``p`` its output)."""
    xp = get_array_module(dp)
    dp -= xp.einsum("...j,...j->...", dp, p)[..., None]  # dP - rowsum(dP ⊙ P), no (..., L, S) temporary
    dp *= p
    return dp
