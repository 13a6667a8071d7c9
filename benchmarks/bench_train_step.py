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

JAX, where it is installed (``pip install jax jaxlib``; never a dependency), is a third peer: the
same model written in ``jax.numpy`` (``benchmarks/jax_gpt.py``), its weights copied from the
minitorch_ln model, the same AdamW, the whole step one ``jax.jit`` function, timed after its
compilation (the warm-up). Its loss and gradients are checked against PyTorch's like ours; the
``/JAX`` column is minitorch_ln's time over JAX's. Without JAX (or with ``--no-jax``) a line says
it was skipped. ``--single-thread`` also gives XLA one thread.

``--compile`` adds ``torch.compile`` (PyTorch's default inductor backend on the CPU, which generates
and compiles C++ for the model's forward and backward) as a fourth peer: a copy of the PyTorch twin
with the same weights, compiled as nanoGPT does (the model, not the optimizer step: eager AdamW),
timed after its compilation (the first step; minutes on a small machine), its loss and gradients
checked against eager PyTorch's; the ``/compile`` column is minitorch_ln's time over it.

    python benchmarks/bench_train_step.py [--preset tiny|small|all] [--repeat N] [--single-thread] [--no-jax]
                                          [--compile]
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
    p.add_argument("--only", choices=("mt", "torch", "jax", "compile"), default=None, help="time one library (for profiling)")
    p.add_argument("--no-jax", action="store_true", help="leave JAX out even where it is installed")
    p.add_argument("--compile", action="store_true", help="add torch.compile (inductor) as a peer")
    args = p.parse_args(argv)
    if args.only == "jax" and args.no_jax:
        p.error("--only jax times JAX alone, --no-jax leaves it out: give one of them")
    args.compile = args.compile or args.only == "compile"  # timing torch.compile alone needs it built
    return args


ARGS = _parse(sys.argv[1:] if __name__ == "__main__" else [])
if ARGS.single_thread:  # BLAS reads these when NumPy is first imported
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "MINITORCH_LN_NUM_THREADS"):
        os.environ[var] = "1"
    # XLA's CPU backend: one thread for its Eigen pool and its intra-op parallelism
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                               " intra_op_parallelism_threads=1").strip()
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


def _import_jax():
    """``benchmarks/jax_gpt.py`` where ``jax`` is installed, else None and the reason."""
    if ARGS.no_jax:
        return None, "left out (--no-jax)"
    try:
        import jax  # noqa: F401, PLC0415
    except ImportError:
        return None, "skipped: jax is not installed (pip install jax jaxlib to compare with it)"
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import jax_gpt  # noqa: PLC0415

    return jax_gpt, None


def make_compiled_step(twin, batch_t):
    """A ``torch.compile``d copy of ``twin`` (same weights) with its own eager AdamW; its first step, which
    compiles, is the warm-up of :func:`time_steps`. Returns ``(step, check)``: ``check`` runs one forward and
    backward and returns the loss and gradients by parameter name, to compare with eager PyTorch's."""
    import copy  # noqa: PLC0415

    twin_c = copy.deepcopy(twin)
    compiled = torch.compile(twin_c)
    opt = torch.optim.AdamW(twin_c.parameters(), lr=1e-3, foreach=False)

    def step():
        opt.zero_grad()
        _, loss = compiled(*batch_t)
        loss.backward()
        opt.step()
        return loss

    def check():
        _, loss = compiled(*batch_t)
        loss.backward()
        grads = {k: p.grad.numpy().copy() for k, p in twin_c.named_parameters()}
        twin_c.zero_grad()
        return float(loss.item()), grads

    return step, check


def make_steps(preset: str, jax_gpt=None, with_compile: bool = False):
    """``({library: step}, config, batch, n_params)`` for one preset, every model holding the same weights."""
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

    steps = {"mt": mt_step, "torch": torch_step}
    if jax_gpt is not None:  # before the check: that leaves gradients in the minitorch_ln model
        params = jax_gpt.params_from_state_dict(model.state_dict())
        jax_check = jax_gpt.loss_and_grads(params, idx, targets, config)
        steps["jax"] = jax_gpt.make_train_step(params, idx, targets, config)
    if with_compile:  # before the check and the timing: the copy starts from the same weights
        steps["compile"], compile_check = make_compiled_step(twin, (idx_t, tgt_t))
    check_same_gradients(preset, model, twin, (idx_m, tgt_m), (idx_t, tgt_t))
    if jax_gpt is not None:
        check_same_as_torch(preset, "JAX", *jax_check, twin, (idx_t, tgt_t))
    if with_compile:
        check_same_as_torch(preset, "torch.compile", *compile_check(), twin, (idx_t, tgt_t))
    return steps, config, B, model.num_parameters()


def _worst_difference(grads, grads_t):
    """The largest gradient difference, relative to the largest entry of PyTorch's gradient, over all parameters."""
    return max(float(np.abs(g - grads_t[k]).max() / (np.abs(grads_t[k]).max() + 1e-12)) for k, g in grads.items())


