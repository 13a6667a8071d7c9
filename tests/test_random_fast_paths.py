"""The small-draw savings of issue 26's second session against the forms they replace: state words tempered once
per block (``CPUGenerator.random32``), ``_unit64`` from the 32-bit words in float64, ``exponential`` in one pass
over Python floats, and ``multinomial``'s cheaper validity test (same errors, same draws). PyTorch's own draws are
compared in tests/test_random_torch_streams.py."""

import math

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln import random_torch
from minitorch_ln.mt19937 import CPUGenerator, _temper, _twist


def _reference_random32(g, n):
    """The untempered-copy-then-temper loop random32 had: every word of the draw tempered in that call."""
    raw = np.empty(n, dtype=np.uint32)
    done = 0
    while done < n:
        if g.left == 1:
            _twist(g.mt)
            g.left, g.next = 625, 0
        take = min(n - done, g.left - 1)
        raw[done:done + take] = g.mt[g.next:g.next + take]
        g.next += take
        g.left -= take
        done += take
    return _temper(raw)


def test_random32_tempered_once_per_block_gives_the_same_words():
    rng = np.random.default_rng(0)
    fast, ref = CPUGenerator(1234), CPUGenerator(1234)
    for step in range(300):
        n = int(rng.choice([0, 1, 2, 27, 54, 623, 624, 625, 1500]))
        assert fast.random32(n).tobytes() == _reference_random32(ref, n).tobytes(), (step, n)
        assert (fast.left, fast.next) == (ref.left, ref.next)
        if step % 37 == 5:  # a state restored mid-block, from the reference generator
            fast.set_state(ref.get_state())
        if step % 91 == 7:
            fast.manual_seed(step)
            ref.manual_seed(step)
    out = fast.random32(5)
    out[:] = 0  # the caller's array is its own: the cached block is unchanged
    assert fast.random32(5).tobytes() == _reference_random32(ref, 10)[5:].tobytes()


def test_unit64_and_exponential_as_their_composed_forms():
    a, b = CPUGenerator(7), CPUGenerator(7)
    for n in (1, 27, 400, 3):
        got = random_torch._unit64(a, n)
        want = (b.random64(n) & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53
        assert got.tobytes() == want.tobytes()
    for lambd, dtype in ((1.0, np.float32), (2.5, np.float64), (0.5, np.float16)):
        got = random_torch.exponential(a, (3, 9), dtype, lambd)
        u = (b.random64(27) & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53
        want = ((-1.0 / lambd) * np.array([math.log1p(v) for v in -u])).astype(dtype).reshape(3, 9)
        assert got.dtype == dtype and got.tobytes() == want.tobytes()


def _reference_check(w):
    """multinomial's validity test before: every weight finite and >= 0, then every row's total > 0."""
    w = np.asarray(w, dtype=np.float64).reshape(-1, np.shape(w)[-1])
    if not bool((np.isfinite(w) & (w >= 0)).all()):
        return "probability tensor contains either `inf`, `nan` or element < 0"
    if not bool((w.sum(axis=1) > 0).all()):
        return "invalid multinomial distribution (sum of probabilities <= 0)"
    return None


WEIGHTS = [[1.0, 2.0], [1.0, math.nan], [math.nan, math.nan], [1.0, math.inf], [math.inf, -math.inf],
           [1.0, -1.0], [-math.inf, 1.0], [0.0, 0.0], [-0.0, 1.0], [0.0, 1e-300], [1e308, 1e308],
           [[1.0, 2.0], [0.0, 0.0]], [[1.0, 2.0], [1.0, math.nan]], [[0.0, 1.0], [3.0, -2.0]], [[5.0, 1.0], [1.0, 1.0]]]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_multinomial_validity_test_as_the_exact_one(dtype):
    for weights in WEIGHTS:
        with np.errstate(over="ignore"):
            arr = np.array(weights, dtype=dtype)
        want = _reference_check(arr)
        g = mt.Generator().manual_seed(3)
        if want is None:
            out = mt.multinomial(mt.tensor(arr), 1, generator=g)
            assert out.dtype == mt.int64 and out.shape == arr.shape[:-1] + (1,)
        else:
            with pytest.raises(RuntimeError) as err:
                mt.multinomial(mt.tensor(arr), 1, generator=g)
            assert str(err.value) == want, weights
    for shape in ((2, 0), (0,)):  # no categories: a RuntimeError, as PyTorch's (NumPy's reshape raised ValueError)
        with pytest.raises(RuntimeError, match=r"no categories to draw from \(input of shape \("):
            mt.multinomial(mt.ones(shape), 1, replacement=True)
    assert mt.multinomial(mt.ones(0, 3), 1).shape == (0, 1)  # no rows: an empty result, as PyTorch
    with pytest.raises(TypeError, match="argument 'num_samples' must be int, not bool"):
        mt.multinomial(mt.ones(3), True)
    assert mt.multinomial(mt.ones(3), np.int64(2)).shape == (2,)  # a NumPy integer is an int


def test_multinomial_draws_unchanged_by_the_cheaper_test():
    # lecture 1's sampler against PyTorch: the same names from the same seed
    torch = pytest.importorskip("torch")
    p = np.random.default_rng(9).random((27, 27)).astype(np.float32)
    p /= p.sum(1, keepdims=True)
    g, tg = mt.Generator().manual_seed(2147483647), torch.Generator().manual_seed(2147483647)
    P, tP = mt.tensor(p), torch.tensor(p)
    ours = [mt.multinomial(P[i % 27], 1, replacement=True, generator=g).item() for i in range(400)]
    theirs = [torch.multinomial(tP[i % 27], 1, replacement=True, generator=tg).item() for i in range(400)]
    assert ours == theirs
