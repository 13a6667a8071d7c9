"""Power-average pooling: ``lp_pool1d/2d/3d`` (``torch.nn.functional``), composed exactly as PyTorch's.

``y = (sign(s)·relu(|s|)·|k|)^(1/p)`` with ``s`` the average of ``x^p`` over each window (no padding)
and ``|k|`` the window's size, i.e. ``(Σ_window x^p)^(1/p)``; ``p = ±inf`` is the max (min) of ``|x|``.
Built from :mod:`~minitorch_ln.ops.pooling` and elementwise ops, so every derivative follows.
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from .activation import relu
from .convolution import ntuple
from .pooling import avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d"]

_AVG = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}
_MAX = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}


def _lp_pool(op, nd, input, norm_type, kernel_size, stride, ceil_mode):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if not isinstance(norm_type, (int, float)) or isinstance(norm_type, bool) or norm_type == 0:
        raise ValueError(f"{op}: norm_type must be a non-zero number, got {norm_type!r}")
    k = ntuple(kernel_size, nd, "kernel_size", op)
    if norm_type == math.inf:
        return _MAX[nd](input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -_MAX[nd](-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = _AVG[nd](input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:  # noqa: A002
    """``(N, C, L)`` or ``(C, L)`` → ``(N, C, OL)``: ``(Σ_window x^p)^(1/p)`` over windows of ``kernel_size``
    (no padding), as ``torch.nn.functional.lp_pool1d``. Float dtypes; errors as :func:`avg_pool1d`, and
    ValueError for ``norm_type = 0``."""
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:  # noqa: A002
    """``(N, C, H, W)`` or ``(C, H, W)`` → ``(N, C, OH, OW)``; see :func:`lp_pool1d`."""
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:  # noqa: A002
    """``(N, C, D, H, W)`` or ``(C, D, H, W)`` → ``(N, C, OD, OH, OW)``; see :func:`lp_pool1d`."""
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)
