"""``Tensor``: an array (NumPy or CuPy) plus what autograd needs to differentiate through it.

This module holds the class and what it needs itself (properties, conversion to Python and NumPy,
``backward``); it imports nothing of :mod:`minitorch_ln.ops`. The ops attach the operators and the
methods that compute (``x + y``, ``x.sum()``, ``x.reshape(...)``, ``x.add_(...)``) when they are
imported, every one listed in ``ops/methods.py``; each op's forward and backward live side by side in
its op module.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import backend
from .autograd import function as _function_module
from .autograd import engine as _engine, saved as _saved_module, unrecorded as _unrecorded_module
from .autograd import recorded as _recorded_module
from .autograd.function import AccumulateGrad, _sync_view
from .autograd.grad_mode import is_grad_enabled
from .errors import DtypeError, OptionError, ShapeError
from .size import Size, _size
from .tensor_str import tensor_repr
from .tensor_protocols import TensorProtocols
from . import tensor_legacy


class Tensor(TensorProtocols, metaclass=tensor_legacy.TensorMeta):
    """An n-dimensional array that can record the operations applied to it.

    ``Tensor(data, requires_grad=False, dtype=None, device=None)`` wraps an array (or a Tensor's array) as it
    is, keeping its dtype. PyTorch's legacy forms build a default-float-dtype tensor instead, as PyTorch
    (``tensor_legacy.py``): ``Tensor([1, 2])`` float32 ``[1., 2.]``, ``Tensor(2, 3)`` zeros of shape
    ``(2, 3)`` (uninitialised in PyTorch), ``Tensor()`` shape ``(0,)``. Deviation: ``Tensor(ndarray)`` keeps
    the array's dtype, where PyTorch converts it to the default float dtype.

    Attributes:
        array: the ``numpy.ndarray`` (CPU) or ``cupy.ndarray`` (GPU) holding the values: the raw
            array, which every op and kernel inside the package works on.
        data: as in PyTorch, a ``Tensor`` sharing ``array``'s memory, detached from the graph
            (``requires_grad=False``), so ``p.data.mul_(0.5)`` changes ``p`` without recording;
            assigning ``t.data = other`` replaces the values (and may change the shape).
        grad: a ``Tensor`` of the same shape once a backward pass reached this leaf, else ``None``.
        requires_grad: whether operations on this tensor are recorded for differentiation.
        grad_fn: the graph node that produced this tensor (``None`` for leaves).

    A view (``x[0]``, ``x.T``, ``x.view(...)``, ``x.expand(...)``, ...) shares its base's memory and
    version counter and keeps ``_base`` (the tensor owning the memory, never itself a view) and
    ``_view_fn`` (base -> view, in Tensor ops). After an in-place change of the base or of another
    of its views, the view's ``grad_fn`` is regenerated from the base's new history when it is next
    read (``autograd/views.py``, docs/autograd.md).
    """

    __array_priority__ = 1000  # so that ndarray + Tensor calls Tensor.__radd__
    _legacy_constructor = True  # Tensor(...) itself, not a subclass, takes PyTorch's legacy forms (tensor_legacy.py)

    # Defaults read until an instance sets its own: ``_from_op`` (run for every op result) then
    # sets only what differs per tensor.
    _grad = None  # read and set through the ``grad`` property, which checks what is assigned
    _grad_fn = None
    _output_nr = 0
    _accumulator_ref = None  # a weak reference to the leaf's AccumulateGrad node
    _leaf_hooks = None  # {0: [hook, ...]} of a leaf, shared with its AccumulateGrad node
    _post_accumulate_hooks = None  # {id: hook(leaf)}, called after .grad is updated (autograd/post_accumulate.py)
    _retains_grad = False
    _retain_hook = None
    name = None
    # views (autograd/views.py): the base, base -> view, the version the view's grad_fn was made at
    _base = None
    _view_fn = None
    _view_version = 0
    _view_no_grad = False  # made under no_grad: never given a history
    _saved_output_nr = None  # set on the wrapper a node keeps of one of its saved outputs

    def __init__(self, data, requires_grad: bool = False, dtype=None, device=None):
        self.array = _to_array(data, dtype, device)
        self._version = [0]  # a list, so that views can share their base's counter
        if requires_grad:
            self.requires_grad_(True)
        else:
            self._requires_grad = False

    @classmethod
    def _from_op(cls, array, requires_grad=False):
        """Wrap an array produced by an op (no copy, no dtype conversion)."""
        t = cls.__new__(cls)
        t.array = array
        t._version = [0]
        t._requires_grad = requires_grad
        return t

    # ---------------------------------------------------------------- properties
    @property
    def data(self) -> "Tensor":
        # As torch.Tensor.data: shares memory, no history; unlike detach() it has a version
        # counter of its own, so a change through it is not seen by autograd's version check.
        return Tensor._from_op(self.array)

    @data.setter
    def data(self, value) -> None:
        arr = value.array if isinstance(value, Tensor) else value
        if not hasattr(arr, "dtype") or not hasattr(arr, "shape"):
            raise TypeError(f"Tensor.data must be set to a Tensor or an array, got {type(value).__name__}")
        self.array = arr

    @property
    def shape(self) -> Size:
        return _size(self.array.shape)

    @property
    def ndim(self) -> int:
        return self.array.ndim

    @property
    def dtype(self) -> np.dtype:
        return self.array.dtype

    @property
    def device(self) -> backend.Device:
        return backend.device_of(self.array)

    @property
    def grad(self):
        """The gradient a backward pass accumulated into this leaf (same shape, dtype and device), or None.

        Read on a non-leaf that does not ``retain_grad()`` (None), it warns as PyTorch does."""
        g = self._grad
        if g is None and self._grad_fn is not None and not self._retains_grad:
            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                          "attribute won't be populated during autograd.backward(); use .retain_grad() on the "
                          "non-leaf Tensor if you want it, or access the leaf Tensor instead.", UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value) -> None:
        # As PyTorch: a gradient must match the tensor, or an optimizer step would compute in the
        # gradient's dtype (a float16 gradient of a float32 parameter silently lost the second moment).
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None, got {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has shape {tuple(value.shape)}, expected the tensor's "
                                   f"{tuple(self.shape)}")
            if value.dtype != self.dtype:  # RuntimeError, as PyTorch 2.13 ("attempting to assign a gradient with dtype")
                raise RuntimeError(f"assigned grad has dtype {value.dtype}, expected the tensor's {self.dtype} "
                                   f"(convert it first: grad.to({self.dtype}))")
            if value.device != self.device:
                raise RuntimeError(f"assigned grad is on {value.device}, expected the tensor's device {self.device}")
        self._grad = value

    @property
    def grad_fn(self):
        if self._base is not None and self._view_version != self._version[0]:
            _sync_view(self)
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        if self._base is not None and self._view_version != self._version[0]:
            _sync_view(self)
        return self._requires_grad

    @property
    def _is_view(self) -> bool:
        return self._base is not None

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place on a leaf; raises for integer dtypes and non-leaves."""
        if not self.is_leaf and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf tensors; use .detach() to get a "
                "tensor without history"
            )
        if requires_grad and not backend.is_floating(self.dtype) and self.dtype.kind != "c":
            raise RuntimeError(
                f"only floating point tensors can require gradients (complex ones too), but this tensor has dtype {self.dtype}"
            )
        self._requires_grad = bool(requires_grad)
        return self

    def _get_accumulator(self) -> AccumulateGrad:
        # Held weakly: the graph's nodes hold the AccumulateGrad (which holds this leaf), the leaf
        # does not hold it back, so leaf and node form no reference cycle.
        ref = self._accumulator_ref
        acc = ref() if ref is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._accumulator_ref = weakref.ref(acc)
        return acc

    @property
    def _accumulator(self):
        """The leaf's live AccumulateGrad node, or None (when no graph holds one)."""
        ref = self._accumulator_ref
        return ref() if ref is not None else None

    def size(self, dim=None):
        return _size(self.array.shape) if dim is None else self.array.shape[dim]

    def numel(self) -> int:
        return int(self.array.size)

    nelement = numel  # PyTorch's older name, still used (``sum(p.nelement() for p in params)``)

    def dim(self) -> int:
        return self.ndim

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # ---------------------------------------------------------------- conversion
    def item(self):
        if self.array.size != 1:  # ShapeError: PyTorch's RuntimeError, and the ValueError this raised before
            raise ShapeError(f"a Tensor with {self.array.size} elements cannot be converted to Scalar: item() needs "
                             f"a tensor with one element, this one has shape {tuple(self.shape)}")
        return self.array.item()

    def tolist(self):
        return backend.to_device(self.array, "cpu").tolist()  # fine with requires_grad, as in PyTorch

    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (copied from the GPU when needed; shares memory on the CPU)."""
        if self.requires_grad:
            raise RuntimeError("can't call numpy() on a tensor that requires grad: use .detach().numpy()")
        return backend.to_device(self.array, "cpu")

    def _bump_version(self) -> None:
        """Mark an in-place change of this tensor's memory: every copy saved for backward before it (of
        this tensor, its base or a view sharing the counter) is now stale, and backward says so. The one
        place, outside ``tensor.py`` and ``autograd/``, that changes ``_version``."""
        self._version[0] += 1

    def detach(self) -> "Tensor":
        """A tensor sharing this one's data, with no history (and ``requires_grad=False``)."""
        t = Tensor._from_op(self.array)
        t._version = self._version
        return t

    def detach_(self) -> "Tensor":
        if self._base is not None:
            raise RuntimeError(
                "detach_() can't be called on a view (it would leave its base's history inconsistent); "
                "use detach() instead"
            )
        self._grad_fn = None
        self._requires_grad = False
        return self

    # ---------------------------------------------------------------- autograd
    def backward(self, gradient=None, retain_graph=None, create_graph=False) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (``gradient`` is the upstream grad)."""
        _engine.backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)

    # ---------------------------------------------------------------- printing
    def __repr__(self) -> str:  # as PyTorch prints it: tensor_str.py
        grad_fn = self.grad_fn
        return tensor_repr(self.array, self.device, grad_fn.name() if grad_fn is not None else None,
                           self.requires_grad)

    def __bool__(self) -> bool:
        if self.numel() != 1:
            what = "no values" if self.numel() == 0 else "more than one value"
            raise RuntimeError(
                f"Boolean value of Tensor with {what} is ambiguous (shape {tuple(self.shape)}): use .any() or .all()"
            )
        return bool(self.item())

    __nonzero__ = __bool__  # PyTorch keeps Python 2's name too

    def __float__(self) -> float:
        if self.requires_grad:
            _warn_scalar_of_requires_grad()
        return float(self._python_scalar())

    def __int__(self) -> int:
        return int(self._python_scalar())

    def _python_scalar(self):
        """float(t), int(t), complex(t): PyTorch's ValueError for many elements (item() raises its RuntimeError)."""
        if self.array.size != 1:
            raise ValueError(f"only one element tensors can be converted to Python scalars, got shape {tuple(self.shape)}")
        return self.array.item()

    __long__ = __int__
    def __complex__(self) -> complex:
        if self.requires_grad:
            _warn_scalar_of_requires_grad()
        return complex(self._python_scalar())

    __hash__ = object.__hash__

    def __getattr__(self, name):  # only reached when ordinary lookup fails
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(f"'Tensor' object has no attribute {name!r}: minitorch_ln does not provide this "
                             "Tensor method (the PyTorch names it covers, and what differs: docs/torch_compat.md)")


