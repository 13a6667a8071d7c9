"""torch.special without gradients (ops/special_bessel.py): Bessel, Airy, orthogonal polynomials, and zeta
(gradient in q only): PyTorch comparison, edge values by the math, a property, bad input."""

import math

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln import special

UNARY = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
         "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
         "spherical_bessel_j0", "airy_ai"]
POLY = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
        "legendre_polynomial_p", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_torch(name, dtype, rng):
    x = rng.uniform(0.1, 3.0, (3, 4)).astype(dtype)  # away from torch's own less accurate zeros of j0/y1
    compare_with_torch(getattr(special, name), getattr(torch.special, name), [x], rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", POLY)
def test_polynomials_match_torch(name, dtype, rng):
    x = rng.uniform(-1.0, 1.0, (3, 4)).astype(dtype)
    n = np.array([-1, 0, 1, 2, 3, 5, 7], dtype=np.int64)[:, None, None]
    compare_with_torch(getattr(special, name), getattr(torch.special, name), [x, n], rtol=1e-5, atol=1e-5)
    ours, want = getattr(special, name)(mt.tensor(x), 3), getattr(torch.special, name)(torch.tensor(x), 3)
    np.testing.assert_allclose(ours.array, want.numpy(), rtol=1e-5, atol=1e-5)


def test_zeta_matches_torch_with_gradient_in_q(rng):
    x, q = rng.uniform(1.5, 4.0, (3, 4)), rng.uniform(0.5, 3.0, (3, 4))
    compare_with_torch(special.zeta, torch.special.zeta, [x, q], requires_grad=[False, True])
    gradcheck_noncontiguous(lambda q: special.zeta(mt.tensor(x), q), [q])
    np.testing.assert_allclose(special.zeta(mt.tensor([2.0]), 1.0).array, [math.pi**2 / 6])
    assert special.zeta(mt.tensor([1.0]), 1.0).array[0] == math.inf


def test_edges_by_the_math():
    x = mt.tensor([0.0, math.inf])
    j0 = special.bessel_j0(x).array  # NaN at inf as SciPy and PyTorch (the limit is 0, the oscillation undefined)
    assert j0[0] == 1.0 and np.isnan(j0[1])
    assert special.spherical_bessel_j0(x).array.tolist() == [1.0, 0.0]
    assert special.bessel_y0(mt.tensor([0.0])).array[0] == -math.inf
    assert special.modified_bessel_k0(mt.tensor([0.0])).array[0] == math.inf
    assert special.chebyshev_polynomial_t(mt.tensor([1.0, -1.0]), 5).array.tolist() == [1.0, -1.0]
    assert special.bessel_j0(mt.tensor([1, 2])).dtype == mt.float32


def test_bad_input():
    q = t64([1.0, 2.0])
    x = t64([2.0, 3.0])
    with pytest.raises(RuntimeError, match="not implemented"):
        special.zeta(x, q).sum().backward()
    with pytest.raises(TypeError):
        special.bessel_j0([1.0])


@settings(deadline=None, max_examples=30)
@given(st.floats(0.0, math.pi), st.integers(0, 12))
def test_property_chebyshev_of_cosine(theta, n):
    # T_n(cos θ) = cos(nθ), U_n(cos θ)·sin θ = sin((n + 1)θ)
    c = mt.tensor([math.cos(theta)], dtype=mt.float64)
    np.testing.assert_allclose(special.chebyshev_polynomial_t(c, n).array, [math.cos(n * theta)], atol=1e-9)
    np.testing.assert_allclose(special.chebyshev_polynomial_u(c, n).array * math.sin(theta),
                               [math.sin((n + 1) * theta)], atol=1e-9)


@settings(deadline=None, max_examples=30)
@given(st.floats(0.01, math.pi - 0.01), st.integers(0, 12))
def test_property_chebyshev_v_w_of_cosine(theta, n):
    # V_n(cos θ) = cos((n + 1/2)θ) / cos(θ/2), W_n(cos θ) = sin((n + 1/2)θ) / sin(θ/2) (Mason & Handscomb 1.8-1.9)
    c = mt.tensor([math.cos(theta)], dtype=mt.float64)
    np.testing.assert_allclose(special.chebyshev_polynomial_v(c, n).array,
                               [math.cos((n + 0.5) * theta) / math.cos(theta / 2)], atol=1e-8)
    np.testing.assert_allclose(special.chebyshev_polynomial_w(c, n).array,
                               [math.sin((n + 0.5) * theta) / math.sin(theta / 2)], atol=1e-8)
    s = mt.tensor([(math.cos(theta) + 1) / 2], dtype=mt.float64)  # shifted: argument 2x - 1
    np.testing.assert_allclose(special.shifted_chebyshev_polynomial_v(s, n).array,
                               special.chebyshev_polynomial_v(c, n).array, atol=1e-8)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ours,theirs", [(mt.igamma, torch.igamma), (mt.igammac, torch.igammac),
                                         (special.gammainc, torch.special.gammainc)])
def test_incomplete_gamma_matches_torch_with_gradient_in_other(ours, theirs, dtype, rng):
    a, x = rng.uniform(0.2, 4.0, (3, 4)).astype(dtype), rng.uniform(0.1, 5.0, (4,)).astype(dtype)
    compare_with_torch(ours, theirs, [a, x], requires_grad=[False, True], rtol=1e-4 if dtype == np.float32 else None)
    gradcheck_noncontiguous(lambda x: ours(mt.tensor(a.astype(np.float64)), x), [x.astype(np.float64)], gg=True)


def test_incomplete_gamma_edges_and_errors():
    # P(a, 0) = 0, P(a, inf) = 1, P(1, x) = 1 - e^-x (DLMF 8.4.5); a <= 0 or x < 0 is NaN, as scipy and PyTorch
    p = mt.igamma(mt.tensor([2.0, 2.0, 1.0, -1.0, 1.0], dtype="float64"),
                  mt.tensor([0.0, math.inf, 0.5, 1.0, -1.0], dtype="float64")).array
    np.testing.assert_allclose(p[:3], [0.0, 1.0, 1 - math.exp(-0.5)])
    assert np.isnan(p[3:]).all()
    assert mt.igammac(mt.tensor([1, 2]), mt.tensor([1, 1])).dtype == mt.float32
    with pytest.raises(RuntimeError, match="derivative for 'input' .* is not implemented"):
        mt.igamma(t64([2.0]), t64([1.0])).sum().backward()
    with pytest.raises(TypeError):
        mt.igamma([1.0], mt.tensor([1.0]))
