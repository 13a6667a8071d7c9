"""``ops/normalization_common.py``: the cached row layouts (``rows_of``) and the short path of
``resolve_axes`` (an int ``normalized_shape`` equal to the last dim), each against the general path."""

import numpy as np
import pytest

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln.ops.normalization_common import Rows, resolve_axes, rows_of

SLOTS = Rows.__slots__


@pytest.mark.parametrize("shape, axes", [((2, 3, 4), (2,)), ((2, 3, 4), (1, 2)), ((2, 3, 4), (0, 2)), ((5,), (0,)),
                                         ((2, 0, 3), (2,)), ((4, 3, 2, 2), (1,))])
def test_rows_of_is_the_rows_made_once(shape, axes):
    made = Rows(shape, axes)
    cached = rows_of(shape, axes)
    assert all(getattr(cached, k) == getattr(made, k) for k in SLOTS)
    assert rows_of(mt.zeros(*shape).shape, axes) is cached        # a Size and a tuple: the same entry
    with pytest.raises(AttributeError):                           # read-only in practice: no new fields
        cached.extra = 1
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    np.testing.assert_array_equal(cached.from_rows(cached.to_rows(x).copy()), x)


def _axes_or_error(x, normalized_shape, dim):
    try:
        return resolve_axes(x, normalized_shape, dim, "layer_norm")
    except (TypeError, ValueError) as e:
        return type(e), str(e)


@pytest.mark.parametrize("shape", [(2, 3, 4), (4,), (3, 1), (2, 0)])
@pytest.mark.parametrize("normalized_shape", [4, 1, 0, 3, -4, True, 12])
@pytest.mark.parametrize("dim", [None, 1])
def test_resolve_axes_short_path_equals_the_general_one(shape, normalized_shape, dim):
    # np.int64 is an Integral but not an int: it takes the general path, with the same meaning (its
    # error messages name it as np.int64(n), the int's as n)
    x = mt.zeros(*shape)
    short = _axes_or_error(x, normalized_shape, dim)
    general = _axes_or_error(x, np.int64(normalized_shape), dim)
    if isinstance(general[0], type):  # an error: (class, message)
        general = general[0], general[1].replace(repr(np.int64(normalized_shape)), repr(normalized_shape))
    assert short == general


def test_layer_norm_with_an_int_and_with_a_tuple_is_the_same_bit_for_bit():
    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal((3, 5, 16)).astype(np.float32), rng.standard_normal((3, 5, 16)).astype(np.float32)
    w, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    out = []
    for normalized_shape in (16, (16,), np.int64(16)):
        xs, ws, bs = (mt.tensor(a, requires_grad=True) for a in (x, w, b))
        y = F.layer_norm(xs, normalized_shape, ws, bs)
        y.backward(mt.tensor(dy))
        out.append([a.numpy().tobytes() for a in (y.detach(), xs.grad, ws.grad, bs.grad)])
    assert out[0] == out[1] == out[2]
