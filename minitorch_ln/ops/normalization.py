"""Normalization ops: LayerNorm (the heart of the project), RMSNorm and BatchNorm.

Read next to ``docs/layernorm_backward.md``, which derives every formula used here, in the notation
``x`` ``(B, L, D)``, ``mean``/``rstd`` ``(B, L, 1)``, ``xhat = (x - mean) · rstd``,
``y = xhat · weight + bias``. Each op comes in four pieces:

- ``LayerNorm`` (a ``Function``): the forward, one graph node, running the fused kernel of
  :mod:`minitorch_ln.kernels` (on the CPU by default ``kernels/cpu_layernorm.py``, the formulas as
  a compiled loop over each row — the file to read beside the docs; ``kernels/layernorm.py`` is
  the same math in whole-array NumPy, and ``kernels/cuda_layernorm.py`` on the GPU). It saves
  ``x``, ``weight`` and the statistics ``mean``, ``rstd`` ``(..., 1)`` (or only ``x`` and ``weight`` with ``recompute_stats=True``); its backward applies
- ``LayerNormBackward`` (a ``Function``): its forward is the hand-derived compact formula

      dx = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat)),   dxhat = dy · weight
      dweight = Σ dy · xhat,   dbias = Σ dy     (sums over every non-normalized axis)

  (the kernel); its own backward, needed only for second and higher derivatives, differentiates
  the composed reference backward below, recomputing the statistics from ``x`` so that they carry
  history (see :class:`_ComposedVJP`);
- ``layer_norm``: checks its arguments, then applies ``LayerNorm``;
- ``layer_norm_composed`` and ``layer_norm_backward_composed``: the same functions built from
  primitive Tensor ops, for teaching and as the reference the tests hold the fused ones to.

Axes: the normalized axes are moved last and the array is viewed as rows ``(N, D)`` (no copy for
the usual trailing ``normalized_shape``), so ``dim=`` (any axes, e.g. the channels of
``(N, C, H, W)``) runs the same kernel. BatchNorm hands its input to the kernels as ``(N, C, L)``
(a view), one mean and variance per channel ``c`` over ``x[:, c, :]``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import kernels
from ..autograd.engine import grad as autograd_grad
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import normalize_dims

__all__ = [
    "layer_norm", "layer_norm_composed", "layer_norm_backward_composed", "rms_norm", "rms_norm_composed",
    "rms_norm_backward_composed", "batch_norm", "batch_norm_composed", "batch_norm_backward_composed",
]


# ==================================================================================================
# Axes: normalized axes last, viewed as rows (N, D)
# ==================================================================================================


class _Rows:
    """How an array of ``shape`` maps to the rows ``(N, D)`` the kernels normalize (``axes`` go last)."""

    def __init__(self, shape: tuple, axes: tuple):
        keep = tuple(i for i in range(len(shape)) if i not in axes)
        self.perm = keep + tuple(axes)
        self.moved_shape = tuple(shape[i] for i in self.perm)
        self.N = math.prod(shape[i] for i in keep)
        self.D = math.prod(shape[i] for i in axes)
        self.stat_shape = tuple(1 if i in axes else s for i, s in enumerate(shape))    # (B, L, 1)
        self.param_shape = tuple(shape[i] for i in axes)                                # (D,)
        self.identity = self.perm == tuple(range(len(shape)))

    def to_rows(self, a):
        """``a`` as a C-contiguous ``(N, D)`` array (a view when it already is one)."""
        xp = get_array_module(a)
        if not self.identity:
            a = a.transpose(self.perm)
        return xp.ascontiguousarray(a).reshape(self.N, self.D)

    def from_rows(self, a2d):
        """The inverse of :meth:`to_rows`: ``(N, D)`` back to the original layout."""
        if self.identity and a2d.base is None and a2d.flags.c_contiguous:
            # Reshape the kernel's own array in place rather than as a view: the engine copies a
            # view before making it a leaf's .grad (one more pass over (B, L, D) for nothing).
            a2d.shape = self.moved_shape
            return a2d
        a = a2d.reshape(self.moved_shape)
        return a if self.identity else a.transpose(tuple(int(i) for i in np.argsort(self.perm)))


def _check_input(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected input to be a Tensor, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: expected a floating point input (float16, float32 or float64), got {x.dtype}")
    if x.ndim == 0:
        raise ValueError(f"{op}: expected an input with at least one dimension, got a 0-d tensor")


def _check_eps(eps, op: str) -> float:
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"{op}: eps must be a finite number > 0, got {eps!r}")
    return float(eps)


def _resolve_axes(x: Tensor, normalized_shape, dim, op: str) -> tuple:
    """The sorted normalized axes from exactly one of ``normalized_shape`` (trailing dims) and ``dim``."""
    if (normalized_shape is None) == (dim is None):
        raise ValueError(
            f"{op}: give exactly one of normalized_shape (the trailing dimensions to normalize) and dim "
            f"(any axes), got normalized_shape={normalized_shape!r} and dim={dim!r}"
        )
    if dim is not None:
        axes = normalize_dims(dim, x.ndim, op)
        if not axes:
            raise ValueError(f"{op}: dim must name at least one axis, got {dim!r}")
        return axes
    shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else normalized_shape
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{op}: normalized_shape must be an int or a tuple of ints, got {normalized_shape!r}") from None
    if not shape:
        raise ValueError(f"{op}: normalized_shape must have at least one dimension, got ()")
    if x.shape[-len(shape):] != shape or len(shape) > x.ndim:
        raise ValueError(
            f"{op}: normalized_shape {shape} must match the trailing dimensions of the input, but the "
            f"input has shape {tuple(x.shape)} (expected an input of shape (*, {', '.join(map(str, shape))}))"
        )
    return tuple(range(x.ndim - len(shape), x.ndim))


def _check_param(p, name: str, shape: tuple, x: Tensor, op: str) -> None:
    if p is None:
        return
    if not isinstance(p, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor or None, got {type(p).__name__}")
    if tuple(p.shape) != tuple(shape):
        raise ValueError(f"{op}: expected {name} of shape {tuple(shape)} (the normalized shape), got {tuple(p.shape)}")
    mixed = x.dtype == np.float16 and p.dtype == np.float32  # float32 parameters with float16 data
    if p.dtype != x.dtype and not mixed:
        raise TypeError(
            f"{op}: {name} has dtype {p.dtype} but the input has dtype {x.dtype}; they must match "
            "(float32 parameters are allowed with float16 input)"
        )


def _flat(p, D):
    return None if p is None else p.reshape(D)


# ==================================================================================================
# Higher derivatives: differentiate a composed (primitive-op) function, as one graph node
# ==================================================================================================


def _vjp(fn, inputs: tuple, cotangents: tuple, create_graph: bool) -> tuple:
    """``Σ_k cotangent_k · ∂fn_k/∂inputs``: one Tensor per input (zeros where ``fn`` ignores it)."""
    with enable_grad():
        outs = fn(*inputs)
        pairs = [(o, c) for o, c in zip(outs, cotangents) if o is not None and o.requires_grad]
        wrt = [t for t in inputs if t.requires_grad]
        grads = []
        if pairs and wrt:
            grads = list(autograd_grad([o for o, _ in pairs], wrt, grad_outputs=[c for _, c in pairs],
                                       create_graph=create_graph, allow_unused=True))
    result, it = [], iter(grads)
    for t in inputs:
        g = next(it, None) if t.requires_grad else None
        result.append(g if g is not None else Tensor._from_op(get_array_module(t.array).zeros_like(t.array)))
    return tuple(result)


class _ComposedVJP(Function):
    """``vjp(fn)(inputs, cotangents)`` as one graph node, differentiable to any order.

    ``fn`` maps Tensors to a tuple of Tensors using primitive ops. The forward builds ``fn`` on
    fresh leaves holding the input arrays and differentiates it with ``autograd.grad``; the
    backward is the vector-Jacobian product of this very function, built the same way one level
    up. Because the node's inputs are the caller's Tensors (history included), each derivative
    stays connected to everything it depends on — which a direct ``autograd.grad`` on the
    caller's Tensors would not give without walking, and freeing, their whole history.
    """

    @staticmethod
    def forward(ctx, fn, n_inputs, *arrays):
        ctx.composed_fn, ctx.n_inputs = fn, n_inputs
        ctx.save_for_backward(*arrays)
        leaves = tuple(Tensor._from_op(a, requires_grad=True) for a in arrays)
        grads = _vjp(fn, leaves[:n_inputs], leaves[n_inputs:], create_graph=False)
        return tuple(g.array for g in grads)

    @staticmethod
    def backward(ctx, *cotangents):
        saved = ctx.saved_tensors
        fn, n = ctx.composed_fn, ctx.n_inputs

        def this_vjp(*tensors):  # this node's forward, as a function of its inputs and cotangents
            return _vjp(fn, tensors[:n], tensors[n:], create_graph=True)

        grads = _ComposedVJP.apply(this_vjp, len(saved), *saved, *cotangents)
        return (None, None, *(grads if isinstance(grads, tuple) else (grads,)))


def _double_backward(composed_backward, inputs: tuple, cotangents: tuple) -> tuple:
    """Gradients of a fused backward's outputs w.r.t. its Tensor ``inputs`` (None entries skipped)."""
    present = [i for i, t in enumerate(inputs) if t is not None]

    def fn(*tensors):
        full = [None] * len(inputs)
        for i, t in zip(present, tensors):
            full[i] = t
        return composed_backward(*full)

    out = _ComposedVJP.apply(fn, len(present), *[inputs[i] for i in present], *cotangents)
    out = out if isinstance(out, tuple) else (out,)
    grads = [None] * len(inputs)
    for i, g in zip(present, out):
        grads[i] = g
    return tuple(grads)


