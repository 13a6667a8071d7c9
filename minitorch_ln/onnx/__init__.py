"""``minitorch_ln.onnx`` (``torch.onnx`` under the alias): importable, so scripts that import it run.

Exporting a model to ONNX is not written yet (issue 28): :func:`export` and :func:`dynamo_export`
raise NotImplementedError saying so. ``is_in_onnx_export()`` is False, as in PyTorch outside an
export, so models that branch on it take their ordinary path.
"""

from __future__ import annotations

__all__ = ["export", "dynamo_export", "is_in_onnx_export"]

_NOT_YET = ("ONNX export (torch.onnx.{}) is not implemented in minitorch_ln yet (issue 28: export from the "
            "recorded graph, checked in ONNX Runtime); export the model from PyTorch after moving its weights "
            "there (minitorch_ln.interop)")


def export(model, args=(), f=None, *a, **kwargs):
    """``torch.onnx.export``: raises NotImplementedError (not written yet, issue 28)."""
    raise NotImplementedError(_NOT_YET.format("export"))


def dynamo_export(model, *args, **kwargs):
    """``torch.onnx.dynamo_export``: raises NotImplementedError (not written yet, issue 28)."""
    raise NotImplementedError(_NOT_YET.format("dynamo_export"))


def is_in_onnx_export() -> bool:
    """False: nothing is ever being exported here."""
    return False
