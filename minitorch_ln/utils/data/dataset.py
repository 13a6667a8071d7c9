"""Datasets: map-style (``ds[i]``, ``len(ds)``) and iterable-style (``iter(ds)``), and ways to combine them.

Mirrors ``torch.utils.data.dataset``: the same classes, arguments and errors (PyTorch raises
AssertionError for a few of them; so do these).
"""

from __future__ import annotations

import bisect
import itertools
import math
import numbers
import warnings

from ... import random_torch
from ._random import cpu_rng

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "random_split",
]


class Dataset:
    """A map from keys (usually ``0 .. len - 1``) to samples: subclasses define ``__getitem__``.

    ``__len__`` is optional but needed by the default samplers; ``__getitems__(indices)``, if
    defined, fetches a whole batch at once. ``ds1 + ds2`` is ``ConcatDataset([ds1, ds2])``.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other) -> "ConcatDataset":
        return ConcatDataset([self, other])

    def __class_getitem__(cls, item):  # ``Dataset[int]`` in type hints, as with PyTorch's Generic
        return cls


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__``.

    With ``num_workers > 0`` each worker process holds its own copy of the dataset and iterates
    it; to avoid every worker yielding the whole stream, split the work in ``__iter__`` (or in
    ``worker_init_fn``) with :func:`~minitorch_ln.utils.data.get_worker_info`::

        info = get_worker_info()
        if info is not None:  # in worker info.id of info.num_workers
            start = start + info.id * per_worker
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other) -> "ChainDataset":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; the tensors share their first size ``N``.

    Raises AssertionError("Size mismatch between tensors") when the first sizes differ (as PyTorch).
    """

    def __init__(self, *tensors) -> None:
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Datasets side by side: ``StackDataset(a, b)[i] == (a[i], b[i])``, ``StackDataset(x=a)[i] == {"x": a[i]}``.

    Raises ValueError for both positional and keyword datasets, none at all, or lengths that differ.
    """

    def __init__(self, *args, **kwargs) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                "input/output, but both types are given."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) if args else list(kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Datasets one after another: index ``i`` goes to the dataset whose cumulative size passes it.

    Raises AssertionError for no datasets or an IterableDataset among them, ValueError for a
    negative index beyond ``-len(self)`` (as PyTorch).
    """

    @staticmethod
    def cumsum(sequence) -> list:
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, chained lazily. Raises AssertionError for a map-style one."""

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``: ``Subset(ds, idx)[i] == ds[idx[i]]``.

    ``DataLoader`` fetches batches through ``__getitems__``; so a subclass that overrides
    ``__getitem__`` must override ``__getitems__`` too, or NotImplementedError is raised (as PyTorch).
    """

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. When subclassing Subset and "
                "overriding __getitem__, you must also override __getitems__ to ensure DataLoader works correctly "
                "with your custom logic. A simple implementation:\n\n"
                "def __getitems__(self, indices):\n    return [self.__getitem__(idx) for idx in indices]"
            )

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset, lengths, generator=None) -> list:
    """Split ``dataset`` into non-overlapping :class:`Subset` s of the given ``lengths``, at random.

    ``lengths`` are ints summing to ``len(dataset)``, or fractions summing to 1: then each split
    gets ``floor(frac * len(dataset))`` and the remainder is dealt out one by one, round robin,
    from the first split (as PyTorch; a split of length 0 warns). The permutation is drawn from
    ``generator`` (None: minitorch_ln's global generator, which ``mt.manual_seed`` seeds; see
    :mod:`minitorch_ln.utils.data._random`).

    Raises ValueError for a fraction outside [0, 1] or lengths that do not sum to ``len(dataset)``.
    """
    lengths = list(lengths)
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(n * frac))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=2
                )
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    if any(not isinstance(s, numbers.Integral) or s < 0 for s in lengths):
        raise ValueError(f"lengths should be non-negative integers or fractions summing to 1, got {lengths}")
    indices = random_torch.randperm(cpu_rng(generator), n).tolist()  # torch.randperm(n, generator)
    return [
        Subset(dataset, indices[offset - length : offset])
        for offset, length in zip(itertools.accumulate(lengths), lengths)
    ]
