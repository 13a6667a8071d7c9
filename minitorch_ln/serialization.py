"""``save`` and ``load`` for checkpoints of any shape, in the safetensors format, without pickle.

``save(obj, f)`` takes any nesting of dicts, lists, tuples, Tensors, NumPy arrays, numbers, strings,
booleans and ``None`` (a nanoGPT checkpoint dict: model and optimizer state dicts, ints, floats,
config dicts). The tensors go in one safetensors file (each array once: tied weights and views of
one buffer keep sharing memory when loaded); the structure goes, as JSON, in the file's metadata
(``minitorch_ln.structure``; the codec is :mod:`minitorch_ln.interop.checkpoint_tree`). Loading
parses JSON and arrays only: it never executes code, whatever the file holds.

A flat state dict of distinct tensors is stored under its own names, so
``safetensors.torch.load_file(path)`` reads it into PyTorch tensors and a model trained here moves
to PyTorch with ``torch_model.load_state_dict(load_file(path))`` (nested checkpoints name their
tensors by path, ``"model/lm_head.weight"``; a tied weight is stored under its first name only).
Files written before the structure existed (flat state dicts) still load.

``torch.save`` files are read too (the zip format and the legacy stream), through an allow-listed
unpickler that never executes code (:mod:`minitorch_ln.torch_format`), and ``save(obj, f,
format="torch")`` writes the zip format that real ``torch.load(f, weights_only=True)`` reads.
Under the torch alias, ``torch.save`` writes that format to a path ending ``.pt``/``.pth``/``.ckpt``/
``.bin``/``.tar`` or when ``_use_new_zipfile_serialization`` is passed (:func:`torch_save`);
``docs/checkpoints.md`` has the whole story.

Writes are atomic: the bytes go to a temporary file in the destination's directory, are flushed to
disk, and only then renamed over the destination (``os.replace``, atomic on POSIX and Windows). A
crash or Ctrl-C mid-write leaves the previous file intact. :func:`save` also records a SHA-256 of
the tensors in the file's metadata, and :func:`load` checks it, so a corrupted or truncated file is
reported as such instead of loading wrong numbers.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tempfile
from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from . import backend
from .errors import SerializationError
from .tensor import Tensor

__all__ = ["save", "load", "load_metadata", "SerializationError", "atomic_write_bytes", "atomic_write_text",
           "atomic_write_json", "torch_save"]

_HASH_KEY = "minitorch_ln.sha256"
_STRUCT_KEY = "minitorch_ln.structure"
_FORMAT_KEY = "format"


# ----------------------------------------------------------------------------------------------
# Atomic writes
# ----------------------------------------------------------------------------------------------


def atomic_write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temporary file in the same directory, fsync, ``os.replace``.

    Raises:
        FileNotFoundError: when the destination directory does not exist.
        OSError: when the destination cannot be written (no permission, a read-only or full file
            system, a directory at ``path``); it names ``path``, never the temporary file.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot write {path!r}: the directory {directory!r} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "it is a directory, expected a file path", path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    except OSError as exc:  # name the user's path, not the hidden temporary file's
        raise OSError(exc.errno, f"cannot write there ({exc.strerror})", path) from None
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; give the usual permissions
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.filename != path:  # e.g. a full disk while writing the temporary file
            raise OSError(exc.errno, f"cannot write there ({exc.strerror})", path) from None
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path, text: str) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path, obj) -> None:
    """:func:`atomic_write_bytes` for an object as indented JSON."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


# ----------------------------------------------------------------------------------------------
# save / load
# ----------------------------------------------------------------------------------------------


