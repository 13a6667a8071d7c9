"""At least ten typical mistakes planted in each of the other nine exercises (LayerNorm's are in
test_apps_exercises.py): each fails with exit 1 and the wrong output named, and where the grader's
term fit or catalogue can tell, the mistake named too."""

import math
import pathlib

import numpy as np
import pytest

from minitorch_ln.apps.exercises import check, get, load_function

SOLUTIONS = pathlib.Path(__file__).parent / "exercise_solutions"


def sol(name):
    return load_function(name, SOLUTIONS / f"{get(name).function}.py")


def _norm(x, axis, eps, ddof=0):
    mean = x.mean(axis=axis, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(axis=axis, ddof=ddof, keepdims=True) + eps)
    return rstd, (x - mean) * rstd


# --------------------------------------------------------------------------- batch_norm: axis 0

def bn(dy, x, w, eps, t2=1.0, t3=1.0, ddof=0, weight=True, dw=None, db=None):
    N = x.shape[0]
    rstd, xhat = _norm(x, 0, eps, ddof)
    g = dy * w if weight else dy
    dx = rstd * (g - t2 * g.sum(0) / N - t3 * xhat * (g * xhat).sum(0) / N)
    return dx, (dy * xhat).sum(0) if dw is None else dw, dy.sum(0) if db is None else db


BATCH_NORM = [
    (lambda dy, x, w, e: bn(dy, x, w, e, t2=0), ["dx"], "term 2 (-rstd·mean(dxhat): through the mean) is missing"),
    (lambda dy, x, w, e: bn(dy, x, w, e, t3=0), ["dx"], "term 3 (-rstd·xhat·mean(dxhat·xhat): through rstd"),
    (lambda dy, x, w, e: bn(dy, x, w, e, t3=-1), ["dx"], "has the wrong sign"),
    (lambda dy, x, w, e: bn(dy, x, w, e, t2=x.shape[0]), ["dx"], "a sum where a mean belongs in term 2"),
    (lambda dy, x, w, e: bn(dy, x, w, e, ddof=1), ["dx", "dweight"], "the unbiased variance"),
    (lambda dy, x, w, e: bn(dy, x, w, e, weight=False), ["dx"], "forgot the weight"),
    (lambda dy, x, w, e: bn(dy, x, w, e, dw=(dy * x).sum(0)), ["dweight"], "dweight = Σ dy·x"),
    (lambda dy, x, w, e: bn(dy, x, w, e, db=dy.mean(0)), ["dbias"], "a mean over rows where a sum belongs"),
    (lambda dy, x, w, e: bn(dy, x, w, e, dw=dy.sum(0)), ["dweight"], "dweight without xhat"),
    (lambda dy, x, w, e: tuple(-a if i == 0 else a for i, a in enumerate(bn(dy, x, w, e))), ["dx"], "wrong sign"),
    (lambda dy, x, w, e: bn(dy.T.T, x, w, e, t2=0, t3=0), ["dx"], "only the direct term"),
]

# --------------------------------------------------------------------------- rms_norm


def rms(dy, x, w, eps, t2=1.0, weight=True, dw=None, outside=False):
    ms = (x * x).mean(1, keepdims=True)
    r = 1.0 / (np.sqrt(ms) + eps) if outside else 1.0 / np.sqrt(ms + eps)
    xhat = x * r
    g = dy * w if weight else dy
    return r * (g - t2 * xhat * (g * xhat).mean(1, keepdims=True)), (dy * xhat).sum(0) if dw is None else dw


