"""Layers and the Module system, mirroring ``torch.nn``."""

from . import functional, init, utils
from .activation import GELU, Dropout, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, Sequential
from .linear import Identity, Linear
from .module import Module, StateDictError
from .normalization import BatchNorm1d, LayerNorm, RMSNorm
from .parameter import Parameter
from .sparse import Embedding
from .transformer import (
    PositionalEncoding, Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer,
)
from .gpt import GPT, GPTConfig
