"""Random ops: dtypes and shapes as PyTorch's, distributions by statistics, reproducibility, bad input."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from helpers import torch
from minitorch_ln.ops.creation import rand, randint, randn
from minitorch_ln.ops.generator import Generator, default_generator, manual_seed
from minitorch_ln.ops.random import bernoulli, multinomial, normal, poisson, randperm

N = 20000


def _within(x, mean, var, k=5.0):
    """The sample mean of ``x`` lies within k standard errors of ``mean``."""
    x = np.asarray(x, dtype=np.float64).ravel()
    assert abs(x.mean() - mean) < k * np.sqrt(var / x.size), (x.mean(), mean)


def _same_meta(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.") and tuple(ours.shape) == tuple(theirs.shape)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dtypes_and_shapes_match_pytorch(dtype):
    m, tm = mt.zeros(2, 3, dtype=dtype), torch.zeros(2, 3, dtype=getattr(torch, dtype))
    pairs = [
        (normal(m, mt.ones(3, dtype=dtype)), torch.normal(tm, torch.ones(3, dtype=tm.dtype))),
        (normal(m, 2.0), torch.normal(tm, 2.0)), (normal(0.0, mt.ones(4, dtype=dtype)), torch.normal(0.0, torch.ones(4, dtype=tm.dtype))),
        (normal(0.0, 1.0, (2, 5)), torch.normal(0.0, 1.0, (2, 5))),
        (normal(0.0, 1.0, size=(3,), dtype=mt.float64), torch.normal(0.0, 1.0, size=(3,), dtype=torch.float64)),
        (bernoulli(m + 0.5), torch.bernoulli(tm + 0.5)), (bernoulli(m, 0.3), torch.bernoulli(tm, 0.3)),
        (poisson(m + 1), torch.poisson(tm + 1)),
        (multinomial(m + 1, 2), torch.multinomial(tm + 1, 2)), (multinomial(m[0] + 1, 5, True), torch.multinomial(tm[0] + 1, 5, True)),
        (multinomial(mt.ones(0, 3, dtype=dtype), 2), torch.multinomial(torch.ones(0, 3, dtype=tm.dtype), 2)),
        (randperm(5), torch.randperm(5)), (randperm(5, dtype=mt.float32), torch.randperm(5, dtype=torch.float32)),
        (randperm(0), torch.randperm(0)),
    ]
    for ours, theirs in pairs:
        _same_meta(ours, theirs)
    for name, args in [("bernoulli_", (0.5,)), ("exponential_", ()), ("random_", ()), ("random_", (3,)), ("random_", (1, 4)),
                       ("cauchy_", ()), ("log_normal_", ()), ("geometric_", (0.3,))]:
        x = mt.zeros(4, dtype=dtype)
        assert getattr(x, name)(*args) is x and x.dtype == np.dtype(dtype), name


def test_sampling_of_an_input_that_requires_grad_gives_zero_gradients_as_pytorch():
    for op, top in [(lambda t: normal(t, 1.0), lambda t: torch.normal(t, 1.0)), (bernoulli, torch.bernoulli),
                    (poisson, torch.poisson), (lambda t: normal(t, t + 1), lambda t: torch.normal(t, t + 1))]:
        x = mt.full((3,), 0.5, dtype=mt.float64, requires_grad=True)
        tx = torch.full((3,), 0.5, dtype=torch.float64, requires_grad=True)
        y, ty = op(x), top(tx)
        assert y.requires_grad == ty.requires_grad
        y.backward(mt.randn(3, dtype=mt.float64))
        ty.backward(torch.randn(3, dtype=torch.float64))
        assert x.grad.tolist() == tx.grad.tolist() == [0.0, 0.0, 0.0]


def test_continuous_distributions_by_their_moments():
    manual_seed(0)
    _within(normal(2.0, 3.0, (N,)).numpy(), 2.0, 9.0)
    z = normal(mt.full((N,), -1.0, dtype=mt.float64), mt.full((N,), 0.5, dtype=mt.float64)).numpy()
    _within(z, -1.0, 0.25)
    _within((z + 1) ** 2, 0.25, 2 * 0.25**2)  # the variance: E[(z - m)^2] = s^2, Var = 2 s^4
    _within(mt.zeros(N, dtype=mt.float64).exponential_(2.0).numpy(), 0.5, 0.25)
    ln = np.log(mt.zeros(N, dtype=mt.float64).log_normal_(1.0, 0.5).numpy())
    _within(ln, 1.0, 0.25)
    c = mt.zeros(N, dtype=mt.float64).cauchy_(3.0, 2.0).numpy()
    _within(c < 3.0, 0.5, 0.25) and _within(np.abs(c - 3.0) < 2.0, 0.5, 0.25)  # median 3, quartiles 3 -+ 2


def test_discrete_distributions_by_their_moments():
    manual_seed(1)
    _within(bernoulli(mt.full((N,), 0.3)).numpy(), 0.3, 0.21)
    _within(mt.zeros(N, dtype=mt.int64).bernoulli_(0.8).numpy(), 0.8, 0.16)
    p = mt.tensor(np.linspace(0, 1, N))
    assert bernoulli(p)[0].item() == 0.0 and bernoulli(p)[-1].item() == 1.0
    k = poisson(mt.full((N,), 4.0, dtype=mt.float64)).numpy()
    _within(k, 4.0, 4.0)
    _within((k - 4.0) ** 2, 4.0, 4.0 + 2 * 16.0)  # the variance equals the rate
    assert poisson(mt.zeros(5)).tolist() == [0.0] * 5
    g = mt.zeros(N, dtype=mt.int64).geometric_(0.25).numpy()
    assert g.min() >= 1
    _within(g, 4.0, 0.75 / 0.25**2)
    r = mt.zeros(N, dtype=mt.int64).random_(2, 7).numpy()
    assert set(np.unique(r)) == {2, 3, 4, 5, 6}
    _within(r, 4.0, 2.0)
    assert mt.zeros(N, dtype="uint8").random_().numpy().max() > 250
    f = mt.zeros(N).random_().numpy()
    assert f.min() >= 0 and f.max() <= 2**24 and np.all(f == np.round(f))


def _chi_square(counts, probs):
    expected = probs * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_frequencies_pass_a_chi_square_test(replacement):
    manual_seed(2)
    w = np.array([1.0, 2.0, 3.0, 4.0, 0.0])
    draws = multinomial(mt.tensor(np.tile(w, (N // 10, 1))), 10 if replacement else 1, replacement).numpy().ravel()
    counts = np.bincount(draws, minlength=5)
    assert counts[4] == 0  # a zero weight is never drawn
    # 3 degrees of freedom: P(chi2 > 16.27) = 0.001
    assert _chi_square(counts[:4], w[:4] / w.sum()) < 16.27


def test_multinomial_without_replacement_second_draw_follows_sequential_sampling():
    manual_seed(3)
    w = np.array([1.0, 2.0, 3.0])
    d = multinomial(mt.tensor(np.tile(w, (N, 1))), 2).numpy()
    assert np.all(d[:, 0] != d[:, 1])
    p_first = w / w.sum()  # P(second = j) = sum_i p_i p_j / (1 - p_i)
    p_second = np.array([sum(p_first[i] * p_first[j] / (1 - p_first[i]) for i in range(3) if i != j) for j in range(3)])
    assert _chi_square(np.bincount(d[:, 1], minlength=3), p_second) < 13.8  # 2 dof, P = 0.001


@given(st.integers(1, 4), st.integers(1, 9), st.data())
def test_multinomial_without_replacement_draws_distinct_categories(rows, cats, data):
    n = data.draw(st.integers(1, cats))
    w = mt.tensor(np.array(data.draw(st.lists(st.floats(0.01, 10), min_size=rows * cats, max_size=rows * cats))).reshape(rows, cats))
    out = multinomial(w, n).numpy()
    assert out.shape == (rows, n) and all(len(set(r)) == n for r in out) and out.max() < cats


def test_randperm_is_a_permutation():
    assert sorted(randperm(50).tolist()) == list(range(50))


def test_manual_seed_and_generators_make_every_op_reproducible():
    def draw(gen=None):
        kw = {"generator": gen}
        return [rand(3, **kw), randn(3, **kw), randint(5, (3,), **kw), randperm(4, **kw), normal(0.0, 1.0, (2,), **kw),
                bernoulli(mt.full((3,), 0.5), **kw), poisson(mt.ones(3), **kw), multinomial(mt.ones(4), 2, **kw),
                mt.zeros(3).bernoulli_(**kw), mt.zeros(3).exponential_(**kw), mt.zeros(3).random_(9, **kw),
                mt.zeros(3).cauchy_(**kw), mt.zeros(3).log_normal_(**kw), mt.zeros(3).geometric_(0.5, **kw)]

    def same(a, b):
        return all(x.tolist() == y.tolist() for x, y in zip(a, b))

    assert manual_seed(7) is default_generator and default_generator.initial_seed() == 7
    first = draw()
    mt.manual_seed(7)
    assert same(first, draw())
    g = Generator().manual_seed(11)
    a = draw(g)
    assert same(a, draw(Generator().manual_seed(11))) and not same(a, draw(g))
    state = g.get_state()
    assert state.dtype == np.uint8 and state.ndim == 1
    b = draw(g)
    g.set_state(state)
    assert same(b, draw(g))
    assert Generator().initial_seed() == torch.Generator().initial_seed()
    assert Generator().manual_seed(-1).initial_seed() == 2**64 - 1


def test_bad_input_gives_pytorchs_errors():
    x = mt.full((3,), 0.5)
    cases = [
        (RuntimeError, "normal expects std >= 0.0, but found std -1", lambda: normal(0.0, -1.0, (2,))),
        (RuntimeError, "normal expects all elements of std >= 0.0", lambda: normal(x, -x)),
        (TypeError, "give the output size", lambda: normal(0.0, 1.0)),
        (RuntimeError, "do not broadcast", lambda: normal(mt.zeros(2, 3), mt.ones(4))),
        (TypeError, "floating point.*int64", lambda: normal(mt.zeros(3, dtype=mt.int64), 1.0)),
        (RuntimeError, "p_in >= 0 && p_in <= 1", lambda: bernoulli(x + 1)),
        (RuntimeError, "p_in >= 0", lambda: bernoulli(x * float("nan"))),
        (RuntimeError, r"expects p to be in \[0, 1\], but got p=1.5", lambda: bernoulli(x, 1.5)),
        (RuntimeError, "invalid Poisson rate", lambda: poisson(-x)),
        (RuntimeError, "prob_dist must be 1 or 2 dim", lambda: multinomial(mt.ones(2, 2, 2), 1)),
        (RuntimeError, "multinomial only supports floating-point dtypes for input, got: int64",
         lambda: multinomial(mt.tensor([1, 2]), 1)),
        (RuntimeError, "cannot sample n_sample <= 0 samples", lambda: multinomial(x, 0)),
        (RuntimeError, r"cannot sample n_sample > prob_dist.size\(-1\) samples without replacement \(4 > 3\)",
         lambda: multinomial(x, 4)),
        (RuntimeError, "`inf`, `nan` or element < 0", lambda: multinomial(mt.tensor([1.0, -1.0]), 1)),
        (RuntimeError, "`inf`, `nan` or element < 0", lambda: multinomial(mt.tensor([1.0, float("inf")]), 1)),
        (RuntimeError, "`inf`, `nan` or element < 0", lambda: multinomial(mt.tensor([1.0, float("nan")]), 1, True)),
        (RuntimeError, r"sum of probabilities <= 0", lambda: multinomial(mt.tensor([[1.0, 1.0], [0.0, 0.0]]), 1)),
        (RuntimeError, "negative dimension -1", lambda: randperm(-1)),
        (RuntimeError, "too large for dtype uint8", lambda: randperm(300, dtype="uint8")),
        (RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=0", lambda: mt.zeros(2).exponential_(0.0)),
        (RuntimeError, "continuous probability distribution.*int64", lambda: mt.zeros(2, dtype=mt.int64).exponential_()),
        (RuntimeError, "cauchy_ expects sigma > 0.0, but found sigma=-1", lambda: mt.zeros(2).cauchy_(0, -1)),
        (RuntimeError, "log_normal_ expects std > 0.0, but found std=0", lambda: mt.zeros(2).log_normal_(1, 0)),
        (RuntimeError, r"geometric_ expects p to be in \(0, 1\), but got p=1", lambda: mt.zeros(2).geometric_(1)),
        (RuntimeError, "'from' to be less than 'to', but got from=5 >= to=2", lambda: mt.zeros(2).random_(5, 2)),
        (RuntimeError, "to - 1 is out of bounds for unsigned char", lambda: mt.zeros(2, dtype="uint8").random_(300)),
        (RuntimeError, "manual_seed expected a long, but got float", lambda: Generator().manual_seed(1.5)),
        (ValueError, "Overflow", lambda: Generator().manual_seed(2**64)),
        (TypeError, "generator must be a minitorch_ln.Generator or None, got int", lambda: rand(3, generator=3)),
        (TypeError, "1-D uint8 tensor", lambda: Generator().set_state(mt.zeros(3))),
        (RuntimeError, "CPUGeneratorImplState of size 5056", lambda: Generator().set_state(mt.zeros(3, dtype="uint8"))),
        (RuntimeError, "in-place operation", lambda: mt.zeros(2, requires_grad=True).exponential_()),
    ]
    for exc, match, fn in cases:
        with pytest.raises(exc, match=match):
            fn()


def test_in_place_draw_bumps_the_version_and_writes_through_views():
    base = mt.zeros(4, 4)
    view = base[1]
    view.exponential_()
    assert float(base.numpy()[1].min()) > 0 and float(np.abs(base.numpy()[[0, 2, 3]]).max()) == 0
