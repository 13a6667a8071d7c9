"""No false alarms: correct backwards written in other styles than the reference solutions (the unrolled
chain rule, loops, explicit Jacobians, einsum, two passes) all pass the grader; one computed in float32 throughout
is right to float32 precision and is told only that float64 inputs want float64 answers."""

import math
import pathlib

import numpy as np
import pytest

from minitorch_ln.apps.exercises import EXERCISES, check, get, load_function

SOLUTIONS = pathlib.Path(__file__).parent / "exercise_solutions"


def solution(name):
    return load_function(name, SOLUTIONS / f"{get(name).function}.py")


def ln_unrolled(dy, x, w, eps):
    """Karpathy / Chainer style: every forward step differentiated in turn."""
    D = x.shape[1]
    mu = x.sum(1, keepdims=True) / D                        # (N, 1)
    xc = x - mu                                              # (N, D)
    var = (xc ** 2).sum(1, keepdims=True) / D                # (N, 1)
    std = np.sqrt(var + eps)                                 # (N, 1)
    istd = 1.0 / std                                         # (N, 1)
    xhat = xc * istd                                         # (N, D)
    dxhat = dy * w
    distd = (dxhat * xc).sum(1, keepdims=True)
    dstd = -distd / std ** 2
    dvar = dstd * 0.5 / np.sqrt(var + eps)
    dxc = dxhat * istd + 2.0 * xc / D * dvar
    dmu = -dxc.sum(1, keepdims=True)
    dx = dxc + dmu / D
    return dx, (dy * xhat).sum(0), dy.sum(0)


def ln_two_pass_rows(dy, x, w, eps):
    """Row by row, in two passes over each row: the statistics, then the gradient."""
    dx = np.empty_like(x)
    dweight = np.zeros_like(w)
    for n in range(x.shape[0]):
        row = x[n]
        mean = row.sum() / row.size
        var = ((row - mean) ** 2).sum() / row.size
        rstd = 1.0 / math.sqrt(var + eps)
        xhat = (row - mean) * rstd
        g = dy[n] * w
        dx[n] = rstd * (g - g.mean() - xhat * (g * xhat).mean())
        dweight += dy[n] * xhat
    return dx, dweight, dy.sum(0)


def bn_unrolled(dy, x, w, eps):
    N = x.shape[0]
    mu = x.mean(0)
    xc = x - mu
    var = (xc ** 2).mean(0)
    istd = 1.0 / np.sqrt(var + eps)
    dxhat = dy * w
    dvar = (dxhat * xc).sum(0) * -0.5 * istd ** 3
    dmu = -(dxhat * istd).sum(0) - 2.0 * dvar * xc.mean(0)
    dx = dxhat * istd + dvar * 2.0 * xc / N + dmu / N
    return dx, (dy * xc * istd).sum(0), dy.sum(0)


def rms_unrolled(dy, x, w, eps):
    D = x.shape[1]
    ms = (x ** 2).mean(1, keepdims=True)
    r = (ms + eps) ** -0.5
    dxhat = dy * w
    dr = (dxhat * x).sum(1, keepdims=True)
    dms = dr * -0.5 * (ms + eps) ** -1.5
    return dxhat * r + dms * 2.0 * x / D, (dy * x * r).sum(0)


def gn_loops(dy, x, num_groups, w, eps):
    N, C, _ = x.shape
    cg = C // num_groups
    dx, dw = np.empty_like(x), np.zeros_like(w)
    for n in range(N):
        for g in range(num_groups):
            sl = slice(g * cg, (g + 1) * cg)
            xs = x[n, sl]
            mean, rstd = xs.mean(), 1.0 / np.sqrt(xs.var() + eps)
            xhat = (xs - mean) * rstd
            d = dy[n, sl] * w[sl, None]
            dx[n, sl] = rstd * (d - d.mean() - xhat * (d * xhat).mean())
            dw[sl] += (dy[n, sl] * xhat).sum(1)
    return dx, dw, dy.sum((0, 2))


def softmax_jacobian(dy, x):
    y = np.exp(x - x.max(1, keepdims=True))
    y /= y.sum(1, keepdims=True)
    J = np.einsum("ni,ij->nij", y, np.eye(x.shape[1])) - np.einsum("ni,nj->nij", y, y)  # (N, D, D)
    return np.einsum("nij,ni->nj", J, dy)


