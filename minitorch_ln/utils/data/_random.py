"""Where the data pipeline's randomness comes from: one helper that turns a ``generator=`` into a stream.

``generator=`` (of the samplers, of :func:`random_split` and of ``DataLoader``) accepts

* ``None``: the global CPU generator, :func:`minitorch_ln.backend.generator` ``("cpu")``, which
  :func:`minitorch_ln.manual_seed` reseeds (as PyTorch's ``torch.default_generator``);
* a :class:`minitorch_ln.Generator` (CPU): its own stream, advanced as PyTorch advances a
  ``torch.Generator``;
* a :class:`numpy.random.Generator`, used (and advanced) as it is (its numbers are NumPy's);
* any other object with ``manual_seed`` and ``initial_seed`` (a ``torch.Generator``): a stream
  seeded from ``initial_seed()`` is made the first time and kept for that object, so successive
  epochs draw different permutations while two objects with the same seed draw the same ones.
  Calling ``manual_seed`` with a *different* seed starts a new stream; calling it again with the
  *same* seed does not rewind (make a new generator for that).

Streams other than NumPy's are PyTorch's CPU generator (:mod:`minitorch_ln.mt19937`), and the
samplers draw from them as ``torch.utils.data`` does (``randperm``, ``randint``, ``multinomial``),
so a seed gives PyTorch's order.
"""

from __future__ import annotations

import weakref

import numpy as np

from ... import backend, random_torch
from ...mt19937 import CPUGenerator

__all__ = ["cpu_rng", "draw_seed"]

_derived = weakref.WeakKeyDictionary()  # seeded object -> (its initial_seed, CPUGenerator)
_derived_by_id: dict = {}  # id -> (object, (seed, rng)), for objects that take no weak references


def cpu_rng(generator=None):
    """The stream to draw from for ``generator`` (see the module docstring): a CPUGenerator or NumPy's.

    Raises TypeError when ``generator`` is none of ``None``, a NumPy Generator or an object with
    ``manual_seed``/``initial_seed``.
    """
    if generator is None:
        return backend.generator("cpu")
    if isinstance(generator, (np.random.Generator, CPUGenerator)):
        return generator
    if isinstance(getattr(generator, "rng", None), CPUGenerator):  # a minitorch_ln.Generator on the CPU
        return generator.rng
    if not (callable(getattr(generator, "initial_seed", None)) and callable(getattr(generator, "manual_seed", None))):
        raise TypeError(
            "generator must be None, a numpy.random.Generator or an object with manual_seed() and "
            f"initial_seed() (such as torch.Generator), got {type(generator).__name__}"
        )
    seed = int(generator.initial_seed())
    entry = _lookup(generator)
    if entry is None or entry[0] != seed:  # first use, or manual_seed(another seed) since
        entry = (seed, CPUGenerator(seed))
        _store(generator, entry)
    return entry[1]


def _lookup(generator):
    try:
        return _derived.get(generator)
    except TypeError:  # the object takes no weak references
        hit = _derived_by_id.get(id(generator))
        return None if hit is None else hit[1]


def _store(generator, entry) -> None:
    try:
        _derived[generator] = entry
    except TypeError:
        _derived_by_id[id(generator)] = (generator, entry)  # keeps the object alive: ids stay unique


def draw_seed(generator=None) -> int:
    """A 63-bit seed drawn from ``generator``: PyTorch's ``torch.empty((), dtype=int64).random_()``."""
    return int(random_torch.random_default(cpu_rng(generator), (), np.int64))
