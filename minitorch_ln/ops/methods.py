"""Every method and operator of :class:`Tensor` that runs an op, listed in one place (DeZero's ``setup_variable``).

"What does ``x.sum`` or ``x @ y`` run?" is answered by the line of :data:`METHODS` that names it. ``tensor.py``
imports nothing of ``ops/``; :func:`setup_tensor` attaches this table once, when ``ops/__init__.py`` runs,
before the autocast wrappers (``ops/autocast_policies.py``). A new public op adds its line here, in the group of
its module (see ``docs/custom_op.md``). The longer method bodies are in ``tensor_methods.py`` (``_Methods``)
and ``inplace.py`` (``_InPlace``); everything else is the op function itself or a one-line lambda.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ..autograd.post_accumulate import register_hook, register_post_accumulate_grad_hook, retain_grad
from .activation_piecewise import prelu
from .activation_threshold import hardshrink
from .binary import (
    allclose, atan2, copysign, equal, float_power, fmax, fmin, heaviside, hypot, isclose, lerp, logaddexp,
    logaddexp2, xlogy
)
from .complex_math import angle
from .complex_parts import conj, conj_physical, imag, is_complex, is_conj, is_neg, real, resolve_conj, resolve_neg
from .bitwise import (
    bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor, logical_xor
)
from .creation import _new_empty, _new_full, _new_ones, _new_tensor, _new_zeros
from .division import div_rounding, floor_divide, fmod, remainder, true_divide
from .dtype_ops import byte, char, short, type, type_as  # noqa: A004
from .activation import relu, tanh
from .elementwise import add, div, mul, neg, sub
from .elementwise import pow as _pow
from .grids import diag, diag_embed, diagflat
from .histogram import histc, histogram
from .index_ops import index_add, index_copy, index_fill, index_select, masked_scatter, masked_select
from .inplace import _InPlace
from .inplace_variants import inplace_methods
from .linalg_decomp import det, slogdet
from .linalg_ops import inv
from .method_aliases import FUNCTION_METHODS, OTHER_METHODS
from .matrix_exp import matrix_exp
from .linalg_torch import (
    cholesky, cholesky_inverse, cholesky_solve, logdet, pinverse, qr, svd, triangular_solve
)
from .linalg_norms import norm
from .broadcasting import ravel, sum_to_size
from .covariance import corrcoef, cov
from .factories import _new_empty_strided
from .reshaping_reductions import nanquantile, renorm
from .index_reduce import _index_reduce_, _put_, index_reduce, put
from .linalg_lu import lu, lu_solve
from .linalg_householder import geqrf, ormqr
from .nonzero_static import nonzero_static
from .memory_views import apply_, data_ptr, squeeze_, t_, transpose_, unsqueeze_
from .resize import _H, _mH, _resize_, resize_as_
from .float_parts import deg2rad, frexp, gcd, lcm, ldexp, nextafter, positive, rad2deg
from .products_add import _addcdiv_, _addcmul_, addbmm, addcdiv, addcmul, addmv, addr, dist, inner, trace
from .view_copies import split_with_sizes, unsafe_chunk, unsafe_split
from .view_scatter import as_strided_scatter, diagonal_scatter, select_scatter, slice_scatter
from .products import addmm, baddbmm, bmm, cross, dot, kron, mm, mv, outer, vdot
from .random import bernoulli, bernoulli_, cauchy_, exponential_, geometric_, log_normal_, multinomial, random_
from .reorder import _flip_method, _tile_method, fliplr, flipud, repeat, repeat_interleave, roll, rot90
from .selection import clamp_max, clamp_min
from .scan import cummax, cummin, cumprod, cumsum, diff, logcumsumexp
from .counting import bincount, unique_consecutive
from .reduction_nan import nanmean, nansum
from .scatter import gather, scatter, scatter_add, scatter_reduce, take, take_along_dim
from .searching import argwhere, nonzero
from .sorting import argsort, kthvalue, median, mode, msort, nanmedian, quantile, sort, unique
from .stacking import as_split_method, dsplit, hsplit, tensor_split, vsplit
from .statistics import aminmax, count_nonzero, prod
from .tensor_methods import _Methods
from .unary import (  # noqa: A004
    ceil, exp2, expm1, floor, frac, isinf, isneginf, isposinf, isreal, log10, log1p, log2, nan_to_num, reciprocal,
    round, sgn, sign, signbit, square, trunc
)
from .unary_trig import acos, acosh, asin, asinh, atan, atanh, cosh, erfc, erfinv, sinh, tan
from .special_bessel import igamma, igammac
from .special_fns import digamma, i0, lgamma, logit, mvlgamma, polygamma, sinc
from .stft import istft, stft
from .strided_views import as_strided, unfold_windows
from .view_ops import (
    _InPlaceScatter, diagonal, index_put, movedim, narrow, reshape_as, select, swapaxes, unbind, unflatten,
    view_as
)

__all__ = ["METHODS", "setup_tensor"]

complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

# name on Tensor: what it runs, grouped by the ops module that defines it
METHODS = {
    # tensor_methods.py: conversions, Python operators and one-line forwards, written out in tensor_methods.py
    "clone": _Methods.clone, "to": _Methods.to, "pin_memory": _Methods.pin_memory, "is_pinned": _Methods.is_pinned,
    "__format__": _Methods.__format__, "float": _Methods.float, "double": _Methods.double, "half": _Methods.half,
    "bfloat16": _Methods.bfloat16,
    "long": _Methods.long, "int": _Methods.int, "bool": _Methods.bool, "cpu": _Methods.cpu, "cuda": _Methods.cuda,
    "__radd__": _Methods.__radd__, "__rsub__": _Methods.__rsub__, "__rmul__": _Methods.__rmul__,
    "__rtruediv__": _Methods.__rtruediv__, "__rdiv__": _Methods.__rtruediv__,
    "__rpow__": _Methods.__rpow__, "__matmul__": _Methods.__matmul__, "__rmatmul__": _Methods.__rmatmul__,
    "__pos__": _Methods.__pos__, "__abs__": _Methods.__abs__,
    "__eq__": _Methods.__eq__, "__ne__": _Methods.__ne__, "__lt__": _Methods.__lt__, "__le__": _Methods.__le__,
    "__gt__": _Methods.__gt__, "__ge__": _Methods.__ge__, "__invert__": _Methods.__invert__,
    "__and__": _Methods.__and__, "__or__": _Methods.__or__, "__getitem__": _Methods.__getitem__,
    "__iter__": _Methods.__iter__, "__reversed__": _Methods.__reversed__, "__contains__": _Methods.__contains__,
    "__setitem__": _Methods.__setitem__, "add": _Methods.add, "sub": _Methods.sub, "mul": _Methods.mul,
    "div": _Methods.div, "pow": _Methods.pow, "matmul": _Methods.matmul, "exp": _Methods.exp, "log": _Methods.log,
    "sqrt": _Methods.sqrt, "rsqrt": _Methods.rsqrt, "abs": _Methods.abs,
    "sigmoid": _Methods.sigmoid, "sin": _Methods.sin, "cos": _Methods.cos,
    "maximum": _Methods.maximum, "minimum": _Methods.minimum, "clamp": _Methods.clamp, "clip": _Methods.clamp,
    "masked_fill": _Methods.masked_fill, "sum": _Methods.sum, "mean": _Methods.mean, "var": _Methods.var,
    "std": _Methods.std, "max": _Methods.max, "min": _Methods.min, "amax": _Methods.amax, "amin": _Methods.amin,
    "logsumexp": _Methods.logsumexp, "argmax": _Methods.argmax, "argmin": _Methods.argmin, "topk": _Methods.topk,
    "any": _Methods.any, "all": _Methods.all, "softmax": _Methods.softmax, "log_softmax": _Methods.log_softmax,
    "reshape": _Methods.reshape, "view": _Methods.view, "flatten": _Methods.flatten,
    "transpose": _Methods.transpose, "permute": _Methods.permute, "mT": _Methods.mT, "T": _Methods.T,
    "t": _Methods.t, "unsqueeze": _Methods.unsqueeze, "squeeze": _Methods.squeeze, "expand": _Methods.expand,
    "broadcast_to": _Methods.broadcast_to, "expand_as": _Methods.expand_as, "split": _Methods.split,
    "chunk": _Methods.chunk, "triu": _Methods.triu, "tril": _Methods.tril, "contiguous": _Methods.contiguous,
    "is_contiguous": _Methods.is_contiguous,
    # elementwise.py: x + y, x - y, x * y, x / y call the op itself (one Python call less per op)
    "__add__": add, "__sub__": sub, "__mul__": mul, "__truediv__": div, "__div__": div,
    "__neg__": neg, "__pow__": _pow, "tanh": tanh, "relu": relu,  # likewise -x, x ** p, x.tanh(), x.relu() (issue 26)
    # unary.py
    "floor": floor, "ceil": ceil, "round": round, "trunc": trunc, "frac": frac, "sign": sign, "sgn": sgn,
    "reciprocal": reciprocal, "square": square, "log2": log2, "log10": log10, "log1p": log1p, "exp2": exp2,
    "expm1": expm1, "nan_to_num": nan_to_num, "isinf": isinf, "isposinf": isposinf, "isneginf": isneginf,
    "isreal": isreal, "signbit": signbit, "fix": trunc,
    # unary_trig.py
    "tan": tan, "asin": asin, "acos": acos, "atan": atan, "sinh": sinh, "cosh": cosh, "asinh": asinh,
    "acosh": acosh, "atanh": atanh, "erfc": erfc, "erfinv": erfinv, "arcsin": asin, "arccos": acos, "arctan": atan,
    "arcsinh": asinh, "arccosh": acosh, "arctanh": atanh,
    # special_fns.py
    "lgamma": lgamma, "digamma": digamma, "polygamma": lambda self, n: polygamma(n, self), "i0": i0,
    "mvlgamma": mvlgamma, "logit": logit, "sinc": sinc,
    # binary.py
    "atan2": atan2, "hypot": hypot, "lerp": lerp, "isclose": isclose, "allclose": allclose, "equal": equal,
    "copysign": copysign, "xlogy": xlogy, "float_power": float_power, "logaddexp": logaddexp,
    "logaddexp2": logaddexp2, "fmax": fmax, "fmin": fmin, "heaviside": heaviside, "arctan2": atan2,
    # division.py
    "fmod": fmod, "remainder": remainder, "floor_divide": floor_divide, "true_divide": true_divide,
    "divide": div_rounding, "__mod__": remainder, "__rmod__": lambda self, other: remainder(other, self),
    "__floordiv__": floor_divide, "__rfloordiv__": lambda self, other: floor_divide(other, self),
    # bitwise.py
    "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor, "bitwise_not": bitwise_not,
    "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift,
    "logical_xor": logical_xor, "__rand__": lambda self, other: bitwise_and(other, self),
    "__ror__": lambda self, other: bitwise_or(other, self), "__xor__": bitwise_xor,
    "__rxor__": lambda self, other: bitwise_xor(other, self), "__lshift__": bitwise_left_shift,
    "__rlshift__": lambda self, other: bitwise_left_shift(other, self), "__rshift__": bitwise_right_shift,
    "__rrshift__": lambda self, other: bitwise_right_shift(other, self),
    # activation_piecewise.py
    "prelu": prelu,
    # activation_threshold.py
    "hardshrink": hardshrink,
    # selection.py (clamp, maximum, minimum, masked_fill are forwarded in tensor_methods.py)
    "clamp_min": clamp_min, "clamp_max": clamp_max,
    # scan.py
    "cumsum": cumsum, "cumprod": cumprod, "logcumsumexp": logcumsumexp, "cummax": cummax, "cummin": cummin,
    "diff": diff,
    # counting.py, reduction_nan.py
    "bincount": bincount, "unique_consecutive": unique_consecutive, "nansum": nansum, "nanmean": nanmean,
    # statistics.py
    "prod": prod, "count_nonzero": count_nonzero, "aminmax": aminmax,
    # sorting.py
    "sort": sort, "argsort": argsort, "msort": msort, "median": median, "nanmedian": nanmedian,
    "kthvalue": kthvalue, "mode": mode, "quantile": quantile, "unique": unique,
    # histogram.py
    "histc": histc, "histogram": histogram,
    # norms.py
    "norm": lambda self, p="fro", dim=None, keepdim=False, dtype=None: norm(self, p, dim, keepdim, dtype),
    # products.py
    "mm": mm, "bmm": bmm, "mv": mv, "dot": dot, "vdot": vdot, "outer": outer, "ger": outer, "addmm": addmm,
    "baddbmm": baddbmm, "kron": kron, "cross": cross,
    # linalg_ops.py
    "inverse": inv,
    # linalg_decomp.py
    "det": det, "slogdet": slogdet,
    # view_ops.py
    "scatter_": _InPlaceScatter.scatter_, "scatter_add_": _InPlaceScatter.scatter_add_,
    "scatter_reduce_": _InPlaceScatter.scatter_reduce_, "index_add_": _InPlaceScatter.index_add_,
    "index_copy_": _InPlaceScatter.index_copy_, "index_fill_": _InPlaceScatter.index_fill_,
    "index_put_": _InPlaceScatter.index_put_, "masked_scatter_": _InPlaceScatter.masked_scatter_,
    "diagonal": diagonal, "movedim": movedim, "swapaxes": swapaxes, "narrow": narrow, "select": select,
    "unbind": unbind, "unflatten": unflatten, "view_as": view_as, "reshape_as": reshape_as, "index_put": index_put,
    "moveaxis": movedim, "swapdims": swapaxes, "unfold": unfold_windows, "as_strided": as_strided,
    # stft.py
    "stft": stft, "istft": istft,
    # reorder.py
    "flip": _flip_method, "fliplr": fliplr, "flipud": flipud, "roll": roll, "rot90": rot90, "repeat": repeat,
    "tile": _tile_method, "repeat_interleave": repeat_interleave,
    # stacking.py
    "tensor_split": tensor_split, "hsplit": as_split_method(hsplit), "vsplit": as_split_method(vsplit),
    "dsplit": as_split_method(dsplit),
    # grids.py
    "diag": diag, "diag_embed": diag_embed, "diagflat": diagflat,
    # scatter.py
    "gather": gather, "scatter": scatter, "scatter_add": scatter_add, "scatter_reduce": scatter_reduce,
    "take": take, "take_along_dim": take_along_dim,
    # index_ops.py
    "index_select": index_select, "index_add": index_add, "index_copy": index_copy, "index_fill": index_fill,
    "masked_select": masked_select, "masked_scatter": masked_scatter,
    # searching.py
    "nonzero": nonzero, "argwhere": argwhere,
    # dtype_ops.py
    "type": type, "type_as": type_as, "short": short, "byte": byte, "char": char,
    # creation.py
    "new_zeros": _new_zeros, "new_ones": _new_ones, "new_empty": _new_empty, "new_full": _new_full,
    "new_tensor": _new_tensor,
    # random.py
    "bernoulli": lambda self, p=None, *, generator=None: bernoulli(self, p, generator=generator),
    "multinomial": lambda self, num_samples, replacement=False, *, generator=None: multinomial(
        self, num_samples, replacement, generator=generator),
    "bernoulli_": bernoulli_, "exponential_": exponential_, "random_": random_, "cauchy_": cauchy_,
    "log_normal_": log_normal_, "geometric_": geometric_,
    # complex_parts.py, complex_math.py (the parts are views, as PyTorch's; ``z.real = x`` writes them)
    "real": property(real, lambda self, v: real(self).copy_(v)), "imag": property(imag, lambda self, v: imag(self).copy_(v)),
    "conj": conj, "conj_physical": conj_physical, "resolve_conj": resolve_conj, "resolve_neg": resolve_neg,
    "is_conj": is_conj, "is_neg": is_neg, "is_complex": is_complex, "angle": angle,
    "cfloat": lambda self: self.to(complex64), "cdouble": lambda self: self.to(complex128),
    # inplace.py: in-place methods (add_, mul_, copy_, zero_, ...), written out in inplace.py
    "_check_inplace": _InPlace._check_inplace, "_inplace": _InPlace._inplace, "_overwrite": _InPlace._overwrite,
    "add_": _InPlace.add_, "sub_": _InPlace.sub_, "mul_": _InPlace.mul_, "div_": _InPlace.div_,
    "floor_divide_": _InPlace.floor_divide_, "remainder_": _InPlace.remainder_, "pow_": _InPlace.pow_,
    "bitwise_and_": _InPlace.bitwise_and_, "bitwise_or_": _InPlace.bitwise_or_,
    "bitwise_xor_": _InPlace.bitwise_xor_, "bitwise_left_shift_": _InPlace.bitwise_left_shift_,
    "bitwise_right_shift_": _InPlace.bitwise_right_shift_, "__iadd__": _InPlace.__iadd__,
    "__isub__": _InPlace.__isub__, "__imul__": _InPlace.__imul__, "__itruediv__": _InPlace.__itruediv__,
    "__idiv__": _InPlace.__itruediv__, "__ifloordiv__": _InPlace.__ifloordiv__, "__imod__": _InPlace.__imod__,
    "__ipow__": _InPlace.__ipow__, "__iand__": _InPlace.__iand__, "__ior__": _InPlace.__ior__,
    "__ixor__": _InPlace.__ixor__, "__ilshift__": _InPlace.__ilshift__, "__irshift__": _InPlace.__irshift__,
    "clamp_": _InPlace.clamp_, "masked_fill_": _InPlace.masked_fill_, "_everywhere": _InPlace._everywhere,
    "copy_": _InPlace.copy_, "fill_": _InPlace.fill_, "zero_": _InPlace.zero_, "uniform_": _InPlace.uniform_,
    "normal_": _InPlace.normal_,
    # method_aliases.py: x.isnan(), x.eq(y), x.where(c, y), x.multiply(y), ...; x.stride(), x.element_size(), ...
    **FUNCTION_METHODS, **OTHER_METHODS,
    # inplace_variants.py: x.sin_(), x.clamp_min_(0), x.lt_(y), x.tril_(), ... (the method run through _inplace)
    **inplace_methods(),
    # autograd/post_accumulate.py: gradient hooks (the post-accumulate one is what DistributedDataParallel uses)
    "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
    "register_hook": register_hook, "retain_grad": retain_grad,
    # products_add.py, float_parts.py, broadcasting.py, view_copies.py, view_scatter.py
    "addmv": addmv, "addbmm": addbmm, "addr": addr, "addcmul": addcmul, "addcdiv": addcdiv, "addcmul_": _addcmul_,
    "addcdiv_": _addcdiv_, "inner": inner, "trace": trace, "dist": dist, "frexp": frexp, "ldexp": ldexp,
    "nextafter": nextafter, "gcd": gcd, "lcm": lcm, "positive": positive, "deg2rad": deg2rad, "rad2deg": rad2deg,
    "ravel": ravel, "sum_to_size": sum_to_size, "split_with_sizes": split_with_sizes, "unsafe_split": unsafe_split,
    "unsafe_chunk": unsafe_chunk, "diagonal_scatter": diagonal_scatter, "select_scatter": select_scatter,
    "slice_scatter": slice_scatter, "as_strided_scatter": as_strided_scatter, "igamma": igamma, "igammac": igammac,
    "cov": cov, "corrcoef": corrcoef, "cholesky": cholesky, "cholesky_solve": cholesky_solve,
    "cholesky_inverse": cholesky_inverse, "qr": qr, "svd": svd, "pinverse": pinverse,
    "triangular_solve": triangular_solve, "logdet": logdet, "matrix_exp": matrix_exp,
    "new_empty_strided": _new_empty_strided, "nanquantile": nanquantile, "renorm": renorm,
    "index_reduce": index_reduce, "put": put, "index_reduce_": _index_reduce_, "put_": _put_,
    "lu": lu, "lu_solve": lu_solve, "geqrf": geqrf, "ormqr": ormqr, "nonzero_static": nonzero_static,
    "resize_": _resize_, "resize_as_": resize_as_, "H": property(_H), "mH": property(_mH),
    # memory_views.py
    "data_ptr": data_ptr, "t_": t_, "transpose_": transpose_, "swapdims_": transpose_, "swapaxes_": transpose_,
    "squeeze_": squeeze_, "unsqueeze_": unsqueeze_, "apply_": apply_,
}


def setup_tensor() -> None:
    """Attach every entry of :data:`METHODS` to :class:`Tensor` (once, from ``ops/__init__.py``)."""
    for name, method in METHODS.items():
        setattr(Tensor, name, method)
