"""``SummaryWriter``: TensorBoard event files, as ``torch.utils.tensorboard.SummaryWriter``.

The writing is tensorboardX's (an optional extra: ``pip install 'minitorch-ln[tensorboard]'``);
this module only hands it NumPy arrays and Python numbers where a script passes minitorch_ln
tensors. Same arguments and defaults as PyTorch's (``log_dir=None`` writes under
``runs/<date>_<host>``, ``comment``, ``purge_step``, ``max_queue=10``, ``flush_secs=120``,
``filename_suffix``) and the same ``add_*`` methods, ``flush()`` and ``close()``; the files are
TensorBoard's own event format (``tensorboard --logdir runs`` shows them).

``add_graph`` raises NotImplementedError: it traces a model with ``torch.jit``, which does not exist
here.

Raises ModuleNotFoundError on import when tensorboardX is not installed, saying how to install it.
"""

from __future__ import annotations

import functools

try:
    import tensorboardX as _tbx
except ImportError:  # pragma: no cover - exercised by a test that hides tensorboardX
    raise ModuleNotFoundError(
        "torch.utils.tensorboard (minitorch_ln.utils.tensorboard) writes its event files with tensorboardX, "
        "which is not installed: pip install 'minitorch-ln[tensorboard]'", name="tensorboardX") from None

from ..tensor import Tensor

__all__ = ["SummaryWriter"]


def _plain(value):
    """A Tensor as a NumPy array (a 0-d one as its Python number); containers converted item by item."""
    if isinstance(value, Tensor):
        arr = value.detach().numpy()
        return arr.item() if arr.ndim == 0 else arr
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(_plain(v) for v in value)
    return value


def _converting(method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        return method(self, *map(_plain, args), **{k: _plain(v) for k, v in kwargs.items()})

    return wrapper


class SummaryWriter(_tbx.SummaryWriter):
    """Writes scalars, histograms, images, text, ... to TensorBoard event files under ``log_dir``."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        super().__init__(logdir=log_dir, comment=comment, purge_step=purge_step, max_queue=max_queue,
                         flush_secs=flush_secs, filename_suffix=filename_suffix)

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self.logdir

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        raise NotImplementedError("SummaryWriter.add_graph traces the model with torch.jit, which minitorch_ln "
                                  "does not have; log scalars, histograms and text instead")


for _name in dir(_tbx.SummaryWriter):
    if _name.startswith("add_") and _name != "add_graph":
        setattr(SummaryWriter, _name, _converting(getattr(_tbx.SummaryWriter, _name)))
del _name
