"""The one table of ONNX mappings: recorded op (Function or Module class) → mapping function.

``MAPPINGS`` merges the tables of :mod:`.map_math`, :mod:`.map_shape`, :mod:`.map_nn` and
:mod:`.map_layers`; ``LAYER_OPS`` lists the modules recorded as one op (with the condition, e.g.
BatchNorm only in eval). An op missing here is refused by name (``UnsupportedOperatorError``).
"""

from __future__ import annotations

from ..ops.batch_norm import NativeBatchNorm
from ..ops.dropout import Dropout
from . import map_layers, map_math, map_nn, map_shape

MAPPINGS = {**map_math.MAPPINGS, **map_shape.MAPPINGS, **map_nn.MAPPINGS, **map_layers.MAPPINGS}
LAYER_OPS = map_layers.LAYER_OPS

# Ops refused on purpose, with the reason (they only run in training mode, which export leaves).
REFUSED = {
    Dropout: "dropout in training mode (a model in training mode with training=TrainingMode.PRESERVE, or "
             "training=TrainingMode.TRAINING / True): ONNX Runtime would not drop the same units; export in eval "
             "mode, where dropout is the identity (training=None, the default, or TrainingMode.EVAL)",
    NativeBatchNorm: "batch normalization with batch statistics (training mode, or track_running_stats=False): "
                     "ONNX's BatchNormalization uses running statistics",
}


def supported_ops() -> list:
    """The names of every op with an ONNX mapping, sorted (Function and Module class names)."""
    return sorted({getattr(k, "__name__", str(k)) for k in MAPPINGS})
