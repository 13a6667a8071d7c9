"""Fused scaled dot-product attention, forward and backward, compiled for the CPU (float32).

Not wired into the ops yet: :class:`minitorch_ln.ops.attention.ScaledDotProductAttention` (two
batched GEMMs, a softmax in NumPy passes, ``P`` ``(N, L, S)`` saved for the backward) is the
readable form and the oracle ``tests/test_kernels_cpu_attention.py`` holds this kernel equal to.

One head ``n`` at a time, ``q`` ``(L, D)``, ``k`` ``(S, D)``, ``v`` ``(S, Dv)``, ``scale``, and
with ``causal`` the keys ``j <= i`` of query ``i`` only (top-left aligned, as ``causal_mask``)::

    forward    S = q kᵀ,  P_i = softmax(scale · S_i) over the row's keys,  O = P v
               lse_i = log Σ_j exp(scale · S_ij)                       (saved instead of P)
    backward   P_ij = exp(scale · S_ij - lse_i)                         (P recomputed from lse)
               dV = Pᵀ dO,  dP = dO vᵀ,  D_i = dO_i · O_i,  dS = P ⊙ (dP - D)
               dQ = scale · dS k,  dK = scale · dSᵀ q

(``D_i = rowsum(dO ⊙ O) = rowsum(dP ⊙ P)``: FlashAttention's form, Dao 2023, §3.1, which needs no
pass over ``dP ⊙ P``.) A head is taken in blocks of ``_BR`` query rows; with ``causal`` a block
computes only the keys up to its last row (at ``L = S = 256`` that is 62% of the full products).
The five products are BLAS calls on one block's arrays (Numba's ``np.dot``), and everything
between them is one compiled loop over the block's scores, which stay in the L2 cache: the NumPy
form's max, subtract, exp, sum and divide passes over the whole ``(N, L, S)`` batch become one
pass per row, and only ``lse`` ``(N, L)`` is kept for the backward instead of ``P``. The ``exp``
is the vectorizable one of ``kernels/cpu_activation.py``; the row sums may be reordered
(``fastmath`` "reassoc", as the LayerNorm loops). Heads are shared out over the kernel threads
(``kernels/_threads.py``).

Measured (one thread, float32, against the ops' path on the same arrays): the forward is faster
(``(96, 256, 64)`` causal: 17.5 against 31.9 ms; the ``tiny`` GPT's ``(128, 64, 32)``: 1.8
against 2.8 ms in a training step), the backward is not at short lengths (``(128, 64, 32)``: 3.3
against 1.7 ms: per head five small GEMMs, one of them the recomputation of ``S``, where the
ops' batched matmul makes four; ``(96, 256, 64)``: 37.8 against 41.5 ms). A first version with
no BLAS, one score row at a time along the keys, was no faster than the ops' path in the forward
and 1.7x slower in the backward: Numba cannot keep a tile of accumulators in registers, so every
multiply-add also loaded and stored.

Limits: float32, ``(N, L, D)`` inputs, no mask other than ``causal``, no dropout. A query row with
no key (``S == 0``) gives zeros and ``lse = -inf``.
"""

from __future__ import annotations

import numpy as np

from . import _threads
from ._numba import AVAILABLE, jit
from .cpu_activation import _exp_neg

__all__ = ["AVAILABLE", "attention_fwd", "attention_bwd"]

_f = np.float32


_BR = 64  # query rows per block: a causal block needs only the keys up to its last row


@jit
def _n_keys(i, S, causal):
    return min(i + 1, S) if causal else S


@jit
def _probabilities_(s, scale, causal, lse, recompute, i0):
    """Turn the raw scores ``s = q kᵀ`` of query rows ``i0..`` ``(rows, keys)`` into ``P``, in place.

    Forward (``recompute`` False): ``P = softmax(scale · s)`` over each row's keys, 0 at the masked
    ones, and ``lse`` (``(rows,)``) written. Backward (True): ``P = exp(scale · s - lse)`` from the
    saved ``lse``, the same numbers without a second pass over the row.
    """
    rows, S = s.shape
    for i in range(rows):
        jn = _n_keys(i0 + i, S, causal)
        if recompute:
            li = lse[i]
            for j in range(S):
                s[i, j] = _exp_neg(s[i, j] * scale - li) if j < jn else _f(0.0)
            continue
        m = -np.inf
        for j in range(jn):
            m = max(m, s[i, j])
        m = m * scale                                             # the row's largest scaled score
        total = _f(0.0)
        for j in range(S):
            s[i, j] = _exp_neg(s[i, j] * scale - m) if j < jn else _f(0.0)
            total += s[i, j]
        inv = _f(1.0) / total if jn > 0 else _f(0.0)
        for j in range(S):
            s[i, j] *= inv
        lse[i] = m + np.log(total) if jn > 0 else -np.inf


