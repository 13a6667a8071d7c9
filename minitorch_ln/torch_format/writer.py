"""Writing ``torch.save``'s zip format, which real ``torch.load(f, weights_only=True)`` reads.

The pickle names only globals on PyTorch's weights-only allow-list: tensors are
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())``,
Parameters ``torch._utils._rebuild_parameter(tensor, requires_grad, OrderedDict())``, storages the
persistent id ``('storage', torch.FloatStorage, key, location, numel)``; then ``torch.Size``,
``torch.device``, the dtypes (``torch.float32``), ``collections.OrderedDict``, ``builtins.set`` and
``_codecs.encode`` (bytes). Tensors that are views of one array share one storage (offset and
strides in elements), so views stay views in PyTorch; a view whose memory cannot be described so
(negative strides, a reinterpreted dtype) is written as a contiguous copy of its own.

Since minitorch_ln does not import ``torch``, the pickler writes these names itself: the
pure-Python :class:`pickle._Pickler` with ``save_global`` writing ``GLOBAL module name`` for the
allowed stand-ins and refusing anything else (a function, a class, an object of another type),
naming its type. NumPy scalars are written as Python numbers (PyTorch's weights-only load refuses
NumPy globals); NumPy arrays are refused (wrap them in a Tensor).

Records are stored uncompressed with their bytes aligned to 64, as PyTorch's writer does, so
``torch.load(..., mmap=True)`` works on them.
"""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from collections import Counter, OrderedDict

import numpy as np

from .. import backend
from ..errors import SerializationError
from ..nn.parameter import Parameter
from ..size import Size
from ..tensor import Tensor
from .unpickler import STORAGE_DTYPES, TORCH_DTYPES

__all__ = ["save_torch", "torch_bytes"]

_ALIGN = 64


class _Global:
    """A PyTorch global by name (``torch._utils._rebuild_tensor_v2``), written as ``GLOBAL``, never imported."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce wants a callable; this one is only ever written
        raise TypeError(f"{self.module}.{self.name} is a name to write into a pickle, not a function")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_SIZE, _DEVICE = _Global("torch", "Size"), _Global("torch", "device")
_ENCODE = _Global("_codecs", "encode")


def _storage_name(dtype) -> str:
    for name, spec in STORAGE_DTYPES.items():
        if (spec() if callable(spec) and not isinstance(spec, type) else np.dtype(spec)) == dtype:
            return name
    raise SerializationError(f"cannot save a {dtype} tensor in the torch format")


def _dtype_name(dtype) -> str:
    for name, spec in TORCH_DTYPES.items():  # the first (canonical) name of each dtype
        if (spec() if callable(spec) and not isinstance(spec, type) else np.dtype(spec)) == dtype:
            return name
    raise SerializationError(f"cannot save the dtype {dtype} in the torch format")


class _Storages:
    """Each tensor's ``(storage key, offset, strides)``; views of one array share a storage."""

    def __init__(self):
        self.records: dict = {}  # key -> (1-d array, location)
        self._by_root: dict = {}  # (id(root), dtype, location) -> key

    def place(self, array, location: str) -> tuple:
        item = array.dtype.itemsize
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        ptr = array.__array_interface__["data"][0] - root.__array_interface__["data"][0] if array.size else -1
        if (array.size and root.dtype == array.dtype and root.flags.c_contiguous and ptr >= 0 and ptr % item == 0
                and all(s >= 0 and s % item == 0 for s in array.strides)):
            ident = (id(root), array.dtype.str, location)
            if ident not in self._by_root:
                self._by_root[ident] = self._new(root.reshape(-1), location)
            return self._by_root[ident], ptr // item, tuple(s // item for s in array.strides)
        flat = np.ascontiguousarray(array).reshape(-1)
        strides, acc = [], 1
        for n in reversed(array.shape):
            strides.insert(0, acc)
            acc *= max(n, 1)
        return self._new(flat, location), 0, tuple(strides)

    def _new(self, flat, location) -> str:
        key = str(len(self.records))
        self.records[key] = (flat, location)
        return key


class _StorageRef:
    """A storage as the pickle names it: written as the persistent id ``('storage', type, key, location, numel)``."""

    def __init__(self, storage_type: _Global, key: str, location: str, numel: int):
        self.pid = ("storage", storage_type, key, location, numel)


class _Reduced:
    """A reduce tuple to be written as it is (the tensor inside a Parameter)."""

    def __init__(self, rv):
        self.rv = rv


