"""The public names of ``minitorch_ln`` and ``minitorch_ln.ops``, recorded before the export lists became
the op modules' own ``__all__`` (issue 23; the sets were equal to these lists then). No recorded name may
disappear, and a name beyond them must be a new op, listed in its module's ``__all__`` (so a new op is
not listed here as well, and no helper leaks out). Submodules are left out: they come and go with what
has been imported."""

import types

import pytest

import minitorch_ln
import minitorch_ln.ops

ROOT_NAMES = [
    "BoolTensor", "ByteTensor", "CharTensor", "Device", "DoubleTensor", "FloatTensor", "Generator", "HalfTensor",
    "IntTensor", "LongTensor", "ShortTensor", "Size", "Tensor", "abs", "acos", "acosh", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "add", "addmm", "all", "allclose", "amax", "amin", "aminmax",
    "any", "arange", "argmax", "argmin", "argsort", "argwhere", "as_tensor", "asin", "asinh", "atan", "atan2",
    "atanh", "atleast_1d", "atleast_2d", "atleast_3d", "autocast", "avg_pool1d", "avg_pool2d", "baddbmm",
    "batch_norm", "bernoulli", "bfloat16", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "block_diag", "bmm", "bool", "broadcast_to", "bucketize", "can_cast", "cartesian_prod", "cat", "cdist", "ceil",
    "celu", "chunk", "clamp", "clamp_max", "clamp_min", "clone", "column_stack", "combinations", "conv1d", "conv2d",
    "conv_transpose1d", "conv_transpose2d", "copysign", "cos", "cosh", "cosine_embedding_loss", "cosine_similarity",
    "count_nonzero", "cross", "cross_entropy", "cuda_is_available", "cummax", "cummin", "cumprod", "cumsum",
    "default_generator", "det", "device", "diag", "diag_embed", "diagflat", "diagonal", "div", "divide", "dot",
    "double", "dropout", "dsplit", "dstack", "einsum", "elu", "embedding", "empty", "empty_like", "enable_grad",
    "eq", "equal", "erf", "erfc", "erfinv", "exp", "exp2", "expand", "expm1", "eye", "finfo", "flatten", "flip",
    "fliplr", "flipud", "float", "float16", "float32", "float64", "float_power", "floor", "floor_divide", "fmax",
    "fmin", "fmod", "frac", "from_numpy", "full", "full_like", "gather", "gaussian_nll_loss", "ge", "gelu", "ger",
    "get_autocast_dtype", "get_default_dtype", "get_rng_state", "glu", "group_norm", "gt", "half", "hardshrink",
    "hardsigmoid", "hardswish", "hardtanh", "heaviside", "histc", "histogram", "hsplit", "hstack", "huber_loss",
    "hypot", "iinfo", "index_add", "index_copy", "index_fill", "index_put", "index_select", "initial_seed",
    "instance_norm", "int16", "int32", "int64", "int8", "inverse", "is_autocast_enabled", "isclose", "isfinite",
    "isinf", "isnan", "isneginf", "isposinf", "isreal", "kl_div", "kron", "kthvalue", "l1_loss", "layer_norm", "le",
    "leaky_relu", "lerp", "linear", "linspace", "load", "log", "log10", "log1p", "log2", "log_softmax", "logaddexp",
    "logaddexp2", "logcumsumexp", "logical_and", "logical_not", "logical_or", "logical_xor", "logsigmoid",
    "logspace", "logsumexp", "long", "lt", "manual_seed", "margin_ranking_loss", "masked_fill", "masked_scatter",
    "masked_select", "matmul", "max", "max_pool1d", "max_pool2d", "maximum", "mean", "median", "meshgrid", "min",
    "minimum", "mish", "mm", "mode", "moveaxis", "movedim", "mse_loss", "msort", "mul", "multinomial", "mv",
    "nan_to_num", "nanmedian", "narrow", "ne", "neg", "nll_loss", "no_grad", "nonzero", "norm", "normal",
    "normalize", "one_hot", "ones", "ones_like", "outer", "pad", "pairwise_distance", "permute", "pixel_shuffle",
    "pixel_unshuffle", "poisson", "poisson_nll_loss", "pow", "prelu", "prod", "promote_types", "quantile", "rand",
    "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm", "reciprocal", "relu", "relu6",
    "remainder", "repeat_interleave", "reshape", "result_type", "rms_norm", "roll", "rot90", "round", "row_stack",
    "rrelu", "rsqrt", "save", "scaled_dot_product_attention", "scatter", "scatter_add", "scatter_reduce",
    "searchsorted", "seed", "select", "selu", "set_autocast_dtype", "set_default_dtype", "set_printoptions",
    "set_rng_state", "sgn", "short", "sigmoid", "sign", "signbit", "silu", "sin", "sinh", "slogdet",
    "smooth_l1_loss", "soft_margin_loss", "softmax", "softmin", "softplus", "softshrink", "softsign", "sort",
    "split", "sqrt", "square", "squeeze", "stack", "std", "std_mean", "sub", "sum", "swapaxes", "swapdims", "take",
    "take_along_dim", "tan", "tanh", "tanhshrink", "tensor", "tensor_split", "tensordot", "threshold", "tile",
    "topk", "transpose", "tril", "tril_indices", "triplet_margin_loss", "triu", "triu_indices", "true_divide",
    "trunc", "uint8", "unbind", "unflatten", "unique", "unsqueeze", "var", "var_mean", "vdot", "view", "vsplit",
    "vstack", "where", "xlogy", "zeros", "zeros_like",
    "cdouble", "cfloat", "complex128", "complex64",  # the complex dtypes (ops/complex_parts.py)
]

