"""Samplers: which dataset indices to load, in which order, and how they group into batches.

Mirrors ``torch.utils.data.sampler``: the same classes, arguments, defaults, lengths and errors.
Random draws are PyTorch's (``randperm``, ``randint``, ``multinomial`` on its CPU generator; see
:mod:`minitorch_ln.utils.data._random` for what ``generator=`` accepts), so a seed gives the order
PyTorch gives.
"""

from __future__ import annotations

import itertools
import numbers

import numpy as np

from ... import backend, random_torch
from ...mt19937 import CPUGenerator
from ._random import cpu_rng, draw_seed

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
]


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


class Sampler:
    """Base class of all samplers: ``__iter__`` yields indices (or lists of indices, for batches).

    ``__len__`` is optional; ``len(DataLoader)`` needs it.
    """

    def __init__(self, data_source=None) -> None:  # PyTorch accepts (and ignores) data_source
        pass

    def __iter__(self):
        raise NotImplementedError

    def __class_getitem__(cls, item):  # ``Sampler[int]`` in type hints, as with PyTorch's Generic
        return cls


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``, always in that order."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of ``range(len(data_source))``, or ``num_samples`` draws with replacement.

    Without replacement and ``num_samples > len(data_source)``, whole permutations follow each
    other and the last one is cut (as PyTorch). Each ``iter()`` draws anew from ``generator``.

    Raises TypeError when ``replacement`` is not a bool, ValueError when ``num_samples`` (default
    ``len(data_source)``) is not a positive int.
    """

    def __init__(self, data_source, replacement: bool = False, num_samples=None, generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not _is_int(self.num_samples) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        # as PyTorch: without a generator, a new one seeded from the global stream at each iter()
        rng = CPUGenerator(draw_seed()) if self.generator is None else cpu_rng(self.generator)
        if self.replacement:  # in chunks of 32, as PyTorch: num_samples=int(1e10) (minGPT) must not allocate it all
            for _ in range(self.num_samples // 32):
                yield from random_torch.random_from_to(rng, (32,), np.int64, 0, n).tolist()
            yield from random_torch.random_from_to(rng, (self.num_samples % 32,), np.int64, 0, n).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from random_torch.randperm(rng, n).tolist()
        yield from random_torch.randperm(rng, n).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a new one each ``iter()``), without replacement."""

    def __init__(self, indices, generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in random_torch.randperm(cpu_rng(self.generator), len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices of ``range(len(weights))`` drawn with probability ``weights[i] / sum(weights)``.

    Without replacement an index is drawn at most once; once the indices of nonzero weight are
    used up, those of zero weight follow (as ``torch.multinomial``). Weights need not sum to one.

    Raises ValueError for ``num_samples`` not a positive int, ``replacement`` not a bool, or
    ``weights`` not 1-d; and, when iterated (as PyTorch), RuntimeError for a negative, infinite or
    NaN weight, weights summing to zero, or ``num_samples > len(weights)`` without replacement.
    """

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None) -> None:
        if not _is_int(num_samples) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        if hasattr(weights, "array"):  # a Tensor, possibly on the GPU
            weights = backend.to_device(weights.array, "cpu")
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = w  # (N,) float64, as PyTorch's double tensor
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator

    def _check(self) -> None:
        w = self.weights
        if not np.all(w >= 0):  # NaN fails this test too, and PyTorch reports it so
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.all(np.isfinite(w)):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        if w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement and self.num_samples > w.shape[0]:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")

    def __iter__(self):
        self._check()
        rng = cpu_rng(self.generator)
        w = self.weights
        if random_torch.is_torch_stream(rng):  # torch.multinomial(weights (float64), num_samples, replacement)
            yield from random_torch.multinomial(rng, w[None, :], self.num_samples, self.replacement)[0].tolist()
            return
        if self.replacement:
            idx = rng.choice(w.shape[0], size=self.num_samples, replace=True, p=w / w.sum())
        else:
            # Exponential race (as torch.multinomial): the largest w_i / E_i, E_i ~ Exp(1), win in
            # the order they would be drawn one at a time; zero weights come last.
            keys = w / rng.exponential(size=w.shape[0])  # (N,)
            idx = np.argsort(-keys, kind="stable")[: self.num_samples]
        yield from idx.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` (any iterable) into lists of ``batch_size``.

    ``drop_last=True`` drops a last, shorter batch. ``list(BatchSampler(range(10), 3, False))`` is
    ``[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]``. Raises ValueError for ``batch_size`` not a
    positive int or ``drop_last`` not a bool.
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not _is_int(batch_size) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            yield from (list(b) for b in zip(*[it] * self.batch_size))
            return
        batch = list(itertools.islice(it, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(it, self.batch_size))

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