# ==================================================================================================
# LayerNorm
# ==================================================================================================


class LayerNorm(Function):
    """``y = (x - mean) · rstd · weight + bias`` over ``axes``: the fused forward (one graph node)."""

    @staticmethod
    def forward(ctx, x, weight, bias, axes, eps, recompute_stats):
        rows = _Rows(x.shape, axes)
        y, mean, rstd = kernels.layer_norm_fwd(rows.to_rows(x), _flat(weight, rows.D), _flat(bias, rows.D), eps)
        ctx.axes, ctx.eps, ctx.recompute_stats = axes, eps, recompute_stats
        ctx.bias_dtype = None if bias is None else bias.dtype
        if recompute_stats:  # keep only x: backward recomputes mean and rstd from it
            ctx.save_for_backward(x, weight)
        else:                # keep x and the statistics, (B, L, 1) each
            ctx.save_for_backward(x, weight, mean.reshape(rows.stat_shape), rstd.reshape(rows.stat_shape))
        return rows.from_rows(y)                                                  # (B, L, D)

    @staticmethod
    def backward(ctx, dy):
        saved = ctx.saved_tensors
        x, weight = saved[0], saved[1]
        mean, rstd = (None, None) if ctx.recompute_stats else saved[2:]
        grads = LayerNormBackward.apply(dy, x, weight, mean, rstd, ctx.axes, ctx.eps, ctx.bias_dtype)
        grads = grads if isinstance(grads, tuple) else (grads,)
        dx = grads[0]
        dweight = grads[1] if weight is not None else None
        dbias = grads[-1] if ctx.bias_dtype is not None else None
        return dx, dweight, dbias, None, None, None


