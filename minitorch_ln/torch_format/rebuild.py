"""Storages and tensors rebuilt from a ``torch.save`` pickle, as PyTorch's ``torch/_utils.py`` does.

A pickled tensor is ``_rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
backward_hooks)``; the storage is a persistent id ``('storage', torch.FloatStorage, key, location,
numel)`` whose bytes are the record ``data/<key>`` of the zip (or follow the pickle in the legacy
format). Every storage becomes one 1-d array; each tensor is a strided view of it
(``as_strided``), so two tensors of one storage share memory after loading as they did when saved.
A view whose size, stride and offset reach past its storage is refused (it would read other
memory); negative sizes or strides are refused too.

Placement comes last (:meth:`Rebuilder.place`): each storage moves once to the device
``map_location`` gives it, and the tensors' arrays are re-made as views of the moved storage.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..errors import SerializationError
from ..nn.parameter import Parameter
from ..tensor import Tensor

__all__ = ["Rebuilder", "Storage", "placement"]


class Storage:
    """One storage: its 1-d array (elements of its dtype), the location it was saved from, its key."""

    def __init__(self, key: str, array, location: str):
        self.key, self.array, self.location = key, array, location


def _ints(value, what: str, name: str) -> tuple:
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise SerializationError(f"{name!r} is corrupt: a tensor's {what} is {value!r}, expected a tuple of ints")
    return tuple(value)


class Rebuilder:
    """The functions the unpickler calls; ``read(key, dtype, numel)`` gives a storage's 1-d array, or
    None when its bytes come later (the legacy format, :meth:`fill`)."""

    TENSOR_TYPE = Tensor
    PARAMETER_TYPE = Parameter

    def __init__(self, read, name: str):
        self._read, self._name = read, name
        self.storages: dict = {}
        self._views: dict = {}  # id(tensor) -> (tensor, storage, offset, size, stride)

    # -------------------------------------------------------------------------- storages
    def storage(self, pid):
        from .unpickler import StorageType

        if not isinstance(pid, tuple) or not pid or pid[0] not in ("storage", b"storage") or len(pid) not in (5, 6):
            raise SerializationError(f"{self._name!r} is corrupt: unknown persistent id {pid!r:.80}")
        storage_type, key, location, numel = pid[1:5]
        view = pid[5] if len(pid) == 6 else None
        if not isinstance(storage_type, StorageType):
            raise SerializationError(f"{self._name!r} is corrupt: a storage of type {storage_type!r}")
        dtype = np.dtype(storage_type.dtype() if callable(storage_type.dtype) and not isinstance(
            storage_type.dtype, type) else storage_type.dtype)
        try:
            backend.as_dtype(dtype)
        except TypeError as exc:
            raise SerializationError(f"{self._name!r} holds a tensor of {storage_type!r} ({dtype}), a dtype "
                                     f"minitorch_ln does not have: {exc}") from None
        key, location = str(key), str(location)
        if not isinstance(numel, int) or numel < 0:
            raise SerializationError(f"{self._name!r} is corrupt: storage {key} has {numel!r} elements")
        if key not in self.storages:
            self.storages[key] = Storage(key, self._read(key, dtype, numel), location)
            if self.storages[key].array is None:
                self.storages[key].array = np.empty(numel, dtype)
        st = self.storages[key]
        if st.array.dtype != dtype:
            raise SerializationError(f"{self._name!r} is corrupt: storage {key} is read as both {st.array.dtype} "
                                     f"and {dtype}")
        if view is not None:  # legacy storage views: (view_key, offset, size) of the root storage
            view_key, offset, size = view
            if offset < 0 or size < 0 or offset + size > st.array.size:
                raise SerializationError(f"{self._name!r} is corrupt: storage view {view_key} is out of range")
            return Storage(str(view_key), st.array[offset:offset + size], location)
        return st

    # -------------------------------------------------------------------------- tensors
    def tensor_v2(self, storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                  metadata=None):
        return self._tensor(storage, storage_offset, size, stride, requires_grad)

    def tensor_v1(self, storage, storage_offset, size, stride):
        return self._tensor(storage, storage_offset, size, stride, False)

    def tensor_v3(self, storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype,
                  metadata=None):
        if isinstance(storage, Storage) and storage.array.dtype != dtype:  # an untyped (byte) storage
            if not isinstance(dtype, np.dtype) or storage.array.nbytes % dtype.itemsize:
                raise SerializationError(f"{self._name!r}: a tensor of dtype {dtype} cannot be read from storage "
                                         f"{storage.key} of {storage.array.nbytes} bytes")
            key = f"{storage.key}:{dtype}"  # registered, so that map_location moves it too
            if key not in self.storages:
                self.storages[key] = Storage(key, storage.array.view(dtype), storage.location)
            storage = self.storages[key]
        return self._tensor(storage, storage_offset, size, stride, requires_grad)

    def _tensor(self, storage, offset, size, stride, requires_grad) -> Tensor:
        name = self._name
        if not isinstance(storage, Storage):
            raise SerializationError(f"{name!r} is corrupt: a tensor without a storage ({type(storage).__name__})")
        size, stride = _ints(size, "size", name), _ints(stride, "stride", name)
        if not isinstance(offset, int) or offset < 0 or len(size) != len(stride) or min(size + stride, default=0) < 0:
            raise SerializationError(f"{name!r} is corrupt: a tensor with size {size}, stride {stride}, storage "
                                     f"offset {offset!r}")
        numel = storage.array.size
        last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else offset - 1
        if last >= numel or offset > numel:
            raise SerializationError(
                f"{name!r} is corrupt: a tensor of size {list(size)}, stride {list(stride)} and storage offset "
                f"{offset} reaches element {last} of storage {storage.key}, which holds {numel}")
        if requires_grad and storage.array.dtype.kind not in "fcV":
            raise SerializationError(f"{name!r} is corrupt: a {storage.array.dtype} tensor that requires grad")
        t = Tensor._from_op(_view(storage.array, offset, size, stride))
        if requires_grad:
            t.requires_grad_(True)
        self._views[id(t)] = (t, storage, offset, size, stride)
        return t

    def parameter(self, data, requires_grad=True, backward_hooks=None):
        if not isinstance(data, Tensor):
            raise SerializationError(f"{self._name!r} is corrupt: a Parameter of {type(data).__name__}")
        p = Parameter(data, requires_grad=bool(requires_grad))
        if id(data) in self._views:
            self._views[id(p)] = (p,) + self._views[id(data)][1:]
        return p

    def parameter_with_state(self, data, requires_grad, backward_hooks, state):
        p = self.parameter(data, requires_grad, backward_hooks)
        self.set_state(p, state)
        return p

    def from_type_v2(self, func, new_type, args, state):
        if new_type not in (Tensor, Parameter) or not callable(func) or func not in (
                self.tensor_v1, self.tensor_v2, self.tensor_v3, self.parameter, self.parameter_with_state):
            raise SerializationError(f"{self._name!r}: a tensor of type {new_type!r} rebuilt by {func!r} is not "
                                     "supported (tensor subclasses are refused)")
        t = func(*args)
        if new_type is Parameter and not isinstance(t, Parameter):
            t = self.parameter(t, t.requires_grad)
        self.set_state(t, state)
        return t

    def is_tensor(self, obj) -> bool:
        return isinstance(obj, Tensor)

    def set_state(self, t, state) -> None:
        """Python attributes pickled with a tensor (``t.foo = 1``), as PyTorch's ``_set_obj_state``."""
        if isinstance(state, tuple) and len(state) == 2:
            dict_state, slot_state = state
        else:
            dict_state, slot_state = state, None
        for part in (dict_state, slot_state):
            if not part:
                continue
            if not isinstance(part, dict) or not all(isinstance(k, str) and not k.startswith("_") for k in part):
                raise SerializationError(f"{self._name!r}: a tensor's pickled state must be public attributes, got "
                                         f"{part!r:.80}")
            for k, v in part.items():
                setattr(t, k, v)

    # -------------------------------------------------------------------------- placement
    def place(self, map_location) -> None:
        """Move each storage once to its target device and re-make its tensors as views there."""
        target = placement(map_location, self._name)
        moved = {}
        for st in self.storages.values():
            new = target(st)
            if new is not st.array:
                moved[id(st.array)] = new
        if not moved:
            return
        for t, st, offset, size, stride in self._views.values():
            if id(st.array) in moved:
                t.array = _view(moved[id(st.array)], offset, size, stride)
            elif st.array.base is not None and id(st.array.base) in moved:  # a legacy storage view
                raise SerializationError(f"{self._name!r}: legacy storage views cannot be moved to a device")


