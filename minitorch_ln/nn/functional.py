"""Stateless functions of the layers (imported as ``F``), mirroring ``torch.nn.functional``."""

from __future__ import annotations

from .. import ops
from ..ops import (  # noqa: F401 - re-exported: the activations, with torch.nn.functional's signatures
    celu, elu, gelu, glu, hardshrink, hardsigmoid, hardswish, hardtanh, leaky_relu, logsigmoid, mish, prelu, relu,
    relu6, rrelu, selu, sigmoid, silu, softmin, softplus, softshrink, softsign, tanh, tanhshrink, threshold,
)
from ..ops.convolution import conv1d, conv2d, conv_transpose1d, conv_transpose2d  # noqa: F401 - re-exported
from ..ops.padding import pad  # noqa: F401 - re-exported
from ..ops.pooling import (  # noqa: F401 - re-exported
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d, avg_pool1d, avg_pool2d,
    max_pool1d, max_pool2d,
)
# layer_norm(input, normalized_shape=None, weight=None, bias=None, eps=1e-5, *, dim=None), rms_norm and
# batch_norm take PyTorch's signatures (plus dim=); fused, with hand-derived backwards (see docs/).
from ..ops.attention import scaled_dot_product_attention  # noqa: F401 - re-exported
from ..ops.batch_norm import batch_norm  # noqa: F401 - re-exported
from ..ops.layer_norm import layer_norm  # noqa: F401 - re-exported
from ..ops.rms_norm import rms_norm  # noqa: F401 - re-exported
from ..tensor import Tensor


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias``: ``(*, in)`` with ``(out, in)`` and ``(out,)`` → ``(*, out)``.

    One fused node (``ops.linear``): the leading dimensions are flattened into one 2-D GEMM and the
    bias is added in place.

    Raises:
        ValueError: when ``input``'s last dimension is not ``weight``'s second.
    """
    return ops.linear(input, weight, bias)


# --------------------------------------------------------------------------------------------------
# Wrappers with PyTorch's signatures over the ops (looked up on ``ops`` at call time)
# --------------------------------------------------------------------------------------------------


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Inverted dropout: ``(*)`` → ``(*)``; identity when ``training`` is False (see ``ops.dropout``).

    ``inplace`` is accepted for parity and ignored (the result is a new tensor).

    Raises:
        ValueError: ``p`` outside ``[0, 1]``.
    """
    return ops.dropout(input, p, training)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None) -> Tensor:  # noqa: A002
    """Rows of ``weight`` ``(V, D)`` at integer ids ``input`` ``(*)`` → ``(*, D)`` (see ``ops.embedding``).

    Raises:
        IndexError: an id outside ``[0, V)``, naming the id and ``V``.
    """
    return ops.embedding(input, weight, padding_idx)


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """``exp(x) / Σ exp(x)`` along ``dim`` (after casting to ``dtype`` if given); same shape."""
    return ops.softmax(input if dtype is None else input.to(dtype), dim)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """``x - logsumexp(x)`` along ``dim`` (after casting to ``dtype`` if given); same shape."""
    return ops.log_softmax(input if dtype is None else input.to(dtype), dim)


def cross_entropy(input: Tensor, target: Tensor, weight=None, ignore_index: int = -100,  # noqa: A002
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``(N, C)`` / ``(N, C, d1, ...)`` with class ids or probabilities (see ``ops``)."""
    return ops.cross_entropy(input, target, weight=weight, ignore_index=ignore_index, reduction=reduction,
                             label_smoothing=label_smoothing)


def nll_loss(input: Tensor, target: Tensor, weight=None, ignore_index: int = -100,  # noqa: A002
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood of log-probabilities ``(N, C)`` at class ids ``(N,)`` (see ``ops``)."""
    return ops.nll_loss(input, target, weight=weight, ignore_index=ignore_index, reduction=reduction)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean squared error ``(input - target)²`` reduced by ``"mean"``, ``"sum"`` or ``"none"``."""
    return ops.mse_loss(input, target, reduction=reduction)
