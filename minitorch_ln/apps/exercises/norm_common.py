"""What LayerNorm, BatchNorm and GroupNorm's exercises share: the three terms of ``dx`` and the mistakes.

Each of the three normalizes groups of ``n`` numbers (a row, a column, a group of channels) by
their mean and ``rstd = 1/sqrt(var + eps)``; with ``dxhat = dy · weight`` the input gradient is
the same three terms over each group (docs/layernorm_backward.md)::

    dx = rstd · dxhat  -  rstd · mean(dxhat)  -  rstd · xhat · mean(dxhat · xhat)
         term 1           term 2: the mean       term 3: rstd (the variance)

An exercise gives ``pieces(inputs, unbiased=False, eps_outside=False, weight=True)``, a dict of
NumPy arrays in ``x``'s shape (``t1``, ``t2``, ``t3``, ``rstd``) plus ``n`` (the group size),
``m`` (how many rows ``dweight`` sums over), ``dweight``, ``dbias`` and ``dweight_x`` (``Σ dy·x``);
:func:`norm_mistakes` turns it into the shared catalogue.
"""

from __future__ import annotations

import numpy as np

from .spec import Mistake, norm_stats, normal

__all__ = ["TERM1", "TERM2", "TERM3", "group_terms", "norm_hints", "norm_mistakes", "norm_terms"]

TERM1 = "term 1 (rstd·dxhat: through xhat, mean and rstd held fixed)"
TERM2 = "term 2 (-rstd·mean(dxhat): through the mean)"
TERM3 = "term 3 (-rstd·xhat·mean(dxhat·xhat): through rstd, the variance)"


def affine_inputs(rng, N, D, mean=0.0, std=1.0, eps=1e-5) -> dict:
    """One case of the LayerNorm and BatchNorm exercises: ``dy``, ``x`` ``(N, D)`` (``x`` of the given mean and
    spread), ``weight`` around 1 and ``bias`` ``(D,)``, and ``eps``, drawn from ``rng`` in that order."""
    return {"dy": normal(rng, (N, D)), "x": normal(rng, (N, D), mean, std),
            "weight": normal(rng, (D,), 1.0, 0.5), "bias": normal(rng, (D,)), "eps": eps}


def group_terms(xg, dxhatg, axis, eps, unbiased=False, eps_outside=False):
    """``(xhat, rstd, t1, t2, t3)`` for groups along ``axis`` of the grouped arrays."""
    mean, rstd = norm_stats(xg, axis, eps, unbiased, eps_outside)           # (.., 1, ..)
    xhat = (xg - mean) * rstd                                               # like xg
    t1 = rstd * dxhatg
    t2 = -rstd * dxhatg.mean(axis=axis, keepdims=True) * np.ones_like(xg)
    t3 = -rstd * xhat * (dxhatg * xhat).mean(axis=axis, keepdims=True)
    return xhat, rstd, t1, t2, t3


def norm_terms(pieces):
    def terms(inp):
        p = pieces(inp)
        return {"dx": {TERM1: p["t1"], TERM2: p["t2"], TERM3: p["t3"]},
                "dweight": {"Σ dy·xhat": p["dweight"]}, "dbias": {"Σ dy": p["dbias"]}}
    return terms


def norm_hints(pieces):
    def hints(inp):
        p = pieces(inp)
        n, m = p["n"], p["m"]
        return {float(n): f"a sum where a mean over the {n} normalized values belongs",
                round(1.0 / n, 3): "a mean where a sum belongs",
                round(1.0 / m, 3): f"a mean over the {m} rows where a sum belongs"}
    return hints


