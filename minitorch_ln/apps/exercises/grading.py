"""Grade a student's backward: against the project's own backward and float64 finite differences.

For every case of the exercise (random inputs, then stress: large mean, tiny variance, ``D = 1``,
...) the grader runs

* the project's op with autograd, in float64: the reference;
* central differences of ``L = Σ dy · forward(inputs)`` in float64: an independent check;
* the student's function, on copies of the inputs;

and once more on the random case in float32, where the student's answer is held to what the
project's own float32 backward reaches. An output is right when its largest error, relative to the
size of the reference (``max|a - ref| / max(max|ref|, 1)``), is under 1e-7 for a float64 answer
(for a float32 answer: ten times what the project's float32 backward reaches on that case), and its
dtype is the inputs' or wider (a float32 answer to float64 inputs is a dtype mistake, named). The
report also gives CS231n's ``rel_error = max |a - b| / max(1e-8, |a| + |b|)``.

When an output is wrong the grader says which, and where it can, why, from the numbers alone: it
fits the answer as a combination of the formula's terms (``diagnostics.term_fit``) and compares it
with each known mistake of the exercise's catalogue on every case.
"""

from __future__ import annotations

import traceback
from contextlib import contextmanager

import numpy as np

from ...autograd.grad_mode import no_grad
from ...diagnostics.term_fit import fit_terms
from ...kernels.choice import get_cpu_kernels, set_cpu_kernels
from ...tensor import tensor
from .spec import Case

__all__ = ["TOL64", "GradeReport", "fd_grads", "grade", "normwise_error", "oracle_kernels", "project_grads", "rel_error"]

TOL64 = 1e-7      # a float64 answer: its error relative to the reference's size
FLOAT32_SLACK = 10.0  # a float32 answer: this many times what the project's float32 backward reaches


def rel_error(a, b) -> float:
    """CS231n's ``max |a - b| / max(1e-8, |a| + |b|)``, elementwise then the largest."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))))


def normwise_error(a, ref) -> float:
    """``max|a - ref| / max(max|ref|, 1)``: the error the grader decides on (NaN/inf count as infinite)."""
    a, ref = np.asarray(a, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if a.size == 0:
        return 0.0
    if not np.isfinite(a).all():
        return float("inf")
    return float(np.abs(a - ref).max() / max(float(np.abs(ref).max()), 1.0))


@contextmanager
def oracle_kernels():
    """Run the project's ops on the readable NumPy kernels (the oracle forms): a check then costs no
    Numba compilation, and the reference is the formula as written in ``kernels/``."""
    previous = get_cpu_kernels()
    set_cpu_kernels("numpy")
    try:
        yield
    finally:
        set_cpu_kernels(previous)


def _tensors(ex, inputs, dtype, requires_grad=True):
    out = {}
    for k, v in inputs.items():
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            out[k] = tensor(v.astype(dtype), requires_grad=requires_grad and k in ex.wrt)
        elif isinstance(v, np.ndarray):
            out[k] = tensor(v)
        else:
            out[k] = v
    return out


def project_grads(ex, inputs, dtype=np.float64) -> dict:
    """The project's own backward (``ex.forward`` through autograd): ``{output: array}``."""
    T = _tensors(ex, inputs, dtype)
    y = ex.forward(T)
    y.backward(tensor(np.asarray(inputs[ex.args[0]]).astype(dtype)))
    grads = {}
    for o, w in zip(ex.outputs, ex.wrt):
        g = T[w].grad
        grads[o] = np.zeros(inputs[w].shape, dtype) if g is None else g.numpy()
    return grads


def fd_grads(ex, inputs, h=1e-6) -> dict:
    """Central differences of ``Σ dy · forward`` in float64 w.r.t. each ``wrt`` input."""
    dy = np.asarray(inputs[ex.args[0]], dtype=np.float64)
    grads = {}
    with no_grad():
        for o, w in zip(ex.outputs, ex.wrt):
            a = np.array(inputs[w], dtype=np.float64)
            flat = a.reshape(-1)
            g = np.empty(flat.size)

            def loss(w=w, a=a):
                T = _tensors(ex, {**inputs, w: a}, np.float64, requires_grad=False)
                return float((ex.forward(T).numpy() * dy).sum())

            for j in range(flat.size):
                orig = flat[j]
                flat[j] = orig + h
                fp = loss()
                flat[j] = orig - h
                fm = loss()
                flat[j] = orig
                g[j] = (fp - fm) / (2 * h)
            grads[o] = g.reshape(a.shape)
    return grads


