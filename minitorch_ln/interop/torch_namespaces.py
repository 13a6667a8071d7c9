"""What the ``torch`` alias adds to minitorch_ln's own names: ``compile``, grad-mode switches, legacy
constructors, ``device``, the ``backends`` flags, and the module paths
``torch.nn.modules.<file>`` and ``torch.serialization``.

Each is small and says in its docstring what it does here; :mod:`.torch_alias` puts them into the
``torch.*`` namespaces. Nothing here is imported by minitorch_ln itself.
"""

from __future__ import annotations

import functools
import importlib

import numpy as np

from .. import backend
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..autograd.grad_mode import set_grad_enabled as _set_grad_enabled
from ..nn.module import Module
from ..tensor import Tensor
from ..tensor_legacy import LEGACY_CONSTRUCTORS  # noqa: F401 - the alias's FloatTensor, ...

DOC = "docs/torch_compat.md"


# ------------------------------------------------------------------------------------------ compile


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None, name=None,  # noqa: A001
            disable=False, **kwargs):
    """``torch.compile``: returns ``model`` itself; there is no compiler (minitorch_ln runs eagerly).

    A Module gets ``_orig_mod`` pointing to itself, so code written for PyTorch's wrapper
    (``model._orig_mod``) works; unlike PyTorch's wrapper, ``state_dict()`` keys carry no
    ``_orig_mod.`` prefix. Used bare (``@torch.compile``) or with options
    (``@torch.compile(mode="max-autotune")``) it is a decorator that returns the function. Every
    option is accepted and ignored.
    """
    if model is None:
        return lambda fn: compile(fn)
    if not callable(model):
        raise RuntimeError(f"torch.compile: expected a Module or a callable, got {type(model).__name__}")
    if isinstance(model, Module):
        object.__setattr__(model, "_orig_mod", model)  # not a submodule: no cycle in modules()
    return model


# ------------------------------------------------------------------------------------------ grad modes


class set_grad_enabled:
    """``torch.set_grad_enabled(mode)``: switches graph recording at once; used as a context manager
    (or decorator) it restores the previous mode on exit, as PyTorch's."""

    def __init__(self, mode: bool):
        if not isinstance(mode, (bool, np.bool_)):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self.mode, self.prev = bool(mode), is_grad_enabled()
        _set_grad_enabled(self.mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set_grad_enabled(self.prev)
        return False

    def __call__(self, fn):
        _set_grad_enabled(self.prev)  # as a decorator it must not switch now

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(self.mode):
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self) -> str:
        return f"torch.set_grad_enabled(mode={self.mode})"


class inference_mode:
    """``torch.inference_mode(mode=True)``: here the same as ``no_grad`` (results record no graph;
    there are no separate "inference tensors"). ``mode=False`` changes nothing. Works as a context
    manager and as a decorator, with or without parentheses."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # @torch.inference_mode without parentheses
            return cls(True)(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        self._ctx = no_grad() if self.mode else None
        if self._ctx is not None:
            self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(self.mode):
                return fn(*args, **kwargs)

        return wrapper


_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted and recorded; changes nothing: float32 matrix products here are NumPy's/CuPy's float32
    (CuPy uses TF32 only when the ``CUPY_TF32=1`` environment variable is set before it starts).

    Raises ValueError for a name other than ``"highest"``, ``"high"``, ``"medium"`` (PyTorch only warns).
    """
    if precision not in ("highest", "high", "medium"):
        raise ValueError(f"{precision!r} is not one of 'highest', 'high', or 'medium'")
    _matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    return _matmul_precision[0]


def manual_seed(seed):
    """``torch.manual_seed``: reseed every device's global stream; returns the default generator."""
    gen = _generator_module()
    if gen is not None:
        return gen.manual_seed(seed)
    backend.manual_seed(seed)
    return None


def _generator_module():
    """``minitorch_ln.ops.generator`` (Generator, default_generator) where this build has it."""
    try:
        return importlib.import_module("minitorch_ln.ops.generator")
    except ImportError:
        return None


# ------------------------------------------------------------------------------------------ legacy constructors


# FloatTensor, LongTensor, ...: tensor_legacy.py (also minitorch_ln.FloatTensor, ...)


# ------------------------------------------------------------------------------------------ device


class _DeviceMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, backend.Device)


class device(backend.Device, metaclass=_DeviceMeta):  # noqa: N801 - PyTorch's name
    """``torch.device("cuda")``, ``torch.device("cuda", 1)``, ``torch.device("cpu")``: a
    :class:`minitorch_ln.backend.Device`; ``isinstance(t.device, torch.device)`` holds."""

    __slots__ = ()

    def __init__(self, type, index=None):  # noqa: A002 - PyTorch's name
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type
        super().__init__(f"{type}:{index}" if index is not None else type)


