"""A token stream split into training and held-out parts, with batch sampling for language modelling.

Training batches are windows at random offsets, drawn from the CPU generator of
:mod:`minitorch_ln.backend` (so a run's batches depend on its seed, not on its device, and a
checkpoint that saves that generator's state resumes with the very next batch). Held-out batches
are windows at fixed, evenly spaced offsets, so every evaluation measures the same characters.
"""

from __future__ import annotations

import numpy as np

from .. import backend, random_torch
from ..tensor import Tensor

__all__ = ["TokenDataset", "DatasetError"]


class DatasetError(ValueError):
    """A split too short for the context length, a bad fraction or batch size."""


class TokenDataset:
    """Token ids split into a training part (the start) and a held-out part (the end).

    Args:
        ids: int token ids, shape ``(N,)``: any integer dtype, kept as it is (no copy), e.g. the
            ``uint16`` memmap of :func:`minitorch_ln.apps.corpus.load_text_ids`; batches are int64.
        val_fraction: the fraction of ``ids`` kept for held-out evaluation, in ``(0, 1)``; the
            held-out part is the *last* ``val_fraction`` of the text (a contiguous tail, so that no
            held-out window overlaps a training one).

    Raises:
        DatasetError: when ``val_fraction`` is outside ``(0, 1)`` or either part would be empty.
    """

    def __init__(self, ids, val_fraction: float = 0.1):
        ids = np.asarray(ids)
        if ids.ndim != 1 or ids.dtype.kind not in "iu":
            raise DatasetError(f"expected a 1-D integer array of token ids, got shape {ids.shape}, dtype {ids.dtype}")
        if not 0.0 < val_fraction < 1.0:
            raise DatasetError(f"val_fraction must be in (0, 1), got {val_fraction}")
        n_val = int(round(len(ids) * val_fraction))
        if n_val < 1 or len(ids) - n_val < 1:
            raise DatasetError(f"{len(ids)} tokens are too few to split with val_fraction={val_fraction}")
        self.splits = {"train": ids[: len(ids) - n_val], "val": ids[len(ids) - n_val:]}  # (N_train,), (N_val,)

    def __len__(self) -> int:
        return sum(len(v) for v in self.splits.values())

    def _split(self, split: str, block_size: int) -> np.ndarray:
        if split not in self.splits:
            raise DatasetError(f"unknown split {split!r}: expected 'train' or 'val'")
        data = self.splits[split]
        if block_size < 1:
            raise DatasetError(f"the context length must be at least 1, got {block_size}")
        if len(data) < block_size + 1:
            name = "training" if split == "train" else "held-out"
            raise DatasetError(
                f"the context length {block_size} is too long for this corpus: the {name} split has only "
                f"{len(data)} tokens and a window needs {block_size + 1} (context + next token); use a "
                f"shorter context (--block-size) or a longer text"
            )
        return data

    def check_block_size(self, block_size: int) -> None:
        """Raise :class:`DatasetError` unless both splits hold a window of ``block_size + 1`` tokens."""
        self._split("train", block_size)
        self._split("val", block_size)

    @staticmethod
    def _windows(data, starts, block_size, device):
        offsets = starts[:, None] + np.arange(block_size + 1)[None, :]  # (B, T+1)
        windows = data[offsets]  # (B, T+1), the ids' dtype
        x = Tensor(windows[:, :-1].astype(np.int64), device=device)  # (B, T), contiguous
        y = Tensor(windows[:, 1:].astype(np.int64), device=device)  # (B, T)
        return x, y

    def get_batch(self, split: str, batch_size: int, block_size: int, device=None):
        """A random batch: inputs and next-token targets, int64 Tensors of shape ``(B, T)``.

        ``y[b, t] == x[b, t + 1]``; offsets are uniform over the split, drawn from
        ``backend.generator("cpu")`` as ``torch.randint`` draws them.

        Raises:
            DatasetError: when the split is shorter than ``block_size + 1`` or ``batch_size < 1``.
        """
        data = self._split(split, block_size)
        if batch_size < 1:
            raise DatasetError(f"batch_size must be at least 1, got {batch_size}")
        # (B,): torch.randint(len(data) - block_size, (batch_size,)), as nanoGPT's get_batch draws them
        high = len(data) - block_size
        starts = random_torch.random_from_to(backend.generator("cpu"), (batch_size,), np.int64, 0, high)
        return self._windows(data, starts, block_size, device)

    def eval_batches(self, batch_size: int, block_size: int, num_batches: int, split: str = "val", device=None):
        """``num_batches`` fixed batches spread evenly over ``split`` (no randomness); a list of ``(x, y)``."""
        data = self._split(split, block_size)
        n = batch_size * num_batches
        starts = np.linspace(0, len(data) - block_size - 1, n).astype(np.int64)  # (n,)
        return [self._windows(data, starts[i * batch_size:(i + 1) * batch_size], block_size, device)
                for i in range(num_batches)]

    def unigram_log_probs(self, vocab_size: int) -> np.ndarray:
        """Log character frequencies of the training split, add-one smoothed: shape ``(V,)``, float64.

        The unigram baseline predicts every character from these frequencies, ignoring context; its
        held-out cross-entropy is what a model learns before it learns anything about order.
        """
        data, step = self.splits["train"], 1 << 22  # counted in chunks: a memmap is never read whole
        counts = np.zeros(vocab_size, dtype=np.int64)
        for i in range(0, len(data), step):
            part = np.bincount(data[i:i + step], minlength=vocab_size)
            if len(part) > len(counts):
                counts = np.pad(counts, (0, len(part) - len(counts)))
            counts[:len(part)] += part
        counts = counts.astype(np.float64) + 1.0  # (V,)
        return np.log(counts / counts.sum())

    def unigram_loss(self, targets, vocab_size: int) -> float:
        """Cross-entropy (nats per character) of the unigram baseline on ``targets`` (int ids, any shape)."""
        logp = self.unigram_log_probs(vocab_size)
        return float(-logp[np.asarray(targets).reshape(-1)].mean())
