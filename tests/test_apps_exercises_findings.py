"""Regressions from a new-user trial of the graded exercises (issue 29): wrong verdicts first (an answer
that calls exit(), loops over 4 rows, hard-codes eps or returns float32; --train's verdict), then
misleading diagnoses (the case named, NaN/inf, float32 and float16 answers), then the command line.
The students below are the trial's answer files, cut down."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from minitorch_ln.apps.cli import main
from minitorch_ln.apps.exercises import check, load_function, start


def ln_right(dy, x, weight, eps, rows=None, D=None, eps_used=None):
    """The right LayerNorm backward; ``rows``/``D``/``eps_used`` plant the trial's mistakes."""
    eps = eps if eps_used is None else eps_used
    D = x.shape[1] if D is None else D
    mean = x.sum(1, keepdims=True) / D
    rstd = 1 / np.sqrt(((x - mean) ** 2).sum(1, keepdims=True) / D + eps)
    xhat = (x - mean) * rstd
    g = dy * weight
    dx = rstd * (g - g.sum(1, keepdims=True) / D - xhat * (g * xhat).sum(1, keepdims=True) / D)
    if rows is not None:  # "batch size from my notebook": rows past the first `rows` left at 0
        dx[rows:] = 0.0
    return dx, (dy * xhat).sum(0), dy.sum(0)


def softmax_rows(dy, x, rows=None, shift=True):
    e = np.exp(x - x.max(1, keepdims=True)) if shift else np.exp(x)
    y = e / e.sum(1, keepdims=True)
    dx = y * (dy - (y * dy).sum(1, keepdims=True))
    if rows is not None:
        dx[rows:] = 0.0
    return dx


