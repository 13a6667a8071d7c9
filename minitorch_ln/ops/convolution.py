"""Convolutions: ``conv1d/2d/3d``, ``conv_transpose1d/2d/3d`` (``unfold``/``fold``: ``ops/fold.py``).

Forward is im2col + one GEMM (``kernels/im2col.py``). The backward is derived by hand and closed
under differentiation, so ``create_graph=True`` works to any order. With ``y = conv(x, w)``::

    dx = conv_transpose(dy, w)      # col2im(wᵀ @ dy-columns)          (ConvTranspose2dFn)
    dw = conv_weight(x, dy)         # dy-columns @ im2col(x)ᵀ          (ConvWeight2dFn)
    db = dy.sum over (N, OH, OW)

All three maps are bilinear and adjoint to each other, so each one's backward is written with the
other two (e.g. ``conv_transpose(dy, w)``'s gradient in ``dy`` is ``conv(ddx, w)``, in ``w`` it is
``conv_weight(ddx, dy)``). Complex operands: each map is holomorphic and bilinear, so (docs/complex.md)
its gradient is the real formula with the *saved* operand conjugated (``dx = conv_transpose(dy, conj w)``,
``dw = conv_weight(conj x, dy)``); the incoming gradient is never conjugated. 1-d convolutions run as 2-d ones on a height-1 image; 3-d ones run the
same Functions and kernels (``kernels/im2col.py`` is written for any number of spatial axes).
Shapes and error messages follow PyTorch (``torch.nn.functional.conv2d`` and friends).
"""

from __future__ import annotations

import numbers

from ..autograd.function import Function
from ..kernels import im2col as K
from ..errors import DtypeError
from ..tensor import Tensor
from ._util import require_float
from .autocast_policies import autocast
from .complex_parts import cj

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]


ConvDtypeError = DtypeError  # minitorch_ln/errors.py

# The forward's im2col columns are kept for the weight gradient when at most this large (bytes);
# larger ones are made again in backward (time for memory: for a 3x3 kernel they are 9x the input).
KEEP_COLUMNS_BYTES = 256 * 2**20


# ================================================================================ argument helpers
def ntuple(v, n: int, name: str, op: str) -> tuple:
    """An int or a list of ``n`` (or 1) ints → a tuple of ``n`` ints (PyTorch's ``expand_param_if_needed``)."""
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return (int(v),) * n
    if isinstance(v, (tuple, list)) and all(isinstance(e, numbers.Integral) and not isinstance(e, bool) for e in v):
        if len(v) == n:
            return tuple(int(e) for e in v)
        if len(v) == 1:
            return (int(v[0]),) * n
    raise RuntimeError(f"{op}: expected {name} to be a single integer value or a list of {n} values to match "
                       f"the convolution dimensions, but got {name}={list(v) if isinstance(v, (tuple, list)) else v!r}")


def _size(t) -> str:
    return str(list(t.shape))


def _check_tensor(x, name: str, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")


def _check_dtypes(op, x, w, b=None) -> None:
    if x.dtype.kind != "c":  # complex64/complex128 are taken as PyTorch takes them
        require_float(x, op)
    if w.dtype != x.dtype:
        raise ConvDtypeError(f"{op}: input type ({x.dtype}) and weight type ({w.dtype}) should be the same")
    if b is not None and b.dtype != x.dtype:
        raise ConvDtypeError(f"{op}: input type ({x.dtype}) and bias type ({b.dtype}) should be the same")


def _check_batch_dim(op, x, nd) -> bool:
    """Returns True for an unbatched input ``(C, *S)``; raises for a wrong number of dims."""
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, but got input of "
                           f"size: {_size(x)}")
    return x.ndim == nd + 1


def _check_geometry(stride, dilation, groups) -> None:
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"non-positive stride is not supported, got stride={list(stride)}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"non-positive dilation is not supported, got dilation={list(dilation)}")
    if not isinstance(groups, numbers.Integral) or groups <= 0:
        raise RuntimeError(f"groups must be a positive int, got groups={groups!r} ({type(groups).__name__})")


