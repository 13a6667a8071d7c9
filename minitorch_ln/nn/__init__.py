"""Layers and the Module system, mirroring ``torch.nn``."""

from . import functional, init, utils
from .activation import GELU, Dropout, LogSoftmax, ReLU, Sigmoid, Softmax, Softmax2d, Tanh
from .activation_modules import (
    CELU, ELU, GLU, PReLU, ReLU6, RReLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid,
    Mish, SiLU, Softmin, Softplus, Softshrink, Softsign, Tanhshrink, Threshold,
)
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, Sequential
from .dropout import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .lazy import (
    LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
    LazyModuleMixin,
)
from .loss import (
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CosineSimilarity, CrossEntropyLoss, GaussianNLLLoss, HuberLoss,
    KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, NLLLoss, PairwiseDistance, PoissonNLLLoss, SmoothL1Loss,
    SoftMarginLoss, TripletMarginLoss,
)
from .loss import (
    CTCLoss, HingeEmbeddingLoss, LinearCrossEntropyLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
    MultiMarginLoss, TripletMarginWithDistanceLoss,
)
from .module import Module, StateDictError
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm, RMSNorm
from .normalization_lrn import LocalResponseNorm
from .fold import Fold, Unfold
from .upsampling import (
    ChannelShuffle, PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d,
)
from .normalization_groups import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .parameter import Parameter, UninitializedParameter
from .padding import (
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
    ZeroPad3d,
)
from .pooling import FractionalMaxPool2d, FractionalMaxPool3d
from .pooling import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
    AvgPool1d, AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, LPPool3d, MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d,
    MaxUnpool2d, MaxUnpool3d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding, EmbeddingBag
from .transformer import (
    PositionalEncoding, Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer,
)
from .gpt import GPT, GPTConfig
from .attention_functional import multi_head_attention_forward as _mha_forward

functional.multi_head_attention_forward = _mha_forward  # F's name for it (F cannot import nn/attention.py: a cycle)


def __getattr__(name):
    # A PyTorch name this package does not provide: say so, and where the list of what exists is.
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: minitorch_ln does not provide it "
                         "(the PyTorch names it covers, and what differs: docs/torch_compat.md)")
