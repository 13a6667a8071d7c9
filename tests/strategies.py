"""Hypothesis strategies for shapes, broadcastable shape pairs and float arrays (one file for all tests)."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=5)
nonscalar_shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5)


@st.composite
def broadcastable_pair(draw, max_dims=4):
    """Two shapes that broadcast together, e.g. (3, 1, 5) and (4, 5)."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=max_dims, max_side=5))
    return shapes.input_shapes


def arrays(shape, dtype=np.float64, min_value=-3.0, max_value=3.0):
    return hnp.arrays(dtype, shape, elements=st.floats(min_value, max_value, allow_nan=False,
                                                      allow_infinity=False, width=64 if dtype == np.float64 else 32))


@st.composite
def array_and_dims(draw, dtype=np.float64):
    """An array and a reduction ``dim`` (None, an int, or a tuple) valid for it."""
    shape = draw(nonscalar_shapes)
    a = draw(arrays(shape, dtype))
    nd = len(shape)
    dim = draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                         st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True).map(tuple)))
    return a, dim


@st.composite
def broadcastable_arrays(draw, dtype=np.float64, max_dims=4, min_value=-3.0, max_value=3.0):
    """Two arrays whose shapes broadcast together (either may be 0-d or have size-1 axes)."""
    sa, sb = draw(broadcastable_pair(max_dims=max_dims))
    return draw(arrays(sa, dtype, min_value, max_value)), draw(arrays(sb, dtype, min_value, max_value))


@st.composite
def matmul_shapes(draw):
    """Shapes for ``a @ b``: 1-D or n-D operands whose batch dims broadcast, e.g. (2, 1, 3, 4) @ (5, 4, 2)."""
    n, k, m = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch_a, batch_b = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3)).input_shapes
    a = (k,) if draw(st.booleans()) and not batch_a else (*batch_a, n, k)
    b = (k,) if draw(st.booleans()) and not batch_b else (*batch_b, k, m)
    return a, b


@st.composite
def array_and_dim(draw, dtype=np.float64, unique=False, min_dims=1):
    """A float array (optionally with distinct values, so max/argmax have no ties) and one valid ``dim``."""
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=4, min_side=1, max_side=5))
    elements = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False, width=64 if dtype == np.float64 else 32)
    a = draw(hnp.arrays(dtype, shape, elements=elements, unique=unique))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return a, dim


# ------------------------------------------------------------------ strategies of single op families


# tests/test_ops_activation.py
@st.composite
def array_with_kinks(draw, kinks):
    """A float64 array of a random shape whose values are drawn from normals *and* from ``kinks``."""
    shape = draw(nonscalar_shapes)
    elems = st.one_of(st.floats(-8, 8, allow_nan=False, allow_infinity=False), st.sampled_from(kinks))
    return draw(hnp.arrays(np.float64, shape, elements=elems))


# tests/test_ops_bitwise.py
@st.composite
def int_arrays_and_shifts(draw):
    dtype = draw(st.sampled_from([np.int8, np.uint8, np.int16, np.int32, np.int64]))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    a = draw(hnp.arrays(dtype, shape))
    s = draw(hnp.arrays(dtype, shape, elements=st.integers(0 if dtype == np.uint8 else -3, 70 if dtype != np.int8 else 100)))
    return a, s


# tests/test_ops_convolution.py
@st.composite
def conv_geometry(draw, nd=2):
    groups = draw(st.integers(1, 3))
    cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    k = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    s = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    d = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    p = tuple(draw(st.integers(0, 2)) for _ in range(nd))
    # spatial size at least the dilated kernel minus the padding
    size = tuple(max(1, dd * (kk - 1) + 1 - 2 * pp) + draw(st.integers(0, 4)) for kk, dd, pp in zip(k, d, p))
    n = draw(st.integers(1, 2))
    return {"x": (n, cg * groups) + size, "w": (og * groups, cg) + k, "kw": {"stride": s, "padding": p, "dilation": d,
                                                                             "groups": groups}}


# tests/test_ops_pooling.py
@st.composite
def pool_axis(draw, dilate=True):
    k = draw(st.integers(1, 4))
    d = draw(st.integers(1, 2)) if dilate else 1
    s = draw(st.integers(1, 3))
    p = draw(st.integers(0, k // 2))
    n = max(1, d * (k - 1) + 1 - 2 * p) + draw(st.integers(0, 5))
    return n, k, s, p, d


# tests/test_ops_scatter.py
@st.composite
def shape_dim_seed(draw, min_dims=1):
    """A shape of 1-3 dims (sides 1-4), a valid dim, and a seed for NumPy-generated values and indices."""
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=4))
    return shape, draw(st.integers(-len(shape), len(shape) - 1)), draw(st.integers(0, 2**31 - 1))


@st.composite
def complex_arrays(draw, max_dims=3, max_side=4, magnitude=3.0):
    """A complex128 array of a drawn shape, real and imaginary parts finite in ``[-magnitude, magnitude]``."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=1, max_side=max_side))
    parts = [draw(arrays(shape, np.float64, -magnitude, magnitude)) for _ in range(2)]
    return parts[0] + 1j * parts[1]
