"""``hypothesis.extra.numpy`` of the stand-in: every name is a no-op object."""

from .. import _Anything


def __getattr__(name):
    return _Anything()
