"""LayerNorm, the heart of the project: the fused op, its hand-derived backward, and the composed reference.

Read next to ``docs/layernorm_backward.md``, which derives every formula used here, in the notation
``x`` ``(B, L, D)``, ``mean``/``rstd`` ``(B, L, 1)``, ``xhat = (x - mean) · rstd``,
``y = xhat · weight + bias``. Each op comes in four pieces:

- ``NativeLayerNorm`` (a ``Function``): the forward, one graph node, running the fused kernel that
  ``kernels/layer_norm_dispatch.py`` picks. The file to read beside the docs is
  ``kernels/layer_norm.py``, the same math in whole-array NumPy and the oracle; on the CPU the
  default is its compiled twin ``kernels/cpu_layer_norm.py`` (a loop over each row), on the GPU
  ``kernels/cuda_layer_norm.py``. It saves
  ``x``, ``weight`` and the statistics ``mean``, ``rstd`` ``(..., 1)`` (or only ``x`` and ``weight`` with ``recompute_stats=True``); its backward applies
- ``NativeLayerNormBackward`` (a ``Function``): its forward is the hand-derived compact formula

      dx = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat)),   dxhat = dy · weight
      dweight = Σ dy · xhat,   dbias = Σ dy     (sums over every non-normalized axis)

  (the kernel); its own backward, needed only for second and higher derivatives, differentiates
  the composed reference backward below, recomputing the statistics from ``x`` so that they carry
  history (see :mod:`minitorch_ln.autograd.composed`);
- ``layer_norm``: checks its arguments, then applies ``NativeLayerNorm``;
- ``layer_norm_composed`` and ``layer_norm_backward_composed``: the same functions built from
  primitive Tensor ops, for teaching and as the reference the tests hold the fused ones to.

Axes: the normalized axes are moved last and the array is viewed as rows ``(N, D)`` (no copy for
the usual trailing ``normalized_shape``), so ``dim=`` (any axes, e.g. the channels of
``(N, C, H, W)``) runs the same kernel. BatchNorm hands its input to the kernels as ``(N, C, L)``
(a view), one mean and variance per channel ``c`` over ``x[:, c, :]`` (``ops/batch_norm.py``).
"""

from __future__ import annotations

from ..kernels import layer_norm_dispatch
from ..kernels.layer_norm import stat_dtype
from ..autograd.autocast_state import autocast_acting
from ..autograd.composed import double_backward
from ..autograd.function import Function
from ..tensor import Tensor
from .autocast_policies import wrap as autocast_wrap
from .normalization_common import check_eps, check_input, check_param, flat, param_view, resolve_axes, rows_of, stat_cast
from .reduction import sum_over

__all__ = ["layer_norm"]


class NativeLayerNorm(Function):
    """``y = (x - mean) · rstd · weight + bias`` over ``axes``: the fused forward (one graph node)."""

    @staticmethod
    def forward(ctx, x, weight, bias, axes, eps, recompute_stats):
        rows = rows_of(x.shape, axes)
        y, mean, rstd = layer_norm_dispatch.layer_norm_fwd_for(x)(rows.to_rows(x), flat(weight, rows.D), flat(bias, rows.D), eps)
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
        grads = NativeLayerNormBackward.apply(dy, x, weight, mean, rstd, ctx.axes, ctx.eps, ctx.bias_dtype)
        grads = grads if isinstance(grads, tuple) else (grads,)
        dx = grads[0]
        dweight = grads[1] if weight is not None else None
        dbias = grads[-1] if ctx.bias_dtype is not None else None
        return dx, dweight, dbias, None, None, None


