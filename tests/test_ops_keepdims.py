"""``keepdims=`` (NumPy's spelling) as PyTorch's alias of ``keepdim=`` in the reductions (issue 25).

Table-driven: every reduction for which torch 2.13 accepts ``keepdims=`` (found by calling torch) is
one entry of CASES; REJECTED lists those torch rejects it for (a TypeError here too).
"""

import numpy as np
import pytest

import minitorch_ln as mt
from helpers import compare_with_torch, torch

X = np.array([[3.0, -1.0, 2.0, 0.5], [0.0, 4.0, -2.0, 1.0], [1.5, 1.25, -0.5, 2.5]])  # (3, 4), no ties

# (name, call(lib, x, **kw)) with dim=1
CASES = [
    ("sum", lambda m, x, **k: x.sum(1, **k)),
    ("torch.sum", lambda m, x, **k: m.sum(x, dim=1, **k)),
    ("mean", lambda m, x, **k: x.mean(1, **k)),
    ("prod", lambda m, x, **k: m.prod(x, 1, **k)),
    ("std", lambda m, x, **k: x.std(1, **k)),
    ("var", lambda m, x, **k: m.var(x, 1, **k)),
    ("amax", lambda m, x, **k: x.amax(1, **k)),
    ("amin", lambda m, x, **k: m.amin(x, 1, **k)),
    ("max", lambda m, x, **k: x.max(1, **k)[0]),
    ("min", lambda m, x, **k: m.min(x, 1, **k)[0]),
    ("logsumexp", lambda m, x, **k: x.logsumexp(1, **k)),
    ("median", lambda m, x, **k: m.median(x, 1, **k)[0]),
    ("nanmedian", lambda m, x, **k: m.nanmedian(x, 1, **k)[0]),
    ("kthvalue", lambda m, x, **k: m.kthvalue(x, 2, 1, **k)[0]),
    ("quantile", lambda m, x, **k: m.quantile(x, 0.3, 1, **k)),
    ("var_mean", lambda m, x, **k: m.var_mean(x, 1, **k)),
    ("std_mean", lambda m, x, **k: m.std_mean(x, 1, **k)),
]
INDEX_CASES = [  # outputs without a gradient
    ("argmax", lambda m, x, **k: x.argmax(1, **k)),
    ("argmin", lambda m, x, **k: m.argmin(x, 1, **k)),
    ("any", lambda m, x, **k: (x > 1).any(1, **k)),
    ("all", lambda m, x, **k: m.all(x > -3, 1, **k)),
    ("max.indices", lambda m, x, **k: x.max(1, **k)[1]),
]
REJECTED = [  # torch 2.13 raises TypeError for keepdims= here
    ("cumsum", lambda m, x, **k: x.cumsum(1, **k)),
    ("softmax", lambda m, x, **k: m.softmax(x, 1, **k)),
    ("count_nonzero", lambda m, x, **k: m.count_nonzero(x, 1, **k)),
]


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("name,call", CASES, ids=[c[0] for c in CASES])
def test_keepdims_is_keepdim(name, call, keep):
    compare_with_torch(lambda x: call(mt, x, keepdims=keep), lambda x: call(torch, x, keepdims=keep), [X.copy()])


@pytest.mark.parametrize("name,call", INDEX_CASES, ids=[c[0] for c in INDEX_CASES])
def test_keepdims_index_and_bool_reductions(name, call):
    ours = call(mt, mt.tensor(X), keepdims=True)
    theirs = call(torch, torch.tensor(X), keepdims=True)
    assert tuple(ours.shape) == tuple(theirs.shape) == (3, 1)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name,call", CASES[:4] + INDEX_CASES[:2], ids=[c[0] for c in CASES[:4] + INDEX_CASES[:2]])
def test_keepdim_and_keepdims_together_is_a_type_error(name, call):
    with pytest.raises(TypeError, match="keepdims"):
        call(mt, mt.tensor(X), keepdim=True, keepdims=True)
    with pytest.raises(TypeError):
        call(torch, torch.tensor(X), keepdim=True, keepdims=True)


@pytest.mark.parametrize("name,call", REJECTED, ids=[c[0] for c in REJECTED])
def test_keepdims_rejected_where_torch_rejects_it(name, call):
    with pytest.raises(TypeError):
        call(torch, torch.tensor(X), keepdims=True)
    with pytest.raises(TypeError, match="keepdims"):
        call(mt, mt.tensor(X), keepdims=True)
