"""Packed sequences, as ``torch.nn.utils.rnn``: ``PackedSequence``, ``pack_padded_sequence``,
``pad_packed_sequence``, ``pack_sequence``, ``pad_sequence``.

A batch of sequences of unequal lengths, sorted longest first, is stored time step by time step:
``data`` (sum of lengths, *) holds step 0 of every sequence, then step 1 of those at least 2 long, ...;
``batch_sizes`` (int64, on the CPU) says how many at each step. Everything is built from ``cat``,
slicing and ``index_select``, so gradients flow back to the padded input.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from ..ops.creation import full
from ..ops.index_ops import index_select
from ..ops.joining import cat, stack
from ..tensor import Tensor, tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence", "unpack_sequence", "unpad_sequence"]


def _int64(values, device=None) -> Tensor:
    return tensor(np.asarray(values, dtype=np.int64), device=device)


def invert_permutation(permutation):
    """The inverse of an int64 permutation (None stays None)."""
    if permutation is None:
        return None
    p = np.asarray(permutation.tolist(), dtype=np.int64)
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size)
    return _int64(inv, device=permutation.device)


class _PackedSequenceFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceFields):
    """``(data, batch_sizes, sorted_indices, unsorted_indices)``: see the module docstring.

    ``sorted_indices[i]`` is the original batch index of the i-th longest sequence (None when the batch
    came sorted); ``unsorted_indices`` its inverse (computed when only ``sorted_indices`` is given).
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data):
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self._with_data(self.data.double())

    def float(self):
        return self._with_data(self.data.float())

    @property
    def is_cuda(self) -> bool:
        return self.data.device != "cpu" and str(self.data.device).startswith("cuda")

    def is_pinned(self) -> bool:
        return False


def _lengths_list(lengths) -> list:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise ValueError(f"lengths must be a 1D tensor or list of ints, got a {lengths.dim()}D tensor")
        lengths = lengths.tolist()
    return [int(n) for n in lengths]


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``input`` (T, B, *) — (B, T, *) with ``batch_first`` — of sequences of the given
    ``lengths`` (list or 1-D int tensor, B entries, each in 1..T).

    With ``enforce_sorted=True`` the lengths must be non-increasing; otherwise the batch is sorted here and
    the permutation kept in the result (``sorted_indices``).

    Raises:
        RuntimeError: lengths unsorted with ``enforce_sorted=True``; a length ≤ 0 or above T; a count of
            lengths other than B.
    """
    lengths = _lengths_list(lengths)
    if batch_first:
        input = input.transpose(0, 1)  # (T, B, *)
    if len(lengths) != input.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={input.shape[1]})")
    sorted_indices = None
    if enforce_sorted:
        if any(a < b for a, b in itertools.pairwise(lengths)):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # stable, as torch.sort(descending)
        lengths = [lengths[i] for i in order]
        sorted_indices = _int64(order, device=input.device)
        input = index_select(input, 1, sorted_indices)
    if lengths and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if lengths and lengths[0] > input.shape[0]:
        raise RuntimeError(f"Length {lengths[0]} is larger than the sequence length {input.shape[0]} of the input")
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(lengths[0] if lengths else 0)]
    data = cat([input[t, :bs] for t, bs in enumerate(batch_sizes)], 0)  # (sum(lengths), *)
    return PackedSequence(data, _int64(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None):
    """Inverse of :func:`pack_padded_sequence`: → ``(padded (T, B, *), lengths)``, padded with
    ``padding_value`` up to ``total_length`` steps (default the longest), batch in the original order;
    ``lengths`` int64 on the CPU. (B, T, *) with ``batch_first``.

    Raises:
        ValueError: ``total_length`` below the longest sequence.
    """
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    max_len, batch = len(batch_sizes), (batch_sizes[0] if batch_sizes else 0)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_len}")
    else:
        total_length = max_len
    feature = tuple(data.shape[1:])
    steps, offset = [], 0
    for bs in batch_sizes:
        piece = data[offset:offset + bs]  # (bs, *)
        offset += bs
        if bs < batch:
            piece = cat([piece, full((batch - bs, *feature), padding_value, dtype=data.dtype, device=data.device)])
        steps.append(piece)
    steps += [full((batch, *feature), padding_value, dtype=data.dtype, device=data.device)] * (total_length - max_len)
    padded = stack(steps, 0) if steps else full((0, batch, *feature), padding_value, dtype=data.dtype,
                                                 device=data.device)  # (T, B, *)
    lengths = [sum(1 for b in batch_sizes if b > i) for i in range(batch)]
    if sequence.unsorted_indices is not None:
        padded = index_select(padded, 1, sequence.unsorted_indices)
        lengths = [lengths[i] for i in sequence.unsorted_indices.tolist()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, _int64(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"):
    """Stack tensors of shapes (L_i, *) into (L_max, B, *) — (B, L_max, *) with ``batch_first`` —,
    padded with ``padding_value`` on ``padding_side`` ("right" or "left").

    Raises:
        ValueError: an unknown ``padding_side``; RuntimeError: trailing shapes that differ.
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences:
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: every sequence must have the trailing shape {list(trailing)}, "
                               f"got {list(s.shape)}")
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        fill = full((max_len - s.shape[0], *trailing), padding_value, dtype=s.dtype, device=s.device)
        padded.append(cat([s, fill] if padding_side == "right" else [fill, s], 0))  # (L_max, *)
    return stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors (L_i, *) (longest first unless ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of tensors (L_i, *) a :class:`PackedSequence` holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return [padded[i, :n] for i, n in enumerate(lengths.tolist())]


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """The list of tensors (L_i, *) in a padded batch with the given lengths."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths_list(lengths))]