def _lift(geom_1d) -> tuple:
    """1-d geometry ``(stride, pads, dilation)`` → the 2-d one of a height-1 image."""
    (s,), (p,), (d,) = geom_1d
    return (1, s), ((0, 0), p), (1, d)


# ================================================================================ Functions
class Conv2dFn(Function):
    """``y = conv(x, w) + b``: ``x (N, C, H, W)``, ``w (O, C/g, kh, kw)``, ``b (O,)`` → ``(N, O, OH, OW)``
    (and alike with three spatial axes)."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, w, b, geom, out_hw=None):
        # out_hw: only the first (OH, OW) outputs (the backward of a transposed convolution whose
        # output_padding added rows and columns that no window of the forward input reached)
        need_x, need_w = ctx.needs_input_grad[:2]
        ctx.save_for_backward(x if need_w else None, w if need_x else None)
        ctx.geom, ctx.hw, ctx.w_shape = geom, x.shape[2:], w.shape
        y, cols = K.conv_forward(x, w, *geom, out_hw=out_hw, return_cols=True)  # (N, O, OH, OW)
        # The weight gradient needs these columns again; keeping them (kh·kw times the input's size)
        # saves making them twice, unless they are large. They are a cache, not a saved tensor: x
        # is saved too, so an in-place change of x after the forward is still caught.
        # (complex x: the weight gradient needs the columns of conj(x), made then)
        ctx.cols = cols if need_w and cols.nbytes <= KEEP_COLUMNS_BYTES and x.dtype.kind != "c" else None
        if b is not None:
            y += b.reshape((1, -1) + (1,) * (y.ndim - 2))
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        dx = ConvTranspose2dFn.apply(dy, cj(w), ctx.geom, ctx.hw) if need_x else None
        dw = ConvWeight2dFn.apply(cj(x), dy, ctx.geom, ctx.w_shape[2:], ctx.cols) if need_w else None
        ctx.cols = None
        db = dy.sum((0,) + tuple(range(2, dy.ndim))) if need_b else None
        return dx, dw, db, None, None


class ConvTranspose2dFn(Function):
    """``x = conv_transpose(dy, w)`` = ``J_xᵀ dy`` of ``conv(·, w)``: ``dy (N, O, OH, OW)`` → ``(N, C, *hw)``."""

    supports_complex = True

    @staticmethod
    def forward(ctx, dy, w, geom, hw):
        need_dy, need_w = ctx.needs_input_grad[:2]
        ctx.save_for_backward(dy if need_w else None, w if need_dy else None)
        ctx.geom, ctx.w_shape, ctx.dy_hw = geom, w.shape, dy.shape[2:]
        return K.conv_input_grad(dy, w, hw, *geom)

    @staticmethod
    def backward(ctx, ddx):
        dy, w = ctx.saved_tensors
        need_dy, need_w = ctx.needs_input_grad[:2]
        d_dy = Conv2dFn.apply(ddx, cj(w), None, ctx.geom, ctx.dy_hw) if need_dy else None
        dw = ConvWeight2dFn.apply(ddx, cj(dy), ctx.geom, ctx.w_shape[2:], None) if need_w else None
        return d_dy, dw, None, None


class ConvWeight2dFn(Function):
    """``dw = conv_weight(x, dy)`` = ``J_wᵀ dy`` of ``conv(x, ·)``: → ``(O, C/g, kh, kw)``."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, dy, geom, ksize, cols=None):
        # cols: the columns of x the forward convolution made, when it kept them (Conv2dFn)
        need_x, need_dy = ctx.needs_input_grad[:2]
        ctx.save_for_backward(x if need_dy else None, dy if need_x else None)
        ctx.geom, ctx.hw, ctx.dy_hw = geom, x.shape[2:], dy.shape[2:]
        return K.conv_weight_grad(x, dy, tuple(ksize), *geom, cols=cols)

    @staticmethod
    def backward(ctx, ddw):
        x, dy = ctx.saved_tensors
        need_x, need_dy = ctx.needs_input_grad[:2]
        dx = ConvTranspose2dFn.apply(cj(dy), ddw, ctx.geom, ctx.hw) if need_x else None
        d_dy = Conv2dFn.apply(cj(x), ddw, None, ctx.geom, ctx.dy_hw) if need_dy else None
        return dx, d_dy, None, None, None


