"""Dynamic loss scaling, as ``torch.amp.GradScaler`` (re-exported by :mod:`minitorch_ln.amp`).

``scale(loss)`` multiplies by the scale, ``unscale_(optimizer)`` divides the gradients in place and
records whether any is inf/NaN, ``step`` skips the optimizer step when one was, and ``update`` grows
the scale by ``growth_factor`` after ``growth_interval`` clean steps or backs it off by
``backoff_factor`` after a bad one (PyTorch's ``_amp_update_scale_``; the scale is kept in float32,
as PyTorch's scale tensor). ``enabled=False`` passes everything through.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import backend
from .tensor import Tensor, tensor

# ------------------------------------------------------------------------------------------ GradScaler

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Dynamic loss scaling (``torch.amp.GradScaler``), step for step as PyTorch's.

    Typical use: ``scaler.scale(loss).backward(); scaler.step(opt); scaler.update()``, with
    ``scaler.unscale_(opt)`` before gradient clipping.

    Args:
        device: ``"cuda"`` (default; without a GPU it warns and disables itself, as PyTorch) or ``"cpu"``.
        init_scale: the first scale (``2**16``).
        growth_factor: scale multiplier after ``growth_interval`` steps without inf/NaN (> 1).
        backoff_factor: scale multiplier after a step with inf/NaN gradients (< 1).
        growth_interval: clean steps between growths (a positive int).
        enabled: ``False`` makes every method pass through (``scale`` returns its argument,
            ``step`` calls ``optimizer.step()``, ``get_scale`` is 1.0, ``state_dict`` is ``{}``).
    Raises:
        ValueError: a factor or interval out of range (PyTorch asserts).
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        if device not in ("cpu", "cuda"):
            raise ValueError(f"GradScaler: device must be 'cpu' or 'cuda', got {device!r}")
        self._device, self._enabled = device, bool(enabled)
        if self._enabled and device == "cuda" and not backend.cuda_is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        if not float(growth_factor) > 1.0:
            raise ValueError(f"The growth factor must be > 1.0, got {growth_factor}")
        if not float(backoff_factor) < 1.0:
            raise ValueError(f"The backoff factor must be < 1.0, got {backoff_factor}")
        if isinstance(growth_interval, bool) or not isinstance(growth_interval, (int, np.integer)) or growth_interval <= 0:
            raise ValueError(f"growth_interval must be a positive int, got {growth_interval!r}")
        self._init_scale = float(init_scale)
        self._scale = None  # set by the first scale(), as PyTorch's lazily made tensor
        self._growth_tracker = 0
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._per_optimizer = {}  # id(optimizer) -> {"stage": ..., "found_inf": bool}

    def is_enabled(self) -> bool:
        return self._enabled

    def _opt_state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def scale(self, outputs):
        """``outputs * scale`` (a Tensor, or a list/tuple of Tensors); the scale is a 0-d float32 tensor."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = float(np.float32(self._init_scale))
        if isinstance(outputs, Tensor):
            return outputs * tensor(self._scale, dtype=np.float32, device=outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise TypeError(f"outputs must be a Tensor or a list/tuple of Tensors, got {type(outputs).__name__}")

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, and record whether any is inf/NaN.

        Raises:
            RuntimeError: called twice since the last ``update()``, or after ``step()``.
            ValueError: a float16 gradient (PyTorch's "Attempting to unscale FP16 gradients.").
        """
        if not self._enabled:
            return
        if self._scale is None:
            raise RuntimeError("unscale_() called before scale(): there is no scale yet (scale the loss first)")
        state = self._opt_state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = np.float32(1.0 / np.float64(self._scale))  # PyTorch: scale.double().reciprocal().float()
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        if any(g.dtype == np.float16 for g in grads):
            raise ValueError("Attempting to unscale FP16 gradients.")
        found_inf = False
        with np.errstate(over="ignore", invalid="ignore"):
            for g in grads:
                xp = backend.get_array_module(g.array)
                found_inf = found_inf or not bool(xp.isfinite(g.array).all())
                g.array *= g.array.dtype.type(inv_scale)
                g._bump_version()
        # no gradient at all (a forgotten backward()): no inf check is recorded, and step() says so
        state["found_inf"], state["stage"] = (found_inf if grads else None), _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless done) and call ``optimizer.step(*args, **kwargs)`` unless a gradient was
        inf/NaN; returns what ``step`` returned, or None when skipped.

        Raises:
            RuntimeError: ``closure=`` (as PyTorch), or a second ``step`` since the last ``update()``.
            AssertionError: no parameter of ``optimizer`` has a gradient (PyTorch's "No inf checks
                were recorded for this optimizer.": usually a forgotten ``backward()``).
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._opt_state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Grow or back off the scale from the inf/NaN checks since the last update (or set ``new_scale``).

        Raises:
            AssertionError: no ``scale()`` or no ``unscale_``/``step`` since the last update (as PyTorch).
        """
        if not self._enabled:
            return
        if self._scale is None:
            raise AssertionError("Attempted update but _scale is None.  This may indicate your script did not use "
                                 "scaler.scale(loss or outputs) earlier in the iteration.")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise ValueError("new_scale should be a 1-element tensor with requires_grad=False.")
                new_scale = new_scale.item()
            self._scale = float(np.float32(new_scale))
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values() if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):  # PyTorch's _amp_update_scale_
                self._scale = float(np.float32(self._scale) * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            elif self._growth_tracker + 1 == self._growth_interval:
                with np.errstate(over="ignore"):
                    grown = np.float32(self._scale) * np.float32(self._growth_factor)
                self._scale = float(grown) if np.isfinite(grown) else self._scale
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
        self._per_optimizer = {}

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict:
        """``{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}`` ({} when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore :meth:`state_dict`'s values (nothing when disabled).

        Raises:
            RuntimeError: an empty dict (saved from a disabled scaler), as PyTorch.
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        self._scale = float(np.float32(state_dict["scale"]))
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


class CudaGradScaler(GradScaler):
    """``torch.cuda.amp.GradScaler(init_scale, ...)``: the CUDA scaler without a ``device``
    argument, deprecated in PyTorch (a FutureWarning, as there)."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
