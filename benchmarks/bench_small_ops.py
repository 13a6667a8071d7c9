"""Small tensors in Python loops, where learners spend their time: the patterns of Karpathy's makemore
lecture 1 (bigram counts, log-likelihood by indexing, sampling by ``multinomial``, a one-hot bigram
model's training loop) and scalar autograd, timed side by side with PyTorch in one process.

Each pattern is written once against a ``torch``-shaped module ``lib`` (``minitorch_ln`` or PyTorch)
and timed in alternation; prints each framework's time, the ratio (minitorch_ln / PyTorch) and the
geometric mean of the ratios. One thread each (NumPy's BLAS and PyTorch), CPU time, median of the
alternated repetitions.
"""

from __future__ import annotations

import argparse
import math
import os
import string
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # read by OpenBLAS when it starts: one thread, as PyTorch here

import numpy as np  # noqa: E402

from _timing import time_pair  # noqa: E402

import minitorch_ln as mt  # noqa: E402

LETTERS = "." + string.ascii_lowercase  # index 0 is the start/end token, as in the lecture


def make_words(n: int, seed: int = 0) -> list[str]:
    """``n`` name-like words (the lecture's names.txt is not shipped): letters drawn with English-like
    weights, lengths 3-9, from a fixed seed."""
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.ones(26) * 0.5)
    return ["".join(rng.choice(list(string.ascii_lowercase), size=rng.integers(3, 10), p=weights)) for _ in range(n)]


def bigram_pairs(words):
    stoi = {c: i for i, c in enumerate(LETTERS)}
    pairs = []
    for w in words:
        chs = ["."] + list(w) + ["."]
        pairs += [(stoi[a], stoi[b]) for a, b in zip(chs, chs[1:])]
    return pairs


# ---------------------------------------------------------------------------------------------- patterns


def count_bigrams(lib, pairs):
    """``N[a, b] += 1`` on a (27, 27) int32 tensor, once per bigram (lecture 1's counting loop)."""
    N = lib.zeros((27, 27), dtype=lib.int32)
    for a, b in pairs:
        N[a, b] += 1
    return N


def nll_by_indexing(lib, P, pairs):
    """``-log(P[a, b]).item()`` per bigram, summed in Python (the lecture's log-likelihood loop)."""
    total = 0.0
    for a, b in pairs:
        total += -lib.log(P[a, b]).item()
    return total / len(pairs)


def nll_tensor_accumulate(lib, P, pairs):
    """``log_likelihood += torch.log(P[a, b])`` accumulated as a 0-d tensor (the lecture's own form)."""
    log_likelihood = 0.0
    for a, b in pairs:
        log_likelihood += lib.log(P[a, b])
    return (-log_likelihood / len(pairs)).item()


def sample_names(lib, P, n, seed=2147483647):
    """Sample ``n`` names from the rows of ``P`` with ``multinomial(...).item()`` (the lecture's sampler)."""
    g = lib.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        ix, name = 0, []
        while True:
            ix = lib.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
            if ix == 0 or len(name) > 30:
                break
            name.append(LETTERS[ix])
        out.append("".join(name))
    return out


def one_hot_training(lib, xs, ys, steps):
    """The lecture's one-hot bigram model: ``one_hot``, ``@``, ``exp``, ``sum(1, keepdim=True)``, fancy
    indexing, ``backward``, ``W.data += -50 * W.grad``."""
    F = lib.nn.functional
    W = lib.tensor(np.random.default_rng(0).standard_normal((27, 27)).astype(np.float32), requires_grad=True)
    num = xs.shape[0]
    for _ in range(steps):
        xenc = F.one_hot(xs, num_classes=27).float()
        logits = xenc @ W
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdim=True)
        loss = -probs[lib.arange(num), ys].log().mean() + 0.01 * (W**2).mean()
        W.grad = None
        loss.backward()
        W.data += -50 * W.grad
    return loss.item()


def scalar_autograd(lib, n):
    """micrograd-style arithmetic on 0-d tensors: ``a * b + b ** 2``, ``tanh``, ``relu``, ``backward``."""
    total = 0.0
    for i in range(n):
        a = lib.tensor(0.5 + i * 1e-4, requires_grad=True)
        b = lib.tensor(-1.5, requires_grad=True)
        c = a * b + b**2
        d = c.tanh() + (c * 2.0).relu() - a / 3.0
        d.backward()
        total += a.grad.item() + b.grad.item()
    return total


# ---------------------------------------------------------------------------------------------- driver


def patterns(n_words):
    """``{name: (fn(lib) for minitorch_ln, fn(lib) for PyTorch)}``, inputs prepared outside the timing."""
    import torch  # noqa: PLC0415

    words = make_words(n_words)
    pairs = bigram_pairs(words)
    counts = np.zeros((27, 27), dtype=np.float32)
    for a, b in pairs:
        counts[a, b] += 1
    p = (counts + 1) / (counts + 1).sum(1, keepdims=True)
    P = {mt: mt.tensor(p), torch: torch.tensor(p)}
    xs_np = np.array([a for a, _ in pairs[:5000]], dtype=np.int64)
    ys_np = np.array([b for _, b in pairs[:5000]], dtype=np.int64)
    data = {lib: (lib.tensor(xs_np), lib.tensor(ys_np)) for lib in (mt, torch)}
    few = pairs[:20000]
    table = {
        "bigram counting, N[a, b] += 1": lambda lib: count_bigrams(lib, few),
        "-log(P[a, b]).item() in a loop": lambda lib: nll_by_indexing(lib, P[lib], few),
        "log_likelihood += log(P[a, b]) (0-d tensor)": lambda lib: nll_tensor_accumulate(lib, P[lib], few),
        "sampling with multinomial(...).item()": lambda lib: sample_names(lib, P[lib], 200),
        "one-hot bigram training loop (5000 ex.)": lambda lib: one_hot_training(lib, *data[lib], 20),
        "scalar autograd on 0-d tensors": lambda lib: scalar_autograd(lib, 3000),
    }
    return {name: ((lambda f=f: f(mt)), (lambda f=f: f(torch))) for name, f in table.items()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--words", type=int, default=4000, help="synthetic words for the bigram table")
    args = p.parse_args(argv)
    import torch  # noqa: PLC0415

    torch.set_num_threads(1)
    print(f"{'pattern':46}{'minitorch_ln s':>16}{'PyTorch s':>12}{'ratio':>8}")
    ratios = []
    for name, (ours, theirs) in patterns(args.words).items():
        best_m, med_m, best_t, med_t = time_pair(ours, theirs, args.repeat, clock=time.process_time)
        ratios.append(med_m / med_t)
        print(f"{name:46}{med_m:16.3f}{med_t:12.3f}{med_m / med_t:8.2f}")
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"{'geometric mean (target <= 1.5, none above 3)':46}{'':28}{geo:8.2f}")


if __name__ == "__main__":
    main()
