"""``minitorch_ln.accelerator``: PyTorch's device-generic ``torch.accelerator``, on :mod:`minitorch_ln.cuda`.

The one accelerator here is a CUDA GPU through CuPy. Where CuPy sees one, ``current_accelerator()``
is ``device("cuda")`` and the controls act on it; elsewhere ``is_available()`` is False,
``current_accelerator()`` None, ``device_count()`` 0, and every function that needs the device
raises PyTorch's RuntimeError ("Cannot access accelerator device when none is available.").
Unlike PyTorch's, ``current_accelerator()`` without ``check_available`` also answers None on a
machine with CuPy but no GPU (there is no separate compile-time accelerator here).
"""

from __future__ import annotations

from . import backend, cuda

__all__ = [
    "current_accelerator", "is_available", "device_count", "current_device_index", "current_device_idx",
    "set_device_index", "set_device_idx", "synchronize", "empty_cache", "memory_allocated",
    "max_memory_allocated", "reset_peak_memory_stats", "device_index",
]

_NONE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    """True when a GPU answers through CuPy. Never raises."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False):
    """``device("cuda")`` when a GPU answers, else None."""
    return backend.device("cuda") if cuda.is_available() else None


def device_count() -> int:
    """The number of GPUs (0 without one)."""
    return cuda.device_count()


def _require() -> None:
    if not cuda.is_available():
        raise RuntimeError(_NONE)


def current_device_index() -> int:
    """The current GPU's index. Raises RuntimeError without one."""
    _require()
    return cuda.current_device()


current_device_idx = current_device_index  # PyTorch keeps the older name too


def set_device_index(device, /) -> None:
    """Make ``device`` (an index, ``"cuda:N"`` or a device) the current GPU. Raises RuntimeError without one."""
    _require()
    cuda.set_device(device)


set_device_idx = set_device_index


def synchronize(device=None, /) -> None:
    """Wait for the GPU's queued work. Raises RuntimeError without one."""
    _require()
    cuda.synchronize(device)


def empty_cache() -> None:
    """Free the cached blocks of CuPy's memory pool. Raises RuntimeError without a GPU."""
    _require()
    cuda.empty_cache()


def memory_allocated(device_index=None, /) -> int:
    """Bytes held by tensors on the GPU. Raises RuntimeError without one."""
    _require()
    return cuda.memory_allocated(device_index)


def max_memory_allocated(device_index=None, /) -> int:
    """The peak of :func:`memory_allocated`. Raises RuntimeError without a GPU."""
    _require()
    return cuda.max_memory_allocated(device_index)


def reset_peak_memory_stats(device_index=None, /) -> None:
    """Restart the peak of :func:`max_memory_allocated`. Raises RuntimeError without a GPU."""
    _require()
    cuda.reset_peak_memory_stats(device_index)


class device_index:  # noqa: N801 - PyTorch's name
    """``with torch.accelerator.device_index(i):`` makes GPU ``i`` current inside the block; ``None``
    changes nothing (as PyTorch's)."""

    def __init__(self, device, /):
        self.idx, self.prev = device, None

    def __enter__(self):
        if self.idx is not None:
            self.prev = current_device_index()
            set_device_index(self.idx)
        return self

    def __exit__(self, *exc):
        if self.prev is not None:
            set_device_index(self.prev)
        return False
