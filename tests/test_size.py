"""``Size`` (``torch.Size``): the type of ``shape`` and ``size()``, and ``Tensor.nelement`` (issue 25)."""

import pickle

import numpy as np
import pytest

import minitorch_ln as mt
from helpers import torch


def test_shape_and_size_are_size_and_print_as_torch():
    x, t = mt.zeros(2, 3), torch.zeros(2, 3)
    for ours, theirs in ((x.shape, t.shape), (x.size(), t.size()), (mt.zeros(()).shape, torch.zeros(()).shape)):
        assert isinstance(ours, mt.Size) and isinstance(ours, tuple)
        assert repr(ours) == repr(theirs) and str(ours) == str(theirs) and f"{ours}" == f"{theirs}"
    assert x.size(1) == 3 and type(x.size(-1)) is int


def test_size_behaves_as_a_tuple():
    s = mt.Size([2, 3])
    assert s == (2, 3) and hash(s) == hash((2, 3)) and s[0] == 2 and len(s) == 2
    assert s.numel() == 6 == torch.Size([2, 3]).numel() and mt.Size().numel() == 1 == torch.Size().numel()
    for ours, theirs in ((s + (4,), torch.Size([2, 3]) + (4,)), ((1,) + s, (1,) + torch.Size([2, 3])),
                         (s * 2, torch.Size([2, 3]) * 2)):
        assert isinstance(ours, mt.Size) and repr(ours) == repr(theirs)
    assert pickle.loads(pickle.dumps(s)) == s and type(pickle.loads(pickle.dumps(s))) is mt.Size
    assert np.zeros(s).shape == (2, 3) and mt.zeros(s).shape == (2, 3)
    assert mt.Size([mt.tensor(3), np.int64(2)]) == (3, 2)
    b, c = mt.zeros(4, 5).shape
    assert (b, c) == (4, 5)


def test_size_slice_is_a_plain_tuple():
    # documented difference: indexing stays tuple's C code (ops read x.shape on every call)
    assert mt.zeros(2, 3, 4).shape[1:] == (3, 4)


@pytest.mark.parametrize("bad,kind", [([2.5], "float"), (["a"], "str"), ([None], "NoneType")])
def test_size_of_non_ints_is_a_type_error(bad, kind):
    with pytest.raises(TypeError, match=f"item 0 is '{kind}'"):
        mt.Size(bad)
    with pytest.raises(TypeError):
        torch.Size(bad)


def test_nelement_is_numel():
    x = mt.zeros(2, 3, 4)
    assert x.nelement() == x.numel() == torch.zeros(2, 3, 4).nelement() == 24
    assert mt.zeros(()).nelement() == 1 and mt.zeros(0, 3).nelement() == 0
    params = [mt.zeros(27, 10, requires_grad=True), mt.zeros(10, requires_grad=True)]
    assert sum(p.nelement() for p in params) == 280
