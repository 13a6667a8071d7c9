"""Empty inputs and shape errors (issue 13): reductions and losses as PyTorch 2.13, and the math.

The math of an empty reduction: a sum over nothing is 0 (the identity of +), a product 1, a
log-sum-exp ``log 0 = -inf``, a mean or variance ``0/0 = NaN``, and a maximum has no identity, so
it raises. A ``mean`` loss over an empty batch is ``0/0 = NaN``; ``sum`` is 0; ``none`` is empty.
Gradients of an empty input are empty. Shape mismatches PyTorch reports as RuntimeError are
catchable as RuntimeError (and as ValueError), naming both shapes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitorch_ln as mt
from helpers import compare_with_torch, torch
from minitorch_ln.errors import ShapeError

F = mt.nn.functional
TF = torch.nn.functional

# ---------------------------------------------------------------------- strategies (this file)

empty_shapes = st.lists(st.integers(0, 3), min_size=1, max_size=3).filter(lambda s: 0 in s).map(tuple)

E = np.zeros((0, 3), np.float32)
EMPTY_T = np.zeros(0, np.int64)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no NumPy warnings leak
        warnings.filterwarnings("ignore", message=".*degrees of freedom.*")  # PyTorch's own UserWarning
        yield


REDUCTIONS = [
    ("sum()", 0.0), ("sum(0)", 0.0), ("sum(1)", None), ("mean()", np.nan), ("mean(0)", np.nan), ("mean(1)", None),
    ("var()", np.nan), ("var(0)", np.nan), ("std()", np.nan), ("std(0)", np.nan), ("logsumexp(0)", -np.inf),
    ("logsumexp(1)", None), ("prod()", 1.0), ("prod(0)", 1.0), ("norm()", 0.0), ("amax(1)", None),
    ("softmax(0)", None), ("softmax(1)", None), ("log_softmax(0)", None),
]


@pytest.mark.parametrize("expr, want", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_empty_reductions_match_torch_and_the_identities(expr, want, dtype):
    (y,), _ = compare_with_torch(lambda t: eval("t." + expr), lambda t: eval("t." + expr), [E.astype(dtype)])
    if want is not None:  # the identity of the reduction (None: an empty result)
        np.testing.assert_array_equal(y, np.full(y.shape, want))
    else:
        assert y.size == 0


@pytest.mark.parametrize("expr", ["max()", "min()", "amax()", "amax(0)", "amin(0)", "max(0)", "argmax()", "argmax(0)",
                                  "argmin(0)"])
def test_empty_max_min_raise_with_the_shape(expr):
    with pytest.raises((IndexError, RuntimeError)):
        eval("torch.tensor(E)." + expr)
    with pytest.raises(RuntimeError, match=r"empty dimension of shape \(0, 3\)"):
        eval("mt.tensor(E)." + expr)
    with pytest.raises(IndexError, match="no identity"):  # also an IndexError, as PyTorch's with a dim
        eval("mt.tensor(E)." + expr)


LOSSES = [
    ("cross_entropy", {}), ("cross_entropy", {"reduction": "sum"}), ("cross_entropy", {"reduction": "none"}),
    ("cross_entropy", {"label_smoothing": 0.1}), ("nll_loss", {}), ("nll_loss", {"reduction": "sum"}),
    ("nll_loss", {"reduction": "none"}),
]


@pytest.mark.parametrize("name, kw", LOSSES)
def test_empty_batch_losses_match_torch(name, kw):
    # mean over no rows: 0/0 = NaN (before: 0.0); sum: 0; none: an empty (0,) tensor
    (y,), _ = compare_with_torch(lambda x, t: getattr(F, name)(x, t, **kw), lambda x, t: getattr(TF, name)(x, t, **kw),
                                 [E, EMPTY_T])
    red = kw.get("reduction", "mean")
    if red == "mean":
        assert np.isnan(y)
    elif red == "sum":
        assert y == 0.0
    else:
        assert y.shape == (0,)


def test_empty_batch_losses_with_weights_and_probabilities():
    w = np.array([1.0, 2.0, 0.5], np.float32)
    compare_with_torch(lambda x, t: F.cross_entropy(x, t, weight=mt.tensor(w)),
                       lambda x, t: TF.cross_entropy(x, t, weight=torch.tensor(w)), [E, EMPTY_T])
    compare_with_torch(lambda x, p: F.cross_entropy(x, p), lambda x, p: TF.cross_entropy(x, p), [E, E],
                       requires_grad=[True, False])
    compare_with_torch(lambda x, t: F.mse_loss(x, t), lambda x, t: TF.mse_loss(x, t), [E, E])
    compare_with_torch(lambda x, t: F.mse_loss(x, t, reduction="sum"), lambda x, t: TF.mse_loss(x, t, reduction="sum"),
                       [E, E])


def test_all_ignored_targets_nan_loss_zero_gradient():
    # Σ weights = 0: loss 0/0 = NaN; each row's gradient carries weight 0, so dx = 0 (as PyTorch)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    t = np.full(2, -100, np.int64)
    for name in ("cross_entropy", "nll_loss"):
        compare_with_torch(lambda a, b: getattr(F, name)(a, b), lambda a, b: getattr(TF, name)(a, b), [x, t])


def test_empty_matmul_sums_to_zero():
    # (2, 0) @ (0, 3): every entry is an empty sum, 0; the gradients are empty
    compare_with_torch(lambda a, b: a @ b, lambda a, b: a @ b, [np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)])
    compare_with_torch(lambda a, b: a @ b, lambda a, b: a @ b, [np.zeros((0, 4)), np.ones((4, 2))])


@given(empty_shapes)
def test_property_empty_sum_mean_match_torch(shape):
    a = np.zeros(shape, np.float64)
    compare_with_torch(lambda t: t.sum(), lambda t: t.sum(), [a])
    compare_with_torch(lambda t: t.mean(), lambda t: t.mean(), [a])
    for d in range(len(shape)):
        compare_with_torch(lambda t: t.sum(d), lambda t: t.sum(d), [a])
        compare_with_torch(lambda t: t.logsumexp(d), lambda t: t.logsumexp(d), [a])
        compare_with_torch(lambda t: t.softmax(d), lambda t: t.softmax(d), [a])


# --------------------------------------------------------------- errors PyTorch raises as RuntimeError


def test_matmul_shape_errors_are_runtime_errors_naming_both_shapes():
    for a, b, msg in ((mt.ones(2, 3), mt.ones(2, 3), r"shapes \(2, 3\) and \(2, 3\) cannot be multiplied"),
                      (mt.ones(2, 2, 3), mt.ones(3, 3, 3), r"batch dimensions of shapes \(2, 2, 3\) and \(3, 3, 3\)"),
                      (mt.ones(2), mt.tensor(1.0), r"at least 1 dimension, got shapes \(2,\) and \(\)")):
        with pytest.raises(RuntimeError, match=msg):
            a @ b
        with pytest.raises(ValueError, match=msg):  # still a ValueError for code that catches one
            mt.matmul(a, b)
    with pytest.raises(RuntimeError):  # PyTorch's type, for the record
        torch.ones(2, 3) @ torch.ones(2, 3)
    with pytest.raises(ShapeError, match=r"input of shape \(2, 3\) has 3 features, but the weight of shape \(4, 2\)"):
        F.linear(mt.ones(2, 3), mt.ones(4, 2))


def test_broadcast_errors_are_runtime_errors_naming_both_shapes():
    a, b = mt.ones(2, 3), mt.ones(4)
    for op in (lambda: a + b, lambda: a * b, lambda: a / b, lambda: a**b, lambda: mt.maximum(a, b)):
        with pytest.raises(RuntimeError, match=r"\(2, 3\) and \(4,\) do not broadcast"):
            op()
    with pytest.raises(RuntimeError):
        torch.ones(2, 3) + torch.ones(4)


def test_loss_shape_errors_are_runtime_errors():
    with pytest.raises(RuntimeError, match=r"input of shape \(2, 3\) the class-index target must have shape \(2,\), got \(3,\)"):
        F.cross_entropy(mt.ones(2, 3), mt.tensor(np.zeros(3, np.int64)))
    with pytest.raises(ValueError):  # PyTorch raises ValueError here; ShapeError is both
        TF.cross_entropy(torch.ones(2, 3), torch.zeros(3, dtype=torch.long))
    with pytest.raises(RuntimeError, match=r"probability targets must have the input's shape \(2, 3\), got \(2, 4\)"):
        F.cross_entropy(mt.ones(2, 3), mt.ones(2, 4))
    with pytest.raises(RuntimeError, match=r"weight must be a Tensor of shape \(3,\), one per class, got \(2,\)"):
        F.nll_loss(mt.ones(2, 3), mt.tensor(np.zeros(2, np.int64)), weight=mt.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the broadcast warning, as PyTorch's
        with pytest.raises(RuntimeError, match=r"\(2, 3\) and \(4,\) do not broadcast"):
            F.mse_loss(mt.ones(2, 3), mt.ones(4))
