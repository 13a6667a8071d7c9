"""The allow-listed unpickler for ``torch.save`` files: it rebuilds data, and never runs code.

A pickle is a small program: ``GLOBAL module name`` looks a callable up by name and ``REDUCE``
calls it, so unpickling with the standard :class:`pickle.Unpickler` can run anything the file
names (``posix.system``). This unpickler answers every name from its own table
(:data:`ALLOWED`), the same names PyTorch's ``weights_only=True`` allows (its
``torch/_weights_only_unpickler.py``): ``torch._utils._rebuild_tensor_v2`` and the parameter
rebuilders, ``collections.OrderedDict``, ``torch.Size``, ``torch.device``, the dtypes, the storage
types, ``_codecs.encode`` (bytes), ``builtins.set``/``bytearray``/``complex``. Each name maps to
minitorch_ln's own function or class; nothing named ``torch`` is imported. Any other name raises
:class:`ForbiddenGlobalError` naming it, before anything is called. Classes registered with
:func:`minitorch_ln.safe_globals.add_safe_globals` are allowed too and rebuilt by PyTorch's
rules: ``REDUCE`` calls them, ``NEWOBJ`` calls ``cls.__new__(cls, *args)``, ``BUILD`` calls
``__setstate__`` or updates ``__dict__``. ``BUILD`` on anything else raises, as PyTorch's.

The pure-Python :class:`pickle._Unpickler` is used because its opcodes are a table that can be
overridden (``REDUCE``, ``NEWOBJ``, ``BUILD`` check their target here); the pickle of a checkpoint
is small (the tensors' bytes are separate records), so its speed does not matter.
"""

from __future__ import annotations

import codecs
import io
import pickle
import re
from collections import Counter, OrderedDict

import numpy as np

from .. import backend, safe_globals
from ..errors import SerializationError
from ..size import Size

__all__ = ["STORAGE_DTYPES", "TORCH_DTYPES", "ForbiddenGlobalError", "RestrictedUnpickler", "StorageType"]


class ForbiddenGlobalError(SerializationError, pickle.UnpicklingError):
    """A pickle names a global outside the allow-list (a ``SerializationError`` and an ``UnpicklingError``)."""


class StorageType:
    """``torch.FloatStorage`` and its kin, as a pickle names them: the dtype of a storage's elements."""

    def __init__(self, name: str, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self) -> str:
        return f"torch.{self.name}"


def _bfloat16():
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


# storage type -> element dtype (a callable for those needing an import)
STORAGE_DTYPES = {
    "FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
    "BFloat16Storage": _bfloat16, "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
    "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
    "ComplexFloatStorage": np.complex64, "ComplexDoubleStorage": np.complex128,
}
# torch.<name> dtype globals -> NumPy dtype
TORCH_DTYPES = {
    "float32": np.float32, "float": np.float32, "float64": np.float64, "double": np.float64,
    "float16": np.float16, "half": np.float16, "bfloat16": _bfloat16, "int64": np.int64, "long": np.int64,
    "int32": np.int32, "int": np.int32, "int16": np.int16, "short": np.int16, "int8": np.int8,
    "uint8": np.uint8, "bool": np.bool_, "complex64": np.complex64, "cfloat": np.complex64,
    "complex128": np.complex128, "cdouble": np.complex128,
}


def _element_dtype(spec) -> np.dtype:
    return spec() if callable(spec) and not isinstance(spec, type) else np.dtype(spec)


def _torch_dtype(name: str):
    """``torch.<name>`` as minitorch_ln's dtype; an unsupported one is minitorch_ln's named placeholder if any."""
    d = _element_dtype(TORCH_DTYPES[name])
    try:
        return backend.as_dtype(d)
    except TypeError:
        from .. import dtypes

        placeholder = getattr(dtypes, name, None)
        if placeholder is None:
            raise SerializationError(f"the file holds the dtype torch.{name}, which minitorch_ln does not have") from None
        return placeholder


def _device(kind, index=None):
    if isinstance(kind, str) and index is None:
        return backend.device(kind)
    return backend.device(f"{kind}:{int(index)}")


def _encode(text, encoding="latin1"):
    if encoding not in ("latin1", "latin-1") or not isinstance(text, str):
        raise SerializationError(f"_codecs.encode is allowed for latin1 text only (how protocol 2 stores bytes), "
                                 f"got encoding {encoding!r}")
    return codecs.encode(text, encoding)


