"""Reading ``torch.save`` files: the zip format (PyTorch 1.6 and later) and the legacy stream.

**Zip** (``torch/serialization.py``'s ``_save``, read by ``_load``): an uncompressed zip whose
records sit under one folder (the file's stem, or ``archive``): ``data.pkl`` (the object, a
protocol-2 pickle whose tensors name their storages by persistent id), ``data/<key>`` (each
storage's raw bytes), ``byteorder`` (``little``/``big``), ``version``, and a few markers
(``.format_version``, ``.storage_alignment``, ``.data/serialization_id``).

**Legacy** (``_use_new_zipfile_serialization=False``, ``_legacy_save``): five pickles in a row --
the magic number ``0x1950a86a20f9469cfc6c``, the protocol version 1001, a dict of system info,
the object, and the list of storage keys -- then each storage's bytes, in that order, after an
int64 element count.

Either way the pickles go through :mod:`.unpickler`'s allow-list, and nothing is returned unless
every part read: a truncated or foreign file, a forbidden global, a view outside its storage, is a
one-line :class:`SerializationError` and nothing half-loaded.
"""

from __future__ import annotations

import io
import mmap as _mmap
import os
import struct
import zipfile

import numpy as np

from ..errors import SerializationError
from .rebuild import Rebuilder
from .unpickler import unpickle

__all__ = ["LEGACY_MAGIC", "is_torch_file", "load_torch"]

LEGACY_MAGIC = 0x1950a86a20f9469cfc6c
_LEGACY_PREFIX = b"\x80\x02\x8a\x0a" + LEGACY_MAGIC.to_bytes(10, "little")


def is_torch_file(raw) -> bool:
    """Whether ``raw`` starts as a zip or a pickle does (what ``torch.save`` writes) and not as a
    safetensors file (an 8-byte header length that fits the file, then the JSON header's ``{``: its
    first bytes alone can look like a pickle's, ``\x80\x03`` for an 896-byte header)."""
    if len(raw) >= 9 and raw[8:9] == b"{" and int.from_bytes(raw[:8], "little") <= len(raw) - 8:
        return False
    return raw[:4] == b"PK\x03\x04" or (len(raw) >= 2 and raw[0] == 0x80 and 2 <= raw[1] <= 5)


def load_torch(raw, name: str, map_location=None, weights_only: bool = True, mmap: bool = False):
    """The object of a ``torch.save`` file whose bytes are ``raw`` (bytes, or an ``mmap`` when ``mmap``).

    Raises:
        SerializationError: a truncated or corrupt file, a zip that is not from ``torch.save``, a
            pickle that is not one either, a storage type or dtype minitorch_ln lacks, a tensor
            whose view reaches past its storage; :class:`~.unpickler.ForbiddenGlobalError` (a
            ``SerializationError`` and a ``pickle.UnpicklingError``) for a global outside the
            allow-list, whose message names it.
        DeviceError: a tensor saved on a GPU, with none here and no ``map_location``.
    """
    try:
        if raw[:4] == b"PK\x03\x04":
            rebuild, obj = _load_zip(raw, name, mmap)
        else:
            rebuild, obj = _load_legacy(raw, name)
    except SerializationError as exc:
        if not weights_only and "allow-list" in str(exc):
            raise type(exc)(f"{exc} (weights_only=False does not change this: minitorch_ln never runs the "
                            "code a pickle names)") from None
        raise
    rebuild.place(map_location)
    return obj


