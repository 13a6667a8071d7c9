"""``DataLoader``: batches from a dataset, in the main process or in worker processes.

Mirrors ``torch.utils.data.dataloader``: the same arguments, defaults, checks (ValueError with
PyTorch's messages for options that exclude each other), ``len()``, and the same iteration
order. The multi-process iterator lives in :mod:`._multiprocessing`.
"""

from __future__ import annotations

import multiprocessing
import os
import warnings

from ._collate import default_collate, default_convert
from ._iterators import _BaseDataLoaderIter
from ._multiprocessing import _MultiProcessingDataLoaderIter
from ._fetch import create_fetcher
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: ``None`` forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over ``dataset`` in batches.

    Args:
        dataset: a map-style :class:`Dataset` (anything with ``__getitem__`` and ``__len__``) or an
            :class:`IterableDataset`.
        batch_size: samples per batch (default 1); ``None`` turns batching off: each sample is
            passed through ``collate_fn`` (default :func:`default_convert`) on its own.
        shuffle: reshuffle the indices every epoch (a :class:`RandomSampler` on ``generator``).
        sampler: the indices to load, in order (any iterable); excludes ``shuffle``.
        batch_sampler: lists of indices, one per batch; excludes ``batch_size``, ``shuffle``,
            ``sampler`` and ``drop_last``.
        num_workers: 0 loads in the main process; ``n > 0`` starts ``n`` worker processes (fork on
            Linux) that load batches ahead, ``prefetch_factor`` each (default 2); batches come
            back in sampler order. An exception in a worker is raised again here, with the same
            type and a message "Caught <Type> in DataLoader worker process <id>" plus the
            worker's traceback.
        collate_fn: turns a list of samples into a batch (default :func:`default_collate`).
        pin_memory: accepted for compatibility; a no-op (there is no pinned host memory on the CPU,
            and CuPy transfers do not need it here).
        drop_last: drop the last batch when it is smaller than ``batch_size``.
        timeout: seconds to wait for a batch from the workers before RuntimeError (0: forever);
            ignored when ``num_workers == 0``.
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker, after seeding.
        multiprocessing_context: a start method name (``"fork"``, ``"spawn"``, ...) or context.
        generator: the source of the shuffle and of the workers' base seed: ``None`` (the global
            generator that ``mt.manual_seed`` seeds), a ``numpy.random.Generator`` or any object with
            ``manual_seed``/``initial_seed`` (see :mod:`minitorch_ln.utils.data._random`).
        prefetch_factor: batches each worker loads ahead (only with ``num_workers > 0``).
        persistent_workers: keep the worker processes between epochs (needs ``num_workers > 0``).

    Each iteration draws a base seed from ``generator``; worker ``i`` seeds Python's ``random``
    and minitorch_ln with ``base_seed + i`` and NumPy's global RNG from both, as PyTorch does.

    Raises ValueError (PyTorch's messages) for options that exclude each other or are out of
    range, and TypeError from ``len()`` for an IterableDataset without ``__len__``.
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers: int = 0,
                 collate_fn=None, pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory  # a no-op, see the docstring
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order  # batches always come in order, which in_order=False also allows

        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in {False, None}:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                    f"but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None  # the len() reported, to warn when more samples come
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                    f"but got num_workers={self.num_workers}"
                )
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(
                        f"multiprocessing_context option should specify a valid start method in {methods!r}, "
                        f"but got multiprocessing_context={context!r}"
                    )
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a string specifying "
                    f"the start method, but got multiprocessing_context={context}"
                )
        self.__multiprocessing_context = context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None or self._iterator._pool.is_shut:  # first epoch, or after a failure
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        """Batches per epoch: ``len(batch_sampler)`` (or ``len(sampler)`` unbatched); for an
        IterableDataset, ``len(dataset)`` divided by ``batch_size`` (rounded as ``drop_last`` says)."""
        if self._is_iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warn (as PyTorch) when more workers are asked for than this process may use CPUs."""
        if not self.num_workers:
            return
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if cpus is None or self.num_workers > cpus:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. Our suggested max "
                f"number of worker in current system is {cpus}, which is smaller than what this DataLoader is "
                "going to create. Please be aware that excessive worker creation might get DataLoader running "
                "slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
                stacklevel=2,
            )


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Fetch and collate in the main process, one batch per ``next()``."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._dataset_fetcher = create_fetcher(
            self._is_iterable, self._dataset, self._auto_collation, self._collate_fn, self._drop_last
        )

    def _next_data(self):
        index = self._next_index()
        return self._dataset_fetcher.fetch(index)  # an exhausted IterableDataset raises StopIteration
