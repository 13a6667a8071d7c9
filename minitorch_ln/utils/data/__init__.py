"""The data pipeline, as ``torch.utils.data``: datasets, samplers, collation and ``DataLoader``.

``from minitorch_ln.utils.data import DataLoader, TensorDataset`` works as the PyTorch import
does. Randomness (shuffles, ``random_split``, worker seeds) comes from NumPy: ``generator=``
takes a ``numpy.random.Generator`` or any object with ``manual_seed``/``initial_seed``, and
``None`` means minitorch_ln's global generator, so ``mt.manual_seed(0)`` makes runs repeat.
"""

from ._collate import default_collate, default_convert
from ._worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .dataset import (
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset, random_split,
)
from .sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
