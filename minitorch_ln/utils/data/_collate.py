"""Collation: a list of samples into one batch (``default_collate``), or one sample converted (``default_convert``).

Mirrors ``torch.utils.data._utils.collate``, including its extension point: :func:`collate`
walks the structure of the first sample and looks up each leaf's type in a ``collate_fn_map``
(``default_collate_fn_map`` holds the defaults; add your own types to it or to a copy).

What a batch of ``B`` samples becomes under :func:`default_collate` (as PyTorch):

=============================  =================================================================
sample element                 batch
=============================  =================================================================
Tensor of shape ``S``          Tensor ``(B, *S)`` (stacked; dtypes promoted as ``stack``)
NumPy array of shape ``S``     Tensor ``(B, *S)`` of the array's dtype
NumPy scalar                   Tensor ``(B,)`` of its dtype
Python ``float``               Tensor ``(B,)`` float64 (PyTorch's choice, not the default dtype)
Python ``int`` / ``bool``      Tensor ``(B,)`` int64 / bool (float32 if later elements are floats)
``str`` / ``bytes``            the elements unchanged (a list, or a tuple inside a sequence)
``Mapping``                    the same mapping type, each key collated
namedtuple                     the same namedtuple, each field collated
``tuple``                      a ``list``, each position collated
other ``Sequence`` (list)      the same type, each position collated
=============================  =================================================================
"""

from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from ... import backend
from ...backend import get_array_module
from ...tensor import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")  # NumPy dtype codes of strings and objects

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _as_tensor(array) -> Tensor:
    """``torch.as_tensor`` for a NumPy array or scalar: no copy for arrays; TypeError for an unsupported dtype."""
    array = np.asarray(array)
    backend.as_dtype(array.dtype)  # TypeError naming the supported dtypes
    return Tensor._from_op(array)


def default_convert(data):
    """Convert the NumPy arrays and scalars inside ``data`` (nested as for :func:`default_collate`) to Tensors.

    Used when ``DataLoader`` does not batch (``batch_size=None``). Tensors, Python numbers and
    strings are left as they are; arrays of strings or objects too. Tuples become lists (as
    PyTorch, for backwards compatibility); namedtuples, mappings and other sequences keep their type.
    """
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_", "bytes_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return _as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:  # the mapping type cannot be rebuilt this way
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map: dict | None = None):
    """Collate ``batch`` (a sequence of samples) by the structure of ``batch[0]``.

    A leaf whose type (or a base type, tried in the map's order) is in ``collate_fn_map`` is
    handed to ``collate_fn_map[type](batch, collate_fn_map=collate_fn_map)``.

    Raises RuntimeError when sequences in the batch differ in length, TypeError for an element
    type nothing knows how to collate (naming it).
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
                return clone
            return elem_type({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(e) == elem_size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map) for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None) -> Tensor:
    """``k`` tensors of shape ``S`` → one ``(k, *S)``. RuntimeError (PyTorch's message) when shapes differ."""
    elem = batch[0]
    for i, t in enumerate(batch):
        if tuple(t.shape) != tuple(elem.shape):
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(elem.shape)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    if any(t.requires_grad for t in batch) or any(t.dtype != elem.dtype for t in batch):
        from ...ops import stack  # noqa: PLC0415 - records the graph and promotes dtypes, as torch.stack

        return stack(list(batch), 0)
    xp = get_array_module(elem.array)
    return Tensor._from_op(xp.stack([t.array for t in batch]))  # (k, *S)


def collate_numpy_array_fn(batch, *, collate_fn_map=None) -> Tensor:
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None) -> Tensor:
    return _as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None) -> Tensor:
    return Tensor._from_op(np.asarray(batch, dtype=np.float64))  # (B,) float64, as PyTorch


def collate_int_fn(batch, *, collate_fn_map=None) -> Tensor:
    # torch.tensor(batch): bools stay bool, ints are int64, and a float among them gives float32
    array = np.asarray(batch)
    if array.dtype.kind in "iu":
        array = array.astype(np.int64, copy=False)
    elif array.dtype.kind == "f":
        array = array.astype(backend.default_float_dtype())
    return _as_tensor(array)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map: dict = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Put a list of ``B`` samples together into a batch with a new leading dimension ``B``.

    See the module docstring for what each element type becomes; e.g.
    ``default_collate([(x0, 0), (x1, 1)])`` with tensors ``x_i`` of shape ``(C,)`` is
    ``[Tensor (2, C), Tensor([0, 1]) int64]``. Raises RuntimeError for tensors or arrays of
    different shapes ("stack expects each tensor to be equal size, ...") and for sequences of
    different lengths; TypeError for an element type it cannot collate, naming the type.
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
