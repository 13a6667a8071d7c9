"""``minitorch-ln exercise list|start|check [--train]``, ``minitorch_ln.exercises`` for notebooks, the
training with a student's backward, and bad input to all of them."""

import pathlib
import shutil
import time

import numpy as np
import pytest

from minitorch_ln import exercises
from minitorch_ln.apps.cli import main
from minitorch_ln.apps.exercises import EXERCISES, check, get, load_function, skeleton

SOLUTIONS = pathlib.Path(__file__).parent / "exercise_solutions"


def test_list_names_all_ten_with_signatures(capsys):
    assert main(["exercise", "list"]) == 0
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 10
    assert "layer_norm_backward(dy, x, weight, eps) -> (dx, dweight, dbias)" in out
    for name in ("batch_norm", "rms_norm", "group_norm", "softmax", "cross_entropy", "linear", "gelu", "embedding",
                 "attention"):
        assert name in out


@pytest.mark.parametrize("name", list(EXERCISES))
def test_start_writes_a_skeleton_without_the_solution(tmp_path, capsys, name):
    ex = get(name)
    assert main(["exercise", "start", name, "--dir", str(tmp_path)]) == 0
    path = tmp_path / f"{ex.function}.py"
    text = path.read_text()
    assert f"def {ex.function}({', '.join(ex.args)}):" in text
    assert "raise NotImplementedError" in text and ex.derivation in text
    solution = (SOLUTIONS / f"{ex.function}.py").read_text()
    body = [ln.strip() for ln in solution.splitlines() if ln.strip().startswith("return")]
    assert not any(b in text for b in body), "the skeleton holds the solution's return line"
    compile(text, str(path), "exec")
    # the skeleton as written is graded wrong: not implemented yet
    assert main(["exercise", "check", name, str(path)]) == 1
    assert "not written yet" in capsys.readouterr().out


def test_start_never_overwrites(tmp_path, capsys):
    assert main(["exercise", "start", "softmax", "--dir", str(tmp_path)]) == 0
    assert main(["exercise", "start", "softmax", "--dir", str(tmp_path)]) == 1
    assert "already exists" in capsys.readouterr().err
    assert main(["exercise", "start", "softmax", "--dir", str(tmp_path), "--force"]) == 0


def test_check_right_and_wrong_exit_codes(tmp_path, capsys):
    right = tmp_path / "layer_norm_backward.py"
    shutil.copy(SOLUTIONS / "layer_norm_backward.py", right)
    assert main(["exercise", "check", "layer_norm", str(right)]) == 0
    assert "RESULT: right (exit 0)" in capsys.readouterr().out
    wrong = tmp_path / "wrong.py"
    wrong.write_text(right.read_text().replace("- dxhat.sum(axis=1, keepdims=True) / D", "- 0.0"))
    assert main(["exercise", "check", "layer_norm", str(wrong)]) == 1
    out = capsys.readouterr().out
    assert "WRONG: dx" in out and "term 2 (-rstd·mean(dxhat): through the mean) is missing" in out


def test_check_bad_input_is_one_clear_line(tmp_path, capsys):
    assert main(["exercise", "check", "layer_norm", str(tmp_path / "missing.py")]) == 1
    assert "no file" in capsys.readouterr().err
    other = tmp_path / "other.py"
    other.write_text("def something_else():\n    pass\n")
    assert main(["exercise", "check", "layer_norm", str(other)]) == 1
    assert "defines no function layer_norm_backward" in capsys.readouterr().err
    broken = tmp_path / "broken.py"
    broken.write_text("def layer_norm_backward(:\n")
    assert main(["exercise", "check", "layer_norm", str(broken)]) == 1
    assert "error" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["exercise", "check", "no_such_exercise", str(other)])
    assert e.value.code == 2


def test_python_entry_for_notebooks(tmp_path):
    assert exercises.list() == list(EXERCISES)
    path = exercises.start("gelu", dir=tmp_path)
    assert path.name == "gelu_backward.py" and path.read_text() == skeleton("gelu")
    fn = load_function("gelu", SOLUTIONS / "gelu_backward.py")
    assert exercises.check("gelu", fn).ok
    with pytest.raises(ValueError, match="no exercise 'gelu2'; the exercises are: layer_norm, batch_norm"):
        exercises.check("gelu2", fn)
    with pytest.raises(TypeError, match=r"expected the function gelu_backward\(dy, x\) -> dx, got int"):
        exercises.check("gelu", 3)


