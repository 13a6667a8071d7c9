"""Graded backward exercises, for notebooks: ``check``, ``list``, ``start`` (``apps/exercises/``).

    import minitorch_ln.exercises as ex
    ex.list()                                   # ['layer_norm', 'batch_norm', ...]
    ex.start("layer_norm", dir=".")             # writes layer_norm_backward.py, a skeleton
    result = ex.check("layer_norm", layer_norm_backward)   # prints nothing; print(result)
    result = ex.check("layer_norm", layer_norm_backward, train=True)  # also trains with it

The same from the shell: ``minitorch-ln exercise list|start|check``. docs/exercises.md lists the
exercises with their signatures and shapes.
"""

from .apps.exercises import check, get, list_exercises, skeleton, start

__all__ = ["check", "get", "list", "skeleton", "start"]

list = list_exercises
