"""The compiled GELU loops (``kernels/cpu_activation.py``) against their readable NumPy twin and the math.

``tests/test_kernels_activation.py`` runs the GELU kernel tests on both CPU implementations (the
``cpu_kernels`` fixture). Here: the compiled loop equals the ``xp`` form to a few ulp on any shape,
layout and float16/float32 input; both are within A&S 7.1.26's error of SciPy's exact ``ndtr``,
in the tails too; the edge values (±inf, NaN, ±0, huge, tiny) give the mathematical limits in both;
the tanh approximation likewise against its float64 formula; the hand-written ``exp`` is within
1 ulp; threads and blocks change no bit; and the dispatch takes the compiled loop exactly where it
applies.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit, ndtr

from minitorch_ln import kernels
from minitorch_ln.kernels import gelu_dispatch
from minitorch_ln.kernels import _threads
from minitorch_ln.kernels import activation as xp_gelu

cpu = pytest.importorskip("minitorch_ln.kernels.cpu_activation")
if not cpu.AVAILABLE:  # pragma: no cover
    pytest.skip("Numba is not installed", allow_module_level=True)
import numba  # noqa: E402

EPS32 = float(np.finfo(np.float32).eps)


def reference(x, dy):
    """GELU and ``dy · GELU'`` in float64 (SciPy's ndtr), with the limits at ±inf."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        cdf = ndtr(x)
        xpdf = np.where(np.isinf(x), 0.0, x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))
        y = np.where(np.isneginf(x), -0.0, x * cdf)
    return y, dy * (cdf + xpdf)


def reference_tanh(x, dy):
    """The tanh approximation and ``dy · d/dx`` in float64, with the limits at ±inf. ``½ (1 ± tanh u)``
    are taken as ``expit(±2u)``: ``1 + tanh(u)`` would cancel for ``u < -18`` even in float64."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        xc = np.clip(x, -1e4, 1e4)
        u = math.sqrt(2.0 / math.pi) * (xc + 0.044715 * xc**3)
        s, c = expit(2.0 * u), expit(-2.0 * u)                 # ½ (1 + tanh u), ½ (1 - tanh u)
        y = np.where(np.isneginf(x), -0.0, np.where(np.isposinf(x), np.inf, x * s))
        d = s + 2.0 * xc * s * c * math.sqrt(2.0 / math.pi) * (1.0 + 3 * 0.044715 * xc * xc)
    return y, dy * d


def both(x, dy, approximate="none"):
    """``((y, dx) compiled, (y, dx) xp)``."""
    with np.errstate(invalid="ignore", over="ignore"):
        return ((cpu.gelu_fwd(x, approximate), cpu.gelu_bwd(dy, x, approximate)),
                (xp_gelu.gelu_fwd(x, approximate), xp_gelu.gelu_bwd(dy, x, approximate)))


def assert_close_ulps(a, b, scale, ulps):
    """``|a - b| <= ulps · eps32 · scale`` elementwise, NaN where both are NaN."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    assert np.array_equal(np.isnan(a64), np.isnan(b64))
    ok = ~np.isnan(a64)
    diff = np.where(a64[ok] == b64[ok], 0.0, np.abs(a64[ok] - b64[ok]))  # inf == inf: no inf - inf
    bound = ulps * EPS32 * scale[ok]
    worst = np.argmax(diff - bound)
    assert np.all(diff <= bound), f"difference {diff[worst]:.3g} > {bound[worst]:.3g}"


WIDE = np.concatenate([np.linspace(-20, 20, 200_001), -np.geomspace(1e-38, 20, 20_001),
                       np.geomspace(1e-38, 20, 20_001)]).astype(np.float32)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_compiled_equals_xp_over_a_wide_range(approximate, rng):
    dy = rng.standard_normal(WIDE.shape).astype(np.float32)
    (y_c, dx_c), (y_x, dx_x) = both(WIDE, dy, approximate)
    assert y_c.dtype == dx_c.dtype == np.float32
    # the two differ only through their exp (each within 1 ulp): a few ulp of max(1, |y|) ...
    assert_close_ulps(y_c, y_x, np.maximum(1.0, np.abs(y_x.astype(np.float64))), 2)
    assert_close_ulps(dx_c, dx_x, np.maximum(1.0, np.abs(dy.astype(np.float64))), 4)
    # ... and, in the left tail down to float32's normal numbers, relatively too
    normal = np.abs(y_x) > 1e-36
    np.testing.assert_allclose(y_c[normal], y_x[normal], rtol=1e-6, atol=0)


