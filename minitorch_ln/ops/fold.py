"""Sliding blocks: ``unfold`` (im2col) and ``fold`` (col2im), each the other's adjoint.

``unfold`` copies every ``kh × kw`` block of a zero-padded ``(N, C, H, W)`` image into a column::

    cols[n, (c·kh + i)·kw + j, oh·OW + ow] = xpad[n, c, oh·sh + i·dh, ow·sw + j·dw]

It is linear in ``x`` and reads each pixel once per block that covers it, so its transpose
``fold`` *adds* every column entry back to the pixel it was read from (overlaps are summed). So::

    d unfold(x) / dx  applied to dcols = fold(dcols)        (UnfoldFn.backward)
    d fold(c)   / dc  applied to dx    = unfold(dx)         (FoldFn.backward)

and every higher derivative is one of the two again. The array work is ``kernels/im2col.py``:
``im2col`` (a strided view, copied once) and ``col2im`` (one slice-add per kernel offset).
Shapes, checks and messages follow ATen's ``im2col_shape_check`` / ``col2im_shape_check``.
"""

from __future__ import annotations

import numbers

from ..autograd.function import Function
from ..errors import DtypeError
from ..kernels import im2col as K
from ..tensor import Tensor


# ================================================================================ Functions
class UnfoldFn(Function):
    """``x (N, C, H, W)`` → ``cols (N, C·kh·kw, OH·OW)``; ``geom = (ksize, stride, pads, dilation)``."""

    supports_complex = True  # moves or copies elements only: the same backward for complex (docs/complex.md)

    @staticmethod
    def forward(ctx, x, geom):
        ctx.geom, ctx.hw = geom, x.shape[2:]
        cols = K.im2col(x, *geom)  # strided view (N, C, kh, kw, OH, OW)
        N, C, kh, kw, OH, OW = cols.shape
        return cols.copy().reshape(N, C * kh * kw, OH * OW)  # one copy: never aliases x

    @staticmethod
    def backward(ctx, dcols):
        return FoldFn.apply(dcols, ctx.hw, ctx.geom), None


class FoldFn(Function):
    """``cols (N, C·kh·kw, L)`` → ``(N, C, H, W)``, each entry added to the pixel it came from."""

    supports_complex = True  # a sum of copies (real 0/1 coefficients): the same backward for complex

    @staticmethod
    def forward(ctx, cols, hw, geom):
        ctx.geom = geom
        (kh, kw), stride, pads, dilation = geom
        OH, OW = _blocks(hw, geom)
        N, CK, _ = cols.shape
        return K.col2im(cols.reshape(N, CK // (kh * kw), kh, kw, OH, OW), hw, stride, pads, dilation)

    @staticmethod
    def backward(ctx, dx):
        return UnfoldFn.apply(dx, ctx.geom), None, None


# ================================================================================ arguments
def _pair(v, name: str) -> tuple:
    """An int or a pair of ints → ``(a, b)`` (PyTorch's ``_pair`` then ATen's length check)."""
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return (int(v), int(v))
    if isinstance(v, (tuple, list)):
        if not all(isinstance(e, numbers.Integral) and not isinstance(e, bool) for e in v):
            raise TypeError(f"{name} must be an int or a tuple of ints, but got {name}={v!r}")
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
        return (int(v[0]), int(v[1]))
    raise TypeError(f"{name} must be an int or a tuple of ints, but got {type(v).__name__}")


def _geometry(kernel_size, dilation, padding, stride):
    """Parse and check the four block arguments; returns ``(ksize, stride, pads, dilation)`` for im2col."""
    k, d, p, s = (_pair(kernel_size, "kernel_size"), _pair(dilation, "dilation"), _pair(padding, "padding"),
                  _pair(stride, "stride"))
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} "
                           f"kernel_width: {k[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} "
                           f"dilation_width: {d[1]}")
    if min(p) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    return k, s, ((p[0], p[0]), (p[1], p[1])), d


def _blocks(hw, geom) -> tuple:
    """Number of sliding blocks ``(OH, OW)`` along height and width (may be ``<= 0``: callers check)."""
    (kh, kw), (sh, sw), ((ph, _), (pw, _)), (dh, dw) = geom
    return K.out_size(hw[0], kh, sh, dh, ph, ph), K.out_size(hw[1], kw, sw, dw, pw, pw)