class StudentError(Exception):
    """The student's function raised, or returned the wrong number or shapes of arrays; ``output``
    names the output at fault when one is."""

    def __init__(self, message, output=None):
        super().__init__(message)
        self.output = output


def call_student(ex, fn, inputs) -> dict:
    """Run ``fn`` on copies of the inputs; ``{output: array}``, or :class:`StudentError`."""
    args = [np.array(inputs[a], copy=True) if isinstance(inputs[a], np.ndarray) else inputs[a] for a in ex.args]
    try:
        result = fn(*args)
    except NotImplementedError as e:
        raise StudentError(f"{ex.function} is not written yet (NotImplementedError: {e})") from None
    except SystemExit as e:  # exit() / sys.exit() in the student's function: a report, not the end of the check
        raise StudentError(f"{ex.function} called exit() ({_where(e, fn, ex)}); "
                           "return the gradients instead") from None
    except Exception as e:  # noqa: BLE001 - any error in the student's code is reported, not raised
        raise StudentError(f"{ex.function} raised {type(e).__name__}: {e} ({_where(e, fn, ex)})") from None
    if len(ex.outputs) == 1 and not isinstance(result, tuple) and not (
            isinstance(result, list) and len(result) == 1 and _shape(result) != np.shape(inputs[ex.wrt[0]])):
        result = (result,)  # one output: a list is an array-like (rows), as np.asarray has it; [dx] is dx
    if not isinstance(result, (tuple, list)) or len(result) != len(ex.outputs):
        got = f"{len(result)} values" if isinstance(result, (tuple, list)) else type(result).__name__
        raise StudentError(f"{ex.function} returned {got}; expected {len(ex.outputs)}: ({', '.join(ex.outputs)})")
    out = {}
    for o, w, r in zip(ex.outputs, ex.wrt, result):
        if r is None:
            raise StudentError(f"{ex.function} returned None for {o}; expected an array of shape "
                               f"{np.shape(inputs[w])}", o)
        r = np.asarray(r)
        if r.shape != np.shape(inputs[w]):
            raise StudentError(f"{o} has shape {r.shape}; expected {np.shape(inputs[w])} (the shape of {w})", o)
        if r.dtype.kind != "f":
            raise StudentError(f"{o} has dtype {r.dtype}; expected a floating point array", o)
        out[o] = r
    return out


def _shape(a):
    try:
        return np.shape(a)
    except ValueError:  # a ragged list
        return None


def _where(e, fn, ex) -> str:
    """``at FILE:LINE`` of the last frame of the student's file in ``e``'s traceback (not the grader's)."""
    code = getattr(fn, "__code__", None)
    frames = traceback.extract_tb(e.__traceback__)
    if code is not None:
        own = [f for f in frames if f.filename == code.co_filename]
        if own:
            return f"at {own[-1].filename}:{own[-1].lineno}"
        if len(frames) <= 1:  # raised by the call itself: the signature does not take the grader's arguments
            return f"when called as {ex.function}({', '.join(ex.args)}), positionally"
    return f"at {frames[-1].filename}:{frames[-1].lineno}" if frames else "where: unknown"


