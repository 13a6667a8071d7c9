"""The CPU/GPU switch: devices, array modules, dtypes and random generators.

Everything above this layer asks here which array module (``numpy`` or ``cupy``) holds an array,
and never imports CuPy itself. CuPy is imported lazily, the first time a CUDA device is asked for,
so a CPU-only user never pays for it (and never needs it installed).
"""

from __future__ import annotations

import os

try:
    import ml_dtypes  # bfloat16 for NumPy: a small NumPy-only dependency of minitorch-ln
except ImportError:  # without it everything but bfloat16 works; naming bfloat16 says how to get it
    ml_dtypes = None
import numpy as np

from . import allocator  # noqa: F401  (glibc malloc thresholds for a training loop's arrays: allocator.py)
from .mt19937 import CPUGenerator

__all__ = [
    "Device",
    "device",
    "get_array_module",
    "cupy_or_error",
    "cuda_is_available",
    "device_of",
    "to_device",
    "as_dtype",
    "default_float_dtype",
    "is_floating",
    "result_dtype",
    "manual_seed",
    "generator",
    "DeviceError",
]

CUDA_EXTRA_HINT = (
    "install CuPy with the extra that matches your CUDA toolkit: "
    "`pip install 'minitorch-ln[cuda12]'` (CUDA 12) or `pip install 'minitorch-ln[cuda13]'` (CUDA 13)"
)


class DeviceError(RuntimeError):
    """Raised for an unknown device string, a missing CuPy/GPU, or tensors on different devices."""


# --------------------------------------------------------------------------------------------
# Devices
# --------------------------------------------------------------------------------------------


#: ``minitorch-ln run --cuda-as-cpu`` sets this variable: every ``"cuda"``/``"cuda:N"`` is then the CPU, so a
#: script that hard-codes the GPU (nanoGPT's DDP path) runs unchanged on a machine without one. Read once, at
#: import; never on unless asked for (a script's tensors report ``device(type='cpu')``).
CUDA_AS_CPU_ENV = "MINITORCH_LN_CUDA_AS_CPU"
CUDA_AS_CPU = os.environ.get(CUDA_AS_CPU_ENV, "") == "1"


class Device:
    """A device: ``Device("cpu")``, ``Device("cuda")`` (GPU 0), ``Device("cuda:1")`` or ``Device(1)`` (``"cuda:1"``).

    Compares equal to its string form, so ``t.device == "cpu"`` works as in PyTorch. Under
    ``minitorch-ln run --cuda-as-cpu`` (:data:`CUDA_AS_CPU`) ``"cuda"`` and ``"cuda:N"`` parse as the CPU.
    """

    __slots__ = ("type", "index")

    def __init__(self, spec: "str | Device" = "cpu"):
        if isinstance(spec, Device):
            self.type, self.index = spec.type, spec.index
            return
        if isinstance(spec, (int, np.integer)) and not isinstance(spec, (bool, np.bool_)):
            if spec < 0:  # PyTorch: "Device index must not be negative"
                raise DeviceError(f"expected a device index >= 0 (GPU N, as 'cuda:N'), got {spec}")
            spec = f"cuda:{int(spec)}"  # as PyTorch: a bare index names a GPU (`model.to(rank)` in DDP scripts)
        if not isinstance(spec, str):
            raise DeviceError(f"expected a device string such as 'cpu' or 'cuda:0', got {spec!r}")
        kind, _, idx = spec.strip().lower().partition(":")
        if kind not in ("cpu", "cuda"):
            raise DeviceError(f"unknown device {spec!r}: expected 'cpu', 'cuda' or 'cuda:N'")
        if kind == "cpu":
            if idx not in ("", "0"):
                raise DeviceError(f"unknown device {spec!r}: the CPU has no index")
            self.type, self.index = "cpu", None
        else:
            if idx and not idx.isdigit():
                raise DeviceError(f"unknown device {spec!r}: the index after 'cuda:' must be an integer")
            if CUDA_AS_CPU:  # asked for on the command line: the GPU a script names is the CPU
                self.type, self.index = "cpu", None
            else:
                self.type, self.index = "cuda", int(idx) if idx else 0

    def __str__(self) -> str:
        return "cpu" if self.type == "cpu" else f"cuda:{self.index}"

    def __repr__(self) -> str:
        return f"device(type='{self.type}'" + ("" if self.index is None else f", index={self.index}") + ")"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = Device(other)
            except DeviceError:
                return False
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = Device("cpu")


