"""minitorch_ln: a tensor and autograd mini-framework on NumPy (and CuPy), built around LayerNorm."""

from ._version import __version__

import numpy as _np

from . import autograd, backend, kernels, ops
from .autograd import enable_grad, no_grad
from .backend import Device, cuda_is_available, device
from .ops.generator import get_rng_state, set_rng_state  # the global CPU stream's state, PyTorch's layout

# the public op functions (PyTorch's names), most also Tensor methods: ops.__all__, gathered there from
# each op module's own __all__ (manual_seed returns the default Generator, as torch.manual_seed)
for _name in ops.__all__:
    globals()[_name] = getattr(ops, _name)
del _name

from .ops import div_rounding as _div_rounding  # noqa: E402 - div(a, b, rounding_mode=None), as torch.div (not ops.div)
from .ops.out_variants import with_out as _with_out  # noqa: E402

div = _with_out(_div_rounding, "div")
divide = _with_out(_div_rounding, "divide")
from .tensor import Tensor, tensor  # noqa: E402
from .tensor_legacy import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,  # noqa: E402
                            IntTensor, LongTensor, ShortTensor)
from .size import Size  # noqa: E402
from .tensor_str import set_printoptions  # noqa: E402
from .dtypes import bfloat16, can_cast, finfo, get_default_dtype, iinfo, promote_types, result_type, set_default_dtype  # noqa: E402
from .serialization import load, save  # noqa: E402
from . import fft, linalg, nn, optim, special, utils  # noqa: E402 - after the ops, which the layers use
from . import amp  # noqa: E402 - mixed precision: autocast, GradScaler
from . import distributed  # noqa: E402 - torch.distributed on MPI (mpi4py is imported only by init_process_group)
from .amp import autocast, get_autocast_dtype, is_autocast_enabled, set_autocast_dtype  # noqa: E402
from . import diagnostics  # noqa: E402 - attaches the LayerNorm term check and gradcheck's heat-map writer

float16 = half = _np.dtype(_np.float16)
float32 = float = _np.dtype(_np.float32)  # noqa: A001
float64 = double = _np.dtype(_np.float64)
int32 = _np.dtype(_np.int32)
int16 = short = _np.dtype(_np.int16)
int8 = _np.dtype(_np.int8)
uint8 = _np.dtype(_np.uint8)
int64 = long = _np.dtype(_np.int64)
bool = _np.dtype(_np.bool_)  # noqa: A001
complex64 = cfloat = _np.dtype(_np.complex64)
complex128 = cdouble = _np.dtype(_np.complex128)


def __getattr__(name):
    if name == "exercises":  # the graded exercises (apps layer), imported on first use: not at `import minitorch_ln`
        import importlib

        return importlib.import_module(".exercises", __name__)
    # A PyTorch name this package does not provide: say so, and where the list of what exists is.
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: minitorch_ln does not provide it "
                         "(the PyTorch names it covers, and what differs: docs/torch_compat.md)")
