"""``RNN`` (tanh or relu), ``LSTM`` and ``GRU``, multi-layer and bidirectional, as PyTorch's.

Parameters per layer ``k`` and direction (suffix ``_reverse`` for the backward one), in PyTorch's
order: ``weight_ih_l{k}`` (G·H, in), ``weight_hh_l{k}`` (G·H, H_out), ``bias_ih_l{k}``, ``bias_hh_l{k}``
(G·H,), and for an LSTM with ``proj_size > 0`` ``weight_hr_l{k}`` (P, H); G = 1, 4 (i, f, g, o), 3
(r, z, n). Init: uniform on ±1/sqrt(hidden_size), drawn in that order.

A padded input is run as a packed one whose batch sizes are all B: one loop over time steps
(:func:`_run_direction`) serves both. Each step is a function of :mod:`.rnn_cells`.
"""

from __future__ import annotations

import math
import numbers
import warnings

from ..ops.creation import empty, zeros
from ..ops.index_ops import index_select
from ..ops.joining import cat, stack
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .rnn_cells import (
    GATES,
    STEPS,
    GRUCell,
    LSTMCell,
    RNNCell,
    RNNCellBase,
    RNNShapeError,
    check_size,
)
from .utils_rnn import PackedSequence

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase", "RNNShapeError"]


def _run_direction(step, xw, batch_sizes, state0, w_hh, b_hh, w_hr, reverse):
    """Run ``step`` over packed time steps. ``xw`` (N, G·H) the projected input, ``batch_sizes`` a
    non-increasing list summing to N, ``state0`` a tuple of (B, ·) → (outputs (N, H_out), final states).

    Going forward, the rows past ``batch_sizes[t]`` end at step t-1 and are kept as final; going
    backward, rows join (from ``state0``) at the step where their sequence ends.
    """
    offsets = [0]
    for bs in batch_sizes:
        offsets.append(offsets[-1] + bs)
    order = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    outputs = [None] * len(batch_sizes)
    if reverse:
        state = tuple(s[:batch_sizes[-1]] for s in state0) if batch_sizes else state0
    else:
        state, finished = state0, []
    for t in order:
        bs = batch_sizes[t]
        if reverse and bs > state[0].shape[0]:
            state = tuple(cat([s, s0[s.shape[0]:bs]], 0) for s, s0 in zip(state, state0))
        elif not reverse and bs < state[0].shape[0]:
            finished.append(tuple(s[bs:] for s in state))
            state = tuple(s[:bs] for s in state)
        state = step(xw[offsets[t]:offsets[t + 1]], state, w_hh, b_hh, w_hr)
        outputs[t] = state[0]
    if not reverse and finished:
        # finished pieces were cut from the end: the latest holds the lowest rows
        state = tuple(cat([state[k]] + [f[k] for f in reversed(finished)], 0) for k in range(len(state)))
    out = cat(outputs, 0) if outputs else xw[:, :0]
    return out, state


