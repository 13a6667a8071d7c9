"""``Generator``: a random stream of its own, passed as ``generator=`` to every random op (as ``torch.Generator``).

A CPU :class:`Generator` is PyTorch's CPU generator (:class:`~minitorch_ln.mt19937.CPUGenerator`:
mt19937, seeded as ``torch.Generator``), and the random ops turn its words into samples as PyTorch's
CPU kernels do (:mod:`minitorch_ln.random_torch`), so ``Generator().manual_seed(2147483647)`` gives
the numbers ``torch`` gives (``docs/random.md``). A GPU generator is CuPy's (its numbers are CuPy's).
``default_generator`` is the global CPU stream (the one ``mt.manual_seed`` reseeds,
``backend.generator("cpu")``); ops given no ``generator=`` draw from the global stream of their device.

``get_state`` returns, as PyTorch, a 5056-byte uint8 tensor in PyTorch's ``CPUGeneratorImplState``
layout: a state from ``torch.Generator().get_state()`` (as a NumPy array or tensor) restores here,
and ours restores in torch. A GPU generator's state lives in device memory (cuRAND) and is not
exposed: ``get_state``/``set_state`` raise on one.
"""

from __future__ import annotations

import numbers
import os

import numpy as np

from .. import backend
from ..mt19937 import DEFAULT_SEED, CPUGenerator
from ..tensor import Tensor

__all__ = ["Generator", "default_generator", "manual_seed", "initial_seed", "seed", "get_rng_state", "set_rng_state",
           "rng_for"]


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError(f"Overflow when unpacking long long: manual_seed expects a seed in [-2**63, 2**64), got {seed}")
    return seed % 2**64  # as PyTorch: -1 is 2**64 - 1


def _new_rng(dev, seed):
    if dev.type == "cpu":
        return CPUGenerator(seed)
    cp = backend.cupy_or_error()
    with cp.cuda.Device(dev.index):
        return cp.random.default_rng(seed)


def _decode_state(state) -> np.ndarray:
    arr = state.array if isinstance(state, Tensor) else state
    if type(arr).__module__.startswith("torch"):  # a torch.ByteTensor from torch's get_state()
        arr = arr.numpy()
    if not hasattr(arr, "dtype") or arr.dtype != np.uint8 or arr.ndim != 1:
        got = f"{arr.dtype} of shape {tuple(arr.shape)}" if hasattr(arr, "dtype") else type(state).__name__
        raise TypeError(f"set_state expects a 1-D uint8 tensor from get_state(), got {got}")
    return np.asarray(backend.to_device(arr, "cpu"), dtype=np.uint8)


class Generator:
    """An independent random stream on ``device`` (``torch.Generator(device='cpu')``).

    A new generator starts from PyTorch's default seed, 67280421310721, so two new generators
    draw the same numbers.

    Raises:
        DeviceError: an unknown device, or ``'cuda'`` without CuPy or a GPU.
    """

    def __init__(self, device="cpu"):
        self.device = backend.device(device)
        if self.device.type == "cuda":
            backend.cupy_or_error()
        self._initial_seed = DEFAULT_SEED
        self._rng = None

    @property
    def rng(self):
        """The engine this object draws from (made on first use): mt19937 on the CPU, CuPy's on a GPU."""
        if self._rng is None:
            self._rng = _new_rng(self.device, self._initial_seed)
        return self._rng

    def manual_seed(self, seed) -> "Generator":
        """Restart the stream from ``seed`` (an int in [-2**63, 2**64); negative ones wrap as PyTorch's).

        Raises:
            RuntimeError: ``seed`` is not an int. ValueError: out of range.
        """
        self._initial_seed = _check_seed(seed)
        self._rng = None
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy and return that seed."""
        s = int.from_bytes(os.urandom(8), "little") >> 1
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self.rng.initial_seed() if self.device.type == "cpu" else self._initial_seed

    def get_state(self) -> Tensor:
        """The stream's state as a ``(5056,)`` uint8 Tensor in PyTorch's layout (CPU generators only)."""
        self._cpu_only("get_state")
        return Tensor._from_op(self.rng.get_state())

    def set_state(self, new_state) -> "Generator":
        """Restore a state from :meth:`get_state` (ours or torch's). Raises TypeError/RuntimeError for anything else."""
        self._cpu_only("set_state")
        self.rng.set_state(_decode_state(new_state))
        return self

    def _cpu_only(self, what):
        if self.device.type != "cpu":
            raise RuntimeError(f"Generator.{what}: only a CPU generator's state is exposed (this one is on {self.device})")

    def __repr__(self) -> str:
        return f"<minitorch_ln.Generator device='{self.device}' initial_seed={self.initial_seed()}>"


class _DefaultGenerator(Generator):
    """The global CPU stream (``torch.default_generator``): a view of ``backend.generator('cpu')``.

    Its ``manual_seed`` is ``mt.manual_seed``: it reseeds every device's global stream.
    """

    def __init__(self):
        self.device = backend.device("cpu")

    @property
    def rng(self):
        return backend.generator("cpu")

    def manual_seed(self, seed) -> "Generator":
        s = _check_seed(seed)
        backend.manual_seed(s)
        return self

    def initial_seed(self) -> int:
        return self.rng.initial_seed()


default_generator = _DefaultGenerator()


def manual_seed(seed) -> Generator:
    """``torch.manual_seed``: reseed every device's global stream and return ``default_generator``."""
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()


def seed() -> int:
    return default_generator.seed()


def get_rng_state() -> Tensor:
    """``torch.get_rng_state``: the global CPU stream's state, PyTorch's 5056 bytes."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """``torch.set_rng_state``: restore the global CPU stream (from ours or torch's ``get_rng_state``)."""
    default_generator.set_state(new_state)


def rng_for(generator, dev):
    """The NumPy/CuPy generator an op on device ``dev`` draws from.

    ``None``: the device's global stream. A :class:`Generator`: its stream, which must be on the
    same kind of device. A ``numpy.random.Generator`` is accepted for CPU ops (its own numbers, not PyTorch's).

    Raises:
        RuntimeError: the generator is on another device type (PyTorch's message).
        TypeError: anything else.
    """
    dev = backend.device(dev)
    if generator is None:
        return backend.generator(dev)
    if isinstance(generator, Generator):
        if generator.device.type != dev.type:
            raise RuntimeError(
                f"Expected a '{dev.type}' device type for generator but found '{generator.device.type}'"
            )
        return generator.rng
    if isinstance(generator, np.random.Generator) and dev.type == "cpu":
        return generator
    raise TypeError(f"generator must be a minitorch_ln.Generator or None, got {type(generator).__name__}")
