"""LayerNorm's backward in two more forms, for learning and for checking (never dispatched to a GPU).

- :func:`layer_norm_bwd_chain_rule`: the chain rule walked step by step through the forward graph,
  one named intermediate per step (docs, section 2);
- :func:`layer_norm_bwd_terms`: the compact backward split into its three terms, so that
  ``diagnostics`` can check each against finite differences on its own.

Both take the arguments of :func:`minitorch_ln.kernels.layer_norm.layer_norm_bwd` and the tests hold
them equal to it.
"""

from __future__ import annotations

from ..backend import get_array_module
from .layer_norm import xhat_from_stats

__all__ = ["layer_norm_bwd_chain_rule", "layer_norm_bwd_terms"]


def layer_norm_bwd_chain_rule(dy, x, weight, mean, rstd):
    """The same backward as :func:`layer_norm_bwd`, unrolled step by step through the forward graph.

    The forward, one named intermediate per step::

        mu = mean(x);  xc = x - mu;  var = mean(xc²);  rstd = (var + eps)^(-1/2);
        xhat = xc · rstd;  y = xhat · γ + β

    walked backwards, one line of the chain rule per step (docs, section 2). This is the form to
    learn from; the compact :func:`~minitorch_ln.kernels.layer_norm.layer_norm_bwd` is the form that runs, and the tests hold the two equal.
    Shapes and return value as :func:`layer_norm_bwd`; no blocking, no threads.
    """
    D = x.shape[1]
    sdt = mean.dtype
    x_s, dy_s = x.astype(sdt), dy.astype(sdt)                # (N, D)
    xc = x_s - mean                                          # (N, D)
    xc -= xc.mean(axis=1, keepdims=True)                     # re-centred, as in layer_norm_bwd
    xhat = xc * rstd                                         # (N, D)
    # y = xhat · γ + β
    dbias = dy_s.sum(axis=0)                                 # (D,)
    dweight = (dy_s * xhat).sum(axis=0)                      # (D,)
    dxhat = dy_s * weight if weight is not None else dy_s    # (N, D)
    # xhat = xc · rstd: two inputs, xc and rstd
    dxc = dxhat * rstd                                       # (N, D)  ∂xhat/∂xc = rstd
    drstd = (dxhat * xc).sum(axis=1, keepdims=True)          # (N, 1)  ∂xhat/∂rstd = xc, summed over the row
    # rstd = (var + eps)^(-1/2)
    dvar = drstd * (-0.5) * rstd**3                          # (N, 1)
    # var = Σ xc² / D: a second path into xc
    dxc += dvar * 2.0 * xc / D                               # (N, D)
    # xc = x - mu: into x directly, and into mu with a minus sign
    dmu = -dxc.sum(axis=1, keepdims=True)                    # (N, 1)
    # mu = Σ x / D
    dx = dxc + dmu / D                                       # (N, D)
    if weight is None:
        return dx.astype(x.dtype, copy=False), None, None
    return dx.astype(x.dtype, copy=False), dweight.astype(weight.dtype), dbias.astype(weight.dtype)


def layer_norm_bwd_terms(dy, x, weight, mean, rstd) -> dict:
    """The backward split into its terms, so that each can be checked on its own.

    Arguments as :func:`layer_norm_bwd`. Returns a dict of arrays, all in the statistics dtype
    (float32 for float16 input), keyed:

    - ``"xhat"`` ``(N, D)``: ``(x - mean) · rstd``;
    - ``"dxhat"`` ``(N, D)``: ``dy · weight`` (``dy`` when ``weight`` is None);
    - ``"dx_direct"`` ``(N, D)``: ``rstd · dxhat``, the path through ``xhat`` with ``mean`` and
      ``rstd`` held fixed (finite differences of ``Σ dy·y`` with frozen statistics);
    - ``"dx_via_mean"`` ``(N, D)``: ``-rstd · mean(dxhat)``, the path through ``mean`` (each row's
      entries are equal): differences of ``Σ dy·y`` moving ``x`` only inside ``mean(x)``;
    - ``"dx_via_rstd"`` ``(N, D)``: ``-rstd · xhat · mean(dxhat · xhat)``, the path through
      ``rstd``: differences moving ``x`` only inside ``rstd(x)``;
    - ``"dx"`` ``(N, D)``: the sum of the three, equal to :func:`layer_norm_bwd`'s ``dx``;
    - ``"dweight"``, ``"dbias"`` ``(D,)``: ``Σ_rows dy · xhat`` and ``Σ_rows dy`` (present whatever
      ``weight`` is).
    """
    xp = get_array_module(x)
    D = x.shape[1]
    sdt = mean.dtype
    dy_s = dy.astype(sdt)
    xhat = xhat_from_stats(x, mean, rstd)                                    # (N, D)
    dxhat = dy_s * weight if weight is not None else dy_s                    # (N, D)
    dx_direct = rstd * dxhat                                                  # (N, D)
    dx_via_mean = xp.broadcast_to(-rstd * dxhat.sum(axis=1, keepdims=True) / D, dxhat.shape).copy()
    dx_via_rstd = -rstd * xhat * ((dxhat * xhat).sum(axis=1, keepdims=True) / D)  # (N, D)
    return {
        "xhat": xhat,
        "dxhat": dxhat,
        "dx_direct": dx_direct,
        "dx_via_mean": dx_via_mean,
        "dx_via_rstd": dx_via_rstd,
        "dx": dx_direct + dx_via_mean + dx_via_rstd,
        "dweight": (dy_s * xhat).sum(axis=0),
        "dbias": dy_s.sum(axis=0),
    }
