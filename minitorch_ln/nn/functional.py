"""Stateless functions of the layers (imported as ``F``), mirroring ``torch.nn.functional``."""

from __future__ import annotations

import warnings

from .. import ops
from ..ops import (  # noqa: F401 - re-exported: the activations, with torch.nn.functional's signatures
    celu, elu, gelu, glu, hardshrink, hardsigmoid, hardswish, hardtanh, leaky_relu, logsigmoid, mish, prelu, relu,
    relu6, rrelu, selu, sigmoid, silu, softmin, softplus, softshrink, softsign, tanh, tanhshrink, threshold,
)
from ..ops.convolution import (  # noqa: F401 - re-exported
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,
)
from ..ops.distance import cdist, cosine_similarity, normalize, pairwise_distance, pdist  # noqa: F401 - re-exported
from ..ops.loss_margin import (  # noqa: F401 - re-exported
    binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss, margin_ranking_loss, one_hot,
    soft_margin_loss, triplet_margin_loss,
)
from ..ops.loss_regression import (  # noqa: F401 - re-exported
    gaussian_nll_loss, huber_loss, kl_div, l1_loss, poisson_nll_loss, smooth_l1_loss,
)
from ..ops.loss_multi import (  # noqa: F401 - re-exported
    hinge_embedding_loss, multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss,
    triplet_margin_with_distance_loss,
)
from ..ops.loss_linear import linear_cross_entropy  # noqa: F401 - re-exported
from ..ops.loss_ctc import ctc_loss  # noqa: F401 - re-exported
from ..ops.embedding_bag import embedding_bag  # noqa: F401 - re-exported
from ..ops.loss import cross_entropy, mse_loss, nll_loss  # noqa: F401 - re-exported: PyTorch's argument order
from ..ops.padding import pad  # noqa: F401 - re-exported
from ..ops.dropout import (  # noqa: F401 - re-exported
    alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout,
)
from ..ops.pooling_lp import lp_pool1d, lp_pool2d, lp_pool3d  # noqa: F401 - re-exported
from ..ops.pooling_unpool import max_unpool1d, max_unpool2d, max_unpool3d  # noqa: F401 - re-exported
from ..ops.pooling_fractional import fractional_max_pool2d, fractional_max_pool3d  # noqa: F401 - re-exported
from ..ops.bilinear_map import bilinear  # noqa: F401 - re-exported
from ..ops.pooling import (  # noqa: F401 - re-exported
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d,
    adaptive_max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d,
)
# layer_norm(input, normalized_shape=None, weight=None, bias=None, eps=1e-5, *, dim=None), rms_norm and
# batch_norm take PyTorch's signatures (plus dim=); fused, with hand-derived backwards (see docs/).
from ..ops.attention import scaled_dot_product_attention  # noqa: F401 - re-exported
from ..ops.batch_norm import batch_norm  # noqa: F401 - re-exported
from ..ops.group_norm import group_norm, instance_norm  # noqa: F401 - re-exported
from ..ops.local_response_norm import local_response_norm  # noqa: F401 - re-exported
from ..ops.fold import fold, unfold  # noqa: F401 - re-exported
from ..ops.interpolate import interpolate  # noqa: F401 - re-exported
from ..ops.grid_sample import affine_grid, grid_sample  # noqa: F401 - re-exported
from ..ops.pixel_shuffle import channel_shuffle, pixel_shuffle, pixel_unshuffle  # noqa: F401 - re-exported
from ..ops.layer_norm import layer_norm  # noqa: F401 - re-exported
from ..ops.rms_norm import rms_norm  # noqa: F401 - re-exported
from ..ops.autocast_policies import wrap as _autocast_wrap
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


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """Rows of ``weight`` ``(V, D)`` at integer ids ``input`` ``(*)`` → ``(*, D)`` (see ``ops.embedding``);
    ``max_norm`` renormalizes the looked-up rows of ``weight`` in place first, as PyTorch.

    Raises:
        IndexError: an id outside ``[0, V)``, naming the id and ``V``.
    """
    return ops.embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    """Deprecated in PyTorch (and warns, as there): ``interpolate(input, size, scale_factor, mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return ops.interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    """Deprecated in PyTorch (and warns, as there): ``interpolate(..., mode='bilinear', align_corners=True)``
    of a 4-D input."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return ops.interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """``exp(x) / Σ exp(x)`` along ``dim`` (after casting to ``dtype`` if given); same shape."""
    return ops.softmax(input if dtype is None else input.to(dtype), dim)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """``x - logsumexp(x)`` along ``dim`` (after casting to ``dtype`` if given); same shape."""
    return ops.log_softmax(input if dtype is None else input.to(dtype), dim)


# under autocast, as PyTorch: float32 unless ``dtype=`` is given (then that dtype)
softmax, log_softmax = _autocast_wrap("softmax", softmax), _autocast_wrap("log_softmax", log_softmax)


# multi_head_attention_forward (nn/attention_functional.py) is set on this module by nn/__init__.py: it runs
# nn.MultiheadAttention's forward, and nn/attention.py imports this module.


def __getattr__(name):
    # A PyTorch name this package does not provide: say so, and where the list of what exists is.
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: minitorch_ln does not provide it "
                         "(the PyTorch names it covers, and what differs: docs/torch_compat.md)")
