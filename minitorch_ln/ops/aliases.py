"""PyTorch's alternative names of ``torch.*`` ops (NumPy's spellings and long forms): ``torch.clip`` is
``torch.clamp``, ``torch.multiply`` is ``torch.mul``, ``torch.arccos`` is ``torch.acos``, ... Each name here
is the very same function as the op it names (``minitorch_ln.clip is minitorch_ln.clamp``), so it has the
op's arguments, dtypes, errors and gradient; the list is PyTorch 2.13's op database's ``aliases``.
"""

from __future__ import annotations

from .binary import atan2
from .comparison import ge, gt, le, lt, ne
from .elementwise import abs, mul, neg, sub
from .joining import cat
from .selection import clamp
from .unary import trunc
from .unary_trig import acos, acosh, asin, asinh, atan, atanh

__all__ = ["absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "clip", "concat",
           "concatenate", "fix", "greater", "greater_equal", "less", "less_equal", "multiply", "negative",
           "not_equal", "subtract"]

absolute = abs
arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh = acos, acosh, asin, asinh, atan, atan2, atanh
clip = clamp
concat = concatenate = cat
fix = trunc
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
multiply, negative, subtract = mul, neg, sub
