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
