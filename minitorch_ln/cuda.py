"""``minitorch_ln.cuda``: the queries and controls of ``torch.cuda``, on CuPy.

Each function is real where CuPy sees a GPU and honest where it does not: the queries answer as
PyTorch does on a machine without CUDA (``is_available() -> False``, ``device_count() -> 0``,
``memory_allocated() -> 0``), the seeding functions are silently ignored (PyTorch documents that
"it's safe to call this function if CUDA is not available; in that case, it is silently
ignored"), and the functions PyTorch cannot answer without a GPU (``current_device``,
``set_device``, ``get_device_name``, ``synchronize``) raise :class:`~minitorch_ln.backend.DeviceError`
(a RuntimeError, as PyTorch's "Found no NVIDIA driver") naming the CuPy extra to install.

Memory figures are those of CuPy's default memory pool (the arrays minitorch_ln holds), the
counterpart of PyTorch's caching allocator; ``max_memory_allocated`` is the pool's high-water mark
as sampled by the calls of this module (CuPy keeps no peak of its own).
"""

from __future__ import annotations

from . import backend
from .backend import DeviceError

__all__ = [
    "is_available", "device_count", "current_device", "set_device", "manual_seed", "manual_seed_all",
    "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats",
    "is_bf16_supported", "get_device_name",
]

_peak: dict = {}  # device index -> the largest used_bytes() seen
_as_cpu_index = [0]  # under `run --cuda-as-cpu`: the index the script last set (current_device answers it)


def is_available() -> bool:
    """True when CuPy imports and at least one GPU answers. Never raises."""
    return backend.cuda_is_available()


def device_count() -> int:
    """The number of GPUs CuPy sees (0 without CuPy or a GPU)."""
    if not is_available():
        return 0
    return int(backend.cupy_or_error().cuda.runtime.getDeviceCount())


def _cupy():
    """CuPy, or DeviceError (no CuPy, no GPU) with the install hint."""
    return backend.cupy_or_error()


def _index(dev) -> int:
    """A device index from ``None`` (the current device), an int, ``"cuda:N"`` or a Device."""
    cp = _cupy()
    if dev is None:
        return int(cp.cuda.runtime.getDevice())
    if isinstance(dev, bool) or not isinstance(dev, (int, str, backend.Device)):
        raise TypeError(f"expected a device index, 'cuda:N' or a device, got {type(dev).__name__}")
    if isinstance(dev, int):
        index = dev
    else:
        d = backend.device(dev)
        if d.type != "cuda":
            raise ValueError(f"expected a CUDA device, got {d}")
        index = d.index
    n = cp.cuda.runtime.getDeviceCount()
    if not 0 <= index < n:
        raise DeviceError(f"invalid device ordinal {index}: this machine has {n} GPU(s)")
    return index


def _as_cpu() -> bool:
    """True under ``minitorch-ln run --cuda-as-cpu``: then every "cuda:N" is the CPU (``backend.Device``), GPU or
    not, so these calls must not touch one either."""
    return backend.CUDA_AS_CPU


def _check_cuda_spec(dev, who: str) -> None:
    """Under ``--cuda-as-cpu``: refuse what PyTorch refuses (not an index, ``"cuda:N"`` or a CUDA device; ``"cpu"``),
    though every GPU named is the CPU."""
    if isinstance(dev, bool) or not isinstance(dev, (int, str, backend.Device)):
        raise TypeError(f"{who}: expected a device index, 'cuda:N' or a device, got {type(dev).__name__}")
    if isinstance(dev, str):
        backend.device(dev)  # a malformed string still raises
    # a Device made from "cuda:N" is the CPU here too, so only the spelling "cpu" can be told apart
    if isinstance(dev, str) and dev.strip().lower().startswith("cpu"):
        raise ValueError(f"{who}: expected a CUDA device, got {dev!r}")


def current_device() -> int:
    """The index of the current GPU. Raises DeviceError without a GPU (as PyTorch raises); under ``run
    --cuda-as-cpu``, the index last given to :func:`set_device` (0 at first), a name of the CPU."""
    if _as_cpu():
        return _as_cpu_index[0]
    return _index(None)


