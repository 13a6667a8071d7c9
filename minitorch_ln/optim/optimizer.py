"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and PyTorch-layout state dicts.

A subclass gives its defaults and one method, ``_update(p, grad, state, group)``, which changes the
array ``p.array`` in place from the array ``grad``. Updates are raw array arithmetic (no graph is
recorded: an optimizer step is not part of the model), written to run on NumPy and CuPy alike.

``foreach``, ``fused`` and ``capturable`` (PyTorch's choice of implementation) are accepted, kept in
each group as PyTorch keeps them, and change nothing: on the CPU every step is the per-parameter
loop, on a GPU Adam's is one multi-tensor kernel per group whatever they say (there are no CUDA
graphs to capture). ``fused=True`` with ``foreach=True`` and ``differentiable=True`` raise.

The state dict has PyTorch's layout::

    {"state": {0: {"step": 3, "exp_avg": Tensor, ...}, 1: {...}},
     "param_groups": [{"lr": 0.001, ..., "params": [0, 1]}]}

where parameters are numbered across groups in order. ``load_state_dict`` also accepts the state
dict of a PyTorch optimizer of the same kind (tensors are converted and cast to each parameter's
dtype and device).
"""

from __future__ import annotations

import copy
import numbers
from collections import defaultdict

import numpy as np

from .. import backend
from ..autograd.grad_mode import enable_grad
from ..nn.module import zero_grads
from ..tensor import Tensor

_required = object()  # a default that must be given (PyTorch's ``required``)


def _as_array(value, key):
    """A state value (Tensor, array, PyTorch tensor) as an array, without importing PyTorch."""
    if isinstance(value, Tensor):
        return value.array
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        return value.detach().cpu().numpy()
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return value
    raise TypeError(f"optimizer state {key!r}: expected a Tensor or an array, got {type(value).__name__}")



def check_nonnegative(group: dict, key: str, label: str | None = None) -> None:
    """PyTorch's ``ValueError("Invalid {label} value: {v}")`` for a negative hyperparameter ``group[key]``."""
    if not 0.0 <= group[key]:
        raise ValueError(f"Invalid {label or key} value: {group[key]} (expected >= 0)")


def check_betas(group: dict) -> None:
    """PyTorch's ``ValueError("Invalid beta parameter at index i: b")`` for a beta outside [0, 1)."""
    for i, beta in enumerate(group["betas"]):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta} (expected a value in [0, 1))")

