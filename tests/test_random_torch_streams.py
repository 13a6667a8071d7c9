"""Seeded draws equal PyTorch's CPU streams bit for bit: every random op, float32 and float64, several
seeds and sizes, sequences of calls on one generator, and the generator state both ways.

Each case is described once (``CASES``: our call and torch's on a generator and a dtype) and one
test runs them all; after each call both generators must also be in the same state, so a case
that draws the right values from the wrong number of words fails too.
"""

import math
import platform

import numpy as np
import pytest

import minitorch_ln as mt
from helpers import torch
from minitorch_ln import random_torch
from minitorch_ln.mt19937 import CPUGenerator

SEEDS = [0, 42, 2147483647, 2**40 + 7]
DTYPES = ["float32", "float64"]


def _intel_mkl() -> bool:
    """PyTorch's MKL build draws bernoulli_(float p) (so dropout) from MKL's own stream on Intel CPUs."""
    try:
        with open("/proc/cpuinfo") as f:
            intel = "GenuineIntel" in f.read(4096)
    except OSError:
        intel = "Intel" in platform.processor()
    return intel and torch.backends.mkl.is_available()


needs_default_bernoulli = pytest.mark.skipif(_intel_mkl(), reason="torch draws bernoulli_(p) from MKL on Intel")


def _np(x):
    x = x.detach() if hasattr(x, "detach") else x
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def assert_same(ours, theirs):
    """Bitwise equal values, same dtype and shape."""
    a, b = _np(ours), _np(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    if a.dtype.kind == "f":
        bits = np.dtype(f"i{a.dtype.itemsize}")
        bad = a.view(bits) != b.view(bits)
    else:
        bad = a != b
    assert not bad.any(), f"{int(bad.sum())}/{a.size} differ; first at {np.argwhere(bad)[0]}: {a[bad][:3]} vs {b[bad][:3]}"


def same_state(g, tg):
    assert_same(g.get_state(), tg.get_state())


def pair(seed):
    return mt.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)


def T(name):
    return getattr(torch, name)


def M(name):
    return getattr(mt, name)


P = np.random.default_rng(5).random((6, 27))  # multinomial weights (rows of unnormalised probabilities)

