"""LayerNorm by hand: what it does to each token, and proof that its hand-derived backward is right.

On a ``(B, L, D) = (3, 10, 8)`` input this script

1. runs ``nn.LayerNorm(8)`` and prints the shapes, and the mean and variance of every token's output
   (0 and 1 up to rounding and eps, before γ and β);
2. checks the gradient in float64 against central finite differences (``gradcheck``), first and
   second order, with a random upstream gradient;
3. splits one token's input gradient into the three terms of
   ``dx = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat))`` (docs/layernorm_backward.md)
   and shows that they add up and that ``Σ_D dx = 0``;
4. when PyTorch is installed, prints the largest difference from ``torch.nn.LayerNorm`` in the output
   and in every gradient, with the same weights and the same random upstream gradient;
5. saves a figure of one token before and after, and of its three gradient terms.

    python examples/layernorm_by_hand.py [--fast]
"""

import argparse
import os

import numpy as np

import minitorch_ln as mt
import minitorch_ln.nn as nn
import minitorch_ln.nn.functional as F
from minitorch_ln import kernels
from minitorch_ln.autograd import gradcheck, gradgradcheck

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--fast", action="store_true", help="random-direction gradient checks (a second)")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--figure", default=os.path.join(os.path.dirname(__file__), "figures", "layernorm_by_hand.png"))
args = parser.parse_args()
mt.manual_seed(args.seed)
rng = np.random.default_rng(args.seed)
B, L, D = 3, 10, 8

# ---------------------------------------------------------------------------------------------- 1
ln = nn.LayerNorm(D)                                           # weight (γ) ones, bias (β) zeros
x_np = (rng.standard_normal((B, L, D)) * 3 + 5).astype(np.float32)   # tokens far from mean 0, var 1
x = mt.tensor(x_np, requires_grad=True)                        # (B, L, D)
y = ln(x)                                                      # (B, L, D)
print("1. forward")
print(f"   input {tuple(x.shape)} {x.dtype} -> output {tuple(y.shape)} {y.dtype}; weight {tuple(ln.weight.shape)}, "
      f"bias {tuple(ln.bias.shape)}; graph: one node, {y.grad_fn.name()}")
out = y.detach().numpy()
token_mean, token_var = out.mean(-1), out.var(-1)             # (B, L) each
print(f"   per-token mean of the output:     min {token_mean.min():+.2e}  max {token_mean.max():+.2e}")
print(f"   per-token variance of the output: min {token_var.min():.6f}  max {token_var.max():.6f}"
      f"  (var/(var+eps) < 1: eps sits inside the square root)")
print(f"   the first token:  in  mean {x_np[0, 0].mean():.3f} var {x_np[0, 0].var():.3f}"
      f"   out mean {out[0, 0].mean():+.1e} var {out[0, 0].var():.6f}")

# ---------------------------------------------------------------------------------------------- 2
print("2. gradient check in float64 (central differences, random upstream gradient)")
x64 = mt.tensor(x_np.astype(np.float64), requires_grad=True)
w64 = mt.tensor(rng.standard_normal(D), requires_grad=True)   # random γ and β: γ = 1 hides errors
b64 = mt.tensor(rng.standard_normal(D), requires_grad=True)
fn = lambda x, w, b: F.layer_norm(x, (D,), w, b)  # noqa: E731
ok1 = gradcheck(fn, (x64, w64, b64), fast_mode=args.fast)
small = (mt.tensor(x_np[:1, :3].astype(np.float64), requires_grad=True), w64, b64)  # (1, 3, 8)
ok2 = gradgradcheck(fn, small, fast_mode=args.fast)
print(f"   gradcheck (input, weight, bias): {'passed' if ok1 else 'FAILED'}"
      f"{' (random directions, --fast)' if args.fast else f' (full {B * L * D + 2 * D}-column Jacobian)'}")
print(f"   gradgradcheck (second order):    {'passed' if ok2 else 'FAILED'}")

