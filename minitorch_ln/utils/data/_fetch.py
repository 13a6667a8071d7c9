"""Fetchers: from one index (or a list of indices) to one collated batch, the same in the main process and in workers.

Mirrors ``torch.utils.data._utils.fetch``.
"""

from __future__ import annotations

__all__ = ["MapDatasetFetcher", "IterableDatasetFetcher", "create_fetcher"]


class MapDatasetFetcher:
    """``dataset[i]`` for each index of a batch (or ``dataset.__getitems__(indices)``), then ``collate_fn``."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if callable(getitems):
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class IterableDatasetFetcher:
    """The next ``len(batch_index)`` samples of ``iter(dataset)`` (or the next one, unbatched), then ``collate_fn``.

    Raises StopIteration once the stream is exhausted (a last, short batch first unless ``drop_last``).
    """

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(is_iterable: bool, dataset, auto_collation: bool, collate_fn, drop_last: bool):
    cls = IterableDatasetFetcher if is_iterable else MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
