"""Differentiable ops, one module per family. Each op is a ``Function`` followed by the function that
applies it; importing this package also attaches ``Tensor``'s operators and methods, every one listed in
``methods.py``.

The ``torch.*`` ops are the names in each op module's ``__all__``: the loop below gathers them into this
namespace and into ``__all__``, which the package root takes as they are (``minitorch_ln.abs`` is
``ops.elementwise.abs``). A new op is listed once, in its own module (docs/custom_op.md, section 6).
"""

from . import (  # the op modules, each with its ``__all__``
    conversion, shape, elementwise, selection, comparison, activation, activation_piecewise, activation_threshold,
    unary, unary_trig, binary, division, bitwise, reduction, variance, statistics, scan, sorting, histogram,
    linalg_norms, indexing, joining, grids, scatter, index_ops, searching, matmul, layer_norm, rms_norm, batch_norm, softmax,
    loss, embedding, dropout, attention, convolution, padding, pooling, creation, random, reorder, stacking, einsum,
    products, linalg_decomp, loss_regression, loss_margin, distance, view_ops, group_norm, pixel_shuffle,
    special_fns, counting, reduction_nan, strided_views, out_variants, aliases, complex_parts, complex_math,
    loss_multi, pooling_lp, bilinear_map, pooling_unpool, loss_linear, loss_ctc, embedding_bag,
    pooling_fractional,
    products_add, float_parts, view_scatter, view_copies, broadcasting, special_bessel,  # torch.* breadth (issue 24)
    integration, covariance, linalg_torch, matrix_exp, factories, native_norms,
    reshaping_reductions, index_reduce, linalg_lu, linalg_householder, nonzero_static,
    resize, numeric_gradient, histogram_dd, lowrank,
    grid_samplers, stft, ranges,
)

_OP_MODULES = (
    conversion, shape, elementwise, selection, comparison, activation, activation_piecewise, activation_threshold,
    unary, unary_trig, binary, division, bitwise, reduction, variance, statistics, scan, sorting, histogram,
    linalg_norms, indexing, joining, grids, scatter, index_ops, searching, matmul, layer_norm, rms_norm, batch_norm, softmax,
    loss, embedding, dropout, attention, convolution, padding, pooling, creation, random, reorder, stacking, einsum,
    products, linalg_decomp, loss_regression, loss_margin, distance, view_ops, group_norm, pixel_shuffle,
    special_fns, counting, reduction_nan, strided_views, aliases, complex_parts, complex_math,
    loss_multi, pooling_lp, bilinear_map, pooling_unpool, loss_linear, loss_ctc, embedding_bag,
    pooling_fractional,
    products_add, float_parts, view_scatter, view_copies, broadcasting, special_bessel,  # torch.* breadth (issue 24)
    integration, covariance, linalg_torch, matrix_exp, factories, native_norms,
    reshaping_reductions, index_reduce, linalg_lu, linalg_householder, nonzero_static,
    resize, numeric_gradient, histogram_dd, lowrank,
    grid_samplers, stft, ranges,
)

__all__ = []
for _module in _OP_MODULES:
    for _name in _module.__all__:
        assert _name not in __all__, f"{_name} is listed in two op modules' __all__"
        globals()[_name] = getattr(_module, _name)
        if _name in out_variants.OUT_NAMES:  # PyTorch's out= keyword, added in one place
            globals()[_name] = out_variants.with_out(globals()[_name], _name)
    __all__ += _module.__all__
del _module, _name

# torch.* names that are not their module's own ``__all__``: two old aliases, and the random generator's names
# (generator.py's ``__all__`` lists torch.random's, a larger set)
from .generator import Generator, default_generator, initial_seed, manual_seed, seed  # noqa: E402
from .linalg_ops import inv as inverse  # noqa: E402
from .products import outer as ger  # noqa: E402

__all__ += ["Generator", "default_generator", "initial_seed", "manual_seed", "seed", "inverse", "ger"]

# Not torch.* names (not in ``__all__``, so not in the package root): building blocks the layers above
# import from here, and ops that are torch.nn.functional's only
from .conversion import cast, to_device  # noqa: E402
from .division import div_rounding  # noqa: E402
from .grid_sample import affine_grid, grid_sample  # noqa: E402
from .strided_views import unfold_windows  # noqa: E402 - Tensor.unfold (ops.unfold is F.unfold)
from .fold import fold, unfold  # noqa: E402, F811 - the functions shadow the submodules' names here, as scatter/einsum
from .indexing import getitem, setitem_  # noqa: E402
from .interpolate import interpolate  # noqa: E402, F811
from .linalg_norms import linalg_matrix_norm, linalg_vector_norm  # noqa: E402
from .local_response_norm import local_response_norm  # noqa: E402
from .shape import sum_to, unbroadcast  # noqa: E402
from .methods import setup_tensor  # noqa: E402
from . import bfloat16_storage  # noqa: E402, F401 - the ops that see bfloat16 as it is (views, casts)
from . import fast_backward  # noqa: E402, F401 - array backwards the engine uses when nothing records

setup_tensor()  # every Tensor method and operator, listed in ops/methods.py
