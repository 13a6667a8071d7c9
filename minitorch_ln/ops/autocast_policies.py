"""Which op runs in which dtype under autocast: PyTorch's op lists, and the decorator each listed op wears.

The lists are PyTorch's (``aten/src/ATen/autocast_mode.h`` and ``autocast_mode.cpp``, the "Autocast
Op Reference" of the AMP docs), restricted to the ops minitorch_ln has; the CPU lists were checked
op by op against ``torch.autocast("cpu", dtype=torch.float16)`` of PyTorch 2.13 (``tests/test_autocast.py``).
The policies (``lower``, ``fp32``, ``fp32_opt_dtype``, ``promote``, ``banned``, ``as_is``) are explained in
:mod:`minitorch_ln.autograd.autocast_state`.

Autocast is applied one way, visibly where each op is defined: ``@autocast("matmul")`` above
``def matmul`` (the wrapper of :func:`~minitorch_ln.autograd.autocast_state.autocast_op`). Each
entry below names the function(s) that wear it and the Tensor methods that reach it (a method is
the function itself or a one-line forward to it, ``ops/methods.py``); ``tests/test_autocast.py``
holds the two in step. Inside a wrapped op nothing casts again (PyTorch's autocast acts at the op a
user calls, not inside it). ``layer_norm`` checks ``autocast_acting()`` in its body instead (one
frame less on the way to the row loop). An op not listed runs in its inputs' dtypes under the
usual promotion (``float16 + float32`` gives float32).
"""

from __future__ import annotations

from ..autograd.autocast_state import autocast_op

__all__ = ["POLICIES", "autocast", "wrap", "policy_of"]

_BOTH_LOWER = {"cuda": "lower", "cpu": "lower"}
_CUDA_FP32 = {"cuda": "fp32"}
_BOTH_FP32 = {"cuda": "fp32", "cpu": "fp32"}
_CUDA_OPT = {"cuda": "fp32_opt_dtype"}


def _pad_policy(args, kwargs):
    """CPU: reflection and replication padding are on PyTorch's float32 list, constant padding is not."""
    mode = kwargs.get("mode", args[2] if len(args) > 2 else "constant")
    return "fp32" if mode in ("reflect", "replicate") else "as_is"


def _lrn_policy(args, kwargs):
    """CPU: PyTorch's local_response_norm averages with avg_pool3d (float32 list) for 4-D and wider
    input, with avg_pool2d (not listed) for 3-D input."""
    x = args[0] if args else kwargs.get("input")
    return "fp32" if getattr(x, "ndim", 0) >= 4 else "as_is"