class LayerNormBackward(Function):
    """``(dy, x, weight) -> (dx[, dweight][, dbias])``: the hand-derived backward as one node.

    Outputs: ``dx`` always, ``dweight`` when there is a weight, ``dbias`` when there is a bias.
    """

    @staticmethod
    def forward(ctx, dy, x, weight, mean, rstd, axes, eps, bias_dtype):
        rows = _Rows(x.shape, axes)
        dy2, x2 = rows.to_rows(dy), rows.to_rows(x)                               # (N, D) each
        if mean is None:                                   # the recompute_stats option
            mean2, rstd2 = kernels.layer_norm_stats(x2, eps)                      # (N, 1) each
        else:
            mean2, rstd2 = mean.reshape(rows.N, 1), rstd.reshape(rows.N, 1)       # (N, 1) each
        dx, dweight, dbias = kernels.layer_norm_bwd(dy2, x2, _flat(weight, rows.D), mean2, rstd2)
        ctx.axes, ctx.eps, ctx.bias_dtype = axes, eps, bias_dtype
        ctx.save_for_backward(dy, x, weight)
        out = [rows.from_rows(dx)]                                                # (B, L, D)
        if weight is not None:
            out.append(dweight.reshape(rows.param_shape))                         # (D,)
        if bias_dtype is not None:
            if dbias is None:  # a bias without a weight: dbias = Σ dy, summed in the statistics dtype
                dbias = dy2.astype(kernels.stat_dtype(dy2.dtype)).sum(axis=0)            # (D,)
            out.append(dbias.astype(bias_dtype, copy=False).reshape(rows.param_shape))
        return tuple(out)

    @staticmethod
    def backward(ctx, *cotangents):
        dy, x, weight = ctx.saved_tensors
        axes, eps, bias_dtype = ctx.axes, ctx.eps, ctx.bias_dtype

        def composed(dy_, x_, weight_):  # the outputs this node has: dx[, dweight][, dbias]
            grads = layer_norm_backward_composed(dy_, x_, weight_, axes, eps, bias_dtype is not None)
            return tuple(g for g in grads if g is not None)

        ddy, dx_, dweight_ = _double_backward(composed, (dy, x, weight), cotangents)
        return ddy, dx_, dweight_, None, None, None, None, None


