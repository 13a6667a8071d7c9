"""Small helpers of ``Function.apply`` (``autograd/function.py``): the device of an output array, the shared
``outputs_meta`` tuples of NumPy outputs, and the refusal of complex inputs by ops that do not support them."""

from __future__ import annotations

import numpy as np

from .. import backend
from ..errors import DtypeError


def _device(array):
    return backend.CPU if type(array) is np.ndarray else backend.device_of(array)


_CPU_META = {}  # (shape, dtype) -> the ((shape, dtype, CPU),) that nodes with such an output share


def _single_output_meta(out):
    """``outputs_meta`` of a node with the one output array ``out``.

    A graph keeps one node per op alive until it is freed, and Python's cyclic garbage collector
    walks every object it holds, so the meta tuple of a NumPy output is shared between nodes (a
    chain of small ops spent more time in the collector than in the ops). Tuples are immutable, so
    sharing them changes nothing else; the cache is dropped whenever it grows past 1024 entries.
    """
    if type(out) is not np.ndarray:
        return ((out.shape, out.dtype, _device(out)),)
    key = (out.shape, out.dtype)
    meta = _CPU_META.get(key)
    if meta is None:
        if len(_CPU_META) >= 1024:
            _CPU_META.clear()
        meta = _CPU_META[key] = ((key[0], key[1], backend.CPU),)
    return meta



def _refuse_complex(cls, dtype):
    name = getattr(cls, "torch_name", None) or cls.__name__
    raise DtypeError(f"{name}: not implemented for complex tensors ('{dtype}'; minitorch_ln supports complex "
                     "in the ops listed in docs/complex.md)")