class Optimizer:
    """Base class: holds ``param_groups`` (dicts with ``"params"`` and hyperparameters) and ``state``.

    Args:
        params: an iterable of Tensors (``model.parameters()``) or of dicts ``{"params": [...], "lr": ...}``
            giving per-group hyperparameters; missing ones take ``defaults``.
    Raises:
        TypeError: ``params`` is a single Tensor, a Module, or holds something that is not a Tensor.
        ValueError: an empty parameter list, a non-leaf tensor, or a parameter in two groups.
    """

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)  # Parameter -> dict of its state
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got a "
                f"single Tensor of shape {tuple(params.shape)}: wrap it in a list"
            )
        if hasattr(params, "parameters") and hasattr(params, "state_dict"):
            raise TypeError(
                f"params argument given to the optimizer is a {type(params).__name__} module: pass "
                "model.parameters() instead"
            )
        if isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be given in a fixed order (a list), not a set")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyperparameters (e.g. no weight decay for biases)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"a parameter group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be given in a fixed order (a list), not a set")
        params = list(params)
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors (Parameters), but element {i} of the params is a "
                    f"{type(p).__name__}"
                )
            if not p.is_leaf:
                raise ValueError(f"can't optimize a non-leaf Tensor (element {i}, shape {tuple(p.shape)}, "
                                 f"made by {p.grad_fn.name()})")
            if not backend.is_floating(p.dtype):
                raise TypeError(f"optimizer can only optimize floating point tensors, element {i} has dtype {p.dtype}")
        group = dict(param_group, params=params)
        for name, default in self.defaults.items():
            if default is _required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        self._check_hyperparameters(group)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params) or seen & {id(p) for p in params}:
            raise ValueError("some parameters appear in more than one parameter group (or twice in one)")
        self.param_groups.append(group)

    def _check_hyperparameters(self, group: dict) -> None:
        """Raise ValueError for hyperparameters out of range; subclasses extend it."""
        lr = group["lr"]
        if not isinstance(lr, numbers.Real) or not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr} (expected a number >= 0)")
        # PyTorch's implementation switches (``foreach``, ``fused``, ``capturable``): accepted, same numbers
        if group.get("fused") and group.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        if group.get("differentiable"):
            raise RuntimeError(f"{type(self).__name__}(differentiable=True): minitorch_ln's optimizer steps record no "
                               "graph, so a step cannot be differentiated through; use differentiable=False")

    # ------------------------------------------------------------------ stepping
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradient of every parameter: to None (default, as PyTorch) or to zeros in place."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        """Update every parameter that has a gradient; returns ``closure()`` (re-evaluating the loss) if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            if self._fused_group_step(group):  # e.g. Adam on a GPU: the whole group in one kernel
                continue
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.shape != p.shape:
                    raise RuntimeError(f"a gradient of shape {tuple(p.grad.shape)} for a parameter of shape {tuple(p.shape)}")
                self._update(p, p.grad.array, self.state[p], group)
                p._bump_version()  # the parameter changed in place: saved copies of it are now stale
        return loss

    def _fused_group_step(self, group: dict) -> bool:
        """Update all of ``group`` at once and return True, or return False for the per-parameter path."""
        return False

    def _update(self, p, grad, state: dict, group: dict) -> None:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must define _update()")

    @staticmethod
    def _zeros_like(p) -> Tensor:
        """A state buffer of zeros on ``p``'s device with ``p``'s dtype."""
        return Tensor._from_op(backend.get_array_module(p.array).zeros_like(p.array))

    # ------------------------------------------------------------------ state dicts
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}`` (PyTorch's layout).

        State tensors are copies, so stepping on does not change a state dict already taken.
        """
        index, groups, start = {}, [], 0
        for group in self.param_groups:
            packed = {k: copy.deepcopy(v) for k, v in group.items() if k != "params"}
            packed["params"] = list(range(start, start + len(group["params"])))
            index.update({id(p): i for p, i in zip(group["params"], packed["params"])})
            start += len(group["params"])
            groups.append(packed)
        state = {
            index[id(p)]: {k: (Tensor._from_op(v.array.copy()) if isinstance(v, Tensor) else v) for k, v in s.items()}
            for p, s in self.state.items() if id(p) in index
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore state and hyperparameters saved by :meth:`state_dict` (or by the same PyTorch optimizer).

        Raises:
            ValueError: a different number of groups or of parameters in a group, a shape that does
                not fit, or a parameter index that does not exist. Nothing changes when it raises.
        """
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("an optimizer state dict needs the keys 'state' and 'param_groups'")
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has {len(saved_groups)} parameter group(s), this optimizer has "
                f"{len(self.param_groups)}"
            )
        by_index = {}
        for gi, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"loaded state dict's parameter group {gi} has {len(saved['params'])} parameter(s), this "
                    f"optimizer's has {len(group['params'])}"
                )
            by_index.update(zip((int(i) for i in saved["params"]), group["params"]))
        new_state = defaultdict(dict)
        for key, s in state_dict["state"].items():
            if int(key) not in by_index:
                raise ValueError(f"loaded state dict has state for parameter {key}, which no group lists")
            p = by_index[int(key)]
            new_state[p] = {name: self._load_state_value(p, name, v) for name, v in s.items()}
        new_groups = []
        for group, saved in zip(self.param_groups, saved_groups):
            new = {k: copy.deepcopy(v) for k, v in saved.items() if k != "params"}
            new["params"] = group["params"]
            for k, v in self.defaults.items():  # keys an older state dict lacks (e.g. fused), as PyTorch's
                if v is not _required:
                    new.setdefault(k, v)
            new_groups.append(new)
        self.state, self.param_groups = new_state, new_groups

    @staticmethod
    def _load_state_value(p, name, value):
        if name == "step":  # a count (a 0-d tensor in PyTorch's state dicts)
            return int(float(_as_array(value, name))) if not isinstance(value, numbers.Number) else int(value)
        if isinstance(value, (numbers.Number, str, bool)) or value is None:
            return value
        arr = _as_array(value, name)
        if tuple(arr.shape) != tuple(p.shape):
            raise ValueError(f"optimizer state {name!r} has shape {tuple(arr.shape)}, its parameter {tuple(p.shape)}")
        arr = backend.to_device(arr, p.device)
        dtype = p.dtype if backend.is_floating(np.dtype(arr.dtype)) else arr.dtype
        return Tensor._from_op(arr.astype(dtype, copy=True))

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines + [")"])
