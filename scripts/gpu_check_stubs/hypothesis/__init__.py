"""A stand-in for Hypothesis, used by ``scripts/gpu_check.sh`` only where Hypothesis is not installed.

The GPU machine may have no Hypothesis and no network; ``tests/conftest.py`` and the strategy
modules import it at collection time. With this stub they import, every ``@given`` test is skipped
(its CPU run, with the real Hypothesis, is what CI checks), and every other test runs as usual.
"""

import pytest


class _Anything:
    """Accepts any attribute access, call or operator, so strategy definitions evaluate."""

    def __getattr__(self, name):
        return _Anything()

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs and not isinstance(args[0], _Anything):
            return _Anything()  # used as a decorator (st.composite)
        return _Anything()

    def __or__(self, other):
        return _Anything()

    __ror__ = __or__


def given(*args, **kwargs):
    def decorate(fn):
        return pytest.mark.skip(reason="Hypothesis is not installed on this machine (stub)")(fn)

    return decorate


class settings:  # noqa: N801 - Hypothesis's name
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, fn):
        return fn

    @staticmethod
    def register_profile(*args, **kwargs):
        pass

    @staticmethod
    def load_profile(*args, **kwargs):
        pass


class HealthCheck:
    too_slow = data_too_large = filter_too_much = function_scoped_fixture = differing_executors = None


def assume(condition):
    return True


def example(*args, **kwargs):
    return lambda fn: fn


def note(*args, **kwargs):
    pass


strategies = _Anything()


def is_hypothesis_test(fn) -> bool:
    return False