class RNNBase(Module):
    """The shared multi-layer, bidirectional recurrence; see :class:`RNN`, :class:`LSTM`, :class:`GRU`.

    Raises:
        ValueError: a size that is not a positive int, ``dropout`` outside [0, 1], ``proj_size`` for a
            mode other than LSTM or not below ``hidden_size``.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = check_size("input_size", input_size, positive=False)
        self.hidden_size = check_size("hidden_size", hidden_size)
        self.num_layers = check_size("num_layers", num_layers)
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        proj_size = check_size("proj_size", proj_size, positive=False)
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_in = input_size if layer == 0 else real_hidden * num_directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_in)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(empty(*shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """Per layer and direction, the list of its parameters (PyTorch's ``all_weights``)."""
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        flat = self._flat_weights
        return [flat[i:i + per] for i in range(0, len(flat), per)]

    def flatten_parameters(self) -> None:
        """A no-op kept for PyTorch scripts (cuDNN's packed weight buffer does not exist here)."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        for name, default in (("num_layers", 1), ("bias", True), ("batch_first", False), ("dropout", 0.0),
                              ("bidirectional", False)):
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s  # PyTorch's RNN does not show its nonlinearity

    def _layer_params(self, layer: int, direction: int):
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        get = (lambda name: getattr(self, name + suffix, None))
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def _check_state(self, s, expected, what):
        if tuple(s.shape) != expected:
            raise RNNShapeError(f"{type(self).__name__}: Expected {what} size {list(expected)}, got {list(s.shape)}")

    def forward(self, input, hx=None):
        """See the class docstring of :class:`RNN`, :class:`LSTM` or :class:`GRU`."""
        name, lstm = type(self).__name__, self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
            if data.dim() != 2:
                raise RNNShapeError(f"{name}: packed input data must be 2-D (sum of lengths, input_size), "
                                    f"got {data.dim()}D")
            batch, batched = batch_sizes[0] if batch_sizes else 0, True
        else:
            if input.dim() not in (2, 3):
                raise RNNShapeError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
            batched = input.dim() == 3
            x = input if batched else input.unsqueeze(0 if self.batch_first else 1)
            if self.batch_first:
                x = x.transpose(0, 1)  # (T, B, I)
            steps, batch = x.shape[0], x.shape[1]
            data, batch_sizes = x.reshape(steps * batch, x.shape[2]), [batch] * steps  # (T·B, I)
        if data.shape[-1] != self.input_size:
            raise RNNShapeError(f"{name}: input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                                f"got {data.shape[-1]}")
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        h_shape = (self.num_layers * num_directions, batch, real_hidden)
        c_shape = (self.num_layers * num_directions, batch, self.hidden_size)
        if hx is None:
            states = [zeros(*h_shape, dtype=data.dtype, device=data.device)]
            if lstm:
                states.append(zeros(*c_shape, dtype=data.dtype, device=data.device))
        else:
            states = list(hx) if lstm else [hx]
            if lstm and len(states) != 2:
                raise RNNShapeError(f"{name}: Expected hx to be a tuple (h_0, c_0), got {len(states)} tensors")
            for k, s in enumerate(states):
                want = 3 if batched else 2
                if s.dim() != want:
                    raise RNNShapeError(f"{name}: For {'batched 3-D' if batched else 'unbatched 2-D'} input, "
                                        f"hx should also be {want}-D but got "
                                        f"{s.dim()}-D tensor")
                if not batched:
                    states[k] = s.unsqueeze(1)
            if packed and sorted_indices is not None:
                states = [index_select(s, 1, sorted_indices) for s in states]
            self._check_state(states[0], h_shape, "hidden")
            if lstm:
                self._check_state(states[1], c_shape, "cell")
        step = STEPS[self.mode]
        layer_in, finals = data, []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(layer, direction)
                k = layer * num_directions + direction
                out, final = _run_direction(step, F.linear(layer_in, w_ih, b_ih), batch_sizes,
                                            tuple(s[k] for s in states), w_hh, b_hh, w_hr, direction == 1)
                outs.append(out)
                finals.append(final)
            layer_in = outs[0] if num_directions == 1 else cat(outs, -1)  # (N, D·H_out)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        h_n = [stack([f[k] for f in finals], 0) for k in range(len(states))]  # (D·L, B, H_out), (D·L, B, H)
        if packed:
            output = PackedSequence(layer_in, batch_sizes_t, sorted_indices, unsorted_indices)
            if unsorted_indices is not None:
                h_n = [index_select(s, 1, unsorted_indices) for s in h_n]
        else:
            output = layer_in.reshape(len(batch_sizes), batch, layer_in.shape[-1])  # (T, B, D·H_out)
            if self.batch_first:
                output = output.transpose(0, 1)
            if not batched:
                output = output.squeeze(0 if self.batch_first else 1)
                h_n = [s.squeeze(1) for s in h_n]
        return output, (tuple(h_n) if lstm else h_n[0])


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh)`` (``nonlinearity="relu"``: relu).

    ``forward(input, hx=None)``: input (T, B, I) — (B, T, I) with ``batch_first`` —, (T, I) unbatched, or a
    :class:`PackedSequence`; hx (D·num_layers, B, H) or (D·num_layers, H), zeros when None →
    ``(output (T, B, D·H), h_n (D·num_layers, B, H))``, D = 2 if bidirectional. float32 unless ``dtype``.

    Raises:
        RNNShapeError (a RuntimeError and ValueError): input of the wrong rank or feature size, hx of the wrong shape.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory, gates ``i, f, g, o``: ``c_t = σ(f) c_{t-1} + σ(i) tanh(g)``,
    ``h_t = σ(o) tanh(c_t)`` (times ``W_hrᵀ`` when ``proj_size > 0``).

    ``forward(input, hx=None)``: input as :class:`RNN`; hx ``(h_0, c_0)`` with h_0 (D·num_layers, B, H_out),
    c_0 (D·num_layers, B, H), H_out = proj_size or H → ``(output (T, B, D·H_out), (h_n, c_n))``.

    Raises:
        RNNShapeError (a RuntimeError and ValueError): input of the wrong rank or feature size, states of
            the wrong shape.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit, gates ``r, z, n``: ``n = tanh(x W_inᵀ + b_in + r ⊙ (h W_hnᵀ + b_hn))``,
    ``h_t = (1 - z) n + z h_{t-1}``. Shapes and errors as :class:`RNN`."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)