def norm_mistakes(pieces):
    def dx(p, t1=1, t2=1, t3=1):
        return t1 * p["t1"] + t2 * p["t2"] + t3 * p["t3"]

    def on(fn, **kw):
        return lambda inp: fn(pieces(inp, **kw), inp)

    def whole(p, inp):
        return {"dx": dx(p), "dweight": p["dweight"]}

    return (
        Mistake("forgot the path through the mean (term 2)", on(lambda p, i: {"dx": dx(p, t2=0)})),
        Mistake("forgot the path through rstd (term 3)", on(lambda p, i: {"dx": dx(p, t3=0)})),
        Mistake("only the direct term: mean and rstd treated as constants", on(lambda p, i: {"dx": p["t1"]})),
        Mistake("the sign of the path through rstd (term 3) is flipped", on(lambda p, i: {"dx": dx(p, t3=-1)})),
        Mistake("the sign of the path through the mean (term 2) is flipped", on(lambda p, i: {"dx": dx(p, t2=-1)})),
        Mistake("the whole dx has the wrong sign", on(lambda p, i: {"dx": -dx(p)})),
        Mistake("a sum where a mean belongs in term 2", on(lambda p, i: {"dx": dx(p, t2=p["n"])})),
        Mistake("a sum where a mean belongs in term 3", on(lambda p, i: {"dx": dx(p, t3=p["n"])})),
        Mistake("the unbiased variance (divided by n - 1)", on(whole, unbiased=True)),
        Mistake("eps outside the square root (1/(sqrt(var) + eps))", on(whole, eps_outside=True)),
        Mistake("forgot the weight (dxhat = dy instead of dy·weight)", on(lambda p, i: {"dx": dx(p)}, weight=False)),
        Mistake("forgot rstd in front of dx", on(lambda p, i: {"dx": dx(p) / p["rstd"]})),
        Mistake("dweight = Σ dy·x (x where xhat belongs)", on(lambda p, i: {"dweight": p["dweight_x"]})),
        Mistake("dweight without xhat (Σ dy, which is dbias)", on(lambda p, i: {"dweight": p["dbias"]})),
        Mistake("a mean over rows where a sum belongs",
                on(lambda p, i: {"dweight": p["dweight"] / p["m"], "dbias": p["dbias"] / p["m"]})),
        Mistake("the sign of dweight is flipped", on(lambda p, i: {"dweight": -p["dweight"]})),
        Mistake("the sign of dbias is flipped", on(lambda p, i: {"dbias": -p["dbias"]})),
    )


def norm_probes(axis, group):
    """Probes that test the student's function against the terms, one path at a time.

    With ``weight = 1`` (so ``dxhat = dy``) and ``x`` of the random case, three upstream gradients
    built from ``x``'s own ``xhat`` switch terms on and off in every group:

    - ``dy ⟂ 1, xhat``: terms 2 and 3 vanish, the right ``dx`` is term 1, ``rstd·dy``;
    - ``dy`` constant in each group: terms 1 and 2 cancel (``xhat`` has mean 0, so term 3 vanishes),
      the right ``dx`` is 0: a nonzero answer has the path through the mean wrong;
    - ``dy ∝ xhat``: term 2 vanishes and terms 1 and 3 leave ``rstd·dy·eps/(var + eps)``.

    ``group`` names a group in the sentences (``"row"``, ``"column"``). Returns
    ``probes(inputs, run) -> [sentence]``, ``run(inputs) -> {output: array}`` calling the student.
    """
    def probes(inp, run):
        x, eps = inp["x"], inp["eps"]
        xhat, rstd, *_ = group_terms(x, np.zeros_like(x), axis, eps)
        rng = np.random.default_rng(1)
        r = rng.standard_normal(x.shape)
        r = r - r.mean(axis=axis, keepdims=True)                                        # ⟂ 1
        r = r - xhat * (r * xhat).sum(axis=axis, keepdims=True) / (xhat * xhat).sum(axis=axis, keepdims=True)
        c = rng.standard_normal(rstd.shape) * np.ones_like(x)                           # one number per group
        var_share = (xhat * xhat).mean(axis=axis, keepdims=True)                        # var / (var + eps)
        cases = [(f"dy ⟂ 1 and xhat in each {group} (only term 1 acts)", r, rstd * r, TERM1),
                 (f"dy constant in each {group} (terms 1 and 2 cancel: dx = 0)", c, 0.0 * c, TERM2),
                 (f"dy ∝ xhat in each {group} (term 2 vanishes; terms 1 and 3 nearly cancel)", c * xhat,
                  rstd * c * xhat * (1.0 - var_share), TERM3)]
        out = []
        for what, dy, right, term in cases:
            got = run({**inp, "dy": dy, "weight": np.ones_like(inp["weight"])})["dx"]
            err = float(np.abs(got - right).max() / max(float(np.abs(rstd * dy).max()), 1e-300))
            if err <= (1e-7 if got.dtype == np.float64 else 200 * float(np.finfo(got.dtype).eps)):  # its rounding
                out.append(f"probe {what}: right")
                continue
            out.append(f"probe {what}: wrong (off by {err:.2g} of rstd·dy): {term} is wrong"
                       + (", so rstd or dxhat is computed wrong; the other probes assume it right" if term == TERM1 else ""))
            if term == TERM1:
                break
        if all(o.endswith(": right") for o in out):
            out.append("every probe (all with weight = 1) is right: the terms are, so look at how weight enters "
                       "(dxhat = dy·weight)")
        return out
    return probes