def layer_norm(input: Tensor, normalized_shape=None, weight: Tensor | None = None, bias: Tensor | None = None,  # noqa: A002
               eps: float = 1e-5, *, dim=None, recompute_stats: bool = False) -> Tensor:
    """Layer normalization (Ba, Kiros & Hinton, 2016), fused: one graph node, hand-derived backward.

    ``y = (x - mean) / sqrt(var + eps) · weight + bias``, with the mean and the biased variance
    taken over the normalized axes of each group. Derivation: ``docs/layernorm_backward.md``.

    Args:
        input: ``(*, D1, ..., Dk)`` float16, float32 or float64, e.g. ``(B, L, D)``.
        normalized_shape: the trailing dims to normalize over, an int ``D`` or a tuple
            ``(D1, ..., Dk)`` (as ``torch.nn.functional.layer_norm``).
        weight, bias: γ and β, of the normalized shape, or None. Same dtype as ``input``
            (float32 parameters with float16 input are allowed).
        eps: added to the variance inside the square root; finite and > 0.
        dim: instead of ``normalized_shape`` (keyword only): any axes, e.g. ``dim=1`` for the
            channels of ``(N, C, H, W)``; ``weight``/``bias`` then have the sizes of those axes in
            increasing axis order. Exactly one of ``normalized_shape`` and ``dim`` is given.
        recompute_stats: keep only ``input`` for backward and recompute ``mean``/``rstd`` there
            (saves ``2·N`` statistics at the cost of one more reduction in backward).
    Returns:
        ``y``, the shape and dtype of ``input``. Float16 input is normalized in float32 (statistics
        and the ``dweight``/``dbias`` sums), its output and ``dx`` are float16.
    Raises:
        TypeError: integer input; parameters of another dtype or not Tensors.
        ValueError: ``normalized_shape`` not matching the input's trailing dims (both are named),
            both or neither of ``normalized_shape`` and ``dim``, eps ≤ 0 or not finite, a weight or
            bias of the wrong shape, zero elements to normalize.
    """
    op = "layer_norm"
    _check_input(input, op)
    axes = _resolve_axes(input, normalized_shape, dim, op)
    eps = _check_eps(eps, op)
    rows = _Rows(input.shape, axes)
    if rows.D == 0:
        raise ValueError(f"{op}: cannot normalize over zero elements (input shape {tuple(input.shape)}, axes {axes})")
    _check_param(weight, "weight", rows.param_shape, input, op)
    _check_param(bias, "bias", rows.param_shape, input, op)
    return LayerNorm.apply(input, weight, bias, axes, eps, bool(recompute_stats))


# -------------------------------------------------------------------------- composed reference


def _param_view(p: Tensor, x: Tensor, axes: tuple) -> Tensor:
    """A parameter of the normalized shape, reshaped to broadcast against ``x`` (1 on other axes)."""
    return p.reshape(tuple(s if i in axes else 1 for i, s in enumerate(x.shape)))


