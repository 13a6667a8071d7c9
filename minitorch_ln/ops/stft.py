"""The short-time Fourier transform and its inverse: ``torch.stft`` and ``torch.istft``.

Both are compositions of differentiable ops (padding, strided frames, the FFTs of ``ops/spectral.py``,
``fold`` for the overlap-add), so their gradients are those ops' gradients; nothing here has a backward of
its own. The steps and their order are PyTorch's (``torch/functional.py`` and ``aten/src/ATen/native/
SpectralOps.cpp``, described here in our own words), with the usual definition (Allen 1977; Griffin & Lim
1984 for the inverse's windowed overlap-add).

``stft(x, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided, return_complex)``,
``x`` of shape ``(L,)`` or ``(B, L)``:

1. ``center``: ``x`` is padded by ``n_fft // 2`` on both sides with ``pad_mode`` (``"reflect"`` by default);
2. the window (``ones(win_length)`` when none is given) is zero-padded on both sides to ``n_fft`` (the left
   pad ``(n_fft - win_length) // 2``); without a window and with ``win_length == n_fft`` nothing multiplies;
3. frames ``m = 0 .. T-1``, ``T = 1 + (L' - n_fft) // hop_length``, start at ``m · hop_length``:
   ``X[ω, m] = Σ_k w[k] · x[m · hop + k] · e^{-2πi ω k / n_fft}``, the DFT of each windowed frame;
4. ``onesided`` (the default for a real input and window) keeps bins ``0 .. n_fft // 2``; ``normalized``
   multiplies by ``1/√n_fft``;
5. the result is ``(n_fft // 2 + 1 or n_fft, T)`` or ``(B, ·, T)``, complex (``return_complex=False`` gives
   its ``view_as_real``, with PyTorch's deprecation warning; a real input must say which).

``istft`` inverts it: each frame's inverse DFT (``irfft`` of the one-sided bins, ``ifft`` for
``return_complex=True``) times the window, added where the frames overlap (``fold``), divided by the
overlap-add of the squared window (the envelope, ``w²`` also for a complex window, as PyTorch's), then the ``center`` padding trimmed (or ``length`` samples
kept, zero-padded with PyTorch's warning when the frames give fewer). Where the envelope is below ``1e-11``
the division is not defined (the window fails the NOLA condition) and a RuntimeError says so instead of
returning inf.

Errors (RuntimeError, as PyTorch's): a tensor that is not 1-D/2-D (``stft``) or 2-D/3-D (``istft``),
``n_fft``, ``hop_length``, ``win_length`` out of range, a window of the wrong size, integer input, a
real input to ``istft``, a one-sided output of a complex input, a frequency dimension that does not match
``n_fft``.
"""

from __future__ import annotations

import warnings

from .. import backend
from ..errors import DtypeError, OptionError, ShapeError
from ..tensor import Tensor
from .complex_parts import view_as_real
from .fold import fold
from .padding import pad
from .spectral import c2c, c2r, r2c
from .strided_views import unfold_windows

__all__ = ["istft", "stft"]


def _is_complex(t) -> bool:
    return t is not None and t.dtype.kind == "c"


def _int_arg(name: str, value, op: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):  # TypeError, as PyTorch's argument parser
        raise TypeError(f"{op}: expected {name} to be an int, got {type(value).__name__}")
    return value


