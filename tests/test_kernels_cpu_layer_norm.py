"""The compiled CPU LayerNorm kernels (``kernels/cpu_layer_norm.py``) against the NumPy kernels, and the switch.

Every test of ``test_kernels_layer_norm.py`` and ``test_normalization.py`` already runs on both CPU
implementations (the ``cpu_kernels`` fixture). Here: the two agree with each other on any shape,
the compiled loops really run, float16 and empty or odd-layout inputs take the right path, NaN
stays in its row, and ``set_cpu_kernels`` and ``MINITORCH_LN_CPU_KERNELS`` choose as documented.
"""

import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitorch_ln import kernels
from minitorch_ln.kernels import choice, layer_norm_dispatch
from minitorch_ln.kernels import batch_norm as numpy_bn
from minitorch_ln.kernels import layer_norm as numpy_kernels
from minitorch_ln.kernels import rms_norm as numpy_rms

cpu = pytest.importorskip("minitorch_ln.kernels.cpu_layer_norm")
if not cpu.AVAILABLE:  # pragma: no cover
    pytest.skip("Numba is not installed", allow_module_level=True)
from minitorch_ln.kernels import _numba, cpu_batch_norm as cpu_bn  # noqa: E402


def _both(x, w, b, dy, eps=1e-5):
    """``(compiled, numpy)``: each a tuple ``(y, mean, rstd, dx, dweight, dbias)``."""
    out = []
    for impl in (cpu, numpy_kernels):
        y, mean, rstd = impl.layer_norm_fwd(x, w, b, eps)
        out.append((y, mean, rstd, *impl.layer_norm_bwd(dy, x, w, mean, rstd)))
    return out


@given(st.integers(0, 40), st.integers(1, 70), st.sampled_from([np.float32, np.float64]), st.booleans(),
       st.floats(-100, 100), st.floats(1e-3, 1e3), st.integers(0, 2**31 - 1))
def test_compiled_equals_numpy_kernels(N, D, dtype, affine, loc, scale, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((N, D)) * scale + loc).astype(dtype)
    w = rng.standard_normal(D).astype(dtype) if affine else None
    b = rng.standard_normal(D).astype(dtype) if affine else None
    dy = rng.standard_normal((N, D)).astype(dtype)
    compiled, reference = _both(x, w, b, dy)
    # The same formulas, summed in a different order: they differ by rounding, i.e. by a few units
    # of the dtype's epsilon relative to each output's scale (dx scales with rstd · |dy| · |γ|;
    # dγ and dβ are sums over N rows).
    eps = np.finfo(dtype).eps
    for name, c, r in zip(("y", "mean", "rstd", "dx", "dweight", "dbias"), compiled, reference):
        if r is None:
            assert c is None, name
            continue
        assert c.shape == r.shape and c.dtype == r.dtype, name
        scale_r = 1.0 + float(np.abs(r.astype(np.float64)).max(initial=0.0))
        np.testing.assert_allclose(c, r, rtol=0, atol=64 * D * eps * scale_r, err_msg=name)


@given(st.integers(1, 30), st.integers(1, 70), st.integers(1, 6), st.sampled_from([np.float32, np.float64]),
       st.booleans(), st.floats(-100, 100), st.floats(1e-3, 1e3), st.integers(0, 2**31 - 1))
