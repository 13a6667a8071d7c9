"""Optimizers and learning-rate schedules, mirroring ``torch.optim`` (names, defaults and update formulas)."""

from . import lr_scheduler
from ..nn.utils import clip_grad_norm_, clip_grad_value_
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler", "clip_grad_norm_", "clip_grad_value_"]
