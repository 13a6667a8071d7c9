"""GPU op table rows (issue 16): BatchNorm on 4-D input, training and eval, and local response normalization.

``ROWS`` for the lead to merge into ``tests/gpu_op_table.py``; each is checked on the CPU in float64
against PyTorch by ``tests/test_op_rows_norms2.py``. The eval row's running statistics are made from
``w`` (detached, so on the input's device and outside the graph: PyTorch does not differentiate them).
"""

from __future__ import annotations

from gpu_op_table import Op, _tf, inputs, normal

import minitorch_ln.nn.functional as F
from minitorch_ln.ops.local_response_norm import local_response_norm


def _stats(w):
    """``(running_mean, running_var)`` from ``w`` without history: ``(w/2, w² + 1/2)``."""
    w = w.detach()
    return w * 0.5, w * w + 0.5


ROWS = [
    Op("batch_norm_4d", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
       lambda x, w, b: _tf().batch_norm(x, None, None, w, b, training=True),
       inputs(normal(4, 3, 5, 6), normal(3), normal(3))),
    Op("batch_norm_4d_eval", lambda x, w, b: F.batch_norm(x, *_stats(w), w, b, training=False, eps=1e-3),
       lambda x, w, b: _tf().batch_norm(x, *_stats(w), w, b, training=False, eps=1e-3),
       inputs(normal(4, 3, 5, 6), normal(3), normal(3))),
    Op("batch_norm_5d", lambda x: F.batch_norm(x, None, None, training=True),
       lambda x: _tf().batch_norm(x, None, None, training=True), inputs(normal(2, 4, 3, 2, 5))),
    Op("local_response_norm", lambda x: local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.0),
       lambda x: _tf().local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.0), inputs(normal(2, 7, 4, 5))),
    Op("local_response_norm_even", lambda x: local_response_norm(x, 4, alpha=1.0, beta=0.6, k=2.0),
       lambda x: _tf().local_response_norm(x, 4, alpha=1.0, beta=0.6, k=2.0), inputs(normal(3, 6, 9))),
]
FORWARD_ONLY: list = []