OPS_NAMES = [
    # F.affine_grid/F.grid_sample and Tensor.unfold's function: building blocks, not torch.* names
    "affine_grid", "grid_sample", "unfold_windows",
    "Generator", "abs", "acos", "acosh", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "add", "addmm", "all", "allclose", "amax", "amin", "aminmax", "any", "arange", "argmax",
    "argmin", "argsort", "argwhere", "as_tensor", "asin", "asinh", "atan", "atan2", "atanh", "atleast_1d",
    "atleast_2d", "atleast_3d", "avg_pool1d", "avg_pool2d", "baddbmm", "batch_norm", "bernoulli",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "bitwise_and", "bitwise_left_shift", "bitwise_not",
    "bitwise_or", "bitwise_right_shift", "bitwise_xor", "block_diag", "bmm", "broadcast_to", "bucketize",
    "cartesian_prod", "cast", "cat", "cdist", "ceil", "celu", "chunk", "clamp", "clamp_max", "clamp_min", "clone",
    "column_stack", "combinations", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "copysign", "cos",
    "cosh", "cosine_embedding_loss", "cosine_similarity", "count_nonzero", "cross", "cross_entropy", "cummax",
    "cummin", "cumprod", "cumsum", "default_generator", "det", "diag", "diag_embed", "diagflat", "diagonal", "div",
    "div_rounding", "dot", "dropout", "dsplit", "dstack", "einsum", "elu", "embedding", "empty", "empty_like", "eq",
    "equal", "erf", "erfc", "erfinv", "exp", "exp2", "expand", "expm1", "eye", "flatten", "flip", "fliplr",
    "flipud", "float_power", "floor", "floor_divide", "fmax", "fmin", "fmod", "fold", "frac", "from_numpy", "full",
    "full_like", "gather", "gaussian_nll_loss", "ge", "gelu", "ger", "getitem", "glu", "group_norm", "gt",
    "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "heaviside", "histc", "histogram", "hsplit", "hstack",
    "huber_loss", "hypot", "index_add", "index_copy", "index_fill", "index_put", "index_select", "initial_seed",
    "instance_norm", "interpolate", "inverse", "isclose", "isfinite", "isinf", "isnan", "isneginf", "isposinf",
    "isreal", "kl_div", "kron", "kthvalue", "l1_loss", "layer_norm", "le", "leaky_relu", "lerp",
    "linalg_matrix_norm", "linalg_vector_norm", "linear", "linspace", "local_response_norm", "log", "log10",
    "log1p", "log2", "log_softmax", "logaddexp", "logaddexp2", "logcumsumexp", "logical_and", "logical_not",
    "logical_or", "logical_xor", "logsigmoid", "logspace", "logsumexp", "lt", "manual_seed", "margin_ranking_loss",
    "masked_fill", "masked_scatter", "masked_select", "matmul", "max", "max_pool1d", "max_pool2d", "maximum",
    "mean", "median", "meshgrid", "min", "minimum", "mish", "mm", "mode", "moveaxis", "movedim", "mse_loss",
    "msort", "mul", "multinomial", "mv", "nan_to_num", "nanmedian", "narrow", "ne", "neg", "nll_loss", "nonzero",
    "norm", "normal", "normalize", "one_hot", "ones", "ones_like", "outer", "pad", "pairwise_distance", "permute",
    "pixel_shuffle", "pixel_unshuffle", "poisson", "poisson_nll_loss", "pow", "prelu", "prod", "quantile", "rand",
    "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm", "reciprocal", "relu", "relu6",
    "remainder", "repeat_interleave", "reshape", "rms_norm", "roll", "rot90", "round", "row_stack", "rrelu",
    "rsqrt", "scaled_dot_product_attention", "scatter", "scatter_add", "scatter_reduce", "searchsorted", "seed",
    "select", "selu", "setitem_", "setup_tensor", "sgn", "sigmoid", "sign", "signbit", "silu", "sin", "sinh",
    "slogdet", "smooth_l1_loss", "soft_margin_loss", "softmax", "softmin", "softplus", "softshrink", "softsign",
    "sort", "split", "sqrt", "square", "squeeze", "stack", "std", "std_mean", "sub", "sum", "sum_to", "swapaxes",
    "swapdims", "take", "take_along_dim", "tan", "tanh", "tanhshrink", "tensor_split", "tensordot", "threshold",
    "tile", "to_device", "topk", "transpose", "tril", "tril_indices", "triplet_margin_loss", "triu", "triu_indices",
    "true_divide", "trunc", "unbind", "unbroadcast", "unflatten", "unfold", "unique", "unsqueeze", "var",
    "var_mean", "vdot", "view", "vsplit", "vstack", "where", "xlogy", "zeros", "zeros_like"
]