@pytest.mark.parametrize("form", ["compiled", "xp"])
def test_both_forms_against_exact_math(form, rng):
    dy = rng.standard_normal(WIDE.shape).astype(np.float32)
    (y_c, dx_c), (y_x, dx_x) = both(WIDE, dy)
    y, dx = (y_c, dx_c) if form == "compiled" else (y_x, dx_x)
    y_ref, dx_ref = reference(WIDE, dy)
    # A&S 7.1.26: |error of erf| < 1.5e-7, so |error of Φ| < 7.5e-8, plus float32 rounding
    assert np.max(np.abs(y - y_ref) / np.maximum(1.0, np.abs(y_ref))) < 2.5e-7
    assert np.max(np.abs(dx - dx_ref) / np.maximum(1.0, np.abs(dy))) < 4e-7
    # Φ = ½ erfc(|z|) for x < 0, never 1 - (1 - ...): a relative error in the left tail
    for lo, rtol in ((-5.0, 2e-3), (-9.0, 2e-2)):
        tail = (WIDE < -1.0) & (WIDE > lo)
        np.testing.assert_allclose(y[tail], y_ref[tail], rtol=rtol, atol=0)


@pytest.mark.parametrize("form", ["compiled", "xp"])
def test_tanh_approximation_against_its_float64_formula(form, rng):
    dy = rng.standard_normal(WIDE.shape).astype(np.float32)
    (y_c, dx_c), (y_x, dx_x) = both(WIDE, dy, "tanh")
    y, dx = (y_c, dx_c) if form == "compiled" else (y_x, dx_x)
    y_ref, dx_ref = reference_tanh(WIDE, dy)
    assert np.max(np.abs(y - y_ref) / np.maximum(1.0, np.abs(y_ref))) < 3e-7
    assert np.max(np.abs(dx - dx_ref) / np.maximum(1.0, np.abs(dy))) < 6e-7
    # ½ (1 + tanh u) is the sigmoid of 2u, not 1 + (-0.99...): relative precision in the left tail
    tail = (WIDE < -1.0) & (np.abs(y_ref) > 1e-30)
    np.testing.assert_allclose(y[tail], y_ref[tail], rtol=2e-5, atol=0)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_edge_values_give_the_limits_in_both_forms(approximate):
    f32 = np.finfo(np.float32)
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, f32.tiny, -f32.tiny, 1e-45, -1e-45, f32.max, -f32.max,
                  1e19, -1e19, 1e4, -1e4, 1.5e4, -1.5e4, 13.0, -13.0, 14.0, -14.0], dtype=np.float32)
    dy = np.full_like(x, 2.0)
    y_ref, dx_ref = (reference if approximate == "none" else reference_tanh)(x, dy)
    for y, dx in both(x, dy, approximate):
        assert np.isnan(y[2]) and np.isnan(dx[2])
        keep = ~np.isnan(x)
        np.testing.assert_allclose(y[keep], y_ref[keep], rtol=2e-6, atol=1e-37)
        np.testing.assert_allclose(dx[keep], dx_ref[keep], rtol=2e-6, atol=1e-37)
        assert y[0] == np.inf and y[1] == 0.0 and dx[0] == 2.0 and dx[1] == 0.0  # the limits, not NaN
        assert y[10] == 0.0 and y[9] == f32.max                                   # no overflow to NaN
        assert np.all(dx[3:9] == 1.0)                                              # GELU'(0) = ½


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_float16_and_float32_keep_their_dtype_and_agree(dtype, approximate, rng):
    x = (rng.standard_normal((37, 41)) * 4).astype(dtype)
    dy = rng.standard_normal(x.shape).astype(dtype)
    (y_c, dx_c), (y_x, dx_x) = both(x, dy, approximate)
    assert y_c.dtype == dx_c.dtype == dtype and y_c.shape == dx_c.shape == x.shape
    if dtype == np.float16:  # computed in float32 by both, then rounded: at most one float16 step apart
        np.testing.assert_allclose(y_c.astype(np.float32), y_x.astype(np.float32), rtol=1e-3, atol=1e-7)
        np.testing.assert_allclose(dx_c.astype(np.float32), dx_x.astype(np.float32), rtol=1e-3, atol=1e-7)
    else:
        np.testing.assert_allclose(y_c, y_x, rtol=1e-6, atol=3e-7)
        np.testing.assert_allclose(dx_c, dx_x, rtol=1e-6, atol=5e-7)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=0, max_size=4), st.booleans(), st.sampled_from([1, 2]),
       st.sampled_from(["none", "tanh"]), st.integers(0, 2**31 - 1))
