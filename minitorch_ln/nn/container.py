"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict`` (as ``torch.nn``'s, same names in ``state_dict``).

Children are registered under the names PyTorch uses (``"0"``, ``"1"``, ... for the first two, the
given keys for ``ModuleDict``), so ``Sequential(Linear(2, 3), ReLU())`` has the state-dict keys
``0.weight`` and ``0.bias``, exactly as its PyTorch twin.
"""

from __future__ import annotations

import numbers
from collections import OrderedDict

from .module import Module


def _check_module(m, where: str) -> Module:
    if not isinstance(m, Module):
        raise TypeError(f"{where}: expected a Module, got {type(m).__name__}")
    return m


def _index(idx, n: int, where: str) -> int:
    if not isinstance(idx, numbers.Integral):
        raise TypeError(f"{where} indices must be integers or slices, got {type(idx).__name__}")
    if not -n <= idx < n:
        raise IndexError(f"{where} index {idx} is out of range for {n} module(s)")
    return int(idx) % n


class Sequential(Module):
    """Modules applied one after another: ``Sequential(m0, m1, ...)`` or ``Sequential(OrderedDict(...))``.

    ``forward(x)`` returns ``m_last(...m1(m0(x)))``; the input and output shapes are those of the
    first and last module. Indexing gives a module, slicing a new ``Sequential`` sharing the modules.

    Raises:
        TypeError: an argument that is not a Module.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, _check_module(m, f"Sequential[{name!r}]"))
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), _check_module(m, f"Sequential argument {i}"))

    def forward(self, input):  # noqa: A002 - PyTorch's name
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx, module) -> None:
        key = list(self._modules.keys())[_index(idx, len(self), "Sequential")]
        self._modules[key] = _check_module(module, "Sequential.__setitem__")

    def __delitem__(self, idx) -> None:
        keys = list(self._modules.keys())
        targets = keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self), "Sequential")]]
        for k in targets:
            del self._modules[k]
        if all(k.isdigit() for k in keys):  # renumber, as PyTorch does, so names stay "0", "1", ...
            _renumber(self, list(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module) -> "Sequential":
        self.add_module(str(len(self)), _check_module(module, "Sequential.append"))
        return self


def _renumber(container, items) -> None:
    """Register ``items`` under ``"0"``, ``"1"``, ... in order (after a deletion or an insertion)."""
    container._modules.clear()
    for i, m in enumerate(items):
        container._modules[str(i)] = m


class ModuleList(Module):
    """A list of modules, registered under ``"0"``, ``"1"``, ...; it has no ``forward`` of its own.

    Raises:
        TypeError: an element that is not a Module. IndexError: an index out of range.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module) -> None:
        self._modules[str(_index(idx, len(self), "ModuleList"))] = _check_module(module, "ModuleList.__setitem__")

    def __delitem__(self, idx) -> None:
        items = list(self._modules.values())
        if isinstance(idx, slice):
            del items[idx]
        else:
            del items[_index(idx, len(self), "ModuleList")]
        _renumber(self, items)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules) -> "ModuleList":
        return self.extend(modules)

    def append(self, module) -> "ModuleList":
        self.add_module(str(len(self)), _check_module(module, "ModuleList.append"))
        return self

    def extend(self, modules) -> "ModuleList":
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)):
            raise TypeError(f"ModuleList.extend expects an iterable of Modules, got a single {type(modules).__name__}")
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module) -> None:
        items = list(self._modules.values())
        items.insert(index, _check_module(module, "ModuleList.insert"))
        _renumber(self, items)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward(): iterate over it and call its modules")

    def __repr__(self) -> str:
        # As PyTorch: runs of identical modules are folded, "(0-3): 4 x Linear(...)".
        if not self._modules:
            return "ModuleList()"
        reprs = [repr(m) for m in self._modules.values()]
        lines, start = [], 0
        for i in range(1, len(reprs) + 1):
            if i == len(reprs) or reprs[i] != reprs[start]:
                body = reprs[start].replace("\n", "\n  ")
                if i - start == 1:
                    lines.append(f"({start}): {body}")
                else:
                    lines.append(f"({start}-{i - 1}): {i - start} x {body}")
                start = i
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules registered under their keys (insertion order kept); no ``forward``.

    Raises:
        TypeError: a value that is not a Module, or a key that is not a string. KeyError: a missing key.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        if key not in self._modules:
            raise KeyError(f"ModuleDict has no key {key!r} (keys: {list(self._modules)})")
        return self._modules[key]

    def __setitem__(self, key: str, module) -> None:
        self.add_module(key, _check_module(module, f"ModuleDict[{key!r}]"))

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key: str) -> Module:
        m = self[key]
        del self._modules[key]
        return m

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules) -> None:
        pairs = modules.items() if hasattr(modules, "items") else modules
        for key, m in pairs:
            self[key] = m

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward(): index it and call its modules")
