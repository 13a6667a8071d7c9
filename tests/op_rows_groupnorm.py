"""GPU op-table rows for GroupNorm and InstanceNorm (``ops/group_norm.py``), merged into ``gpu_op_table.OPS``.

Shapes cover the three kernel paths on CUDA: short group rows (the LayerNorm register kernels),
``(N, C)`` input (``L = 1``), and a group row too long for the registers (the CuPy fallback).
"""

from __future__ import annotations

from gpu_op_table import Op, _tf, inputs, normal

from minitorch_ln.ops.group_norm import group_norm, instance_norm

ROWS = [
    Op("group_norm", lambda x, w, b: group_norm(x, 3, w, b), lambda x, w, b: _tf().group_norm(x, 3, w, b),
       inputs(normal(4, 6, 5, 5), normal(6), normal(6))),
    Op("group_norm_nc", lambda x, w, b: group_norm(x, 2, w, b), lambda x, w, b: _tf().group_norm(x, 2, w, b),
       inputs(normal(7, 8), normal(8), normal(8))),
    Op("group_norm_no_affine", lambda x: group_norm(x, 4), lambda x: _tf().group_norm(x, 4), inputs(normal(2, 8, 3, 7))),
    Op("group_norm_one_group_long", lambda x, w: group_norm(x, 1, w), lambda x, w: _tf().group_norm(x, 1, w),
       inputs(normal(2, 4, 100, 100), normal(4))),
    Op("instance_norm", lambda x, w, b: instance_norm(x, weight=w, bias=b),
       lambda x, w, b: _tf().instance_norm(x, weight=w, bias=b), inputs(normal(3, 4, 6, 5), normal(4), normal(4))),
    Op("instance_norm_no_affine", lambda x: instance_norm(x), lambda x: _tf().instance_norm(x), inputs(normal(2, 5, 9))),
]

FORWARD_ONLY: list = []
