"""One recurrent step of each kind (Elman RNN, LSTM, GRU) and the cell modules ``RNNCell``, ``LSTMCell``,
``GRUCell``, as PyTorch's.

The math is composed from Tensor ops (``F.linear``, ``sigmoid``, ``tanh``, ``chunk``), so gradients come
from the engine. Every step takes the input already projected, ``xw = x W_ihᵀ + b_ih`` (one matmul over
all time steps in :mod:`.rnn`), and the state tuple; gate order and formulas are PyTorch's
(https://pytorch.org/docs/stable/generated/torch.nn.LSTM.html, ``GRU.html``, ``RNN.html``).
"""

from __future__ import annotations

import math
import numbers

from ..ops.activation import relu, sigmoid, tanh
from ..ops.creation import empty, zeros
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class RNNShapeError(RuntimeError, ValueError):
    """A recurrent module's input or state of the wrong size (PyTorch raises RuntimeError or ValueError)."""


# ------------------------------------------------------------------------------------------ steps
# xw: (B, G·H) the projected input, h: (B, H_out), c: (B, H). Each returns the new state tuple.

def rnn_tanh_step(xw, state, w_hh, b_hh, w_hr=None):
    """``h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)``."""
    return (tanh(xw + F.linear(state[0], w_hh, b_hh)),)


def rnn_relu_step(xw, state, w_hh, b_hh, w_hr=None):
    """``h' = relu(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)``."""
    return (relu(xw + F.linear(state[0], w_hh, b_hh)),)


def lstm_step(xw, state, w_hh, b_hh, w_hr=None):
    """Gates ``i, f, g, o`` (in that order along the gate axis): ``c' = σ(f) c + σ(i) tanh(g)``,
    ``h' = σ(o) tanh(c')``, then ``h' W_hrᵀ`` when projecting (``proj_size > 0``)."""
    h, c = state
    gates = xw + F.linear(h, w_hh, b_hh)  # (B, 4H)
    i, f, g, o = gates.chunk(4, -1)
    c_new = sigmoid(f) * c + sigmoid(i) * tanh(g)  # (B, H)
    h_new = sigmoid(o) * tanh(c_new)  # (B, H)
    if w_hr is not None:
        h_new = F.linear(h_new, w_hr)  # (B, P)
    return h_new, c_new


def gru_step(xw, state, w_hh, b_hh, w_hr=None):
    """Gates ``r, z, n``: ``r = σ(x_r + h_r)``, ``z = σ(x_z + h_z)``, ``n = tanh(x_n + r ⊙ h_n)``,
    ``h' = (1 - z) n + z h`` (``h_n`` includes ``b_hn``, as PyTorch and cuDNN)."""
    h = state[0]
    xr, xz, xn = xw.chunk(3, -1)
    hr, hz, hn = F.linear(h, w_hh, b_hh).chunk(3, -1)  # (B, H) each
    r = sigmoid(xr + hr)
    z = sigmoid(xz + hz)
    n = tanh(xn + r * hn)
    return ((1 - z) * n + z * h,)


STEPS = {"RNN_TANH": rnn_tanh_step, "RNN_RELU": rnn_relu_step, "LSTM": lstm_step, "GRU": gru_step}
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def check_size(name: str, value, positive: bool = True) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < (1 if positive else 0):
        raise ValueError(f"{name} must be {'greater than zero' if positive else 'a non-negative int'}, got {value!r}")
    return int(value)


# ------------------------------------------------------------------------------------------ cells

class RNNCellBase(Module):
    """Parameters ``weight_ih (G·H, input_size)``, ``weight_hh (G·H, H)``, ``bias_ih``, ``bias_hh (G·H,)``,
    initialised uniform on ±1/sqrt(hidden_size) in that order (PyTorch's)."""

    _mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.input_size = check_size("input_size", input_size, positive=False)
        self.hidden_size = check_size("hidden_size", hidden_size)
        self.bias = bias
        gates = GATES[self._mode] * hidden_size
        self.weight_ih = Parameter(empty(gates, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(gates, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(gates, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(gates, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _run(self, input, states):
        """``input`` (B, I) or (I,), ``states`` a tuple of (B, H) or (H,) or None → the new state tuple."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise RNNShapeError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RNNShapeError(f"{name}: input has inconsistent input_size: got {input.shape[-1]} "
                                f"expected {self.input_size}")
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)  # (B, I)
        if states is None:
            states = tuple(zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
                           for _ in range(2 if self._mode == "LSTM" else 1))
        else:
            expected = (x.shape[0], self.hidden_size) if batched else (self.hidden_size,)
            for k, s in enumerate(states):
                if tuple(s.shape) != expected:
                    raise RNNShapeError(f"{name}: hidden{k} has inconsistent size: got {list(s.shape)}, "
                                        f"expected {list(expected)}")
            states = states if batched else tuple(s.unsqueeze(0) for s in states)
        out = STEPS[self._mode](F.linear(x, self.weight_ih, self.bias_ih), states, self.weight_hh, self.bias_hh)
        return out if batched else tuple(s.squeeze(0) for s in out)


class RNNCell(RNNCellBase):
    """``h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)`` (or relu): input (B, I) or (I,), hx (B, H) or (H,)
    (zeros when None) → h' of hx's shape. Raises RNNShapeError (RuntimeError) for sizes that do not fit."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, device, dtype)  # one gate either way
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"

    def forward(self, input, hx=None):
        return self._run(input, None if hx is None else (hx,))[0]


class LSTMCell(RNNCellBase):
    """One LSTM step (gates i, f, g, o): input (B, I) or (I,), hx ``(h, c)`` each (B, H) or (H,), zeros when
    None → ``(h', c')``. Raises RNNShapeError (RuntimeError) for sizes that do not fit."""

    _mode = "LSTM"

    def forward(self, input, hx=None):
        return self._run(input, None if hx is None else tuple(hx))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n): input (B, I) or (I,), hx (B, H) or (H,) (zeros when None) → h'.
    Raises RNNShapeError (RuntimeError) for sizes that do not fit."""

    _mode = "GRU"

    def forward(self, input, hx=None):
        return self._run(input, None if hx is None else (hx,))[0]
