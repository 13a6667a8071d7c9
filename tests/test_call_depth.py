"""From ``nn.LayerNorm.forward`` to the row loop that does the arithmetic: at most five Python calls
(DESIGN.md), and the same from the LayerNorm node's backward. Traced with ``sys.setprofile`` in a
fresh interpreter with ``NUMBA_DISABLE_JIT=1``, so the compiled row loops run as Python functions
and show up on the stack.
"""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

PROBE = r"""
import json, os, sys
import minitorch_ln as mt
from minitorch_ln import kernels, nn

kernels.set_cpu_kernels("numba")
ln = nn.LayerNorm(8)
x = mt.randn(4, 8, requires_grad=True)
stacks = {}

def profile(frame, event, arg):
    if event == "call" and frame.f_code.co_name in ("_layer_norm_fwd_rows", "_layer_norm_bwd_rows"):
        chain, f = [], frame
        while f is not None:
            chain.append([os.path.relpath(f.f_code.co_filename, os.path.dirname(mt.__file__)), f.f_code.co_name])
            f = f.f_back
        stacks.setdefault(frame.f_code.co_name, chain)

sys.setprofile(profile)
ln(x).backward(mt.randn(4, 8))
sys.setprofile(None)
print(json.dumps(stacks))
"""


def _calls_between(stack, start):
    """Calls from the frame ``start`` ((file, function)) down to the innermost frame of ``stack``."""
    frames = [tuple(f) for f in stack]
    return frames.index(start)


@pytest.fixture(scope="module")
def stacks():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", MINITORCH_LN_CPU_KERNELS="numba")
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_forward_reaches_the_row_loop_in_at_most_five_calls(stacks):
    stack = stacks["_layer_norm_fwd_rows"]
    n = _calls_between(stack, ("nn/normalization.py", "forward"))
    # nn.LayerNorm.forward -> F.layer_norm -> Function.apply -> LayerNorm.forward -> kernel -> row loop
    assert n <= 5, f"{n} calls from nn.LayerNorm.forward to the row loop: {stack[:n + 1]}"


def test_backward_reaches_the_row_loop_in_at_most_five_calls(stacks):
    stack = stacks["_layer_norm_bwd_rows"]
    n = _calls_between(stack, ("ops/layer_norm.py", "backward"))
    # NativeLayerNorm.backward -> Function.apply -> NativeLayerNormBackward.forward -> kernel -> row loop
    assert n <= 5, f"{n} calls from LayerNorm's backward to the row loop: {stack[:n + 1]}"


def test_the_trace_would_see_a_deeper_chain():
    # the counting itself: a made-up stack, innermost first
    stack = [["k.py", "rows"], ["k.py", "plumbing"], ["k.py", "kernel"], ["nn/normalization.py", "forward"]]
    assert _calls_between(stack, ("nn/normalization.py", "forward")) == 3