RMS_NORM = [
    (lambda dy, x, w, e: rms(dy, x, w, e, t2=0), ["dx"], "term 2 (-rstd·xhat·mean(dxhat·xhat): through rstd) is missing"),
    (lambda dy, x, w, e: rms(dy, x, w, e, t2=-1), ["dx"], "has the wrong sign"),
    (lambda dy, x, w, e: rms(dy, x, w, e, t2=x.shape[1]), ["dx"], "is scaled by 8"),
    (lambda dy, x, w, e: rms(dy, x, w, e, weight=False), ["dx"], "forgot the weight"),
    (lambda dy, x, w, e: rms(dy, x, w, e, outside=True), ["dx", "dweight"], "eps outside the square root"),
    (lambda dy, x, w, e: rms(dy, x, w, e, dw=(dy * x).sum(0)), ["dweight"], "dweight = Σ dy·x"),
    (lambda dy, x, w, e: rms(dy, x, w, e, dw=dy.sum(0)), ["dweight"], "forgot xhat"),
    (lambda dy, x, w, e: rms(dy, x, w, e, dw=(dy * x * (x * x + e).mean(1, keepdims=True) ** -0.5).mean(0)),
     ["dweight"], "a mean over rows where a sum belongs"),
    (lambda dy, x, w, e: (-rms(dy, x, w, e)[0], rms(dy, x, w, e)[1]), ["dx"], "the whole dx has the wrong sign"),
    (lambda dy, x, w, e: (rms(dy, x, w, e)[0] - rms(dy, x, w, e)[0].mean(1, keepdims=True), rms(dy, x, w, e)[1]),
     ["dx"], ""),
    (lambda dy, x, w, e: (rms(dy, x, w, e)[0] / (x * x + e).mean(1, keepdims=True) ** -0.5, rms(dy, x, w, e)[1]),
     ["dx"], "forgot rstd in front of dx"),
]

# --------------------------------------------------------------------------- group_norm


def gn(dy, x, G, w, eps, t2=1.0, t3=1.0, ddof=0, weight=True, dw=None, db=None):
    N, C, L = x.shape
    rstd, xhat = _norm(x.reshape(N, G, -1), 2, eps, ddof)
    g = ((dy * w[:, None]) if weight else dy).reshape(N, G, -1)
    dx = rstd * (g - t2 * g.mean(2, keepdims=True) - t3 * xhat * (g * xhat).mean(2, keepdims=True))
    xh = xhat.reshape(N, C, L)
    return (dx.reshape(N, C, L), (dy * xh).sum((0, 2)) if dw is None else dw,
            dy.sum((0, 2)) if db is None else db)


