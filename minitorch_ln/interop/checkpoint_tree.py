"""The structure of a checkpoint as JSON, its tensors as named arrays: the codec behind ``mt.save``/``mt.load``.

:func:`encode` turns any nesting of dicts (any of str/int/float/bool/None/tuple keys; ``OrderedDict``
kept), lists, tuples, Tensors, NumPy arrays and scalars, numbers, strings, bytes, booleans and
``None`` into a JSON-able tree plus ``{name: array}``. Plain JSON stays plain (a dict of str keys
is a JSON object, a list a list); the rest is tagged with a one-key object whose key starts with
``__`` (``{"__tuple__": [...]}``, ``{"__tensor__": name, ...}``), so a user key that starts with
``__`` moves its dict to the tagged ``{"__dict__": [[key, value], ...]}`` form and cannot be misread.

Sharing is kept. The same Tensor (or ndarray) object met twice is written once and read back as
one object (``{"__ref__": n}``). Arrays that share memory (tied weights, views of one buffer) are
stored once: identical views share one stored array; different views of one C-contiguous buffer
store that whole buffer and each view as ``offset``/``shape``/``strides`` in elements (as
``torch.save`` stores whole storages). :func:`decode` rebuilds the views with ``as_strided``.
"""

from __future__ import annotations

import base64
import math
from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from .. import backend
from ..tensor import Tensor

__all__ = ["encode", "decode", "TreeError"]


class TreeError(ValueError):
    """An object that cannot be written (with where it sits), or a tree that does not decode."""


def _is_array(x) -> bool:
    return isinstance(x, np.ndarray) or type(x).__module__.startswith("cupy")


def _root(a):
    while _is_array(a.base) and type(a.base) is type(a):
        a = a.base
    return a


def _ptr(a) -> int:
    return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr


def _where(path) -> str:
    return "obj" + "".join(f"[{p!r}]" for p in path)


