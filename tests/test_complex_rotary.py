"""Llama's rotary position embedding, written as Meta's reference code writes it (complex numbers:
``polar``, ``view_as_complex``, a complex product, ``view_as_real(...).flatten(3)``), run on minitorch_ln
and on PyTorch from the same arrays: values and the gradients of both inputs agree."""

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln.interop import torch_alias

from helpers import assert_close

torch = pytest.importorskip("torch")


def precompute_freqs_cis(m, dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (m.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = m.arange(end, device=freqs.device)
    freqs = m.outer(t, freqs).float()
    return m.polar(m.ones_like(freqs), freqs)  # complex64


def apply_rotary_emb(m, xq, xk, freqs_cis):
    xq_ = m.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = m.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    shape = [d if i == 1 or i == xq_.ndim - 1 else 1 for i, d in enumerate(xq_.shape)]
    freqs_cis = freqs_cis.view(*shape)
    xq_out = m.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = m.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_llama_rotary_embedding_matches_torch(dtype):
    rng = np.random.default_rng(0)
    B, T, H, D = 2, 5, 3, 8
    q, k = rng.standard_normal((B, T, H, D)).astype(dtype), rng.standard_normal((B, T, H, D)).astype(dtype)
    dq, dk = rng.standard_normal((B, T, H, D)), rng.standard_normal((B, T, H, D))  # random upstream gradients
    results = []
    for m in (mt, torch):
        xq = (mt.tensor(q) if m is mt else torch.tensor(q)).requires_grad_(True)
        xk = (mt.tensor(k) if m is mt else torch.tensor(k)).requires_grad_(True)
        fc = precompute_freqs_cis(m, D, T)
        assert str(fc.dtype).replace("torch.", "") == "complex64"
        oq, ok = apply_rotary_emb(m, xq, xk, fc)
        mk = mt.tensor if m is mt else torch.tensor
        (oq * mk(dq.astype(dtype))).sum().add((ok * mk(dk.astype(dtype))).sum()).backward()
        results.append((oq, ok, xq.grad, xk.grad))
    for what, ours, theirs in zip(("xq_out", "xk_out", "dxq", "dxk"), *results):
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), what
        assert_close(ours, theirs, np.float32, what)  # the rotation is computed in float32 (llama's .float())
    # the rotation keeps each pair's norm: a check against the math, not only against PyTorch
    pairs = results[0][0].detach().numpy().reshape(B, T, H, D // 2, 2)
    np.testing.assert_allclose(np.hypot(*np.moveaxis(pairs, -1, 0)),
                               np.hypot(*np.moveaxis(q.reshape(B, T, H, D // 2, 2), -1, 0)), rtol=1e-5)


def test_rotary_through_the_torch_alias():
    # the same reference code, unchanged, with `torch` meaning minitorch_ln (as `minitorch-ln run` does)
    alias = torch_alias._AliasModule("torch")  # noqa: SLF001
    x = alias.randn(1, 4, 2, 6)
    out, _ = apply_rotary_emb(alias, x, x, precompute_freqs_cis(alias, 6, 4))
    assert isinstance(out, mt.Tensor) and tuple(out.shape) == (1, 4, 2, 6)
    np.testing.assert_allclose(out[:, 0].numpy(), x[:, 0].numpy(), rtol=1e-6)  # position 0: no rotation
