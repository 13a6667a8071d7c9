"""Tools that read the graph, above the engine and never imported by it: LayerNorm's backward checked
term by term (``terms``), Jacobian heat-maps (``heatmap``), graph drawing (``graph``) and gradient
norms per node (``grad_norms``); any gradient fitted as a combination of its formula's terms
(``term_fit``, which the graded exercises use).

Importing this package attaches LayerNorm's term check to the op and makes ``gradcheck(heatmap=...)``
work; ``import minitorch_ln`` does it. The precision-aware gradient check belongs to ``gradcheck``
itself (``minitorch_ln.autograd.precision_report``).
"""

from .grad_norms import GradNormRecorder, record_grad_norms, recorded_grad_norm
from .graph import dot_available, draw_graph, draw_graphs, save_graph
from .heatmap import jacobian_heatmap
from .term_fit import TermFit, fit_terms
from .terms import (
    LAYER_NORM_TERMS,
    TermReport,
    check_layer_norm_terms,
    layer_norm_term_check,
)

__all__ = [
    "LAYER_NORM_TERMS",
    "GradNormRecorder",
    "TermFit",
    "TermReport",
    "check_layer_norm_terms",
    "dot_available",
    "draw_graph",
    "draw_graphs",
    "fit_terms",
    "jacobian_heatmap",
    "layer_norm_term_check",
    "record_grad_norms",
    "recorded_grad_norm",
    "save_graph",
]