def test_compiled_rms_norm_and_batch_norm_equal_numpy_kernels(R, D, L, dtype, affine, loc, scale, seed):
    # RMSNorm on rows (R, D); BatchNorm on (N, C, L) = (R, D, L), R·L values per channel (the
    # NumPy kernels transpose to channel rows, the compiled ones read in place). Tolerances as above.
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((R, D)) * scale + loc).astype(dtype)
    dy = rng.standard_normal((R, D)).astype(dtype)
    x3 = (rng.standard_normal((R, D, L)) * scale + loc).astype(dtype)
    dy3 = rng.standard_normal((R, D, L)).astype(dtype)
    if R * L < 2:
        x3, dy3 = np.concatenate([x3, x3 + 1]), np.concatenate([dy3, dy3])  # training needs 2 values a channel
    eps = np.finfo(dtype).eps
    w_rms = rng.standard_normal(D).astype(dtype) if affine else None
    w_bn, b_bn = (rng.standard_normal(D).astype(dtype), rng.standard_normal(D).astype(dtype)) if affine else (None, None)
    results = []
    for rms, bn in ((cpu, cpu_bn), (numpy_rms, numpy_bn)):
        y, rstd = rms.rms_norm_fwd(x, w_rms, 1e-6)
        yb, mean, rstd_b, var = bn.batch_norm_fwd_ncl(x3, w_bn, b_bn, 1e-5)
        results.append((y, rstd, *rms.rms_norm_bwd(dy, x, w_rms, rstd),
                        yb, mean, rstd_b, var, *bn.batch_norm_bwd_ncl(dy3, x3, w_bn, mean, rstd_b)))
    names = ("rms y", "rms rstd", "rms dx", "rms dweight", "bn y", "bn mean", "bn rstd", "bn var",
             "bn dx", "bn dweight", "bn dbias")
    for name, c, r in zip(names, *results):
        if r is None:
            assert c is None, name
            continue
        assert c.shape == r.shape and c.dtype == r.dtype, name
        scale_r = 1.0 + float(np.abs(r.astype(np.float64)).max(initial=0.0))
        np.testing.assert_allclose(c, r, rtol=0, atol=64 * max(R * L, D) * eps * scale_r, err_msg=name)


def test_compiled_loops_really_run(rng):
    kernels.set_cpu_kernels("numba")
    x = rng.standard_normal((5, 8)).astype(np.float32)
    assert layer_norm_dispatch.layer_norm_fwd_for(x) is cpu.layer_norm_fwd
    y, mean, rstd = kernels.layer_norm_fwd(x, None, None, 1e-5)
    kernels.layer_norm_bwd(x, x, np.ones(8, np.float32), mean, rstd)
    compiled_for = [sig[0] for sig in cpu._layer_norm_fwd_rows.signatures]
    assert any(str(getattr(t, "dtype", "")) == "float32" for t in compiled_for)  # a Numba type
    assert cpu._layer_norm_bwd_rows.signatures
    kernels.rms_norm_bwd(x, x, None, kernels.rms_norm_fwd(x, None, 1e-6)[1])
    x3 = x.reshape(5, 2, 4)
    kernels.batch_norm_bwd_ncl(x3, x3, None, *kernels.batch_norm_fwd_ncl(x3, None, None, 1e-5)[1:3])
    for loop in (cpu._rms_norm_fwd_rows, cpu._rms_norm_bwd_rows, cpu_bn._batch_norm_fwd_ncl, cpu_bn._batch_norm_bwd_ncl):
        assert loop.signatures, loop


def test_float16_goes_to_the_numpy_kernels_bitwise(rng):
    x = rng.standard_normal((6, 16)).astype(np.float16)
    w, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    dy = rng.standard_normal((6, 16)).astype(np.float16)
    compiled, reference = _both(x, w, b, dy)
    for c, r in zip(compiled, reference):
        np.testing.assert_array_equal(c, r)
    assert compiled[0].dtype == np.float16 and compiled[1].dtype == np.float32


