"""ONNX mappings of elementwise math, activations and reductions: ``fn(graph, op) -> output name(s)``.

Each mapping reads the op's arguments as ``forward`` got them (see the Function's ``forward``) and
writes the same formula in ONNX operators, in the output's dtype (ONNX does not promote: operands
are cast to it first, Python scalars become constants of it).
"""

from __future__ import annotations

import math

import numpy as np

from ..ops import activation as act
from ..ops import activation_piecewise as pw
from ..ops import activation_threshold as th
from ..ops import (
    binary,
    division,
    elementwise,
    reduction,
    scan,
    selection,
    unary,
    unary_trig,
    variance,
)


def _unary(op_type):
    return lambda g, n: g.op(op_type, [n.x(0)])


def _binary(op_type):
    def fn(g, n):
        d = n.out_dtype()
        return g.op(op_type, [n.operand(0, d), n.operand(1, d)])
    return fn


def _c(n, value):
    """A scalar constant in the op's output dtype."""
    return n.g.const(np.asarray(value, dtype=n.out_dtype()))


def _pow_scalar(g, n):
    return g.op("Pow", [n.x(0), _c(n, n.arg(1))])


def _rsqrt(g, n):
    return g.op("Reciprocal", [g.op("Sqrt", [n.x(0)])])


def _log_base(base):
    return lambda g, n: g.op("Div", [g.op("Log", [n.x(0)]), _c(n, math.log(base))])


def _log1p(g, n):
    return g.op("Log", [g.op("Add", [n.x(0), _c(n, 1)])])


def _exp2(g, n):
    return g.op("Pow", [_c(n, 2), n.x(0)])


def _expm1(g, n):
    return g.op("Sub", [g.op("Exp", [n.x(0)]), _c(n, 1)])


def _square(g, n):
    x = n.x(0)
    return g.op("Mul", [x, x])


def _erfc(g, n):
    return g.op("Sub", [_c(n, 1), g.op("Erf", [n.x(0)])])


def _round(g, n):
    decimals = n.arg(1, 0)
    if decimals == 0:
        return g.op("Round", [n.x(0)])
    ten = _c(n, 10.0 ** decimals)
    return g.op("Div", [g.op("Round", [g.op("Mul", [n.x(0), ten])]), ten])


def _gelu(g, n):
    x, approximate = n.x(0), n.arg(1)
    if g.opset >= 20:
        return g.op("Gelu", [x], approximate=approximate)
    if approximate == "tanh":  # 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))  (Hendrycks & Gimpel 2016)
        inner = g.op("Mul", [_c(n, math.sqrt(2 / math.pi)),
                             g.op("Add", [x, g.op("Mul", [_c(n, 0.044715), g.op("Pow", [x, _c(n, 3)])])])])
        return g.op("Mul", [g.op("Mul", [_c(n, 0.5), x]), g.op("Add", [_c(n, 1), g.op("Tanh", [inner])])])
    # 0.5·x·(1 + erf(x/√2)): the exact form
    return g.op("Mul", [g.op("Mul", [_c(n, 0.5), x]),
                        g.op("Add", [_c(n, 1), g.op("Erf", [g.op("Div", [x, _c(n, math.sqrt(2))])])])])


def _softplus(g, n):
    x, beta, threshold = n.x(0), n.arg(1), n.arg(2)
    bx = g.op("Mul", [x, _c(n, beta)])
    soft = g.op("Div", [g.op("Softplus", [bx]), _c(n, beta)])
    return g.op("Where", [g.op("Greater", [bx, _c(n, threshold)]), x, soft])  # PyTorch: linear above threshold


def _mish(g, n):
    x = n.x(0)
    return g.op("Mul", [x, g.op("Tanh", [g.op("Softplus", [x])])])


def _log_sigmoid(g, n):
    return g.op("Neg", [g.op("Softplus", [g.op("Neg", [n.x(0)])])])


def _softsign(g, n):
    x = n.x(0)
    return g.op("Div", [x, g.op("Add", [_c(n, 1), g.op("Abs", [x])])])


def _tanhshrink(g, n):
    x = n.x(0)
    return g.op("Sub", [x, g.op("Tanh", [x])])


def _elu(g, n):  # scale·x for x > 0, else scale·alpha·(exp(x·input_scale) − 1)
    x, alpha, scale, input_scale = n.x(0), n.arg(1), n.arg(2), n.arg(3)
    neg = g.op("Mul", [_c(n, scale * alpha), g.op("Sub", [g.op("Exp", [g.op("Mul", [x, _c(n, input_scale)])]),
                                                        _c(n, 1)])])
    return g.op("Where", [g.op("Greater", [x, _c(n, 0)]), g.op("Mul", [x, _c(n, scale)]), neg])


def _leaky_relu(g, n):
    return g.op("LeakyRelu", [n.x(0)], alpha=float(n.arg(1)))


