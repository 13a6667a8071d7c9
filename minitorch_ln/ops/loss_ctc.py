"""``ctc_loss``: Connectionist Temporal Classification (Graves et al., 2006), as ``torch.nn.functional``.

For one sample with per-frame log-probabilities ``lp (T, C)`` and target ``y`` of length ``L``, the
extended label sequence ``l' = (blank, y1, blank, y2, ..., yL, blank)`` has ``S = 2L + 1`` states, and
the forward variables in log space are (Graves et al. 2006, eq. 6-7)::

    α_0(0) = lp[0, blank],  α_0(1) = lp[0, y1]
    α_t(s) = lp[t, l'_s] + logsumexp(α_{t-1}(s), α_{t-1}(s-1), α_{t-1}(s-2) if l'_s ≠ blank and l'_s ≠ l'_{s-2})
    loss   = -logsumexp(α_{T-1}(S-1), α_{T-1}(S-2))

and the backward variables ``β`` the same recursion from the end (eq. 10-11). Both include
``lp[t, l'_s]``, so ``α_t(s) + β_t(s) - lp[t, l'_s]`` is the log-probability of the paths through
state ``s`` at ``t``. The gradient is ATen's ``ctc_loss_backward`` (eq. 16, as PyTorch writes it)::

    dlp[t, c] = exp(lp[t, c]) - exp(logsumexp_{s: l'_s = c}(α_t(s) + β_t(s)) + loss - lp[t, c])

for ``t < T``, 0 after. The first term is PyTorch's convention: it is the gradient of the loss of
``log_softmax(lp)`` at normalized ``lp`` (the derivative through the normalization), so gradients that
flow through a ``log_softmax`` -- the documented use -- are the exact ones, and a finite-difference
check of ``ctc_loss(log_softmax(z))`` in ``z`` passes (``tests/test_ops_ctc_loss.py``). As in PyTorch,
the backward is not differentiable again (a clear error).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import require_float
from .loss_regression import resolve_reduction

__all__ = ["ctc_loss"]


def _lse(*terms):
    """Elementwise log-sum-exp of arrays of one shape, -inf where all are -inf."""
    stack = np.stack(terms)
    m = stack.max(axis=0)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.exp(stack - safe).sum(axis=0))


def _extended(targets, lengths, blank):
    """``l' (N, S)`` and which states can skip from ``s - 2`` (``(N, S)`` bool); ``S = 2·max L + 1``."""
    N, Lmax = len(lengths), int(max(lengths, default=0))
    ext = np.full((N, 2 * Lmax + 1), blank, dtype=np.int64)
    for n, y in enumerate(targets):
        ext[n, 1:2 * len(y):2] = y
    skip = np.zeros(ext.shape, dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, skip


def _alpha(lp, ext, skip, in_len):
    """Log forward variables ``(T, N, S)`` (float64) and the per-sample negative log-likelihood ``(N,)``."""
    T, N, _ = lp.shape
    S = ext.shape[1]
    rows = np.arange(N)[:, None]
    emit = lp[:, rows, ext]  # (T, N, S): lp[t, n, l'_s]
    alpha = np.full((T, N, S), -np.inf)
    alpha[0, :, 0] = emit[0, :, 0]
    if S > 1:
        alpha[0, :, 1] = emit[0, :, 1]
    ninf = np.full((N, 1), -np.inf)
    for t in range(1, T):
        a = alpha[t - 1]
        a1 = np.concatenate([ninf, a[:, :-1]], axis=1)
        a2 = np.where(skip, np.concatenate([ninf, ninf, a[:, :-2]], axis=1)[:, :S], -np.inf)
        alpha[t] = _lse(a, a1, a2) + emit[t]
    return alpha, emit


class CTCLoss(Function):
    """Per-sample CTC negative log-likelihood ``(N,)`` of ``lp (T, N, C)`` (float), with fixed targets."""

    @staticmethod
    def forward(ctx, lp, targets, in_len, tgt_len, blank, zero_infinity):
        xp = get_array_module(lp)
        lp64 = np.asarray(lp.get() if xp is not np else lp, dtype=np.float64)  # (T, N, C)
        ext, skip = _extended(targets, tgt_len, blank)
        alpha, emit = _alpha(lp64, ext, skip, in_len)
        N = lp64.shape[1]
        last = alpha[np.asarray(in_len) - 1, np.arange(N)]  # (N, S): α at each sample's final frame
        ends = np.stack([last[np.arange(N), 2 * np.asarray(tgt_len)],
                         np.where(np.asarray(tgt_len) > 0, last[np.arange(N), np.maximum(2 * np.asarray(tgt_len) - 1, 0)],
                                  -np.inf)])
        nll = -_lse(ends[0], ends[1])  # (N,)
        ctx.save_for_backward(lp)  # an input of the backward node, so that its (refused) derivative is reached
        ctx.state = (lp64, ext, skip, alpha, emit, np.asarray(in_len), np.asarray(tgt_len), nll, zero_infinity)
        ctx.dtype = lp.dtype
        out = np.where(np.isinf(nll), 0.0, nll) if zero_infinity else nll
        return xp.asarray(out.astype(lp.dtype))

    @staticmethod
    def backward(ctx, dy):
        (lp,) = ctx.saved_tensors
        return CTCLossBackward.apply(dy, lp, ctx.state, ctx.dtype), None, None, None, None, None


class CTCLossBackward(Function):
    """ATen's ``ctc_loss_backward`` (the module docstring): ``dy (N,)`` → ``dlp (T, N, C)``."""

    @staticmethod
    def forward(ctx, dy, lp_in, state, dtype):
        lp, ext, skip, alpha, emit, in_len, tgt_len, nll, zero_infinity = state
        xp = get_array_module(dy)
        T, N, C = lp.shape
        S = ext.shape[1]
        beta = np.full((T, N, S), -np.inf)
        ninf = np.full((N, 1), -np.inf)
        skip_next = np.concatenate([skip[:, 2:], np.zeros((N, 2), dtype=bool)], axis=1)[:, :S]  # s -> s+2 allowed
        rows = np.arange(N)
        for t in range(T - 1, -1, -1):
            start = in_len - 1 == t  # the samples whose last frame is t
            if t < T - 1:
                b = beta[t + 1]
                b1 = np.concatenate([b[:, 1:], ninf], axis=1)
                b2 = np.where(skip_next, np.concatenate([b[:, 2:], ninf, ninf], axis=1)[:, :S], -np.inf)
                beta[t] = np.where((in_len - 1 > t)[:, None], _lse(b, b1, b2) + emit[t], -np.inf)
            if start.any():
                n = rows[start]
                beta[t, n, 2 * tgt_len[n]] = emit[t, n, 2 * tgt_len[n]]
                has = tgt_len[n] > 0
                beta[t, n[has], 2 * tgt_len[n[has]] - 1] = emit[t, n[has], 2 * tgt_len[n[has]] - 1]
        ab = alpha + beta  # (T, N, S)
        lcab = np.full((T, N, C), -np.inf)
        for s in range(S):  # logsumexp of α+β over the states that emit class c
            cls = ext[:, s]
            cur = lcab[:, rows, cls]
            lcab[:, rows, cls] = _lse(cur, ab[:, :, s])
        with np.errstate(invalid="ignore", over="ignore"):
            grad = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)  # (T, N, C)
        grad[np.arange(T)[:, None] >= in_len[None, :]] = 0.0
        if zero_infinity:
            grad[:, np.isinf(nll)] = 0.0
        g = np.asarray(dy.get() if xp is not np else dy, dtype=np.float64)  # (N,)
        return xp.asarray((grad * g[None, :, None]).astype(dtype))

    @staticmethod
    def backward(ctx, ddlp):
        raise RuntimeError("derivative for ctc_loss_backward is not implemented (as in PyTorch): ctc_loss supports "
                           "first-order gradients only")


