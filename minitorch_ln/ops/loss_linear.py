"""``linear_cross_entropy`` (``torch.nn.functional``): ``cross_entropy(linear(input, W, b), target)`` in one call.

PyTorch can run it in batch chunks (``options``) so that the ``(N, classes)`` logits never exist whole;
the value and gradients are those of the composition, which is what runs here (the chunking
``options`` are accepted and change nothing). Argument checks and messages are PyTorch's.
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from .loss import cross_entropy
from .matmul import linear

__all__ = ["linear_cross_entropy"]


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,  # noqa: A002
                         reduction: str = "mean", ignore_index=None, label_smoothing: float = 0.0,
                         options=None) -> Tensor:
    """``input (N, in)`` or ``(in,)``, ``linear_weight (C, *K, in)``, ``linear_bias (C, *K)`` → the
    cross-entropy of the logits ``(N, C, *K)`` with ``target`` (class indices ``(N, *K)`` or
    probabilities of the logits' shape), as :func:`~minitorch_ln.ops.loss.cross_entropy` with
    ``weight``, ``reduction``, ``ignore_index`` (default -100) and ``label_smoothing``.

    Raises RuntimeError (PyTorch's messages) for an input that is not 1-D or 2-D, a weight of fewer
    than 2 dims or another ``in_features``, a bias of the wrong shape, ``K`` dims with an unbatched
    input, or ``ignore_index`` with probability targets.
    """
    for name, t in (("input", input), ("linear_weight", linear_weight), ("target", target)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linear_cross_entropy: {name} must be a Tensor, got {type(t).__name__}")
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    rows = math.prod(out_features) * num_classes
    w2 = linear_weight.reshape(rows, in_features)
    b2 = None if linear_bias is None else linear_bias.reshape(rows)
    logits = linear(input, w2, b2).reshape(logits_shape)  # (*N, C, *K)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)
