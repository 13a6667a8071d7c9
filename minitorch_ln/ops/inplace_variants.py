"""The in-place forms of the elementwise and triangular ops: ``x.sin_()``, ``x.clamp_min_(0)``,
``x.lt_(y)``, ``x.tril_()``, ... — PyTorch's ``Tensor.<op>_`` for every ``Tensor.<op>`` listed in
:data:`INPLACE_OF`.

Each runs the out-of-place method on the tensor's old value and writes the result back through
``Tensor._inplace`` (``inplace.py``), so all of the in-place rules hold in one place: the result's dtype
must be castable to the tensor's (``int_tensor.sin_()`` raises "result type Float can't be cast to the
desired output type Long", as in PyTorch; ``float_tensor.lt_(y)`` stores 1.0/0.0), the shape must not
change (``x.add_(y)`` where ``y`` broadcasts ``x`` to a larger shape raises), the version counter is
bumped, a leaf that requires grad is refused in grad mode, and on a view the base's history is rewritten.
The gradient is the out-of-place op's (``x.sin_()`` records ``SinBackward0``, as PyTorch).
"""

from __future__ import annotations

__all__: list = []  # Tensor methods only

# Tensor.<name>_ is Tensor.<name> run in place (PyTorch 2.13 has each of these ``name_`` methods).
INPLACE_OF = tuple("""
abs absolute acos arccos acosh arccosh asin arcsin asinh arcsinh atan arctan atan2 arctan2 atanh arctanh ceil
clamp_max clamp_min clip copysign cos cosh cumsum cumprod true_divide divide multiply subtract exp exp2 expm1 eq ne
ge gt le lt greater greater_equal less less_equal not_equal fmod frac fix floor i0 log log10 log1p log2 logical_not
logical_and logical_or logical_xor heaviside mvlgamma neg negative round sin sinc sinh sign sgn tan tanh trunc
nan_to_num reciprocal rsqrt sqrt square lerp polygamma hypot xlogy tril triu sigmoid digamma erf erfc erfinv lgamma
logit addmm baddbmm relu bitwise_not float_power
""".split())  # noqa: SIM905 - a list read like prose


def _make(name: str):
    what = name + "_"

    def method(self, *args, **kwargs):
        return self._inplace(what, lambda old: getattr(old, name)(*args, **kwargs), *args, *kwargs.values())

    method.__name__ = method.__qualname__ = what
    method.__doc__ = (f"``Tensor.{what}``: :meth:`Tensor.{name}` computed from this tensor's values and written "
                      "back into it (in place; returns this tensor). See ``ops/inplace_variants.py``.")
    return method


def _float_power_(self, exponent):
    """``Tensor.float_power_``: in place only on a float64 tensor (its result is float64), as PyTorch."""
    if str(self.dtype) != "float64":
        raise RuntimeError(f"float_power_: the base given to float_power_ has dtype {self.dtype} but the operation's "
                           "result requires dtype float64 (Double); convert with .double() first")
    return self._inplace("float_power_", lambda old: old.float_power(exponent), exponent)


def inplace_methods() -> dict:
    """``{"sin_": method, ...}`` for :data:`INPLACE_OF`, for ``ops/methods.py``'s table."""
    table = {name + "_": _make(name) for name in INPLACE_OF}
    table["float_power_"] = _float_power_
    return table
