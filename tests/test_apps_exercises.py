"""Graded exercises (issue 29): the reference solutions pass, planted LayerNorm mistakes are named down to
the term, correct solutions in other styles raise no false alarm, and the CLI / Python entry points work.
The other nine exercises' planted mistakes are in test_apps_exercises_mistakes.py."""

import pathlib
import time

import numpy as np
import pytest

from minitorch_ln.apps.exercises import EXERCISES, check, get, load_function

SOLUTIONS = pathlib.Path(__file__).parent / "exercise_solutions"


def solution(name):
    ex = get(name)
    return load_function(name, SOLUTIONS / f"{ex.function}.py")


@pytest.mark.parametrize("name", list(EXERCISES))
def test_reference_solution_passes_in_under_5_seconds(name):
    fn = solution(name)
    check(name, fn)  # a first run pays for one-time imports
    t0 = time.perf_counter()
    result = check(name, fn)
    elapsed = time.perf_counter() - t0
    assert result.ok, str(result)
    assert result.exit_code == 0 and "RESULT: right (exit 0)" in str(result)
    assert elapsed < 5.0, f"check {name} took {elapsed:.2f} s"


# ---------------------------------------------------------------- LayerNorm: planted mistakes


def _stats(x, eps, ddof=0):
    mean = x.mean(axis=1, keepdims=True)                                  # (N, 1)
    rstd = 1.0 / np.sqrt(x.var(axis=1, ddof=ddof, keepdims=True) + eps)   # (N, 1)
    return mean, rstd, (x - mean) * rstd


def ln_no_mean_term(dy, x, w, eps):
    _, rstd, xhat = _stats(x, eps)
    dxhat = dy * w
    return rstd * (dxhat - xhat * (dxhat * xhat).mean(1, keepdims=True)), (dy * xhat).sum(0), dy.sum(0)


def ln_no_rstd_term(dy, x, w, eps):
    _, rstd, xhat = _stats(x, eps)
    dxhat = dy * w
    return rstd * (dxhat - dxhat.mean(1, keepdims=True)), (dy * xhat).sum(0), dy.sum(0)


def ln_rstd_term_sign(dy, x, w, eps):
    _, rstd, xhat = _stats(x, eps)
    dxhat = dy * w
    return (rstd * (dxhat - dxhat.mean(1, keepdims=True) + xhat * (dxhat * xhat).mean(1, keepdims=True)),
            (dy * xhat).sum(0), dy.sum(0))


def ln_sum_in_mean_term(dy, x, w, eps):
    _, rstd, xhat = _stats(x, eps)
    dxhat = dy * w
    return (rstd * (dxhat - dxhat.sum(1, keepdims=True) - xhat * (dxhat * xhat).mean(1, keepdims=True)),
            (dy * xhat).sum(0), dy.sum(0))


def ln_sum_in_rstd_term(dy, x, w, eps):
    _, rstd, xhat = _stats(x, eps)
    dxhat = dy * w
    return (rstd * (dxhat - dxhat.mean(1, keepdims=True) - xhat * (dxhat * xhat).sum(1, keepdims=True)),
            (dy * xhat).sum(0), dy.sum(0))


def ln_constants(dy, x, w, eps):  # mean and rstd treated as constants: only term 1
    _, rstd, xhat = _stats(x, eps)
    return rstd * dy * w, (dy * xhat).sum(0), dy.sum(0)


def ln_unbiased(dy, x, w, eps):
    _, rstd, xhat = _stats(x, eps, ddof=1)
    dxhat = dy * w
    return (rstd * (dxhat - dxhat.mean(1, keepdims=True) - xhat * (dxhat * xhat).mean(1, keepdims=True)),
            (dy * xhat).sum(0), dy.sum(0))