def _load_zip(raw, name: str, use_mmap: bool):
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw) if isinstance(raw, bytes) else _Seekable(raw))
        names = zf.namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise SerializationError(f"{name!r} is a truncated or corrupt zip archive ({exc}); torch.save writes "
                                 "complete zip files") from None
    pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
    if len(pkl) != 1:
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise SerializationError(f"{name!r} is a zip archive but not a torch.save file: it has no <folder>/data.pkl "
                                 f"(it holds {shown or 'nothing'})")
    prefix = pkl[0][: -len("data.pkl")]
    byteorder = _read_record(zf, prefix + "byteorder", name).decode() if prefix + "byteorder" in names else "little"
    if byteorder not in ("little", "big"):
        raise SerializationError(f"{name!r} is corrupt: its byteorder record says {byteorder!r}")

    def read(key, dtype, numel):
        record = f"{prefix}data/{key}"
        nbytes = numel * dtype.itemsize
        if use_mmap and isinstance(raw, _mmap.mmap):
            info = _info(zf, record, name)
            if info.compress_type != zipfile.ZIP_STORED:
                raise SerializationError(f"{name!r}: record {record} is compressed, so it cannot be memory-mapped")
            start = _data_offset(raw, info)
            arr = np.frombuffer(raw, dtype=dtype, count=min(numel, info.file_size // dtype.itemsize), offset=start)
            size = info.file_size
        else:
            data = _read_record(zf, record, name)
            size = len(data)
            arr = np.frombuffer(bytearray(data), dtype=dtype, count=min(numel, size // dtype.itemsize))
        if size < nbytes:
            raise SerializationError(f"{name!r} is corrupt: storage {key} should hold {numel} {dtype} elements "
                                     f"({nbytes} bytes), its record has {size} bytes")
        return arr.byteswap() if byteorder != _native() and dtype.itemsize > 1 else arr

    rebuild = Rebuilder(read, name)
    obj = unpickle(_read_record(zf, pkl[0], name), rebuild, name)
    return rebuild, obj


class _Seekable:
    """An ``mmap`` as the file ``zipfile`` wants (Python 3.11's mmap has no ``seekable``)."""

    def __init__(self, mm):
        self._mm = mm

    def seekable(self) -> bool:
        return True

    def __getattr__(self, attr):
        return getattr(self._mm, attr)


def _info(zf, record, name):
    try:
        return zf.getinfo(record)
    except KeyError:
        raise SerializationError(f"{name!r} is corrupt: the record {record} is missing") from None


def _read_record(zf, record, name) -> bytes:
    _info(zf, record, name)
    try:
        return zf.read(record)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise SerializationError(f"{name!r} is truncated or corrupt: record {record} does not read ({exc})") from None


def _data_offset(raw, info) -> int:
    """Where a stored record's bytes start: after its local header (30 bytes, the name, the extra field)."""
    n_name, n_extra = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
    return info.header_offset + 30 + n_name + n_extra


def _native() -> str:
    import sys

    return sys.byteorder


def _load_legacy(raw, name: str):
    f = io.BytesIO(bytes(raw))
    rebuild = Rebuilder(lambda key, dtype, numel: None, name)  # bytes come after the pickle
    magic = unpickle(f, rebuild, name)
    if magic != LEGACY_MAGIC:
        raise SerializationError(f"{name!r} is a pickle, not a torch.save file (its first object is not PyTorch's "
                                 "magic number); minitorch_ln reads torch.save files and its own safetensors files")
    version = unpickle(f, rebuild, name)
    if version != 1001:
        raise SerializationError(f"{name!r}: legacy torch.save protocol version {version!r}, expected 1001")
    info = unpickle(f, rebuild, name)
    if not isinstance(info, dict) or not info.get("little_endian", True):
        raise SerializationError(f"{name!r}: a big-endian legacy torch.save file is not supported")
    obj = unpickle(f, rebuild, name)
    keys = unpickle(f, rebuild, name)
    if not isinstance(keys, list):
        raise SerializationError(f"{name!r} is corrupt: its list of storages is a {type(keys).__name__}")
    for key in keys:
        st = rebuild.storages.get(str(key))
        if st is None:
            raise SerializationError(f"{name!r} is corrupt: storage {key} is listed but no tensor uses it")
        head = f.read(8)
        if len(head) < 8:
            raise SerializationError(f"{name!r} is truncated: it ends before the bytes of storage {key}")
        numel = int.from_bytes(head, "little")
        if numel != st.array.size:
            raise SerializationError(f"{name!r} is corrupt: storage {key} has {numel} elements on disk, "
                                     f"{st.array.size} in the pickle")
        nbytes = numel * st.array.dtype.itemsize
        data = f.read(nbytes)
        if len(data) < nbytes:
            raise SerializationError(f"{name!r} is truncated: storage {key} has {len(data)} of its {nbytes} bytes")
        st.array[...] = np.frombuffer(data, dtype=st.array.dtype)
    return rebuild, obj


def read_source(f, use_mmap: bool):
    """``(raw, name)``: a path's or a binary file's bytes (an ``mmap`` of a path when ``use_mmap``)."""
    if hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray)):
            raise SerializationError("load expects a binary file (opened with 'rb'); read() returned text")
        return bytes(data), getattr(f, "name", f"<{type(f).__name__}>")
    path = os.fspath(f)
    if use_mmap:
        with open(path, "rb") as fh:
            return _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY), path
    with open(path, "rb") as fh:
        return fh.read(), path
