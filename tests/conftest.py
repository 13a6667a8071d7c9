"""Shared fixtures: Hypothesis profiles, the device parameter, seeded generators."""

import importlib.util
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import minitorch_ln as mt

# CI: a bounded number of examples, no deadline (timings on a shared 2-core machine vary), and the
# same examples on every run (derandomize), so that a red CI points at a change, not at a new draw;
# the dev profile keeps drawing new examples, which is how edge cases are found.
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def pytest_collection_modifyitems(config, items):
    # tests marked slow (long runs: whole-database walks, many-rank jobs) run with RUN_SLOW=1 or `-m slow`;
    # README's test command (and CI) leaves them out, to stay within CI's time
    if not os.environ.get("RUN_SLOW") and "slow" not in (config.getoption("-m") or ""):
        skip_slow = pytest.mark.skip(reason="slow: run with RUN_SLOW=1")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip_slow)
    if mt.cuda_is_available():
        return
    skip = pytest.mark.skip(reason="needs CuPy and a GPU (install minitorch-ln[cuda12] or [cuda13])")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=DEVICES)
def device(request):
    """Every test that takes ``device`` runs on the CPU and, where a GPU is usable, on CUDA."""
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    mt.manual_seed(0)
    yield


@pytest.fixture
def thread_any_size(monkeypatch):
    """Let the CPU kernels share out inputs of any size over their threads (``kernels/_threads.py`` keeps
    inputs under ``MIN_THREAD_ELEMENTS`` values on one thread), so small test inputs exercise the threads."""
    from minitorch_ln.kernels import _threads

    monkeypatch.setattr(_threads, "MIN_THREAD_ELEMENTS", 1)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(scope="module", params=["numba", "numpy"])
def cpu_kernels(request):
    """Run a test module on each CPU kernel implementation (compiled loops, whole-array NumPy), then restore.

    Module-scoped, so that Hypothesis tests can use it (``pytestmark = pytest.mark.usefixtures(...)``).
    """
    from minitorch_ln import kernels

    if request.param == "numba" and importlib.util.find_spec("numba") is None:
        pytest.skip("Numba is not installed")
    before = kernels.get_cpu_kernels()
    kernels.set_cpu_kernels(request.param)
    yield request.param
    kernels.set_cpu_kernels(before)
