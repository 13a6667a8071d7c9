"""PyTorch interop: state dicts both ways, and a layer-by-layer comparison of two twin models.

PyTorch is optional: it is imported the first time one of these functions needs it, and a clear
ImportError says how to install it. Parameter names and layouts of minitorch_ln's layers are those
of ``torch.nn``, so a PyTorch ``state_dict()`` loads into the same-named module as it is.

``compare_modules(model, torch_model, *inputs)`` runs both models on the same inputs with a forward
hook on every named submodule, backpropagates the same random upstream gradient through both, and
reports for each submodule (in the order they ran) the largest difference of its outputs, of the
gradient of its outputs and of each of its own parameters' gradients, and where the two first part.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np


__all__ = ["state_dict_to_torch", "state_dict_from_torch", "load_torch_state_dict", "compare_modules",
           "ModuleComparison", "ModuleDiff"]
from ._convert import _to_numpy, _torch
from .compare import ModuleComparison, ModuleDiff, compare_modules  # noqa: F401 - re-exported


# ==================================================================================================
# State dicts
# ==================================================================================================


def state_dict_to_torch(state_dict) -> "OrderedDict[str, torch.Tensor]":  # noqa: F821
    """A minitorch_ln state dict (Tensors or arrays, any device) as CPU ``torch.Tensor``\\ s (copies).

    Dtypes are kept (float32 stays float32). Load the result with ``torch_module.load_state_dict``.
    """
    torch = _torch()
    return OrderedDict((k, torch.from_numpy(np.array(_to_numpy(v), copy=True))) for k, v in state_dict.items())


def state_dict_from_torch(torch_state_dict) -> "OrderedDict[str, np.ndarray]":
    """A PyTorch state dict (``module.state_dict()``) as NumPy arrays (copies; bfloat16 becomes float32)."""
    return OrderedDict((k, np.array(_to_numpy(v), copy=True)) for k, v in torch_state_dict.items())


def load_torch_state_dict(module, torch_module_or_state_dict, strict: bool = True):
    """Copy a PyTorch module's weights (or its ``state_dict()``) into the same-named minitorch_ln ``module``.

    Values are cast to the dtype of ``module``'s parameters and moved to their device.

    Raises:
        StateDictError: missing, unexpected or wrong-shaped keys, all listed (see ``Module.load_state_dict``).
    Returns:
        ``IncompatibleKeys(missing_keys, unexpected_keys)``.
    """
    sd = torch_module_or_state_dict
    if hasattr(sd, "state_dict") and callable(sd.state_dict):
        sd = sd.state_dict()
    return module.load_state_dict(state_dict_from_torch(sd), strict=strict)
