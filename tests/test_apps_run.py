"""``minitorch-ln run`` (apps/run.py, run.py): a PyTorch script runs unmodified on minitorch_ln."""

import pathlib
import runpy
import subprocess
import sys
import textwrap

import pytest

from minitorch_ln.apps.cli import build_parser
from minitorch_ln.apps.run import main as run_main
from minitorch_ln.apps.run import run_script
from minitorch_ln.interop import torch_alias as ta

ROOT = pathlib.Path(__file__).resolve().parents[1]

# A training script in nanoGPT's style, written for PyTorch (and run by PyTorch in the last test).
TRAIN_SCRIPT = '''
import math
import sys
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class GPTConfig:
    block_size: int = 8
    vocab_size: int = 6
    n_layer: int = 1
    n_head: int = 2
    n_embd: int = 16
    bias: bool = True


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.n_head, self.n_embd = config.n_head, config.n_embd
        self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                             .view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            ln_1=nn.LayerNorm(config.n_embd), attn=CausalSelfAttention(config),
            ln_2=nn.LayerNorm(config.n_embd),
            mlp=nn.Sequential(nn.Linear(config.n_embd, 4 * config.n_embd), nn.GELU(),
                              nn.Linear(4 * config.n_embd, config.n_embd)),
            ln_f=nn.LayerNorm(config.n_embd)))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        tr = self.transformer
        x = tr.wte(idx) + tr.wpe(pos)
        x = x + tr.attn(tr.ln_1(x))
        x = x + tr.mlp(tr.ln_2(x))
        logits = self.lm_head(tr.ln_f(x))
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class CharDataset(Dataset):
    def __init__(self, data, block_size):
        self.data, self.block_size = data, block_size

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, i):
        chunk = self.data[i:i + self.block_size + 1].tolist()
        return torch.LongTensor(chunk[:-1]), torch.LongTensor(chunk[1:])


def main():
    max_iters = int(sys.argv[1])
    torch.manual_seed(1337)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device = "cpu"
    data = np.array([i % 6 for i in range(200)], dtype=np.int64)
    loader = DataLoader(CharDataset(data, 8), batch_size=16, shuffle=True, drop_last=True)
    model = GPT(GPTConfig()).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    model = torch.compile(model)
    it, first = 0, None
    while it < max_iters:
        for X, Y in loader:
            with torch.autocast(device_type="cpu", enabled=False):
                _, loss = model(X.to(device), Y.to(device))
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            first = loss.item() if first is None else first
            print(f"iter {it}: loss {loss.item():.4f}")
            it += 1
            if it == max_iters:
                break
    print(f"torch.nn.Module is {torch.nn.Module.__module__}.Module")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def _losses(stdout: str) -> list:
    return [float(line.rsplit(" ", 1)[1]) for line in stdout.splitlines() if line.startswith("iter ")]


@pytest.fixture
def script(tmp_path):
    def write(body: str, name: str = "script.py") -> pathlib.Path:
        p = tmp_path / name
        p.write_text(textwrap.dedent(body))
        return p
    return write


def test_nanogpt_style_training_script_runs_and_its_loss_falls(script):
    p = script(TRAIN_SCRIPT, "train.py")
    r = subprocess.run([sys.executable, "-m", "minitorch_ln", "run", str(p), "25"], capture_output=True,
                       text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    losses = _losses(r.stdout)
    assert len(losses) == 25 and all(f"loss {v:.4f}" in r.stdout for v in losses)
    assert sum(losses[-5:]) / 5 < 0.8 * sum(losses[:5]) / 5, losses
    assert "torch.nn.Module is minitorch_ln.nn.module.Module" in r.stdout


def test_the_same_script_runs_on_pytorch(script, capsys, monkeypatch):
    # the script is PyTorch code: PyTorch itself runs it, here in-process (already imported; no alias)
    p = script(TRAIN_SCRIPT, "train.py")
    monkeypatch.setattr(sys, "argv", [str(p), "2"])
    import torch

    monkeypatch.setattr(torch, "compile", lambda m: m)  # the real compiler takes ~20 s to start; not the point
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(p), run_name="__main__")
    out = capsys.readouterr().out
    assert exc.value.code == 0 and len(_losses(out)) == 2
    assert "torch.nn.Module is torch.nn.modules.module.Module" in out


def test_argv_name_path_and_exit_code_as_python_gives_them(script, capsys):
    p = script("""
        import sys, torch
        print(sys.argv, __name__, sys.path[0] == __import__('os').path.dirname(__file__), torch.__name__)
        print(type(torch).__module__)
        sys.exit(3)
    """)
    argv_before, path_before = sys.argv[:], sys.path[:]
    rc = run_script(str(p), ["--lr=1e-3", "x"])
    out = capsys.readouterr().out
    assert rc == 3
    assert f"[{str(p)!r}, '--lr=1e-3', 'x'] __main__ True torch" in out and "torch_alias" in out
    assert sys.argv == argv_before and sys.path == path_before
    assert not ta.is_installed() and not [k for k, m in sys.modules.items() if isinstance(m, ta._AliasModule)]


@pytest.mark.parametrize("body, code, err", [
    ("pass", 0, ""),
    ("import sys; sys.exit()", 0, ""),
    ("import sys; sys.exit('bad config')", 1, "bad config"),
    ("def f():\n    raise ValueError('boom')\nf()", 1, "ValueError: boom"),
    ("import torch\ntorch.bogus_op(1)", 1, "torch.bogus_op is not provided"),
])
def test_exit_status_and_tracebacks(script, capsys, body, code, err):
    p = script(body)
    assert run_script(str(p)) == code
    stderr = capsys.readouterr().err
    assert err in stderr
    if "Traceback" in stderr:  # starts at the script's frame, as Python's
        assert "runpy" not in stderr and str(p) in stderr


def test_missing_script(tmp_path, capsys):
    assert run_script(str(tmp_path / "nope.py")) == 2
    assert "can't open file" in capsys.readouterr().err and "No such file" in "No such file or directory"
    assert run_main([]) == 2 and run_main(["--help"]) == 0


def test_cli_run_passes_every_argument_on():
    args = build_parser().parse_args(["run", "train.py", "--batch_size=4", "-h", "config.py"])
    assert args.script == "train.py" and args.args == ["--batch_size=4", "-h", "config.py"]


def test_python_dash_m_minitorch_ln_run(script):
    p = script("import sys, torch\nprint(torch.cuda.is_available(), sys.argv[1:])\nsys.exit(4)")
    r = subprocess.run([sys.executable, "-m", "minitorch_ln.run", str(p), "a"], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 4 and r.stdout.split("\n")[0].endswith("['a']"), r.stderr