class _TorchPickler(pickle._Pickler):
    dispatch = dict(pickle._Pickler.dispatch)  # noqa: RUF012 - pickle looks its type table up here

    def __init__(self, file, protocol: int):
        super().__init__(file, protocol=protocol)
        self.storages = _Storages()
        self._keep = []  # objects made while pickling, kept alive so that their ids (the memo's keys) stay unique
        self._types: dict = {}

    def persistent_id(self, obj):
        return obj.pid if isinstance(obj, _StorageRef) else None

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, np.generic):  # a NumPy scalar: its Python number (PyTorch refuses NumPy globals)
            obj = obj.item()
        super().save(obj, save_persistent_id)

    def _tensor_rv(self, obj: Tensor) -> tuple:
        if obj.requires_grad and obj.grad_fn is not None:
            raise SerializationError("cannot save a non-leaf tensor that requires grad (as PyTorch): save "
                                     "t.detach() or the leaf tensors")
        arr, location = obj.array, str(backend.device_of(obj.array))
        if location != "cpu":
            arr = backend.to_device(arr, "cpu")
        key, offset, strides = self.storages.place(arr, location)
        flat = self.storages.records[key][0]
        name = _storage_name(flat.dtype)
        ref = _StorageRef(self._types.setdefault(name, _Global("torch", name)), key, location, int(flat.size))
        self._keep.append(ref)
        return _REBUILD_TENSOR, (ref, offset, tuple(arr.shape), strides, bool(obj.requires_grad), OrderedDict())

    def reducer_override(self, obj):
        if isinstance(obj, Parameter):
            inner = _Reduced(self._tensor_rv(obj))
            self._keep.append(inner)
            return _REBUILD_PARAMETER, (inner, bool(obj.requires_grad), OrderedDict())
        if isinstance(obj, Tensor):
            return self._tensor_rv(obj)
        if isinstance(obj, Size):
            return _SIZE, (tuple(int(n) for n in obj),)
        if isinstance(obj, backend.Device):
            return _DEVICE, ((obj.type,) if obj.index is None else (obj.type, obj.index))
        if isinstance(obj, np.dtype):
            return _dtype_name(obj)  # a str: written as the global torch.<name>
        if type(obj).__name__ == "UnsupportedDtype":  # minitorch_ln's named placeholder of a PyTorch dtype
            return obj.name
        if isinstance(obj, np.ndarray) or type(obj).__module__.startswith("cupy"):
            raise SerializationError(f"cannot save a {type(obj).__name__} in the torch format (PyTorch's weights-only "
                                     "load refuses NumPy globals): wrap it in a Tensor (minitorch_ln.from_numpy)")
        return NotImplemented

    def save_global(self, obj, name=None):
        if isinstance(obj, _Global):
            module, name = obj.module, obj.name
        elif name is not None and (isinstance(obj, np.dtype) or type(obj).__name__ == "UnsupportedDtype"):
            module = "torch"
        elif obj is OrderedDict or obj is Counter:
            module, name = "collections", obj.__name__
        elif obj in (set, bytearray, complex):
            module, name = "__builtin__", obj.__name__
        else:
            what = getattr(obj, "__qualname__", type(obj).__name__)
            raise SerializationError(f"cannot save {getattr(obj, '__module__', '?')}.{what} in the torch format: "
                                     "PyTorch's weights-only load allows tensors, containers, numbers, strings, "
                                     "dtypes, torch.Size and torch.device only")
        self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())
        self.memoize(obj)

    def save_reduced(self, obj):
        self.save_reduce(*obj.rv, obj=obj)

    def save_bytes(self, obj):
        self.save_reduce(_ENCODE, (str(obj, "latin1"), "latin1"), obj=obj)

    dispatch[_Global] = save_global
    dispatch[_Reduced] = save_reduced
    dispatch[bytes] = save_bytes


def torch_bytes(obj, archive: str = "archive", pickle_protocol: int = 2) -> bytes:
    """The bytes of a zip-format ``torch.save`` file holding ``obj``."""
    buf = io.BytesIO()
    pickler = _TorchPickler(buf, protocol=pickle_protocol)
    try:
        pickler.dump(obj)
    except RecursionError:
        raise SerializationError("cannot save obj: it is nested too deeply") from None
    out = io.BytesIO()
    records = [("data.pkl", buf.getvalue()), (".format_version", b"1"), (".storage_alignment", b"64"),
               ("byteorder", b"little")]
    records += [(f"data/{key}", np.ascontiguousarray(flat).tobytes()) for key, (flat, _) in pickler.storages.records.items()]
    records += [("version", b"3\n"), (".data/serialization_id", os.urandom(20).hex().encode())]
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, data in records:
            info = zipfile.ZipInfo(f"{archive}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            start = out.tell() + 30 + len(info.filename.encode("utf-8")) + 4  # local header, name, extra's header
            pad = -start % _ALIGN
            info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad  # PyTorch's padding field
            info.compress_type = zipfile.ZIP_STORED
            zf.writestr(info, data)
    return out.getvalue()


def save_torch(obj, f, pickle_protocol, write_path) -> None:
    """Write ``obj`` to ``f`` (a path, through ``write_path(path, bytes)``, or a binary file) in
    ``torch.save``'s zip format; the records' folder is the file's stem (``archive`` for a file object)."""
    if pickle_protocol not in (2, 3, 4, 5):
        raise SerializationError(f"pickle_protocol must be 2 to 5, got {pickle_protocol!r}")
    is_file = hasattr(f, "write")
    archive = "archive" if is_file else (os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive")
    data = torch_bytes(obj, archive, pickle_protocol)
    if is_file:
        f.write(data)
    else:
        write_path(f, data)