def _stat_cast(t: Tensor) -> Tensor:
    return t.to(kernels.stat_dtype(t.dtype))


def layer_norm_composed(input: Tensor, normalized_shape=None, weight=None, bias=None, eps: float = 1e-5,  # noqa: A002
                        *, dim=None) -> Tensor:
    """:func:`layer_norm` from primitive Tensor ops: the reference for teaching and for the tests.

    Same arguments, shapes and errors as :func:`layer_norm`; about ten graph nodes (mean, sub,
    mul, mean, add, rsqrt, mul, ...) where the fused op has one, and autograd derives the backward
    from them. Float16 input is computed in float32.
    """
    op = "layer_norm_composed"
    _check_input(input, op)
    axes = _resolve_axes(input, normalized_shape, dim, op)
    eps = _check_eps(eps, op)
    x = _stat_cast(input)
    mean = x.mean(axes, keepdim=True)                           # (B, L, 1)
    xc = x - mean                                               # (B, L, D)
    var = (xc * xc).mean(axes, keepdim=True)                    # (B, L, 1)  biased
    rstd = (var + eps).rsqrt()                                  # (B, L, 1)
    y = xc * rstd                                               # (B, L, D)  xhat
    if weight is not None:
        y = y * _param_view(weight, x, axes)
    if bias is not None:
        y = y + _param_view(bias, x, axes)
    return y.to(input.dtype)


def layer_norm_backward_composed(dy: Tensor, x: Tensor, weight, axes: tuple, eps: float, has_bias: bool) -> tuple:
    """``(dx, dweight or None, dbias or None)`` of LayerNorm, from primitive Tensor ops.

    The compact formula of ``docs/layernorm_backward.md`` (section 3), with the statistics
    recomputed from ``x`` so that the result is differentiable in ``x`` as well as in ``dy`` and
    ``weight``: this is what the fused backward's own backward differentiates. Shapes: ``dy``, ``x``
    ``(B, L, D)``; ``weight`` of the normalized shape or None.
    """
    xs, dys = _stat_cast(x), _stat_cast(dy)
    other = tuple(i for i in range(x.ndim) if i not in axes)
    mean = xs.mean(axes, keepdim=True)                          # (B, L, 1)
    xc = xs - mean                                              # (B, L, D)
    rstd = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()   # (B, L, 1)
    xhat = xc * rstd                                            # (B, L, D)
    dxhat = dys * _param_view(weight, xs, axes) if weight is not None else dys   # (B, L, D)
    dx = rstd * (dxhat                                          # term 1: directly through xhat
                 - dxhat.mean(axes, keepdim=True)               # term 2: through the mean
                 - xhat * (dxhat * xhat).mean(axes, keepdim=True))   # term 3: through rstd
    dweight = (dys * xhat).sum(other).reshape(weight.shape).to(weight.dtype) if weight is not None else None
    dbias = dys.sum(other).reshape(tuple(x.shape[i] for i in axes)) if has_bias else None
    if dbias is not None and weight is not None:
        dbias = dbias.to(weight.dtype)
    return dx.to(x.dtype), dweight, dbias


# ==================================================================================================
# RMSNorm: y = x · rstd · weight with rstd = 1 / sqrt(mean(x²) + eps)  (Zhang & Sennrich, 2019)
# ==================================================================================================


class RMSNorm(Function):
    @staticmethod
    def forward(ctx, x, weight, axes, eps):
        rows = _Rows(x.shape, axes)
        y, rstd = kernels.rms_norm_fwd(rows.to_rows(x), _flat(weight, rows.D), eps)
        ctx.axes, ctx.eps = axes, eps
        ctx.save_for_backward(x, weight, rstd.reshape(rows.stat_shape))
        return rows.from_rows(y)                                                  # (B, L, D)

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        grads = RMSNormBackward.apply(dy, x, weight, rstd, ctx.axes, ctx.eps)
        grads = grads if isinstance(grads, tuple) else (grads,)
        return grads[0], (grads[1] if weight is not None else None), None, None


