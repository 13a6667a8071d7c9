"""The errors an ONNX export raises (``torch.onnx.errors`` names)."""

from __future__ import annotations

__all__ = ["OnnxExporterError", "UnsupportedOperatorError"]


class OnnxExporterError(RuntimeError):
    """An export that cannot be done as asked: what was expected and what came, in the message."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op with no ONNX mapping; the message names the op and the module it ran in."""


ExportError = OnnxExporterError
