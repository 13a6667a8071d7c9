"""Utilities that mirror ``torch.utils``: for now the data pipeline, :mod:`minitorch_ln.utils.data`."""

from . import data

__all__ = ["data"]