class RMSNormBackward(Function):
    """``dx = rstd · (dxhat - xhat · mean(dxhat · xhat))``, ``dweight = Σ dy · xhat`` (docs, section 7)."""

    @staticmethod
    def forward(ctx, dy, x, weight, rstd, axes, eps):
        rows = _Rows(x.shape, axes)
        dx, dweight = kernels.rms_norm_bwd(rows.to_rows(dy), rows.to_rows(x), _flat(weight, rows.D),
                                           rstd.reshape(rows.N, 1))
        ctx.axes, ctx.eps = axes, eps
        ctx.save_for_backward(dy, x, weight)
        out = [rows.from_rows(dx)]
        if weight is not None:
            out.append(dweight.reshape(rows.param_shape))
        return tuple(out)

    @staticmethod
    def backward(ctx, *cotangents):
        dy, x, weight = ctx.saved_tensors
        axes, eps = ctx.axes, ctx.eps

        def composed(dy_, x_, weight_):
            dx, dweight = rms_norm_backward_composed(dy_, x_, weight_, axes, eps)
            return (dx,) if weight_ is None else (dx, dweight)

        ddy, dx_, dweight_ = _double_backward(composed, (dy, x, weight), cotangents)
        return ddy, dx_, dweight_, None, None, None


def _rms_eps(eps, x: Tensor, op: str) -> float:
    if eps is None:  # as PyTorch: the machine epsilon of the input's dtype
        return float(np.finfo(x.dtype).eps)
    return _check_eps(eps, op)


def rms_norm(input: Tensor, normalized_shape=None, weight: Tensor | None = None, eps: float | None = None,  # noqa: A002
             *, dim=None) -> Tensor:
    """Root mean square normalization (Zhang & Sennrich, 2019): ``y = x / sqrt(mean(x²) + eps) · weight``.

    Args:
        input: ``(*, D1, ..., Dk)`` float16/32/64, e.g. ``(B, L, D)``.
        normalized_shape, dim: as :func:`layer_norm` (exactly one of them).
        weight: of the normalized shape, or None.
        eps: > 0, or None for ``finfo(input.dtype).eps`` (as ``torch.nn.functional.rms_norm``).
    Returns:
        ``y``, the shape and dtype of ``input`` (float16 computed in float32).
    Raises:
        As :func:`layer_norm`.
    """
    op = "rms_norm"
    _check_input(input, op)
    axes = _resolve_axes(input, normalized_shape, dim, op)
    eps = _rms_eps(eps, input, op)
    rows = _Rows(input.shape, axes)
    if rows.D == 0:
        raise ValueError(f"{op}: cannot normalize over zero elements (input shape {tuple(input.shape)})")
    _check_param(weight, "weight", rows.param_shape, input, op)
    return RMSNorm.apply(input, weight, axes, eps)


def rms_norm_composed(input: Tensor, normalized_shape=None, weight=None, eps=None, *, dim=None) -> Tensor:  # noqa: A002
    """:func:`rms_norm` from primitive Tensor ops (reference)."""
    op = "rms_norm_composed"
    _check_input(input, op)
    axes = _resolve_axes(input, normalized_shape, dim, op)
    eps = _rms_eps(eps, input, op)
    x = _stat_cast(input)
    y = x * ((x * x).mean(axes, keepdim=True) + eps).rsqrt()   # (B, L, D)
    if weight is not None:
        y = y * _param_view(weight, x, axes)
    return y.to(input.dtype)


def rms_norm_backward_composed(dy: Tensor, x: Tensor, weight, axes: tuple, eps: float) -> tuple:
    """``(dx, dweight or None)`` of RMSNorm from primitive Tensor ops (differentiable in all inputs)."""
    xs, dys = _stat_cast(x), _stat_cast(dy)
    other = tuple(i for i in range(x.ndim) if i not in axes)
    rstd = ((xs * xs).mean(axes, keepdim=True) + eps).rsqrt()   # (B, L, 1)
    xhat = xs * rstd                                            # (B, L, D)
    dxhat = dys * _param_view(weight, xs, axes) if weight is not None else dys
    dx = rstd * (dxhat - xhat * (dxhat * xhat).mean(axes, keepdim=True))
    dweight = (dys * xhat).sum(other).reshape(weight.shape).to(weight.dtype) if weight is not None else None
    return dx.to(x.dtype), dweight


