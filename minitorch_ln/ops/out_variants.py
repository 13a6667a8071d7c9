"""``out=``: the result of a ``torch.*`` op written into a tensor the caller gives, as PyTorch's.

``torch.add(a, b, out=c)`` computes ``a + b`` and stores it in ``c``, which it returns. PyTorch's rules,
kept here:

- the result's dtype must be castable to ``out``'s without leaving its category (``torch.can_cast``:
  a float result into an integer ``out`` raises "result type Float can't be cast to the desired output
  type Long"; float64 into float32 is cast);
- an ``out`` of another shape is resized (PyTorch warns when it had elements; a view, whose memory
  belongs to another tensor, cannot be resized and raises);
- ops with several results take a tuple of tensors (``torch.max(x, 1, out=(values, indices))``);
- ``out=`` does not record a graph: an argument that requires grad in grad mode raises (PyTorch:
  "functions with out=... arguments don't support automatic differentiation"), and so does an ``out``
  that is a leaf requiring grad.

The ops that take ``out=`` are PyTorch's (:data:`OUT_NAMES`, checked against PyTorch by
``tests/test_ops_out_variants.py``); ``ops/__init__.py`` wraps them with :func:`with_out` as it gathers
the ``torch.*`` namespace, so each op's own module stays free of the plumbing.
"""

from __future__ import annotations

import functools
import inspect
import warnings

from .. import backend
from ..autograd import autocast_state as _autocast_state
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.views import check_no_overlap, check_writable
from ..tensor import Tensor
from .inplace import _check_result_dtype

__all__: list = []  # no torch.* names of its own

# torch.* functions whose PyTorch form takes ``out=`` (PyTorch 2.13: its op database's ``supports_out``, the
# function's documented ``out`` argument, or a call with out= that PyTorch accepts), among the ones minitorch_ln
# provides. Each has an ATen ``out`` overload (tests/test_ops_out_variants.py checks).
OUT_NAMES = frozenset("""
abs acos acosh add addmm all amax amin aminmax any arange argmax argmin asin asinh atan atan2 atanh baddbmm
bernoulli bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat
ceil clamp clamp_max clamp_min column_stack copysign cos cosh cross cummax cummin cumprod cumsum diag diff digamma
div dot dstack empty eq erf erfc erfinv exp exp2 expm1 eye float_power floor floor_divide fmax fmin fmod frac full
gather ge ger gt heaviside histc histogram hstack hypot i0 index_add index_copy index_select inverse isin isneginf
isposinf kron kthvalue le lerp lgamma linspace log log10 log1p log2 log_softmax logaddexp logaddexp2 logcumsumexp
logical_and logical_not logical_or logical_xor logit logspace logsumexp lt masked_select matmul max maximum mean min
minimum mm mode msort mul multinomial mv mvlgamma nan_to_num nanmean nansum ne neg nonzero norm normal ones outer
polygamma pow quantile rand randn randperm reciprocal remainder round row_stack rsqrt scatter scatter_add
scatter_reduce searchsorted sgn sigmoid sign signbit sin sinc sinh softmax sort sqrt square stack std sub take
take_along_dim tan tanh tensordot topk tril triu true_divide trunc var vdot vstack where xlogy zeros sum prod median
nanmedian slogdet randint absolute clip multiply concat concatenate fix greater greater_equal less less_equal
negative not_equal subtract arccos arccosh arcsin arcsinh arctan arctan2 arctanh
""".split())  # noqa: SIM905 - a list read like prose


# factories: the result takes ``out``'s dtype when the call names none (``torch.zeros(3, out=long_tensor)``)
_FACTORIES = frozenset("""
arange empty eye full linspace logspace ones rand randint randn randperm zeros
""".split())  # noqa: SIM905 - a list read like prose


def _requires_grad_anywhere(values) -> bool:
    for v in values:
        if isinstance(v, Tensor) and v.requires_grad:
            return True
        if isinstance(v, (list, tuple)) and _requires_grad_anywhere(v):
            return True
    return False


