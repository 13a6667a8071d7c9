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
