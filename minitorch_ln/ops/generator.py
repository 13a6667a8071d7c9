"""``Generator``: a random stream of its own, passed as ``generator=`` to every random op (as ``torch.Generator``).

A :class:`Generator` wraps a NumPy ``Generator`` (PCG64) on the CPU or a CuPy one on a GPU. The
numbers drawn are NumPy's/CuPy's, not PyTorch's: a seed makes a stream reproducible here, it does not
give the numbers ``torch`` would give. ``default_generator`` is the global CPU stream (the one
``mt.manual_seed`` reseeds, ``backend.generator("cpu")``); ops given no ``generator=`` draw from the
global stream of their device.

``get_state`` returns, as PyTorch, a uint8 tensor; here its bytes are the JSON of NumPy's PCG64
state, so a state also survives :func:`minitorch_ln.save`. A GPU generator's state lives in device
memory (cuRAND) and is not exposed: ``get_state``/``set_state`` raise on one.
"""

from __future__ import annotations

import json
import numbers
import os

import numpy as np

from .. import backend
from ..tensor import Tensor

__all__ = ["Generator", "default_generator", "manual_seed", "initial_seed", "seed", "rng_for"]

DEFAULT_SEED = 67280421310721  # torch.Generator().initial_seed()


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError(f"Overflow when unpacking long long: manual_seed expects a seed in [-2**63, 2**64), got {seed}")
    return seed % 2**64  # as PyTorch: -1 is 2**64 - 1


def _new_rng(dev, seed):
    if dev.type == "cpu":
        return np.random.default_rng(seed)
    cp = backend.cupy_or_error()
    with cp.cuda.Device(dev.index):
        return cp.random.default_rng(seed)


def _encode_state(state: dict) -> Tensor:
    raw = json.dumps(state, sort_keys=True).encode("ascii")
    return Tensor._from_op(np.frombuffer(raw, dtype=np.uint8).copy())  # (n,) uint8


def _decode_state(state) -> dict:
    arr = state.array if isinstance(state, Tensor) else state
    if not hasattr(arr, "dtype") or arr.dtype != np.uint8 or arr.ndim != 1:
        got = f"{arr.dtype} of shape {tuple(arr.shape)}" if hasattr(arr, "dtype") else type(state).__name__
        raise TypeError(f"set_state expects a 1-D uint8 tensor from get_state(), got {got}")
    try:
        decoded = json.loads(bytes(backend.to_device(arr, "cpu")).decode("ascii"))
        if not isinstance(decoded, dict) or "bit_generator" not in decoded:
            raise ValueError
    except (UnicodeDecodeError, ValueError):
        raise RuntimeError(
            f"set_state: these {arr.shape[0]} bytes are not a generator state made by get_state() "
            "(a PyTorch CPUGeneratorImplState does not fit NumPy's PCG64)"
        ) from None
    return decoded


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
        """The NumPy/CuPy generator this object draws from (made on first use)."""
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
        return self._initial_seed

    def get_state(self) -> Tensor:
        """The stream's state as a 1-D uint8 Tensor (CPU generators only)."""
        self._cpu_only("get_state")
        return _encode_state(self.rng.bit_generator.state)

    def set_state(self, new_state) -> "Generator":
        """Restore a state from :meth:`get_state`. Raises TypeError/RuntimeError for anything else."""
        self._cpu_only("set_state")
        self.rng.bit_generator.state = _decode_state(new_state)
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
        s = getattr(backend, "_seed", None)
        # never seeded: NumPy drew OS entropy; that entropy reproduces the stream with default_rng
        return int(s) if s is not None else int(self.rng.bit_generator.seed_seq.entropy)


default_generator = _DefaultGenerator()


def manual_seed(seed) -> Generator:
    """``torch.manual_seed``: reseed every device's global stream and return ``default_generator``."""
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()


def seed() -> int:
    return default_generator.seed()


def rng_for(generator, dev):
    """The NumPy/CuPy generator an op on device ``dev`` draws from.

    ``None``: the device's global stream. A :class:`Generator`: its stream, which must be on the
    same kind of device. A ``numpy.random.Generator`` is accepted for CPU ops.

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