class GradeReport:
    """What :func:`grade` found. ``ok``; ``wrong`` (the outputs that are wrong); ``exit_code`` (0 or 1);
    ``rows`` (per case and output: errors against the reference and the finite differences);
    ``diagnoses`` (``{output: [sentences]}``); ``mistakes`` (``{output: [catalogue names]}``);
    ``error`` (the student's function failed to run); ``str(report)`` is the printed report."""

    def __init__(self, ex):
        self.ex = ex
        self.rows, self.diagnoses, self.mistakes, self.notes = [], {}, {}, []
        self.error = self.error_output = None

    @property
    def wrong(self) -> list:
        return [o for o in self.ex.outputs if o == self.error_output
                or any(not r["ok"] for r in self.rows if r["output"] == o)]

    @property
    def ok(self) -> bool:
        return self.error is None and not self.wrong

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def __str__(self) -> str:
        ex = self.ex
        lines = [f"exercise {ex.name}: {ex.signature}"]
        if self.error and not self.rows:
            lines.append(f"  ERROR: {self.error}")
            if self.error_output:
                lines.append(f"WRONG: {self.error_output}")
            lines.append("RESULT: wrong" + (f": {self.error_output}" if self.error_output else "") + " (exit 1)")
            return "\n".join(lines)
        lines.append(f"  {'case':<18} {'output':<8} {'dtype':<8} {'err vs project':>14} {'tolerance':>9}  ok "
                     f"{'CS231n rel_error':>17} {'err vs f.d.':>11}")
        for r in self.rows:
            lines.append(f"  {r['case']:<18} {r['output']:<8} {r['dtype']:<8} {r['err']:>14.2e} {r['tol']:>9.1e} "
                         f"{'yes' if r['ok'] else 'NO ':>3} {r['rel_error']:>17.2e} {_num(r['err_fd']):>11}")
        lines.extend(f"  note: {n}" for n in self.notes)
        if self.error:
            lines.append(f"  ERROR: {self.error}")
        for o in self.wrong:
            lines.extend(self._wrong_lines(o))
        lines.append("RESULT: " + ("right (exit 0)" if self.ok else f"wrong: {', '.join(self.wrong) or 'your function failed'} (exit 1)"))
        return "\n".join(lines)

    def _wrong_lines(self, o) -> list:
        mine = [r for r in self.rows if r["output"] == o]
        if all(r["ok"] for r in mine):
            return [f"WRONG: {o}"]
        lines = []
        narrow = next((r for r in mine if not r["dtype_ok"]), None)
        if narrow:
            lines.append(f"WRONG: {o} is {narrow['dtype']} for {narrow['in_dtype']} inputs (case {narrow['case']!r}): "
                         f"return {narrow['in_dtype']} (compute in the inputs' dtype)")
            if np.dtype(narrow["dtype"]).itemsize < 4:
                return lines  # float16 cannot hold the answer to the tolerance: its numbers say nothing more
        bad = [r for r in mine if not r["value_ok"]]
        if not bad:
            return lines
        worst = max(bad, key=lambda r: r["err"] / r["tol"])
        lines.append(f"WRONG: {o} (max rel_error {worst['rel_error']:.3g} vs float64, case {worst['case']!r})")
        nonfinite = _names(r["case"] for r in bad if not r["finite"])
        if nonfinite:
            lines.append(f"  {o}: NaN/inf in case {nonfinite} (an overflow, e.g. exp of large values without "
                         "subtracting the max, or a division by zero?)")
        if 0 < len(bad) <= sum(r["value_ok"] for r in mine):
            lines.append(f"  {o}: right except on case {_names(r['case'] for r in bad)}: look at what differs there")
        lines.extend(f"  {o}: {d}" for d in self.diagnoses.get(o, []))
        lines.extend(f"  {o}: matches the known mistake: {m}" for m in self.mistakes.get(o, []))
        return lines

    __repr__ = __str__


def _names(cases) -> str:
    return ", ".join(repr(c) for c in dict.fromkeys(cases))


def _num(v) -> str:
    return "-" if np.isnan(v) else f"{v:.2e}"  # no finite differences on the float32 case


def _cast(inputs, dtype):
    return {k: v.astype(dtype) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v for k, v in inputs.items()}


def grade(ex, fn, seed=0, fd=True) -> GradeReport:
    """Grade ``fn`` (the student's backward) on the exercise ``ex``; see the module docstring."""
    with oracle_kernels():
        return _grade(ex, fn, seed, fd)


def _grade(ex, fn, seed, fd):
    report = GradeReport(ex)
    cases = list(ex.cases(np.random.default_rng(seed)))
    f32 = Case("float32 rounding", _cast(cases[0].inputs, np.float32), cases[0].h)
    answers, refs = [], []
    for case in cases + [f32]:
        wide = _cast(case.inputs, np.float64)              # the float32 case's exact reference
        ref = project_grads(ex, wide)
        num = fd_grads(ex, wide, case.h) if fd and case is not f32 else None
        try:
            got = call_student(ex, fn, case.inputs)
        except StudentError as e:
            report.error, report.error_output = f"{e} (case {case.label!r})", e.output
            break
        ref32 = None
        in_dtype = np.result_type(*[v for v in case.inputs.values() if isinstance(v, np.ndarray) and v.dtype.kind == "f"])
        for o in ex.outputs:
            a = got[o]
            tol = TOL64
            if a.dtype != np.float64 or case is f32:  # float32 inputs (or a narrower answer): float32 rounding
                if ref32 is None:
                    ref32 = project_grads(ex, _cast(case.inputs, np.float32), np.float32)
                reach = normwise_error(ref32[o], ref[o])
                tol = max(FLOAT32_SLACK * reach, 1e-5)
                if case is f32:
                    report.notes.append(f"{o}: in float32 your answer is off by {normwise_error(a, ref[o]):.2e}; "
                                        f"the project's float32 backward by {reach:.2e}")
            err = normwise_error(a, ref[o])
            err_fd = normwise_error(a, num[o]) if num is not None else float("nan")
            # the answer's dtype is the inputs' (or wider): a float32 answer to float64 inputs is a dtype mistake
            dtype_ok = a.dtype.itemsize >= in_dtype.itemsize
            report.rows.append({"case": case.label, "output": o, "dtype": str(a.dtype), "in_dtype": str(in_dtype),
                                "err": err, "rel_error": rel_error(a, ref[o]), "err_fd": err_fd, "tol": tol,
                                "value_ok": err <= tol, "dtype_ok": dtype_ok, "finite": bool(np.isfinite(a).all()),
                                "ok": err <= tol and dtype_ok})
            if num is not None and normwise_error(ref[o], num[o]) > 1e-4:
                report.notes.append(f"case {case.label!r}: the project's {o} and the finite differences differ by "
                                    f"{normwise_error(ref[o], num[o]):.2e} (finite differences are coarse here)")
        if case is not f32:
            answers.append((case, got))
            refs.append(ref)
    _diagnose(ex, report, answers, refs)
    _probe(ex, fn, report, cases[0])
    return report