def test_wrong_return_values_are_named():
    def two(dy, x, w, eps):
        return dy, w
    r = check("layer_norm", two)
    assert r.exit_code == 1 and "returned 2 values; expected 3: (dx, dweight, dbias)" in str(r)

    def none_dbias(dy, x, w, eps):
        return dy, w, None
    r = check("layer_norm", none_dbias)
    assert r.grade.wrong == ["dbias"] and "returned None for dbias" in str(r)

    def raises(dy, x, w, eps):
        raise KeyError("oops")
    r = check("layer_norm", raises)
    assert r.exit_code == 1 and "raised KeyError" in str(r)

    def nan(dy, x, w, eps):
        return dy * np.nan, w, w
    assert check("layer_norm", nan).grade.wrong == ["dx", "dweight", "dbias"]


def test_train_right_backward_follows_the_reference(tmp_path):
    fn = load_function("layer_norm", SOLUTIONS / "layer_norm_backward.py")
    t0 = time.perf_counter()
    r = check("layer_norm", fn, train=True, figure=tmp_path / "curves.png")
    assert time.perf_counter() - t0 < 60
    assert r.ok and len(r.reference) == len(r.yours) == 200
    np.testing.assert_allclose(r.yours, r.reference, rtol=1e-9)
    assert r.reference[-1] < 0.2 * r.reference[0]  # the model does learn
    assert "the curves agree" in r.train_summary
    assert (tmp_path / "curves.png").stat().st_size > 1000


@pytest.mark.parametrize("name", ["attention", "cross_entropy", "embedding", "group_norm"])
def test_train_a_wrong_backward_parts(tmp_path, name):
    right = load_function(name, SOLUTIONS / f"{get(name).function}.py")

    def wrong(*args):  # every gradient doubled
        out = right(*args)
        return tuple(2 * o for o in out) if isinstance(out, tuple) else 2 * out

    t0 = time.perf_counter()
    r = check(name, wrong, train=True, figure=tmp_path / "curves.png")
    assert time.perf_counter() - t0 < 60
    assert not r.ok and r.exit_code == 1
    assert "the curves part at step" in r.train_summary
    assert r.yours != r.reference


def test_train_cli_writes_the_picture(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sm.png"
    assert main(["exercise", "check", "softmax", str(SOLUTIONS / "softmax_backward.py"), "--train",
                 "--figure", str(png), "--steps", "50"]) == 0
    out = capsys.readouterr().out
    assert "--train: softmax, 50 steps" in out and f"loss curves: {png}" in out and png.exists()


@pytest.mark.parametrize("name", list(EXERCISES))
def test_train_every_reference_solution_agrees_in_under_a_minute(tmp_path, name):
    fn = load_function(name, SOLUTIONS / f"{get(name).function}.py")
    t0 = time.perf_counter()
    r = check(name, fn, train=True, figure=tmp_path / "c.png")
    assert time.perf_counter() - t0 < 60
    assert r.ok, str(r)
    np.testing.assert_allclose(r.yours, r.reference, rtol=1e-7)
    assert r.reference[-1] < 0.25 * r.reference[0]  # the small model learns in 200 steps


def test_train_layer_norm_missing_mean_term_parts(tmp_path):
    right = load_function("layer_norm", SOLUTIONS / "layer_norm_backward.py")

    def no_mean_term(dy, x, w, eps):
        dx, dweight, dbias = right(dy, x, w, eps)
        rstd = 1.0 / np.sqrt(x.var(1, keepdims=True) + eps)
        return dx + rstd * (dy * w).mean(1, keepdims=True), dweight, dbias

    r = check("layer_norm", no_mean_term, train=True, figure=tmp_path / "c.png")
    assert "the curves part at step" in r.train_summary and r.exit_code == 1


def test_integer_or_complex_answers_are_refused_naming_the_output():
    r = check("softmax", lambda dy, x: (dy > 0).astype(np.int64))
    assert r.grade.wrong == ["dx"] and "dx has dtype int64; expected a floating point array" in str(r)
    r = check("softmax", lambda dy, x: dy.astype(np.complex128))
    assert r.grade.wrong == ["dx"] and "dx has dtype complex128" in str(r)


def test_train_steps_must_be_positive():
    fn = load_function("softmax", SOLUTIONS / "softmax_backward.py")
    with pytest.raises(ValueError, match="steps must be a positive integer, got 0"):
        check("softmax", fn, train=True, steps=0)


def test_train_is_not_run_for_a_function_that_fails():
    r = check("softmax", lambda dy, x: dy[:1], train=True)
    assert r.exit_code == 1 and r.yours is None and "--train: not run" in str(r)


def test_train_without_matplotlib_still_prints_the_summary(monkeypatch, tmp_path):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    fn = load_function("softmax", SOLUTIONS / "softmax_backward.py")
    r = check("softmax", fn, train=True, steps=20, figure=tmp_path / "c.png")
    assert r.ok and r.figure is None and not (tmp_path / "c.png").exists()
    assert "no picture: --train draws the loss curves with matplotlib: pip install 'minitorch-ln[plot]'" in str(r)