# name -> (ours(g, dtype), theirs(tg, dtype)); dtype is a name ("float32"...)
CASES = {
    "rand": (lambda g, d: mt.rand(3, 5, generator=g, dtype=M(d)), lambda g, d: torch.rand(3, 5, generator=g, dtype=T(d))),
    "rand_big": (lambda g, d: mt.rand(1001, generator=g, dtype=M(d)), lambda g, d: torch.rand(1001, generator=g, dtype=T(d))),
    "randn_27x27": (lambda g, d: mt.randn((27, 27), generator=g, dtype=M(d)),
                    lambda g, d: torch.randn((27, 27), generator=g, dtype=T(d))),
    **{f"randn_{n}": (lambda g, d, n=n: mt.randn(n, generator=g, dtype=M(d)),
                      lambda g, d, n=n: torch.randn(n, generator=g, dtype=T(d)))
       for n in (1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 100, 4099)},
    "uniform_": (lambda g, d: mt.empty(40, dtype=M(d)).uniform_(-0.37, 0.81, generator=g),
                 lambda g, d: torch.empty(40, dtype=T(d)).uniform_(-0.37, 0.81, generator=g)),
    "normal_": (lambda g, d: mt.empty(5, 8, dtype=M(d)).normal_(0.5, 0.02, generator=g),
                lambda g, d: torch.empty(5, 8, dtype=T(d)).normal_(0.5, 0.02, generator=g)),
    "normal_small": (lambda g, d: mt.empty(5, dtype=M(d)).normal_(-1.5, 3.0, generator=g),
                     lambda g, d: torch.empty(5, dtype=T(d)).normal_(-1.5, 3.0, generator=g)),
    "normal_strided": (lambda g, d: mt.zeros(20, 4, dtype=M(d))[:, 1].normal_(generator=g),
                       lambda g, d: torch.zeros(20, 4, dtype=T(d))[:, 1].normal_(generator=g)),
    "normal_fn": (lambda g, d: mt.normal(2.0, 3.0, (40,), generator=g, dtype=M(d)),
                  lambda g, d: torch.normal(2.0, 3.0, (40,), generator=g, dtype=T(d))),
    "normal_tensors": (lambda g, d: mt.normal(mt.arange(20, dtype=M(d)), mt.ones(20, dtype=M(d)) * 0.5, generator=g),
                       lambda g, d: torch.normal(torch.arange(20, dtype=T(d)), torch.ones(20, dtype=T(d)) * 0.5,
                                                 generator=g)),
    "rand_like": (lambda g, d: mt.rand_like(mt.zeros(4, 5, dtype=M(d)), generator=g),
                  lambda g, d: torch.rand_like(torch.zeros(4, 5, dtype=T(d)), generator=g)),
    "randn_like": (lambda g, d: mt.randn_like(mt.zeros(4, 5, dtype=M(d)), generator=g),
                   lambda g, d: torch.randn_like(torch.zeros(4, 5, dtype=T(d)), generator=g)),
    "exponential_": (lambda g, d: mt.empty(50, dtype=M(d)).exponential_(1.5, generator=g),
                     lambda g, d: torch.empty(50, dtype=T(d)).exponential_(1.5, generator=g)),
    "cauchy_": (lambda g, d: mt.empty(30, dtype=M(d)).cauchy_(1.0, 2.0, generator=g),
                lambda g, d: torch.empty(30, dtype=T(d)).cauchy_(1.0, 2.0, generator=g)),
    "log_normal_": (lambda g, d: mt.empty(30, dtype=M(d)).log_normal_(generator=g),
                    lambda g, d: torch.empty(30, dtype=T(d)).log_normal_(generator=g)),
    "geometric_": (lambda g, d: mt.empty(30, dtype=M(d)).geometric_(0.3, generator=g),
                   lambda g, d: torch.empty(30, dtype=T(d)).geometric_(0.3, generator=g)),
    "random_": (lambda g, d: mt.empty(30, dtype=M(d)).random_(generator=g),
                lambda g, d: torch.empty(30, dtype=T(d)).random_(generator=g)),
    "random_to": (lambda g, d: mt.empty(30, dtype=M(d)).random_(10, generator=g),
                  lambda g, d: torch.empty(30, dtype=T(d)).random_(10, generator=g)),
    "random_from_to": (lambda g, d: mt.empty(30, dtype=M(d)).random_(-5, 2**20, generator=g),
                       lambda g, d: torch.empty(30, dtype=T(d)).random_(-5, 2**20, generator=g)),
    "random_from_to_int64": (lambda g, d: mt.empty(30, dtype=mt.int64).random_(-5, 2**40, generator=g),
                             lambda g, d: torch.empty(30, dtype=torch.int64).random_(-5, 2**40, generator=g)),
    "random_int32": (lambda g, d: mt.empty(30, dtype=mt.int32).random_(generator=g),
                     lambda g, d: torch.empty(30, dtype=torch.int32).random_(generator=g)),
    "random_from_0_int32": (lambda g, d: mt.empty(30, dtype=mt.int32).random_(0, None, generator=g),
                            lambda g, d: torch.empty(30, dtype=torch.int32).random_(0, None, generator=g)),
    "random_int64_full": (lambda g, d: mt.empty(30, dtype=mt.int64).random_(-(2**63), None, generator=g),
                          lambda g, d: torch.empty(30, dtype=torch.int64).random_(-(2**63), None, generator=g)),
    "randint": (lambda g, d: mt.randint(0, 27, (3, 9), generator=g), lambda g, d: torch.randint(0, 27, (3, 9), generator=g)),
    "randint_neg": (lambda g, d: mt.randint(-100, 100, (50,), generator=g),
                    lambda g, d: torch.randint(-100, 100, (50,), generator=g)),
    "randint_wide": (lambda g, d: mt.randint(0, 2**40, (20,), generator=g),
                     lambda g, d: torch.randint(0, 2**40, (20,), generator=g)),
    "randint_float": (lambda g, d: mt.randint(3, 10, (20,), generator=g, dtype=M(d)),
                      lambda g, d: torch.randint(3, 10, (20,), generator=g, dtype=T(d))),
    "randint_like": (lambda g, d: mt.randint_like(mt.zeros(7, dtype=mt.int64), 5, generator=g),
                     lambda g, d: torch.randint_like(torch.zeros(7, dtype=torch.int64), 5, generator=g)),
    "randperm": (lambda g, d: mt.randperm(257, generator=g), lambda g, d: torch.randperm(257, generator=g)),
    "randperm_small": (lambda g, d: mt.randperm(2, generator=g), lambda g, d: torch.randperm(2, generator=g)),
    "bernoulli_p_tensor": (lambda g, d: mt.bernoulli(mt.tensor(P, dtype=M(d)), generator=g),
                           lambda g, d: torch.bernoulli(torch.tensor(P, dtype=T(d)), generator=g)),
    "bernoulli_p_tensor_": (lambda g, d: mt.zeros(6, 27, dtype=M(d)).bernoulli_(mt.tensor(P[0], dtype=M(d)), generator=g),
                            lambda g, d: torch.zeros(6, 27, dtype=T(d)).bernoulli_(torch.tensor(P[0], dtype=T(d)),
                                                                                  generator=g)),
    "multinomial_1": (lambda g, d: mt.multinomial(mt.tensor(P[0], dtype=M(d)), num_samples=1, replacement=True, generator=g),
                      lambda g, d: torch.multinomial(torch.tensor(P[0], dtype=T(d)), num_samples=1, replacement=True,
                                                     generator=g)),
    "multinomial_rows": (lambda g, d: mt.multinomial(mt.tensor(P, dtype=M(d)), 1, generator=g),
                         lambda g, d: torch.multinomial(torch.tensor(P, dtype=T(d)), 1, generator=g)),
    "multinomial_replacement": (lambda g, d: mt.multinomial(mt.tensor(P, dtype=M(d)), 40, True, generator=g),
                                lambda g, d: torch.multinomial(torch.tensor(P, dtype=T(d)), 40, True, generator=g)),
    "multinomial_no_replacement": (lambda g, d: mt.multinomial(mt.tensor(P, dtype=M(d)), 20, False, generator=g),
                                   lambda g, d: torch.multinomial(torch.tensor(P, dtype=T(d)), 20, False, generator=g)),
}