def _view(flat, offset: int, size: tuple, stride: tuple):
    """The strided view ``size``/``stride`` (in elements) from ``offset`` of the 1-d array ``flat``."""
    xp = backend.get_array_module(flat)
    item = flat.dtype.itemsize
    base = flat[offset:] if offset <= flat.size else flat[:0]
    return xp.lib.stride_tricks.as_strided(base, shape=size, strides=tuple(s * item for s in stride))


def placement(map_location, name: str):
    """``target(storage) -> array``: the storage's array on the device ``map_location`` chooses, as
    ``torch.load``'s (None: where it was saved; a str/Device; a dict of saved -> target location;
    a callable ``fn(storage, location)``, given the storage as a 1-d Tensor, returning a Tensor)."""

    def to(array, where, saved):
        dev = backend.device(where)
        if dev.type == "cuda" and not backend.cuda_is_available():
            raise backend.DeviceError(
                f"{name!r} holds a tensor saved on {saved}, and no GPU is usable here; on a CPU-only machine, load "
                "with map_location='cpu' (torch.load(path, map_location=torch.device('cpu')))")
        return backend.to_device(array, dev)

    if map_location is None:
        return lambda st: to(st.array, st.location, st.location)
    if isinstance(map_location, (str, backend.Device)):
        return lambda st: to(st.array, map_location, st.location)
    if isinstance(map_location, dict):
        table = {str(k): v for k, v in map_location.items()}
        return lambda st: to(st.array, table.get(st.location, st.location), st.location)
    if callable(map_location):
        def call(st):
            out = map_location(Tensor._from_op(st.array), st.location)
            if out is None:
                return to(st.array, st.location, st.location)
            if not isinstance(out, Tensor) or out.ndim != 1 or out.shape[0] != st.array.size:
                raise SerializationError(f"map_location returned {type(out).__name__} for storage {st.key}; "
                                         "expected the storage (a 1-d Tensor of its length), maybe moved")
            return out.array
        return call
    raise TypeError(f"map_location must be None, a str, a device, a dict or a callable, got {type(map_location).__name__}")