class RestrictedUnpickler(pickle._Unpickler):
    """Unpickle with the allow-list; ``rebuild`` is a :class:`~.rebuild.Rebuilder` for tensors and storages."""

    dispatch = dict(pickle._Unpickler.dispatch)  # noqa: RUF012 - pickle looks its opcode table up here

    def __init__(self, file, rebuild, name: str):
        super().__init__(file, encoding="utf-8")
        self._rebuild, self._name = rebuild, name
        self._user = {}
        for entry in safe_globals.get_safe_globals():
            if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
                self._user[entry[1]] = entry[0]
            else:
                self._user[f"{entry.__module__}.{entry.__qualname__}"] = entry
        self._allowed = self._table()
        self._callable = {id(v) for v in self._allowed.values()} | {id(v) for v in self._user.values()}

    def _table(self) -> dict:
        r = self._rebuild
        table = {
            "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
            "builtins.set": set, "builtins.bytearray": bytearray, "builtins.complex": complex,
            "_codecs.encode": _encode, "torch.Size": Size, "torch.device": _device,
            "torch._utils._rebuild_tensor": r.tensor_v1, "torch._utils._rebuild_tensor_v2": r.tensor_v2,
            "torch._utils._rebuild_tensor_v3": r.tensor_v3, "torch._utils._rebuild_parameter": r.parameter,
            "torch._utils._rebuild_parameter_with_state": r.parameter_with_state,
            "torch._tensor._rebuild_from_type_v2": r.from_type_v2,
            "torch.Tensor": r.TENSOR_TYPE, "torch.nn.parameter.Parameter": r.PARAMETER_TYPE,
        }
        table.update({f"torch.{name}": StorageType(name, spec) for name, spec in STORAGE_DTYPES.items()})
        return table

    def find_class(self, module: str, name: str):
        if module == "__builtin__":  # protocol 2 names builtins so
            module = "builtins"
        qualname = f"{module}.{name}"
        if qualname in self._allowed:
            return self._allowed[qualname]
        if module == "torch" and name in TORCH_DTYPES:
            return _torch_dtype(name)
        if qualname in self._user:
            return self._user[qualname]
        if qualname == "torch.storage.UntypedStorage":  # bytes: _rebuild_tensor_v3 names the dtype
            return StorageType("UntypedStorage", np.uint8)
        if module == "torch" and re.fullmatch(r"u?int\d+|float\d+\w*|complex\d+|chalf|bits\w+|q\w+", name):
            raise SerializationError(f"{self._name!r} holds a tensor of dtype torch.{name}, which minitorch_ln does "
                                     "not have")
        if module == "torch" and name.endswith("Storage"):
            raise SerializationError(f"{self._name!r} holds a torch.{name}, a storage type minitorch_ln cannot "
                                     f"read (it reads {', '.join(sorted(STORAGE_DTYPES))})")
        raise ForbiddenGlobalError(
            f"{self._name!r}: weights-only load refused: the pickle names the global {qualname}, which is not on "
            f"the allow-list, and nothing was executed. If you trust the file and {qualname} is data, register it "
            f"with minitorch_ln.safe_globals.add_safe_globals([{name}]) (torch.serialization.add_safe_globals)")

    def persistent_load(self, pid):
        return self._rebuild.storage(pid)

    def _check_callable(self, func):
        if id(func) not in self._callable:
            raise ForbiddenGlobalError(f"{self._name!r}: the pickle calls {func!r}, which is not an allowed global; "
                                       "nothing was executed")

    def load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        self._check_callable(func)
        if not isinstance(args, tuple):
            raise SerializationError(f"{self._name!r} is corrupt: REDUCE with arguments of type {type(args).__name__}")
        self.stack[-1] = func(*args)

    dispatch[pickle.REDUCE[0]] = load_reduce

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        self._check_callable(cls)
        if not isinstance(cls, type):
            raise SerializationError(f"{self._name!r} is corrupt: NEWOBJ on {cls!r}, which is not a class")
        self.append(cls.__new__(cls, *args))

    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_newobj_ex(self):
        raise SerializationError(f"{self._name!r}: NEWOBJ_EX (pickle protocol 4 keyword construction) is not "
                                 "allowed in a weights-only load")

    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is OrderedDict and isinstance(state, dict):  # a state dict's _metadata
            inst.__dict__.update(state)
            return
        if self._rebuild.is_tensor(inst):
            self._rebuild.set_state(inst, state)
            return
        if any(type(inst) is v for v in self._user.values()):  # PyTorch's rule for a registered class
            if getattr(type(inst), "__setstate__", None) is not None:
                inst.__setstate__(state)
                return
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            inst.__dict__.update(state or {})
            for k, v in (slotstate or {}).items():
                setattr(inst, k, v)
            return
        raise ForbiddenGlobalError(f"{self._name!r}: the pickle sets the state of a {type(inst).__name__}; a "
                                   "weights-only load can only build Tensor, Parameter, OrderedDict or types "
                                   "registered with add_safe_globals")

    dispatch[pickle.BUILD[0]] = load_build

    def load_inst(self):
        raise SerializationError(f"{self._name!r}: the INST/OBJ opcodes (pickle protocol 0/1 objects) are not "
                                 "allowed in a weights-only load")

    dispatch[pickle.INST[0]] = load_inst
    dispatch[pickle.OBJ[0]] = load_inst


def unpickle(data, rebuild, name: str):
    """The next object in ``data`` (bytes, or a binary file read from its position); errors of a
    malformed pickle become :class:`SerializationError`."""
    try:
        return RestrictedUnpickler(io.BytesIO(data) if isinstance(data, bytes) else data, rebuild, name).load()
    except SerializationError:
        raise
    except (pickle.UnpicklingError, EOFError, IndexError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SerializationError(f"{name!r} is corrupt or truncated: its pickle does not load "
                                 f"({type(exc).__name__}: {exc})") from None