BERNOULLI_CASES = {  # bernoulli_(float p): the default CPU path (PyTorch's MKL build on Intel differs)
    "bernoulli_p_float": (lambda g, d: mt.zeros(100, dtype=M(d)).bernoulli_(0.3, generator=g),
                          lambda g, d: torch.zeros(100, dtype=T(d)).bernoulli_(0.3, generator=g)),
    "bernoulli_fn_p": (lambda g, d: mt.bernoulli(mt.zeros(30, dtype=M(d)), 0.7, generator=g),
                       lambda g, d: torch.bernoulli(torch.zeros(30, dtype=T(d)), 0.7, generator=g)),
}


def _run(case, seed, dtype):
    ours, theirs = case
    g, tg = pair(seed)
    for _ in range(2):  # twice: the second call starts where the first left the stream
        assert_same(ours(g, dtype), theirs(tg, dtype))
        same_state(g, tg)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_each_op_draws_pytorchs_numbers(name, seed, dtype):
    _run(CASES[name], seed, dtype)


@needs_default_bernoulli
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BERNOULLI_CASES))
def test_bernoulli_float_p_draws_pytorchs_numbers(name, dtype):
    for seed in SEEDS:
        _run(BERNOULLI_CASES[name], seed, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_sequence_of_calls_on_one_generator(dtype):
    """Every case in turn on one generator: the scalar normal path's cached value carries over too."""
    g, tg = pair(2147483647)
    for name in sorted(CASES) * 2:
        ours, theirs = CASES[name]
        assert_same(ours(g, dtype), theirs(tg, dtype))
    same_state(g, tg)


def test_lecture_makemore_cells():
    """makemore part 1/2: a seeded generator, W = randn((27, 27)), sampling with multinomial."""
    g, tg = pair(2147483647)
    W, tW = mt.randn((27, 27), generator=g), torch.randn((27, 27), generator=tg)
    assert_same(W, tW)
    ix, tix = 0, 0
    for _ in range(20):
        p = mt.softmax(W[ix], dim=0)
        tp = torch.softmax(tW[tix], dim=0)
        ix = mt.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        tix = torch.multinomial(tp, num_samples=1, replacement=True, generator=tg).item()
        assert ix == tix
    C, tC = mt.randn((27, 10), generator=g), torch.randn((27, 10), generator=tg)
    assert_same(C, tC)
    same_state(g, tg)


def test_global_stream_manual_seed_and_module_initialisation():
    """torch.manual_seed, then the default initialisation of the usual modules, in order, and the global draws."""
    for seed in (0, 1337):
        for dtype in DTYPES:
            mt.manual_seed(seed)
            torch.manual_seed(seed)
            assert mt.initial_seed() == torch.initial_seed() == seed
            mods = [
                (mt.nn.Linear(30, 20, dtype=M(dtype)), torch.nn.Linear(30, 20, dtype=T(dtype))),
                (mt.nn.Embedding(27, 10, dtype=M(dtype)), torch.nn.Embedding(27, 10, dtype=T(dtype))),
                (mt.nn.Embedding(3, 5, dtype=M(dtype)), torch.nn.Embedding(3, 5, dtype=T(dtype))),
                (mt.nn.Conv1d(3, 4, 5, dtype=M(dtype)), torch.nn.Conv1d(3, 4, 5, dtype=T(dtype))),
                (mt.nn.Conv2d(3, 8, 3, dtype=M(dtype)), torch.nn.Conv2d(3, 8, 3, dtype=T(dtype))),
                (mt.nn.LayerNorm(8, dtype=M(dtype)), torch.nn.LayerNorm(8, dtype=T(dtype))),
                (mt.nn.MultiheadAttention(16, 2, dtype=M(dtype)), torch.nn.MultiheadAttention(16, 2, dtype=T(dtype))),
                (mt.nn.Linear(7, 3, bias=False, dtype=M(dtype)), torch.nn.Linear(7, 3, bias=False, dtype=T(dtype))),
                (mt.nn.ConvTranspose2d(3, 4, 3, dtype=M(dtype)), torch.nn.ConvTranspose2d(3, 4, 3, dtype=T(dtype))),
                (mt.nn.TransformerEncoderLayer(16, 2, 32, dtype=M(dtype)),
                 torch.nn.TransformerEncoderLayer(16, 2, 32, dtype=T(dtype))),
                (mt.nn.TransformerDecoderLayer(16, 2, 32, dtype=M(dtype)),
                 torch.nn.TransformerDecoderLayer(16, 2, 32, dtype=T(dtype))),
            ]
            for ours, theirs in mods:
                sd = dict(theirs.named_parameters())
                for name, p in ours.named_parameters():
                    assert_same(p, sd[name])
            x, tx = mt.ones(1000, dtype=M(dtype)), torch.ones(1000, dtype=T(dtype))
            assert_same(mt.randn(5, dtype=M(dtype)), torch.randn(5, dtype=T(dtype)))
            assert_same(mt.randperm(30), torch.randperm(30))
            if not _intel_mkl():
                assert_same(mt.nn.functional.dropout(x, 0.3), torch.nn.functional.dropout(tx, 0.3))
                assert_same(mt.nn.Dropout(0.1)(x), torch.nn.Dropout(0.1)(tx))
            y, ty = mt.randn(64, dtype=M(dtype)), torch.randn(64, dtype=T(dtype))
            assert_same(mt.nn.functional.rrelu(y, training=True), torch.nn.functional.rrelu(ty, training=True))
            assert_same(mt.default_generator.get_state(), torch.default_generator.get_state())


INITS = {
    "uniform_": (lambda m, t, g: m.uniform_(t, -0.5, 2.0, generator=g)),
    "normal_": (lambda m, t, g: m.normal_(t, 0.1, 0.02, generator=g)),
    "xavier_uniform_": (lambda m, t, g: m.xavier_uniform_(t, gain=1.5, generator=g)),
    "xavier_normal_": (lambda m, t, g: m.xavier_normal_(t, generator=g)),
    "kaiming_uniform_": (lambda m, t, g: m.kaiming_uniform_(t, a=math.sqrt(5), generator=g)),
    "kaiming_normal_": (lambda m, t, g: m.kaiming_normal_(t, mode="fan_out", nonlinearity="relu", generator=g)),
    "trunc_normal_": (lambda m, t, g: m.trunc_normal_(t, std=0.02, generator=g)),
    "trunc_normal_wide": (lambda m, t, g: m.trunc_normal_(t, mean=0.0, std=1.0, a=-1.0, b=1.0, generator=g)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (64, 48), (8, 3, 5, 5)])
@pytest.mark.parametrize("name", sorted(INITS))
def test_nn_init_draws_pytorchs_weights(name, shape, dtype):
    g, tg = pair(7)
    t, tt = mt.empty(*shape, dtype=M(dtype)), torch.empty(*shape, dtype=T(dtype))
    INITS[name](mt.nn.init, t, g)
    INITS[name](torch.nn.init, tt, tg)
    assert_same(t, tt)
    same_state(g, tg)


def test_trunc_normal_rejection_path_keeps_pytorchs_stream():
    """A narrow window (mass <= 0.3) takes PyTorch's rejection sampler from U(a, b)."""
    g, tg = pair(11)
    t, tt = mt.empty(300), torch.empty(300)
    mt.nn.init.trunc_normal_(t, mean=0.0, std=1.0, a=2.0, b=3.0, generator=g)
    torch.nn.init.trunc_normal_(tt, mean=0.0, std=1.0, a=2.0, b=3.0, generator=tg)
    np.testing.assert_array_equal(_np(t), _np(tt))  # the accept tests use float32 log: equal unless on a tie
    same_state(g, tg)


@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (7, 3), (4, 2, 3)])
def test_orthogonal_draws_pytorchs_matrix_to_rounding(shape):
    g, tg = pair(3)
    t, tt = mt.empty(*shape), torch.empty(*shape)
    mt.nn.init.orthogonal_(t, gain=2.0, generator=g)
    torch.nn.init.orthogonal_(tt, gain=2.0, generator=tg)
    np.testing.assert_allclose(_np(t), _np(tt), rtol=0, atol=1e-5)  # QR from another LAPACK
    same_state(g, tg)


