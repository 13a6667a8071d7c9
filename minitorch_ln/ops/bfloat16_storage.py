"""The ops that keep bfloat16 as it is: they move memory (views, copies, casts, device moves) and so
are exact in any dtype; every other op computes bfloat16 in float32 (``autograd/bfloat16.py``).

Listed here, by import, rather than in each op's module: the one place that answers "which ops see
raw bfloat16?". A view must: a float32 copy would not share memory with its base.
"""

from __future__ import annotations

from ..autograd.bfloat16 import register_storage_ops
from .conversion import Cast, Clone, ToDevice
from .indexing import GetItem
from .joining import Split
from .shape import BroadcastTo, Permute, Reshape
from .strided_views import AsStrided, Windows
from .view_ops import Diagonal

__all__: list = []

register_storage_ops(Reshape, BroadcastTo, Permute, GetItem, Split, Windows, AsStrided, Diagonal, Cast, Clone, ToDevice)