# ==================================================================================================
# BatchNorm: each channel normalized over the batch (and length) axes
# ==================================================================================================
#
# Input (N, C) or (N, C, L) (any (N, C, ...)): channel axis 1, normalized over every other axis.
# The kernels take it as (N, C, L), a view (L = 1 for (N, C)); the NumPy kernels turn it into one
# row per channel, (C, N·L), the compiled ones read it in place. γ and β (C,) scale whole
# channels; otherwise every formula is LayerNorm's (docs, section 8).


def _ncl(a):
    """``(N, C, ...)`` as a C-contiguous ``(N, C, L)`` array, ``L`` the product of the trailing dims."""
    xp = get_array_module(a)
    return xp.ascontiguousarray(a).reshape(a.shape[0], a.shape[1], -1)


class BatchNorm(Function):
    """Training-mode BatchNorm with batch statistics (biased variance), one graph node."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps, batch_stats):
        y, mean, rstd, var = kernels.batch_norm_fwd_ncl(_ncl(x), weight, bias, eps)   # (N, C, L), (C, 1) ×3
        ctx.eps, ctx.has_bias = eps, bias is not None
        ctx.save_for_backward(x, weight, mean, rstd)
        batch_stats["mean"], batch_stats["var"] = mean[:, 0], var[:, 0]          # for the running stats
        return y.reshape(x.shape)                                                 # (N, C, ...)

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved_tensors
        grads = BatchNormBackward.apply(dy, x, weight, mean, rstd, ctx.eps, ctx.has_bias)
        grads = grads if isinstance(grads, tuple) else (grads,)
        return grads[0], (grads[1] if weight is not None else None), (grads[-1] if ctx.has_bias else None), None, None


class BatchNormBackward(Function):
    """Batch statistics backward: LayerNorm's three-term ``dx`` along each channel's row (docs, section 8)."""

    @staticmethod
    def forward(ctx, dy, x, weight, mean, rstd, eps, has_bias):
        dy3 = _ncl(dy)                                                             # (N, C, L)
        dx, dweight, dbias = kernels.batch_norm_bwd_ncl(dy3, _ncl(x), weight, mean, rstd)
        ctx.eps, ctx.has_bias = eps, has_bias
        ctx.save_for_backward(dy, x, weight)
        out = [dx.reshape(x.shape)]                                                # (N, C, ...)
        if weight is not None:
            out.append(dweight)                                                    # (C,)
        if has_bias:
            if dbias is None:  # a bias without a weight: dbias = Σ dy over all but the channel axis
                dbias = dy3.astype(kernels.stat_dtype(x.dtype)).sum(axis=(0, 2)).astype(x.dtype)
            out.append(dbias)                                                      # (C,)
        return tuple(out)

    @staticmethod
    def backward(ctx, *cotangents):
        dy, x, weight = ctx.saved_tensors
        eps, has_bias = ctx.eps, ctx.has_bias

        def composed(dy_, x_, weight_):
            return batch_norm_backward_composed(dy_, x_, weight_, eps, has_bias)

        ddy, dx_, dweight_ = _double_backward(composed, (dy, x, weight), cotangents)
        return ddy, dx_, dweight_, None, None, None, None


def _channel_view(p: Tensor, x: Tensor) -> Tensor:
    """A ``(C,)`` tensor reshaped to broadcast along axis 1 of ``x``: ``(1, C)`` or ``(1, C, 1)``."""
    return p.reshape((1, -1) + (1,) * (x.ndim - 2))


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalization (Ioffe & Szegedy, 2015), as ``torch.nn.functional.batch_norm``.

    In training (or without running statistics) each channel is normalized with the batch mean and
    biased variance over every axis but 1, in one fused graph node with a hand-derived backward;
    ``running_mean``/``running_var``, when given, are updated in place with ``momentum`` and the
    *unbiased* batch variance. Otherwise ``(x - running_mean) / sqrt(running_var + eps) · weight +
    bias``, composed from primitive ops.

    Args:
        input: ``(N, C)`` or ``(N, C, L)`` (any ``(N, C, ...)``) float16/32/64.
        running_mean, running_var: ``(C,)`` or None.
        weight, bias: ``(C,)`` or None.
        training: use batch statistics (and update the running ones).
        momentum: the weight of the new batch in the running averages (``None`` is not accepted
            here; the module handles the cumulative average).
        eps: > 0, finite.
    Returns:
        ``(N, C, ...)``, ``input``'s dtype.
    Raises:
        ValueError: fewer than 2 dims, a parameter not of shape ``(C,)``, eps ≤ 0, or one value
            per channel in training ("Expected more than 1 value per channel when training").
        TypeError: integer input.
    """
    op = "batch_norm"
    _check_input(input, op)
    if input.ndim < 2:
        raise ValueError(f"{op}: expected an input of shape (N, C) or (N, C, L), got shape {tuple(input.shape)}")
    eps = _check_eps(eps, op)
    C = input.shape[1]
    for name, p in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if p is not None:
            if not isinstance(p, Tensor):
                raise TypeError(f"{op}: {name} must be a Tensor or None, got {type(p).__name__}")
            if tuple(p.shape) != (C,):
                raise ValueError(f"{op}: expected {name} of shape ({C},) (one value per channel of the input "
                                 f"of shape {tuple(input.shape)}), got {tuple(p.shape)}")
    for name, p in (("weight", weight), ("bias", bias)):
        _check_param(p, name, (C,), input, op)
    use_batch_stats = training or running_mean is None or running_var is None
    if not use_batch_stats:
        scale = (_stat_cast(running_var) + eps).rsqrt()                             # (C,)
        y = (_stat_cast(input) - _channel_view(running_mean, input)) * _channel_view(scale, input)
        if weight is not None:
            y = y * _channel_view(weight, input)
        if bias is not None:
            y = y + _channel_view(bias, input)
        return y.to(input.dtype)
    M = input.numel() // max(C, 1)
    if M <= 1:
        raise ValueError(
            f"{op}: expected more than 1 value per channel when training, got input of shape {tuple(input.shape)}"
        )
    batch = {}  # the forward leaves the batch mean and biased variance (C,) here
    y = BatchNorm.apply(input, weight, bias, eps, batch)
    if training and running_mean is not None and running_var is not None:
        unbiased = batch["var"] * (M / (M - 1))                                  # Bessel's correction
        with no_grad():
            for buf, new in ((running_mean, batch["mean"]), (running_var, unbiased)):
                buf.array[...] = ((1 - momentum) * buf.array + momentum * new).astype(buf.dtype, copy=False)
                buf._version[0] += 1
    return y