def ce_loops(dloss, logits, target):
    out = np.zeros_like(logits)
    N = logits.shape[0]
    for i in range(N):
        z = logits[i] - logits[i].max()
        p = np.exp(z) / np.exp(z).sum()
        for c in range(logits.shape[1]):
            out[i, c] = dloss * (p[c] - (1.0 if c == target[i] else 0.0)) / N
    return out


def linear_einsum(dy, x, weight):
    return np.einsum("no,oi->ni", dy, weight), np.einsum("no,ni->oi", dy, x), np.einsum("no->o", dy)


def gelu_loops(dy, x):
    out = np.empty_like(x)
    for idx, v in np.ndenumerate(x):
        out[idx] = dy[idx] * (0.5 * (1 + math.erf(v / math.sqrt(2))) + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi))
    return out


def embedding_loop(dy, indices, weight):
    dw = np.zeros_like(weight)
    for i, idx in enumerate(indices):
        dw[idx] += dy[i]
    return dw


def embedding_onehot(dy, indices, weight):
    return np.eye(weight.shape[0])[indices].T @ dy


def attention_per_row(dout, q, k, v):
    B, T, d = q.shape
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    for b in range(B):
        for i in range(T):
            s = k[b, : i + 1] @ q[b, i] / math.sqrt(d)           # (i+1,) only the past
            p = np.exp(s - s.max())
            p /= p.sum()
            dv[b, : i + 1] += np.outer(p, dout[b, i])
            dp = v[b, : i + 1] @ dout[b, i]
            ds = p * (dp - p @ dp)
            dq[b, i] = ds @ k[b, : i + 1] / math.sqrt(d)
            dk[b, : i + 1] += np.outer(ds, q[b, i]) / math.sqrt(d)
    return dq, dk, dv


STYLES = [
    ("layer_norm", ln_unrolled), ("layer_norm", ln_two_pass_rows), ("batch_norm", bn_unrolled),
    ("rms_norm", rms_unrolled), ("group_norm", gn_loops), ("softmax", softmax_jacobian),
    ("cross_entropy", ce_loops), ("linear", linear_einsum), ("gelu", gelu_loops), ("embedding", embedding_loop),
    ("embedding", embedding_onehot), ("attention", attention_per_row),
]


@pytest.mark.parametrize("name, fn", STYLES, ids=[f.__name__ for _, f in STYLES])
def test_other_styles_pass(name, fn):
    result = check(name, fn)
    assert result.ok, str(result)


def _in_float32(fn):
    """The same solution computed in float32 throughout (inputs cast down, answers returned in float32)."""
    def wrapped(*args):
        args = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in args]
        out = fn(*args)
        return tuple(np.asarray(o, dtype=np.float32) for o in out) if isinstance(out, tuple) else \
            np.asarray(out, dtype=np.float32)
    return wrapped


def _value_rows_ok(result, output=None):
    return all(r["value_ok"] for r in result.grade.rows if output in (None, r["output"]))


@pytest.mark.parametrize("name", list(EXERCISES))
def test_float32_answers_to_float64_inputs_are_a_named_dtype_mistake(name):
    """A right backward computed in float32 throughout is right to float32's precision on every case
    (its values pass), but float64 inputs want float64 answers: the report names the dtype, nothing else."""
    result = check(name, _in_float32(solution(name)))
    text = str(result)
    assert not result.ok and result.grade.wrong == list(get(name).outputs), text
    assert _value_rows_ok(result), text
    for o in get(name).outputs:
        assert f"WRONG: {o} is float32 for float64 inputs" in text and f"WRONG: {o} (max rel_error" not in text
    assert all(r["ok"] for r in result.grade.rows if r["case"] == "float32 rounding"), text


def test_float32_unrolled_layer_norm_is_right_but_for_its_dtype():
    result = check("layer_norm", _in_float32(ln_unrolled))
    assert _value_rows_ok(result) and "is float32 for float64 inputs" in str(result)


def test_float32_mistake_still_caught():
    def no_mean_term(dy, x, w, eps):
        dx, dweight, dbias = solution("layer_norm")(dy, x, w, eps)
        rstd = 1.0 / np.sqrt(x.var(1, keepdims=True) + eps)
        return dx + rstd * (dy * w).mean(1, keepdims=True), dweight, dbias

    result = check("layer_norm", _in_float32(no_mean_term))
    assert not _value_rows_ok(result, "dx") and _value_rows_ok(result, "dweight"), str(result)
    assert "WRONG: dx (max rel_error" in str(result)
