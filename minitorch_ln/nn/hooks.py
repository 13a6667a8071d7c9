"""The hooks of :class:`~minitorch_ln.nn.module.Module`: the handle that removes one (autograd's
``RemovableHandle``, shared with ``Tensor.register_post_accumulate_grad_hook``), and the identity node around
a module call that fires its full backward hooks."""

from __future__ import annotations

from .. import backend
from ..autograd.function import Function
from ..autograd.post_accumulate import RemovableHandle  # noqa: F401 - Module's hooks return it (nn.module)
from ..autograd.post_accumulate import check_hook_result
from ..tensor import Tensor


class _BackwardHookIdentity(Function):
    """The identity on some Tensors, whose backward hands their gradients to ``run`` (a module's
    full backward hooks; PyTorch's ``BackwardHookFunction``). Outputs are copies (PyTorch's are views,
    which here would not share the version counter: an in-place change could go unseen by autograd)."""

    @staticmethod
    def forward(ctx, *arrays, run=None):
        ctx.run = run
        return tuple(backend.get_array_module(a).array(a, copy=True) for a in arrays)

    @staticmethod
    def backward(ctx, *grads):
        return ctx.run(grads)


class _BackwardHookCall:
    """One call of a module with backward hooks: wraps its inputs and outputs in identity nodes
    whose backwards call the pre-hooks (output side) and the hooks (input side)."""

    def __init__(self, module, args):
        self.module, self.n_args, self.grad_output = module, len(args), None
        self.positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]

    @staticmethod
    def _wrap(items, where, run) -> list:
        items = list(items)
        for i, v in zip(where, _BackwardHookIdentity.apply(*[items[i] for i in where], run=run)):
            items[i] = v
        return items

    def wrap_inputs(self, args):
        return tuple(self._wrap(args, self.positions, self._on_inputs)) if self.positions else args

    def wrap_outputs(self, out):
        seq = isinstance(out, (tuple, list))
        items = list(out) if seq else [out]
        where = [i for i, o in enumerate(items) if isinstance(o, Tensor)]
        if not any(items[i].requires_grad for i in where):
            return out  # no output needs a gradient: the hooks never run (as PyTorch)
        items = self._wrap(items, where, self._on_outputs)
        if not seq:
            return items[0]
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)  # a namedtuple takes fields

    def _on_outputs(self, grads):
        for hook in list(self.module._backward_pre_hooks.values()):
            new = hook(self.module, grads)
            if new is not None:
                grads = self._checked(new, grads, hook, "a full backward pre-hook")
        self.grad_output = grads
        if not self.positions:  # no input needs a gradient: fire now, with grad_input all None
            self._fire((None,) * self.n_args)
        return grads

    def _on_inputs(self, grads):
        given = dict(zip(self.positions, grads))
        grad_input = self._fire(tuple(given.get(i) for i in range(self.n_args)))
        return tuple(grad_input[i] for i in self.positions)

    def _fire(self, grad_input):
        for hook in list(self.module._backward_hooks.values()):
            new = hook(self.module, grad_input, self.grad_output)
            if new is not None:
                grad_input = self._checked(new, grad_input, hook, "a full backward hook")
        return grad_input

    @staticmethod
    def _checked(new, given, hook, who):
        """``new`` as a tuple, one per entry of ``given``, each of its entry's dtype, device and shape (as PyTorch:
        "hook 'h' has changed the type of value ..."; a float64 gradient was cast back silently here)."""
        new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
        if len(new) != len(given):
            raise RuntimeError(f"{who} returned {len(new)} gradient(s), expected {len(given)} (one per entry it was given)")
        for old, g in zip(given, new):
            if old is not None and g is not None:
                check_hook_result(hook, old, g)
        return new