def _check(preset, who, lm, lt, worst):
    if abs(lm - lt) > 1e-4 * max(1.0, abs(lt)) or worst > 1e-3:
        raise RuntimeError(f"{preset}: {who} and PyTorch disagree (loss {lm} vs {lt}; gradients differ by {worst:.2e} "
                           "of their largest entry)")


def check_same_gradients(preset, model, twin, batch_m, batch_t):
    """One forward and backward of each from the same weights: the same loss and the same gradients."""
    _, loss_m = model(*batch_m)
    loss_m.backward()
    _, loss_t = twin(*batch_t)
    loss_t.backward()
    grads_t = {k: p.grad.numpy() for k, p in twin.named_parameters()}
    worst = _worst_difference({k: p.grad.numpy() for k, p in model.named_parameters()}, grads_t)
    _check(preset, "minitorch_ln", float(loss_m.item()), float(loss_t.item()), worst)
    model.zero_grad()
    twin.zero_grad()


def check_same_as_torch(preset, who, loss, grads, twin, batch_t):
    """``loss`` and ``grads`` (by parameter name) of another library against PyTorch's from the same weights."""
    _, loss_t = twin(*batch_t)
    loss_t.backward()
    grads_t = {k: p.grad.numpy() for k, p in twin.named_parameters()}
    _check(preset, who, loss, float(loss_t.item()), _worst_difference(grads, grads_t))
    twin.zero_grad()


def time_steps(steps, repeat, clock):
    """``{library: (best, median)}`` seconds, timed in alternation (after one warm-up each, which for
    JAX is its compilation)."""
    times = {name: [] for name in steps}
    for fn in steps.values():
        fn()
    for _ in range(repeat):
        for name, fn in steps.items():
            t0 = clock()
            fn()
            times[name].append(clock() - t0)
    return {name: (min(ts), float(np.median(ts))) for name, ts in times.items()}


def main(args=ARGS):
    clock = time.perf_counter
    if args.single_thread:
        torch.set_num_threads(1)
        kernels.set_num_threads(1)
        clock = time.process_time
    jax_gpt, jax_missing = _import_jax() if args.only in (None, "jax") else (None, "left out (--only)")
    versions = f"PyTorch {torch.__version__}: {torch.get_num_threads()} threads; NumPy {np.__version__}; "
    if jax_gpt is not None:
        versions += f"JAX {jax_gpt.jax.__version__} (jit); "
    print(versions + f"minitorch_ln kernels: {kernels.get_num_threads()} threads; "
          f"{'CPU' if args.single_thread else 'wall'} time per step, best (median)")
    if jax_missing:
        if args.only == "jax":
            raise SystemExit(f"bench_train_step.py: --only jax, but JAX is {jax_missing}")
        print(f"JAX {jax_missing}")
    with_compile = args.compile and args.only in (None, "compile")
    if with_compile:
        print("torch.compile: inductor (C++ on the CPU), the model compiled, AdamW eager; its compilation is "
              "its warm-up step")
    head = f"{'preset':<7} {'params':>8} {'B x T':>9} {'minitorch_ln':>22} {'PyTorch':>22} {'ratio':>6}"
    if jax_gpt is not None:
        head += f" {'JAX':>22} {'/JAX':>6}"
    if with_compile:
        head += f" {'torch.compile':>22} {'/compile':>8}"
    print(head + f" {'target':>7}")
    presets = ("tiny", "small") if args.preset == "all" else (args.preset,)
    for preset in presets:
        steps, config, B, n_params = make_steps(preset, jax_gpt, with_compile)
        if args.only:
            steps = {args.only: steps[args.only]}
        repeat = args.repeat or (10 if preset == "tiny" else 4)
        t = time_steps(steps, repeat, clock)
        nan = (float("nan"), float("nan"))
        (best_m, med_m), (best_t, med_t) = t.get("mt", nan), t.get("torch", nan)
        target = 2.5 if preset == "tiny" else 1.5
        line = (f"{preset:<7} {n_params / 1e6:7.2f}M {f'{B}x{config.block_size}':>9} "
                f"{best_m * 1e3:9.1f} ms ({med_m * 1e3:7.1f}) {best_t * 1e3:9.1f} ms ({med_t * 1e3:7.1f}) "
                f"{best_m / best_t:6.2f}")
        if jax_gpt is not None:
            best_j, med_j = t.get("jax", nan)
            line += f" {best_j * 1e3:9.1f} ms ({med_j * 1e3:7.1f}) {best_m / best_j:6.2f}"
        if with_compile:
            best_c, med_c = t.get("compile", nan)
            line += f" {best_c * 1e3:9.1f} ms ({med_c * 1e3:7.1f}) {best_m / best_c:8.2f}"
        print(line + f" {target:>7.1f}")


if __name__ == "__main__":
    main()
