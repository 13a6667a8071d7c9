"""Optimizers and learning-rate schedules, mirroring ``torch.optim`` (names, defaults and update formulas)."""

from . import lr_scheduler
from ..nn.utils import clip_grad_norm_, clip_grad_value_
from .adam import Adam, AdamW
from .adam_variants import Adamax, NAdam, RAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .optimizer import Optimizer
from .rprop_asgd import ASGD, Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "RMSprop", "Rprop",
           "ASGD", "lr_scheduler", "clip_grad_norm_", "clip_grad_value_"]
