"""Loss and distance modules (nn/loss.py), Flatten/Unflatten (nn/flatten.py): PyTorch parity of values,
gradients, attributes, buffers, state_dict keys and repr; bad input."""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, torch
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck
from minitorch_ln.nn import loss as L
from minitorch_ln.nn.flatten import Flatten, Unflatten

tnn = torch.nn


def _n(r, *shape):
    return r.standard_normal(shape)


def _p(r, *shape):
    return r.uniform(0.05, 0.95, shape)


def _sign(r, *shape):
    return np.where(r.standard_normal(shape) > 0, 1.0, -1.0)


W3 = np.array([0.5, 1.0, 2.0])
# name, constructor kwargs (NumPy arrays become tensors), arrays(rng), requires_grad
MODULES = [
    ("CrossEntropyLoss", dict(weight=W3, label_smoothing=0.1), lambda r: [_n(r, 4, 3), r.integers(0, 3, 4)], None),
    ("CrossEntropyLoss", dict(reduction="none", ignore_index=1), lambda r: [_n(r, 4, 3), r.integers(0, 3, 4)], None),
    ("NLLLoss", dict(weight=W3, reduction="sum"), lambda r: [_n(r, 4, 3), r.integers(0, 3, 4)], None),
    ("MSELoss", dict(), lambda r: [_n(r, 3, 4), _n(r, 3, 4)], None),
    ("L1Loss", dict(reduction="sum"), lambda r: [_n(r, 3, 4), _n(r, 3, 4)], None),
    ("SmoothL1Loss", dict(beta=0.5), lambda r: [_n(r, 3, 4), _n(r, 3, 4)], None),
    ("HuberLoss", dict(delta=0.7, reduction="none"), lambda r: [_n(r, 3, 4), _n(r, 3, 4)], None),
    ("BCELoss", dict(weight=np.array([1.0, 2.0, 0.5, 1.5])), lambda r: [_p(r, 3, 4), _p(r, 3, 4)], None),
    ("BCEWithLogitsLoss", dict(weight=np.array([1.0, 2.0, 0.5, 1.5]), pos_weight=np.array([3.0, 1.0, 0.5, 2.0])),
     lambda r: [_n(r, 3, 4), _p(r, 3, 4)], None),
    ("KLDivLoss", dict(reduction="batchmean", log_target=True), lambda r: [_n(r, 3, 4), _n(r, 3, 4)], None),
    ("SoftMarginLoss", dict(), lambda r: [_n(r, 3, 4), _sign(r, 3, 4)], [True, False]),
    ("PoissonNLLLoss", dict(full=True), lambda r: [_n(r, 3, 4), r.uniform(0, 4, (3, 4))], None),
    ("GaussianNLLLoss", dict(eps=1e-3), lambda r: [_n(r, 3, 4), _n(r, 3, 4), _p(r, 3, 4)], None),
    ("CosineEmbeddingLoss", dict(margin=0.2), lambda r: [_n(r, 5, 3), _n(r, 5, 3), _sign(r, 5)], [True, True, False]),
    ("MarginRankingLoss", dict(margin=0.5), lambda r: [_n(r, 6), _n(r, 6), _sign(r, 6)], [True, True, False]),
    ("TripletMarginLoss", dict(margin=0.5, p=1.0, swap=True), lambda r: [_n(r, 5, 3), _n(r, 5, 3), _n(r, 5, 3)], None),
    ("CosineSimilarity", dict(dim=0, eps=1e-6), lambda r: [_n(r, 5, 3), _n(r, 5, 3)], None),
    ("PairwiseDistance", dict(p=3.0, keepdim=True), lambda r: [_n(r, 5, 3), _n(r, 5, 3)], None),
]
IDS = [f"{m[0]}_{i}" for i, m in enumerate(MODULES)]