def _lengths(v, name, n):
    if isinstance(v, Tensor):
        v = np.asarray(v.detach().cpu().array).reshape(-1).tolist() if v.ndim else [int(v.item())]
    elif isinstance(v, numbers.Integral):
        v = [int(v)]
    try:
        v = [int(e) for e in v]
    except TypeError:
        raise TypeError(f"ctc_loss: {name} must be a Tensor, a tuple or a list of ints, got {type(v).__name__}") from None
    if len(v) != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return v


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """CTC loss (Graves et al., 2006), as ``torch.nn.functional.ctc_loss``.

    Shapes: ``log_probs (T, N, C)`` (log-softmax outputs) or unbatched ``(T, C)``; ``targets`` padded
    ``(N, S)`` or concatenated ``(Σ target_lengths,)`` class indices (never ``blank``); ``input_lengths``
    and ``target_lengths`` ``(N,)`` (Tensors or sequences of ints). Output: 0-d (``'mean'``: each loss
    divided by its target length (at least 1), then averaged; ``'sum'``) or ``(N,)`` (``'none'``).
    ``zero_infinity`` sets impossible alignments' infinite losses, and their gradients, to 0.
    Gradients are PyTorch's (module docstring); second derivatives raise, as PyTorch's.

    Raises RuntimeError (PyTorch's messages) for lengths of the wrong count, an input length over
    ``T``, a negative target length, targets too short for their lengths, a blank outside ``[0, C)``;
    ValueError for an unknown reduction; TypeError for integer log-probabilities.
    """
    if not isinstance(log_probs, Tensor) or not isinstance(targets, Tensor):
        raise TypeError("ctc_loss: log_probs and targets must be Tensors")
    reduction = resolve_reduction(None, None, reduction, "ctc_loss")
    require_float(log_probs, "ctc_loss")
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"ctc_loss: expected log_probs of 2 (unbatched (T, C)) or 3 dimensions ((T, N, C)), got "
                           f"{list(log_probs.shape)}")
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    T, N, C = lp.shape
    if unbatched and targets.ndim == 1:
        targets = targets.unsqueeze(0)
    in_len = _lengths(input_lengths, "input_lengths", N)
    tgt_len = _lengths(target_lengths, "target_lengths", N)
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    for v in in_len:
        if v > T or v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {v} (while checking "
                               "arguments for ctc_loss)" if v > T else f"Expected input_lengths to have value at "
                               f"least 0, but got value {v}")
    for v in tgt_len:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {v} (while checking "
                               "arguments for ctc_loss)")
    y = np.asarray(targets.detach().cpu().array).astype(np.int64)
    if y.ndim == 1:
        if y.shape[0] != sum(tgt_len):
            raise RuntimeError(f"Expected tensor to have size {sum(tgt_len)} at dimension 0, but got size {y.shape[0]} "
                               "for argument #2 'targets' (while checking arguments for ctc_loss)")
        offsets = np.concatenate([[0], np.cumsum(tgt_len)])
        seqs = [y[offsets[n]:offsets[n + 1]] for n in range(N)]
    else:
        if max(tgt_len, default=0) > y.shape[1]:
            raise RuntimeError(f"Expected tensor to have size at least {max(tgt_len)} at dimension 1, but got size "
                               f"{y.shape[1]} for argument #2 'targets' (while checking arguments for ctc_loss)")
        seqs = [y[n, :tgt_len[n]] for n in range(N)]
    if any(((s < 0) | (s >= C)).any() for s in seqs):
        raise RuntimeError(f"ctc_loss: target classes must lie in [0, {C}), got {[s.tolist() for s in seqs]}")
    if any(v == 0 for v in in_len):
        raise RuntimeError("ctc_loss: every input length must be at least 1 (a zero-length input has no alignment)")
    nll = CTCLoss.apply(lp, seqs, in_len, tgt_len, int(blank), bool(zero_infinity))  # (N,)
    if reduction == "none":
        return nll.squeeze(0) if unbatched else nll
    if reduction == "sum":
        return nll.sum()
    div = Tensor._from_op(get_array_module(lp.array).asarray(np.maximum(np.asarray(tgt_len), 1).astype(lp.dtype)))
    return (nll / div).mean()
