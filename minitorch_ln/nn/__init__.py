"""Layers and the Module system, mirroring ``torch.nn``."""

from . import functional, init
from .linear import Identity, Linear
from .module import Module, StateDictError
from .parameter import Parameter