def _tensor_digest(arrays: "Mapping[str, np.ndarray]", structure: "str | None" = None) -> str:
    """SHA-256 over every tensor's name, dtype, shape and bytes, in name order (then the structure's JSON)."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = arrays[name]
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    if structure is not None:
        h.update(b"\0structure\0" + structure.encode("utf-8"))
    return h.hexdigest()


def _is_file(f) -> bool:
    return not isinstance(f, (str, bytes, os.PathLike)) and (hasattr(f, "write") or hasattr(f, "read"))


def _is_bare_array(v) -> bool:
    return isinstance(v, np.ndarray) or type(v).__module__.startswith("cupy")


def _is_state_dict(obj) -> bool:
    return isinstance(obj, Mapping) and all(
        isinstance(k, str) and (isinstance(v, Tensor) or _is_bare_array(v)) for k, v in obj.items())


def save(obj, f, metadata: "Mapping[str, str] | None" = None, pickle_module=None, pickle_protocol=None,
         *, format: str = "safetensors", **_ignored) -> None:  # noqa: A002 - the format's name
    """Save ``obj`` (any nesting of dicts, lists, tuples, Tensors, arrays, numbers, str, bool, None) to ``f``.

    Args:
        obj: e.g. ``model.state_dict()`` or ``{'model': ..., 'optimizer': opt.state_dict(), 'iter_num': 5}``.
            Dict keys may be str, int, float, bool, None or tuples of those; ``OrderedDict`` is kept.
            NumPy arrays load as NumPy arrays, except in a flat ``{str: Tensor or array}`` state
            dict, which loads as ``{str: Tensor}`` (the contract of the earlier ``save``).
            Tensors keep dtype, shape, device, ``requires_grad`` and ``Parameter``-ness; the same
            Tensor/array object saved twice, and arrays sharing memory, are stored once.
        f: a path (written atomically: temporary file, fsync, rename) or a binary file object
            (``f.write`` is called once), as ``torch.save``.
        metadata: optional ``{str: str}`` stored in the file's header.
        pickle_module, pickle_protocol: accepted for ``torch.save`` compatibility; ``pickle_protocol``
            (2 unless given) is used by ``format="torch"`` only.
        format: ``"safetensors"`` (the default: safetensors plus JSON, no pickle) or ``"torch"``
            (PyTorch's zip format, for real ``torch.load(f, weights_only=True)``; tensors,
            containers, numbers, strings, dtypes, Size and device only; see
            :mod:`minitorch_ln.torch_format.writer`).

    Raises:
        SerializationError: an object that cannot be saved (its place in ``obj`` and type named),
            metadata that is not ``{str: str}``.
        FileNotFoundError: the destination directory does not exist.
        OSError: ``f`` cannot be written; the error names ``f``.
    """
    from safetensors.numpy import save as st_save  # noqa: PLC0415 - keeps `import minitorch_ln` light

    from .interop.checkpoint_tree import TreeError, encode  # noqa: PLC0415

    if format == "torch":
        from .torch_format import save_torch  # noqa: PLC0415

        save_torch(obj, f, 2 if pickle_protocol is None else pickle_protocol, atomic_write_bytes)
        return
    if format != "safetensors":
        raise ValueError(f"save: format must be 'safetensors' or 'torch', got {format!r}")
    meta = {}
    for k, v in (metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str) or k.startswith("minitorch_ln."):
            raise SerializationError(f"metadata must map str to str (keys not starting 'minitorch_ln.'), "
                                     f"got {k!r}: {v!r}")
        meta[k] = v
    if _is_state_dict(obj):  # the old contract: a flat {str: Tensor or array} loads as {str: Tensor}
        wrapped = [(k, Tensor._from_op(v) if _is_bare_array(v) else v) for k, v in obj.items()]
        obj = OrderedDict(wrapped) if isinstance(obj, OrderedDict) else dict(wrapped)
    try:
        tree, arrays = encode(obj)
    except TreeError as exc:
        raise SerializationError(str(exc)) from None
    except RecursionError:
        raise SerializationError("cannot save obj: it is nested too deeply") from None
    structure = json.dumps(tree, allow_nan=False, separators=(",", ":"))
    meta.setdefault(_FORMAT_KEY, "pt")  # transformers' convention; harmless elsewhere
    meta[_STRUCT_KEY] = structure
    meta[_HASH_KEY] = _tensor_digest(arrays, structure)
    data = st_save(dict(arrays), metadata=meta)
    if _is_file(f):
        f.write(data)
    else:
        atomic_write_bytes(f, data)


def _read(f) -> "tuple[bytes, str]":
    if _is_file(f):
        if not hasattr(f, "read"):
            raise SerializationError(f"load expects a path or a readable binary file, got {type(f).__name__}")
        raw = f.read()
        if not isinstance(raw, (bytes, bytearray, memoryview)):
            raise SerializationError("load expects a binary file (opened with 'rb'); read() returned text")
        return bytes(raw), getattr(f, "name", f"<{type(f).__name__}>")
    path = os.fspath(f)
    if not os.path.exists(path):
        raise FileNotFoundError(f"checkpoint file {path!r} does not exist")
    if os.path.isdir(path):
        raise SerializationError(f"{path!r} is a directory: expected a .safetensors file")
    with open(path, "rb") as fh:
        return fh.read(), path


def _header(raw: bytes, path) -> dict:
    """The JSON header of a safetensors file, checked against the file's length."""
    if len(raw) < 8:
        raise SerializationError(f"{path!r} is not a safetensors file: it has only {len(raw)} bytes")
    n = int.from_bytes(raw[:8], "little")
    if n > len(raw) - 8:
        raise SerializationError(
            f"{path!r} is truncated or not a safetensors file: its header claims {n} bytes but the file "
            f"has {len(raw) - 8} after the length prefix"
        )
    try:
        header = json.loads(raw[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise SerializationError(f"{path!r} is not a safetensors file: its header is not JSON") from None
    if not isinstance(header, dict):
        raise SerializationError(f"{path!r} is not a safetensors file: its header is not a JSON object")
    return header


def load_metadata(path) -> dict:
    """The ``{str: str}`` metadata stored in a safetensors file's header (without reading the tensors).

    Raises:
        FileNotFoundError, SerializationError: as :func:`load`.
    """
    raw, name = _read(path)
    meta = _header(raw, name).get("__metadata__") or {}
    return dict(meta)


def _placement(map_location, name):
    """``target(saved_device: str) -> Device`` for ``map_location`` (None, str, Device, dict or callable)."""
    if callable(map_location) and not isinstance(map_location, (str, backend.Device)):
        return lambda saved: backend.device(saved)  # the callable is applied to each Tensor afterwards
    if isinstance(map_location, Mapping):
        table = {str(backend.device(k)): backend.device(v) for k, v in map_location.items()}
        return lambda saved: table.get(str(backend.device(saved)), backend.device(saved))
    if map_location is not None:
        dev = backend.device(map_location)
        return lambda saved: dev
    return backend.device


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, device=None, **_ignored):
    """Load what :func:`save` wrote (or any safetensors file) from a path or a binary file object.

    Args:
        f: a path or a readable binary file object.
        map_location: where Tensors go, as ``torch.load``'s: ``None`` (the device each was saved
            from), ``'cpu'``/``'cuda'``/``'cuda:1'``/a Device (all there), a dict mapping saved
            devices to targets (``{'cuda:0': 'cpu'}``), or a callable ``fn(tensor, location)``
            given each Tensor (on its saved device) and its saved device string, returning the
            Tensor to use. NumPy arrays in the checkpoint stay NumPy arrays.
        weights_only: loading is always "weights only": a safetensors file holds JSON and arrays,
            and a ``torch.save`` file goes through the allow-listed unpickler whatever this says
            (``False`` loads what the allow-list allows and names any other global: minitorch_ln
            never runs pickle code).
        mmap: for a ``torch.save`` zip file given by path, memory-map it (copy-on-write) instead
            of reading it; ignored otherwise. pickle_module: accepted and ignored.
        device: the older name of ``map_location``.

    Returns:
        the saved object, with dict types (``dict``/``OrderedDict``), tuples and lists as saved.
        A ``torch.save`` file gives its object with minitorch_ln Tensors (views of one storage
        sharing memory), Parameters, ``Size``, devices and dtypes in place of PyTorch's.
        A safetensors file without minitorch_ln's structure (written by PyTorch, or by an older
        minitorch_ln) gives an ``OrderedDict`` of name to Tensor in the file's order.

    Raises:
        FileNotFoundError: ``f`` does not exist.
        SerializationError: neither a safetensors nor a ``torch.save`` file, a pickle naming a
            global outside the allow-list (the global named; nothing executed), truncated, corrupt (the SHA-256 recorded at save time does not match), or a
            structure that does not decode.
        DeviceError: a Tensor saved on a GPU with no GPU here and no ``map_location``.
    """
    from safetensors.numpy import load as st_load  # noqa: PLC0415

    from .interop.checkpoint_tree import TreeError, decode  # noqa: PLC0415

    from .torch_format import is_torch_file, load_torch, read_source  # noqa: PLC0415

    if map_location is None:
        map_location = device
    if mmap and not _is_file(f) and os.path.isfile(f):
        raw, name = read_source(f, use_mmap=True)
        if raw[:4] == b"PK\x03\x04":
            return load_torch(raw, name, map_location, weights_only is not False, mmap=True)
        raw = bytes(raw)
    else:
        raw, name = _read(f)
    if is_torch_file(raw):
        return load_torch(raw, name, map_location, weights_only is not False)
    header = _header(raw, name)
    try:
        arrays = st_load(raw)
    except Exception as exc:  # safetensors raises its own SafetensorError for every malformed file
        raise SerializationError(f"{name!r} is corrupt or truncated: safetensors could not read it ({exc})") from None
    meta = header.get("__metadata__") or {}
    structure = meta.get(_STRUCT_KEY)
    expected = meta.get(_HASH_KEY)
    if expected is not None and _tensor_digest(arrays, structure) != expected:
        raise SerializationError(f"{name!r} is corrupt: its tensors do not match the SHA-256 recorded when it was saved")
    arrays = {k: (a if a.flags.writeable else a.copy()) for k, a in arrays.items()}
    target = _placement(map_location, name)

    def where(node):
        dev = target(node.get("device", "cpu"))
        if dev.type == "cuda" and not backend.cuda_is_available():
            raise backend.DeviceError(
                f"{name!r} holds a tensor saved on {node.get('device', 'cpu')}, and no GPU is usable here; on a "
                "CPU-only machine, load with map_location='cpu'")
        return dev

    def to_tensor(arr, node):
        if node.get("parameter"):
            from .nn.parameter import Parameter  # noqa: PLC0415

            t = Parameter(Tensor._from_op(arr), requires_grad=bool(node.get("requires_grad")))
        else:
            t = Tensor._from_op(arr)
            if node.get("requires_grad"):
                t.requires_grad_(True)
        if callable(map_location) and not isinstance(map_location, (str, backend.Device, Mapping)):
            t = map_location(t, node.get("device", "cpu"))
        return t

    if structure is None:  # a plain safetensors file: {name: Tensor} in the file's order
        names = sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][0])
        tree = OrderedDict((k, {"__tensor__": k}) for k in names)
        return OrderedDict((k, decode(v, arrays, where, to_tensor)) for k, v in tree.items())
    try:
        return decode(json.loads(structure), arrays, where, to_tensor)
    except (json.JSONDecodeError, TreeError, KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, backend.DeviceError):
            raise
        raise SerializationError(f"{name!r} is corrupt: its structure does not decode ({exc})") from None


_TORCH_SUFFIXES = (".pt", ".pth", ".ckpt", ".bin", ".tar")


def torch_save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=None,
               _disable_byteorder_record=False, *, format=None, metadata=None) -> None:  # noqa: A002
    """``torch.save`` under the torch alias: PyTorch's zip format (``format="torch"``) when ``f`` is a
    path ending ``.pt``, ``.pth``, ``.ckpt``, ``.bin`` or ``.tar``, or when the script passes
    ``_use_new_zipfile_serialization`` (the zip format either way: the legacy format is read, never
    written); else :func:`save`'s default, safetensors plus JSON. ``format=`` decides outright.
    """
    if format is None:
        named = not _is_file(f) and os.fspath(f).lower().endswith(_TORCH_SUFFIXES)
        format = "torch" if named or _use_new_zipfile_serialization is not None else "safetensors"
    save(obj, f, metadata, pickle_module, pickle_protocol, format=format)