def ln_eps_outside(dy, x, w, eps):
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1.0 / (x.std(axis=1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    dxhat = dy * w
    return (rstd * (dxhat - dxhat.mean(1, keepdims=True) - xhat * (dxhat * xhat).mean(1, keepdims=True)),
            (dy * xhat).sum(0), dy.sum(0))


def ln_forgot_weight(dy, x, w, eps):
    _, rstd, xhat = _stats(x, eps)
    return (rstd * (dy - dy.mean(1, keepdims=True) - xhat * (dy * xhat).mean(1, keepdims=True)),
            (dy * xhat).sum(0), dy.sum(0))


def ln_dweight_with_x(dy, x, w, eps):
    dx, _, dbias = solution("layer_norm")(dy, x, w, eps)
    return dx, (dy * x).sum(0), dbias


def ln_dbias_mean(dy, x, w, eps):
    dx, dweight, _ = solution("layer_norm")(dy, x, w, eps)
    return dx, dweight, dy.mean(0)


def ln_sign(dy, x, w, eps):
    dx, dweight, dbias = solution("layer_norm")(dy, x, w, eps)
    return -dx, dweight, dbias


def ln_dweight_wrong_axis(dy, x, w, eps):  # summed over the features: shape (N,), not (D,)
    dx, _, dbias = solution("layer_norm")(dy, x, w, eps)
    return dx, (dy * _stats(x, eps)[2]).sum(1), dbias


LAYER_NORM_MISTAKES = [  # (student, wrong outputs, what the report must say about the first one)
    (ln_no_mean_term, ["dx"], "term 2 (-rstd·mean(dxhat): through the mean) is missing"),
    (ln_no_rstd_term, ["dx"], "term 3 (-rstd·xhat·mean(dxhat·xhat): through rstd, the variance) is missing"),
    (ln_rstd_term_sign, ["dx"], "term 3 (-rstd·xhat·mean(dxhat·xhat): through rstd, the variance) has the wrong sign"),
    (ln_sum_in_mean_term, ["dx"], "term 2 (-rstd·mean(dxhat): through the mean) is scaled by 8 (a sum where a mean"),
    (ln_sum_in_rstd_term, ["dx"], "term 3 (-rstd·xhat·mean(dxhat·xhat): through rstd, the variance) is scaled by 8"),
    (ln_constants, ["dx"], "term 2 (-rstd·mean(dxhat): through the mean) is missing"),
    (ln_unbiased, ["dx", "dweight"], "the unbiased variance"),
    (ln_eps_outside, ["dx", "dweight"], "eps outside the square root"),
    (ln_forgot_weight, ["dx"], "forgot the weight"),
    (ln_dweight_with_x, ["dweight"], "dweight = Σ dy·x"),
    (ln_dbias_mean, ["dbias"], "is scaled by 0.25 (a mean over the 4 rows where a sum belongs)"),
    (ln_sign, ["dx"], "the whole dx has the wrong sign"),
    (ln_dweight_wrong_axis, ["dweight"], "dweight has shape (4,); expected (8,)"),
]


@pytest.mark.parametrize("student, outputs, says", LAYER_NORM_MISTAKES, ids=[m[0].__name__ for m in LAYER_NORM_MISTAKES])
def test_layer_norm_mistake_is_named(student, outputs, says):
    result = check("layer_norm", student)
    text = str(result)
    assert result.exit_code == 1, text
    assert result.grade.wrong == outputs, text
    assert f"WRONG: {outputs[0]}" in text
    assert says in text, text


def test_layer_norm_constants_names_both_missing_terms():
    text = str(check("layer_norm", ln_constants))
    assert "term 2 (-rstd·mean(dxhat): through the mean) is missing" in text
    assert "term 3 (-rstd·xhat·mean(dxhat·xhat): through rstd, the variance) is missing" in text


def test_report_gives_cs231n_rel_error_and_the_float32_reach():
    text = str(check("layer_norm", ln_no_mean_term))
    assert "max rel_error 1 vs float64" in text  # a missing term 2: dx and the reference differ in sign somewhere
    ok = str(check("layer_norm", solution("layer_norm")))
    assert "in float32 your answer is off by" in ok and "the project's float32 backward by" in ok


# ---------------------------------------------------------------- docs and README


ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_docs_list_every_exercise_with_its_signature_and_shapes():
    doc = (ROOT / "docs" / "exercises.md").read_text()
    for ex in EXERCISES.values():
        assert f"`{ex.signature}`" in doc, ex.name
        assert ex.shapes in doc, f"docs/exercises.md: {ex.name}'s shapes differ from the skeleton's"


def test_readme_session_is_what_check_prints(tmp_path):
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Exercises: write a backward"):readme.index("## Examples: claims")]
    code = section.split("```python\n")[1].split("```")[0]
    shown = section.split("$ minitorch-ln exercise check layer_norm layer_norm_backward.py --train\n")[1]
    shown = shown.split("$ echo $?")[0]
    namespace = {"np": np}
    exec(code, namespace)  # noqa: S102 - the README's own example
    result = check("layer_norm", namespace["layer_norm_backward"], train=True, figure=tmp_path / "c.png")
    assert str(result).replace(str(tmp_path / "c.png"), "layer_norm_train.png") + "\n" == shown
    assert result.exit_code == 1 and shown.rstrip().endswith("(exit 1)") and "the curves part at step" in shown


# ---------------------------------------------------------------- probes: the function tested term by term


PROBED = [  # (student, the probe that must fail, the term it names)
    (ln_no_mean_term, "dy constant in each row", "term 2"),
    (ln_sum_in_mean_term, "dy constant in each row", "term 2"),
    (ln_no_rstd_term, "dy ∝ xhat in each row", "term 3"),
    (ln_rstd_term_sign, "dy ∝ xhat in each row", "term 3"),
    (ln_sum_in_rstd_term, "dy ∝ xhat in each row", "term 3"),
    (ln_unbiased, "dy ⟂ 1 and xhat in each row", "term 1"),
    (ln_eps_outside, "dy ⟂ 1 and xhat in each row", "term 1"),
]


@pytest.mark.parametrize("student, probe, term", PROBED, ids=[p[0].__name__ for p in PROBED])
def test_layer_norm_probes_name_the_term(student, probe, term):
    lines = [d for d in check("layer_norm", student).grade.diagnoses["dx"] if d.startswith("probe")]
    failing = [d for d in lines if ": wrong" in d]
    assert failing and failing[0].startswith(f"probe {probe}") and f": {term} (" in failing[0], lines
    assert all(d.endswith(": right") for d in lines if d not in failing)


def test_probes_clear_the_terms_when_the_weight_is_forgotten():
    lines = check("layer_norm", ln_forgot_weight).grade.diagnoses["dx"]
    assert any(d.startswith("every probe (all with weight = 1) is right") for d in lines), lines


def test_batch_norm_probes_work_per_column():
    def no_mean_term(dy, x, w, eps):
        rstd = 1.0 / np.sqrt(x.var(0) + eps)
        xhat = (x - x.mean(0)) * rstd
        g = dy * w
        return rstd * (g - xhat * (g * xhat).mean(0)), (dy * xhat).sum(0), dy.sum(0)

    lines = check("batch_norm", no_mean_term).grade.diagnoses["dx"]
    assert "probe dy constant in each column (terms 1 and 2 cancel: dx = 0): wrong" in " ".join(lines)