def test_backward_paths_mixed_in_one_block_match_float64(rng):
    # The compiled backward takes a different path per row (cpu_layer_norm's docstring): dx in the
    # expanded form for ordinary rows and with xhat formed first where rstd² underflows (scale
    # 1e30); dγ's re-centring term only where the rounded mean matters (1e4 + 1e-3 · noise).
    # Mixed in one block of dγ/dβ partial sums, every row's dx and the summed dγ, dβ must still
    # be those of the float64 computation on the same float32 values.
    D = 48
    rows = [rng.standard_normal(D), 1e4 + 1e-3 * rng.standard_normal(D), 1e30 * rng.standard_normal(D),
            3.0 + 0.5 * rng.standard_normal(D), 1e-20 * rng.standard_normal(D)]
    x = np.stack(rows * 4).astype(np.float32)                                    # (20, D), one block
    w, b = rng.standard_normal(D).astype(np.float32), rng.standard_normal(D).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    y, mean, rstd = cpu.layer_norm_fwd(x, w, b, 1e-5)
    dx, dw, db = cpu.layer_norm_bwd(dy, x, w, mean, rstd)
    x64, w64, dy64 = (a.astype(np.float64) for a in (x, w, dy))
    _, m64, r64 = numpy_kernels.layer_norm_fwd(x64, w64, None, 1e-5)
    rdx, rdw, rdb = numpy_kernels.layer_norm_bwd(dy64, x64, w64, m64, r64)
    for i in range(len(x)):  # each row against its own scale (dx ~ rstd · |dy · γ|)
        row_scale = np.abs(rdx[i]).max()
        np.testing.assert_allclose(dx[i], rdx[i], rtol=0, atol=1e-4 * row_scale, err_msg=f"row {i}")
    # the 1e4 + 1e-3·noise rows' mean is off by up to half their spread: without the re-centring
    # term their dγ contributions would be wrong by O(1) (about 10^4 times this tolerance)
    np.testing.assert_allclose(dw, rdw, rtol=0, atol=1e-4 * np.abs(rdw).max())
    np.testing.assert_allclose(db, rdb, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("dtype, case", [
    (np.float32, "tiny rows, tiny eps"), (np.float32, "huge dy, eps 1e-12"), (np.float32, "huge constant dy"),
    (np.float64, "tiny rows, tiny eps")])
def test_backward_terms_that_would_overflow_take_the_xhat_first_form(dtype, case, rng):
    # Found by the break-it trial: B = -rstd² · mean(dxhat · xhat) overflowed to inf (and r · dxhat can),
    # so the expanded form gave ±inf or NaN where the NumPy kernel and the math are finite. The
    # compiled kernel must give the NumPy kernel's finite values (which match float64 to ~1e-7).
    D = 64
    if case == "tiny rows, tiny eps":
        scale = 1e-20 if dtype == np.float32 else 1e-160
        x, dy, eps = rng.standard_normal((3, D)) * scale, rng.standard_normal((3, D)), scale * scale * 1e-2
    elif case == "huge dy, eps 1e-12":            # rows of std 6e-7 (rstd 1.6e6), dy 1e28 along xhat
        x = rng.standard_normal((3, D)) * 6e-7
        dy, eps = x / 6e-7 * 1e28, 1e-12
    else:                                          # dy constant along the row: dx is 0, r · dy overflows
        x, dy, eps = rng.standard_normal((3, D)) * 1e-6, np.full((3, D), 1e34), 1e-12
    x, dy = x.astype(dtype), dy.astype(dtype)
    w = np.ones(D, dtype)
    _, mean, rstd = cpu.layer_norm_fwd(x, w, None, eps)
    ours = cpu.layer_norm_bwd(dy, x, w, mean, rstd)[0]
    ref = numpy_kernels.layer_norm_bwd(dy, x, w, mean, rstd)[0]
    assert np.all(np.isfinite(ref)) and np.all(np.isfinite(ours))
    # to rounding, relative to the scale of dx's terms, rstd · |dy · γ| (held in float64: it may be
    # beyond float32; the constant-dy rows' exact dx is 0, both kernels give rounding noise of that scale)
    terms = float(rstd.astype(np.float64).max()) * float(np.abs(dy.astype(np.float64) * w).max())
    np.testing.assert_allclose(ours.astype(np.float64), ref.astype(np.float64), rtol=0,
                               atol=64 * D * float(np.finfo(dtype).eps) * terms)


def test_one_value_rows_give_exactly_bias_and_zero_dx(rng):
    # D = 1: xhat = 0 and dxhat - mean(dxhat) = 0 exactly (no fused multiply-add is allowed to
    # leave an unrounded product behind: see _jit's docstring).
    x = rng.standard_normal((9, 1)).astype(np.float32)
    w, b = np.array([1.7], np.float32), np.array([-0.3], np.float32)
    y, mean, rstd = cpu.layer_norm_fwd(x, w, b, 1e-5)
    np.testing.assert_array_equal(y, np.full((9, 1), -0.3, np.float32))
    dx, dw, db = cpu.layer_norm_bwd(rng.standard_normal((9, 1)).astype(np.float32), x, w, mean, rstd)
    np.testing.assert_array_equal(dx, 0)
    np.testing.assert_array_equal(dw, 0)


def test_nan_and_inf_stay_in_their_row(rng):
    x = rng.standard_normal((4, 12))
    w, b, dy = rng.standard_normal(12), rng.standard_normal(12), rng.standard_normal((4, 12))
    clean = cpu.layer_norm_fwd(x, w, b, 1e-5)
    x[1, 3], x[2, 0] = np.nan, np.inf
    compiled, reference = _both(x, w, b, dy)
    y, dx = compiled[0], compiled[3]
    assert np.all(np.isnan(y[1])) and np.all(np.isnan(y[2])) and np.all(np.isnan(dx[1:3]))
    np.testing.assert_array_equal(y[[0, 3]], clean[0][[0, 3]])   # the other rows are untouched
    assert np.all(np.isnan(compiled[4]))                         # dγ sums over every row
    for c, r in zip(compiled, reference):                        # the same NaNs as the NumPy kernels
        np.testing.assert_array_equal(np.isnan(c), np.isnan(r))


def test_empty_and_non_contiguous_inputs(rng):
    x = np.zeros((0, 5), np.float32)
    y, mean, rstd = cpu.layer_norm_fwd(x, None, None, 1e-5)
    assert y.shape == (0, 5) and mean.shape == rstd.shape == (0, 1)
    dx, dw, db = cpu.layer_norm_bwd(x, x, np.ones(5, np.float32), mean, rstd)
    assert dx.shape == (0, 5) and dw.tolist() == db.tolist() == [0.0] * 5
    # a Fortran-ordered x and float64 parameters for float32 data give the contiguous result
    xc = rng.standard_normal((7, 10)).astype(np.float32)
    w, b = rng.standard_normal(10), rng.standard_normal(10)
    ref = cpu.layer_norm_fwd(xc, w.astype(np.float32), b.astype(np.float32), 1e-5)
    got = cpu.layer_norm_fwd(np.asfortranarray(xc), w, b, 1e-5)
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(r, g)
        assert g.dtype == np.float32


def test_set_cpu_kernels_choices_and_errors(monkeypatch):
    before = kernels.get_cpu_kernels()
    try:
        kernels.set_cpu_kernels("numpy")
        assert kernels.get_cpu_kernels() == "numpy"
        assert layer_norm_dispatch.layer_norm_fwd_for(np.zeros((1, 2))) is numpy_kernels.layer_norm_fwd
        with pytest.raises(ValueError, match=r"expected one of \('numba', 'numpy'\), got 'c'"):
            kernels.set_cpu_kernels("c")
        monkeypatch.setattr(choice, "_numba_importable", lambda: False)
        with pytest.raises(ImportError, match="Numba is not installed"):
            kernels.set_cpu_kernels("numba")
        # the environment variable picks the first choice; an unusable one falls back, with a warning
        for env, numba_ok, expected, warns in (("numpy", True, "numpy", False), ("NUMBA", True, "numba", False),
                                               ("", True, "numba", False), ("", False, "numpy", False),
                                               ("numba", False, "numpy", True), ("fortran", True, "numba", True),
                                               ("fortran", False, "numpy", True)):
            monkeypatch.setattr(choice, "_numba_importable", lambda ok=numba_ok: ok)
            monkeypatch.setenv("MINITORCH_LN_CPU_KERNELS", env)
            monkeypatch.setattr(choice, "_cpu_kernels", None)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                assert kernels.get_cpu_kernels() == expected, (env, numba_ok)
            messages = [str(w.message) for w in caught]
            assert bool(messages) == warns, (env, numba_ok, messages)
            if warns:
                assert "MINITORCH_LN_CPU_KERNELS" in messages[0] and repr(expected) in messages[0]
    finally:
        monkeypatch.undo()
        kernels.set_cpu_kernels(before)


@pytest.mark.parametrize("how", ["missing", "broken"])
def test_without_numba_everything_runs_on_the_numpy_kernels(how, tmp_path):
    # A fresh interpreter in which `import numba` fails (missing: ImportError; broken: an installed
    # package whose import raises RuntimeError): the package imports, chooses the NumPy kernels,
    # and LayerNorm forward and backward still match the math.
    env = dict(os.environ)
    env.pop("MINITORCH_LN_CPU_KERNELS", None)
    prelude = "import sys; sys.modules['numba'] = None\n"
    if how == "broken":
        (tmp_path / "numba").mkdir()
        (tmp_path / "numba" / "__init__.py").write_text("raise RuntimeError('this numba is broken')\n")
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
        prelude = ""
    code = prelude + (
        "import numpy as np, minitorch_ln as mt, minitorch_ln.nn.functional as F\n"
        "from minitorch_ln import kernels\n"
        "from minitorch_ln.kernels import cpu_layer_norm\n"
        "assert kernels.get_cpu_kernels() == 'numpy' and not cpu_layer_norm.AVAILABLE\n"
        "x = mt.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)\n"
        "y = F.layer_norm(x, 3); y.backward(mt.tensor(np.array([[1.0, 0, 0], [0, 0, 0]])))\n"
        # rows (0, 1, 2) and (3, 4, 5): deviations (-1, 0, 1), variance 2/3, xhat = (-r, 0, r).
        # With dy = (1, 0, 0): mean(dxhat) = 1/3, mean(dxhat·xhat) = -r/3, so
        # dx = r·((1, 0, 0) - 1/3 - xhat·(-r/3)) = r·(2/3 - r²/3, -1/3, -1/3 + r²/3).
        "r = 1 / np.sqrt(2 / 3 + 1e-5)\n"
        "assert np.allclose(y.detach().numpy(), [[-r, 0, r]] * 2)\n"
        "assert np.allclose(x.grad.numpy(), [r * np.array([2/3 - r*r/3, -1/3, -1/3 + r*r/3]), [0, 0, 0]])\n"
        "assert np.allclose(cpu_layer_norm.layer_norm_fwd(x.detach().numpy(), None, None, 1e-5)[0], y.detach().numpy())\n"
        "print('ok', kernels.get_cpu_kernels())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok numpy"


def test_jit_compiles_without_a_cache_where_numba_can_write_none(monkeypatch):
    # Numba raises RuntimeError at decoration for cache=True when no folder is writable (a
    # read-only install and home); the loops are then compiled in each process instead.
    calls = []

    def njit(cache, **options):
        calls.append(cache)
        if cache:
            raise RuntimeError("cannot cache function 'f': no locator available for file 'f.py'")
        return lambda fn: ("compiled", fn)

    monkeypatch.setattr(_numba, "numba", type("FakeNumba", (), {"njit": staticmethod(njit)}))

    def f():
        pass

    assert _numba.jit(f) == ("compiled", f)
    assert calls == [True, False]


def test_kernel_arguments_that_do_not_fit_x_are_refused(rng):
    # The loops index without bounds checks: a wrong shape would read or write past an array.
    x = rng.standard_normal((4, 8))
    y, mean, rstd = cpu.layer_norm_fwd(x, None, None, 1e-5)
    cases = [
        (lambda: cpu.layer_norm_fwd(x, np.ones(7), np.zeros(8), 1e-5), "expected weight of shape (8,) for x of shape (4, 8), got (7,)"),
        (lambda: cpu.layer_norm_fwd(x, np.ones(8), np.zeros(9), 1e-5), "expected bias of shape (8,)"),
        (lambda: cpu.layer_norm_bwd(x[:3], x, None, mean, rstd), "expected dy of shape (4, 8) for x of shape (4, 8), got (3, 8)"),
        (lambda: cpu.layer_norm_bwd(x, x, None, mean[:1], rstd), "expected mean of shape (4, 1)"),
        (lambda: cpu.layer_norm_bwd(x, x, None, mean, rstd[:, 0]), "expected rstd of shape (4, 1)"),
        (lambda: cpu.rms_norm_fwd(x, np.ones(3), 1e-6), "rms_norm_fwd: expected weight of shape (8,)"),
        (lambda: cpu.rms_norm_bwd(x, x, None, rstd[:2]), "rms_norm_bwd: expected rstd of shape (4, 1)"),
        (lambda: cpu_bn.batch_norm_fwd_ncl(x.reshape(2, 4, 4), np.ones(3), None, 1e-5),
         "batch_norm_fwd_ncl: expected weight of shape (4,) for x of shape (2, 4, 4), got (3,)"),
        (lambda: cpu_bn.batch_norm_bwd_ncl(x.reshape(2, 4, 4), x.reshape(2, 4, 4), None, mean[:2], rstd),
         "batch_norm_bwd_ncl: expected mean of shape (4, 1)"),
        (lambda: cpu.layer_norm_fwd(np.ones((2, 1 << 20), np.float32), np.ones(1, np.float32), None, 1e-5),
         "expected weight of shape (1048576,)"),  # once a segmentation fault: reading 4 MB past γ
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            call()


def test_prefetch_row_is_a_hint_that_changes_nothing():
    # kernels/_numba.prefetch_row asks for the cache lines of one row (LayerNorm's forward, the next
    # row); any row index is allowed (past either end: nothing), the array and the result are untouched,
    # and in interpreted code (NUMBA_DISABLE_JIT=1) it is a Python function that does nothing.
    import numba

    @numba.njit
    def touch_every_row(a):
        for i in range(-2, a.shape[0] + 3):
            _numba.prefetch_row(a, i)
        return a.sum()

    for a in (np.arange(15, dtype=np.float32).reshape(3, 5), np.arange(8.0).reshape(8, 1),
              np.zeros((0, 4), np.float32), np.zeros((2, 0)), np.arange(6, dtype=np.int8).reshape(2, 3)):
        before = a.copy()
        assert touch_every_row(a) == before.sum()
        np.testing.assert_array_equal(a, before)
    assert _numba.prefetch_row(np.zeros((2, 3)), 1) is None
    with pytest.raises(numba.TypingError):  # a C-contiguous 2-D array only: its rows are whole lines
        touch_every_row(np.zeros((4, 4))[:, ::2])


def test_the_forward_and_the_statistics_loop_give_the_same_statistics_bit_for_bit(rng):
    # _row_stats is copied into both row loops (jit(inline=True)) and each prefetches the next row:
    # the forward's mean/rstd and the statistics-only loop's are the same numbers, on one thread and two
    for dtype in (np.float32, np.float64):
        x = (rng.standard_normal((300, 257)) * 3 + 5).astype(dtype)
        x[7] = 2.5                                               # a constant row: var 0 exactly
        x[9] *= 1e25 if dtype == np.float32 else 1e160           # squares overflow: the float64 rescue
        for threads in (1, 2):
            previous = kernels.get_num_threads()
            kernels.set_num_threads(threads)
            try:
                _, mean, rstd = cpu.layer_norm_fwd(x, None, None, 1e-5)
                mean2, rstd2 = cpu.layer_norm_stats(x, 1e-5)
            finally:
                kernels.set_num_threads(previous)
            assert mean.tobytes() == mean2.tobytes() and rstd.tobytes() == rstd2.tobytes()
            assert np.isfinite(rstd).all() and rstd[9, 0] > 0
