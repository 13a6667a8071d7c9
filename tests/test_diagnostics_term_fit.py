"""``diagnostics.fit_terms``: a gradient fitted as a combination of its formula's terms."""

import numpy as np
import pytest

from minitorch_ln.diagnostics import fit_terms


def _terms(rng):
    return {"a": rng.standard_normal((4, 5)), "b": rng.standard_normal((4, 5)), "c": rng.standard_normal((4, 5))}


def test_exact_combination_gives_its_coefficients():
    rng = np.random.default_rng(0)
    t = _terms(rng)
    fit = fit_terms(t["a"] - t["b"] + 0.0 * t["c"], t)
    assert fit.explained
    assert fit.coefficients == pytest.approx({"a": 1.0, "b": -1.0, "c": 0.0}, abs=1e-12)
    assert fit.off == ["b", "c"]
    assert fit.describe() == "b has the wrong sign (coefficient -1, expected 1); c is missing (coefficient 0, expected 1)"


def test_scale_hint_and_several_cases():
    rng = np.random.default_rng(1)
    cases = [_terms(rng) for _ in range(3)]
    actual = [c["a"] + 8 * c["b"] + c["c"] for c in cases]
    fit = fit_terms(actual, {k: [c[k] for c in cases] for k in "abc"}, hints={8.0: "a sum where a mean belongs"})
    assert fit.explained and fit.off == ["b"]
    assert "b is scaled by 8 (a sum where a mean belongs)" in fit.describe()


def test_the_right_sum_and_an_unexplained_answer():
    rng = np.random.default_rng(2)
    t = _terms(rng)
    assert fit_terms(t["a"] + t["b"] + t["c"], t).describe() == "it is the sum of the right terms"
    other = fit_terms(np.sin(t["a"]) * 3, t)
    assert not other.explained and other.describe().startswith("no combination of the formula's terms explains it")


def test_bad_shapes_raise():
    t = {"a": np.ones((2, 3))}
    with pytest.raises(ValueError, match="term 'a' has 6 elements in case 0, actual has 4"):
        fit_terms(np.ones(4), t)
    with pytest.raises(ValueError, match="term 'a' has 1 cases, actual has 2"):
        fit_terms([np.ones(6), np.ones(6)], t)


def test_a_float32_answer_fits_at_its_own_precision():
    # a - b computed in float32: the missing c comes out as a coefficient of float32 rounding's size,
    # 0 at float32's tolerance (it read 'scaled by ~1e-6' when zero meant |c| < 1e-6 whatever the tol)
    rng = np.random.default_rng(3)
    t = {k: rng.standard_normal(50) for k in "abc"}
    actual = (t["a"] - t["b"]).astype(np.float32) + np.float32(3e-6) * t["c"].astype(np.float32)
    fit = fit_terms(actual, t, tol=1e-5)
    assert fit.explained and fit.coefficients["c"] == 0.0
    assert "is missing" in fit.describe() and "has the wrong sign" in fit.describe()