def device(spec: "str | Device | None") -> Device:
    """Parse ``spec`` into a :class:`Device` (``None`` means the CPU)."""
    if spec is None:
        return CPU
    return spec if isinstance(spec, Device) else Device(spec)


_cupy = None


def cupy_or_error():
    """Return the ``cupy`` module, or raise :class:`DeviceError` naming the extra to install."""
    global _cupy
    if _cupy is not None:
        return _cupy
    try:
        import cupy  # noqa: PLC0415 - imported lazily on purpose
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise DeviceError(f"device 'cuda' needs CuPy, which is not installed: {CUDA_EXTRA_HINT}") from exc
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # pragma: no cover - depends on the machine
        raise DeviceError(f"CuPy is installed but no usable GPU was found ({exc}); {CUDA_EXTRA_HINT}") from exc
    if n == 0:  # pragma: no cover - depends on the machine
        raise DeviceError(f"CuPy is installed but no GPU was found; {CUDA_EXTRA_HINT}")
    _cupy = cupy
    return cupy


def cuda_is_available() -> bool:
    """True when CuPy imports and at least one GPU answers. Never raises."""
    try:
        cupy_or_error()
        return True
    except DeviceError:
        return False


def _is_cupy_array(array) -> bool:
    # Checked by the type's module name so that the CPU never imports CuPy.
    return type(array).__module__.startswith("cupy")


def get_array_module(*arrays):
    """``numpy`` or ``cupy``, whichever holds the arrays (``numpy`` for scalars and lists)."""
    for a in arrays:
        if type(a) is not np.ndarray and _is_cupy_array(a):  # (a NumPy array, the common case, is never CuPy's)
            return cupy_or_error()
    return np


def device_of(array) -> Device:
    """The device an array lives on."""
    if _is_cupy_array(array):
        return Device(f"cuda:{array.device.id}")
    return CPU


def to_device(array, dev: "str | Device"):
    """Copy ``array`` to ``dev`` (no copy when it is already there)."""
    dev = device(dev)
    if dev.type == "cpu":
        return array.get() if _is_cupy_array(array) else array
    if array.dtype == BFLOAT16:
        raise TypeError(f"cannot move a bfloat16 tensor to {dev}: bfloat16 is a CPU storage dtype here (CuPy has "
                        "no bfloat16); convert it first (.float() or .half())")
    cp = cupy_or_error()
    if dev.index >= cp.cuda.runtime.getDeviceCount():
        raise DeviceError(f"device {dev} does not exist: this machine has {cp.cuda.runtime.getDeviceCount()} GPU(s)")
    with cp.cuda.Device(dev.index):
        if _is_cupy_array(array) and array.device.id == dev.index:
            return array
        return cp.asarray(array)


# --------------------------------------------------------------------------------------------
# Dtypes
# --------------------------------------------------------------------------------------------

_DTYPE_NAMES = {
    "float16": np.float16, "half": np.float16,
    "float32": np.float32, "float": np.float32,
    "float64": np.float64, "double": np.float64,
    "int8": np.int8, "int16": np.int16, "short": np.int16, "int32": np.int32, "int": np.int32,
    "int64": np.int64, "long": np.int64, "uint8": np.uint8, "bool": np.bool_,
    "complex64": np.complex64, "cfloat": np.complex64, "complex128": np.complex128, "cdouble": np.complex128,
}
# bfloat16 is a storage dtype (ml_dtypes'; NumPy kind 'V'): ops compute on float32 copies and round the
# result back (autograd/bfloat16.py), as PyTorch's CPU kernels do
# PyTorch dtypes minitorch_ln refuses on purpose, with the reason (minitorch_ln/dtypes.py explains)
_UNSUPPORTED_DTYPES: dict = {}
if ml_dtypes is not None:
    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
    _DTYPE_NAMES["bfloat16"] = ml_dtypes.bfloat16
else:  # a dtype no array has, so every `dtype == BFLOAT16` test is False
    BFLOAT16 = np.dtype([("bfloat16 needs ml_dtypes", "<u2")])
    _UNSUPPORTED_DTYPES["bfloat16"] = ("bfloat16 needs the ml_dtypes package (a dependency of minitorch-ln that is not "
                                       "installed here): pip install ml_dtypes")
_SUPPORTED = {np.dtype(t) for t in _DTYPE_NAMES.values()}

_default_float = np.dtype(np.float32)


def default_float_dtype() -> np.dtype:
    """The dtype of Python floats and float factories: float32 (as PyTorch) unless
    :func:`minitorch_ln.dtypes.set_default_dtype` changed it."""
    return _default_float


