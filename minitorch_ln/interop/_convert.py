"""Arrays between PyTorch and minitorch_ln (PyTorch imported on first use: it is never a dependency)."""

from __future__ import annotations


import numpy as np

from .. import backend
from ..tensor import Tensor

__all__: list = []  # private helpers


def _torch():
    try:
        import torch  # noqa: PLC0415 - PyTorch is optional, imported on first use
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "minitorch_ln.interop.torch needs PyTorch, which is not installed; install the CPU build, e.g. "
            "`pip install torch --index-url https://download.pytorch.org/whl/cpu`"
        ) from exc
    return torch


def _torch_to_numpy(t) -> np.ndarray:
    t = t.detach().cpu()
    if str(t.dtype) == "torch.bfloat16":  # NumPy has no bfloat16; float32 holds every value exactly
        t = t.float()
    return t.numpy()


def _to_numpy(value) -> np.ndarray:
    if isinstance(value, Tensor):
        return backend.to_device(value.array, "cpu")
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        return _torch_to_numpy(value)
    return backend.to_device(value, "cpu") if hasattr(value, "shape") else np.asarray(value)
