"""The errors minitorch_ln raises where PyTorch raises ``RuntimeError``, so that PyTorch code catches them.

PyTorch reports most bad input (shapes that do not broadcast, a bad ``reshape``, a wrong dtype, an
index out of range) as ``RuntimeError``; Python code would use ``ValueError``, ``TypeError`` or
``IndexError``. Each error here is both, so ``except RuntimeError`` (PyTorch code) and
``except ValueError`` (Python code) catch it alike. Messages name what was expected and what came.
"""

from __future__ import annotations

__all__ = ["ShapeError", "DtypeError", "OptionError", "IndexOutOfRangeError", "IntegerDivisionByZero"]


class ShapeError(RuntimeError, ValueError):
    """Shapes that do not fit: operands that do not broadcast, a bad ``reshape``/``view``/``permute``,
    matmul's inner sizes, a gradient of the wrong shape."""


class DtypeError(RuntimeError, TypeError):
    """A dtype the op does not take, or operands whose dtypes must match and do not."""


class OptionError(RuntimeError, ValueError):
    """An option string or number outside what the op accepts (``rounding_mode``, ``interpolation``, ...)."""


class IndexOutOfRangeError(IndexError, RuntimeError):
    """An index or a dim outside the tensor's range."""


class IntegerDivisionByZero(ZeroDivisionError, RuntimeError):
    """An integer division (``//``, ``%``, ``fmod``) by zero, which has no result (PyTorch raises too)."""