def _write(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def _wrong_cases(result, output):
    return {r["case"] for r in result.grade.rows if r["output"] == output and not r["ok"]}


# ---------------------------------------------------------------- 1. exit() is a report, not the end


def test_exit_in_the_function_is_reported_with_the_students_line(tmp_path, capsys):
    path = _write(tmp_path, "layer_norm_backward.py", """\
        import sys

        def layer_norm_backward(dy, x, weight, eps):
            sys.exit(0)
        """)
    r = check("layer_norm", load_function("layer_norm", path))  # raised SystemExit before the fix
    assert r.exit_code == 1 and f"layer_norm_backward called exit() (at {path}:4)" in str(r)
    assert main(["exercise", "check", "layer_norm", str(path)]) == 1  # exited 0 with no report before
    assert "called exit()" in capsys.readouterr().out


def test_exit_during_training_is_reported(tmp_path):
    def exits_on_the_batch(dy, x, w, eps):
        if x.shape[0] > 10:  # the training batch (64), not a graded case
            raise SystemExit(3)
        return ln_right(dy, x, w, eps)

    r = check("layer_norm", exits_on_the_batch, train=True, steps=5, figure=tmp_path / "c.png")
    assert r.exit_code == 1 and "layer_norm_backward called exit()" in r.train_summary


def test_exit_at_import_is_one_clear_line(tmp_path, capsys):
    path = _write(tmp_path, "a.py", "exit()\n")
    assert main(["exercise", "check", "layer_norm", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"importing {path} called exit() (at {path}:1)" in err


# ---------------------------------------------------------------- 2. every exercise has another N and D


@pytest.mark.parametrize("name, fn", [
    ("layer_norm", lambda dy, x, w, eps: ln_right(dy, x, w, eps, rows=4)),
    ("softmax", lambda dy, x: softmax_rows(dy, x, rows=4)),
])
def test_an_answer_for_the_first_four_rows_only_is_wrong(name, fn):
    r = check(name, fn)  # passed before: every case with D > 1 had N = 4
    assert r.grade.wrong == ["dx"], str(r)


def test_a_hard_coded_denominator_or_eps_is_wrong():
    assert check("layer_norm", lambda dy, x, w, eps: ln_right(dy, x, w, eps, eps_used=1e-5)).grade.wrong
    only_d8 = check("layer_norm", lambda dy, x, w, eps: ln_right(dy, x, w, eps, D=8))
    assert "dx" in only_d8.grade.wrong


# ---------------------------------------------------------------- 3. --train: one verdict, the last line


def _right_but_not_at_batch_64(dy, x, w, eps):
    dx, dw, db = ln_right(dy, x, w, eps)
    return (2 * dx if x.shape[0] > 10 else dx), dw, db  # the graded cases have N <= 7; training has 64


def test_train_verdict_is_the_last_line_and_the_exit_code(tmp_path):
    r = check("layer_norm", _right_but_not_at_batch_64, train=True, steps=20, figure=tmp_path / "c.png")
    assert r.grade.ok and not r.train_ok and r.exit_code == 1
    last = str(r).splitlines()[-1]
    assert last.startswith("RESULT: wrong: the check passes, but training") and last.endswith("(exit 1)")
    assert "RESULT: right (exit 0)" not in str(r)  # printed before the fix, then exit 1
    ok = check("layer_norm", ln_right, train=True, steps=20, figure=tmp_path / "d.png")
    assert ok.exit_code == 0 and str(ok).splitlines()[-1].endswith("(exit 0)")


# ---------------------------------------------------------------- 4. the answer's dtype is the inputs'


def test_float32_answer_to_float64_inputs_is_a_dtype_mistake():
    def tiny_err_f32(dy, x, w, eps):  # off by 1e-6: passed at float32 tolerance before
        dx, dw, db = ln_right(dy, x, w, eps)
        return ((1 + 1e-6) * dx).astype(np.float32), dw.astype(np.float32), db.astype(np.float32)

    r = check("layer_norm", tiny_err_f32)
    assert not r.ok and "WRONG: dx is float32 for float64 inputs (case 'random'): return float64" in str(r)


def test_float16_answer_is_named_by_its_dtype_not_a_term():
    r = check("softmax", lambda dy, x: softmax_rows(dy, x).astype(np.float16))
    text = str(r)
    assert "WRONG: dx is float16 for float64 inputs" in text
    assert "term" not in text.split("WRONG:")[1]  # no term blamed for float16's rounding


# ---------------------------------------------------------------- 5. minitorch_ln.exercises after import minitorch_ln


def test_exercises_is_an_attribute_of_the_package():
    code = "import minitorch_ln; print(minitorch_ln.exercises.list()[0])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "layer_norm", out.stderr


# ---------------------------------------------------------------- 6-8. the diagnosis names what fails


def test_wrong_line_names_a_failing_case():
    r = check("layer_norm", lambda dy, x, w, eps: tuple(
        (1 + 1e-6) * a if i == 0 else a for i, a in enumerate(ln_right(dy, x, w, eps))))
    named = str(r).split("WRONG: dx (max rel_error ")[1].split("case '")[1].split("'")[0]
    assert named in _wrong_cases(r, "dx")  # was 'float32 rounding', a row that passed
    assert "it is the sum of the right terms" not in str(r)


@pytest.mark.parametrize("name, fn", [
    ("softmax", lambda dy, x: softmax_rows(dy, x, shift=False)),
    ("cross_entropy", lambda dloss, logits, target: dloss * (
        np.exp(logits) / np.exp(logits).sum(1, keepdims=True) - np.eye(logits.shape[1])[target]) / len(target)),
])
def test_overflow_is_named_as_nan_in_the_case(name, fn):
    with np.errstate(all="ignore"):
        text = str(check(name, fn))
    assert "NaN/inf in case 'shifted by 1e3'" in text and "right except on case 'shifted by 1e3'" in text
    assert "sum of the right terms" not in text


def test_wrong_only_on_one_shape_says_so_not_the_weight():
    def only_d8(dy, x, w, eps):  # the statistics right, the means of dx's terms divided by 8: right where D = 8
        _, dw, db = ln_right(dy, x, w, eps)
        mean = x.mean(1, keepdims=True)
        rstd = 1 / np.sqrt(((x - mean) ** 2).mean(1, keepdims=True) + eps)
        xhat, g = (x - mean) * rstd, dy * w
        return rstd * (g - g.sum(1, keepdims=True) / 8 - xhat * (g * xhat).sum(1, keepdims=True) / 8), dw, db

    text = str(check("layer_norm", only_d8))
    assert "right except on case 'D = 1', 'N=7 D=5 eps=1e-3'" in text
    assert "probe" not in text and "weight enters" not in text


def test_float32_throughout_mistakes_are_attributed_at_float32_precision():
    def f32_no_mean(dy, x, w, eps):
        dy, x, w = dy.astype(np.float32), x.astype(np.float32), w.astype(np.float32)
        D = x.shape[1]
        xc = x - x.mean(1, keepdims=True)
        rstd = 1 / np.sqrt((xc * xc).mean(1, keepdims=True) + np.float32(eps))
        xhat, g = xc * rstd, dy * w
        return (rstd / D) * (D * g - xhat * (g * xhat).sum(1, keepdims=True)), (dy * xhat).sum(0), dy.sum(0)

    text = str(check("layer_norm", f32_no_mean))
    assert "term 2 (-rstd·mean(dxhat): through the mean) is missing" in text  # 'no combination' before
    assert "probe dy ⟂ 1 and xhat in each row (only term 1 acts): right" in text  # 'wrong' at 1e-7 before


# ---------------------------------------------------------------- 9. import-time errors: one line


def test_import_time_error_is_one_line_with_the_students_line(tmp_path, capsys):
    path = _write(tmp_path, "a.py", "import numpy as np\nraise RuntimeError('at import')\n")
    assert main(["exercise", "check", "layer_norm", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"importing {path} raised RuntimeError: at import (at {path}:2)" in err and "Traceback" not in err


# ---------------------------------------------------------------- the minor ones


def test_a_helper_module_next_to_the_answer_imports(tmp_path):
    _write(tmp_path, "util_exfix_helper.py", "import numpy as np\n\ndef softmax(x):\n"
           "    e = np.exp(x - x.max(-1, keepdims=True))\n    return e / e.sum(-1, keepdims=True)\n")
    path = _write(tmp_path, "softmax_backward.py", """\
        from util_exfix_helper import softmax

        def softmax_backward(dy, x):
            y = softmax(x)
            return y * (dy - (y * dy).sum(-1, keepdims=True))
        """)
    assert check("softmax", load_function("softmax", path)).ok


def test_start_into_a_file_says_dir_is_not_a_directory(tmp_path, capsys):
    f = _write(tmp_path, "f.txt", "x")
    with pytest.raises(NotADirectoryError, match="is a file, not a directory"):
        start("layer_norm", f)
    assert main(["exercise", "start", "layer_norm", "--dir", str(f)]) == 1
    assert "is a file, not a directory" in capsys.readouterr().err


def test_figure_in_a_missing_folder_is_refused_before_the_work(tmp_path, capsys):
    with pytest.raises(FileNotFoundError, match="no directory"):
        check("layer_norm", ln_right, train=True, figure=tmp_path / "no" / "x.png")
    path = _write(tmp_path, "layer_norm_backward.py", "def layer_norm_backward(dy, x, w, eps):\n    pass\n")
    assert main(["exercise", "check", "layer_norm", str(path), "--steps", "5"]) == 1
    assert "--steps applies to training: add --train" in capsys.readouterr().err


def test_a_call_that_cannot_bind_names_the_signature_not_the_grader():
    def kw_only(dy, x, *, weight, eps):
        return ln_right(dy, x, weight, eps)

    text = str(check("layer_norm", kw_only))
    assert "when called as layer_norm_backward(dy, x, weight, eps), positionally" in text
    assert "grading.py" not in text


def test_array_likes_are_accepted_for_one_output_as_for_several():
    assert check("softmax", lambda dy, x: softmax_rows(dy, x).tolist()).ok  # 'returned 4 values' before
    assert check("softmax", lambda dy, x: [softmax_rows(dy, x)]).ok  # a list of the one output, as before
    assert check("layer_norm", lambda *a: [o.tolist() for o in ln_right(*a)]).ok