def _build(name, kwargs):
    ours = getattr(L, name)(**{k: mt.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()})
    theirs = getattr(tnn, name)(**{k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()})
    return ours, theirs


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,kwargs,make,rg", MODULES, ids=IDS)
def test_module_matches_torch(name, kwargs, make, rg, dtype, rng):
    kw = {k: v.astype(dtype) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    ours, theirs = _build(name, kw)
    arrays = [a.astype(dtype) if a.dtype.kind == "f" else a for a in make(rng)]
    compare_with_torch(ours, theirs, arrays, requires_grad=rg)


@pytest.mark.parametrize("name,kwargs,make,rg", MODULES, ids=IDS)
def test_attributes_buffers_state_dict_repr_match_torch(name, kwargs, make, rg):
    ours, theirs = _build(name, kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict().keys()) == list(theirs.state_dict().keys())
    assert set(ours._buffers) == set(theirs._buffers)
    for k, v in vars(theirs).items():
        if not k.startswith("_") and k != "training":
            assert getattr(ours, k) == v, k
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[k].array, v.numpy())


def test_gradcheck_through_modules(rng):
    x, t = mt.tensor(_n(rng, 3, 4), requires_grad=True), mt.tensor(_p(rng, 3, 4))
    assert gradcheck(lambda a: L.BCEWithLogitsLoss(pos_weight=mt.tensor(np.array([2.0] * 4)))(a, t), (x,))
    assert gradcheck(lambda a: L.HuberLoss()(a.transpose(0, 1), t.transpose(0, 1)), (x,))


def test_state_dict_loads_from_torch():
    theirs = tnn.BCEWithLogitsLoss(weight=torch.tensor([1.0, 2.0]), pos_weight=torch.tensor([3.0, 4.0]))
    ours = L.BCEWithLogitsLoss(weight=mt.ones(2), pos_weight=mt.ones(2))
    ours.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    np.testing.assert_array_equal(ours.pos_weight.array, [3.0, 4.0])
    np.testing.assert_array_equal(ours.weight.array, [1.0, 2.0])


@pytest.mark.parametrize("sa,rd", [(False, None), (None, False), (True, True), (False, True), (True, None)])
def test_legacy_arguments_set_reduction_as_torch(sa, rd):
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        ours = L.MSELoss(size_average=sa, reduce=rd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = tnn.MSELoss(size_average=sa, reduce=rd)
    assert ours.reduction == theirs.reduction
    with pytest.warns(UserWarning):
        assert L.CrossEntropyLoss(size_average=sa, reduce=rd).reduction == theirs.reduction


# ---------------------------------------------------------------------------------------------------
# Flatten / Unflatten
# ---------------------------------------------------------------------------------------------------


@given(shape=st.lists(st.integers(1, 3), min_size=2, max_size=4), data=st.data())
def test_flatten_unflatten_round_trip_matches_torch(shape, data):
    nd = len(shape)
    start = data.draw(st.integers(-nd, nd - 1))
    end = data.draw(st.integers(start % nd, nd - 1))
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    f, tf = Flatten(start, end), tnn.Flatten(start, end)
    y = f(mt.tensor(x))
    np.testing.assert_array_equal(y.array, tf(torch.tensor(x)).numpy())
    s = start % nd
    sizes = tuple(shape[s:end + 1])
    u, tu = Unflatten(s, sizes), tnn.Unflatten(s, sizes)
    np.testing.assert_array_equal(u(y).array, x)
    assert repr(f) == repr(tf) and repr(u) == repr(tu)


def test_flatten_unflatten_gradients_and_minus_one(rng):
    compare_with_torch(Flatten(), tnn.Flatten(), [_n(rng, 2, 3, 4)])
    compare_with_torch(Unflatten(-1, [2, -1]), tnn.Unflatten(-1, [2, -1]), [_n(rng, 3, 6)])
    x = mt.tensor(_n(rng, 2, 6), requires_grad=True)
    assert gradcheck(lambda a: Unflatten(0, (3, 2))(a.transpose(0, 1)), (x,))


def test_flatten_bad_input():
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
        Unflatten(1, 4)
    with pytest.raises(TypeError, match="found element of type float at pos 1"):
        Unflatten(1, (2, 2.0))
    with pytest.raises(RuntimeError, match=r"sizes \[2, 4\] don't multiply up to the size of dim 1 \(6\)"):
        Unflatten(1, (2, 4))(mt.zeros(3, 6))
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        Unflatten(1, (-1, -1))(mt.zeros(3, 6))
    with pytest.raises(IndexError, match="out of range"):
        Unflatten(3, (2, 3))(mt.zeros(3, 6))
    with pytest.raises(ValueError, match="margin to be greater than 0"):
        L.TripletMarginLoss(margin=0.0)