# ================================================================================ conv
def _checked_args(op, nd, input, weight, bias, stride, dilation, groups, layout):  # noqa: A002
    """What conv and conv_transpose check alike: tensors, the batch dim (unbatched input gets one),
    the weight's rank (``layout`` names its first two dims), dtypes, stride/dilation/groups.
    Returns ``(x, unbatched, stride, dilation)``."""
    for t, name in ((input, "input"), (weight, "weight")):
        _check_tensor(t, name, op)
    if bias is not None:
        _check_tensor(bias, "bias", op)
    unbatched = _check_batch_dim(op, input, nd)
    x = input.unsqueeze(0) if unbatched else input
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{op}: expected weight to be {nd + 2}-dimensional ({layout}, *kernel), but got weight "
                           f"of size {_size(weight)}")
    _check_dtypes(op, x, weight, bias)
    stride, dilation = ntuple(stride, nd, "stride", op), ntuple(dilation, nd, "dilation", op)
    _check_geometry(stride, dilation, groups)
    return x, unbatched, stride, dilation


def _conv(op, nd, input, weight, bias, stride, padding, dilation, groups):
    x, unbatched, stride, dilation = _checked_args(op, nd, input, weight, bias, stride, dilation, groups,
                                                   "out_channels, in_channels/groups")
    ksize = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            # PyTorch: total d·(k-1), the odd unit goes to the end (bottom/right)
            pads = tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(ksize, dilation))
        else:
            raise RuntimeError(f"Invalid padding string: {padding!r}, should be one of 'valid' or 'same'")
    else:
        p = ntuple(padding, nd, "padding", op)
        if any(v < 0 for v in p):
            raise RuntimeError(f"negative padding is not supported, got padding={list(p)}")
        pads = tuple((v, v) for v in p)
    O, Cg = weight.shape[:2]
    if O % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size {_size(weight)} instead")
    if x.shape[1] != Cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_size(weight)}, expected input{_size(x)} to have "
                           f"{Cg * groups} channels, but got {x.shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != O):
        raise RuntimeError(f"Given weight of size {_size(weight)}, expected bias to be 1-dimensional with {O} "
                           f"elements, but got bias of size {_size(bias)} instead")
    padded = [n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads)]
    eff = [d * (k - 1) + 1 for k, d in zip(ksize, dilation)]
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input size")
    geom = (stride, pads, dilation)
    if nd == 1:
        y = Conv2dFn.apply(x.unsqueeze(2), weight.unsqueeze(2), bias, _lift(geom) + (groups,), None).squeeze(2)
    else:
        y = Conv2dFn.apply(x, weight, bias, geom + (groups,), None)
    return y.squeeze(0) if unbatched else y


