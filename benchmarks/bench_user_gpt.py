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

With ``--nanogpt DIR`` (a clone or bare git directory of karpathy/nanoGPT) nanoGPT's own ``model.py`` is
timed the same way, unchanged, at the same size (its ``configure_optimizers``; it calls
``F.scaled_dot_product_attention``, so its attention is minitorch_ln's fused one).

``--blas-threads N`` gives NumPy's OpenBLAS N threads whatever the thread count (PyTorch and the kernels keep it).

    python benchmarks/bench_user_gpt.py [--threads 1,2] [--rounds 7] [--nanogpt DIR] [--blas-threads N] [--profile]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, BATCH, BLOCK = 96, 32, 64


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", default="1,2", help="thread counts, one process each (default 1,2)")
    p.add_argument("--rounds", type=int, default=7, help="timed steps per model and library")
    p.add_argument("--blas-threads", type=int, default=None,
                   help="NumPy's OpenBLAS threads (default: the thread count); 1 on a busy machine, see benchmarks/README.md")
    p.add_argument("--nanogpt", default=None, help="karpathy/nanoGPT clone or git dir: time its model.py too")
    p.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--profile", action="store_true", help="profile minitorch_ln's user step (cProfile, CPU time) instead")
    return p.parse_args(argv)


def _load(name, alias: bool, path=None):
    """The model file ``path`` (default ``user_gpt.py``) as module ``name``: with real PyTorch, or with
    ``import torch`` answered by the alias."""
    from minitorch_ln.interop.torch_alias import torch_alias

    spec = importlib.util.spec_from_file_location(name, path or os.path.join(HERE, "user_gpt.py"))
    module = importlib.util.module_from_spec(spec)
    if alias:
        with torch_alias():
            spec.loader.exec_module(module)
    else:
        spec.loader.exec_module(module)
    return module


def _nanogpt_source(where: str) -> str:
    """nanoGPT's ``model.py``, unchanged, as a file: from a checkout, or from a bare git directory's HEAD."""
    if os.path.isfile(os.path.join(where, "model.py")):
        return os.path.join(where, "model.py")
    text = subprocess.run(["git", "--git-dir", where, "show", "HEAD:model.py"], check=True, capture_output=True,
                          text=True).stdout
    path = os.path.join(tempfile.mkdtemp(), "nanogpt_model.py")
    with open(path, "w") as f:
        f.write(text)
    return path


def nanogpt_pair(where: str, batch_m, batch_t):
    """nanoGPT's ``GPT`` at the benchmark's size (its own ``configure_optimizers``: AdamW, weight decay on
    matrices), with PyTorch and through the alias, the same weights: ``(model_m, opt_m, model_t, opt_t)``."""
    import contextlib
    import io

    import torch

    import minitorch_ln as mt
    from minitorch_ln.interop.torch_alias import torch_alias

    path = _nanogpt_source(where)
    size = dict(block_size=BLOCK, vocab_size=VOCAB, n_layer=4, n_head=4, n_embd=128, dropout=0.0, bias=True)
    opt_args = dict(weight_decay=0.1, learning_rate=6e-4, betas=(0.9, 0.95), device_type="cpu")
    with contextlib.redirect_stdout(io.StringIO()):  # its parameter counts and optimizer notes
        nano_t = _load("nanogpt_torch", alias=False, path=path)
        torch.manual_seed(0)
        model_t = nano_t.GPT(nano_t.GPTConfig(**size))
        opt_t = model_t.configure_optimizers(**opt_args)
        nano_m = _load("nanogpt_minitorch_ln", alias=True, path=path)
        with torch_alias():
            model_m = nano_m.GPT(nano_m.GPTConfig(**size))
            model_m.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in model_t.state_dict().items()})
            opt_m = model_m.configure_optimizers(**opt_args)
    check_same(model_m, model_t, batch_m, batch_t, "nanoGPT's model.py")
    return model_m, opt_m, model_t, opt_t


