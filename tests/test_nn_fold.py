"""Fold and Unfold layers: outputs and input gradients equal PyTorch's (float64/float32, random upstream
gradient), repr, the round trip that counts covering blocks, gradcheck through a layer, bad arguments."""

import numpy as np
import pytest
from helpers import compare_with_torch, t64, torch

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.nn.fold import Fold, Unfold

tnn = torch.nn

LAYERS = [
    (Unfold, tnn.Unfold, (2,), {}, (2, 3, 5, 6)),
    (Unfold, tnn.Unfold, ((3, 2),), {"dilation": (2, 1), "padding": 1, "stride": (1, 2)}, (2, 3, 5, 6)),
    (Unfold, tnn.Unfold, (3,), {"padding": 1}, (3, 4, 4)),
    (Fold, tnn.Fold, ((4, 5), 2), {}, (2, 12, 12)),
    (Fold, tnn.Fold, ((5, 6), (2, 3)), {"stride": 2, "padding": (1, 0)}, (1, 6, 6)),
    (Fold, tnn.Fold, ([3, 3], 2), {"dilation": 2, "padding": 1}, (8, 9)),
]
IDS = [f"{o.__name__}-{a}-{k}" for o, _t, a, k, _s in LAYERS]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ours,theirs,args,kw,x_shape", LAYERS, ids=IDS)
def test_layer_matches_torch(ours, theirs, args, kw, x_shape, dtype):
    # through the one helper: output values and dtype, requires_grad, the input gradient under a
    # random upstream gradient
    a = np.random.default_rng(0).standard_normal(x_shape).astype(dtype)
    compare_with_torch(lambda x: ours(*args, **kw)(x), lambda x: theirs(*args, **kw)(x), [a])


@pytest.mark.parametrize("ours,theirs,args,kw,x_shape", LAYERS, ids=IDS)
def test_layer_repr_matches_torch(ours, theirs, args, kw, x_shape):
    m = ours(*args, **kw)
    assert repr(m) == repr(theirs(*args, **kw))
    assert list(m.parameters()) == [] and m.state_dict() == {}


def test_fold_of_unfold_counts_covering_blocks_and_gradcheck(rng):
    unfold, fold = Unfold(2, stride=1), Fold((3, 3), 2, stride=1)
    counts = fold(unfold(mt.ones(1, 1, 3, 3, dtype=mt.float64)))
    assert counts.array[0, 0].tolist() == [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    x = t64(rng.standard_normal((1, 2, 3, 3)))
    assert gradcheck(lambda t: fold(unfold(t)), (x,)) and gradgradcheck(lambda t: fold(unfold(t)), (x,))


def test_layer_bad_arguments():
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero"):
        Unfold(0)(mt.randn(1, 1, 3, 3))
    with pytest.raises(RuntimeError, match="expected size of input's dimension 2 to match"):
        Fold((4, 4), 2)(mt.randn(1, 4, 8))