class _Encoder:
    def __init__(self):
        self.seen = {}  # id(Tensor or ndarray) -> its node (gets an "id" when met again)
        self.keep = []  # objects whose ids are in `seen`, kept alive while encoding
        self.arrays = []  # (node, array, path) of every distinct Tensor/ndarray, storage assigned later
        self.stack = set()
        self.next_id = 0

    def node(self, obj, path):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"__float__": repr(obj)}
        if isinstance(obj, (bytes, bytearray)):
            return {"__bytes__": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, Tensor) or _is_array(obj):
            return self.tensor(obj, path)
        if isinstance(obj, np.generic):
            return self.tensor(np.asarray(obj), path, tag="__npscalar__")
        if hasattr(obj, "detach") and hasattr(obj, "cpu") and hasattr(obj, "numpy"):  # a PyTorch tensor
            return self.tensor(Tensor._from_op(obj.detach().cpu().numpy()), path)
        if isinstance(obj, (Mapping, list, tuple)):
            if id(obj) in self.stack:
                raise TreeError(f"cannot save {_where(path)}: it contains itself")
            self.stack.add(id(obj))
            try:
                return self.container(obj, path)
            finally:
                self.stack.discard(id(obj))
        raise TreeError(
            f"cannot save {_where(path)}: a {type(obj).__name__} is not a Tensor, array, number, string, bytes, "
            "bool, None, dict, list or tuple (minitorch_ln writes no pickle, so other objects cannot be saved; "
            "save their state_dict() instead)"
        )

    def container(self, obj, path):
        if isinstance(obj, list):
            return [self.node(v, path + (i,)) for i, v in enumerate(obj)]
        if isinstance(obj, tuple):
            return {"__tuple__": [self.node(v, path + (i,)) for i, v in enumerate(obj)]}
        keys = list(obj.keys())
        plain = type(obj) is not OrderedDict and all(isinstance(k, str) and not k.startswith("__") for k in keys)
        if plain:
            return {k: self.node(obj[k], path + (k,)) for k in keys}
        items = [[self.key(k, path), self.node(obj[k], path + (k,))] for k in keys]
        return {"__odict__" if isinstance(obj, OrderedDict) else "__dict__": items}

    def key(self, k, path):
        if k is None or isinstance(k, (str, bool, int, float)):
            return self.node(k, path)
        if isinstance(k, tuple):
            return {"__tuple__": [self.key(x, path) for x in k]}
        raise TreeError(f"cannot save {_where(path)}: dict key {k!r} ({type(k).__name__}) is not a str, int, float, "
                        "bool, None or tuple")

    def tensor(self, obj, path, tag=None):
        hit = self.seen.get(id(obj))
        if hit is not None:
            if "id" not in hit:
                hit["id"], self.next_id = self.next_id, self.next_id + 1
            return {"__ref__": hit["id"]}
        is_t = isinstance(obj, Tensor)
        arr = obj.array if is_t else obj
        if isinstance(arr, np.generic):
            # Function results are 0-d arrays (autograd/function.py), but ops that make their result
            # without a Function (comparisons, any/all) may still hold a NumPy scalar
            arr = np.asarray(arr)
        node = {}
        if arr.dtype == backend.BFLOAT16:  # safetensors' NumPy side has no bfloat16: its bits, as uint16
            arr, node["bfloat16"] = arr.view(np.uint16), True
        if arr.dtype.kind not in "biuf":
            raise TreeError(f"cannot save {_where(path)}: dtype {arr.dtype} is not a number type safetensors stores")
        if is_t:
            if obj.requires_grad:
                node["requires_grad"] = True
            if type(obj).__name__ == "Parameter":
                node["parameter"] = True
            if arr.__class__ is not np.ndarray:
                node["device"] = str(backend.device_of(arr))
        elif tag is None and not isinstance(arr, np.ndarray):
            raise TreeError(f"cannot save {_where(path)}: a bare CuPy array; wrap it in a Tensor")
        node["__tensor__" if is_t else (tag or "__ndarray__")] = None  # the storage name, set by storages()
        self.seen[id(obj)] = node
        self.keep.append(obj)
        self.arrays.append((node, arr, path))
        return node

    def storages(self) -> "OrderedDict[str, np.ndarray]":
        """Give every array node its stored array: one per distinct view, or one buffer for many views."""
        groups = OrderedDict()  # id(root) -> [(node, array, path), ...]
        for entry in self.arrays:
            groups.setdefault(id(_root(entry[1])), []).append(entry)
        out, names = OrderedDict(), set()
        for entries in groups.values():
            root = _root(entries[0][1])
            views = OrderedDict()
            for node, a, path in entries:
                views.setdefault((_ptr(a), a.shape, a.strides, a.dtype.str), []).append((node, a, path))
            whole = (len(views) > 1 and root.flags.c_contiguous
                     and all(a.dtype == root.dtype for _, a, _ in entries))
            if whole:
                name = _name(entries[0][2], names)
                out[name] = _cpu(root.reshape(-1))
                isz, base = root.dtype.itemsize, _ptr(root)
                for node, a, _ in entries:
                    node[_tag(node)] = name
                    node.update(offset=(_ptr(a) - base) // isz, shape=list(a.shape),
                                strides=[s // isz for s in a.strides])
                continue
            for group in views.values():
                name = _name(group[0][2], names)
                out[name] = _cpu(group[0][1])
                for node, _, _ in group:
                    node[_tag(node)] = name
        return out


def _tag(node) -> str:
    return next(k for k in node if k.startswith("__"))


def _cpu(a) -> np.ndarray:
    return np.asarray(backend.to_device(a, "cpu"), order="C")  # not ascontiguousarray: it makes 0-d (1,)


def _name(path, taken) -> str:
    base = "/".join(str(p) for p in path) or "tensor"
    if base == "__metadata__":
        base = "_metadata_"
    name, i = base, 1
    while name in taken:
        name, i = f"{base}#{i}", i + 1
    taken.add(name)
    return name


def encode(obj):
    """``(tree, {name: numpy array})`` for ``obj``. Raises :class:`TreeError` naming what cannot be saved."""
    enc = _Encoder()
    tree = enc.node(obj, ())
    return tree, enc.storages()


class _Decoder:
    def __init__(self, arrays, target, to_tensor):
        self.arrays, self.target, self.to_tensor = arrays, target, to_tensor
        self.refs, self.placed = {}, {}

    def node(self, t):
        if isinstance(t, list):
            return [self.node(v) for v in t]
        if not isinstance(t, dict):
            return t
        tags = [k for k in t if k.startswith("__")]
        if not tags:
            return {k: self.node(v) for k, v in t.items()}
        tag = tags[0]
        if tag == "__tuple__":
            return tuple(self.node(v) for v in t[tag])
        if tag in ("__dict__", "__odict__"):
            d = OrderedDict() if tag == "__odict__" else {}
            for k, v in t[tag]:
                d[self.key(k)] = self.node(v)
            return d
        if tag == "__float__":
            return float(t[tag])
        if tag == "__bytes__":
            return base64.b64decode(t[tag])
        if tag == "__ref__":
            if t[tag] not in self.refs:
                raise TreeError(f"the structure refers to object {t[tag]}, which comes nowhere before")
            return self.refs[t[tag]]
        if tag in ("__tensor__", "__ndarray__", "__npscalar__"):
            arr = self.array(t, t[tag], self.target(t) if tag == "__tensor__" else backend.CPU)
            if t.get("bfloat16"):
                arr = arr.view(backend.BFLOAT16)
            if tag == "__ndarray__":
                out = arr
            elif tag == "__npscalar__":
                out = arr[()]
            else:
                out = self.to_tensor(arr, t)
            if "id" in t:
                self.refs[t["id"]] = out
            return out
        raise TreeError(f"unknown tag {tag!r} in the structure")

    def key(self, k):
        return tuple(self.key(x) for x in k["__tuple__"]) if isinstance(k, dict) and "__tuple__" in k else self.node(k)

    def array(self, t, name, dev):
        if name not in self.arrays:
            raise TreeError(f"the structure refers to tensor {name!r}, which the file lacks")
        key = (name, str(dev))
        if key not in self.placed:  # one copy per stored array and device, so views keep sharing it
            self.placed[key] = backend.to_device(self.arrays[name], dev)
        a = self.placed[key]
        if "offset" not in t:
            return a
        shape, strides, off = tuple(t["shape"]), tuple(t["strides"]), int(t["offset"])
        if off < 0 or any(s < 0 for s in strides) or (
                math.prod(shape) and off + sum((n - 1) * s for n, s in zip(shape, strides)) >= a.size):
            raise TreeError(f"the view of {name!r} at offset {off} with shape {shape} lies outside its buffer")
        isz = a.dtype.itemsize
        xp = backend.get_array_module(a)
        return xp.lib.stride_tricks.as_strided(a[off:], shape, tuple(s * isz for s in strides))


def decode(tree, arrays, target, to_tensor):
    """Rebuild the object from :func:`encode`'s output.

    ``target(node)`` names the device of each Tensor node; ``to_tensor(array, node)`` makes the Tensor.
    """
    return _Decoder(arrays, target, to_tensor).node(tree)