GROUP_NORM = [
    (lambda dy, x, G, w, e: gn(dy, x, G, w, e, t2=0), ["dx"], "term 2 (-rstd·mean(dxhat): through the mean) is missing"),
    (lambda dy, x, G, w, e: gn(dy, x, G, w, e, t3=0), ["dx"], "term 3"),
    (lambda dy, x, G, w, e: gn(dy, x, G, w, e, t2=-1), ["dx"], "has the wrong sign"),
    (lambda dy, x, G, w, e: gn(dy, x, G, w, e, t3=x.shape[1] // G * x.shape[2]), ["dx"], "a sum where a mean belongs"),
    (lambda dy, x, G, w, e: gn(dy, x, G, w, e, ddof=1), ["dx", "dweight"], "the unbiased variance"),
    (lambda dy, x, G, w, e: gn(dy, x, G, w, e, weight=False), ["dx"], "forgot the weight"),
    (lambda dy, x, G, w, e: gn(dy, x, G, w, e, dw=(dy * x).sum((0, 2))), ["dweight"], "dweight = Σ dy·x"),
    (lambda dy, x, G, w, e: gn(dy, x, G, w, e, db=dy.mean((0, 2))), ["dbias"], "a mean over rows"),
    (lambda dy, x, G, w, e: gn(dy, x, G, w, e, db=-dy.sum((0, 2))), ["dbias"], "the sign of dbias is flipped"),
    (lambda dy, x, G, w, e: gn(dy, x, G, w, e, dw=dy.sum((0, 2))), ["dweight"], "dweight without xhat"),
    (lambda dy, x, G, w, e: gn(dy, x, 1, w, e), ["dx", "dweight"], ""),  # one group where G belong
]

# --------------------------------------------------------------------------- softmax


def sm(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


SOFTMAX = [
    (lambda dy, x: sm(x) * dy, ["dx"], "term 2 (-y·Σ(y·dy): through the normalizer) is missing"),
    (lambda dy, x: sm(x) * (dy + (sm(x) * dy).sum(1, keepdims=True)), ["dx"], "has the wrong sign"),
    (lambda dy, x: sm(x) * (dy - (sm(x) * dy).mean(1, keepdims=True)), ["dx"], "a mean"),
    (lambda dy, x: sm(x) * (1 - sm(x)) * dy, ["dx"], "only the diagonal of the Jacobian"),
    (lambda dy, x: dy - (sm(x) * dy).sum(1, keepdims=True), ["dx"], "forgot y in front"),
    (lambda dy, x: sm(x) * (dy - dy.sum(1, keepdims=True)), ["dx"], "Σ dy where Σ y·dy belongs"),
    (lambda dy, x: sm(x) * (dy - (sm(x) * dy).sum(0, keepdims=True)), ["dx"], "summed over the wrong axis"),
    (lambda dy, x: -sm(x) * (dy - (sm(x) * dy).sum(1, keepdims=True)), ["dx"], "the whole dx has the wrong sign"),
    (lambda dy, x: dy - sm(x) * dy.sum(1, keepdims=True), ["dx"], "the log-softmax backward"),
    (lambda dy, x: x * (dy - (x * dy).sum(1, keepdims=True)), ["dx"], "used x where y belongs"),
    (lambda dy, x: (np.exp(x) / np.exp(x).sum(1, keepdims=True)) * dy, ["dx"], "term 2"),
]

# --------------------------------------------------------------------------- cross_entropy


def onehot(t, C):
    return np.eye(C)[t]


CROSS_ENTROPY = [
    (lambda g, z, t: g * (sm(z) - onehot(t, z.shape[1])), ["dlogits"], "forgot to divide by N"),
    (lambda g, z, t: g * sm(z) / len(z), ["dlogits"], "term 2 (-onehot(target)·dloss/N) is missing"),
    (lambda g, z, t: g * (onehot(t, z.shape[1]) - sm(z)) / len(z), ["dlogits"], "the sign is flipped"),
    (lambda g, z, t: (sm(z) - onehot(t, z.shape[1])) / len(z), ["dlogits"], "forgot dloss"),
    (lambda g, z, t: g * (z - onehot(t, z.shape[1])) / len(z), ["dlogits"], "used the logits"),
    (lambda g, z, t: g * (np.log(sm(z)) - onehot(t, z.shape[1])) / len(z), ["dlogits"], "used log softmax"),
    (lambda g, z, t: g * (sm(z) - onehot(t, z.shape[1])) / z.shape[1], ["dlogits"], "divided by C instead of N"),
    (lambda g, z, t: g * (sm(z) - 1) * onehot(t, z.shape[1]) / len(z), ["dlogits"], "only the target column"),
    (lambda g, z, t: g * (sm(z) - onehot((t + 1) % z.shape[1], z.shape[1])) / len(z), ["dlogits"], ""),
    (lambda g, z, t: g * (sm(z.T).T - onehot(t, z.shape[1])) / len(z), ["dlogits"], ""),  # softmax over the batch
    (lambda g, z, t: g * (sm(z) - onehot(t, z.shape[1])).mean(0, keepdims=True) * np.ones_like(z), ["dlogits"], ""),
]

# --------------------------------------------------------------------------- linear

LINEAR = [
    (lambda dy, x, w: (dy @ w, x.T @ dy, dy.sum(0)), ["dweight"], "dweight transposed"),
    (lambda dy, x, w: (dy @ w.T, dy.T @ x, dy.sum(0)), ["dx"], "dx with the weight transposed"),
    (lambda dy, x, w: (dy @ w, dy.T @ x, dy.mean(0)), ["dbias"], "dbias is a mean"),
    (lambda dy, x, w: (dy @ w, dy.T @ x / len(x), dy.sum(0)), ["dweight"], "dweight is a mean"),
    (lambda dy, x, w: (-(dy @ w), dy.T @ x, dy.sum(0)), ["dx"], "the sign of dx is flipped"),
    (lambda dy, x, w: (dy @ w, x.T @ dy * -1, dy.sum(0)), ["dweight"], ""),
    (lambda dy, x, w: (dy @ w, dy.T @ x, np.zeros(dy.shape[1])), ["dbias"], "dbias is zero"),
    (lambda dy, x, w: (dy @ w, dy.T @ x, dy.sum(1)), ["dbias"], "dbias has shape"),
    (lambda dy, x, w: (dy @ w, -(dy.T @ x), dy.sum(0)), ["dweight"], "the sign of dweight is flipped"),
    (lambda dy, x, w: (dy @ np.linalg.pinv(w).T, dy.T @ x, dy.sum(0)), ["dx"], ""),
    (lambda dy, x, w: (dy @ w, dy.T @ x, dy.sum(0) * len(x)), ["dbias"], ""),
]

# --------------------------------------------------------------------------- gelu

_erf = np.vectorize(math.erf, otypes=[np.float64])


def Phi(x):
    return 0.5 * (1 + _erf(x / math.sqrt(2)))


def phi(x):
    return np.exp(-x * x / 2) / math.sqrt(2 * math.pi)


GELU = [
    (lambda dy, x: dy * Phi(x), ["dx"], "term 2 (dy·x·φ(x): the derivative of Φ) is missing"),
    (lambda dy, x: dy * x * phi(x), ["dx"], "term 1 (dy·Φ(x)) is missing"),
    (lambda dy, x: dy * (Phi(x) - x * phi(x)), ["dx"], "has the wrong sign"),
    (lambda dy, x: -dy * (Phi(x) + x * phi(x)), ["dx"], "the whole dx has the wrong sign"),
    (lambda dy, x: dy * (Phi(x) + x * np.exp(-x * x / 2)), ["dx"], "φ without 1/sqrt(2π)"),
    (lambda dy, x: dy * (0.5 * (1 + _erf(x)) + x * phi(x)), ["dx"], "Φ from erf(x) without the 1/sqrt(2)"),
    (lambda dy, x: Phi(x) + x * phi(x), ["dx"], "forgot dy"),
    (lambda dy, x: dy * (Phi(x) + phi(x)), ["dx"], ""),
    (lambda dy, x: dy * x * Phi(x), ["dx"], ""),  # the forward, not its derivative
    (lambda dy, x: dy * (0.5 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
                         + 0.5 * x * (1 - np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)) ** 2)
                         * math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x ** 2)), ["dx"], "the tanh approximation"),
    (lambda dy, x: dy * (1 / (1 + np.exp(-1.702 * x))) * (1 + 1.702 * x * (1 - 1 / (1 + np.exp(-1.702 * x)))),
     ["dx"], "the sigmoid approximation"),
]