def _diagnose(ex, report, answers, refs) -> None:
    tols = {(r["case"], r["output"]): r["tol"] for r in report.rows}
    # a case counts as fitted-right when the answer is right there, or not finite (the report names NaN/inf)
    value_ok = {(r["case"], r["output"]): r["value_ok"] or not r["finite"] for r in report.rows}
    for o in report.wrong:
        if answers and answers[0][1][o].dtype.itemsize < 4:
            continue  # float16: the report names the dtype; its rounding hides any term
        # the fit runs over the cases of the first case's shape: a factor such as D is one number there
        same = [(c, g) for c, g in answers if g[o].shape == answers[0][1][o].shape] if answers else []
        if all(value_ok[(c.label, o)] for c, _ in same):
            same = []  # right on these cases: the report says on which it is wrong, no fit to make
        if same and same[0][1][o].dtype != np.float64:  # leave out the cases float32 cannot resolve (a large mean)
            same = [(c, g) for c, g in same if tols[(c.label, o)] <= 1e-3] or same
        if ex.terms is not None and same:
            per_case = [ex.terms(case.inputs).get(o) for case, _ in same]
            if all(t is not None for t in per_case):
                labels = list(per_case[0])
                hints = {}
                if ex.hints is not None:
                    for case, _ in same:
                        hints.update(ex.hints(case.inputs))
                # a float32 answer fits its terms only to float32 rounding: the fit's tolerance is the rows'
                fit_tol = 1e-6 if same[0][1][o].dtype == np.float64 else max(tols[(c.label, o)] for c, _ in same)
                fit = fit_terms([got[o] for _, got in same], {k: [t[k] for t in per_case] for k in labels},
                                tol=fit_tol, hints=hints)
                said = fit.describe()
                if fit.explained and not fit.off:  # wrong, yet the right terms: off by less than the fit resolves
                    drift = max(abs(c - 1.0) for c in fit.coefficients.values())
                    said = (f"it is the right terms up to {drift:.2g} in their coefficients: a small error everywhere "
                            "(a constant factor near 1, or precision lost), not a missing or flipped term")
                report.diagnoses.setdefault(o, []).append(said)
        for m in ex.mistakes:
            if _matches(m, o, answers, tols):
                report.mistakes.setdefault(o, []).append(m.name)


def _probe(ex, fn, report, case) -> None:
    """Run the exercise's probes (inputs that isolate the formula's terms) when ``dx`` is wrong."""
    if ex.probes is None or "dx" not in report.wrong or report.error is not None:
        return
    row = next(r for r in report.rows if r["case"] == case.label and r["output"] == "dx")
    if row["value_ok"] or np.dtype(row["dtype"]).itemsize < 4:
        return  # right on this case (wrong elsewhere), or float16: the probes would say nothing true
    try:
        with np.errstate(all="ignore"):
            found = ex.probes(case.inputs, lambda inputs: call_student(ex, fn, inputs))
    except StudentError as e:
        found = [f"the probes could not run: {e}"]
    report.diagnoses.setdefault("dx", []).extend(found)


def _matches(mistake, o, answers, tols) -> bool:
    """Whether the student's ``o`` equals the mistake's on every case where both are finite (at least one)."""
    compared = 0
    for case, got in answers:
        try:
            with np.errstate(all="ignore"):
                wrong = mistake.fn(case.inputs).get(o)
        except ValueError:  # a transposed product cannot be formed where in != out
            continue
        if wrong is None:
            return False
        if np.shape(wrong) != got[o].shape or not (np.isfinite(wrong).all() and np.isfinite(got[o]).all()):
            continue  # a transpose has another shape where in != out; 0/0 where a variance has one value
        if normwise_error(got[o], wrong) > max(tols[(case.label, o)], 1e-6):
            return False
        compared += 1
    return compared > 0