def write_out(name: str, result, out):
    """Store ``result`` (a Tensor, or a tuple of them) in ``out`` (the same structure) and return ``out``.

    Raises TypeError when ``out`` is not a Tensor (or a tuple of as many Tensors as results), RuntimeError
    when a result's dtype can't be cast to its ``out`` (PyTorch's ``can_cast``), when the devices differ,
    or when an ``out`` that must be resized is a view.
    """
    if isinstance(result, Tensor):
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be a Tensor, not {type(out).__name__}")
        _store(name, result, out)
        return out
    if isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result):
        if not (isinstance(out, (tuple, list)) and len(out) == len(result) and all(isinstance(o, Tensor) for o in out)):
            raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} Tensors (one per result), "
                            f"not {type(out).__name__}")
        for r, o in zip(result, out):
            _store(name, r, o)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    raise TypeError(f"{name}(): out= is for tensor results; this call returns {type(result).__name__}")


def _store(name: str, result: Tensor, out: Tensor) -> None:
    check_writable(out, f"{name}(out=...)")
    if is_grad_enabled() and out.requires_grad:
        raise RuntimeError(f"{name}(): the out= tensor requires grad; functions with out=... arguments don't "
                           "support automatic differentiation (use the returned tensor, or wrap in no_grad())")
    if result.device != out.device:
        raise RuntimeError(f"{name}(): expected out tensor on {result.device}, got {out.device}")
    _check_result_dtype(f"{name}(out=...)", result.dtype, out.dtype)
    xp = backend.get_array_module(out.array)
    if tuple(out.shape) != tuple(result.shape):
        if out._base is not None:
            raise RuntimeError(f"{name}(): out= has shape {tuple(out.shape)}, the result {tuple(result.shape)}; "
                               "out is a view of another tensor's memory and cannot be resized")
        if out.numel() != 0:
            warnings.warn(f"{name}(): an output with one or more elements was resized since it had shape "
                          f"{tuple(out.shape)}, which does not match the required output shape "
                          f"{tuple(result.shape)}. This behavior is deprecated (as in PyTorch).", UserWarning,
                          stacklevel=4)
        out.array = xp.empty(result.shape, dtype=out.dtype)
    xp.copyto(out.array, result.array, casting="unsafe")
    out._bump_version()


def add_out(namespace: dict, names, prefix: str) -> None:
    """Give every function ``namespace[name]`` (``torch.linalg``'s, ``torch.special``'s: all of PyTorch's take
    ``out=``) the ``out=`` keyword, in place."""
    for name in names:
        if inspect.isfunction(namespace[name]):
            namespace[name] = with_out(namespace[name], f"{prefix}.{name}")


def with_out(fn, name: str):
    """``fn`` with PyTorch's ``out=`` keyword added (see the module's docstring); ``fn`` itself when it
    already has an ``out`` parameter."""
    try:
        if "out" in inspect.signature(fn).parameters:
            return fn
    except (TypeError, ValueError):
        return fn

    owner, plain = getattr(fn, "__autocast_plain__", (None, fn))  # ``fn`` an autocast wrapper: its op, called
    plain = plain if owner is fn else fn  # directly while no region is on (what the wrapper does, one call fewer)
    regions = _autocast_state._enabled_regions

    @functools.wraps(fn)
    def op_with_out(*args, out=None, **kwargs):
        if out is None:
            return plain(*args, **kwargs) if not regions[0] else fn(*args, **kwargs)
        if is_grad_enabled() and _requires_grad_anywhere(list(args) + list(kwargs.values())):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad (use the returned tensor, "
                               "or wrap the call in no_grad())")
        if name in _FACTORIES and kwargs.get("dtype") is None and isinstance(out, Tensor):
            kwargs["dtype"] = out.dtype
        for o in (out if isinstance(out, (tuple, list)) else (out,)):  # as PyTorch: no input sharing part of out
            if isinstance(o, Tensor):
                _check_inputs_overlap(name, o, list(args) + list(kwargs.values()))
        return write_out(name, fn(*args, **kwargs), out)

    return op_with_out


def _check_inputs_overlap(name: str, out: Tensor, values) -> None:
    for v in values:
        if isinstance(v, Tensor):
            check_no_overlap(out, v, f"{name}(out=...)")
        elif isinstance(v, (list, tuple)):
            _check_inputs_overlap(name, out, v)