def set_device(device) -> None:
    """Make ``device`` (an index, ``"cuda:N"`` or a device) the current GPU. A negative index is
    ignored, as in PyTorch. Raises DeviceError without a GPU or for an index out of range."""
    if isinstance(device, int) and not isinstance(device, bool) and device < 0:
        return
    if _as_cpu():  # `run --cuda-as-cpu`: every 'cuda:N' is the CPU
        _check_cuda_spec(device, "set_device")
        if isinstance(device, int):
            _as_cpu_index[0] = device
        elif isinstance(device, str):
            _as_cpu_index[0] = int(device.partition(":")[2] or 0)
        return
    index = _index(device)
    _cupy().cuda.runtime.setDevice(index)


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator (ignored without a GPU, as in PyTorch).

    minitorch_ln keeps one seed for all devices (:func:`minitorch_ln.backend.manual_seed`); this
    replaces only the current GPU's generator, leaving the CPU's stream where it is.
    """
    _check_seed(seed)
    if _as_cpu():  # `run --cuda-as-cpu`: the script's GPU is the CPU, so is its generator
        backend.manual_seed(int(seed) % 2**64)
    elif is_available():
        _seed_gpu(current_device(), int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator (ignored without a GPU, as in PyTorch)."""
    _check_seed(seed)
    if _as_cpu():
        backend.manual_seed(int(seed) % 2**64)
    for i in range(device_count()):
        _seed_gpu(i, int(seed))


def _check_seed(seed) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"manual_seed expects an int, got {type(seed).__name__}")
    if not -(2**63) <= seed < 2**64:  # PyTorch's range (a negative seed wraps around)
        raise ValueError(f"manual_seed expects an integer in [-2**63, 2**64), got {seed}")


def _seed_gpu(index: int, seed: int) -> None:
    cp = _cupy()
    with cp.cuda.Device(index):
        backend._generators[backend.Device(f"cuda:{index}")] = cp.random.default_rng(seed % 2**64)


def synchronize(device=None) -> None:
    """Wait for all work queued on ``device`` (default: the current GPU). Raises DeviceError without a GPU
    (under ``run --cuda-as-cpu`` there is nothing to wait for: the CPU's work is done when a call returns)."""
    if _as_cpu():
        if device is not None:
            _check_cuda_spec(device, "synchronize")
        return
    cp = _cupy()
    with cp.cuda.Device(_index(device)):
        cp.cuda.runtime.deviceSynchronize()


def empty_cache() -> None:
    """Hand CuPy's cached, unused GPU blocks back to the driver (nothing to do without a GPU)."""
    if is_available():
        cp = _cupy()
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory held by arrays (CuPy's pool ``used_bytes``); 0 without a GPU."""
    if not is_available():
        return 0
    index = _index(device)
    cp = _cupy()
    with cp.cuda.Device(index):
        used = int(cp.get_default_memory_pool().used_bytes())
    _peak[index] = max(_peak.get(index, 0), used)
    return used


def max_memory_allocated(device=None) -> int:
    """The largest :func:`memory_allocated` seen since the start or :func:`reset_peak_memory_stats`
    (sampled at each call of this module: CuPy records no peak); 0 without a GPU."""
    if not is_available():
        return 0
    memory_allocated(device)
    return _peak[_index(device)]


def reset_peak_memory_stats(device=None) -> None:
    """Start :func:`max_memory_allocated` afresh from the current use."""
    if is_available():
        _peak.pop(_index(device), None)
        memory_allocated(device)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: minitorch_ln has no bfloat16 dtype (NumPy and CuPy have none), whatever the GPU.

    Scripts that pick ``bfloat16 if torch.cuda.is_bf16_supported() else float16`` (nanoGPT)
    thus choose float16, which exists.
    """
    return False


def get_device_name(device=None) -> str:
    """The GPU's name, e.g. ``"NVIDIA H200"``. Raises DeviceError without a GPU (as PyTorch raises); under ``run
    --cuda-as-cpu``, says that the CPU stands for it."""
    if _as_cpu():
        if device is not None:
            _check_cuda_spec(device, "get_device_name")
        return "CPU (minitorch-ln run --cuda-as-cpu)"
    index = _index(device)
    name = _cupy().cuda.runtime.getDeviceProperties(index)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)
