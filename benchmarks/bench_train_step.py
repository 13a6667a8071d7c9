"""One training step of the same GPT in minitorch_ln and in PyTorch on the CPU, as ratios.

A step is ``zero_grad``, forward with the mean cross-entropy loss, ``backward`` and an ``AdamW``
update, for the decoder-only :class:`minitorch_ln.nn.GPT` and its PyTorch twin
(:func:`minitorch_ln.interop.torch_models.torch_twin`) holding the same float32 weights:

    tiny   d_model 128, 4 layers, 4 heads, batch 32, context 64   (about 0.8M parameters)
    small  d_model 384, 6 layers, 6 heads, batch 16, context 256  (about 10.8M parameters)

with a character-sized vocabulary (65), no dropout, the same random batch for both. Before timing,
one forward and backward of each is run from the same weights and their losses and gradients
compared, so that the two really do the same work. The two are timed in alternation (repetition i of one
right after repetition i of the other), and the best repetition is reported, the median beside
it. A ratio above 1 means minitorch_ln is slower; the targets are 2.5 for ``tiny`` and 1.5 for
``small``.

Threads: by default each library uses its own (PyTorch one per core; NumPy's BLAS its own; the
LayerNorm and GELU kernels ``kernels.get_num_threads()``) and wall time is measured, with idle
threads set to sleep rather than spin (``OMP_WAIT_POLICY=PASSIVE``, ``OPENBLAS_THREAD_TIMEOUT=4``,
unless set already), so that one library's waiting threads do not steal the cores from the other. ``--single-thread``
runs everything on one thread and measures CPU time (``time.process_time``): on a machine shared
with other work that ratio is the steadier one.

    python benchmarks/bench_train_step.py [--preset tiny|small|all] [--repeat N] [--single-thread]
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", choices=("tiny", "small", "all"), default="all")
    p.add_argument("--repeat", type=int, default=None, help="timed steps per library (default 10 tiny, 4 small)")
    p.add_argument("--single-thread", action="store_true", help="one thread each, CPU time")
    p.add_argument("--only", choices=("mt", "torch"), default=None, help="time one library (for profiling)")
    return p.parse_args(argv)


ARGS = _parse(sys.argv[1:] if __name__ == "__main__" else [])
if ARGS.single_thread:  # BLAS reads these when NumPy is first imported
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "MINITORCH_LN_NUM_THREADS"):
        os.environ[var] = "1"
else:
    # Two thread pools in one process: after each parallel region PyTorch's OpenMP threads and
    # OpenBLAS's threads spin, waiting for more work, and on a 2-core machine that spinning takes
    # the cores from the other library's next step (a small step then measured 6x slower than
    # either library alone). Idle threads that sleep at once make the comparison fair.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # spin for 2**4 cycles at most

import numpy as np  # noqa: E402
import torch  # noqa: E402

import minitorch_ln as mt  # noqa: E402
from minitorch_ln import kernels  # noqa: E402
from minitorch_ln.interop.torch_models import torch_twin  # noqa: E402
from minitorch_ln.nn import GPT, GPTConfig  # noqa: E402
from minitorch_ln.optim import AdamW  # noqa: E402

VOCAB = 65
SETUPS = {"tiny": dict(batch=32), "small": dict(batch=16)}


def make_steps(preset: str):
    """``(mt_step, torch_step, config, batch)`` for one preset, both models holding the same weights."""
    mt.manual_seed(0)
    config = GPTConfig.preset(preset, vocab_size=VOCAB)
    B, T = SETUPS[preset]["batch"], config.block_size
    model = GPT(config)
    twin = torch_twin(model)
    rng = np.random.default_rng(0)
    idx = rng.integers(0, VOCAB, size=(B, T))
    targets = rng.integers(0, VOCAB, size=(B, T))
    idx_m, tgt_m = mt.tensor(idx), mt.tensor(targets)
    idx_t, tgt_t = torch.from_numpy(idx), torch.from_numpy(targets)
    opt_m = AdamW(model.parameters(), lr=1e-3)
    opt_t = torch.optim.AdamW(twin.parameters(), lr=1e-3, foreach=False)

    def mt_step():
        opt_m.zero_grad()
        _, loss = model(idx_m, tgt_m)
        loss.backward()
        opt_m.step()
        return loss

    def torch_step():
        opt_t.zero_grad()
        _, loss = twin(idx_t, tgt_t)
        loss.backward()
        opt_t.step()
        return loss

    check_same_gradients(preset, model, twin, (idx_m, tgt_m), (idx_t, tgt_t))
    return mt_step, torch_step, config, B, model.num_parameters()


def check_same_gradients(preset, model, twin, batch_m, batch_t):
    """One forward and backward of each from the same weights: the same loss and the same gradients."""
    _, loss_m = model(*batch_m)
    loss_m.backward()
    _, loss_t = twin(*batch_t)
    loss_t.backward()
    grads_t = {k: p.grad.numpy() for k, p in twin.named_parameters()}
    worst = 0.0
    for k, p in model.named_parameters():
        g_t = grads_t[k]
        worst = max(worst, float(np.abs(p.grad.numpy() - g_t).max() / (np.abs(g_t).max() + 1e-12)))
    lm, lt = float(loss_m.item()), float(loss_t.item())
    if abs(lm - lt) > 1e-4 * max(1.0, abs(lt)) or worst > 1e-3:
        raise RuntimeError(f"{preset}: the two models disagree (loss {lm} vs {lt}; gradients differ by {worst:.2e} "
                           "of their largest entry)")
    model.zero_grad()
    twin.zero_grad()


def time_pair(ours, theirs, repeat, clock, only=None):
    """Best and median seconds of ``ours`` and ``theirs``, timed in alternation (after one warm-up each)."""
    t_ours, t_theirs = [], []
    pairs = [(ours, t_ours), (theirs, t_theirs)]
    if only == "mt":
        pairs = pairs[:1]
    elif only == "torch":
        pairs = pairs[1:]
    for fn, _ in pairs:
        fn()
    for _ in range(repeat):
        for fn, out in pairs:
            t0 = clock()
            fn()
            out.append(clock() - t0)

    def stats(ts):
        return (min(ts), float(np.median(ts))) if ts else (float("nan"), float("nan"))

    return (*stats(t_ours), *stats(t_theirs))


def main(args=ARGS):
    clock = time.perf_counter
    if args.single_thread:
        torch.set_num_threads(1)
        kernels.set_num_threads(1)
        clock = time.process_time
    print(f"PyTorch {torch.__version__}: {torch.get_num_threads()} threads; NumPy {np.__version__}; "
          f"minitorch_ln kernels: {kernels.get_num_threads()} threads; "
          f"{'CPU' if args.single_thread else 'wall'} time per step, best (median)")
    print(f"{'preset':<7} {'params':>8} {'B x T':>9} {'minitorch_ln':>22} {'PyTorch':>22} {'ratio':>6} {'target':>7}")
    presets = ("tiny", "small") if args.preset == "all" else (args.preset,)
    for preset in presets:
        mt_step, torch_step, config, B, n_params = make_steps(preset)
        repeat = args.repeat or (10 if preset == "tiny" else 4)
        best_m, med_m, best_t, med_t = time_pair(mt_step, torch_step, repeat, clock, args.only)
        target = 2.5 if preset == "tiny" else 1.5
        print(f"{preset:<7} {n_params / 1e6:7.2f}M {f'{B}x{config.block_size}':>9} "
              f"{best_m * 1e3:9.1f} ms ({med_m * 1e3:7.1f}) {best_t * 1e3:9.1f} ms ({med_t * 1e3:7.1f}) "
              f"{best_m / best_t:6.2f} {target:>7.1f}")


if __name__ == "__main__":
    main()