# --------------------------------------------------------------------------- embedding


def emb_last_wins(dy, idx, w):
    dw = np.zeros_like(w)
    dw[idx] += dy  # fancy-index += keeps one of the repeats
    return dw


def emb_mean(dy, idx, w):
    dw = sol("embedding")(dy, idx, w)
    return dw / np.maximum(np.bincount(idx, minlength=len(w)), 1)[:, None]


EMBEDDING = [
    (emb_last_wins, ["dweight"], "repeated indices not accumulated"),
    (emb_mean, ["dweight"], "a mean over repeats"),
    (lambda dy, idx, w: -sol("embedding")(dy, idx, w), ["dweight"], "the sign is flipped"),
    (lambda dy, idx, w: np.where(np.bincount(idx, minlength=len(w))[:, None] > 0, sol("embedding")(dy, idx, w), w),
     ["dweight"], "rows never looked up are not zero"),
    (lambda dy, idx, w: sol("embedding")(dy, idx, w) * np.bincount(idx, minlength=len(w))[:, None], ["dweight"],
     "scaled by the count"),
    (lambda dy, idx, w: np.broadcast_to(dy.sum(0), w.shape).copy(), ["dweight"], "every row gets Σ dy"),
    (lambda dy, idx, w: dy, ["dweight"], "dweight has shape"),
    (lambda dy, idx, w: w, ["dweight"], ""),
    (lambda dy, idx, w: sol("embedding")(dy, (idx + 1) % len(w), w), ["dweight"], ""),  # off by one
    (lambda dy, idx, w: sol("embedding")(dy, idx, w) / len(idx), ["dweight"], ""),
    (lambda dy, idx, w: sol("embedding")(dy[::-1], idx, w), ["dweight"], ""),  # rows of dy misaligned
]

