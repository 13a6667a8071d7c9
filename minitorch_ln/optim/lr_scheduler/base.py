"""The scheduler base class and the first schedules (``torch.optim.lr_scheduler``'s names and values).

Call ``scheduler.step()`` after ``optimizer.step()``.

A scheduler counts steps in ``last_epoch`` (PyTorch's name: it counts whatever you step it by).
Making one sets each group's ``initial_lr`` (its ``base_lr``) and applies the schedule's value at
step 0; each ``step()`` moves to the next step and writes the new ``lr`` into every group.
"""

from __future__ import annotations

import math
import numbers
import types

from ..optimizer import Optimizer


class LRScheduler:
    """Base class; subclasses define ``get_lr()`` from ``self.last_epoch`` and ``self.base_lrs``.

    Raises:
        TypeError: ``optimizer`` is not an :class:`Optimizer`.
        KeyError: ``last_epoch >= 0`` (resuming) but a group has no ``initial_lr``.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a scheduler "
                                   "with last_epoch >= 0: load the optimizer's state dict first")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """Count no steps yet and apply the schedule's value at the first step (PyTorch's name)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:  # pragma: no cover - abstract
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one step and set every group's ``lr`` to the schedule's value there.

        ``epoch`` (deprecated in PyTorch, kept for old scripts) jumps to that step instead, using
        the schedule's closed form where it has one (``_get_closed_form_lr``), as PyTorch does.
        """
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list:
        """The learning rates the last ``step()`` set, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self) -> dict:
        """Every attribute except the optimizer (``last_epoch``, ``base_lrs``, ``_last_lr``, settings)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)



class _LRScheduler(LRScheduler):
    """PyTorch's name for the base class before 2.0, still subclassed by older custom schedulers."""


def lambdas_per_group(optimizer, lr_lambda) -> list:
    """``lr_lambda`` (one function, or a list with one per parameter group) as a list of one per group, for
    :class:`LambdaLR` and ``MultiplicativeLR``. Raises ValueError for a list of another length."""
    n = len(optimizer.param_groups) if isinstance(optimizer, Optimizer) else 0
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != n:
            raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
        return list(lr_lambda)
    return [lr_lambda] * n


class LambdaLR(LRScheduler):
    """``lr = base_lr · lr_lambda(step)``; ``lr_lambda`` is one function, or a list with one per group.

    Raises:
        ValueError: a list of lambdas whose length is not the number of groups.
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        self.lr_lambdas = lambdas_per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict:
        # functions are not saved (as PyTorch); the state of callable objects is
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) or not hasattr(fn, "__dict__")
                               else dict(fn.__dict__) for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas", [None] * len(self.lr_lambdas))
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` steps: ``lr = base_lr · gamma^⌊step / step_size⌋``.

    Computed recursively as PyTorch does (``lr ← lr · gamma`` at each multiple of ``step_size``).

    Raises:
        ValueError: ``step_size`` not a positive int.
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        if not isinstance(step_size, numbers.Integral) or step_size <= 0:
            raise ValueError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        self.step_size, self.gamma = int(step_size), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine from ``base_lr`` down to ``eta_min`` over ``T_max`` steps (Loshchilov & Hutter, 2017, SGDR).

    ``lr_t = eta_min + (base_lr - eta_min) · (1 + cos(π t / T_max)) / 2``, computed with PyTorch's
    recursive form (each lr from the previous one), so that it follows PyTorch's values exactly and,
    like PyTorch, keeps going (rising again) past ``T_max``.

    Raises:
        ValueError: ``T_max`` not a positive int.
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):  # noqa: N803
        if not isinstance(T_max, numbers.Integral) or T_max <= 0:
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive int, got {T_max!r}")
        self.T_max, self.eta_min = int(T_max), eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups, t, T = self.optimizer.param_groups, self.last_epoch, self.T_max  # noqa: N806
        if self._is_initial:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and t > 0:  # resumed at step t: the closed form
            return [self.eta_min + (base - self.eta_min) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:  # at the bottom the ratio below is 0/0: add the step instead
            return [g["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T)) * (g["lr"] - self.eta_min)
                + self.eta_min for g in groups]

    def _get_closed_form_lr(self) -> list:
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class LinearWarmupCosineLR(LRScheduler):
    """Linear warm-up from 0 to ``base_lr`` over ``warmup_steps``, then cosine down to ``min_lr`` at ``total_steps``.

    ``lr_t = base_lr · t / warmup_steps`` for ``t < warmup_steps``;
    ``lr_t = min_lr + (base_lr - min_lr) · (1 + cos(π p)) / 2`` with ``p = (t - warmup_steps) /
    (total_steps - warmup_steps)`` up to ``total_steps``, and ``min_lr`` after. This is the schedule of
    Hugging Face's ``get_cosine_schedule_with_warmup`` (with a floor ``min_lr``), used to train GPT-2-like
    models; as there, the first step (t = 0) of a warm-up has lr 0.

    Raises:
        ValueError: ``warmup_steps < 0``, ``total_steps <= warmup_steps``, or ``min_lr < 0``.
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int, total_steps: int, min_lr: float = 0.0,
                 last_epoch: int = -1):
        if not isinstance(warmup_steps, numbers.Integral) or warmup_steps < 0:
            raise ValueError(f"LinearWarmupCosineLR: warmup_steps must be an int >= 0, got {warmup_steps!r}")
        if not isinstance(total_steps, numbers.Integral) or total_steps <= warmup_steps:
            raise ValueError(
                f"LinearWarmupCosineLR: total_steps must be an int > warmup_steps ({warmup_steps}), got {total_steps!r}"
            )
        if not min_lr >= 0:
            raise ValueError(f"LinearWarmupCosineLR: min_lr must be >= 0, got {min_lr!r}")
        self.warmup_steps, self.total_steps, self.min_lr = int(warmup_steps), int(total_steps), float(min_lr)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        t = self.last_epoch
        if t < self.warmup_steps:
            return [base * t / self.warmup_steps for base in self.base_lrs]
        if t >= self.total_steps:
            return [self.min_lr for _ in self.base_lrs]
        progress = (t - self.warmup_steps) / (self.total_steps - self.warmup_steps)
        return [self.min_lr + (base - self.min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress)) for base in self.base_lrs]
