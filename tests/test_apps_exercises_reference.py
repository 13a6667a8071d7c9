"""What the grader stands on: the project's backward it grades against agrees with PyTorch's and with
float64 finite differences on every case of every exercise; the mistake catalogue really is wrong;
and, as properties over random seeds and coefficients, a right answer always passes and a LayerNorm
dx with its terms mixed in other proportions is always caught with the right coefficients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minitorch_ln.apps.exercises import EXERCISES, check, get
from minitorch_ln.apps.exercises.grading import fd_grads, normwise_error, project_grads
from minitorch_ln.apps.exercises.layer_norm import pieces

torch = pytest.importorskip("torch")
TF = torch.nn.functional

TORCH_FORWARD = {  # the same op in PyTorch, on the exercise's input dict
    "layer_norm": lambda t: TF.layer_norm(t["x"], t["x"].shape[-1:], t["weight"], t["bias"], t["eps"]),
    "batch_norm": lambda t: TF.batch_norm(t["x"], None, None, t["weight"], t["bias"], training=True, eps=t["eps"]),
    "rms_norm": lambda t: TF.rms_norm(t["x"], t["x"].shape[-1:], t["weight"], t["eps"]),
    "group_norm": lambda t: TF.group_norm(t["x"], t["num_groups"], t["weight"], t["bias"], t["eps"]),
    "softmax": lambda t: TF.softmax(t["x"], -1),
    "cross_entropy": lambda t: TF.cross_entropy(t["logits"], t["target"]),
    "linear": lambda t: TF.linear(t["x"], t["weight"], t["bias"]),
    "gelu": lambda t: TF.gelu(t["x"]),
    "embedding": lambda t: TF.embedding(t["indices"], t["weight"]),
    "attention": lambda t: TF.scaled_dot_product_attention(t["q"], t["k"], t["v"], is_causal=True),
}


def _torch_grads(ex, inputs):
    T = {k: (torch.tensor(v, requires_grad=k in ex.wrt) if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    y = TORCH_FORWARD[ex.name](T)
    y.backward(torch.tensor(inputs[ex.args[0]]))
    return {o: T[w].grad.numpy() for o, w in zip(ex.outputs, ex.wrt)}


@pytest.mark.parametrize("name", list(EXERCISES))
def test_the_reference_agrees_with_pytorch_and_finite_differences(name):
    ex = get(name)
    for case in ex.cases(np.random.default_rng(3)):
        ours = project_grads(ex, case.inputs)
        theirs = _torch_grads(ex, case.inputs)
        numerical = fd_grads(ex, case.inputs, case.h)
        for o in ex.outputs:
            assert normwise_error(ours[o], theirs[o]) < 1e-10, (case.label, o)
            assert normwise_error(ours[o], numerical[o]) < 1e-5, (case.label, o)


@pytest.mark.parametrize("name", list(EXERCISES))
def test_every_catalogue_mistake_is_wrong_somewhere(name):
    ex = get(name)
    cases = ex.cases(np.random.default_rng(0))
    for m in ex.mistakes:
        errs = []
        for case in cases:
            right = project_grads(ex, case.inputs)
            try:
                with np.errstate(all="ignore"):
                    wrong = m.fn(case.inputs)
            except ValueError:  # a transpose where in != out: the grader skips such a case
                continue
            errs += [normwise_error(w, right[o]) for o, w in wrong.items()
                     if np.isfinite(w).all() and np.shape(w) == right[o].shape]
        assert max(errs) > 1e-6, f"{name}: the catalogue's {m.name!r} equals the right answer"


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       name=st.sampled_from(["rms_norm", "softmax", "cross_entropy", "gelu", "embedding", "attention"]))
def test_property_the_project_backward_itself_passes_for_any_seed(seed, name):
    ex = get(name)

    def student(*args):  # the project's own backward, called as a student's function
        inputs = {**ex.cases(np.random.default_rng(0))[0].inputs, **dict(zip(ex.args, args))}
        g = project_grads(ex, inputs, np.asarray(args[0]).dtype)
        out = tuple(g[o] for o in ex.outputs)
        return out if len(out) > 1 else out[0]

    assert check(name, student, seed=seed).ok


@settings(max_examples=15, deadline=None)
@given(c2=st.sampled_from([0.0, -1.0, 2.0, 0.5, 1.0]), c3=st.sampled_from([0.0, -1.0, 3.0, 1.0]),
       seed=st.integers(0, 2**32 - 1))
def test_property_layer_norm_terms_in_other_proportions_are_named(c2, c3, seed):
    def student(dy, x, w, eps):
        p = pieces({"dy": dy, "x": x, "weight": w, "eps": eps})
        return p["t1"] + c2 * p["t2"] + c3 * p["t3"], p["dweight"], p["dbias"]

    result = check("layer_norm", student, seed=seed)
    text = str(result)
    if c2 == 1.0 and c3 == 1.0:
        assert result.ok, text
        return
    assert result.grade.wrong == ["dx"], text
    for k, c in (("term 2", c2), ("term 3", c3)):
        if c != 1.0:
            assert f"{k} (" in text.split("WRONG: dx")[1], text
            assert f"(coefficient {c:.3g}, expected 1)" in text, text
