"""torch.stft / torch.istft (ops/stft.py): against PyTorch (values, dtypes, gradients of the signal and the
window), against the DFT written out by hand, the inverse's round trip, float64 gradchecks on non-contiguous
inputs, a Hypothesis property, edge values and PyTorch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

torch = pytest.importorskip("torch")

# (n_fft, hop_length, win_length, center, pad_mode, normalized, onesided, with a window)
CASES = [
    (16, None, None, True, "reflect", False, None, False),
    (16, 3, 12, True, "reflect", False, None, True),
    (15, 4, None, False, "reflect", True, None, True),
    (16, 5, 16, True, "constant", False, False, True),
    (8, 8, 8, True, "replicate", True, True, False),
    (9, 2, 5, True, "circular", False, None, True),
]


def _kw(n_fft, hop, win, center, pad_mode, normalized, onesided):
    return dict(n_fft=n_fft, hop_length=hop, win_length=win, center=center, pad_mode=pad_mode,
                normalized=normalized, onesided=onesided, return_complex=True)


@pytest.fixture(autouse=True)
def _no_rectangular_window_warnings():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="A window was not provided")
        yield


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("batched", [False, True])
def test_stft_matches_torch_values_and_gradients(case, dtype, batched):
    *geometry, with_window = case
    kw = _kw(*geometry)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 40) if batched else (40,)).astype(dtype)
    win = kw["win_length"] or kw["n_fft"]
    if with_window:
        w = (0.5 + rng.random(win)).astype(dtype)
        compare_with_torch(lambda a, b: mt.stft(a, window=b, **kw), lambda a, b: torch.stft(a, window=b, **kw), [x, w])
    else:
        compare_with_torch(lambda a: mt.stft(a, **kw), lambda a: torch.stft(a, **kw), [x])


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_stft_of_a_complex_signal_is_two_sided_as_torch(dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(30) + 1j * rng.standard_normal(30)).astype(dtype)
    w = rng.random(10).astype(np.float64 if dtype == np.complex128 else np.float32)
    kw = dict(n_fft=10, hop_length=3, return_complex=True, center=False)
    compare_with_torch(lambda a, b: mt.stft(a, window=b, **kw), lambda a, b: torch.stft(a, window=b, **kw), [x, w])
    with pytest.raises(RuntimeError, match="onesided output if window or input is complex"):
        mt.stft(mt.tensor(x), 10, onesided=True, return_complex=True)


def test_stft_is_the_windowed_dft_of_each_frame_worked_by_hand():
    # center=False, n_fft=4, hop 2 on x = 0..7: frames [0,1,2,3], [2,3,4,5], [4,5,6,7] (T = 1 + (8-4)//2 = 3);
    # bin 0 of a frame is its windowed sum, bin 2 its alternating sum: with w = [1, 2, 1, 0],
    # frame 0: bin 0 = 0 + 2 + 2 + 0 = 4, bin 2 = 0 - 2 + 2 - 0 = 0;  bin 1 = Σ w x e^{-iπk/2} = 0 - 2i - 2 = -2 - 2i
    x = mt.arange(8.0)
    w = mt.tensor([1.0, 2.0, 1.0, 0.0])
    X = mt.stft(x, 4, hop_length=2, window=w, center=False, return_complex=True).numpy()
    assert X.shape == (3, 3)
    np.testing.assert_allclose(X[:, 0], [4, -2 - 2j, 0], atol=1e-12)
    for m in range(3):  # the same for every frame, from NumPy's DFT of the windowed frame
        np.testing.assert_allclose(X[:, m], np.fft.rfft(np.arange(2 * m, 2 * m + 4) * [1, 2, 1, 0]), atol=1e-12)


@pytest.mark.parametrize("case", CASES[:4])
def test_istft_matches_torch_and_inverts_stft(case):
    *geometry, with_window = case
    kw = _kw(*geometry)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 48))
    win = kw["win_length"] or kw["n_fft"]
    w = (0.5 + rng.random(win)) if with_window else np.ones(win)
    if kw["hop_length"] is not None and kw["hop_length"] > win:
        return
    spec = torch.stft(torch.tensor(x), window=torch.tensor(w), **kw).numpy()
    ikw = {k: v for k, v in kw.items() if k not in ("pad_mode", "return_complex")}
    compare_with_torch(lambda s, b: mt.istft(s, window=b, **ikw), lambda s, b: torch.istft(s, window=b, **ikw),
                       [spec, w])
    back = mt.istft(mt.stft(mt.tensor(x), window=mt.tensor(w), **kw), window=mt.tensor(w), length=48, **ikw)
    if kw["center"]:  # every sample is covered by a frame: the round trip gives the signal back
        np.testing.assert_allclose(back.numpy(), x, atol=1e-10)


def test_istft_length_and_two_sided_and_complex_output_as_torch():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(40)
    w = np.hanning(12) + 0.1
    kw = dict(n_fft=12, hop_length=3, return_complex=True)
    spec = torch.stft(torch.tensor(x), window=torch.tensor(w), onesided=False, **kw).numpy()
    for ikw in (dict(length=30), dict(length=60), dict(onesided=False), dict(return_complex=True, onesided=False)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # length=60 pads with zeros, with PyTorch's warning
            compare_with_torch(lambda s, b, ikw=ikw: mt.istft(s, 12, 3, window=b, **ikw),
                               lambda s, b, ikw=ikw: torch.istft(s, 12, 3, window=b, **ikw), [spec, w])
    with pytest.warns(UserWarning, match="padded with zeros"):
        mt.istft(mt.tensor(spec), 12, 3, window=mt.tensor(w), length=60)


def test_gradcheck_on_non_contiguous_signal_and_window():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal(20), 0.5 + rng.random(6)
    gradcheck_noncontiguous(lambda a, b: mt.view_as_real(mt.stft(a, 8, 3, 6, window=b, return_complex=True)), [x, w])
    spec = np.fft.rfft(rng.standard_normal((6, 8)), axis=-1).T  # (5 bins, 6 frames)
    gradcheck_noncontiguous(lambda s, b: mt.istft(s, 8, 2, window=b, center=False), [spec, 0.5 + rng.random(8)])


@settings(max_examples=25, deadline=None)
@given(n_fft=st.integers(2, 12), hop=st.integers(1, 6), length=st.integers(12, 40), seed=st.integers(0, 2**16))
def test_round_trip_property(n_fft, hop, length, seed):
    # with a window whose squared overlap-add never vanishes (hop <= n_fft = win_length), istft(stft(x)) is x
    # on every sample a frame covers, and zeros after them (PyTorch's too, with its warning)
    hop = min(hop, n_fft)
    x = np.random.default_rng(seed).standard_normal(length)
    w = 0.5 + np.random.default_rng(seed + 1).random(n_fft)
    if n_fft // 2 >= length:  # reflect padding needs n_fft // 2 < length, as PyTorch's
        return
    X = mt.stft(mt.tensor(x), n_fft, hop, window=mt.tensor(w), return_complex=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # frames that stop short of the end: "padded with zeros"
        y = mt.istft(X, n_fft, hop, window=mt.tensor(w), length=length).numpy()
        y_t = torch.istft(torch.stft(torch.tensor(x), n_fft, hop, window=torch.tensor(w), return_complex=True),
                          n_fft, hop, window=torch.tensor(w), length=length).numpy()
    covered = min(length, (X.shape[-1] - 1) * hop + n_fft - n_fft // 2)
    np.testing.assert_allclose(y[:covered], x[:covered], atol=1e-9)
    np.testing.assert_array_equal(y[covered:], 0.0)
    np.testing.assert_allclose(y, y_t, atol=1e-10)


def test_edge_values_follow_the_dft():
    # a NaN sample spoils exactly the frames (all their bins) that contain it; inf likewise; float16 refused as fft
    x = np.zeros(16)
    x[10] = np.nan
    X = mt.stft(mt.tensor(x), 4, 4, center=False, window=mt.ones(4, dtype=mt.float64), return_complex=True).numpy()
    assert np.isnan(X[:, 2]).all() and np.isfinite(X[:, [0, 1, 3]]).all()
    big = np.full(8, 1e300)
    Xb = mt.stft(mt.tensor(big), 8, center=False, window=mt.ones(8, dtype=mt.float64), return_complex=True).numpy()
    np.testing.assert_allclose(Xb[0, 0], 8e300)  # the sum of eight 1e300
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):  # PyTorch: "MKL FFT doesn't support ... Half"
        mt.stft(mt.zeros(16, dtype=mt.float16), 4, return_complex=True)
    # zeros: every bin of every frame is exactly 0; a constant c: bin 0 is n_fft · c, the others 0 (up to rounding)
    Z = mt.stft(mt.zeros(20, dtype=mt.float64), 8, 4, window=mt.ones(8, dtype=mt.float64), center=False,
                return_complex=True).numpy()
    np.testing.assert_array_equal(Z, 0)
    C = mt.stft(mt.full((20,), 3.0, dtype=mt.float64), 8, 4, window=mt.ones(8, dtype=mt.float64), center=False,
                return_complex=True).numpy()
    np.testing.assert_allclose(C[0], 24.0)
    np.testing.assert_allclose(C[1:], 0.0, atol=1e-13)


def test_bad_input_is_refused_as_torch():
    x = mt.randn(32)
    with pytest.raises(RuntimeError, match="return_complex parameter be given for real inputs"):
        mt.stft(x, 8)
    with pytest.raises(RuntimeError, match="expected a 1D or 2D tensor"):
        mt.stft(mt.randn(2, 2, 32), 8, return_complex=True)
    with pytest.raises(TypeError, match="n_fft to be an int"):  # PyTorch's argument parser: TypeError
        mt.stft(x, 8.0, return_complex=True)
    with pytest.raises(RuntimeError, match="expected 0 < n_fft"):
        mt.stft(x, 64, center=False, return_complex=True)
    with pytest.raises(RuntimeError, match="win_length"):
        mt.stft(x, 8, win_length=9, return_complex=True)
    with pytest.raises(RuntimeError, match="hop_length > 0"):
        mt.stft(x, 8, hop_length=0, return_complex=True)
    with pytest.raises(RuntimeError, match="window tensor of size equal to win_length=8"):
        mt.stft(x, 8, window=mt.ones(7), return_complex=True)
    with pytest.raises(RuntimeError, match="floating point or complex"):
        mt.stft(mt.arange(32), 8, return_complex=True)
    with pytest.raises(RuntimeError, match="pad_mode"):
        mt.stft(x, 8, pad_mode="wrap", return_complex=True)
    with pytest.raises(RuntimeError, match="align_to_window"):
        mt.stft(x, 8, return_complex=True, align_to_window=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        r = mt.stft(x, 8, window=mt.ones(8), return_complex=False)
    assert tuple(r.shape) == (5, 17, 2)  # view_as_real of (5 bins, 1 + (32 + 8 - 8) // 2 = 17 frames)
    spec = mt.stft(x, 8, window=mt.ones(8), return_complex=True)
    with pytest.raises(RuntimeError, match="complex-valued input"):
        mt.istft(spec.real, 8)
    with pytest.raises(RuntimeError, match="n_fft / 2 \\+ 1 when onesided=True"):
        mt.istft(spec, 10, window=mt.ones(10))
    with pytest.raises(RuntimeError, match="hop_length <= win_length"):
        mt.istft(spec, 8, hop_length=9)
    with pytest.raises(RuntimeError, match="overlap add min"):  # zeros at the window's ends, hop = n_fft: NOLA fails
        mt.istft(spec, 8, hop_length=8, window=mt.tensor([0.0, 1, 1, 1, 1, 1, 1, 0]), center=False)
    with pytest.raises(RuntimeError, match="cannot have onesided output"):
        mt.istft(spec, 8, window=mt.ones(8), return_complex=True)


def test_tensor_methods_and_torch_alias():
    x = mt.randn(2, 32)
    w = mt.ones(8)
    np.testing.assert_array_equal(x.stft(8, window=w, return_complex=True).numpy(),
                                  mt.stft(x, 8, window=w, return_complex=True).numpy())
    spec = x.stft(8, window=w, return_complex=True)
    np.testing.assert_allclose(spec.istft(8, window=w, length=32).numpy(), x.numpy(), atol=1e-5)


def test_istft_with_a_complex_window_squares_it_as_torch():
    # the envelope is the overlap-add of w² (not |w|²) for a complex window: the op database's samples 7 and 8
    # differed (by about 2 on values of scale 2) before
    rng = np.random.default_rng(5)
    spec = rng.standard_normal((10, 6)) + 1j * rng.standard_normal((10, 6))
    w = 0.5 + rng.random(10) + 1j * rng.random(10)
    kw = dict(n_fft=10, center=True, return_complex=True, onesided=False)
    compare_with_torch(lambda s, b: mt.istft(s, window=b, **kw), lambda s, b: torch.istft(s, window=b, **kw), [spec, w])


def test_a_view_changed_in_place_after_stft_is_caught_by_backward():
    # center=False: the window's gradient reads strided frames of the input view itself, so writing into the
    # viewed tensor afterwards must make the backward refuse (version counter), never use the changed values.
    # center=True: the frames are of the padded copy made in the forward, so the gradient is still the one of
    # the forward's values (PyTorch refuses there too, because its reflection pad keeps its input for the shape)
    rng = np.random.default_rng(6)
    sig, win = rng.standard_normal(40), np.hanning(8) + 0.1
    up = rng.standard_normal((5, 11)) + 1j * rng.standard_normal((5, 11))

    def window_grad(center, change):
        y = mt.tensor(sig, requires_grad=True) * 1.0
        w = mt.tensor(win, requires_grad=True)
        X = mt.stft(y[::2], 8, 2, window=w, center=center, return_complex=True)
        if change:
            y.mul_(2.0)
        (X * mt.tensor(up[:, : X.shape[1]])).real.sum().backward()
        return w.grad.numpy()

    np.testing.assert_array_equal(window_grad(True, True), window_grad(True, False))
    window_grad(False, False)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        window_grad(False, True)
