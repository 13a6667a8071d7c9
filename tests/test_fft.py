"""torch.fft (minitorch_ln/fft.py, ops/spectral.py): every transform against PyTorch (values, dtypes and
the gradients of a random complex upstream gradient) for each norm, with n/s trimming and padding, in
float64/complex128 and float32/complex64; finite-difference gradchecks (non-contiguous inputs too);
properties (inverse round trips, Parseval) and errors."""

import numpy as np
import pytest
from hypothesis import given, settings

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck

from helpers import compare_with_torch, gradcheck_noncontiguous, t64
from strategies import complex_arrays

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
NORMS = [None, "backward", "ortho", "forward"]


def data(shape, kind, dtype=np.float64):
    a = RNG.standard_normal(shape)
    if kind == "c":
        return (a + 1j * RNG.standard_normal(shape)).astype(np.complex128 if dtype == np.float64 else np.complex64)
    return a.astype(dtype)


def both(name, **kw):
    return (lambda x: getattr(mt.fft, name)(x, **kw)), (lambda x: getattr(torch.fft, name)(x, **kw))


# (name, input kind, shape, keyword arguments): trims, zero-pads, other dims, odd and even lengths
ONE_D = [(n, k, shape, kw) for n, kinds in [("fft", "rc"), ("ifft", "rc"), ("rfft", "r"), ("ihfft", "r"),
                                            ("irfft", "rc"), ("hfft", "rc")]
         for k in kinds for shape, kw in [((3, 6), {}), ((3, 7), {}), ((3, 5), {"n": 8}), ((4, 5), {"n": 3, "dim": 0})]]
N_D = [(n, k, shape, kw) for n, kinds in [("fft2", "rc"), ("ifft2", "c"), ("fftn", "rc"), ("ifftn", "c"),
                                          ("rfft2", "r"), ("rfftn", "r"), ("ihfft2", "r"), ("ihfftn", "r"),
                                          ("irfft2", "c"), ("irfftn", "c"), ("hfft2", "c"), ("hfftn", "c")]
       for k in kinds for shape, kw in [((2, 3, 4), {}), ((2, 3, 5), {"s": (4, 6)}), ((3, 4, 5), {"dim": (0, 1)})]]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name, kind, shape, kw", ONE_D + N_D, ids=lambda v: str(v))
def test_transform_matches_torch_float64(name, kind, shape, kw, norm):
    compare_with_torch(*both(name, norm=norm, **kw), [data(shape, kind)])


@pytest.mark.parametrize("name, kind, shape, kw", ONE_D + N_D, ids=lambda v: str(v))
def test_transform_matches_torch_float32_and_keeps_single_precision(name, kind, shape, kw):
    ours, theirs = compare_with_torch(*both(name, **kw), [data(shape, kind, np.float32)])
    assert ours[0].dtype in (np.float32, np.complex64)  # numpy.fft may compute in double: cast back


@pytest.mark.parametrize("name, kw", [("fftshift", {}), ("ifftshift", {}), ("fftshift", {"dim": 1}),
                                      ("ifftshift", {"dim": (0, 2)})])
def test_shifts_match_torch(name, kw):
    compare_with_torch(*both(name, **kw), [data((3, 4, 5), "c")])
    compare_with_torch(*both(name, **kw), [data((3, 4, 5), "r")])


def test_frequencies_match_torch():
    for n, d in [(5, 0.1), (6, 1.0), (1, 2.0)]:
        for fn in ("fftfreq", "rfftfreq"):
            ours, theirs = getattr(mt.fft, fn)(n, d), getattr(torch.fft, fn)(n, d)
            assert ours.dtype == mt.float32 and ours.tolist() == pytest.approx(theirs.tolist())
    assert mt.fft.fftfreq(4, dtype=mt.float64).dtype == mt.float64


@pytest.mark.parametrize("fn", [
    lambda x: mt.fft.fft(x, n=7), lambda x: mt.fft.ifft(x, norm="ortho"), lambda x: mt.fft.fftn(x, s=(2, 6)),
    lambda x: mt.fft.hfft(x, n=5), lambda x: mt.fft.irfft(x), lambda x: mt.fft.irfftn(x, s=(3, 4), norm="forward"),
])
def test_gradcheck_complex_input(fn):
    assert gradcheck(fn, (t64(data((3, 4), "c")),))
    gradcheck_noncontiguous(fn, [data((3, 4), "c")])