def _public(module) -> list:
    return sorted(n for n, v in vars(module).items() if not n.startswith("_") and not isinstance(v, types.ModuleType))


@pytest.mark.parametrize("module, recorded", [(minitorch_ln, ROOT_NAMES), (minitorch_ln.ops, OPS_NAMES)],
                         ids=["minitorch_ln", "ops"])
def test_the_recorded_public_names_stay_and_only_new_ops_join_them(module, recorded):
    names = _public(module)
    assert sorted(set(recorded) - set(names)) == []
    assert sorted(set(names) - set(recorded) - set(minitorch_ln.ops.__all__)) == []


def test_the_root_takes_ops_all_as_it_is():
    # every name of ops.__all__ is the same object at the root, except div (the root's is div_rounding, torch.div)
    differ = [n for n in minitorch_ln.ops.__all__ if getattr(minitorch_ln, n) is not getattr(minitorch_ln.ops, n)]
    assert differ == ["div"]
    assert minitorch_ln.div.__wrapped__ is minitorch_ln.ops.div_rounding  # with PyTorch's out= (ops/out_variants.py)


def test_each_op_module_lists_its_ops_once():
    for module in minitorch_ln.ops._OP_MODULES:
        assert module.__all__ == sorted(set(module.__all__)), module.__name__
        for name in module.__all__:
            ours = getattr(minitorch_ln.ops, name)
            if name in minitorch_ln.ops.out_variants.OUT_NAMES and hasattr(ours, "__wrapped__"):
                ours = ours.__wrapped__  # the op with PyTorch's out= keyword added (ops/out_variants.py)
            assert ours is getattr(module, name), (module.__name__, name)
