"""Reverse-mode automatic differentiation: graph nodes, the backward engine, gradient checks."""

from .anomaly import AnomalyError, detect_anomaly, is_anomaly_enabled
from .engine import backward, grad
from .function import Function
from .check import GradcheckError, gradcheck, gradgradcheck
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled

__all__ = [
    "AnomalyError", "Function", "GradcheckError", "backward", "detect_anomaly", "enable_grad", "grad", "gradcheck",
    "gradgradcheck", "is_anomaly_enabled", "is_grad_enabled", "no_grad", "set_grad_enabled",
]