def batch_norm_composed(input: Tensor, weight=None, bias=None, eps: float = 1e-5) -> Tensor:  # noqa: A002
    """Training-mode :func:`batch_norm` (batch statistics) from primitive Tensor ops (reference)."""
    axes = tuple(i for i in range(input.ndim) if i != 1)
    x = _stat_cast(input)
    xc = x - x.mean(axes, keepdim=True)                          # (N, C, L)
    y = xc * ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()  # (N, C, L)
    if weight is not None:
        y = y * _channel_view(weight, x)
    if bias is not None:
        y = y + _channel_view(bias, x)
    return y.to(input.dtype)


def batch_norm_backward_composed(dy: Tensor, x: Tensor, weight, eps: float, has_bias: bool) -> tuple:
    """``(dx, dweight or None, dbias or None)`` of training-mode BatchNorm from primitive Tensor ops."""
    axes = tuple(i for i in range(x.ndim) if i != 1)
    xs, dys = _stat_cast(x), _stat_cast(dy)
    xc = xs - xs.mean(axes, keepdim=True)
    rstd = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()
    xhat = xc * rstd
    dxhat = dys * _channel_view(weight, xs) if weight is not None else dys
    dx = rstd * (dxhat - dxhat.mean(axes, keepdim=True) - xhat * (dxhat * xhat).mean(axes, keepdim=True))
    dweight = (dys * xhat).sum(axes).to(weight.dtype) if weight is not None else None
    dbias = dys.sum(axes).to(x.dtype if weight is None else weight.dtype) if has_bias else None
    out = (dx.to(x.dtype),)
    if weight is not None:
        out += (dweight,)
    if has_bias:
        out += (dbias,)
    return out