_warned_scalar = [False]
_NUMBER_DTYPES = {float: None, int: np.dtype(np.int64), bool: np.dtype(np.bool_)}  # tensor(number); None: default float


def _warn_scalar_of_requires_grad() -> None:
    """PyTorch's warning for ``float(t)``/``complex(t)`` of a tensor that requires grad (with grad mode
    on), given once per process as PyTorch gives it; ``int``, ``bool`` and ``item()`` do not warn."""
    if not _warned_scalar[0] and is_grad_enabled():
        _warned_scalar[0] = True
        warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                      "Consider using tensor.detach() first.", UserWarning, stacklevel=3)


TensorProtocols._tensor_class = Tensor  # what a NumPy ufunc of a tensor gives back
_function_module.Tensor = Tensor  # lets Function.apply and the engine build Tensors without importing us
_saved_module.Tensor = Tensor  # and the saving of tensors for backward (autograd/saved.py)
_unrecorded_module.Tensor = _recorded_module.Tensor = Tensor  # and Function.apply's lean paths (unrecorded.py, recorded.py)


def _to_array(data, dtype=None, device=None):
    """Turn ``data`` (Tensor, array, nested lists, scalar) into an array of ``dtype`` on ``device``."""
    if isinstance(data, Tensor):
        data = data.array
    dt = backend.as_dtype(dtype) if dtype is not None else None
    xp = backend.get_array_module(data)
    data = np.asarray(data) if isinstance(data, np.generic) else data  # np.float64(1.5) stays float64, as PyTorch
    if xp is np and not isinstance(data, np.ndarray):
        if dt is None and isinstance(data, (list, tuple)):  # NumPy scalars or tensors inside: their dtypes promoted
            dt = tensor_legacy.sequence_dtype(data)  # None for Python numbers only ([np.float64(1.5), 2]: float64)
        if isinstance(data, (list, tuple)) and _contains_tensor(data):
            data = [_to_array(d) for d in data]
            data = np.stack([backend.to_device(d, "cpu") for d in data]) if data else np.array([])
        try:
            arr = np.asarray(data)
        except ValueError as exc:  # ragged nested lists
            raise ValueError(
                f"can't make a tensor from nested sequences of different lengths ({exc}); every row must "
                "have the same length"
            ) from None
        if arr.dtype.kind in "OUS" and tensor_legacy.holds_non_number(arr):  # None became NaN: PyTorch refuses
            raise DtypeError(f"can't make a tensor from {type(data).__name__} holding a non-number (None or a string): "
                            "expected numbers, bools or nested lists of them")
        if dt is None:
            # Python floats become the default float dtype (float32), ints int64, as in PyTorch
            if backend.is_floating(arr.dtype):
                dt = backend.default_float_dtype()
            elif arr.dtype.kind in "iu":
                if arr.dtype == np.uint64:  # a Python int past int64 (NumPy's uint64): PyTorch refuses it
                    raise OptionError(f"Overflow when unpacking long: {data!r} does not fit in int64")
                dt = np.dtype(np.int64)
            elif arr.dtype.kind in "bc":  # Python complex numbers: the default complex dtype; NumPy's keep theirs
                dt = arr.dtype if arr.dtype.kind == "b" or isinstance(data, np.generic) else backend.default_complex_dtype()
            else:
                raise TypeError(
                    f"can't make a tensor from {type(data).__name__} of dtype {arr.dtype}: "
                    "expected numbers, nested lists of numbers or an array"
                )
        if dt is not None and dt.kind in "iu":
            tensor_legacy.check_int_range(arr, dt)  # tensor([300], dtype=uint8): PyTorch's RuntimeError, not 44
        data = arr
    elif dt is None:
        backend.as_dtype(data.dtype)  # validates that the array's dtype is supported
    if dt is not None and data.dtype != dt:
        data = data.astype(dt)
    if device is not None:
        data = backend.to_device(data, device)
    return data


def _contains_tensor(seq) -> bool:
    return any(isinstance(s, Tensor) or (isinstance(s, (list, tuple)) and _contains_tensor(s)) for s in seq)


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (nested lists, scalars or an array).

    Python floats become float32 and ints int64 unless ``dtype`` is given (as ``torch.tensor``).
    """
    if dtype is None and device is None and type(data) in _NUMBER_DTYPES and (type(data) is not int or -2**63 <= data < 2**63):
        t = Tensor._from_op(np.array(data, dtype=_NUMBER_DTYPES[type(data)] or backend.default_float_dtype()))
        return t.requires_grad_(True) if requires_grad else t  # a Python number, as _to_array makes it, in one step
    src = data.array if isinstance(data, Tensor) else data
    arr = _to_array(src, dtype, device)
    return Tensor(arr.copy() if arr is src else arr, requires_grad=requires_grad)


tensor_legacy._to_array, tensor_legacy._tensor_class = _to_array, Tensor  # for the legacy constructors
