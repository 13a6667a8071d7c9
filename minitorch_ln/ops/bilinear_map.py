"""``bilinear`` (``torch.nn.functional.bilinear``): ``y[..., o] = Σ_ij x1[..., i]·W[o, i, j]·x2[..., j] + b[o]``.

One GEMM and a contraction: ``t = x1 @ W`` laid out as ``(in1, out·in2)``, then ``y = Σ_j t[.., o, j]·x2[.., j]``;
both are differentiable Tensor ops, so every derivative follows.
"""

from __future__ import annotations

from ..tensor import Tensor
from ._util import require_float

__all__ = ["bilinear"]


def bilinear(input1, input2, weight, bias=None) -> Tensor:
    """``(*, in1)``, ``(*, in2)`` (same leading dims), ``weight (out, in1, in2)``, ``bias (out,)`` → ``(*, out)``.

    Float dtypes. Raises RuntimeError (PyTorch's messages) for inputs of different ranks or leading
    dims, feature sizes that do not match the weight, a weight that is not 3-D, or a bias of the
    wrong size; TypeError for a non-Tensor.
    """
    for name, t in (("input1", input1), ("input2", input2), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"bilinear(): {name} must be a Tensor, got {type(t).__name__}")
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    if input1.ndim == 0:
        raise RuntimeError("bilinear(): inputs must have at least one dimension (the features), got 0-d inputs")
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
                           f"{list(input2.shape[:-1])}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional (out, in1, in2), got {list(weight.shape)}")
    out, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {in2}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {list(bias.shape)} but expected "
                           f"[{out}]")
    require_float(input1, "bilinear")
    lead = tuple(input1.shape[:-1])
    x1, x2 = input1.reshape(-1, in1), input2.reshape(-1, in2)  # (B, in1), (B, in2)
    t = (x1 @ weight.permute(1, 0, 2).reshape(in1, out * in2)).reshape(-1, out, in2)  # (B, out, in2)
    y = (t * x2.unsqueeze(1)).sum(-1)  # (B, out)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + (out,))
