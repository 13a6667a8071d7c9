"""What a failed gradient check tells a student: LayerNorm's backward, term by term.

LayerNorm's input gradient has three terms, one per path from ``x`` to the loss
(docs/layernorm_backward.md; ``kernels.layer_norm_forms.layer_norm_bwd_terms``)::

    dx = rstd · dxhat                          term 1: through xhat, mean and rstd held fixed
       - rstd · mean(dxhat)                    term 2: through the mean
       - rstd · xhat · mean(dxhat · xhat)      term 3: through rstd, that is through the variance

and each term is itself the derivative of a function we can evaluate, so each gets its *own*
finite-difference counterpart (``L = Σ dy · y``, ``m0``, ``r0`` the statistics at the point):

    term 1 = ∂/∂x Σ dy · ((x  - m0)      · r0      · γ + β)     statistics frozen
    term 2 = ∂/∂x Σ dy · ((x0 - mean(x)) · r0      · γ + β)     x moves only inside the mean
    term 3 = ∂/∂x Σ dy · ((x0 - m0)      · rstd(x) · γ + β)     x moves only inside rstd

(``dγ``, ``dβ``: ``∂L/∂γ``, ``∂L/∂β``.) A wrong backward then points at the term that is wrong,
where a plain gradient check only says that ``dx`` is. :func:`check_layer_norm_terms` does this
and returns a :class:`TermReport`; ``gradcheck`` appends that report to its error for any op whose
``Function`` class defines ``term_check(ctx) -> TermReport``: this module attaches
:func:`layer_norm_term_check` to the library's ``NativeLayerNorm`` op, which also runs the node's own fused backward and, when its ``dx``
is not the sum of right terms, fits it as ``c1·term1 + c2·term2 + c3·term3`` to name the term the
fused code gets wrong).

``diagnostics/heatmap.py`` draws the analytical and numerical Jacobians and their difference.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.grad_mode import no_grad
from ..kernels.layer_norm_forms import layer_norm_bwd_terms
from ..ops.layer_norm import NativeLayerNorm
from ..tensor import Tensor

__all__ = ["LAYER_NORM_TERMS", "TermReport", "check_layer_norm_terms", "layer_norm_term_check"]

# key in layer_norm_bwd_terms' dict -> (label, formula, what its finite differences move)
LAYER_NORM_TERMS = {
    "dbias": ("dβ (dbias)", "Σ_rows dy", "β"),
    "dweight": ("dγ (dweight)", "Σ_rows dy·xhat", "γ"),
    "dx_direct": ("dx term 1", "rstd·dxhat", "x, mean and rstd frozen"),
    "dx_via_mean": ("dx term 2", "-rstd·mean(dxhat)", "x only inside mean(x): the path through the mean"),
    "dx_via_rstd": ("dx term 3", "-rstd·xhat·mean(dxhat·xhat)", "x only inside rstd(x): the path through the variance"),
    "dx": ("dx (sum)", "term 1 + term 2 + term 3", "x everywhere"),
}


def _np64(a):
    if a is None:
        return None
    data = a.array if isinstance(a, Tensor) else a
    return np.asarray(backend.to_device(data, "cpu"), dtype=np.float64)


class TermReport:
    """The outcome of :func:`check_layer_norm_terms`: one row per term.

    Attributes:
        rows: a list of dicts ``{key, label, formula, moves, max_abs_err, max_rel_err, index,
            analytical, numerical, ok}`` (``index``: the worst element, in ``(N, D)`` rows).
        failed: the keys of the terms that disagree with their finite differences.
        ok: True when every term agrees.
        notes: extra findings (terms that do not add up to ``dx``; a ``dx`` that is not their sum).
        analytical, numerical: ``{key: float64 array}``, each term as ``terms_fn`` gave it and as its
            finite differences did (``(N, D)`` for the ``dx`` terms, ``(D,)`` for ``dweight``/``dbias``).
    """

    def __init__(self, rows, notes=(), title="LayerNorm backward"):
        self.analytical, self.numerical = {}, {}
        self.rows = rows
        self.notes = list(notes)
        self.title = title

    @property
    def failed(self) -> list:
        return [r["key"] for r in self.rows if not r["ok"]]

    @property
    def ok(self) -> bool:
        return not self.failed and not self.notes

    def culprit(self) -> str | None:
        """The label of the first individual term that disagrees (``"dx term 3"``), else ``None``."""
        for r in self.rows:
            if not r["ok"] and r["key"] != "dx":
                return r["label"]
        return None

    def __str__(self) -> str:
        lines = [
            f"{self.title}, term by term (each against its own finite differences, in float64):",
            f"  {'term':<13} {'formula':<28} {'max abs err':>11} {'worst (row, col)':>16} "
            f"{'analytical':>12} {'numerical':>12}  ok",
        ]
        for r in self.rows:
            lines.append(
                f"  {r['label']:<13} {r['formula']:<28} {r['max_abs_err']:>11.3g} {str(r['index']):>16} "
                f"{r['analytical']:>12.6g} {r['numerical']:>12.6g}  {'yes' if r['ok'] else 'NO'}"
            )
        bad = [r for r in self.rows if not r["ok"] and r["key"] != "dx"]
        if bad:
            lines.append("  disagreeing: " + "; ".join(f"{r['label']} = {r['formula']} (moves {r['moves']})" for r in bad))
        elif not self.ok:
            lines.append("  every individual term agrees with its finite differences")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    __repr__ = __str__


def _rows2d(x, normalized_shape):
    x = _np64(x)
    if normalized_shape is None:
        normalized_shape = x.shape[-1:]
    elif isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    k = len(normalized_shape)
    if tuple(x.shape[x.ndim - k:]) != tuple(normalized_shape):
        raise ValueError(
            f"check_layer_norm_terms: x of shape {tuple(x.shape)} does not end with normalized_shape "
            f"{tuple(normalized_shape)}"
        )
    D = int(np.prod(normalized_shape))
    return x.reshape(-1, D), D


def _fd_grad(f, a, h):
    """Central differences of the scalar ``f`` w.r.t. every element of ``a`` (perturbed in place)."""
    flat = a.reshape(-1)
    g = np.empty(flat.size)
    for j in range(flat.size):
        orig = flat[j]
        flat[j] = orig + h
        fp = f()
        flat[j] = orig - h
        fm = f()
        flat[j] = orig
        g[j] = (fp - fm) / (2 * h)
    return g.reshape(a.shape)


def check_layer_norm_terms(x, weight=None, bias=None, eps=1e-5, dy=None, terms_fn=None, dx=None,
                           normalized_shape=None, h=1e-6, atol=1e-6, rtol=1e-4, seed=0, *, dweight=None,
                           dbias=None) -> TermReport:
    """Check each term of a LayerNorm backward against its own finite-difference counterpart.

    Args:
        x: ``(*, *normalized_shape)`` array or Tensor (any float dtype; the check runs in float64).
        weight, bias: ``normalized_shape`` arrays (γ, β) or ``None``.
        eps: the LayerNorm epsilon (inside the square root).
        dy: the upstream gradient, ``x``'s shape (default: seeded standard normal; an all-ones
            ``dy`` would make ``dx`` zero and hide errors).
        terms_fn: ``(dy, x, weight, mean, rstd) -> dict`` on ``(N, D)`` rows with the keys of
            ``kernels.layer_norm.layer_norm_bwd_terms`` (the default): ``dx_direct``,
            ``dx_via_mean``, ``dx_via_rstd``, ``dx``, ``dweight``, ``dbias``.
        dx: optionally, the ``dx`` that the backward under test actually returned (``x``'s shape),
            checked to be the sum of the terms (and, if not, fitted as a combination of them).
        dweight, dbias: optionally, the backward's own ``dγ``, ``dβ``, checked against the terms'.
        normalized_shape: the trailing dims normalized over (default: the last one).
        h: the finite-difference step; atol, rtol: ``|analytical - numerical| <= atol + rtol·|numerical|``.

    Returns:
        a :class:`TermReport` (``print`` it; ``.failed`` lists the disagreeing terms).

    Raises:
        ValueError: ``x`` does not end with ``normalized_shape``; ``weight``/``bias``/``dy`` of the
            wrong size; ``terms_fn``'s dict lacks a key.
    """
    if terms_fn is None:
        terms_fn = layer_norm_bwd_terms
    x2, D = _rows2d(x, normalized_shape)                          # (N, D)
    N = x2.shape[0]
    w = None if weight is None else _np64(weight).reshape(-1)     # (D,)
    b = None if bias is None else _np64(bias).reshape(-1)         # (D,)
    for name, p in (("weight", w), ("bias", b)):
        if p is not None and p.size != D:
            raise ValueError(f"check_layer_norm_terms: {name} has {p.size} elements, expected {D} (= normalized size)")
    if dy is None:
        dy2 = np.random.default_rng(seed).standard_normal((N, D))  # (N, D)
    else:
        dy2 = _np64(dy).reshape(-1)
        if dy2.size != N * D:
            raise ValueError(f"check_layer_norm_terms: dy has {dy2.size} elements, x has {N * D}")
        dy2 = dy2.reshape(N, D)

    def stats(a):
        mean = a.mean(axis=1, keepdims=True)                                       # (N, 1)
        rstd = 1.0 / np.sqrt(((a - mean) ** 2).mean(axis=1, keepdims=True) + eps)  # (N, 1)
        return mean, rstd

    m0, r0 = stats(x2)
    x0 = x2.copy()
    got = terms_fn(dy2, x2.copy(), None if w is None else w.copy(), m0.copy(), r0.copy())
    missing = [k for k in LAYER_NORM_TERMS if k not in got]
    if missing:
        raise ValueError(f"check_layer_norm_terms: terms_fn returned no {missing}; it returned keys {sorted(got)}")

    gamma = np.ones(D) if w is None else w.copy()
    beta = np.zeros(D) if b is None else b.copy()
    xv = x0.copy()  # the variable that the differences move

    def loss(xc, rstd):
        return float((dy2 * (xc * rstd * gamma + beta)).sum())

    numerical = {
        "dx_direct": _fd_grad(lambda: loss(xv - m0, r0), xv, h),
        "dx_via_mean": _fd_grad(lambda: loss(x0 - xv.mean(axis=1, keepdims=True), r0), xv, h),
        "dx_via_rstd": _fd_grad(lambda: loss(x0 - m0, stats(xv)[1]), xv, h),
        "dx": _fd_grad(lambda: loss(xv - stats(xv)[0], stats(xv)[1]), xv, h),
        "dweight": _fd_grad(lambda: loss(x0 - m0, r0), gamma, h),
        "dbias": _fd_grad(lambda: loss(x0 - m0, r0), beta, h),
    }
    rows = []
    for key, (label, formula, moves) in LAYER_NORM_TERMS.items():
        ana = _np64(got[key]).reshape(numerical[key].shape)
        num = numerical[key]
        err = np.abs(ana - num)
        bad = err > atol + rtol * np.abs(num)
        k = int(np.argmax(err))
        idx = tuple(int(v) for v in np.unravel_index(k, num.shape))
        rows.append({"key": key, "label": label, "formula": formula, "moves": moves,
                     "max_abs_err": float(err.max()) if err.size else 0.0,
                     "max_rel_err": float((err / np.maximum(np.abs(num), 1e-300)).max()) if err.size else 0.0,
                     "index": idx, "analytical": float(ana.reshape(-1)[k]), "numerical": float(num.reshape(-1)[k]),
                     "ok": not bool(bad.any())})
    notes = []
    total = sum(_np64(got[k]) for k in ("dx_direct", "dx_via_mean", "dx_via_rstd"))
    if not np.allclose(_np64(got["dx"]), total, atol=atol, rtol=rtol):
        notes.append("terms_fn's dx is not the sum of its three terms")
    if dx is not None:
        dx2 = _np64(dx).reshape(N, D)
        if not np.allclose(dx2, total, atol=atol, rtol=rtol):
            worst = float(np.abs(dx2 - total).max())
            notes.append(f"the backward's dx differs from the sum of the terms by up to {worst:.3g}: the terms are "
                         "right, so the bug is in how the backward combines them. " + _attribute(dx2, got, atol))
    for key, actual in (("dweight", dweight), ("dbias", dbias)):
        if actual is not None and not np.allclose(_np64(actual).reshape(-1), _np64(got[key]).reshape(-1),
                                                  atol=atol, rtol=rtol):
            worst = float(np.abs(_np64(actual).reshape(-1) - _np64(got[key]).reshape(-1)).max())
            notes.append(f"the backward's {LAYER_NORM_TERMS[key][0]} differs from {LAYER_NORM_TERMS[key][1]} by up "
                         f"to {worst:.3g}")
    report = TermReport(rows, notes)
    report.numerical = numerical
    report.analytical = {k: _np64(got[k]).reshape(numerical[k].shape) for k in LAYER_NORM_TERMS}
    return report


def _attribute(dx, terms, atol):
    """Fit ``dx ≈ c1·term1 + c2·term2 + c3·term3`` (least squares) and name the coefficients that are not 1.

    A term left out, sign-flipped or scaled in a fused backward shows up as its coefficient 0, -1
    or c; a residual that no combination explains says the error is of another kind.
    """
    keys = ("dx_direct", "dx_via_mean", "dx_via_rstd")
    A = np.stack([_np64(terms[k]).reshape(-1) for k in keys], axis=1)    # (N·D, 3)
    coef, *_ = np.linalg.lstsq(A, dx.reshape(-1), rcond=None)
    resid = float(np.abs(A @ coef - dx.reshape(-1)).max())
    coef = np.where(np.abs(coef) < 5e-4, 0.0, coef)  # print a dropped term as 0, not 1e-16
    fit = ""
    for n, (c, k) in enumerate(zip(coef, keys)):
        sign = ("-" if c < 0 else "") if n == 0 else (" - " if c < 0 else " + ")
        fit += f"{sign}{abs(c):.3g}·{LAYER_NORM_TERMS[k][0].replace('dx ', '')}"
    if resid > max(10 * atol, 1e-6 * float(np.abs(dx).max(initial=0))):
        return f"No combination of the terms explains it (best fit dx ≈ {fit}, residual {resid:.3g})."
    off = [f"{LAYER_NORM_TERMS[k][0]} (coefficient {c:.3g}, expected 1)" for c, k in zip(coef, keys) if abs(c - 1) > 1e-3]
    return f"It behaves like dx = {fit}: " + ("; ".join(off) if off else "every coefficient is 1") + "."


def layer_norm_term_check(ctx) -> TermReport:
    """``term_check`` for a LayerNorm node that saved ``(x, weight, ...)`` and set ``ctx.axes``, ``ctx.eps``.

    Runs the node's own backward on a random ``dy`` (the graph must be retained, as ``gradcheck``
    does) and checks the library's terms, plus the node's ``dx`` against their sum; a LayerNorm
    ``Function`` can adopt it with ``term_check = staticmethod(layer_norm_term_check)``.
    """
    saved = ctx.saved_tensors
    x, weight = saved[0], saved[1]
    axes = tuple(getattr(ctx, "axes", (x.ndim - 1,)))
    k = len(axes)
    dy = np.random.default_rng(0).standard_normal(x.shape)                 # (B, L, D)
    xp = backend.get_array_module(x.array)
    with no_grad():
        grads = ctx.apply_backward((Tensor._from_op(xp.asarray(dy).astype(x.dtype)),))
    dx, dweight, dbias = grads[0], grads[1], grads[2]
    last = tuple(range(x.ndim - k, x.ndim))

    def move(a):
        return np.moveaxis(_np64(a), axes, last)                          # normalized axes last

    xm = move(x)
    return check_layer_norm_terms(xm, weight, eps=ctx.eps, dy=move(dy), dx=move(dx), normalized_shape=xm.shape[-k:],
                                  dweight=dweight, dbias=dbias)  # None where the op has no γ / β


# Attached to the op, so that gradcheck finds it on the node (never by class name).
NativeLayerNorm.term_check = staticmethod(layer_norm_term_check)
