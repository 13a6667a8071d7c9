"""Complex inputs of the masked reductions, cov/corrcoef, l1_loss and in-place writes into views
(diagonal_scatter, CopySlices): values and gradients against PyTorch, complex gradcheck, a property and
bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, t64
from hypothesis import given, settings
from strategies import complex_arrays

import minitorch_ln as mt
import minitorch_ln.masked  # noqa: F401 - mt.masked (torch.masked), imported on its own
import minitorch_ln.nn.functional as F
from minitorch_ln.autograd import GradcheckError, gradcheck
from minitorch_ln.errors import DtypeError

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(3)
DTYPES = (np.complex128, np.complex64)


def cx(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


MASK = np.array([[True, True, False, True], [False, True, True, True], [True, False, False, False]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["mean", "var", "std", "logsumexp"])
def test_masked_reductions_match_torch(dtype, name):
    ours, theirs = getattr(mt.masked, name), getattr(torch.masked, name)
    compare_with_torch(lambda x: ours(x, 1, mask=mt.tensor(MASK)), lambda x: theirs(x, 1, mask=torch.tensor(MASK)),
                       [cx(3, 4, dtype=dtype)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_normalize_cov_corrcoef_l1_loss_match_torch(dtype):
    x = cx(3, 4, dtype=dtype)
    compare_with_torch(lambda t: mt.masked.normalize(t, 2.0, 1, mask=mt.tensor(MASK)),
                       lambda t: torch.masked.normalize(t, 2.0, 1, mask=torch.tensor(MASK)), [x])
    compare_with_torch(mt.cov, torch.cov, [x])
    w = RNG.random(4).astype(np.float32 if dtype == np.complex64 else np.float64)
    compare_with_torch(lambda t: mt.cov(t, aweights=mt.tensor(w), correction=0),
                       lambda t: torch.cov(t, aweights=torch.tensor(w), correction=0), [x])
    compare_with_torch(mt.corrcoef, torch.corrcoef, [x])
    for reduction in ("mean", "sum", "none"):
        compare_with_torch(lambda a, b: F.l1_loss(a, b, reduction=reduction),
                           lambda a, b: torch.nn.functional.l1_loss(a, b, reduction=reduction), [x, cx(3, 4, dtype=dtype)])
    compare_with_torch(lambda a, s: mt.diagonal_scatter(a, s, 1), lambda a, s: torch.diagonal_scatter(a, s, 1),
                       [x, cx(3, dtype=dtype)])


def test_gradcheck_complex():
    m = mt.tensor(MASK | np.array([[False] * 4, [False] * 4, [False, True, False, False]]))  # two kept per row
    assert gradcheck(lambda t: mt.masked.var(t, 1, mask=m).real, (t64(cx(3, 4)),))
    assert gradcheck(lambda t: mt.masked.logsumexp(t, 1, mask=m), (t64(cx(3, 4)),))
    assert gradcheck(mt.cov, (t64(cx(2, 5)),))  # (x - x̄)(x - x̄)ᴴ: a missing conjugate would fail here
    assert gradcheck(F.l1_loss, (t64(cx(3, 2)), t64(cx(3, 2))))

    def write_into_view(a, s):
        b = a * 1
        b.diagonal().mul_(s)  # an in-place op on a view of a complex tensor: CopySlices
        return b

    assert gradcheck(write_into_view, (t64(cx(3, 3)), t64(cx(3))))


def test_gradcheck_reports_a_nan_mismatch():
    # a row with one kept element: var's divisor is 0, the numerical derivative NaN where the analytical one is
    # not; gradcheck names it (its failure report raised a bare IndexError on NaN-only mismatches before)
    with pytest.raises(GradcheckError, match="first failure"):
        gradcheck(lambda t: mt.masked.var(t, 1, mask=mt.tensor(MASK)).real, (t64(cx(3, 4)),))


@settings(max_examples=20, deadline=None)
@given(complex_arrays(max_dims=2, max_side=5))
def test_property_cov_is_hermitian_with_real_diagonal(a):
    if a.ndim < 2 or a.shape[1] < 2:
        return
    c = mt.cov(mt.tensor(a)).numpy()
    np.testing.assert_allclose(c, np.conj(c.T), atol=1e-12)
    np.testing.assert_allclose(c, np.cov(a), rtol=1e-10, atol=1e-12)  # NumPy's complex covariance


def test_bad_input():
    with pytest.raises(TypeError, match="complex"):
        mt.cov(mt.tensor(cx(2, 3)), fweights=mt.tensor(np.array([1, 2, 1j])))
    with pytest.raises(DtypeError, match="mse_loss: not implemented for complex"):
        F.mse_loss(mt.tensor(cx(2)), mt.tensor(cx(2)))  # (x - t)² is no loss for complex: refused, as PyTorch
    with pytest.raises(DtypeError, match="mean"):
        mt.masked.mean(mt.tensor([1, 2]), mask=mt.tensor([True, False]))