def as_dtype(dtype) -> np.dtype:
    """Normalise a dtype given as a NumPy dtype, a type or a name (``"float32"``)."""
    name = getattr(dtype, "name", dtype)  # "bfloat16", a placeholder's or ml_dtypes' name
    if type(name) is str and name in _UNSUPPORTED_DTYPES:
        raise TypeError(_UNSUPPORTED_DTYPES[name])
    if isinstance(dtype, str):
        if dtype not in _DTYPE_NAMES:
            raise TypeError(f"unknown dtype {dtype!r}: expected one of {sorted(_DTYPE_NAMES)}")
        return np.dtype(_DTYPE_NAMES[dtype])
    try:
        d = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"expected a dtype such as float32 or int64, got {dtype!r}") from exc
    if d not in _SUPPORTED:
        raise TypeError(f"dtype {d} is not supported: expected one of {sorted(str(s) for s in _SUPPORTED)}")
    return d


def is_floating(dtype) -> bool:
    d = np.dtype(dtype)
    return d.kind == "f" or d == BFLOAT16


def default_complex_dtype() -> np.dtype:
    """The dtype of Python complex numbers and ``tensor([1j])``: complex64 while the default float dtype is
    float32, complex128 with float64 (as PyTorch's ``get_default_complex_dtype`` follows it)."""
    return to_complex(_default_float)


def to_complex(dtype) -> np.dtype:
    """The complex dtype of a float dtype's precision (float32 -> complex64, float64 -> complex128); a
    complex dtype is returned as it is. Raises TypeError for float16 (PyTorch's complex32 is not supported)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return dtype
    if dtype == np.float16:
        raise TypeError("complex32 (ComplexHalf, float16 with a complex operand) is not supported by minitorch_ln: "
                        "convert the float16 tensor to float32 first")
    return np.dtype(np.complex128) if dtype == np.float64 else np.dtype(np.complex64)


def _category(dtype) -> int:
    d = np.dtype(dtype)
    return 2 if d == BFLOAT16 else {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[d.kind]


def can_cast(from_dtype, to_dtype) -> bool:
    """PyTorch's ``can_cast`` (c10's ``canCast``): whether an op's result of ``from_dtype`` may be
    stored into a tensor of ``to_dtype`` -- never a float into an integer or bool, never an integer
    into bool; within a category (float64 into float32) always."""
    return _category(from_dtype) <= _category(to_dtype)


_TORCH_TYPE_NAMES = {
    np.dtype(np.complex64): "ComplexFloat", np.dtype(np.complex128): "ComplexDouble",
    np.dtype(np.float16): "Half", np.dtype(np.float32): "Float", np.dtype(np.float64): "Double",
    np.dtype(np.int8): "Char", np.dtype(np.int16): "Short", np.dtype(np.int32): "Int",
    np.dtype(np.int64): "Long", np.dtype(np.uint8): "Byte", np.dtype(np.bool_): "Bool", BFLOAT16: "BFloat16",
}


def torch_type_name(dtype) -> str:
    """PyTorch's name of a dtype in its error messages: float32 is ``Float``, int64 ``Long``."""
    return _TORCH_TYPE_NAMES.get(np.dtype(dtype), str(np.dtype(dtype)))


def result_dtype(a_dtype, a_is_scalar: bool, b_dtype, b_is_scalar: bool, *,
                 a_is_number: bool | None = None, b_is_number: bool | None = None) -> np.dtype:
    """PyTorch's type promotion for a binary op.

    Operands are ranked by category (bool < integer < float) and, within the highest category
    present, by kind: a dimensioned tensor decides before a 0-d tensor, which decides before a
    Python/NumPy number. So a float32 tensor times ``np.sqrt(2)`` (a float64 number) stays float32,
    an int64 tensor times ``0.5`` gives the default float dtype (float32), and an int64 tensor plus
    a 0-d float64 tensor gives float64 (as PyTorch). ``a_is_scalar``: ``a`` is 0-d (a 0-d tensor or
    a number); ``a_is_number`` (default: ``a_is_scalar``): it is a Python/NumPy number.
    """
    a_dtype, b_dtype = np.dtype(a_dtype), np.dtype(b_dtype)
    a_num = a_is_scalar if a_is_number is None else a_is_number
    b_num = b_is_scalar if b_is_number is None else b_is_number
    # 0: dimensioned tensor, 1: 0-d tensor, 2: number
    a_rank = 2 if a_num else (1 if a_is_scalar else 0)
    b_rank = 2 if b_num else (1 if b_is_scalar else 0)
    ca, cb = _category(a_dtype), _category(b_dtype)
    if ca == 3 or cb == 3:
        return _complex_result(a_dtype, a_rank, b_dtype, b_rank)
    if ca != cb:  # the higher category decides (int64 + float32 tensors -> float32, not NumPy's float64)
        dt, rank = (a_dtype, a_rank) if ca > cb else (b_dtype, b_rank)
    elif a_rank != b_rank:  # same category: the more dimensioned operand decides
        return a_dtype if a_rank < b_rank else b_dtype
    else:
        dt, rank = np.result_type(a_dtype, b_dtype), a_rank  # bfloat16 with float16 -> float32, as PyTorch
    if rank == 2 and (dt.kind == "f" or dt == BFLOAT16):  # a Python float with an int/bool tensor -> the default float dtype
        return _default_float
    return dt