# --------------------------------------------------------------------------- attention


def attn(dout, q, k, v, causal=True, upper=False, power=1.0, full=True, tp_v=True, tp_k=True, dq_with=None):
    T, d = q.shape[1], q.shape[2]
    s = 1.0 / math.sqrt(d)
    S = q @ k.transpose(0, 2, 1) * s
    if causal:
        m = np.triu(np.ones((T, T), bool), 1)
        S = np.where(m.T if upper else m, -np.inf, S)
    P = np.exp(S - S.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    dP = dout @ v.transpose(0, 2, 1)
    dS = P * (dP - (P * dP).sum(-1, keepdims=True)) if full else P * dP
    f = s ** power
    dq = dS @ (k if dq_with is None else dq_with) * f
    dk = (dS.transpose(0, 2, 1) if tp_k else dS) @ q * f
    dv = (P.transpose(0, 2, 1) if tp_v else P) @ dout
    return dq, dk, dv


ATTENTION = [
    (lambda o, q, k, v: attn(o, q, k, v, causal=False), ["dq", "dk", "dv"], "forgot the causal mask"),
    (lambda o, q, k, v: attn(o, q, k, v, upper=True), ["dq", "dk", "dv"], "masked the wrong triangle"),
    (lambda o, q, k, v: attn(o, q, k, v, power=0.0), ["dq", "dk"], "forgot the 1/sqrt(d) scale"),
    (lambda o, q, k, v: attn(o, q, k, v, power=2.0), ["dq", "dk"], "scale twice"),
    (lambda o, q, k, v: attn(o, q, k, v, full=False), ["dq", "dk"], "without the Σ P·dP term"),
    (lambda o, q, k, v: attn(o, q, k, v, tp_v=False), ["dv"], "dv = P dout"),
    (lambda o, q, k, v: attn(o, q, k, v, tp_k=False), ["dk"], "dk = dS q"),
    (lambda o, q, k, v: (-attn(o, q, k, v)[0], *attn(o, q, k, v)[1:]), ["dq"], "the sign of dq is flipped"),
    (lambda o, q, k, v: attn(o, q, k, v, dq_with=v), ["dq"], "dq = dS v"),
    (lambda o, q, k, v: (attn(o, q, k, v)[0], attn(o, q, k, v)[2], attn(o, q, k, v)[1]), ["dk", "dv"], ""),
    (lambda o, q, k, v: (*attn(o, q, k, v)[:2], attn(o, q, k, v)[2] * 0.5), ["dv"], ""),
]

CASES = [(name, i, *m) for name, table in (
    ("batch_norm", BATCH_NORM), ("rms_norm", RMS_NORM), ("group_norm", GROUP_NORM), ("softmax", SOFTMAX),
    ("cross_entropy", CROSS_ENTROPY), ("linear", LINEAR), ("gelu", GELU), ("embedding", EMBEDDING),
    ("attention", ATTENTION)) for i, m in enumerate(table)]


def test_at_least_ten_mistakes_each():
    counts = {}
    for name, *_ in CASES:
        counts[name] = counts.get(name, 0) + 1
    assert len(counts) == 9 and min(counts.values()) >= 10, counts


@pytest.mark.parametrize("name, i, student, outputs, says", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_mistake_fails_naming_the_output(name, i, student, outputs, says):
    with np.errstate(all="ignore"):
        result = check(name, student)
    text = str(result)
    assert result.exit_code == 1, text
    assert result.grade.wrong == outputs, text
    for o in outputs:
        assert f"WRONG: {o}" in text, text
    assert says in text, text
