"""adaptive_avg_pool with ±inf/NaN: each window averages its own cells only.

It was silently wrong: the averaging matrices multiplied an inf by the zero weights of the other windows
(0·inf = NaN), so ``adaptive_avg_pool1d([1, inf, 3, 4, 5, 6], 3)`` gave ``[inf, nan, nan]`` (PyTorch and the
math: ``[inf, 3.5, 5.5]``). Found by the interpolate 'area' work."""

import numpy as np
import pytest

import minitorch_ln as mt
import minitorch_ln.nn.functional as F

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("values, size", [([1, np.inf, 3, 4, 5, 6], 3), ([1, np.nan, 3, 4, 5, 6, 7], 2),
                                          ([-np.inf, 2, np.inf, 1, 1], 4), ([1.0, 2.0, 3.0], 5)])
def test_adaptive_avg_pool1d_windows_with_infinities(values, size):
    a = np.array([[values]], dtype=np.float64)
    ours = F.adaptive_avg_pool1d(mt.tensor(a), size).numpy()
    theirs = torch.nn.functional.adaptive_avg_pool1d(torch.tensor(a), size).numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_hand_worked_windows():
    # windows of 6 cells into 3: [0, 2), [2, 4), [4, 6) -> (1 + inf)/2, (3 + 4)/2, (5 + 6)/2
    y = F.adaptive_avg_pool1d(mt.tensor([[[1.0, np.inf, 3.0, 4.0, 5.0, 6.0]]]), 3)
    assert y.tolist() == [[[np.inf, 3.5, 5.5]]]


@pytest.mark.parametrize("nd", [2, 3])
def test_values_and_gradient_with_an_infinity_match_pytorch(nd):
    rng = np.random.default_rng(nd)
    shape = (2, 3, 5, 7) if nd == 2 else (1, 2, 4, 5, 3)
    a = rng.standard_normal(shape)
    a[(0, 1) + (2,) * nd] = np.inf
    out = (3, 4) if nd == 2 else (2, 3, 2)
    fm, ft = getattr(F, f"adaptive_avg_pool{nd}d"), getattr(torch.nn.functional, f"adaptive_avg_pool{nd}d")
    xm, xt = mt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ym, yt = fm(xm, out), ft(xt, out)
    np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    up = rng.standard_normal(tuple(yt.shape))
    ym.backward(mt.tensor(up))
    yt.backward(torch.tensor(up))
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
