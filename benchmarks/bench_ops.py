"""Forward + backward time of the heavier ops of issue 2 against PyTorch, printed as ratios.

ops: cross_entropy (fused; a language model's last step), softmax, log_softmax, matmul, getitem
with a repeated integer index (scatter-add backward), embedding, cat, rms_norm and batch_norm
(training mode; LayerNorm has its own ``bench_layernorm.py``). Both libraries run on one CPU
thread (``torch.set_num_threads(1)``, NumPy as it is); a ratio above 1 means minitorch_ln is slower.
Run ``python benchmarks/bench_ops.py`` (``--fast`` for a quick look).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import minitorch_ln as mt
import minitorch_ln.nn.functional as F


def _time(fn, repeat):
    fn()  # warm up
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t0) / repeat


def cases(n, c, d):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((n, c)).astype(np.float32)
    target = rng.integers(0, c, n)
    a, b = rng.standard_normal((n, d)).astype(np.float32), rng.standard_normal((d, d)).astype(np.float32)
    ids = rng.integers(0, c, n)
    table = rng.standard_normal((c, d)).astype(np.float32)
    return {
        f"cross_entropy ({n}, {c})": ([logits], lambda x: mt.cross_entropy(x, mt.tensor(target)),
                                      lambda x: torch.nn.functional.cross_entropy(x, torch.from_numpy(target))),
        f"cross_entropy smoothing=0.1 ({n}, {c})": (
            [logits], lambda x: mt.cross_entropy(x, mt.tensor(target), label_smoothing=0.1),
            lambda x: torch.nn.functional.cross_entropy(x, torch.from_numpy(target), label_smoothing=0.1)),
        f"softmax ({n}, {c})": ([logits], lambda x: mt.softmax(x, -1), lambda x: torch.softmax(x, -1)),
        f"log_softmax ({n}, {c})": ([logits], lambda x: mt.log_softmax(x, -1), lambda x: torch.log_softmax(x, -1)),
        f"matmul ({n}, {d}) @ ({d}, {d})": ([a, b], lambda x, y: x @ y, lambda x, y: x @ y),
        f"getitem x[ids] ({c}, {d})[{n}]": ([table], lambda x: x[mt.tensor(ids)], lambda x: x[torch.from_numpy(ids)]),
        f"embedding ({c}, {d})[{n}]": ([table], lambda w: mt.embedding(mt.tensor(ids), w),
                                       lambda w: torch.nn.functional.embedding(torch.from_numpy(ids), w)),
        f"cat 2 x ({n}, {d})": ([a, a], lambda x, y: mt.cat([x, y], 1), lambda x, y: torch.cat([x, y], 1)),
        f"rms_norm ({n}, {d})": ([a, b[0]], lambda x, w: F.rms_norm(x, (d,), w, 1e-6),
                                 lambda x, w: torch.nn.functional.rms_norm(x, (d,), w, 1e-6)),
        f"batch_norm ({n}, {d}) training": (
            [a, b[0], b[1]], lambda x, w, c: F.batch_norm(x, None, None, w, c, training=True),
            lambda x, w, c: torch.nn.functional.batch_norm(x, None, None, w, c, training=True)),
    }


def run(fn, arrays, lib):
    rng = np.random.default_rng(1)
    if lib == "mt":
        ins = [mt.tensor(a, requires_grad=True) for a in arrays]
    else:
        ins = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ins)
    up = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    up = mt.tensor(up) if lib == "mt" else torch.from_numpy(up)

    def step():
        for t in ins:
            t.grad = None
        fn(*ins).backward(up)

    return step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="small sizes, few repeats")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    n, c, d, repeat = (512, 256, 64, 5) if args.fast else (4096, 1000, 256, 20)
    print(f"{'op (forward + backward)':<44} {'minitorch_ln':>13} {'PyTorch':>10} {'ratio':>7}")
    for name, (arrays, ours, theirs) in cases(n, c, d).items():
        t_mt = _time(run(ours, arrays, "mt"), repeat)
        t_pt = _time(run(theirs, arrays, "torch"), repeat)
        print(f"{name:<44} {t_mt * 1e3:>10.2f} ms {t_pt * 1e3:>7.2f} ms {t_mt / t_pt:>7.2f}")


if __name__ == "__main__":
    main()
