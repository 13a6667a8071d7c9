"""Finite-difference gradient checks: ``gradcheck`` and ``gradgradcheck``.

For ``f: inputs -> outputs`` the analytical Jacobian (one backward pass per output element, each
with a one-hot upstream gradient) is compared, element by element, with the central difference

    J_num[k, j] = (f(x + eps e_j)[k] - f(x - eps e_j)[k]) / (2 eps)

whose error is O(eps²) plus rounding of order (machine epsilon · |f|) / eps — which is why the check
is only meaningful in float64 (float32 rounding at eps = 1e-6 is about 0.1). An element fails when
``|analytical - numerical| > atol + rtol · |numerical|``.

``fast_mode=True`` checks ``uᵀ J v`` for random ``u`` and ``v`` instead (one backward, two forwards
per input), which catches a wrong backward with probability 1 at a fraction of the cost; on a
failure it then finds the first element ``j`` whose ``(uᵀJ)_j`` disagrees (two forwards per element)
so that it names the element as the full check does.

Inputs of any memory layout are checked: each logical element is perturbed in the input's own
memory, through its strides (transposed, Fortran-ordered, sliced and view leaves), so ``fn`` sees the
change. An input whose memory overlaps itself (a stride-0 ``broadcast_to``/``expand`` result), is
read-only, or is shared with an independent input is perturbed in a private copy passed to ``fn``
instead: that gives the derivative per logical element, which is what autograd's ``x.grad`` means
(PyTorch's gradcheck refuses a stride-0 input instead; see ``jacobian.py``).

``precision_aware=True`` checks a float32/float16 backward as it runs: analytical Jacobian in the
working dtype, numerical one in float64, and a tolerance *derived* per entry (see
:func:`precision_report`), so a rounding difference is explained rather than reported as a failure.

On failure the error shows, per input, a table of the worst entries; for an op whose ``Function``
defines ``term_check(ctx)`` (the LayerNorm family) it adds which backward term disagrees
(``diagnostics/terms.py``); ``heatmap="j.png"`` saves the Jacobians as a picture.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import backend
from ..tensor import Tensor
from .check_complex import realify
from .check_precision import precision_report
from .engine import grad as autograd_grad
from .function import AccumulateGrad
from .jacobian import (GradcheckError, _analytical_jacobians, _as_tuple, _copy_note, _fd_target, _locate,
                       _numerical_columns, _numerical_jacobian, _outputs, _to_numpy)

# Set by minitorch_ln.diagnostics when it is imported (``import minitorch_ln`` does): draws the
# Jacobians for ``heatmap=`` with matplotlib. The engine never imports the diagnostics.
HEATMAP_WRITER = None


def _failure_report(i, x, outputs, ana, num, atol, rtol, top=5):
    err = np.abs(ana - num)
    bad = ~np.isclose(ana, num, rtol=rtol, atol=atol, equal_nan=True)  # NaN on one side only counts too
    order = np.argsort(-np.where(bad, np.nan_to_num(err, nan=np.inf), 0).ravel())[: min(top, int(bad.sum()))]
    worst = []
    lines = [
        f"Jacobian mismatch for input {i} (shape {tuple(x.shape)}, dtype {x.dtype}): "
        f"{int(bad.sum())} of {bad.size} entries exceed atol={atol:g} + rtol={rtol:g}·|numerical|.",
        "  worst entries:",
        f"  {'output':>8} {'output index':>14} {'input index':>14} {'analytical':>14} {'numerical':>14} {'abs err':>10} {'rel err':>10}",
    ]
    for flat in order:
        k, j = np.unravel_index(flat, err.shape)
        oi, oidx = _locate(outputs, int(k))
        jidx = tuple(int(v) for v in np.unravel_index(int(j), x.shape)) if x.ndim else ()
        oidx = tuple(int(v) for v in oidx)
        a, n = float(ana[k, j]), float(num[k, j])
        rel = abs(a - n) / max(abs(n), 1e-300)
        worst.append({"output": oi, "output_index": oidx, "input_index": jidx, "analytical": a,
                      "numerical": n, "abs_err": abs(a - n), "rel_err": rel})
        lines.append(f"  {oi:>8} {str(oidx):>14} {str(jidx):>14} {a:>14.6g} {n:>14.6g} {abs(a - n):>10.3g} {rel:>10.3g}")
    first = worst[0]
    lines.insert(
        1,
        f"  first failure: input {i} element {first['input_index']}, output {first['output']} element "
        f"{first['output_index']}: analytical {first['analytical']:.10g} vs numerical {first['numerical']:.10g}",
    )
    return "\n".join(lines), worst


def _check_dtypes(inputs, diff_idx):
    for i in diff_idx:
        if inputs[i].dtype != np.float64:
            warnings.warn(
                f"gradcheck: input {i} is {inputs[i].dtype}, not float64. Central differences with "
                "eps=1e-6 lose most of their digits to rounding in lower precision (float32 keeps about "
                "7 digits, so f(x+eps)-f(x-eps) keeps about 1), and the check will report spurious "
                "failures; convert the inputs with .double().",
                stacklevel=3,
            )


def _check_tolerances(eps, atol, rtol) -> None:
    for name, value, low in (("eps", eps, "> 0"), ("atol", atol, ">= 0"), ("rtol", rtol, ">= 0")):
        ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool) and np.isfinite(value)
        if not ok or (value <= 0 if low == "> 0" else value < 0):
            raise ValueError(f"gradcheck: {name} must be a finite number {low}, got {value!r}")


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, fast_mode=False, *,
              precision_aware=False, safety=10.0, heatmap=None):
    """Compare ``fn``'s analytical gradients with central finite differences.

    Args:
        fn: a function of Tensors returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of arguments; every Tensor with ``requires_grad`` is checked.
        eps: the finite-difference step.
        atol, rtol: an entry fails when ``|analytical - numerical| > atol + rtol·|numerical|``
            (unused with ``precision_aware``, which derives its tolerance).
        raise_exception: raise :class:`GradcheckError` on failure (else return False).
        fast_mode: check ``uᵀJv`` for random ``u``, ``v`` instead of the full Jacobian.
            Complex inputs and outputs are checked through their real and imaginary parts, as PyTorch
            does (``check_complex.py``; a complex input ``i`` is reported as two real inputs).
        precision_aware: for float32/float16 inputs: analytical Jacobian in that dtype, numerical in
            float64, tolerance from the dtype's machine epsilon, the inputs' magnitude and ``eps``
            (:func:`precision_report`). ``fn`` must accept float64 copies of the inputs.
        safety: the factor on the derived rounding error (``precision_aware`` only).
        heatmap: a ``.png`` path: save the analytical and numerical Jacobians and their difference.

    Returns:
        True when every checked input passes.

    Raises:
        GradcheckError: naming the input index, the element, the analytical and numerical values;
            for the LayerNorm family, also which backward term disagrees (``.terms``).
        ValueError: no input requires grad, ``fn`` returns no floating point Tensor, or ``eps``,
            ``atol``, ``rtol`` are not finite (``eps > 0``, tolerances ``>= 0``).
        GradcheckInputError (a ValueError and a RuntimeError): an input that must be perturbed in a
            private copy shares its memory with another input computed from it (no correct way).
    """
    _check_tolerances(eps, atol, rtol)
    fn, inputs = realify(fn, _as_tuple(inputs))  # complex inputs/outputs: their real and imaginary parts
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck: no input requires grad; set requires_grad=True on the inputs to check")
    if precision_aware:
        report = precision_report(fn, inputs, eps=eps, safety=safety)
        if heatmap is not None:
            _save_heatmap(heatmap, report.jacobians)
        if report.ok:
            return True
        if raise_exception:
            raise GradcheckError(str(report), input_index=report.failed[0], worst=report.worst)
        return False
    _check_dtypes(inputs, diff_idx)
    outputs = _outputs(fn, inputs)
    if not outputs:
        raise ValueError("gradcheck: fn returned no floating point Tensor")
    jacobians = {}
    try:
        if fast_mode:
            _fast_check(fn, inputs, outputs, diff_idx, eps, atol, rtol)
        else:
            analytical = _analytical_jacobians(outputs, inputs, diff_idx)
            for i in diff_idx:
                num = _numerical_jacobian(fn, inputs, i, eps)
                ana = analytical[i]
                jacobians[i] = (ana, num)
                if not np.allclose(ana, num, atol=atol, rtol=rtol, equal_nan=False):
                    msg, worst = _failure_report(i, inputs[i], outputs, ana, num, atol, rtol)
                    err = GradcheckError(msg + _copy_note(inputs, i), input_index=i, worst=worst)
                    _add_term_reports(err, outputs)
                    raise err
    except GradcheckError as err:
        if heatmap is not None and jacobians:
            _save_heatmap(heatmap, jacobians)
            err.args = (f"{err.args[0]}\n  Jacobian heat-map saved to {heatmap}",)
        if raise_exception:
            raise
        return False
    if heatmap is not None and jacobians:
        _save_heatmap(heatmap, jacobians)
    return True


def _save_heatmap(path, jacobians):
    if HEATMAP_WRITER is None:
        raise RuntimeError("gradcheck(heatmap=...): import minitorch_ln.diagnostics first (it draws the heat-map)")
    HEATMAP_WRITER(jacobians, path)


def term_reports_for(outputs) -> list:
    """Run ``term_check(ctx)`` on every node of the outputs' graph whose Function defines one (the
    LayerNorm family: ``diagnostics/terms.py`` attaches it to the op).

    Returns a list of ``(node name, TermReport or error text)``; used by ``gradcheck`` on failure.
    """
    found, seen = [], set()
    stack = [o.grad_fn for o in outputs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node in seen or isinstance(node, AccumulateGrad):
            continue
        seen.add(node)
        check = getattr(node.fn, "term_check", None)
        if callable(check):
            try:
                found.append((node.name(), check(node)))
            except Exception as e:  # noqa: BLE001 - a diagnosis must never hide the original failure
                found.append((node.name(), f"term check failed to run: {type(e).__name__}: {e}"))
        stack.extend(e[0] for e in node.next_edges if e is not None)
    return found


def _add_term_reports(err, outputs):
    """Append, for each LayerNorm-family node in the graph, which backward term disagrees."""
    reports = term_reports_for(outputs)
    if not reports:
        return
    err.terms = reports
    parts = [err.args[0]]
    for name, report in reports:
        parts.append(f"  {name}: {report}" if isinstance(report, str) else
                     "  " + str(report).replace("\n", "\n  ").replace("LayerNorm backward", f"{name}", 1))
    err.args = ("\n".join(parts),)


def _fast_check(fn, inputs, outputs, diff_idx, eps, atol, rtol):
    rng = np.random.default_rng(0)
    us = []
    for o in outputs:
        xp = backend.get_array_module(o.array)
        us.append(xp.asarray(rng.standard_normal(o.shape)).astype(o.dtype))
    us_np = [_to_numpy(u).ravel() for u in us]
    grads = autograd_grad(
        outputs, [inputs[i] for i in diff_idx], grad_outputs=[Tensor._from_op(u) for u in us],
        retain_graph=True, allow_unused=True,
    )
    for i, g in zip(diff_idx, grads):
        x = inputs[i]
        xp = backend.get_array_module(x.array)
        v = rng.standard_normal(x.shape)
        g_np = np.zeros(x.numel()) if g is None else _to_numpy(g.array).ravel()    # uᵀJ, (n_in,)
        ana = float(np.dot(g_np, v.ravel()))
        fd_inputs, arr = _fd_target(inputs, i)  # in place through any strides, or a private copy
        orig = arr.copy()
        arr[...] = orig + xp.asarray(eps * v).astype(x.dtype)
        plus = [_to_numpy(o.array).ravel() for o in _outputs(fn, fd_inputs)]
        arr[...] = orig - xp.asarray(eps * v).astype(x.dtype)
        minus = [_to_numpy(o.array).ravel() for o in _outputs(fn, fd_inputs)]
        arr[...] = orig
        num = float(sum(np.dot(u, (p - m) / (2 * eps)) for u, p, m in zip(us_np, plus, minus)))
        if not abs(ana - num) <= atol + rtol * abs(num):
            where, worst = _locate_fast_failure(fn, inputs, i, eps, atol, rtol, us_np, g_np)
            raise GradcheckError(
                f"fast-mode gradient check failed for input {i} (shape {tuple(x.shape)}): "
                f"uᵀJv analytical {ana:.10g} vs numerical {num:.10g} (abs err {abs(ana - num):.3g}); {where}"
                + _copy_note(inputs, i),
                input_index=i, worst=worst,
            )


_LOCATE_MAX = 4096  # inputs up to this size get the failing element named after a fast-mode failure


def _locate_fast_failure(fn, inputs, i, eps, atol, rtol, us_np, g_np):
    """``(text, worst)`` naming the first element whose ``(uᵀJ)_j`` disagrees: two forwards per element,
    run only after a failure, so fast mode names the element as the full check does."""
    if inputs[i].numel() > _LOCATE_MAX:
        return "rerun with fast_mode=False to locate the element", []
    u = np.concatenate(us_np)                                                   # (n_out_total,)
    for j, (idx, col) in enumerate(_numerical_columns(fn, inputs, i, eps)):
        a, n = float(g_np[j]), float(np.dot(u, col))
        if not abs(a - n) <= atol + rtol * abs(n):
            idx = tuple(int(k) for k in idx)
            return (f"first failing element: input {i} element {idx}: (uᵀJ) analytical {a:.10g} vs numerical "
                    f"{n:.10g}", [{"input_index": idx, "analytical": a, "numerical": n, "abs_err": abs(a - n)}])
    return "no single element of uᵀJ exceeds the tolerance (the errors add up); rerun with fast_mode=False", []


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  fast_mode=False):
    """Check second derivatives: ``gradcheck`` of ``(inputs, v) -> vᵀ ∂fn/∂inputs`` built with ``create_graph``.

    ``grad_outputs`` (the ``v``) default to random float64 tensors (seeded) that are themselves checked,
    so the mixed derivative with respect to the upstream gradient is covered too.
    """
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    outputs = _outputs(fn, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(1)
        grad_outputs = []
        for o in outputs:
            xp = backend.get_array_module(o.array)
            grad_outputs.append(Tensor(xp.asarray(rng.standard_normal(o.shape)).astype(o.dtype), requires_grad=True))
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_derivative(*args):
        ins, vs = args[:n], args[n:]
        outs = _outputs(fn, ins)
        grads = autograd_grad(outs, [ins[i] for i in diff_idx], grad_outputs=vs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, fast_mode=fast_mode)
