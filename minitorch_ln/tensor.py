"""``Tensor``: an array (NumPy or CuPy) plus what autograd needs to differentiate through it.

Operators and methods (``x + y``, ``x.sum()``, ``x.reshape(...)``) are thin forwards to the op
functions in :mod:`minitorch_ln.ops`, where each op's forward and backward live side by side.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import backend
from .autograd import function as _function_module
from .autograd.function import AccumulateGrad
from .autograd.grad_mode import is_grad_enabled

_ops_module = None


def _ops():
    # ops sits above tensor in the layering (it imports Tensor), so it is imported on first use.
    global _ops_module
    if _ops_module is None:
        from . import ops  # noqa: PLC0415

        _ops_module = ops
    return _ops_module


class Tensor:
    """An n-dimensional array that can record the operations applied to it.

    Attributes:
        array: the ``numpy.ndarray`` (CPU) or ``cupy.ndarray`` (GPU) holding the values: the raw
            array, which every op and kernel inside the package works on.
        data: as in PyTorch, a ``Tensor`` sharing ``array``'s memory, detached from the graph
            (``requires_grad=False``), so ``p.data.mul_(0.5)`` changes ``p`` without recording;
            assigning ``t.data = other`` replaces the values (and may change the shape).
        grad: a ``Tensor`` of the same shape once a backward pass reached this leaf, else ``None``.
        requires_grad: whether operations on this tensor are recorded for differentiation.
        grad_fn: the graph node that produced this tensor (``None`` for leaves).
    """

    __array_priority__ = 1000  # so that ndarray + Tensor calls Tensor.__radd__

    # Defaults read until an instance sets its own: ``_from_op`` (run for every op result) then
    # sets only what differs per tensor.
    grad = None
    grad_fn = None
    _output_nr = 0
    _accumulator = None
    _retains_grad = False
    name = None

    def __init__(self, data, requires_grad: bool = False, dtype=None, device=None):
        self.array = _to_array(data, dtype, device)
        self.grad = None
        self.grad_fn = None
        self._output_nr = 0
        self._version = [0]  # a list, so that views can share their base's counter
        self._accumulator = None
        self._retains_grad = False
        self.name = None
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
    def shape(self) -> tuple:
        return self.array.shape

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
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

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
        if requires_grad and self.dtype.kind != "f":
            raise RuntimeError(
                f"only floating point tensors can require gradients, but this tensor has dtype {self.dtype}"
            )
        self._requires_grad = bool(requires_grad)
        return self

    def _get_accumulator(self) -> AccumulateGrad:
        if self._accumulator is None:
            self._accumulator = AccumulateGrad(self)
        return self._accumulator

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        return int(self.array.size)

    def dim(self) -> int:
        return self.ndim

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # ---------------------------------------------------------------- conversion
    def item(self):
        if self.numel() != 1:
            raise ValueError(f"item() needs a tensor with one element, this one has shape {tuple(self.shape)}")
        return self.array.reshape(()).item()

    def tolist(self):
        return backend.to_device(self.array, "cpu").tolist()  # fine with requires_grad, as in PyTorch

    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (copied from the GPU when needed; shares memory on the CPU)."""
        if self.requires_grad:
            raise RuntimeError("can't call numpy() on a tensor that requires grad: use .detach().numpy()")
        return backend.to_device(self.array, "cpu")

    def __array__(self, dtype=None, copy=None):
        arr = backend.to_device(self.array, "cpu")
        return arr.astype(dtype) if dtype is not None else arr

    def detach(self) -> "Tensor":
        """A tensor sharing this one's data, with no history (and ``requires_grad=False``)."""
        t = Tensor._from_op(self.array)
        t._version = self._version
        return t

    def detach_(self) -> "Tensor":
        self.grad_fn = None
        self._requires_grad = False
        return self

    def clone(self) -> "Tensor":
        return _ops().clone(self)

    def to(self, *args, dtype=None, device=None) -> "Tensor":
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``; differentiable; no copy when unchanged."""
        for a in args:
            if isinstance(a, (str, backend.Device)) and not (isinstance(a, str) and a in backend._DTYPE_NAMES):
                device = a
            else:
                dtype = a
        out = self
        if dtype is not None and backend.as_dtype(dtype) != self.dtype:
            out = _ops().cast(out, backend.as_dtype(dtype))
        if device is not None and backend.device(device) != self.device:
            out = _ops().to_device(out, backend.device(device))
        return out

    def float(self) -> "Tensor":
        return self.to(np.float32)

    def double(self) -> "Tensor":
        return self.to(np.float64)

    def half(self) -> "Tensor":
        return self.to(np.float16)

    def long(self) -> "Tensor":
        return self.to(np.int64)

    def int(self) -> "Tensor":
        return self.to(np.int32)

    def bool(self) -> "Tensor":
        return self.to(np.bool_)

    def cpu(self) -> "Tensor":
        return self.to("cpu")

    def cuda(self, index: int = 0) -> "Tensor":
        return self.to(f"cuda:{index}")

    # ---------------------------------------------------------------- autograd
    def backward(self, gradient=None, retain_graph=None, create_graph=False) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (``gradient`` is the upstream grad)."""
        from .autograd.engine import backward  # noqa: PLC0415

        backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if self.is_leaf or self._retains_grad:
            return
        import weakref  # noqa: PLC0415

        ref = weakref.ref(self)

        def store(g):
            t = ref()
            if t is not None:
                t.grad = g if t.grad is None else t.grad + g
            return None

        self.grad_fn.register_pre_hook(self._output_nr, store)
        self._retains_grad = True

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.is_leaf:
            self._get_accumulator().register_pre_hook(0, hook)
        else:
            self.grad_fn.register_pre_hook(self._output_nr, hook)
        return hook

    # ---------------------------------------------------------------- printing
    def __repr__(self) -> str:
        body = np.array2string(
            backend.to_device(self.array, "cpu"), separator=", ", prefix="tensor(", precision=4, threshold=200
        )
        extras = []
        if self.device.type != "cpu":
            extras.append(f"device='{self.device}'")
        if self.dtype != np.float32 and self.dtype != np.int64 and self.dtype != np.bool_:
            extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + body + "".join(", " + e for e in extras) + ")"

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"the truth value of a tensor with {self.numel()} elements is ambiguous; use .any() or .all()"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iu" or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    # ---------------------------------------------------------------- arithmetic
    def __add__(self, other):
        return _ops().add(self, other)

    def __radd__(self, other):
        return _ops().add(other, self)

    def __sub__(self, other):
        return _ops().sub(self, other)

    def __rsub__(self, other):
        return _ops().sub(other, self)

    def __mul__(self, other):
        return _ops().mul(self, other)

    def __rmul__(self, other):
        return _ops().mul(other, self)

    def __truediv__(self, other):
        return _ops().div(self, other)

    def __rtruediv__(self, other):
        return _ops().div(other, self)

    def __pow__(self, other):
        return _ops().pow(self, other)

    def __rpow__(self, other):
        return _ops().pow(other, self)

    def __matmul__(self, other):
        return _ops().matmul(self, other)

    def __rmatmul__(self, other):
        return _ops().matmul(other, self)

    def __neg__(self):
        return _ops().neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops().abs(self)

    def __eq__(self, other):  # noqa: D105 - elementwise, as in PyTorch
        return _ops().eq(self, other)

    def __ne__(self, other):
        return _ops().ne(self, other)

    def __lt__(self, other):
        return _ops().lt(self, other)

    def __le__(self, other):
        return _ops().le(self, other)

    def __gt__(self, other):
        return _ops().gt(self, other)

    def __ge__(self, other):
        return _ops().ge(self, other)

    def __invert__(self):
        return _ops().logical_not(self)

    def __and__(self, other):
        return _ops().logical_and(self, other)

    def __or__(self, other):
        return _ops().logical_or(self, other)

    def __getitem__(self, index):
        return _ops().getitem(self, index)

    def __setitem__(self, index, value):
        _ops().setitem_(self, index, value)

    # ---------------------------------------------------------------- methods forwarding to ops
    def add(self, other):
        return _ops().add(self, other)

    def sub(self, other):
        return _ops().sub(self, other)

    def mul(self, other):
        return _ops().mul(self, other)

    def div(self, other):
        return _ops().div(self, other)

    def pow(self, exponent):
        return _ops().pow(self, exponent)

    def matmul(self, other):
        return _ops().matmul(self, other)

    def exp(self):
        return _ops().exp(self)

    def log(self):
        return _ops().log(self)

    def sqrt(self):
        return _ops().sqrt(self)

    def rsqrt(self):
        return _ops().rsqrt(self)

    def abs(self):
        return _ops().abs(self)

    def tanh(self):
        return _ops().tanh(self)

    def sigmoid(self):
        return _ops().sigmoid(self)

    def relu(self):
        return _ops().relu(self)

    def sin(self):
        return _ops().sin(self)

    def cos(self):
        return _ops().cos(self)

    def maximum(self, other):
        return _ops().maximum(self, other)

    def minimum(self, other):
        return _ops().minimum(self, other)

    def clamp(self, min=None, max=None):  # noqa: A002 - PyTorch's argument names
        return _ops().clamp(self, min, max)

    clip = clamp

    def masked_fill(self, mask, value):
        return _ops().masked_fill(self, mask, value)

    def sum(self, dim=None, keepdim=False):
        return _ops().sum(self, dim, keepdim)

    def mean(self, dim=None, keepdim=False):
        return _ops().mean(self, dim, keepdim)

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _ops().var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _ops().std(self, dim, unbiased, keepdim, correction=correction)

    def max(self, dim=None, keepdim=False):
        return _ops().max(self, dim, keepdim)

    def min(self, dim=None, keepdim=False):
        return _ops().min(self, dim, keepdim)

    def amax(self, dim=None, keepdim=False):
        return _ops().amax(self, dim, keepdim)

    def amin(self, dim=None, keepdim=False):
        return _ops().amin(self, dim, keepdim)

    def logsumexp(self, dim, keepdim=False):
        return _ops().logsumexp(self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        return _ops().argmax(self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return _ops().argmin(self, dim, keepdim)

    def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002
        return _ops().topk(self, k, dim, largest, sorted)

    def any(self, dim=None, keepdim=False):
        return _ops().any(self, dim, keepdim)

    def all(self, dim=None, keepdim=False):
        return _ops().all(self, dim, keepdim)

    def softmax(self, dim):
        return _ops().softmax(self, dim)

    def log_softmax(self, dim):
        return _ops().log_softmax(self, dim)

    def reshape(self, *shape):
        return _ops().reshape(self, *shape)

    def view(self, *shape):
        return _ops().view(self, *shape)

    def flatten(self, start_dim=0, end_dim=-1):
        return _ops().flatten(self, start_dim, end_dim)

    def transpose(self, dim0, dim1):
        return _ops().transpose(self, dim0, dim1)

    def permute(self, *dims):
        return _ops().permute(self, *dims)

    @property
    def mT(self):  # noqa: N802 - PyTorch's name
        return _ops().transpose(self, -2, -1)

    @property
    def T(self):  # noqa: N802
        return _ops().permute(self, *reversed(range(self.ndim)))

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, got {self.ndim}")
        return self.T

    def unsqueeze(self, dim):
        return _ops().unsqueeze(self, dim)

    def squeeze(self, dim=None):
        return _ops().squeeze(self, dim)

    def expand(self, *sizes):
        return _ops().expand(self, *sizes)

    def broadcast_to(self, shape):
        return _ops().broadcast_to(self, shape)

    def expand_as(self, other):
        return _ops().broadcast_to(self, other.shape)

    def split(self, split_size_or_sections, dim=0):
        return _ops().split(self, split_size_or_sections, dim)

    def chunk(self, chunks, dim=0):
        return _ops().chunk(self, chunks, dim)

    def triu(self, diagonal=0):
        return _ops().triu(self, diagonal)

    def tril(self, diagonal=0):
        return _ops().tril(self, diagonal)

    def contiguous(self):
        return self

    # ---------------------------------------------------------------- in-place ops
    def _check_inplace(self, what: str) -> None:
        if self.is_leaf and self.requires_grad and is_grad_enabled():
            raise RuntimeError(
                f"a leaf tensor that requires grad is being used in an in-place operation ({what}); "
                "wrap the update in `with no_grad():` (as optimizers do) or use an out-of-place op"
            )

    def _inplace(self, what: str, result_fn) -> "Tensor":
        """Run ``result_fn(old_self)`` out of place, then write the result into this tensor.

        When the graph is recorded, the op's input is an alias of this tensor *before* the change
        (same array and version counter), and this tensor takes over the op's output in the graph.
        The write bumps the shared version counter, so any node that saved the old values notices.
        """
        self._check_inplace(what)
        if is_grad_enabled():
            old = Tensor._from_op(self.array, requires_grad=self.requires_grad)
            old.grad_fn, old._output_nr, old._version = self.grad_fn, self._output_nr, self._version
            old._accumulator = self._accumulator
            result = result_fn(old)
        else:
            result = result_fn(self.detach())
        if result.shape != self.shape:
            raise RuntimeError(
                f"{what}: the result has shape {tuple(result.shape)}, which does not fit the in-place "
                f"target of shape {tuple(self.shape)}"
            )
        xp = backend.get_array_module(self.array)
        xp.copyto(self.array, result.array, casting="unsafe")
        self._version[0] += 1
        if result.requires_grad:
            self.grad_fn, self._output_nr = result.grad_fn, result._output_nr
            self._requires_grad = True
        return self

    def add_(self, other, alpha=1):
        return self._inplace("add_", lambda s: _ops().add(s, _scaled(other, alpha)))

    def sub_(self, other, alpha=1):
        return self._inplace("sub_", lambda s: _ops().sub(s, _scaled(other, alpha)))

    def mul_(self, other):
        return self._inplace("mul_", lambda s: _ops().mul(s, other))

    def div_(self, other):
        return self._inplace("div_", lambda s: _ops().div(s, other))

    def clamp_(self, min=None, max=None):  # noqa: A002
        return self._inplace("clamp_", lambda s: _ops().clamp(s, min, max))

    def masked_fill_(self, mask, value):
        return self._inplace("masked_fill_", lambda s: _ops().masked_fill(s, mask, value))

    def _everywhere(self) -> "Tensor":
        return Tensor._from_op(backend.get_array_module(self.array).ones(self.shape, dtype=bool))

    def copy_(self, src):
        src = src if isinstance(src, Tensor) else Tensor(src, dtype=self.dtype, device=self.device)
        # where(True, src, s), not src + 0*s: the old values get a zero gradient without being saved
        # (saving them would trip this very write's version check) and an inf in them can't give NaN.
        return self._inplace("copy_", lambda s: _ops().where(
            self._everywhere(), _ops().broadcast_to(_ops().cast(src.to(self.device), self.dtype), self.shape), s))

    def fill_(self, value):
        if self.requires_grad and not self.is_leaf and is_grad_enabled():
            # a non-leaf's history must be cut (its old values get a zero gradient)
            return self._inplace("fill_", lambda s: _ops().masked_fill(s, self._everywhere(), value))
        self._check_inplace("fill_")
        self.array.fill(value)
        self._version[0] += 1
        return self

    def zero_(self):
        return self.fill_(0)

    def uniform_(self, a=0.0, b=1.0):
        self._check_inplace("uniform_")
        gen = backend.generator(self.device)
        self.array[...] = gen.uniform(a, b, size=self.shape).astype(self.dtype)
        self._version[0] += 1
        return self

    def normal_(self, mean=0.0, std=1.0):
        self._check_inplace("normal_")
        gen = backend.generator(self.device)
        self.array[...] = (gen.standard_normal(size=self.shape) * std + mean).astype(self.dtype)
        self._version[0] += 1
        return self


_function_module.Tensor = Tensor  # lets Function.apply and the engine build Tensors without importing us


def _scaled(other, alpha):
    """``alpha * other`` for ``add_``/``sub_``; plain arithmetic when ``other`` is a number."""
    if alpha == 1:
        return other
    return _ops().mul(other, alpha) if isinstance(other, Tensor) else other * alpha


# ==================================================================================================
# Factories
# ==================================================================================================


def _to_array(data, dtype=None, device=None):
    """Turn ``data`` (Tensor, array, nested lists, scalar) into an array of ``dtype`` on ``device``."""
    if isinstance(data, Tensor):
        data = data.array
    dt = backend.as_dtype(dtype) if dtype is not None else None
    xp = backend.get_array_module(data)
    if xp is np and not isinstance(data, np.ndarray):
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
        if dt is None:
            # Python floats become the default float dtype (float32), ints int64, as in PyTorch
            if arr.dtype.kind == "f":
                dt = backend.default_float_dtype()
            elif arr.dtype.kind in "iu":
                dt = np.dtype(np.int64)
            elif arr.dtype.kind == "b":
                dt = np.dtype(np.bool_)
            else:
                raise TypeError(
                    f"can't make a tensor from {type(data).__name__} of dtype {arr.dtype}: "
                    "expected numbers, nested lists of numbers or an array"
                )
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
    src = data.array if isinstance(data, Tensor) else data
    arr = _to_array(src, dtype, device)
    if arr is src:
        arr = arr.copy()
    return Tensor(arr, requires_grad=requires_grad)


def _shape_arg(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (numbers.Integral,)) or s < 0:
            raise ValueError(f"sizes must be non-negative integers, got {tuple(size)}")
    return tuple(int(s) for s in size)


def _xp_for(device):
    dev = backend.device(device)
    return backend.cupy_or_error() if dev.type == "cuda" else np, dev


def _make(fill_fn, size, dtype, device, requires_grad, default=None):
    xp, dev = _xp_for(device)
    dt = backend.as_dtype(dtype) if dtype is not None else (default or backend.default_float_dtype())
    if dev.type == "cuda":
        with xp.cuda.Device(dev.index):
            arr = fill_fn(xp, _shape_arg(size), dt)
    else:
        arr = fill_fn(xp, _shape_arg(size), dt)
    return Tensor(arr, requires_grad=requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(lambda xp, s, d: xp.zeros(s, dtype=d), size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(lambda xp, s, d: xp.ones(s, dtype=d), size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(lambda xp, s, d: xp.empty(s, dtype=d), size, dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    if dtype is None and isinstance(fill_value, bool):
        dtype = np.bool_
    elif dtype is None and isinstance(fill_value, numbers.Integral):
        dtype = np.int64
    return _make(lambda xp, s, d: xp.full(s, fill_value, dtype=d), (size,), dtype, device, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(lambda xp, s, d: xp.eye(n, m, dtype=d), (), dtype, device, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``arange(end)`` or ``arange(start, end, step)``; int64 for integer arguments, else float32."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        dtype = np.int64 if is_int else backend.default_float_dtype()
    return _make(lambda xp, s, d: xp.arange(start, end, step, dtype=d), (), dtype, device, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform on [0, 1), drawn from the device's seeded generator."""
    dev = backend.device(device)
    return _make(
        lambda xp, s, d: backend.generator(dev).random(s).astype(d), size, dtype, dev, requires_grad
    )


def randn(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal, drawn from the device's seeded generator."""
    dev = backend.device(device)
    return _make(
        lambda xp, s, d: backend.generator(dev).standard_normal(s).astype(d), size, dtype, dev, requires_grad
    )


def randint(low, high=None, size=(), dtype=None, device=None) -> Tensor:
    """Integers uniform on [low, high) (``randint(high, size=...)`` means low = 0); int64."""
    if high is None:
        low, high = 0, low
    dev = backend.device(device)
    return _make(
        lambda xp, s, d: backend.generator(dev).integers(low, high, size=s).astype(d),
        (size,) if not isinstance(size, int) else ((size,),),
        dtype,
        dev,
        False,
        default=np.dtype(np.int64),
    )


def _like(fn, t, dtype, device, requires_grad, *args):
    return fn(*args, t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(zeros, t, dtype, device, requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(ones, t, dtype, device, requires_grad)


def empty_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(empty, t, dtype, device, requires_grad)


def rand_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(rand, t, dtype, device, requires_grad)


def randn_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(randn, t, dtype, device, requires_grad)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)
