"""Gradient norms at every node of a graph, recorded by hooks during one backward, for ``draw_graph``.

``record_grad_norms(y)`` puts a hook on every node of ``y``'s graph, so the next ``y.backward()``
stores the norm of the gradient arriving at each node; ``draw_graph(y, show_grad_norms=True)`` then
prints it in each node and colours the nodes on a log scale. The engine itself is untouched.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..tensor import Tensor
from .graph import _roots, _root_node, _saved_lines, _walk

__all__ = ["GradNormRecorder", "record_grad_norms", "recorded_grad_norm"]


class GradNormRecorder:
    """Hooks that store, at each node of a graph, the norm of the gradient that reaches it.

    Made by :func:`record_grad_norms`. Use as a context manager (the hooks go at exit) or call
    :meth:`remove`; the norms stay on the nodes for :func:`draw_graph` to read.
    """

    def __init__(self, nodes):
        self._hooks = []
        for node in nodes:
            node._viz_grad_norms = {}
            # backward frees saved tensors: keep their description for a drawing made afterwards
            node._viz_saved = None if node._freed else _saved_lines(node, False, {})
            for i in range(len(node.outputs_meta)):
                hook = _norm_hook(node, i)
                node.register_pre_hook(i, hook)
                self._hooks.append((node, i, hook))

    def remove(self) -> None:
        for node, i, hook in self._hooks:
            hooks = (node._pre_hooks or {}).get(i, [])
            if hook in hooks:
                hooks.remove(hook)
        self._hooks = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def _norm_hook(node, i):
    def hook(grad):
        data = grad.array
        xp = backend.get_array_module(data)
        node._viz_grad_norms[i] = float(xp.sqrt((data.astype(np.float64) ** 2).sum()))
        return None

    return hook


def record_grad_norms(tensor) -> GradNormRecorder:
    """Record, during the next backward through ``tensor``'s graph, the gradient norm at every node.

    Args:
        tensor: a Tensor (or a list of Tensors) with an autograd graph.

    Returns:
        a :class:`GradNormRecorder` (a context manager; its hooks can be removed with ``remove()``).

    Raises:
        TypeError / ValueError: as :func:`draw_graph`.
    """
    roots = _roots(tensor)
    return GradNormRecorder(_walk([_root_node(t) for t in roots if _root_node(t) is not None])[0])


def recorded_grad_norm(tensor) -> float | None:
    """The norm of the gradient that reached ``tensor`` in the backward recorded by :func:`record_grad_norms`.

    Works for any tensor of the recorded graph (a layer's output, a leaf). Returns ``None`` when no
    gradient reached it.

    Raises:
        TypeError: ``tensor`` is not a Tensor.
        RuntimeError: its node was not part of a graph passed to :func:`record_grad_norms`.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"recorded_grad_norm: expected a Tensor, got {type(tensor).__name__}")
    node = _root_node(tensor)
    norms = getattr(node, "_viz_grad_norms", None) if node is not None else None
    if norms is None:
        raise RuntimeError(
            "recorded_grad_norm: no gradient norms were recorded for this tensor's node: call "
            "viz.record_grad_norms(loss) before loss.backward(), with loss depending on this tensor"
        )
    return norms.get(tensor._output_nr if tensor.grad_fn is not None else 0)


# ------------------------------------------------------------------------------ drawing
