"""A gradient check for float32 and float16 that explains rounding instead of reporting it as failure.

A plain gradient check in float32 fails on correct code: central differences with step ``h`` lose
``u·|f|/h`` to rounding (``u`` = 6e-8 in float32: at ``h = 1e-6`` that is 0.06·|f|), and a fixed
tolerance cannot tell rounding from a wrong formula. This check separates the two:

* the **analytical** Jacobian ``J_w`` runs in the working dtype (the code under test, as it runs);
* the **numerical** Jacobian ``J_num`` runs in float64 on the same input values (exactly
  representable: a float32 value is a float64 value), with step ``h``;
* the **expected error** of each entry ``(k, j)`` is derived, not chosen::

      expected = safety · (u · max_j |J[k, :]|  +  |J(x ⊙ (1 + u·s)) - J(x)|[k, j])  +  e_fd

  - ``u · max_j |J[k, :]|``: rounding the backward's own arithmetic to ``u`` (the dtype's unit
    roundoff, half its machine epsilon) relative to the scale of the row it computes (the max over
    *all* checked inputs: one backward makes row ``k`` of each from the same intermediates);
  - ``|J(x ⊙ (1 + u·s)) - J(x)|``: how much the exact Jacobian moves when every input is perturbed
    by its rounding, ``u·|x|`` with random signs ``s`` (two draws, the larger kept). This is where
    the inputs' magnitude enters: LayerNorm on ``1e3 + noise`` in float32 is ill-conditioned and
    this term says so; both Jacobians here are float64;
  - ``e_fd = u₆₄ · (max|f| + |J|·|x|) / h``: the float64 differences' own rounding (the truncation
    error ``h²·|f'''|/6`` is below it for ``h = 1e-6``).

An entry fails when ``|J_w - J_num| > expected``. The model follows the standard forward/backward
error analysis (Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 1-3: a backward-stable
computation is exact for inputs perturbed by ``O(u)``); ``safety`` absorbs the constants. Where the
expected error reaches the Jacobian's own size the report says the check is *inconclusive*: at
that precision a wrong gradient could not be told from a right one.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..tensor import Tensor
from .jacobian import GradcheckError, _analytical_jacobians, _as_tuple, _locate, _numerical_jacobian, _outputs, _to_numpy

__all__ = ["PrecisionReport", "precision_report"]

_U64 = float(np.finfo(np.float64).eps) / 2


def _cast64(inputs, signs=None, u=0.0):
    """Float64 leaf copies of the float Tensors in ``inputs``, optionally scaled by ``1 + u·signs``."""
    out = []
    for k, a in enumerate(inputs):
        if isinstance(a, Tensor) and a.dtype.kind == "f":
            data = a.array.astype(np.float64)
            if signs is not None:
                xp = backend.get_array_module(data)
                data = data * (1.0 + u * xp.asarray(signs[k]))  # each value moved by its rounding u·|x|
            out.append(Tensor._from_op(data, requires_grad=a.requires_grad))
        else:
            out.append(a)
    return tuple(out)


def _nudge(inputs, rng):
    """Copies of the float Tensors in ``inputs``, each value moved by one ulp up or down (same dtype)."""
    out = []
    for a in inputs:
        if isinstance(a, Tensor) and a.dtype.kind == "f":
            xp = backend.get_array_module(a.array)
            towards = xp.asarray(rng.choice([-np.inf, np.inf], size=a.shape)).astype(a.dtype)
            out.append(Tensor._from_op(xp.nextafter(a.array, towards), requires_grad=a.requires_grad))
        else:
            out.append(a)
    return tuple(out)


class PrecisionReport:
    """The outcome of :func:`precision_report`, one entry per checked input.

    Attributes:
        ok: every entry within its expected error.
        failed: indices of the inputs with an entry beyond it.
        per_input: ``{i: dict(dtype, u, max_abs_err, max_expected, max_ratio, n_bad, n_plain_bad,
            inconclusive, x_scale, j_scale)}``; ``max_ratio`` = worst observed / expected error.
        worst: the worst entries of the first failing input (dicts as ``GradcheckError.worst``, with
            ``expected``).
        jacobians: ``{i: (analytical in the working dtype, numerical in float64)}``.
    """

    def __init__(self, per_input, worst, jacobians, safety, eps, lines):
        self.per_input = per_input
        self.worst = worst
        self.jacobians = jacobians
        self.safety = safety
        self.eps = eps
        self._lines = lines

    @property
    def failed(self) -> list:
        return [i for i, r in self.per_input.items() if r["n_bad"]]

    @property
    def ok(self) -> bool:
        return not self.failed

    def __str__(self) -> str:
        return "\n".join(self._lines)

    __repr__ = __str__


def precision_report(fn, inputs, eps=1e-6, safety=10.0, seed=0, top=5) -> PrecisionReport:
    """Check ``fn``'s gradients in their working dtype against float64 differences, with derived tolerances.

    Args:
        fn: a function of Tensors returning a Tensor or tuple of Tensors; it must also run on
            float64 copies of the inputs (no hard-coded dtypes inside).
        inputs: a Tensor or tuple; Tensors with ``requires_grad`` are checked (any float dtype).
        eps: the float64 finite-difference step ``h``.
        safety: the factor on the derived rounding error (see the module docstring).
        seed: seeds the random signs of the input perturbation.
        top: rows in the worst-entries table of a failing input.

    Returns:
        a :class:`PrecisionReport`; ``print`` it for the explanation.

    Raises:
        ValueError: no input requires grad, ``fn`` returns no float Tensor, or ``safety <= 0``.
    """
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("precision_report: no input requires grad; set requires_grad=True on the inputs to check")
    if not safety > 0:
        raise ValueError(f"precision_report: safety must be > 0, got {safety!r}")
    outputs = _outputs(fn, inputs)
    if not outputs:
        raise ValueError("precision_report: fn returned no floating point Tensor")
    dtypes = [np.dtype(a.dtype) for a in inputs if isinstance(a, Tensor) and a.dtype.kind == "f"]
    dtypes += [np.dtype(o.dtype) for o in outputs]
    work = max(dtypes, key=lambda d: np.finfo(d).eps)          # the least precise dtype involved
    u = float(np.finfo(work).eps) / 2

    ana_w = _analytical_jacobians(outputs, inputs, diff_idx)   # in the working dtype
    in64 = _cast64(inputs)
    out64 = _outputs(fn, in64)
    ana64 = _analytical_jacobians(out64, in64, diff_idx)
    f_scale = max((float(np.abs(_to_numpy(o.array)).max(initial=0)) for o in out64), default=0.0)
    rng = np.random.default_rng(seed)
    moved = {i: np.zeros_like(ana64[i]) for i in diff_idx}
    for _ in range(2):
        signs = [rng.choice([-1.0, 1.0], size=a.shape) if isinstance(a, Tensor) and a.dtype.kind == "f" else None
                 for a in inputs]
        pert = _cast64(inputs, signs, u)
        ana_p = _analytical_jacobians(_outputs(fn, pert), pert, diff_idx)
        for i in diff_idx:
            moved[i] = np.maximum(moved[i], np.abs(ana_p[i] - ana64[i]))

    # Monte Carlo arithmetic: the same working-dtype backward on inputs moved by one ulp (random
    # signs) rounds differently; the spread of its results measures its rounding error, including
    # cancellation between intermediates far larger than the result (LayerNorm with D = 2).
    spread = {i: np.zeros_like(ana64[i]) for i in diff_idx}
    for _ in range(3):
        nudged = _nudge(inputs, rng)
        ana_n = _analytical_jacobians(_outputs(fn, nudged), nudged, diff_idx)
        for i in diff_idx:
            spread[i] = np.maximum(spread[i], np.abs(ana_n[i] - ana_w[i]))

    # one backward computes row k of every input's Jacobian from shared intermediates: the largest
    # entry of that row over all inputs is the scale its rounding is relative to
    row = np.zeros((sum(o.numel() for o in outputs), 1))                                 # (n_out, 1)
    for i in diff_idx:
        if ana64[i].size:
            row = np.maximum(row, np.abs(ana64[i]).max(axis=1, keepdims=True))

    per_input, worst, jacobians = {}, [], {}
    lines = [f"precision-aware gradient check: analytical in {work}, numerical in float64 (h = {eps:g}); "
             f"expected |err| = {safety:g}·(u·max|J row| + |J(x(1+u·s)) − J(x)| + spread of J over 1-ulp input nudges) "
             f"+ u₆₄·(max|f| + |J||x|)/h, "
             f"u({work}) = {u:.3g}"]
    for i in diff_idx:
        x = inputs[i]
        num = _numerical_jacobian(fn, in64, i, eps)
        ana = ana_w[i]
        jacobians[i] = (ana, num)
        x_abs = np.abs(_to_numpy(x.array)).reshape(1, -1)                            # (1, n_in)
        e_fd = _U64 * (f_scale + np.abs(ana64[i]) * x_abs) / eps
        expected = safety * (u * row + moved[i] + spread[i]) + e_fd + 1e-300         # (n_out, n_in)
        err = np.abs(ana - num)
        ratio = err / expected
        bad = ~(ratio <= 1)                                                          # NaN counts as bad
        plain_bad = ~np.isclose(ana, num, atol=1e-5, rtol=1e-3)
        j_scale = float(np.abs(num).max(initial=0))
        inconclusive = bool(j_scale > 0 and float(expected.max(initial=0)) >= 0.5 * j_scale)
        r = dict(dtype=str(x.dtype), u=u, max_abs_err=float(err.max(initial=0)),
                 max_expected=float(expected.max(initial=0)), max_ratio=float(np.nan_to_num(ratio, nan=np.inf).max(initial=0)),
                 n_bad=int(bad.sum()), n_plain_bad=int(plain_bad.sum()), inconclusive=inconclusive,
                 x_scale=float(x_abs.max(initial=0)), j_scale=j_scale)
        per_input[i] = r
        verdict = "FAIL" if r["n_bad"] else ("inconclusive" if inconclusive else "ok")
        lines.append(
            f"  input {i} {tuple(x.shape)} {x.dtype}: {verdict}: max |err| {r['max_abs_err']:.3g}, expected up to "
            f"{r['max_expected']:.3g} (worst err/expected {r['max_ratio']:.3g}); |x| up to {r['x_scale']:.3g}, "
            f"|J| up to {j_scale:.3g}"
        )
        if r["n_plain_bad"] and not r["n_bad"]:
            lines.append(f"    a fixed-tolerance check (atol=1e-5, rtol=1e-3) would have flagged {r['n_plain_bad']} "
                         f"of {bad.size} entries: that is {work} rounding, explained by the expected error")
        if inconclusive:
            lines.append(f"    inconclusive: the expected error reaches half of |J| itself, so {work} cannot tell a right "
                         "gradient from a wrong one at these inputs (check in float64, or centre/scale the inputs)")
        if r["n_bad"]:
            lines.append(f"    {r['n_bad']} of {bad.size} entries exceed their expected error; worst:")
            lines.append(f"    {'output':>6} {'output index':>13} {'input index':>12} {'analytical':>13} "
                         f"{'numerical':>13} {'abs err':>9} {'expected':>9} {'ratio':>7}")
            order = np.argsort(-np.nan_to_num(ratio, nan=np.inf).ravel())[: min(top, r["n_bad"])]
            rows = []
            for flat in order:
                k, j = np.unravel_index(int(flat), err.shape)
                oi, oidx = _locate(outputs, int(k))
                jidx = tuple(int(v) for v in np.unravel_index(int(j), x.shape)) if x.ndim else ()
                oidx = tuple(int(v) for v in oidx)
                a, n, e = float(ana[k, j]), float(num[k, j]), float(expected[k, j])
                rows.append({"output": oi, "output_index": oidx, "input_index": jidx, "analytical": a,
                             "numerical": n, "abs_err": abs(a - n), "rel_err": abs(a - n) / max(abs(n), 1e-300),
                             "expected": e})
                lines.append(f"    {oi:>6} {str(oidx):>13} {str(jidx):>12} {a:>13.6g} {n:>13.6g} {abs(a - n):>9.3g} "
                             f"{e:>9.3g} {abs(a - n) / e:>7.3g}")
            if not worst:
                worst = rows
    return PrecisionReport(per_input, worst, jacobians, safety, eps, lines)


def precision_check(fn, inputs, eps=1e-6, safety=10.0, raise_exception=True) -> bool:
    """``gradcheck(fn, inputs, precision_aware=True)``: True, or :class:`GradcheckError` with the report."""
    report = precision_report(fn, inputs, eps=eps, safety=safety)
    if report.ok:
        return True
    if raise_exception:
        raise GradcheckError(str(report), input_index=report.failed[0], worst=report.worst)
    return False
