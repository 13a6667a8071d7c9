"""PyTorch's checkpoint files, in and out, without running pickle code.

:func:`load_torch` reads what real ``torch.save`` writes (the zip format and the legacy stream)
through an allow-listed unpickler (:mod:`.unpickler`) that never executes code; :func:`save_torch`
writes the zip format that real ``torch.load(f, weights_only=True)`` reads. :func:`minitorch_ln.load`
and :func:`minitorch_ln.save` (``format="torch"``) call them; ``docs/checkpoints.md`` describes both
formats and the allow-list.
"""

from .reader import is_torch_file, load_torch, read_source
from .unpickler import ForbiddenGlobalError
from .writer import save_torch, torch_bytes

__all__ = ["ForbiddenGlobalError", "is_torch_file", "load_torch", "read_source", "save_torch", "torch_bytes"]