@jit
def _attention_fwd_heads(q, k, v, scale, causal, o, lse, start, stop):
    L, S = q.shape[1], k.shape[1]
    for n in range(start, stop):
        for i0 in range(0, L, _BR):                               # a block of query rows
            i1 = min(L, i0 + _BR)
            jn = min(S, i1) if causal else S                      # the keys its rows may see
            qb = np.ascontiguousarray(q[n, i0:i1])
            kb, vb = np.ascontiguousarray(k[n, :jn]), np.ascontiguousarray(v[n, :jn])
            s = np.empty((i1 - i0, jn), np.float32)
            np.dot(qb, kb.T, s)                                   # S = q kᵀ (BLAS)
            _probabilities_(s, scale, causal, lse[n, i0:i1], False, i0)   # P, lse
            o[n, i0:i1] = np.dot(s, vb)                           # O = P v


@jit
def _attention_bwd_heads(do, q, k, v, o, lse, scale, causal, dq, dk, dv, start, stop):
    L, S = q.shape[1], k.shape[1]
    for n in range(start, stop):
        dk[n] = _f(0.0)
        dv[n] = _f(0.0)
        for i0 in range(0, L, _BR):
            i1 = min(L, i0 + _BR)
            jn = min(S, i1) if causal else S
            qb, dob = np.ascontiguousarray(q[n, i0:i1]), np.ascontiguousarray(do[n, i0:i1])
            kb, vb = np.ascontiguousarray(k[n, :jn]), np.ascontiguousarray(v[n, :jn])
            p = np.empty((i1 - i0, jn), np.float32)
            np.dot(qb, kb.T, p)
            _probabilities_(p, scale, causal, lse[n, i0:i1], True, i0)    # P recomputed from lse
            dv[n, :jn] += np.dot(p.T, dob)                        # dV = Pᵀ dO
            ds = np.dot(dob, vb.T)                                # dP = dO vᵀ
            for i in range(i1 - i0):
                di = _f(0.0)
                for e in range(o.shape[2]):
                    di += dob[i, e] * o[n, i0 + i, e]             # D_i = dO_i · o_i = Σ_j P_ij dP_ij
                for j in range(jn):
                    ds[i, j] = p[i, j] * (ds[i, j] - di) * scale  # scale · dS
            dq[n, i0:i1] = np.dot(ds, kb)                         # dQ = scale dS k
            dk[n, :jn] += np.dot(ds.T, qb)                        # dK = scale dSᵀ q


def _check(q, k, v):
    if q.dtype != np.float32 or k.dtype != np.float32 or v.dtype != np.float32:
        raise ValueError(f"cpu_attention: expected float32 q, k, v, got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.ndim != 3 or k.ndim != 3 or v.ndim != 3 or q.shape[0] != k.shape[0] or k.shape[:2] != v.shape[:2] \
            or q.shape[2] != k.shape[2]:
        raise ValueError(f"cpu_attention: expected q (N, L, D), k (N, S, D), v (N, S, Dv), got {q.shape}, "
                         f"{k.shape}, {v.shape}")


def attention_fwd(q, k, v, scale: float, causal: bool = True):
    """``(o, lse)``: ``o = softmax(scale · q kᵀ [causal]) v`` ``(N, L, Dv)`` and the rows' log-sum-exp
    ``(N, L)``, for float32 ``q`` ``(N, L, D)``, ``k`` ``(N, S, D)``, ``v`` ``(N, S, Dv)``.

    Raises:
        ValueError: another dtype, or shapes that do not fit.
    """
    _check(q, k, v)
    q, k, v = (np.ascontiguousarray(a) for a in (q, k, v))
    N, L, _ = q.shape
    o = np.empty((N, L, v.shape[2]), np.float32)
    lse = np.empty((N, L), np.float32)
    args = (q, k, v, _f(scale), bool(causal), o, lse)
    others, (lo, hi) = _threads.start(_attention_fwd_heads, args, N, L * k.shape[1])
    _attention_fwd_heads(*args, lo, hi)
    _threads.join(others)
    return o, lse


def attention_bwd(do, q, k, v, o, lse, scale: float, causal: bool = True):
    """``(dq, dk, dv)`` of :func:`attention_fwd` for the upstream gradient ``do`` ``(N, L, Dv)``, given
    its ``o`` and ``lse``; shapes as the inputs'.

    Raises:
        ValueError: another dtype, or shapes that do not fit.
    """
    _check(q, k, v)
    if do.shape != o.shape or o.shape != (q.shape[0], q.shape[1], v.shape[2]) or lse.shape != q.shape[:2]:
        raise ValueError(f"cpu_attention: expected do and o of shape {(q.shape[0], q.shape[1], v.shape[2])} and "
                         f"lse of shape {q.shape[:2]}, got {do.shape}, {o.shape}, {lse.shape}")
    do, q, k, v, o = (np.ascontiguousarray(a, dtype=np.float32) for a in (do, q, k, v, o))
    lse = np.ascontiguousarray(lse, dtype=np.float32)
    N, L, _ = q.shape
    dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    args = (do, q, k, v, o, lse, _f(scale), bool(causal), dq, dk, dv)
    others, (lo, hi) = _threads.start(_attention_bwd_heads, args, N, L * k.shape[1])
    _attention_bwd_heads(*args, lo, hi)
    _threads.join(others)
    return dq, dk, dv
