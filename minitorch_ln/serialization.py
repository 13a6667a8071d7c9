"""``save`` and ``load`` for state dicts, in the safetensors format.

A file written by :func:`save` is a plain safetensors file (written with the ``safetensors.numpy``
API), so ``safetensors.torch.load_file(path)`` reads it into PyTorch tensors: a model trained here
moves to PyTorch with ``torch_model.load_state_dict(load_file(path))``.

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
from .tensor import Tensor

__all__ = ["save", "load", "load_metadata", "SerializationError", "atomic_write_bytes", "atomic_write_text",
           "atomic_write_json"]

_HASH_KEY = "minitorch_ln.sha256"
_FORMAT_KEY = "format"


class SerializationError(ValueError):
    """A file that is not a readable safetensors file, is truncated or corrupt, or an unsavable object."""


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


def _tensor_digest(arrays: "Mapping[str, np.ndarray]") -> str:
    """SHA-256 over every tensor's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = arrays[name]
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _to_numpy(name, value) -> np.ndarray:
    if isinstance(value, Tensor):
        value = value.array
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a PyTorch tensor
        value = value.detach().cpu().numpy()
    if not hasattr(value, "dtype") or not hasattr(value, "shape"):
        raise SerializationError(
            f"cannot save {name!r}: expected a Tensor or an array, got {type(value).__name__}"
        )
    arr = backend.to_device(value, "cpu")
    arr = np.asarray(arr, order="C")  # not ascontiguousarray, which turns a 0-d array into shape (1,)
    if arr.dtype.kind not in "biuf":
        raise SerializationError(f"cannot save {name!r}: dtype {arr.dtype} is not a number type safetensors stores")
    return arr


def save(obj, path, metadata: "Mapping[str, str] | None" = None) -> None:
    """Save a state dict (``{name: Tensor or array}``) to ``path`` as safetensors, atomically.

    Args:
        obj: a mapping from ``str`` names to :class:`Tensor` (any device), NumPy/CuPy arrays or
            PyTorch tensors. Tied entries (one array under two names) are stored twice.
        path: the destination file (conventionally ``*.safetensors``); its directory must exist.
        metadata: optional ``{str: str}`` stored in the file's header.

    Raises:
        SerializationError: when ``obj`` is not a mapping of str to tensors/arrays, or metadata is
            not ``{str: str}``.
        FileNotFoundError: when the destination directory does not exist.
        OSError: when ``path`` cannot be written; the error names ``path``.
    """
    from safetensors.numpy import save as st_save  # noqa: PLC0415 - keeps `import minitorch_ln` light

    if not isinstance(obj, Mapping):
        raise SerializationError(
            f"save expects a state dict (a mapping of names to tensors), got {type(obj).__name__}; "
            "for a model, save model.state_dict()"
        )
    arrays = OrderedDict()
    for name, value in obj.items():
        if not isinstance(name, str):
            raise SerializationError(f"state dict keys must be str, got {name!r} ({type(name).__name__})")
        arrays[name] = _to_numpy(name, value)
    meta = {}
    for k, v in (metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise SerializationError(f"metadata must map str to str, got {k!r}: {v!r}")
        meta[k] = v
    meta.setdefault(_FORMAT_KEY, "pt")  # transformers' convention; harmless elsewhere
    meta[_HASH_KEY] = _tensor_digest(arrays)
    atomic_write_bytes(path, st_save(dict(arrays), metadata=meta))


def _read(path) -> bytes:
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"checkpoint file {path!r} does not exist")
    if os.path.isdir(path):
        raise SerializationError(f"{path!r} is a directory: expected a .safetensors file")
    with open(path, "rb") as f:
        return f.read()


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
    header = _header(_read(path), os.fspath(path))
    meta = header.get("__metadata__") or {}
    return dict(meta)


def load(path, device=None) -> "OrderedDict[str, Tensor]":
    """Load a safetensors file into ``{name: Tensor}`` (in the file's order of names).

    Args:
        path: a safetensors file (from :func:`save`, ``safetensors.torch.save_file``, or elsewhere).
        device: where the tensors go (default: the CPU).

    Raises:
        FileNotFoundError: when ``path`` does not exist.
        SerializationError: when the file is truncated, is not safetensors, or its tensors do not
            match the checksum :func:`save` stored (the file was corrupted after it was written).
    """
    from safetensors.numpy import load as st_load  # noqa: PLC0415

    raw = _read(path)
    path = os.fspath(path)
    header = _header(raw, path)
    try:
        arrays = st_load(raw)
    except Exception as exc:  # safetensors raises its own SafetensorError for every malformed file
        raise SerializationError(f"{path!r} is corrupt or truncated: safetensors could not read it ({exc})") from None
    expected = (header.get("__metadata__") or {}).get(_HASH_KEY)
    if expected is not None and _tensor_digest(arrays) != expected:
        raise SerializationError(
            f"{path!r} is corrupt: its tensors do not match the SHA-256 recorded when it was saved"
        )
    names = sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][0])
    out = OrderedDict()
    for name in names:
        out[name] = Tensor(arrays[name].copy() if not arrays[name].flags.writeable else arrays[name], device=device)
    return out
