"""One optimizer step (SGD with momentum, Adam, AdamW) on a few large float32 parameters, against PyTorch's.

The parameters and gradients are fixed arrays (no model, no backward), so what is measured is the
update arithmetic alone. PyTorch runs its single-tensor CPU path (``foreach=False``), the one our
formulas mirror, on one thread (NumPy's elementwise ops use one), so the ratio compares like with like.
Prints milliseconds per step for both frameworks and the ratio (ours / PyTorch's; below 1 is faster).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import minitorch_ln as mt
from minitorch_ln import nn, optim

CONFIGS = [("SGD", dict(lr=0.01, momentum=0.9, weight_decay=1e-4)), ("Adam", dict(lr=1e-3)),
           ("AdamW", dict(lr=1e-3, weight_decay=0.1))]


def arrays(total: int, pieces: int = 4):
    rng = np.random.default_rng(0)
    n = total // pieces
    return [rng.standard_normal(n).astype(np.float32) for _ in range(pieces)], \
           [rng.standard_normal(n).astype(np.float32) for _ in range(pieces)]


def time_ours(name, kw, values, grads, steps):
    params = [nn.Parameter(mt.tensor(v)) for v in values]
    for p, g in zip(params, grads):
        p.grad = mt.tensor(g)
    opt = getattr(optim, name)(params, **kw)
    opt.step()  # creates the state
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.step()
    return (time.perf_counter() - t0) / steps


def time_torch(name, kw, values, grads, steps):
    import torch  # noqa: PLC0415

    torch.set_num_threads(1)
    params = [torch.tensor(v, requires_grad=True) for v in values]
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g)
    opt = getattr(torch.optim, name)(params, **kw, foreach=False)
    opt.step()
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.step()
    return (time.perf_counter() - t0) / steps


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--params", type=int, default=4_000_000, help="total number of float32 parameters")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--fast", action="store_true", help="a small run (200k parameters, 3 steps)")
    args = p.parse_args(argv)
    if args.fast:
        args.params, args.steps = 200_000, 3
    values, grads = arrays(args.params)
    print(f"{args.params:,} float32 parameters in 4 tensors, {args.steps} steps")
    print(f"{'optimizer':10}{'ours ms/step':>14}{'torch ms/step':>15}{'ratio':>8}")
    for name, kw in CONFIGS:
        ours = time_ours(name, kw, values, grads, args.steps)
        try:
            theirs = time_torch(name, kw, values, grads, args.steps)
            print(f"{name:10}{ours * 1e3:14.2f}{theirs * 1e3:15.2f}{ours / theirs:8.2f}")
        except ImportError:
            print(f"{name:10}{ours * 1e3:14.2f}{'-':>15}{'-':>8}")


if __name__ == "__main__":
    main()