def _prelu(g, n):
    w = g.op("Reshape", [n.x(1), g.ints(n.arg(2))])
    return g.op("PRelu", [n.x(0), w])


def _hardtanh(g, n):
    return g.op("Clip", [n.x(0), _c(n, n.arg(1)), _c(n, n.arg(2))])


def _hardsigmoid(g, n):  # relu6(x + 3) / 6
    return g.op("HardSigmoid", [n.x(0)], alpha=1 / 6, beta=0.5)


def _silu(g, n):  # x * sigmoid(x); at -inf the limit 0 (-inf * 0 would be NaN), as the eager op
    x = n.x(0)
    y = g.op("Mul", [x, g.op("Sigmoid", [x])])
    return g.op("Where", [g.op("Equal", [x, _c(n, -np.inf)]), _c(n, -0.0), y])  # IsInf lacks float16 before 20


def _glu(g, n):
    dim = int(n.arg(1))
    half = n.arg(0).shape[dim] // 2
    a, b = g.op("Split", [n.x(0), g.ints([half, half])], n_out=2, axis=dim)
    return g.op("Mul", [a, g.op("Sigmoid", [b])])


def _threshold(g, n):
    x = n.x(0)
    return g.op("Where", [g.op("Greater", [x, _c(n, n.arg(1))]), x, _c(n, n.arg(2))])


def _shrink(g, n):
    lambd, soft = float(n.arg(1)), n.arg(2)
    return g.op("Shrink", [n.x(0)], lambd=lambd, bias=lambd if soft else 0.0)


def _maximum(g, n):
    d = n.out_dtype()
    return g.op("Max" if n.arg(2) else "Min", [n.operand(0, d), n.operand(1, d)])


def _clamp(g, n):
    d = n.out_dtype()
    x = n.x(0, d)
    if n.arg(1) is not None:
        x = g.op("Max", [x, n.operand(1, d)])
    if n.arg(2) is not None:
        x = g.op("Min", [x, n.operand(2, d)])
    return x


def _where(g, n):
    d = n.out_dtype()
    cond = n.operand(0, np.bool_)
    return g.op("Where", [cond, n.operand(1, d), n.operand(2, d)])


def _quotient(g, n):
    d = n.out_dtype()
    a, b, mode = n.operand(0, d), n.operand(1, d), n.arg(2)
    if np.dtype(d).kind in "iu":
        if mode == "trunc":
            return g.op("Div", [a, b])
        n.refuse("integer floor division is not mapped (ONNX's Div truncates)")
    q = g.op("Div", [a, b])
    if mode == "trunc":
        return g.op("Where", [g.op("Less", [q, _c(n, 0)]), g.op("Ceil", [q]), g.op("Floor", [q])])
    return g.op("Floor", [q])


def _fmod(g, n):
    d = n.out_dtype()
    return g.op("Mod", [n.operand(0, d), n.operand(1, d)], fmod=1 if np.dtype(d).kind == "f" else 0)


def _remainder(g, n):  # a − floor(a / b)·b: the sign of the divisor (Python's %)
    d = n.out_dtype()
    a, b = n.operand(0, d), n.operand(1, d)
    if np.dtype(d).kind in "iu":
        return g.op("Mod", [a, b], fmod=0)
    return g.op("Sub", [a, g.op("Mul", [g.op("Floor", [g.op("Div", [a, b])]), b])])


def _hypot(g, n):
    d = n.out_dtype()
    a, b = n.operand(0, d), n.operand(1, d)
    return g.op("Sqrt", [g.op("Add", [g.op("Mul", [a, a]), g.op("Mul", [b, b])])])


def _logaddexp(g, n):  # max + log(exp(a − max) + exp(b − max)), stable
    d = n.out_dtype()
    a, b = n.operand(0, d), n.operand(1, d)
    m = g.op("Max", [a, b])
    exp = (lambda t: g.op("Pow", [_c(n, 2), t])) if n.arg(2) else (lambda t: g.op("Exp", [t]))
    s = g.op("Add", [exp(g.op("Sub", [a, m])), exp(g.op("Sub", [b, m]))])
    log = g.op("Log", [s])
    return g.op("Add", [m, g.op("Div", [log, _c(n, math.log(2))]) if n.arg(2) else log])


def _lerp(g, n):  # start + weight·(end − start)
    d = n.out_dtype()
    s = n.operand(0, d)
    return g.op("Add", [s, g.op("Mul", [n.operand(2, d), g.op("Sub", [n.operand(1, d), s])])])


def _axes(n, i=1):
    axes = n.arg(i)
    ndim = n.arg(0).ndim
    if axes is None:
        return list(range(ndim))
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    return [int(a) % max(ndim, 1) for a in axes]


