"""What ``detect_anomaly`` costs: forward + backward with and without it, printed as ratios.

Two workloads, each timed without and with ``detect_anomaly()`` (best of ``--repeat`` runs), in
minitorch_ln and, for reference, in PyTorch (``torch.autograd.detect_anomaly``):

* ``chain``: ``y = y * c + c`` on a 4-element tensor, many times: the per-op cost of recording the
  creation site (a walk up the Python stack) and checking every input, output and gradient;
* ``block``: a small MLP block on ``(B, L, D)`` activations, Linear -> GELU -> Linear -> LayerNorm
  -> mean: realistic array sizes, where the finiteness checks are a pass over each array.

Without ``detect_anomaly`` the engine pays one dict lookup per op in forward and one per node in
backward; the last line measures that against the time of an op.
"""

from __future__ import annotations

import argparse
import time
import timeit
import warnings

import numpy as np

import minitorch_ln as mt
from minitorch_ln.autograd import detect_anomaly
from minitorch_ln.autograd.function import _anomaly


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def chain_mt(n, anomaly):
    x = mt.tensor(np.ones(4, dtype=np.float32), requires_grad=True)
    with detect_anomaly() if anomaly else _Null():
        t0 = time.perf_counter()
        y = x
        for _ in range(n):
            y = y * 1.0001 + 0.0001
        y.sum().backward()
    return (time.perf_counter() - t0) / (2 * n)


def chain_torch(n, anomaly):
    import torch  # noqa: PLC0415

    x = torch.ones(4, requires_grad=True)
    with torch.autograd.detect_anomaly() if anomaly else _Null():
        t0 = time.perf_counter()
        y = x
        for _ in range(n):
            y = y * 1.0001 + 0.0001
        y.sum().backward()
    return (time.perf_counter() - t0) / (2 * n)


def block_mt(shape, anomaly, steps):
    B, L, D = shape
    rng = np.random.default_rng(0)
    x = mt.tensor(rng.standard_normal((B, L, D)).astype(np.float32))
    w1 = mt.tensor((rng.standard_normal((4 * D, D)) / np.sqrt(D)).astype(np.float32), requires_grad=True)
    w2 = mt.tensor((rng.standard_normal((D, 4 * D)) / np.sqrt(4 * D)).astype(np.float32), requires_grad=True)
    g, b = mt.ones(D, requires_grad=True), mt.zeros(D, requires_grad=True)
    with detect_anomaly() if anomaly else _Null():
        t0 = time.perf_counter()
        for _ in range(steps):
            h = mt.ops.gelu(x @ w1.T) @ w2.T                          # (B, L, D)
            loss = mt.ops.layer_norm(h + x, (D,), g, b).mean()
            loss.backward()
    return (time.perf_counter() - t0) / steps


def block_torch(shape, anomaly, steps):
    import torch  # noqa: PLC0415

    B, L, D = shape
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((B, L, D)).astype(np.float32))
    w1 = torch.tensor((rng.standard_normal((4 * D, D)) / np.sqrt(D)).astype(np.float32), requires_grad=True)
    w2 = torch.tensor((rng.standard_normal((D, 4 * D)) / np.sqrt(4 * D)).astype(np.float32), requires_grad=True)
    g, b = torch.ones(D, requires_grad=True), torch.zeros(D, requires_grad=True)
    with torch.autograd.detect_anomaly() if anomaly else _Null():
        t0 = time.perf_counter()
        for _ in range(steps):
            h = torch.nn.functional.gelu(x @ w1.T) @ w2.T
            loss = torch.nn.functional.layer_norm(h + x, (D,), g, b).mean()
            loss.backward()
    return (time.perf_counter() - t0) / steps


def best(fn, repeat, *args):
    fn(*args)  # warm-up: first calls pay for imports, thread pools and caches
    return min(fn(*args) for _ in range(repeat))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", type=int, default=5000, help="chain length (steps of two ops)")
    p.add_argument("--shape", type=int, nargs=3, default=[8, 64, 128], metavar=("B", "L", "D"))
    p.add_argument("--steps", type=int, default=10, help="block: forward+backward steps per run")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--fast", action="store_true", help="short runs (a smoke test)")
    args = p.parse_args(argv)
    if args.fast:
        args.ops, args.steps, args.repeat, args.shape = 500, 2, 1, [2, 16, 32]
    warnings.simplefilter("ignore")  # PyTorch warns that anomaly mode is slow: that is what we measure

    rows = [("chain (per op)", lambda a: best(chain_mt, args.repeat, args.ops, a),
             lambda a: best(chain_torch, args.repeat, args.ops, a), 1e6, "µs/op"),
            (f"block {tuple(args.shape)}", lambda a: best(block_mt, args.repeat, tuple(args.shape), a, args.steps),
             lambda a: best(block_torch, args.repeat, tuple(args.shape), a, args.steps), 1e3, "ms/step")]
    print(f"{'workload':24}{'framework':>14}{'without':>12}{'with':>12}{'with / without':>16}")
    for name, ours, theirs, scale, unit in rows:
        off, on = ours(False), ours(True)
        print(f"{name:24}{'minitorch_ln':>14}{off * scale:>9.2f} {unit:<3}{on * scale:>9.2f}{on / off:>16.2f}")
        try:
            t_off, t_on = theirs(False), theirs(True)
        except ImportError:
            print(f"{'':24}{'pytorch':>14}  not installed")
            continue
        print(f"{'':24}{'pytorch':>14}{t_off * scale:>9.2f} {unit:<3}{t_on * scale:>9.2f}{t_on / t_off:>16.2f}")

    lookup = min(timeit.repeat(lambda: _anomaly["enabled"], number=100_000, repeat=3)) / 100_000
    per_op = best(chain_mt, args.repeat, args.ops, False)
    print(f"disabled check: 2 dict lookups per op = {2 * lookup * 1e9:.0f} ns of {per_op * 1e6:.2f} µs per op "
          f"({2 * lookup / per_op:.1%}): without detect_anomaly nothing measurable is added")


if __name__ == "__main__":
    main()
