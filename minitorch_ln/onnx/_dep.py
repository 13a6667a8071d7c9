"""The optional ``onnx`` package, imported when an export runs (never at ``import minitorch_ln``)."""

from __future__ import annotations


def require_onnx():
    """The ``onnx`` module; ImportError saying how to install it when it is missing."""
    try:
        import onnx
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("ONNX export needs the onnx package: pip install 'minitorch-ln[onnx]' "
                          "(or pip install onnx onnxruntime)") from None
    return onnx
