"""The errors minitorch_ln raises where PyTorch raises ``RuntimeError``, so that PyTorch code catches them.

PyTorch reports most bad input (shapes that do not broadcast, a bad ``reshape``, a wrong dtype, an
index out of range) as ``RuntimeError``; Python code would use ``ValueError``, ``TypeError`` or
``IndexError``. Each error here is both, so ``except RuntimeError`` (PyTorch code) and
``except ValueError`` (Python code) catch it alike. Messages name what was expected and what came.
"""

from __future__ import annotations

__all__ = ["ShapeError", "DtypeError", "OptionError", "IndexOutOfRangeError", "IndexTypeError", "IntegerDivisionByZero",
           "ValueOverflowError"]


class ShapeError(RuntimeError, ValueError):
    """Shapes that do not fit: operands that do not broadcast, a bad ``reshape``/``view``/``permute``,
    matmul's inner sizes, a gradient of the wrong shape."""


class DtypeError(RuntimeError, TypeError):
    """A dtype the op does not take, or operands whose dtypes must match and do not."""


class OptionError(RuntimeError, ValueError):
    """An option string or number outside what the op accepts (``rounding_mode``, ``interpolation``, ...)."""


class IndexOutOfRangeError(IndexError, RuntimeError):
    """An index or a dim outside the tensor's range."""


class IndexTypeError(IndexError, TypeError):
    """An index of a type that cannot index (``t[1.0]``, ``t["a"]``): PyTorch's IndexError, Python's TypeError."""


class IntegerDivisionByZero(ZeroDivisionError, RuntimeError):
    """An integer division (``//``, ``%``, ``fmod``) by zero, which has no result (PyTorch raises too)."""


class ValueOverflowError(RuntimeError, OverflowError):
    """A number that the tensor's dtype cannot hold, written into it (``int8_tensor[0] = 300``, ``masked_fill`` of
    ``1e40`` into float32, a complex number with a nonzero imaginary part into a real tensor): PyTorch's
    RuntimeError ("value cannot be converted to type int8_t without overflow") and Python's OverflowError."""


class SerializationError(ValueError):
    """A checkpoint file that cannot be read (truncated, corrupt, refused) or an object that cannot be saved;
    public as ``minitorch_ln.serialization.SerializationError`` (it lives here so both file formats share it)."""


_PACKAGE_DIR = __file__.rsplit("/", 1)[0].rsplit("\\", 1)[0]


def warn_at_caller(message: str, category: type = UserWarning) -> None:
    """``warnings.warn`` attributed to the first frame outside minitorch_ln: the user's line,
    however many of the package's own calls (an nn Module, a wrapper) lie between."""
    import sys  # noqa: PLC0415
    import warnings  # noqa: PLC0415

    frame, level = sys._getframe(1), 2  # stacklevel 1 would be this function, 2 its caller
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