# ---------------------------------------------------------------------------------------------- 3
print("3. one token's input gradient, term by term")
dy = rng.standard_normal((B, L, D)).astype(np.float32)        # a random upstream gradient
y.backward(mt.tensor(dy))
x2, dy2 = x_np.reshape(-1, D), dy.reshape(-1, D)               # rows (N, D), N = B·L
_, mean, rstd = kernels.layer_norm_fwd(x2, ln.weight.array, ln.bias.array, ln.eps)
terms = kernels.layer_norm_bwd_terms(dy2, x2, ln.weight.array, mean, rstd)
np.set_printoptions(precision=3, suppress=True, linewidth=120)
print(f"   rstd · dxhat            (directly) {terms['dx_direct'][0]}")
print(f"   -rstd · mean(dxhat)     (via mean) {terms['dx_via_mean'][0]}")
print(f"   -rstd·xhat·mean(dxhat·xhat) (rstd) {terms['dx_via_rstd'][0]}")
print(f"   sum = dx                           {terms['dx'][0]}")
print(f"   x.grad from backward               {x.grad.numpy()[0, 0]}")
print(f"   Σ_D dx on every token: max |.| = {np.abs(x.grad.numpy().sum(-1)).max():.1e}  (shifting x changes nothing)")
ln.zero_grad()
x.grad = None
y_sum = ln(x)
y_sum.sum().backward()
print(f"   with loss = y.sum() and γ = 1 instead: max |x.grad| = {np.abs(x.grad.numpy()).max():.1e}"
      "  (always 0: why checks need a random upstream gradient)")

# ---------------------------------------------------------------------------------------------- 4
try:
    import torch
except ImportError:  # pragma: no cover - PyTorch is optional
    torch = None
if torch is not None:
    print("4. against torch.nn.LayerNorm (same weights, same upstream gradient), float32")
    ref = torch.nn.LayerNorm(D)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(rng.standard_normal(D).astype(np.float32)))
        ref.bias.copy_(torch.from_numpy(rng.standard_normal(D).astype(np.float32)))
    ln.load_state_dict(ref.state_dict())
    ln.zero_grad()
    x_ours, x_ref = mt.tensor(x_np, requires_grad=True), torch.tensor(x_np, requires_grad=True)
    y_ours, y_ref = ln(x_ours), ref(x_ref)
    y_ours.backward(mt.tensor(dy))
    y_ref.backward(torch.from_numpy(dy))
    for name, a, b in [("output", y_ours.detach().numpy(), y_ref.detach().numpy()),
                       ("d input", x_ours.grad.numpy(), x_ref.grad.numpy()),
                       ("d weight", ln.weight.grad.numpy(), ref.weight.grad.numpy()),
                       ("d bias", ln.bias.grad.numpy(), ref.bias.grad.numpy())]:
        print(f"   {name:9s} max |ours - torch| = {np.abs(a - b).max():.2e}   (largest value {np.abs(b).max():.2f})")
else:  # pragma: no cover
    print("4. PyTorch is not installed: skipping the comparison with torch.nn.LayerNorm")

# ---------------------------------------------------------------------------------------------- 5
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # pragma: no cover
    plt = None
if plt is not None:
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    idx = np.arange(D)
    ax1.bar(idx - 0.2, x_np[0, 0], 0.4, label="x (one token)")
    ax1.bar(idx + 0.2, out[0, 0], 0.4, label="LayerNorm(x), γ=1, β=0")
    ax1.axhline(0, color="k", lw=0.5)
    ax1.set_title("one token: mean → 0, variance → 1")
    ax1.set_xlabel("feature d")
    ax1.legend(fontsize=8)
    for k, (key, label) in enumerate([("dx_direct", "rstd·dxhat"), ("dx_via_mean", "−rstd·mean(dxhat)"),
                                      ("dx_via_rstd", "−rstd·xhat·mean(dxhat·xhat)")]):
        ax2.bar(idx + (k - 1) * 0.27, terms[key][0], 0.27, label=label)
    ax2.plot(idx, terms["dx"][0], "k.-", label="dx (their sum)")
    ax2.axhline(0, color="k", lw=0.5)
    ax2.set_title("its input gradient, term by term")
    ax2.set_xlabel("feature d")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(args.figure) or ".", exist_ok=True)
    fig.savefig(args.figure, dpi=120)
    print(f"5. figure saved to {args.figure}")