@pytest.mark.parametrize("fn", [
    lambda x: mt.fft.rfft(x), lambda x: mt.fft.rfft(x, n=7, norm="ortho"), lambda x: mt.fft.rfft2(x),
    lambda x: mt.fft.ihfft(x, n=3), lambda x: mt.fft.fft(x), lambda x: mt.fft.irfft(x, n=4),
])
def test_gradcheck_real_input(fn):
    assert gradcheck(fn, (t64(data((3, 4), "r")),))
    gradcheck_noncontiguous(fn, [data((3, 4), "r")])


def test_gradgradcheck():
    assert gradgradcheck(lambda x: mt.fft.irfft(mt.fft.rfft(x) * mt.fft.rfft(x), n=4), (t64(data((2, 4), "r")),))


def test_hand_worked_values():
    # the DFT of [1, 2, 3, 4]: X_0 = 10, X_1 = -2 + 2i, X_2 = -2, X_3 = -2 - 2i
    x = mt.tensor([1.0, 2.0, 3.0, 4.0], dtype=mt.float64)
    assert mt.fft.fft(x).tolist() == [10, -2 + 2j, -2, -2 - 2j]
    assert mt.fft.rfft(x).tolist() == [10, -2 + 2j, -2]
    assert mt.fft.fft(x, norm="forward").tolist() == [2.5, -0.5 + 0.5j, -0.5, -0.5 - 0.5j]
    np.testing.assert_allclose(mt.fft.irfft(mt.fft.rfft(x)).numpy(), [1, 2, 3, 4], rtol=1e-15)
    # irfft's gradient: bins 1 .. n - n//2 - 1 count twice (they stand for their mirror image too)
    z = mt.tensor([1 + 0j, 2 + 1j, 3 + 0j], requires_grad=True)
    mt.fft.irfft(z, n=4).sum().backward()  # Σ_j x_j = Re(z_0) (the inverse DFT summed): only bin 0 matters
    np.testing.assert_allclose(z.grad.numpy(), [1, 0, 0], atol=1e-7)


def test_edge_values_against_the_math():
    x = mt.tensor([np.inf, 0.0, 0.0, 0.0], dtype=mt.float64)
    assert mt.fft.fft(x).tolist() == [complex(np.inf, 0)] * 4  # inf·e^0 in every bin
    assert np.isnan(mt.fft.fft(mt.tensor([np.nan, 1.0], dtype=mt.float64)).numpy()).all()
    assert mt.fft.fft(mt.zeros(5)).tolist() == [0j] * 5
    big = mt.tensor([1e300, 1e300], dtype=mt.float64)
    assert mt.fft.fft(big, norm="forward").tolist() == [1e300, 0]  # scaled as it is summed: no overflow
    assert mt.fft.fft(mt.tensor([1, 2, 3])).dtype == mt.complex64  # integers: the default float dtype


def test_bad_input_is_refused_clearly():
    x = mt.zeros(4)
    with pytest.raises(RuntimeError, match="Invalid normalization mode"):
        mt.fft.fft(x, norm="bogus")
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        mt.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        mt.fft.irfft(mt.zeros(1, dtype=mt.complex64))
    with pytest.raises(RuntimeError, match="expects a real input"):
        mt.fft.rfft(mt.zeros(4, dtype=mt.complex64))
    with pytest.raises(RuntimeError, match="Half"):
        mt.fft.fft(mt.zeros(4, dtype=mt.float16))
    with pytest.raises(RuntimeError, match="unique"):
        mt.fft.fftn(mt.zeros(2, 3), dim=(0, 0))
    with pytest.raises(RuntimeError, match="same length"):
        mt.fft.fftn(mt.zeros(2, 3), s=(2,), dim=(0, 1))
    with pytest.raises(IndexError):
        mt.fft.fft(x, dim=3)
    with pytest.raises(TypeError, match="must be a Tensor"):
        mt.fft.fft([1.0, 2.0])


@settings(max_examples=30, deadline=None)
@given(complex_arrays(max_dims=3, max_side=5))
def test_property_round_trips_and_parseval(a):
    z = mt.tensor(a)
    np.testing.assert_allclose(mt.fft.ifftn(mt.fft.fftn(z)).numpy(), a, rtol=1e-10, atol=1e-12)
    if a.ndim:
        spectrum = mt.fft.fft(z, norm="ortho").numpy()  # unitary: the energy is kept
        np.testing.assert_allclose((np.abs(spectrum) ** 2).sum(), (np.abs(a) ** 2).sum(), rtol=1e-10, atol=1e-12)
        r = mt.tensor(a.real.copy())
        n = a.shape[-1]
        np.testing.assert_allclose(mt.fft.irfft(mt.fft.rfft(r), n=n).numpy(), a.real, rtol=1e-10, atol=1e-12)