@autocast("conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-d cross-correlation, as ``torch.nn.functional.conv2d``.

    Shapes: ``input (N, C, H, W)`` or unbatched ``(C, H, W)``; ``weight (O, C/groups, kH, kW)``;
    ``bias (O,)``; output ``(N, O, OH, OW)`` with ``OH = (H + 2·pad - dil·(kH-1) - 1) // stride + 1``.
    ``padding`` is an int, a pair, ``'valid'`` or ``'same'`` (stride 1 only; for an even kernel the
    extra row/column goes at the bottom/right, as PyTorch). Float dtypes only; all operands one dtype.

    Raises:
        RuntimeError: wrong number of dims, channels that do not match the weight, bias of the wrong
            size, a kernel larger than the padded input, non-positive stride/dilation/groups,
            negative padding (each message names the expected and the actual shape).
        TypeError: a non-float input; ``ConvDtypeError`` (a RuntimeError and a TypeError) for mixed dtypes.
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@autocast("conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-d cross-correlation, as ``torch.nn.functional.conv1d``: ``input (N, C, L)`` or ``(C, L)``,
    ``weight (O, C/groups, k)`` → ``(N, O, OL)``. Runs as :func:`conv2d` on a height-1 image; same
    arguments and errors."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@autocast("conv3d")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-d cross-correlation, as ``torch.nn.functional.conv3d``: ``input (N, C, D, H, W)`` or
    ``(C, D, H, W)``, ``weight (O, C/groups, kD, kH, kW)`` → ``(N, O, OD, OH, OW)``. The same Functions
    and kernels as :func:`conv2d`, with a third spatial axis; same arguments and errors."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


# ================================================================================ conv_transpose
def _conv_transpose(op, nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    x, unbatched, stride, dilation = _checked_args(op, nd, input, weight, bias, stride, dilation, groups,
                                                   "in_channels, out_channels/groups")
    pad, opad = ntuple(padding, nd, "padding", op), ntuple(output_padding, nd, "output_padding", op)
    if any(v < 0 for v in pad) or any(v < 0 for v in opad):
        raise RuntimeError(f"negative padding is not supported, got padding={list(pad)}, output_padding={list(opad)}")
    if any(o >= s and o >= d for o, s, d in zip(opad, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                           f"output_padding={list(opad)}, stride={list(stride)}, dilation={list(dilation)}")
    Cin, Cog = weight.shape[:2]
    if Cin % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size {_size(weight)} instead")
    if x.shape[1] != Cin:
        raise RuntimeError(f"Given transposed=1, weight of size {_size(weight)}, expected input{_size(x)} to have "
                           f"{Cin} channels, but got {x.shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != Cog * groups):
        raise RuntimeError(f"Given transposed=1, weight of size {_size(weight)}, expected bias to be 1-dimensional "
                           f"with {Cog * groups} elements, but got bias of size {_size(bias)} instead")
    ksize = weight.shape[2:]
    out = [(n - 1) * s - 2 * p + d * (k - 1) + o + 1
           for n, s, p, d, k, o in zip(x.shape[2:], stride, pad, dilation, ksize, opad)]
    if any(v <= 0 for v in out):
        raise RuntimeError(f"Given input size per channel: {list(x.shape[2:])}, calculated output size per channel: "
                           f"{out}. Output size is too small")
    geom = (stride, tuple((p, p) for p in pad), dilation)
    if nd == 1:
        y = ConvTranspose2dFn.apply(x.unsqueeze(2), weight.unsqueeze(2), _lift(geom) + (groups,), (1, out[0])).squeeze(2)
    else:
        y = ConvTranspose2dFn.apply(x, weight, geom + (groups,), tuple(out))
    if bias is not None:
        y = y + bias.reshape((1, -1) + (1,) * nd)
    return y.squeeze(0) if unbatched else y


@autocast("conv_transpose2d")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """2-d transposed convolution (the gradient of :func:`conv2d` with respect to its input), as
    ``torch.nn.functional.conv_transpose2d``.

    Shapes: ``input (N, Cin, H, W)`` or ``(Cin, H, W)``; ``weight (Cin, Cout/groups, kH, kW)``;
    ``bias (Cout,)``; output ``(N, Cout, OH, OW)``, ``OH = (H-1)·stride - 2·pad + dil·(kH-1) + output_padding + 1``.
    Raises RuntimeError (channels, bias size, ``output_padding`` not smaller than stride or
    dilation, output too small) and TypeError (dtypes) as :func:`conv2d`.
    """
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


@autocast("conv_transpose1d")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """1-d transposed convolution: ``input (N, Cin, L)`` or ``(Cin, L)``, ``weight (Cin, Cout/groups, k)``
    → ``(N, Cout, OL)``; see :func:`conv_transpose2d`."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


@autocast("conv_transpose3d")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """3-d transposed convolution: ``input (N, Cin, D, H, W)`` or ``(Cin, D, H, W)``, ``weight
    (Cin, Cout/groups, kD, kH, kW)`` → ``(N, Cout, OD, OH, OW)``; see :func:`conv_transpose2d`."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)