# ---------------------------------------------------------------------------------------------------
# the generator itself
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS + [2**64 - 1, -1])
def test_fresh_and_seeded_states_are_pytorchs(seed):
    assert_same(mt.Generator().get_state(), torch.Generator().get_state())
    assert mt.Generator().initial_seed() == torch.Generator().initial_seed() == 67280421310721
    g, tg = pair(seed)
    assert g.initial_seed() == tg.initial_seed()
    same_state(g, tg)


def test_state_round_trips_both_ways_with_the_normal_cache():
    g, tg = pair(99)
    mt.randn(3, generator=g, dtype=mt.float64)  # leaves the second value of a pair cached
    torch.randn(3, generator=tg, dtype=torch.float64)
    same_state(g, tg)
    state = g.get_state()
    a = mt.randn(5, generator=g, dtype=mt.float64)
    g.set_state(state)
    assert_same(mt.randn(5, generator=g, dtype=mt.float64), a)
    fresh = torch.Generator().set_state(torch.from_numpy(_np(state).copy()))  # ours restores in torch
    assert_same(torch.randn(5, generator=fresh, dtype=torch.float64), a)
    h = mt.Generator().set_state(tg.get_state())  # torch's restores here
    assert_same(mt.rand(700, generator=h), torch.rand(700, generator=tg))
    same_state(h, tg)