def _window_n_fft(window, win_length: int, n_fft: int, like: Tensor, op: str):
    """The window zero-padded (centred) to ``n_fft`` points, or None for no window at all."""
    if window is not None:
        if not isinstance(window, Tensor):
            raise TypeError(f"{op}: expected window to be a Tensor or None, got {type(window).__name__}")
        if window.ndim != 1 or window.shape[0] != win_length:
            raise ShapeError(f"{op}: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                             f"window with size {list(window.shape)}")
        if window.device != like.device:
            raise backend.DeviceError(f"{op}: input and window must be on the same device, got {like.device} and "
                                      f"{window.device}")
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    if window is None:  # a rectangle of win_length ones in the middle of n_fft points
        from .creation import ones

        window = ones(win_length, dtype=like.dtype if like.dtype.kind == "f" else None, device=like.device)
    return pad(window, (left, n_fft - win_length - left))


def _check_lengths(n_fft, hop_length, win_length, op: str):
    n_fft = _int_arg("n_fft", n_fft, op)
    hop_length = n_fft // 4 if hop_length is None else _int_arg("hop_length", hop_length, op)
    win_length = n_fft if win_length is None else _int_arg("win_length", win_length, op)
    if n_fft <= 0:
        raise OptionError(f"{op}: expected n_fft > 0, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise OptionError(f"{op}: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise OptionError(f"{op}: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    return n_fft, hop_length, win_length


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None,
         align_to_window: bool | None = None) -> Tensor:
    """Short-time Fourier transform of ``input`` ``(L,)`` or ``(B, L)`` (float or complex): complex
    ``(F, T)`` / ``(B, F, T)`` with ``F = n_fft // 2 + 1`` (one-sided) or ``n_fft``, ``T = 1 + (L' - n_fft) //
    hop_length`` frames (``L' = L + 2 · (n_fft // 2)`` when ``center``). Defaults as PyTorch's: ``hop_length =
    n_fft // 4``, ``win_length = n_fft``, a rectangular window. See the module docstring for the steps and
    errors. ``align_to_window=True`` is refused (not implemented here); None/False is PyTorch's default.
    """
    op = "stft"
    if not isinstance(input, Tensor):
        raise TypeError(f"stft: expected input to be a Tensor, got {type(input).__name__}")
    if not (backend.is_floating(input.dtype) or input.dtype.kind == "c"):
        raise DtypeError(f"stft: expected a tensor of floating point or complex values, got {input.dtype}")
    if input.ndim not in (1, 2):
        raise ShapeError(f"stft: expected a 1D or 2D tensor, but got a {input.ndim}D tensor of shape "
                         f"{list(input.shape)}")
    complex_in = _is_complex(input) or _is_complex(window)
    if return_complex is None and not complex_in:
        raise OptionError("stft requires the return_complex parameter be given for real inputs, and will further "
                          "require that return_complex=True in a future PyTorch release.")
    if align_to_window:
        if center:
            raise OptionError("stft: align_to_window should only be set when center = false")
        raise OptionError("stft: align_to_window=True is not supported by minitorch_ln (use center=False without it)")
    n_fft, hop_length, win_length = _check_lengths(n_fft, hop_length, win_length, op)
    onesided = (not complex_in) if onesided is None else bool(onesided)
    if onesided and complex_in:
        raise OptionError("stft: cannot have onesided output if window or input is complex")
    x = input
    if center:
        half = n_fft // 2
        if pad_mode not in ("reflect", "constant", "replicate", "circular"):
            raise OptionError(f"stft: pad_mode must be 'reflect', 'constant', 'replicate' or 'circular', got "
                              f"{pad_mode!r}")
        # F.pad's non-constant modes want a batch and a channel dim: (1, 1, L) or (1, B, L)
        x3 = x.reshape((1,) * (3 - x.ndim) + tuple(x.shape))
        x = pad(x3, (half, half), mode=pad_mode).reshape(tuple(input.shape[:-1]) + (-1,))
    length = x.shape[-1]
    if n_fft > length:
        raise OptionError(f"stft: expected 0 < n_fft <= {length} (the signal's length"
                          f"{' after padding' if center else ''}), but got n_fft={n_fft}")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied, which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage. To suppress this warning and use a rectangular "
                      "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    w = _window_n_fft(window, win_length, n_fft, x, op)
    frames = unfold_windows(x, -1, n_fft, hop_length)  # (B?, T, n_fft): a strided view
    if w is not None:
        frames = frames * w
    norm = "ortho" if normalized else "backward"
    if onesided:
        out = r2c(frames, None, [-1], norm, "stft", default_all=False)
    else:
        out = c2c(frames, None, [-1], norm, False, "stft", default_all=False)
    out = out.transpose(-1, -2)  # (B?, F, T)
    if return_complex is False:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)
        return view_as_real(out)
    return out


def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False,
          onesided: bool | None = None, length: int | None = None, return_complex: bool = False) -> Tensor:
    """Inverse of :func:`stft`: ``input`` complex ``(F, T)`` or ``(B, F, T)`` to a signal ``(L,)`` /
    ``(B, L)``, real unless ``return_complex``. ``L = n_fft + hop_length · (T - 1)`` less the ``center``
    padding, or ``length``. Raises RuntimeError where the window's squared overlap-add is below 1e-11 over the
    kept samples (not invertible there) and for the bad inputs listed in the module docstring.
    """
    op = "istft"
    if not isinstance(input, Tensor):
        raise TypeError(f"istft: expected input to be a Tensor, got {type(input).__name__}")
    if input.dtype.kind != "c":
        raise DtypeError("istft requires a complex-valued input tensor matching the output from stft with "
                         f"return_complex=True, got {input.dtype}")
    if input.ndim not in (2, 3):
        raise ShapeError(f"istft: expected a tensor with 2 or 3 dimensions of complex values, got a {input.ndim}D "
                         f"tensor of shape {list(input.shape)}")
    n_fft, hop_length, win_length = _check_lengths(n_fft, hop_length, win_length, op)
    if hop_length > win_length:
        raise OptionError(f"istft: expected 0 < hop_length <= win_length, but got hop_length={hop_length} and "
                          f"win_length={win_length}")
    batched = input.ndim == 3
    spec = input if batched else input.reshape((1,) + tuple(input.shape))  # (B, F, T)
    n_bins, n_frames = spec.shape[1], spec.shape[2]
    if n_frames < 1:
        raise ShapeError("istft: expected at least one frame (the last dimension of the input), got 0")
    onesided = (n_bins != n_fft) if onesided is None else bool(onesided)
    if onesided and n_bins != n_fft // 2 + 1:
        raise ShapeError(f"istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                         f"n_fft / 2 + 1 when onesided=True, but got {n_bins}")
    if not onesided and n_bins != n_fft:
        raise ShapeError(f"istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                         f"n_fft when onesided=False, but got {n_bins}")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied. Please provide the same "
                      "window used by stft to make the inversion lossless. To suppress this warning and use a "
                      "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning,
                      stacklevel=2)
    w = _window_n_fft(window, win_length, n_fft, spec, op)
    norm = "ortho" if normalized else "backward"
    frames = spec.transpose(1, 2)  # (B, T, F)
    if return_complex:
        if onesided:
            raise OptionError("istft: cannot have onesided output if window or input is complex")
        frames = c2c(frames, None, [-1], norm, True, "istft", default_all=False)
    else:
        if _is_complex(w):
            raise DtypeError("istft: complex windows are incompatible with return_complex=False")
        if not onesided:  # a two-sided spectrum of a real signal: its first half is all irfft reads
            frames = frames[..., : n_fft // 2 + 1]
        frames = c2r(frames, [n_fft], [-1], norm, "istft", default_all=False)  # (B, T, n_fft)
    if w is not None:
        frames = frames * w
    expected = n_fft + hop_length * (n_frames - 1)
    # overlap-add: frame m's samples land at m · hop .. m · hop + n_fft - 1 (fold of (B, n_fft, T))
    y = fold(frames.transpose(1, 2), (1, expected), (1, n_fft), stride=(1, hop_length)).reshape(
        (spec.shape[0], expected))
    from .creation import ones

    win = ones(n_fft, dtype=y.dtype if y.dtype.kind == "f" else None, device=y.device) if w is None else w
    sq = win * win  # PyTorch's envelope squares the window as it is: w², not |w|², for a complex window
    envelope = fold(sq.reshape((1, n_fft, 1)).expand((1, n_fft, n_frames)), (1, expected), (1, n_fft),
                    stride=(1, hop_length)).reshape((1, expected))
    start = n_fft // 2 if center else 0
    if length is not None:
        length = _int_arg("length", length, op)
        if length < 0:
            raise OptionError(f"istft: expected length >= 0, got {length}")
        end = start + length
    else:
        end = expected - n_fft // 2 if center else expected
    stop = min(end, expected)
    y, envelope = y[:, start:stop], envelope[:, start:stop]
    if envelope.shape[1] > 0:
        low = float(abs(envelope.detach()).min().item())
        if low < 1e-11:
            raise OptionError(f"istft: window overlap add min: {low:g} (below 1e-11): the window and hop_length do "
                              "not satisfy the NOLA condition, so the signal cannot be recovered there")
    y = y / envelope
    if end > expected:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=2)
        y = pad(y, (0, end - expected))
    return y if batched else y.reshape(tuple(y.shape[1:]))
