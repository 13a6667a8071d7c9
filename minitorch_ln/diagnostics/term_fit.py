"""Which term of a gradient formula is wrong: fit a gradient as a combination of the formula's terms.

A backward formula is often a sum of terms, one per path from the input to the loss (LayerNorm's
``dx = rstd·dxhat - rstd·mean(dxhat) - rstd·xhat·mean(dxhat·xhat)``, ``diagnostics/terms.py``;
softmax's ``dx = y·dy - y·Σ(y·dy)``). A backward that leaves a term out, flips its sign or sums
where a mean belongs returns ``c1·term1 + c2·term2 + ...`` with one coefficient 0, -1 or ``D``
instead of 1. :func:`fit_terms` finds the coefficients by least squares over several inputs (each
scaled to unit size, so no input dominates) and says which are not 1; a residual that no
combination explains means the error is of another kind. It reads only the numbers a function
returned, never its source.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TermFit", "fit_terms"]


class TermFit:
    """The outcome of :func:`fit_terms`.

    Attributes:
        coefficients: ``{term label: c}`` (a term that fits as 1 is right).
        residual: the largest misfit left, relative to the size of ``actual`` (0 for an exact fit).
        explained: True when the residual is small (``<= tol``): the combination *is* the answer.
        off: the labels of the terms whose coefficient is not 1 (only meaningful when ``explained``).
    """

    def __init__(self, coefficients, residual, tol, hints=None):
        self.coefficients = coefficients
        self.residual = residual
        self.explained = residual <= tol
        self.off = [k for k, c in coefficients.items() if abs(c - 1.0) > 1e-3]
        self._hints = hints or {}

    def formula(self) -> str:
        parts = []
        for n, (label, c) in enumerate(self.coefficients.items()):
            sign = ("-" if c < 0 else "") if n == 0 else (" - " if c < 0 else " + ")
            parts.append(f"{sign}{abs(c):.3g}·[{label}]")
        return "".join(parts)

    def describe(self) -> str:
        """One sentence per wrong term: ``term 2 (through the mean) is missing (coefficient 0, expected 1)``."""
        if not self.explained:
            return f"no combination of the formula's terms explains it (best fit {self.formula()}, " \
                   f"residual {self.residual:.2g})"
        if not self.off:
            return "it is the sum of the right terms"
        out = []
        for label in self.off:
            c = self.coefficients[label]
            if abs(c) < 1e-3:
                what = "is missing"
            elif abs(c + 1) < 1e-3:
                what = "has the wrong sign"
            else:
                what = f"is scaled by {c:.4g}"
                hint = self._hints.get(round(c, 3))
                if hint:
                    what += f" ({hint})"
            out.append(f"{label} {what} (coefficient {c:.3g}, expected 1)")
        return "; ".join(out)


def fit_terms(actual, terms, tol=1e-6, hints=None) -> TermFit:
    """Fit ``actual ≈ Σ c_k · terms[k]`` by least squares, over one input or several.

    Args:
        actual: an array, or a list of arrays (one per input case).
        terms: ``{label: array}`` or ``{label: [array per case]}``, each the shape of ``actual``.
        tol: the relative residual under which the fit counts as exact (raise it to the answer's
            precision, e.g. ``1e-5`` for float32); a coefficient under ``max(tol, 1e-6)`` counts as 0.
        hints: ``{rounded coefficient: explanation}`` for scale factors worth naming
            (``{8.0: "a sum where a mean over D = 8 belongs"}``).

    Returns:
        a :class:`TermFit`.

    Raises:
        ValueError: a term's shape differs from ``actual``'s, or the case counts differ.
    """
    cases = list(actual) if isinstance(actual, (list, tuple)) else [actual]
    cols = {k: (list(v) if isinstance(v, (list, tuple)) else [v]) for k, v in terms.items()}
    rows_a, rows_t = [], []
    for i, a in enumerate(cases):
        a = np.asarray(a, dtype=np.float64).reshape(-1)
        ts = []
        for k, v in cols.items():
            if len(v) != len(cases):
                raise ValueError(f"fit_terms: term {k!r} has {len(v)} cases, actual has {len(cases)}")
            t = np.asarray(v[i], dtype=np.float64).reshape(-1)
            if t.size != a.size:
                raise ValueError(f"fit_terms: term {k!r} has {t.size} elements in case {i}, actual has {a.size}")
            ts.append(t)
        scale = max(float(np.abs(a).max(initial=0.0)), max((float(np.abs(t).max(initial=0.0)) for t in ts), default=0.0))
        if not np.isfinite(scale) or scale == 0.0 or not np.isfinite(a).all():
            continue  # a case with nothing in it (or non-finite values) says nothing about the coefficients
        rows_a.append(a / scale)
        rows_t.append(np.stack(ts, axis=1) / scale)                       # (n, K)
    if not rows_a:
        return TermFit({k: float("nan") for k in cols}, float("inf"), tol, hints)
    A = np.concatenate(rows_t, axis=0)                                     # (n, K)
    b = np.concatenate(rows_a)                                             # (n,)
    coef, *_ = np.linalg.lstsq(A, b, rcond=None)
    resid = float(np.abs(A @ coef - b).max()) if b.size else 0.0
    coef = np.where(np.abs(coef) < max(1e-6, tol), 0.0, coef)  # 0 up to the answer's own rounding
    return TermFit({k: float(c) for k, c in zip(cols, coef)}, resid, tol, hints)