def test_backend_rng_state_round_trips_for_checkpoints():
    mt.manual_seed(5)
    mt.randn(3)
    saved = mt.backend.get_rng_state()
    a = mt.rand(10)
    mt.randn(17)
    mt.backend.set_rng_state(saved)
    assert_same(mt.rand(10), a)
    with pytest.raises(ValueError, match="mt19937"):
        mt.backend.set_rng_state({"bit_generator": "PCG64"})


def test_seed_returns_the_seed_it_set():
    g = mt.Generator()
    s = g.seed()
    assert g.initial_seed() == s
    assert_same(mt.rand(4, generator=g), torch.rand(4, generator=torch.Generator().manual_seed(s)))


@pytest.mark.parametrize("seed", [0, 5489, 2147483647])
def test_engine_is_the_reference_mt19937(seed):
    """Matsumoto & Nishimura's init_genrand + genrand_int32, as NumPy's legacy RandomState draws them."""
    reference = np.random.RandomState(seed).randint(0, 2**32, size=3000, dtype=np.uint64)
    np.testing.assert_array_equal(CPUGenerator(seed).random32(3000).astype(np.uint64), reference)


@pytest.mark.parametrize("n", [1, 623, 624, 625, 1248, 5000])
def test_engine_words_cross_the_twist_in_any_block_sizes(n):
    """Drawing in pieces gives the same words as in one go (the 624-word regeneration boundary)."""
    one, pieces = CPUGenerator(1), CPUGenerator(1)
    whole = one.random32(n)
    parts, left = [], n
    for size in (1, 5, 623, 2, 700):
        if left <= 0:
            break
        parts.append(pieces.random32(min(size, left)))
        left -= size
    if left > 0:
        parts.append(pieces.random32(left))
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    tg = torch.Generator().manual_seed(1)
    expect = (torch.rand(n, generator=tg).numpy() * 2**24).astype(np.uint32)
    np.testing.assert_array_equal(whole & 0xFFFFFF, expect)


