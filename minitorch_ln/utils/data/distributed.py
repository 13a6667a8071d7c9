"""``torch.utils.data.distributed.DistributedSampler``: each rank draws its own share of a dataset.

As PyTorch: with ``shuffle`` the indices are ``randperm(len(dataset))`` from a generator seeded
with ``seed + epoch`` (PyTorch's own stream, so the order is PyTorch's; call ``set_epoch`` each
epoch); the list is padded by repeating its start (or, with ``drop_last``, cut) to a multiple of
``num_replicas``, and rank r takes every ``num_replicas``-th index from position r.
"""

from __future__ import annotations

import math
import numbers

from ... import random_torch
from ...mt19937 import CPUGenerator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


class DistributedSampler(Sampler):
    """Rank ``rank``'s indices of ``dataset`` among ``num_replicas`` ranks (default: the process group's).

    Raises ValueError for a rank outside ``[0, num_replicas)`` (PyTorch's message), and, through
    the process group, when ``num_replicas``/``rank`` are not given and none is initialised.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ...distributed import process_group  # noqa: PLC0415 - the same layer

            if not process_group.is_available():
                raise RuntimeError("Requires distributed package to be available (pip install "
                                   "'minitorch-ln[distributed]'), or pass num_replicas and rank")
            num_replicas = process_group.get_world_size() if num_replicas is None else num_replicas
            rank = process_group.get_rank() if rank is None else rank
        if not _int(num_replicas) or num_replicas < 1:
            raise ValueError(f"num_replicas should be a positive integer, got {num_replicas!r}")
        if not _int(rank) or rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        if not _int(seed):
            raise TypeError(f"seed must be an int, got {type(seed).__name__}")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if self.drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = random_torch.randperm(CPUGenerator(self.seed + self.epoch), n).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Make the next ``iter()`` use the order of ``epoch`` (the same on every rank)."""
        self.epoch = epoch