def make_steps(nanogpt=None):
    """``{name: step}`` for the user model and ``nn.GPT`` (and nanoGPT's ``model.py`` when ``nanogpt`` names a
    clone or git directory of karpathy/nanoGPT), minitorch_ln's and PyTorch's, the same weights each."""
    import numpy as np
    import torch

    import minitorch_ln as mt
    from minitorch_ln.interop.torch_alias import torch_alias
    from minitorch_ln.interop.torch_models import torch_twin
    from minitorch_ln.nn import GPT, GPTConfig

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

    steps = {
        "user GPT, minitorch_ln": step(model_m, opt_m, batch_m),
        "user GPT, PyTorch": step(model_t, user_t.make_optimizer(model_t), batch_t),
        "nn.GPT tiny, minitorch_ln": step(gpt, mt.optim.AdamW(gpt.parameters(), lr=3e-4), batch_m),
        "nn.GPT tiny, PyTorch": step(twin, torch.optim.AdamW(twin.parameters(), lr=3e-4), batch_t),
    }
    if nanogpt:
        nano_m, nano_opt_m, nano_t, nano_opt_t = nanogpt_pair(nanogpt, batch_m, batch_t)
        steps["nanoGPT, minitorch_ln"] = step(nano_m, nano_opt_m, batch_m)
        steps["nanoGPT, PyTorch"] = step(nano_t, nano_opt_t, batch_t)
    return steps


def check_same(model_m, model_t, batch_m, batch_t, what="the user GPT"):
    """One forward and backward from the same weights: the same loss, every gradient within float32 noise."""
    import numpy as np

    _, loss_m = model_m(*batch_m)
    loss_m.backward()
    _, loss_t = model_t(*batch_t)
    loss_t.backward()
    grads_t = {k: p.grad.numpy() for k, p in model_t.named_parameters()}
    worst = max(float(np.abs(p.grad.numpy() - grads_t[k]).max() / (np.abs(grads_t[k]).max() + 1e-12))
                for k, p in model_m.named_parameters())
    if abs(loss_m.item() - loss_t.item()) > 1e-4 * max(1.0, abs(loss_t.item())) or worst > 1e-3:
        raise RuntimeError(f"{what} differs: loss {loss_m.item()} vs PyTorch's {loss_t.item()}, gradients by "
                           f"{worst:.2e} of their largest entry")
    model_m.zero_grad()
    model_t.zero_grad()


def child(threads: int, rounds: int, profile: bool, nanogpt=None) -> None:
    import numpy as np
    import torch

    from minitorch_ln import kernels

    torch.set_num_threads(threads)
    kernels.set_num_threads(threads)
    steps = make_steps(nanogpt)
    if profile:  # CPU time per function (cProfile on the process clock: a busy machine's waits left out)
        import cProfile
        import pstats

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
    for model in [name[:-len(", PyTorch")] for name in steps if name.endswith(", PyTorch")]:
        m, t = med[f"{model}, minitorch_ln"], med[f"{model}, PyTorch"]
        lo_hi = sorted(a / b for a, b in zip(times[f"{model}, minitorch_ln"], times[f"{model}, PyTorch"]))
        print(f"{threads:>7} {'CPU' if threads == 1 else 'wall':>5} {model:<12} {m:12.1f} {t:10.1f} {m / t:7.2f}"
              f"   ({lo_hi[0]:.2f}-{lo_hi[-1]:.2f})")


def main(argv=None):
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.child is not None:
        child(args.child, args.rounds, args.profile, args.nanogpt)
        return
    print(f"ms per step, median of {args.rounds} alternated rounds (ratio per round: lowest-highest)")
    print(f"{'threads':>7} {'clock':>5} {'model':<12} {'minitorch_ln':>12} {'PyTorch':>10} {'ratio':>7}")
    for n in [int(s) for s in args.threads.split(",")]:
        blas = str(args.blas_threads or n)
        env = dict(os.environ, OMP_NUM_THREADS=str(n), OPENBLAS_NUM_THREADS=blas, MKL_NUM_THREADS=blas,
                   MINITORCH_LN_NUM_THREADS=str(n))
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        env.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", str(n), "--rounds", str(args.rounds)]
        extra = (["--profile"] if args.profile else []) + (["--nanogpt", args.nanogpt] if args.nanogpt else [])
        subprocess.run(cmd + extra, env=env, check=True)


if __name__ == "__main__":
    main()