def test_data_loader_shuffles_as_pytorch():
    """RandomSampler without a generator, random_split and a seeded DataLoader: PyTorch's orders."""
    from minitorch_ln.utils.data import DataLoader, RandomSampler, random_split  # noqa: PLC0415
    from torch.utils.data import DataLoader as TDataLoader  # noqa: PLC0415
    from torch.utils.data import RandomSampler as TRandomSampler  # noqa: PLC0415
    from torch.utils.data import random_split as t_random_split  # noqa: PLC0415

    mt.manual_seed(0)
    torch.manual_seed(0)
    assert list(RandomSampler(range(50))) == list(TRandomSampler(range(50)))
    assert list(RandomSampler(range(10), replacement=True, num_samples=70)) == list(
        TRandomSampler(range(10), replacement=True, num_samples=70))
    g, tg = pair(4)
    assert [list(s) for s in random_split(range(30), [10, 20], generator=g)] == [
        list(s) for s in t_random_split(range(30), [10, 20], generator=tg)]
    mt.manual_seed(3)
    torch.manual_seed(3)
    ours = [b.tolist() for b in DataLoader(list(range(40)), batch_size=8, shuffle=True)]
    theirs = [b.tolist() for b in TDataLoader(list(range(40)), batch_size=8, shuffle=True)]
    assert ours == theirs
    assert_same(mt.default_generator.get_state(), torch.default_generator.get_state())


def test_cpu_draws_are_fast_enough():
    """A million draws in well under a second each (the engine works in blocks of 624 words)."""
    import time  # noqa: PLC0415

    g = mt.Generator().manual_seed(0)
    start = time.perf_counter()
    mt.rand(10**6, generator=g)
    mt.randn(10**6, generator=g)
    assert time.perf_counter() - start < 3.0


def test_numpy_generator_is_still_accepted_on_the_cpu():
    rng = np.random.default_rng(0)
    assert mt.rand(3, generator=rng).shape == (3,)
    assert random_torch.is_torch_stream(mt.Generator().rng)