def test_any_shape_and_layout(shape, transpose, step, approximate, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal([n * step for n in shape]) * 3).astype(np.float32)
    x = x[tuple(slice(None, None, step) for _ in shape)]           # strided view
    if transpose:
        x = x.T
    dy = rng.standard_normal(x.shape).astype(np.float32)
    x0 = x.copy()
    (y_c, dx_c), (y_x, dx_x) = both(x, dy, approximate)
    assert y_c.shape == dx_c.shape == x.shape
    np.testing.assert_allclose(y_c, y_x, rtol=1e-6, atol=3e-7)
    np.testing.assert_allclose(dx_c, dx_x, rtol=1e-6, atol=5e-7)
    np.testing.assert_array_equal(x, x0)


def test_threads_and_blocks_change_no_bit(rng, monkeypatch, thread_any_size):
    x = (rng.standard_normal(300_001) * 3).astype(np.float32)  # several blocks, an odd tail
    dy = rng.standard_normal(x.shape).astype(np.float32)
    threads = kernels.get_num_threads()
    try:
        kernels.set_num_threads(1)
        one = cpu.gelu_fwd(x), cpu.gelu_bwd(dy, x), cpu.gelu_fwd(x, "tanh"), cpu.gelu_bwd(dy, x, "tanh")
        monkeypatch.setattr(_threads, "BLOCK_ELEMENTS", 4096)
        kernels.set_num_threads(3)
        many = cpu.gelu_fwd(x), cpu.gelu_bwd(dy, x), cpu.gelu_fwd(x, "tanh"), cpu.gelu_bwd(dy, x, "tanh")
    finally:
        kernels.set_num_threads(threads)
    for a, b in zip(one, many):
        np.testing.assert_array_equal(a, b)


@numba.njit
def _exp_all(v, out):
    for i in range(v.size):
        out[i] = cpu._exp_neg(v[i])


def test_exp_within_one_ulp_and_flushes_below_the_normal_range():
    v = np.concatenate([-np.geomspace(1e-30, 87.3, 200_001), np.linspace(-87.3, 0.0, 200_001)]).astype(np.float32)
    out = np.empty_like(v)
    _exp_all(v, out)
    exact = np.exp(v.astype(np.float64))
    assert np.max(np.abs(out - exact) / exact) <= EPS32  # 1 ulp of the result (eps = 2 · 2^-24)
    special = np.array([0.0, -0.0, -87.34, -88.0, -1e30, -np.inf, np.nan], dtype=np.float32)
    out = np.empty_like(special)
    _exp_all(special, out)
    assert out[0] == 1.0 and out[1] == 1.0 and np.all(out[3:6] == 0.0) and np.isnan(out[6])
    assert 0.0 <= out[2] < 1.2e-38


def test_dispatch_takes_the_compiled_loop_exactly_where_it_applies(rng, monkeypatch):
    x32 = rng.standard_normal((3, 4)).astype(np.float32)
    calls = []
    loop = cpu._gelu_fwd_loop
    monkeypatch.setattr(cpu, "_gelu_fwd_loop", lambda *a: (calls.append(a[0].dtype), loop(*a)))
    before = kernels.get_cpu_kernels()
    try:
        kernels.set_cpu_kernels("numba")
        assert gelu_dispatch.gelu_fwd_for(x32) is cpu.gelu_fwd and gelu_dispatch.gelu_bwd_for(x32) is cpu.gelu_bwd
        np.testing.assert_array_equal(kernels.gelu_fwd(x32), cpu.gelu_fwd(x32))
        kernels.gelu_fwd(x32.astype(np.float16))
        assert calls == [np.float32] * 3                       # float16 is computed in float32
        for approximate in ("none", "tanh"):                  # float64 is handed to the xp form
            x64 = x32.astype(np.float64)
            np.testing.assert_array_equal(kernels.gelu_fwd(x64, approximate), xp_gelu.gelu_fwd(x64, approximate))
            np.testing.assert_array_equal(kernels.gelu_bwd(x64, x64, approximate), xp_gelu.gelu_bwd(x64, x64, approximate))
        assert len(calls) == 3
        np.testing.assert_array_equal(kernels.gelu_fwd(x32, "tanh"), cpu.gelu_fwd(x32, "tanh"))  # compiled
        kernels.set_cpu_kernels("numpy")
        assert gelu_dispatch.gelu_fwd_for(x32) is xp_gelu.gelu_fwd
        kernels.gelu_fwd(x32)
        assert len(calls) == 3
    finally:
        kernels.set_cpu_kernels(before)


def test_float64_is_exact_in_the_tails():
    x = np.array([-30.0, -20.0, -10.0, -5.0, 5.0, 10.0])
    dy = np.random.default_rng(0).standard_normal(x.shape)  # a random upstream gradient
    y_ref, dx_ref = reference(x, dy)
    np.testing.assert_allclose(kernels.gelu_fwd(x), y_ref, rtol=1e-14, atol=0)
    np.testing.assert_allclose(kernels.gelu_bwd(dy, x), dx_ref, rtol=1e-13, atol=0)