class NativeLayerNormBackward(Function):
    """``(dy, x, weight) -> (dx[, dweight][, dbias])``: the hand-derived backward as one node.

    Outputs: ``dx`` always, ``dweight`` when there is a weight, ``dbias`` when there is a bias.
    """

    @staticmethod
    def forward(ctx, dy, x, weight, mean, rstd, axes, eps, bias_dtype):
        rows = rows_of(x.shape, axes)
        dy2, x2 = rows.to_rows(dy), rows.to_rows(x)                               # (N, D) each
        if mean is None:                                   # the recompute_stats option
            mean2, rstd2 = layer_norm_dispatch.layer_norm_stats_for(x2)(x2, eps)                      # (N, 1) each
        else:
            mean2, rstd2 = mean.reshape(rows.N, 1), rstd.reshape(rows.N, 1)       # (N, 1) each
        dx, dweight, dbias = layer_norm_dispatch.layer_norm_bwd_for(x2)(dy2, x2, flat(weight, rows.D), mean2, rstd2)
        ctx.axes, ctx.eps, ctx.bias_dtype = axes, eps, bias_dtype
        ctx.save_for_backward(dy, x, weight)
        out = [rows.from_rows(dx)]                                                # (B, L, D)
        if weight is not None:
            out.append(dweight.reshape(rows.param_shape))                         # (D,)
        if bias_dtype is not None:
            if dbias is None:  # a bias without a weight: dbias = Σ dy, summed in the statistics dtype
                dbias = dy2.astype(stat_dtype(dy2.dtype)).sum(axis=0)            # (D,)
            out.append(dbias.astype(bias_dtype, copy=False).reshape(rows.param_shape))
        return tuple(out)

    @staticmethod
    def backward(ctx, *cotangents):
        dy, x, weight = ctx.saved_tensors
        axes, eps, bias_dtype = ctx.axes, ctx.eps, ctx.bias_dtype

        def composed(dy_, x_, weight_):  # the outputs this node has: dx[, dweight][, dbias]
            grads = layer_norm_backward_composed(dy_, x_, weight_, axes, eps, bias_dtype is not None)
            return tuple(g for g in grads if g is not None)

        ddy, dx_, dweight_ = double_backward(composed, (dy, x, weight), cotangents)
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
        eps: added to the variance inside the square root; any real number, as PyTorch (negative too:
            the formula's number where ``var + eps > 0``, NaN/inf where it is not, as PyTorch's).
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
            both or neither of ``normalized_shape`` and ``dim``, eps not a real number, a weight or
            bias of the wrong shape. Zero elements to normalize give an empty ``y`` (as PyTorch).
    """
    op = "layer_norm"
    if autocast_acting():  # inside an autocast region: float32, PyTorch's policy (ops/autocast_policies.py)
        return _layer_norm_autocast(input, normalized_shape, weight, bias, eps, dim=dim, recompute_stats=recompute_stats)
    check_input(input, op)
    axes = resolve_axes(input, normalized_shape, dim, op)
    eps = check_eps(eps, op, positive=False)
    rows = rows_of(input.shape, axes)
    check_param(weight, "weight", rows.param_shape, input, op)
    check_param(bias, "bias", rows.param_shape, input, op)
    if rows.D == 0:  # nothing to normalize: an empty output (and empty gradients), as PyTorch
        return layer_norm_composed(input, None, weight, bias, eps, dim=axes)
    return NativeLayerNorm.apply(input, weight, bias, axes, eps, bool(recompute_stats))


# checked in the body, not wrapped around it: nn.LayerNorm.forward stays 5 calls from the row loop
_layer_norm_autocast = autocast_wrap("layer_norm", layer_norm)


def layer_norm_composed(input: Tensor, normalized_shape=None, weight=None, bias=None, eps: float = 1e-5,  # noqa: A002
                        *, dim=None) -> Tensor:
    """:func:`layer_norm` from primitive Tensor ops: the reference for teaching and for the tests.

    Same arguments, shapes and errors as :func:`layer_norm`; about ten graph nodes (mean, sub,
    mul, mean, add, rsqrt, mul, ...) where the fused op has one, and autograd derives the backward
    from them. Float16 input is computed in float32.
    """
    op = "layer_norm_composed"
    check_input(input, op)
    axes = resolve_axes(input, normalized_shape, dim, op)
    eps = check_eps(eps, op, positive=False)
    x = stat_cast(input)
    mean = x.mean(axes, keepdim=True)                           # (B, L, 1)
    xc = x - mean                                               # (B, L, D)
    var = (xc * xc).mean(axes, keepdim=True)                    # (B, L, 1)  biased
    rstd = (var + eps).rsqrt()                                  # (B, L, 1)
    y = xc * rstd                                               # (B, L, D)  xhat
    if weight is not None:
        y = y * param_view(weight, x, axes)
    if bias is not None:
        y = y + param_view(bias, x, axes)
    return y.to(input.dtype)


def layer_norm_backward_composed(dy: Tensor, x: Tensor, weight, axes: tuple, eps: float, has_bias: bool) -> tuple:
    """``(dx, dweight or None, dbias or None)`` of LayerNorm, from primitive Tensor ops.

    The compact formula of ``docs/layernorm_backward.md`` (section 3), with the statistics
    recomputed from ``x`` so that the result is differentiable in ``x`` as well as in ``dy`` and
    ``weight``: this is what the fused backward's own backward differentiates. Shapes: ``dy``, ``x``
    ``(B, L, D)``; ``weight`` of the normalized shape or None.
    """
    xs, dys = stat_cast(x), stat_cast(dy)
    other = tuple(i for i in range(x.ndim) if i not in axes)
    mean = xs.mean(axes, keepdim=True)                          # (B, L, 1)
    xc = xs - mean                                              # (B, L, D)
    rstd = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()   # (B, L, 1)
    xhat = xc * rstd                                            # (B, L, D)
    dxhat = dys * param_view(weight, xs, axes) if weight is not None else dys   # (B, L, D)
    dx = rstd * (dxhat                                          # term 1: directly through xhat
                 - dxhat.mean(axes, keepdim=True)               # term 2: through the mean
                 - xhat * (dxhat * xhat).mean(axes, keepdim=True))   # term 3: through rstd
    dweight = sum_over(dys * xhat, other).reshape(weight.shape).to(weight.dtype) if weight is not None else None
    dbias = sum_over(dys, other).reshape(tuple(x.shape[i] for i in axes)) if has_bias else None
    if dbias is not None and weight is not None:
        dbias = dbias.to(weight.dtype)
    return dx.to(x.dtype), dweight, dbias