def _complex_result(a_dtype, a_rank, b_dtype, b_rank) -> np.dtype:
    """:func:`result_dtype` when an operand is complex, as c10's ``combine_categories``: a complex number
    is the default complex dtype; a complex operand with a float one of a higher participation rank takes
    that float's precision (complex64 with a float64 tensor -> complex128, with a 0-d float64 -> complex64;
    a float32 tensor with ``1j`` -> complex64); integers and bools never widen a complex operand."""
    if a_rank == 2 and a_dtype.kind == "c":
        a_dtype = default_complex_dtype()
    if b_rank == 2 and b_dtype.kind == "c":
        b_dtype = default_complex_dtype()
    if a_rank == 2 and a_dtype.kind == "f":
        a_dtype = _default_float
    if b_rank == 2 and b_dtype.kind == "f":
        b_dtype = _default_float
    if a_rank == b_rank:  # one participation level: complex, of the wider precision of the two
        if a_dtype.kind in "fc" and b_dtype.kind in "fc":
            return to_complex(np.result_type(*[np.dtype(d.char.lower()) for d in (a_dtype, b_dtype)]))
        return a_dtype if a_dtype.kind == "c" else b_dtype
    (hi, _), (lo, _) = sorted([(a_dtype, a_rank), (b_dtype, b_rank)], key=lambda p: p[1])
    if hi.kind == "c":
        return hi
    return to_complex(hi) if hi.kind == "f" else lo


# --------------------------------------------------------------------------------------------
# Random generators: one per device, all reseeded by manual_seed. The CPU's is PyTorch's mt19937
# (mt19937.py), seeded with PyTorch's default seed until manual_seed; a GPU keeps CuPy's own.
# --------------------------------------------------------------------------------------------

_generators: dict = {}
_seed = None


def manual_seed(seed: int) -> None:
    """Seed every device's generator (as ``torch.manual_seed``)."""
    global _seed
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise TypeError(f"manual_seed expects an int, got {type(seed).__name__}")
    if not 0 <= int(seed) < 2**64:
        raise ValueError(f"manual_seed expects an integer in [0, 2**64), got {seed}")
    _seed = int(seed)
    _generators.clear()


def generator(dev: "str | Device | None" = None):
    """The random generator of ``dev``: a :class:`~minitorch_ln.mt19937.CPUGenerator` or ``cupy.random.Generator``."""
    dev = device(dev)
    gen = _generators.get(dev)
    if gen is None:
        if dev.type == "cpu":
            # never seeded: a seed from the OS's entropy, as PyTorch seeds its default generator at start
            # (torch.initial_seed() differs from process to process; a new torch.Generator() does not)
            gen = CPUGenerator(int.from_bytes(os.urandom(8), "little") if _seed is None else _seed)
        else:
            cp = cupy_or_error()
            with cp.cuda.Device(dev.index):
                gen = cp.random.default_rng(_seed)
        _generators[dev] = gen
    return gen


def get_rng_state() -> dict:
    """The CPU generator's state (a JSON-able dict: PyTorch's 5056 state bytes in hex), for checkpoints."""
    return {"mt19937": generator("cpu").get_state().tobytes().hex()}


def set_rng_state(state: dict) -> None:
    """Restore the CPU generator's state saved by :func:`get_rng_state`.

    Raises:
        ValueError: a state of another kind (such as NumPy's PCG64 dict from an older checkpoint).
    """
    if not isinstance(state, dict) or "mt19937" not in state:
        raise ValueError("set_rng_state expects the dict made by get_rng_state() ({'mt19937': hex}), got "
                         f"{type(state).__name__}{' with keys ' + str(sorted(state)) if isinstance(state, dict) else ''}")
    generator("cpu").set_state(np.frombuffer(bytes.fromhex(state["mt19937"]), dtype=np.uint8))
