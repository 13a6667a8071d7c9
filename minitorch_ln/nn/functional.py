"""Stateless functions of the layers (imported as ``F``), mirroring ``torch.nn.functional``."""

from __future__ import annotations

from .. import ops
from ..ops import gelu, relu, sigmoid, tanh  # noqa: F401 - re-exported
from ..tensor import Tensor


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias``: ``(*, in)`` with ``(out, in)`` and ``(out,)`` → ``(*, out)``.

    Raises:
        ValueError: when ``input``'s last dimension is not ``weight``'s second.
    """
    if input.shape[-1:] != weight.shape[-1:]:
        raise ValueError(
            f"linear: input of shape {tuple(input.shape)} has {input.shape[-1] if input.ndim else 0} features, "
            f"but the weight of shape {tuple(weight.shape)} expects {weight.shape[-1]}"
        )
    out = ops.matmul(input, ops.transpose(weight, 0, 1))
    return out + bias if bias is not None else out
