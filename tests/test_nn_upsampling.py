"""Upsample, UpsamplingNearest2d, UpsamplingBilinear2d, PixelShuffle, PixelUnshuffle: outputs and input
gradients equal PyTorch's layers (float64/float32, random upstream gradient), repr, stored
arguments, gradcheck through a layer, bad arguments."""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, t64, torch

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.nn.upsampling import (
    PixelShuffle,
    PixelUnshuffle,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

tnn = torch.nn

LAYERS = [
    (Upsample, tnn.Upsample, (), {"scale_factor": 2}, (2, 3, 4, 5)),
    (Upsample, tnn.Upsample, (), {"size": (3, 7), "mode": "bilinear"}, (2, 3, 4, 5)),
    (Upsample, tnn.Upsample, (), {"scale_factor": (1.5, 0.8), "mode": "bilinear", "align_corners": True}, (1, 2, 4, 5)),
    (Upsample, tnn.Upsample, (), {"scale_factor": 2.5, "mode": "linear", "recompute_scale_factor": True}, (2, 3, 4)),
    (Upsample, tnn.Upsample, (9,), {"mode": "nearest-exact"}, (2, 3, 4)),
    (UpsamplingNearest2d, tnn.UpsamplingNearest2d, (), {"scale_factor": 3}, (1, 2, 3, 4)),
    (UpsamplingNearest2d, tnn.UpsamplingNearest2d, ((5, 2),), {}, (1, 2, 3, 4)),
    (UpsamplingBilinear2d, tnn.UpsamplingBilinear2d, (), {"scale_factor": 2}, (1, 2, 3, 4)),
    (UpsamplingBilinear2d, tnn.UpsamplingBilinear2d, ((7, 3),), {}, (2, 1, 3, 4)),
    (PixelShuffle, tnn.PixelShuffle, (2,), {}, (2, 8, 3, 4)),
    (PixelShuffle, tnn.PixelShuffle, (3,), {}, (9, 2, 2)),
    (PixelUnshuffle, tnn.PixelUnshuffle, (2,), {}, (2, 3, 4, 6)),
]
IDS = [f"{o.__name__}-{a}-{k}" for o, _t, a, k, _s in LAYERS]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ours,theirs,args,kw,x_shape", LAYERS, ids=IDS)
def test_layer_matches_torch(ours, theirs, args, kw, x_shape, dtype):
    # through the one helper: output values and dtype, requires_grad, the input gradient under a
    # random upstream gradient
    a = np.random.default_rng(0).standard_normal(x_shape).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare_with_torch(lambda x: ours(*args, **kw)(x), lambda x: theirs(*args, **kw)(x), [a])


@pytest.mark.parametrize("ours,theirs,args,kw,x_shape", LAYERS, ids=IDS)
def test_layer_repr_and_attributes_match_torch(ours, theirs, args, kw, x_shape):
    m, t = ours(*args, **kw), theirs(*args, **kw)
    assert repr(m) == repr(t)
    for name in ("size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "upscale_factor",
                 "downscale_factor"):
        if hasattr(t, name):
            assert getattr(m, name) == getattr(t, name), name
    assert list(m.parameters()) == [] and m.state_dict() == {}


def test_upsample_stores_scale_factor_as_floats():
    assert Upsample(scale_factor=2).scale_factor == 2.0 and isinstance(Upsample(scale_factor=2).scale_factor, float)
    assert Upsample(scale_factor=(2, 3)).scale_factor == (2.0, 3.0)
    assert Upsample(size=4).scale_factor is None
    assert UpsamplingBilinear2d(size=3).align_corners is True and UpsamplingBilinear2d(size=3).mode == "bilinear"
    assert UpsamplingNearest2d(size=3).align_corners is None


def test_gradcheck_through_layers(rng):
    x = t64(rng.standard_normal((1, 4, 3, 2)))
    for m in [Upsample(scale_factor=1.5, mode="bilinear"), UpsamplingBilinear2d(size=(4, 5)), UpsamplingNearest2d(size=5),
              PixelShuffle(2)]:
        assert gradcheck(m, (x,)) and gradgradcheck(m, (x,))
    assert gradcheck(PixelUnshuffle(2), (t64(rng.standard_normal((1, 1, 4, 2))),))


def test_layer_bad_arguments():
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        Upsample()(mt.randn(1, 1, 3, 3))
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        Upsample(size=3, align_corners=True)(mt.randn(1, 1, 3, 3))
    with pytest.raises(NotImplementedError, match="antialias"):  # bicubic itself is supported now
        mt.nn.functional.interpolate(mt.randn(1, 1, 3, 3), scale_factor=2, mode="bicubic", antialias=True)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D input"):
        UpsamplingBilinear2d(scale_factor=2)(mt.randn(1, 1, 3))
    with pytest.raises(RuntimeError, match="not divisible by 4"):
        PixelShuffle(2)(mt.randn(1, 3, 2, 2))
    with pytest.raises(TypeError):
        Upsample(scale_factor=[2, 2])  # PyTorch: float() of a list
