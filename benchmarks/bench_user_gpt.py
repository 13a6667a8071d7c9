"""A user's own GPT (``benchmarks/user_gpt.py``, plain PyTorch) through minitorch_ln's ``torch`` alias, beside ``nn.GPT``.

Issue 32: the training-step figures of ``bench_train_step.py`` are for minitorch_ln's own ``nn.GPT``;
a user who brings a model runs the generic ops. This script times one training step (``zero_grad``,
forward with ``F.cross_entropy``, ``backward``, ``AdamW.step``) of

    user GPT   ``user_gpt.py`` imported twice, with real PyTorch and under the torch alias (vocab 96,
               context 64, d 128, 4 heads, 4 layers, batch 32; ReLU MLP, pre-LN, fused qkv + split)
    nn.GPT     minitorch_ln's ``nn.GPT`` ``tiny`` preset and its PyTorch twin (vocab 96, batch 32)

minitorch_ln against PyTorch eager, all four steps timed in alternation in one process (round i of
each right after the others), median of the rounds; the ratio is minitorch_ln / PyTorch. One thread is
timed in CPU time (``time.process_time``: steady on a shared machine), more threads in wall time.
Each thread count runs in a fresh process (BLAS and OpenMP read their thread counts at start-up), idle
threads sleeping (``OMP_WAIT_POLICY=PASSIVE``, ``OPENBLAS_THREAD_TIMEOUT=4``) so one library's spinning
threads do not take the cores from the other. Before timing, the user model's loss and every gradient
are checked against PyTorch's from the same weights.

    python benchmarks/bench_user_gpt.py [--threads 1,2] [--rounds 7] [--profile]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, BATCH, BLOCK = 96, 32, 64


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", default="1,2", help="thread counts, one process each (default 1,2)")
    p.add_argument("--rounds", type=int, default=7, help="timed steps per model and library")
    p.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--profile", action="store_true", help="profile minitorch_ln's user step (cProfile, CPU time) instead")
    return p.parse_args(argv)


def _load(name, alias: bool):
    """``user_gpt.py`` as module ``name``: with real PyTorch, or with ``import torch`` answered by the alias."""
    from minitorch_ln.interop.torch_alias import torch_alias  # noqa: PLC0415

    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "user_gpt.py"))
    module = importlib.util.module_from_spec(spec)
    if alias:
        with torch_alias():
            spec.loader.exec_module(module)
    else:
        spec.loader.exec_module(module)
    return module


def make_steps():
    """``{name: step}`` for the user model and ``nn.GPT``, minitorch_ln's and PyTorch's, the same weights each."""
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415

    import minitorch_ln as mt  # noqa: PLC0415
    from minitorch_ln.interop.torch_models import torch_twin  # noqa: PLC0415
    from minitorch_ln.nn import GPT, GPTConfig  # noqa: PLC0415

    from minitorch_ln.interop.torch_alias import torch_alias  # noqa: PLC0415

    user_t, user_m = _load("user_gpt_torch", alias=False), _load("user_gpt_minitorch_ln", alias=True)
    torch.manual_seed(0)
    model_t = user_t.UserGPT(VOCAB, BLOCK)
    with torch_alias():  # submodules such as torch.optim are looked up when used
        model_m = user_m.UserGPT(VOCAB, BLOCK)
        opt_m = user_m.make_optimizer(model_m)
    model_m.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in model_t.state_dict().items()})
    rng = np.random.default_rng(0)
    idx, targets = rng.integers(0, VOCAB, size=(2, BATCH, BLOCK))
    batch_t, batch_m = (torch.from_numpy(idx), torch.from_numpy(targets)), (mt.tensor(idx), mt.tensor(targets))
    check_same(model_m, model_t, batch_m, batch_t)

    mt.manual_seed(0)
    gpt = GPT(GPTConfig.preset("tiny", vocab_size=VOCAB))
    twin = torch_twin(gpt)

    def step(model, opt, batch):
        def run():
            opt.zero_grad()
            _, loss = model(*batch)
            loss.backward()
            opt.step()
        return run

    return {
        "user GPT, minitorch_ln": step(model_m, opt_m, batch_m),
        "user GPT, PyTorch": step(model_t, user_t.make_optimizer(model_t), batch_t),
        "nn.GPT tiny, minitorch_ln": step(gpt, mt.optim.AdamW(gpt.parameters(), lr=3e-4), batch_m),
        "nn.GPT tiny, PyTorch": step(twin, torch.optim.AdamW(twin.parameters(), lr=3e-4), batch_t),
    }


def check_same(model_m, model_t, batch_m, batch_t):
    """One forward and backward from the same weights: the same loss, every gradient within float32 noise."""
    import numpy as np  # noqa: PLC0415

    _, loss_m = model_m(*batch_m)
    loss_m.backward()
    _, loss_t = model_t(*batch_t)
    loss_t.backward()
    grads_t = {k: p.grad.numpy() for k, p in model_t.named_parameters()}
    worst = max(float(np.abs(p.grad.numpy() - grads_t[k]).max() / (np.abs(grads_t[k]).max() + 1e-12))
                for k, p in model_m.named_parameters())
    if abs(loss_m.item() - loss_t.item()) > 1e-4 * max(1.0, abs(loss_t.item())) or worst > 1e-3:
        raise RuntimeError(f"the user GPT differs: loss {loss_m.item()} vs PyTorch's {loss_t.item()}, gradients by "
                           f"{worst:.2e} of their largest entry")
    model_m.zero_grad()
    model_t.zero_grad()


def child(threads: int, rounds: int, profile: bool) -> None:
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415

    from minitorch_ln import kernels  # noqa: PLC0415

    torch.set_num_threads(threads)
    kernels.set_num_threads(threads)
    steps = make_steps()
    if profile:  # CPU time per function (cProfile on the process clock: a busy machine's waits left out)
        import cProfile  # noqa: PLC0415
        import pstats  # noqa: PLC0415

        run = steps["user GPT, minitorch_ln"]
        run()
        prof = cProfile.Profile(time.process_time)
        prof.runcall(lambda: [run() for _ in range(rounds)])
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return
    clock = time.process_time if threads == 1 else time.perf_counter
    times = {name: [] for name in steps}
    for fn in steps.values():
        fn()  # warm-up (Numba compiles on first use)
    for _ in range(rounds):
        for name, fn in steps.items():
            t0 = clock()
            fn()
            times[name].append(clock() - t0)
    med = {name: float(np.median(ts)) * 1e3 for name, ts in times.items()}
    for model in ("user GPT", "nn.GPT tiny"):
        m, t = med[f"{model}, minitorch_ln"], med[f"{model}, PyTorch"]
        lo_hi = sorted(a / b for a, b in zip(times[f"{model}, minitorch_ln"], times[f"{model}, PyTorch"]))
        print(f"{threads:>7} {'CPU' if threads == 1 else 'wall':>5} {model:<12} {m:12.1f} {t:10.1f} {m / t:7.2f}"
              f"   ({lo_hi[0]:.2f}-{lo_hi[-1]:.2f})")


def main(argv=None):
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.child is not None:
        child(args.child, args.rounds, args.profile)
        return
    print(f"ms per step, median of {args.rounds} alternated rounds (ratio per round: lowest-highest)")
    print(f"{'threads':>7} {'clock':>5} {'model':<12} {'minitorch_ln':>12} {'PyTorch':>10} {'ratio':>7}")
    for n in [int(s) for s in args.threads.split(",")]:
        env = dict(os.environ, OMP_NUM_THREADS=str(n), OPENBLAS_NUM_THREADS=str(n), MKL_NUM_THREADS=str(n),
                   MINITORCH_LN_NUM_THREADS=str(n))
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        env.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", str(n), "--rounds", str(args.rounds)]
        subprocess.run(cmd + (["--profile"] if args.profile else []), env=env, check=True)


if __name__ == "__main__":
    main()