# torch name: (policies by device type, [(ops module, function wearing @autocast(name))], [Tensor methods reaching it])
POLICIES = {
    # lower precision (float16): the GEMM-shaped ops
    "matmul": (_BOTH_LOWER, [("matmul", "matmul")], ["matmul", "__matmul__", "__rmatmul__"]),
    "mm": (_BOTH_LOWER, [("products", "mm")], ["mm"]),
    "bmm": (_BOTH_LOWER, [("products", "bmm")], ["bmm"]),
    "addmm": (_BOTH_LOWER, [("products", "addmm")], ["addmm"]),
    "baddbmm": (_BOTH_LOWER, [("products", "baddbmm")], ["baddbmm"]),
    "mv": ({"cuda": "lower", "cpu": "as_is"}, [("products", "mv")], ["mv"]),
    "linear": (_BOTH_LOWER, [("matmul", "linear")], []),
    "einsum": (_BOTH_LOWER, [("einsum", "einsum")], []),
    "conv1d": (_BOTH_LOWER, [("convolution", "conv1d")], []),
    "conv2d": (_BOTH_LOWER, [("convolution", "conv2d")], []),
    "conv3d": (_BOTH_LOWER, [("convolution", "conv3d")], []),
    "conv_transpose1d": (_BOTH_LOWER, [("convolution", "conv_transpose1d")], []),
    "conv_transpose2d": (_BOTH_LOWER, [("convolution", "conv_transpose2d")], []),
    "conv_transpose3d": (_BOTH_LOWER, [("convolution", "conv_transpose3d")], []),
    "prelu": (_BOTH_LOWER, [("activation_piecewise", "prelu")], []),
    "scaled_dot_product_attention": (_BOTH_LOWER, [("attention", "scaled_dot_product_attention")], []),
    # float32: pointwise ops whose range float16 lacks, the norms, the losses
    "acos": (_CUDA_FP32, [("unary_trig", "acos")], ["acos", "arccos"]),
    "asin": (_CUDA_FP32, [("unary_trig", "asin")], ["asin", "arcsin"]),
    "cosh": (_CUDA_FP32, [("unary_trig", "cosh")], ["cosh"]),
    "sinh": (_CUDA_FP32, [("unary_trig", "sinh")], ["sinh"]),
    "tan": (_CUDA_FP32, [("unary_trig", "tan")], ["tan"]),
    "erfinv": (_CUDA_FP32, [("unary_trig", "erfinv")], ["erfinv"]),
    "exp": (_CUDA_FP32, [("elementwise", "exp")], ["exp"]),
    "log": (_CUDA_FP32, [("elementwise", "log")], ["log"]),
    "rsqrt": (_CUDA_FP32, [("elementwise", "rsqrt")], ["rsqrt"]),
    "expm1": (_CUDA_FP32, [("unary", "expm1")], ["expm1"]),
    "log10": (_CUDA_FP32, [("unary", "log10")], ["log10"]),
    "log2": (_CUDA_FP32, [("unary", "log2")], ["log2"]),
    "log1p": (_CUDA_FP32, [("unary", "log1p")], ["log1p"]),
    "reciprocal": (_CUDA_FP32, [("unary", "reciprocal")], ["reciprocal"]),
    "pow": (_CUDA_FP32, [("elementwise", "pow")], ["pow", "__pow__", "__rpow__"]),
    "rtruediv": (_CUDA_FP32, [], ["__rtruediv__"]),
    "softplus": (_CUDA_FP32, [("activation", "softplus")], []),
    "layer_norm": (_CUDA_FP32, [], []),  # layer_norm checks autocast_acting() itself (ops/layer_norm.py)
    "group_norm": (_CUDA_FP32, [("group_norm", "group_norm")], []),
    # composed in PyTorch (avg_pool of squares, then pow: float32 on CUDA), one fused op here
    "local_response_norm": ({"cuda": "fp32", "cpu": _lrn_policy},
                            [("local_response_norm", "local_response_norm")], []),
    "pad": ({"cpu": _pad_policy}, [("padding", "pad")], []),
    "inverse": ({"cpu": "fp32"}, [("linalg_ops", "inv")], ["inverse"]),
    "interpolate": (_CUDA_FP32, [("interpolate", "interpolate")], []),  # PyTorch's upsample_* kernels
    "logsumexp": (_CUDA_FP32, [("reduction", "logsumexp")], ["logsumexp"]),
    "cosine_similarity": (_CUDA_FP32, [("distance", "cosine_similarity")], []),
    "normalize": (_CUDA_FP32, [("distance", "normalize")], []),
    "cdist": (_BOTH_FP32, [("distance", "cdist")], []),
    # PyTorch's CPU list has grid_sampler (2d, 3d) in float32; CUDA promotes its two inputs to the wider dtype
    "grid_sampler": ({"cuda": "promote", "cpu": "fp32"}, [("grid_sample", "grid_sample")], []),
    "quantile": ({"cpu": "fp32"}, [("sorting", "quantile")], ["quantile"]),
    "poisson_nll_loss": (_BOTH_FP32, [("loss_regression", "poisson_nll_loss")], []),
    "kl_div": (_BOTH_FP32, [("loss_regression", "kl_div")], []),
    "l1_loss": (_BOTH_FP32, [("loss_regression", "l1_loss")], []),
    "smooth_l1_loss": (_BOTH_FP32, [("loss_regression", "smooth_l1_loss")], []),
    "huber_loss": (_BOTH_FP32, [("loss_regression", "huber_loss")], []),
    "cosine_embedding_loss": (_BOTH_FP32, [("loss_margin", "cosine_embedding_loss")], []),
    "margin_ranking_loss": (_BOTH_FP32, [("loss_margin", "margin_ranking_loss")], []),
    "soft_margin_loss": (_BOTH_FP32, [("loss_margin", "soft_margin_loss")], []),
    "triplet_margin_loss": (_BOTH_FP32, [("loss_margin", "triplet_margin_loss")], []),
    "pdist": (_BOTH_FP32, [("distance", "pdist")], []),
    "multi_margin_loss": (_BOTH_FP32, [("loss_multi", "multi_margin_loss")], []),
    "multilabel_margin_loss": (_BOTH_FP32, [("loss_multi", "multilabel_margin_loss")], []),
    "hinge_embedding_loss": (_BOTH_FP32, [("loss_multi", "hinge_embedding_loss")], []),
    "binary_cross_entropy_with_logits": (_BOTH_FP32, [("loss_margin", "binary_cross_entropy_with_logits")], []),
    "nll_loss": (_BOTH_FP32, [("loss", "nll_loss")], []),
    "mse_loss": (_BOTH_FP32, [("loss", "mse_loss")], []),
    "cross_entropy": (_BOTH_FP32, [("loss", "cross_entropy")], []),
    # float32 unless the call gives dtype=
    "sum": (_CUDA_OPT, [("reduction", "sum")], ["sum"]),
    "prod": ({"cuda": "fp32_opt_dtype", "cpu": "fp32"}, [("statistics", "prod")], ["prod"]),
    "cumsum": (_CUDA_OPT, [("scan", "cumsum")], ["cumsum"]),
    "cumprod": (_CUDA_OPT, [("scan", "cumprod")], ["cumprod"]),
    "softmax": (_CUDA_OPT, [("softmax", "softmax")], ["softmax"]),
    "log_softmax": (_CUDA_OPT, [("softmax", "log_softmax")], ["log_softmax"]),
    "softmin": (_CUDA_OPT, [("activation_piecewise", "softmin")], []),
    "norm": (_CUDA_OPT, [("linalg_norms", "norm")], ["norm"]),
    "linalg_vector_norm": (_CUDA_OPT, [("linalg_norms", "linalg_vector_norm")], []),
    "linalg_matrix_norm": (_CUDA_OPT, [("linalg_norms", "linalg_matrix_norm")], []),
    # the widest floating dtype of the arguments
    "atan2": ({"cuda": "promote"}, [("binary", "atan2")], ["atan2", "arctan2"]),
    "cross": ({"cuda": "promote"}, [("products", "cross")], ["cross"]),
    "dot": ({"cuda": "promote", "cpu": "as_is"}, [("products", "dot")], ["dot"]),
    "vdot": ({"cuda": "promote", "cpu": "as_is"}, [("products", "vdot")], ["vdot"]),
    "tensordot": ({"cuda": "promote", "cpu": "lower"}, [("products", "tensordot")], []),  # CPU: its mm casts
    "scatter_add": ({"cuda": "promote"}, [("scatter", "scatter_add")], ["scatter_add"]),
    "index_put": ({"cuda": "promote"}, [("view_ops", "index_put")], []),
    "cat": ({"cpu": "promote"}, [("joining", "cat")], []),
    "stack": ({"cpu": "promote"}, [("joining", "stack")], []),
    "index_copy": ({"cpu": "promote"}, [("index_ops", "index_copy")], ["index_copy"]),
    # one kernel in PyTorch, composed of listed ops here: run as called, nothing inside casts
    "nan_to_num": ({"cuda": "as_is", "cpu": "as_is"}, [("unary", "nan_to_num")], ["nan_to_num"]),
    # refused under CUDA autocast (PyTorch: use binary_cross_entropy_with_logits)
    "binary_cross_entropy": ({"cuda": "banned", "cpu": "fp32"}, [("loss_margin", "binary_cross_entropy")], []),
}

_wrapped: dict = {}  # id(original function) -> its wrapper, so that one function is wrapped once


def wrap(name: str, fn):
    """``fn`` wrapped with the policies of the torch op ``name`` (see :data:`POLICIES`)."""
    if getattr(fn, "__autocast__", None) is not None:
        return fn
    w = _wrapped.get(id(fn))
    if w is None:
        w = _wrapped[id(fn)] = autocast_op(name, POLICIES[name][0])(fn)
    return w


def policy_of(name: str, device_type: str):
    """The policy of the torch op ``name`` on ``device_type`` (None: not on the lists, runs as called)."""
    entry = POLICIES.get(name)
    return entry[0].get(device_type) if entry else None


def autocast(name: str):
    """Decorator: the op below runs under the autocast policies of the torch op ``name`` (:data:`POLICIES`)."""
    return lambda fn: wrap(name, fn)