# ------------------------------------------------------------------------------------------ backends


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: settable flags that change nothing here."""

    def __init__(self):
        self.allow_tf32 = False  #: no effect: CuPy's TF32 is the CUPY_TF32 environment variable
        self.allow_fp16_reduced_precision_reduction = True  #: no effect (cuBLAS defaults)
        self.allow_bf16_reduced_precision_reduction = True  #: no effect (no bfloat16 here)

    def __repr__(self) -> str:
        return f"torch.backends.cuda.matmul(allow_tf32={self.allow_tf32})"


BACKENDS_CUDA = {
    "__doc__": "torch.backends.cuda: `matmul.allow_tf32` and friends are accepted and settable; they do "
               "nothing here (on the CPU nothing uses TF32; on a GPU CuPy reads CUPY_TF32 at start-up).",
    "matmul": _MatmulFlags(),
    "is_built": lambda: True,
}

BACKENDS_CUDNN = {
    "__doc__": "torch.backends.cudnn: `benchmark`, `deterministic`, `allow_tf32` and `enabled` are settable "
               "attributes with PyTorch's defaults and no effect: minitorch_ln calls no cuDNN (its GPU "
               "convolutions are im2col + cuBLAS, deterministic; on the CPU there is nothing to tune).",
    "benchmark": False, "deterministic": False, "allow_tf32": True, "enabled": True,
    "is_available": lambda: False, "version": lambda: None,
}

BACKENDS_MPS = {"__doc__": "torch.backends.mps: no Apple GPU backend here.",
                "is_available": lambda: False, "is_built": lambda: False}


class DataParallel:
    """``torch.nn.DataParallel``: importable; building one raises (one device per process here)."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"torch.nn.DataParallel: minitorch_ln runs a model on one device; use the model itself "
                           f"(see {DOC})")


# ------------------------------------------------------------------------------------------ module paths

# torch.nn.modules.<file>: the classes PyTorch 2.13 defines in that file which minitorch_ln.nn has
# (pickled configs and isinstance checks name them: torch.nn.modules.activation.MultiheadAttention)
NN_MODULE_FILES = {
    "activation": "CELU ELU GELU GLU Hardshrink Hardsigmoid Hardswish Hardtanh LeakyReLU LogSigmoid LogSoftmax "
                  "Mish MultiheadAttention PReLU RReLU ReLU ReLU6 SELU SiLU Sigmoid Softmax Softmin Softplus "
                  "Softshrink Softsign Tanh Tanhshrink Threshold",
    "batchnorm": "BatchNorm1d BatchNorm2d BatchNorm3d",
    "container": "ModuleDict ModuleList Sequential",
    "conv": "Conv1d Conv2d ConvTranspose1d ConvTranspose2d",
    "distance": "CosineSimilarity PairwiseDistance",
    "dropout": "Dropout",
    "flatten": "Flatten Unflatten",
    "fold": "Fold Unfold",
    "instancenorm": "InstanceNorm1d InstanceNorm2d InstanceNorm3d",
    "linear": "Identity Linear",
    "loss": "BCELoss BCEWithLogitsLoss CosineEmbeddingLoss CrossEntropyLoss GaussianNLLLoss HuberLoss KLDivLoss "
            "L1Loss MSELoss MarginRankingLoss NLLLoss PoissonNLLLoss SmoothL1Loss SoftMarginLoss TripletMarginLoss",
    "module": "Module",
    "normalization": "GroupNorm LayerNorm LocalResponseNorm RMSNorm",
    "pixelshuffle": "PixelShuffle PixelUnshuffle",
    "pooling": "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveMaxPool1d AdaptiveMaxPool2d AvgPool1d AvgPool2d "
               "MaxPool1d MaxPool2d",
    "sparse": "Embedding",
    "transformer": "Transformer TransformerDecoder TransformerDecoderLayer TransformerEncoder TransformerEncoderLayer",
    "upsampling": "Upsample UpsamplingBilinear2d UpsamplingNearest2d",
}


def nn_modules_file(file: str) -> dict:
    """The names of ``torch.nn.modules.<file>``: minitorch_ln.nn's classes of that name."""
    nn = importlib.import_module("minitorch_ln.nn")
    return {name: getattr(nn, name) for name in NN_MODULE_FILES[file].split()}


# namespaces that need an optional extra (importing them without it raises, naming the pip command):
# their names for dir() and docs/torch_compat.md
EXTRA_NAMES = {"torch.utils.tensorboard": ["SummaryWriter"]}


def serialization_names() -> dict:
    """``torch.serialization``'s ``save`` and ``load`` (the allow-list comes from minitorch_ln.safe_globals)."""
    from .. import serialization  # noqa: PLC0415

    return {"save": serialization.torch_save, "load": serialization.load}
