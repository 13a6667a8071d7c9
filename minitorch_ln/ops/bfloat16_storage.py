"""The ops that keep bfloat16 and float16 as they are: they move memory (views, copies, casts, device moves)
and so are exact in any dtype; every other op computes bfloat16 and float16 in float32
(``autograd/bfloat16.py``), but for the normalizations, which do so for float16 themselves (listed below).

Listed here, by import, rather than in each op's module: the one place that answers "which ops see
raw bfloat16 or float16?". A view must: a float32 copy would not share memory with its base.
"""

from __future__ import annotations

from ..autograd.bfloat16 import register_float16_native_ops, register_storage_ops
from .batch_norm import NativeBatchNorm, NativeBatchNormBackward
from .conversion import Cast, Clone, ToDevice
from .group_norm import NativeGroupNorm, NativeGroupNormBackward
from .indexing import GetItem
from .joining import Split
from .layer_norm import NativeLayerNorm, NativeLayerNormBackward
from .rms_norm import RMSNorm, RMSNormBackward
from .shape import BroadcastTo, Permute, Reshape
from .strided_views import AsStrided, Windows
from .view_ops import Diagonal

__all__: list = []

register_storage_ops(Reshape, BroadcastTo, Permute, GetItem, Split, Windows, AsStrided, Diagonal, Cast, Clone, ToDevice)

# The normalizations compute float16 in float32 themselves (statistics, weight and bias gradients) and take float32
# parameters with float16 input, giving float16 output and input gradient (PyTorch's mixed-precision norms): they
# see float16 as it is. (bfloat16 they see in float32, as every other op.)
register_float16_native_ops(NativeLayerNorm, NativeLayerNormBackward, NativeGroupNorm, NativeGroupNormBackward,
                            NativeBatchNorm, NativeBatchNormBackward, RMSNorm, RMSNormBackward)
