"""The engine's fixed cost per op: a long chain of tiny ops, forward and backward, against PyTorch's.

Each step is ``y = y * c + c`` on a 4-element float32 tensor (two ops), so the arithmetic is
negligible and what is measured is graph recording (forward) and graph walking (backward).
Prints microseconds per op for both frameworks and the ratio.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import minitorch_ln as mt


def chain_mt(n):
    x = mt.tensor(np.ones(4, dtype=np.float32), requires_grad=True)
    t0 = time.perf_counter()
    y = x
    for _ in range(n):
        y = y * 1.0001 + 0.0001
    t1 = time.perf_counter()
    y.sum().backward()
    t2 = time.perf_counter()
    return (t1 - t0) / (2 * n), (t2 - t1) / (2 * n)


def chain_torch(n):
    import torch  # noqa: PLC0415

    x = torch.ones(4, requires_grad=True)
    t0 = time.perf_counter()
    y = x
    for _ in range(n):
        y = y * 1.0001 + 0.0001
    t1 = time.perf_counter()
    y.sum().backward()
    t2 = time.perf_counter()
    return (t1 - t0) / (2 * n), (t2 - t1) / (2 * n)


def best_of(fn, n, repeat):
    runs = [fn(n) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", type=int, default=20000, help="chain length (steps of two ops)")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    f_m, b_m = best_of(chain_mt, args.ops, args.repeat)
    print(f"{'':12}{'forward µs/op':>16}{'backward µs/op':>16}{'fwd+bwd µs/op':>16}")
    print(f"{'minitorch_ln':12}{f_m * 1e6:16.2f}{b_m * 1e6:16.2f}{(f_m + b_m) * 1e6:16.2f}")
    try:
        f_t, b_t = best_of(chain_torch, args.ops, args.repeat)
    except ImportError:
        print("PyTorch not installed: no comparison")
        return
    print(f"{'pytorch':12}{f_t * 1e6:16.2f}{b_t * 1e6:16.2f}{(f_t + b_t) * 1e6:16.2f}")
    print(f"{'ratio':12}{f_m / f_t:16.2f}{b_m / b_t:16.2f}{(f_m + b_m) / (f_t + b_t):16.2f}   (minitorch_ln / PyTorch; target <= 3)")


if __name__ == "__main__":
    main()
