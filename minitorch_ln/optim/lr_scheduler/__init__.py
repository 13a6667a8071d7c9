"""Learning-rate schedules, as ``torch.optim.lr_scheduler``: call ``scheduler.step()`` after ``optimizer.step()``
(``ReduceLROnPlateau``: ``scheduler.step(metric)``).

One module per family: ``base`` (the base class, ``LambdaLR``, ``StepLR``, ``CosineAnnealingLR``,
``LinearWarmupCosineLR``), ``multiplicative`` (factors at some steps), ``cyclic`` (up and down:
warm restarts, one-cycle, cyclic) and ``combined`` (sequences and chains of schedulers, and the
metric-driven ``ReduceLROnPlateau``).
"""

from ..optimizer import Optimizer
from .base import CosineAnnealingLR, LambdaLR, LinearWarmupCosineLR, LRScheduler, StepLR, _LRScheduler  # noqa: F401
from .combined import ChainedScheduler, ReduceLROnPlateau, SequentialLR
from .cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from .multiplicative import ConstantLR, ExponentialLR, LinearLR, MultiplicativeLR, MultiStepLR, PolynomialLR

__all__ = [
    "LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
    "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
    "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", "LinearWarmupCosineLR",
    "Optimizer",  # imported there too in PyTorch's module (torch.optim.lr_scheduler.Optimizer)
]
