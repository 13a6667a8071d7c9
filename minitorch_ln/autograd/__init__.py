"""Reverse-mode automatic differentiation: graph nodes, the backward engine, gradient checks.

(LayerNorm's term-by-term check and the Jacobian heat-maps that ``gradcheck`` adds to a failure are in
:mod:`minitorch_ln.diagnostics`.)
"""

from .anomaly import AnomalyError, detect_anomaly, explain_nonfinite, is_anomaly_enabled
from .engine import backward, grad
from .function import Function
from .check import gradcheck, gradgradcheck
from .check_precision import PrecisionReport, precision_report
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .jacobian import GradcheckError

__all__ = [
    "AnomalyError", "explain_nonfinite", "Function", "GradcheckError", "backward", "detect_anomaly", "enable_grad",
    "grad", "gradcheck", "gradgradcheck", "is_anomaly_enabled", "is_grad_enabled", "no_grad", "set_grad_enabled",
    "PrecisionReport", "precision_report",
]
