"""Schedules that multiply the lr by a factor at some steps: ``MultiplicativeLR``, ``MultiStepLR``,
``ExponentialLR``, ``ConstantLR``, ``LinearLR``, ``PolynomialLR``.

As in PyTorch, each ``get_lr`` is recursive (the new lr from the group's current lr), so that
schedules compose when chained; ``_get_closed_form_lr`` gives the lr at ``last_epoch`` from
``base_lrs`` directly (used by ``step(epoch)`` and by :class:`SequentialLR` at a milestone).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter

from ..optimizer import Optimizer
from .base import LambdaLR, LRScheduler, lambdas_per_group


def _current_lrs(optimizer: Optimizer) -> list:
    return [group["lr"] for group in optimizer.param_groups]


class MultiplicativeLR(LRScheduler):
    """``lr ← lr · lr_lambda(step)`` at every step after the first (one function, or one per group).

    Raises:
        ValueError: a list of lambdas whose length is not the number of groups.
        TypeError: a lambda that is not callable.
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        self.lr_lambdas = lambdas_per_group(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._is_initial:
            return _current_lrs(self.optimizer)
        return [g["lr"] * fn(self.last_epoch) for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]

    # functions are not saved (as PyTorch), the state of callable objects is: LambdaLR's rule
    state_dict = LambdaLR.state_dict
    load_state_dict = LambdaLR.load_state_dict


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each milestone: ``lr = base_lr · gamma^(milestones passed)``.

    A milestone listed twice multiplies by ``gamma²`` there (milestones are counted, as PyTorch's
    ``Counter``).
    """

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch not in self.milestones:
            return _current_lrs(self.optimizer)
        return [g["lr"] * self.gamma ** self.milestones[self.last_epoch] for g in self.optimizer.param_groups]

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        # a checkpoint format may give the Counter back as a plain dict, its keys as strings (JSON)
        self.milestones = Counter({int(k): int(v) for k, v in self.milestones.items()})

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """``lr = base_lr · gammaᵗ``, computed as ``lr ← lr · gamma`` each step (as PyTorch)."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._is_initial:
            return _current_lrs(self.optimizer)
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """``lr = base_lr · factor`` for the first ``total_iters`` steps, then ``base_lr``.

    Raises:
        ValueError: ``factor`` outside ``[0, 1]``.
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _current_lrs(self.optimizer)
        return [g["lr"] * (1.0 / self.factor) for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor goes linearly from ``start_factor`` to ``end_factor`` over ``total_iters`` steps:
    ``lr = base_lr · (s + (e - s) · min(t, total_iters) / total_iters)`` (computed recursively, as PyTorch).

    Raises:
        ValueError: ``start_factor`` outside ``(0, 1]`` or ``end_factor`` outside ``[0, 1]``.
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _current_lrs(self.optimizer)
        s, e = self.start_factor, self.end_factor
        ratio = 1.0 + (e - s) / (self.total_iters * s + (self.last_epoch - 1) * (e - s))
        return [g["lr"] * ratio for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        s, e = self.start_factor, self.end_factor
        return [base * (s + (e - s) * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``lr = base_lr · (1 - min(t, total_iters) / total_iters)^power`` (computed recursively, as PyTorch)."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._is_initial or self.last_epoch > self.total_iters:
            return _current_lrs(self.optimizer)
        t, n = self.last_epoch, self.total_iters
        decay_factor = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [g["lr"] * decay_factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base in self.base_lrs]