def _reduce(op_type):
    def fn(g, n):
        axes = _axes(n)
        if not axes:
            return g.op("Identity", [n.x(0)])
        return g.op(op_type, [n.x(0), g.ints(axes)], keepdims=int(bool(n.arg(2))))
    return fn


def _var(g, n):  # Σ(x − mean)² / dof, dof = N − correction (the Function gets the divisor); std: its Sqrt
    x, axes, keepdim = n.x(0), _axes(n), bool(n.arg(2))
    mean = g.op("ReduceMean", [x, g.ints(axes)], keepdims=1)
    sq = g.op("ReduceSumSquare", [g.op("Sub", [x, mean]), g.ints(axes)], keepdims=int(keepdim))
    v = g.op("Div", [sq, n.operand(3, n.out_dtype())])
    return g.op("Sqrt", [v]) if n.arg(4, False) else v


def _cumsum(g, n):
    return g.op("CumSum", [n.x(0), g.ints([int(n.arg(1))])], reverse=int(bool(n.arg(2))))


def _compare(op_type, negate=False):
    def fn(g, n):
        dt = np.result_type(n.arg(0).dtype, n.arg(1).dtype)
        if op_type in ("And", "Or"):
            dt = np.dtype(np.bool_)
        y = g.op(op_type, [n.x(0, dt), n.x(1, dt)])
        return g.op("Not", [y]) if negate else y
    return fn


# The comparisons have no Function; ops/comparison.py reports them to the trace under their names.
COMPARISONS = {"eq": _compare("Equal"), "ne": _compare("Equal", negate=True), "lt": _compare("Less"),
               "le": _compare("LessOrEqual"), "gt": _compare("Greater"), "ge": _compare("GreaterOrEqual"),
               "logical_and": _compare("And"), "logical_or": _compare("Or")}

MAPPINGS = {
    elementwise.Add: _binary("Add"), elementwise.Sub: _binary("Sub"), elementwise.Mul: _binary("Mul"),
    elementwise.Div: _binary("Div"), elementwise.Pow: _binary("Pow"), elementwise.PowScalar: _pow_scalar,
    elementwise.Neg: _unary("Neg"), elementwise.Exp: _unary("Exp"), elementwise.Log: _unary("Log"),
    elementwise.Sqrt: _unary("Sqrt"), elementwise.Rsqrt: _rsqrt, elementwise.Abs: _unary("Abs"),
    elementwise.Erf: _unary("Erf"),
    unary.Reciprocal: _unary("Reciprocal"), unary.Square: _square, unary.Floor: _unary("Floor"),
    unary.Ceil: _unary("Ceil"), unary.Round: _round, unary.Sign: _unary("Sign"),
    unary.Log2: _log_base(2), unary.Log10: _log_base(10), unary.Log1p: _log1p, unary.Exp2: _exp2,
    unary.Expm1: _expm1,
    unary_trig.Sin: _unary("Sin"), unary_trig.Cos: _unary("Cos"), unary_trig.Tan: _unary("Tan"),
    unary_trig.Asin: _unary("Asin"), unary_trig.Acos: _unary("Acos"), unary_trig.Atan: _unary("Atan"),
    unary_trig.Sinh: _unary("Sinh"), unary_trig.Cosh: _unary("Cosh"), unary_trig.Asinh: _unary("Asinh"),
    unary_trig.Acosh: _unary("Acosh"), unary_trig.Atanh: _unary("Atanh"), unary_trig.Erfc: _erfc,
    act.Tanh: _unary("Tanh"), act.Sigmoid: _unary("Sigmoid"), act.ReLU: _unary("Relu"), act.GELU: _gelu,
    act.Softplus: _softplus, act.Mish: _mish, act.LogSigmoid: _log_sigmoid, act.Softsign: _softsign,
    act.Tanhshrink: _tanhshrink, act.SiLU: _silu,
    pw.ELU: _elu, pw.LeakyReLU: _leaky_relu, pw.PReLU: _prelu, pw.Hardtanh: _hardtanh,
    pw.Hardsigmoid: _hardsigmoid, pw.Hardswish: _unary("HardSwish"), pw.GLU: _glu,
    th.Threshold: _threshold, th.Shrink: _shrink,
    selection.Maximum: _maximum, selection.Clamp: _clamp, selection.Where: _where,
    division._Quotient: _quotient, division.Fmod: _fmod, division.Remainder: _remainder,
    binary.Hypot: _hypot, binary.LogAddExp: _logaddexp, binary.Lerp: _lerp,
    reduction.Sum: _reduce("ReduceSum"), reduction.Mean: _reduce("ReduceMean"), reduction.AMax: _reduce("ReduceMax"),
    reduction.LogSumExp: _reduce("ReduceLogSumExp"), variance.Var: _var, scan.CumSum: _cumsum,
    **COMPARISONS,
}