def _describe(geom, with_stride=True) -> str:
    (kh, kw), (sh, sw), ((ph, _), (pw, _)), (dh, dw) = geom
    text = f"kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), padding=({ph}, {pw})"
    return text + f", stride=({sh}, {sw})" if with_stride else text


def _check_input(x, op: str, nd: int, what: str) -> bool:
    """``x`` is a Tensor with ``nd`` or ``nd + 1`` dims, all non-zero except the batch; True if unbatched."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(x).__name__}")
    batched = x.ndim == nd + 1
    if x.ndim not in (nd, nd + 1) or any(n == 0 for n in x.shape[int(batched):]):
        raise RuntimeError(f"{op}: expected {what} with possibly 0 batch size and other non-zero dimensions for "
                           f"input, but got: {list(x.shape)}")
    return not batched


# ================================================================================ public functions
def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extract sliding local blocks, as ``torch.nn.functional.unfold`` (im2col).

    Shapes: ``input (N, C, H, W)`` or unbatched ``(C, H, W)`` → ``(N, C·kh·kw, L)`` (or
    ``(C·kh·kw, L)``), ``L = OH·OW`` blocks with ``OH = ⌊(H + 2·pad - dil·(kh-1) - 1) / stride⌋ + 1``;
    row ``(c·kh + i)·kw + j`` holds channel ``c`` at kernel offset ``(i, j)``. Any dtype (gradients for
    float ones). The gradient is :func:`fold`.

    Raises:
        RuntimeError: a non-positive kernel_size/stride/dilation, negative padding, a pair of the
            wrong length, input not 3-D/4-D or with a zero non-batch size, or no complete block.
        TypeError: a non-integer argument.
    """
    unbatched = _check_input(input, "unfold", 3, "3D or 4D (batch mode) tensor")
    geom = _geometry(kernel_size, dilation, padding, stride)
    x = input.unsqueeze(0) if unbatched else input
    OH, OW = _blocks(x.shape[2:], geom)
    if OH < 1 or OW < 1:
        raise RuntimeError(f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), {_describe(geom, with_stride=False)}, "
                           f"calculated shape of the array of sliding blocks as ({OH}, {OW}), but its components "
                           f"must be at least one.")
    y = UnfoldFn.apply(x, geom)
    return y.squeeze(0) if unbatched else y


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Combine sliding local blocks into an image, summing overlaps, as ``torch.nn.functional.fold``
    (col2im; the adjoint of :func:`unfold`).

    Shapes: ``input (N, C·kh·kw, L)`` or unbatched ``(C·kh·kw, L)`` → ``(N, C, *output_size)`` (or
    ``(C, *output_size)``), where ``L`` must equal the number of blocks :func:`unfold` makes from an
    ``output_size`` image. Float and integer dtypes (not bool). The gradient is :func:`unfold`.

    Raises:
        RuntimeError: argument errors as :func:`unfold`; input not 2-D/3-D or with a zero non-batch
            size; ``input.size(-2)`` not divisible by ``kh·kw``; ``input.size(-1) != L``.
        TypeError: a non-integer argument; ``DtypeError`` for a bool input.
    """
    unbatched = _check_input(input, "fold", 2, "2D or 3D (batch mode) tensor for input")
    if input.dtype.kind == "b":
        raise DtypeError(f"fold: expected a float or integer tensor, got {input.dtype} (overlaps are summed)")
    hw = _pair(output_size, "output_size")
    geom = _geometry(kernel_size, dilation, padding, stride)
    cols = input.unsqueeze(0) if unbatched else input
    (kh, kw), CK, L = geom[0], cols.shape[1], cols.shape[2]
    if CK % (kh * kw):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={CK} and kernel_size=({kh}, {kw}).")
    OH, OW = _blocks(hw, geom)
    if OH * OW != L:
        raise RuntimeError(f"Given output_size=({hw[0]}, {hw[1]}), {_describe(geom)}, expected size of input's "
                           f"dimension 2 to match the calculated number of sliding blocks {OH} * {OW} = {OH * OW}, "
                           f"but got input.size(2)={L}.")
    if OH < 1 or OW < 1:
        raise RuntimeError(f"Given output_size=({hw[0]}, {hw[1]}), {_describe(geom)}, calculated shape of the array "
                           f"of sliding blocks as ({OH}, {OW}), but its components must be at least one.")
    y = FoldFn.apply(cols, hw, geom)
    return y.squeeze(0) if unbatched else y
