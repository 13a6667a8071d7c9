"""PyTorch training scripts in nanoGPT's and minGPT's style, run unmodified through ``minitorch-ln run``,
and the Module/Optimizer members they call, checked against PyTorch.

The scripts below are PyTorch code (the last script test runs them on PyTorch itself). Through
``python -m minitorch_ln.run`` (what ``minitorch-ln run`` runs) each trains a small GPT from a text
prepared as nanoGPT's ``data/shakespeare_char/prepare.py`` prepares it (a ``uint16`` memmap of
character ids and a ``meta.pkl``), saves a checkpoint dict, resumes from it and samples with
``torch.multinomial``; the tests assert that the loss falls and that the resume starts at the saved
iteration with the saved weights and optimizer state.
"""

import inspect
import math
import pathlib
import pickle
import re
import runpy
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import minitorch_ln as mt
from minitorch_ln import amp
from minitorch_ln.interop.torch_alias import torch_alias
from minitorch_ln.utils.data import RandomSampler

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n"
        "First Citizen:\nYou are all resolved rather to die than to famish?\n\nAll:\nResolved. resolved.\n\n") * 40

# ------------------------------------------------------------------------------------------ the scripts

# nanoGPT's model.py, cut down: LayerNorm with optional bias, causal attention through
# F.scaled_dot_product_attention when present, else the masked_fill(tril == 0, -inf) path; weight
# tying; apply(init) with normal_/zeros_; configure_optimizers probing AdamW's signature for `fused`.
MODEL = '''
import inspect
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config, flash):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout
        self.flash = flash and hasattr(torch.nn.functional, 'scaled_dot_product_attention')
        if not self.flash:
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class Block(nn.Module):
    def __init__(self, config, flash):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config, flash)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = nn.Sequential(nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias), nn.GELU(),
                                 nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias),
                                 nn.Dropout(config.dropout))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 32
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = True


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            # one block through scaled_dot_product_attention, one through the masked softmax
            h=nn.ModuleList([Block(config, flash=i % 2 == 0) for i in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias)))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight') or pn.endswith('mlp.2.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [{'params': decay_params, 'weight_decay': weight_decay},
                        {'params': nodecay_params, 'weight_decay': 0.0}]
        fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == 'cuda'
        extra_args = dict(fused=True) if use_fused else dict()
        print(f"using fused AdamW: {use_fused} (available: {fused_available})")
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('Inf')
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx
'''

# nanoGPT's prepare.py: character ids as a uint16 memmap, the vocabulary in meta.pkl
PREPARE = '''
import os, pickle, sys
import numpy as np
data_dir = sys.argv[1]
with open(os.path.join(data_dir, 'input.txt'), 'r') as f:
    data = f.read()
chars = sorted(list(set(data)))
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}
n = len(data)
train_ids = np.array([stoi[c] for c in data[:int(n * 0.9)]], dtype=np.uint16)
val_ids = np.array([stoi[c] for c in data[int(n * 0.9):]], dtype=np.uint16)
train_ids.tofile(os.path.join(data_dir, 'train.bin'))
val_ids.tofile(os.path.join(data_dir, 'val.bin'))
with open(os.path.join(data_dir, 'meta.pkl'), 'wb') as f:
    pickle.dump({'vocab_size': len(chars), 'itos': itos, 'stoi': stoi}, f)
'''

# nanoGPT's train.py: globals overridden by --key=value, a memmap get_batch, compile, GradScaler,
# autocast (disabled on the CPU), a cosine lr schedule, grad clipping after unscale_, a checkpoint dict
# saved at each eval, and init_from='resume'.
TRAIN = '''
import math, os, pickle, sys, time
from ast import literal_eval
from contextlib import nullcontext

import numpy as np
import torch

from model import GPTConfig, GPT

out_dir = 'out'
data_dir = 'data'
eval_interval = 10
eval_iters = 2
log_interval = 1
init_from = 'scratch'
always_save_checkpoint = True
batch_size = 8
block_size = 16
n_layer = 2
n_head = 2
n_embd = 32
dropout = 0.0
bias = True
learning_rate = 1e-2
max_iters = 20
weight_decay = 1e-1
beta1, beta2 = 0.9, 0.99
grad_clip = 1.0
warmup_iters = 2
lr_decay_iters = 40
min_lr = 1e-3
device = 'cpu'
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
compile = True
config_keys = [k for k, v in globals().items() if not k.startswith('_') and isinstance(v, (int, float, bool, str))]
for arg in sys.argv[1:]:  # nanoGPT's configurator, for --key=value
    key, val = arg[2:].split('=')
    try:
        val = literal_eval(val)
    except (SyntaxError, ValueError):
        pass
    assert type(val) == type(globals()[key]), f"{key}: {type(val)} vs {type(globals()[key])}"
    globals()[key] = val
config = {k: globals()[k] for k in config_keys}

os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(1337)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
device_type = 'cuda' if 'cuda' in device else 'cpu'
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)


def get_batch(split):
    data = np.memmap(os.path.join(data_dir, f'{split}.bin'), dtype=np.uint16, mode='r')
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    if device_type == 'cuda':
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    else:
        x, y = x.to(device), y.to(device)
    return x, y


iter_num, best_val_loss = 0, 1e9
with open(os.path.join(data_dir, 'meta.pkl'), 'rb') as f:
    meta_vocab_size = pickle.load(f)['vocab_size']
model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size, bias=bias,
                  vocab_size=meta_vocab_size, dropout=dropout)
if init_from == 'scratch':
    model = GPT(GPTConfig(**model_args))
else:
    checkpoint = torch.load(os.path.join(out_dir, 'ckpt.pt'), map_location=device)
    for k in ['n_layer', 'n_head', 'n_embd', 'block_size', 'bias', 'vocab_size']:
        model_args[k] = checkpoint['model_args'][k]
    model = GPT(GPTConfig(**model_args))
    state_dict = checkpoint['model']
    unwanted_prefix = '_orig_mod.'
    for k, v in list(state_dict.items()):
        if k.startswith(unwanted_prefix):
            state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
    model.load_state_dict(state_dict)
    iter_num = checkpoint['iter_num']
    best_val_loss = checkpoint['best_val_loss']
    print(f"resumed at iter {iter_num}, best val loss {best_val_loss:.4f}")
model.to(device)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
if init_from == 'resume':
    optimizer.load_state_dict(checkpoint['optimizer'])
    steps = sorted({float(s['step']) for s in optimizer.state.values()})
    print(f"optimizer steps {steps}")
checkpoint = None
print(f"weights checksum {sum(float(p.detach().double().sum()) for p in model.parameters()):.10f}")
if compile:
    unoptimized_model = model
    model = torch.compile(model)
raw_model = model


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean().item()
    model.train()
    return out


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) * (learning_rate - min_lr)


X, Y = get_batch('train')
t0 = time.time()
while True:
    lr = get_lr(iter_num)
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    if iter_num % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if losses['val'] < best_val_loss or always_save_checkpoint:
            best_val_loss = losses['val']
            if iter_num > 0:
                checkpoint = {'model': raw_model.state_dict(), 'optimizer': optimizer.state_dict(),
                              'model_args': model_args, 'iter_num': iter_num, 'best_val_loss': best_val_loss,
                              'config': config}
                torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))
                print(f"saving checkpoint at iter {iter_num}, weights checksum "
                      f"{sum(float(p.detach().double().sum()) for p in raw_model.parameters()):.10f}")
    with ctx:
        logits, loss = model(X, Y)
    X, Y = get_batch('train')
    scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    if iter_num % log_interval == 0:
        print(f"iter {iter_num}: loss {loss.item():.4f}, time {(time.time() - t0) * 1000:.2f}ms")
    iter_num += 1
    if iter_num > max_iters:
        break
'''

# nanoGPT's sample.py
SAMPLE = '''
import os, pickle, sys
import torch
from model import GPTConfig, GPT

out_dir, data_dir = sys.argv[1], sys.argv[2]
torch.manual_seed(1337)
torch.cuda.manual_seed(1337)
checkpoint = torch.load(os.path.join(out_dir, 'ckpt.pt'), map_location='cpu')
model = GPT(GPTConfig(**checkpoint['model_args']))
model.load_state_dict(checkpoint['model'])
model.eval()
model.to('cpu')
model = torch.compile(model)
with open(os.path.join(data_dir, 'meta.pkl'), 'rb') as f:
    meta = pickle.load(f)
stoi, itos = meta['stoi'], meta['itos']
x = torch.tensor([stoi[c] for c in "\\n"], dtype=torch.long, device='cpu')[None, ...]
with torch.no_grad():
    for k in range(2):
        y = model.generate(x, 30, temperature=0.8, top_k=5)
        print(f"sample {k}: {y.shape[1]} tokens: " + repr(''.join([itos[i] for i in y[0].tolist()])))
'''

# minGPT's mingpt/trainer.py and projects/chargpt/chargpt.py: a Dataset, a DataLoader with a
# RandomSampler drawing int(1e10) indices with replacement, a worker process, pin_memory, callbacks,
# model.zero_grad(set_to_none=True), torch.save(model.state_dict()), sampling with top-k.
MINGPT = '''
import os, sys, time
from collections import defaultdict

import torch
from torch.utils.data import Dataset
from torch.utils.data.dataloader import DataLoader

from model import GPTConfig, GPT


class CharDataset(Dataset):
    def __init__(self, data, block_size):
        chars = sorted(list(set(data)))
        self.stoi = {ch: i for i, ch in enumerate(chars)}
        self.itos = {i: ch for i, ch in enumerate(chars)}
        self.vocab_size, self.block_size, self.data = len(chars), block_size, data

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, idx):
        dix = [self.stoi[s] for s in self.data[idx:idx + self.block_size + 1]]
        return torch.tensor(dix[:-1], dtype=torch.long), torch.tensor(dix[1:], dtype=torch.long)


class Trainer:
    def __init__(self, model, train_dataset, max_iters, num_workers):
        self.model, self.train_dataset = model, train_dataset
        self.max_iters, self.num_workers = max_iters, num_workers
        self.callbacks = defaultdict(list)
        self.device = 'cuda' if torch.cuda.is_available() else 'cpu'
        self.model = self.model.to(self.device)
        self.iter_num, self.iter_time, self.iter_dt = 0, 0.0, 0.0

    def set_callback(self, onevent, callback):
        self.callbacks[onevent] = [callback]

    def run(self):
        model = self.model
        self.optimizer = model.configure_optimizers(0.1, 5e-3, (0.9, 0.95), self.device)
        train_loader = DataLoader(
            self.train_dataset,
            sampler=torch.utils.data.RandomSampler(self.train_dataset, replacement=True, num_samples=int(1e10)),
            shuffle=False, pin_memory=True, batch_size=8, num_workers=self.num_workers)
        model.train()
        self.iter_time = time.time()
        data_iter = iter(train_loader)
        while True:
            try:
                batch = next(data_iter)
            except StopIteration:
                data_iter = iter(train_loader)
                batch = next(data_iter)
            x, y = [t.to(self.device) for t in batch]
            logits, self.loss = model(x, y)
            model.zero_grad(set_to_none=True)
            self.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            self.optimizer.step()
            for callback in self.callbacks.get('on_batch_end', []):
                callback(self)
            self.iter_num += 1
            tnow = time.time()
            self.iter_dt, self.iter_time = tnow - self.iter_time, tnow
            if self.iter_num >= self.max_iters:
                break


if __name__ == '__main__':
    work_dir, max_iters = sys.argv[1], int(sys.argv[2])
    os.makedirs(work_dir, exist_ok=True)
    torch.manual_seed(3407)
    torch.cuda.manual_seed_all(3407)
    text = open(os.path.join(work_dir, 'input.txt'), 'r').read()
    train_dataset = CharDataset(text, 16)
    model = GPT(GPTConfig(vocab_size=train_dataset.vocab_size, block_size=16, dropout=0.1))
    trainer = Trainer(model, train_dataset, max_iters, num_workers=1)

    def batch_end_callback(trainer):
        print(f"iter_dt {trainer.iter_dt * 1000:.2f}ms; iter {trainer.iter_num}: train loss {trainer.loss.item():.5f}")
        if trainer.iter_num % 20 == 0:
            model.eval()
            with torch.no_grad():
                context = "All:"
                x = torch.tensor([train_dataset.stoi[s] for s in context], dtype=torch.long)[None, ...]
                y = model.generate(x, 20, temperature=1.0, top_k=10)[0]
                print("completion " + repr(''.join([train_dataset.itos[int(i)] for i in y])))
            torch.save(model.state_dict(), os.path.join(work_dir, "model.pt"))
            print("saving model")
            model.train()

    trainer.set_callback('on_batch_end', batch_end_callback)
    trainer.run()
    sd = torch.load(os.path.join(work_dir, "model.pt"))
    print(f"reloaded {len(sd)} tensors: {sorted(sd) == sorted(model.state_dict())}")
'''


# ------------------------------------------------------------------------------------------ running them


def _run(args, cwd, timeout=120):
    """``python -m minitorch_ln.run ARGS`` (= ``minitorch-ln run``) in ``cwd``; (stdout, stderr) on success."""
    r = subprocess.run([sys.executable, "-m", "minitorch_ln.run", *map(str, args)], cwd=cwd, capture_output=True,
                       text=True, timeout=timeout, check=False, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout, r.stderr


def _losses(stdout):
    return [float(m) for m in re.findall(r"^iter \d+: loss ([0-9.]+)", stdout, re.MULTILINE)]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A nanoGPT-like project directory: model.py, train.py, sample.py, chargpt.py and prepared data."""
    root = tmp_path_factory.mktemp("project")
    for name, body in (("model.py", MODEL), ("prepare.py", PREPARE), ("train.py", TRAIN), ("sample.py", SAMPLE),
                       ("chargpt.py", MINGPT)):
        (root / name).write_text(textwrap.dedent(body))
    (root / "data").mkdir()
    (root / "data" / "input.txt").write_text(TEXT)
    _run(["prepare.py", "data"], root)  # plain NumPy and pickle; runs the same under the alias
    return root


@pytest.fixture(scope="module")
def trained(project):
    """train.py from scratch for 20 iterations (checkpoints at 10 and 20)."""
    out, err = _run(["train.py", "--out_dir=out", "--max_iters=20"], project)
    return out, err


def test_prepare_wrote_a_uint16_memmap_and_meta(project):
    meta = pickle.loads((project / "data" / "meta.pkl").read_bytes())
    ids = np.memmap(project / "data" / "train.bin", dtype=np.uint16, mode="r")
    assert meta["vocab_size"] == len(set(TEXT)) and len(ids) == int(len(TEXT) * 0.9)
    assert "".join(meta["itos"][int(i)] for i in ids[:14]) == "First Citizen:"


def test_nanogpt_style_train_saves_checkpoints_and_its_loss_falls(project, trained):
    out, err = trained
    losses = _losses(out)
    assert len(losses) == 21, out  # iterations 0..20
    assert sum(losses[-5:]) / 5 < 0.8 * sum(losses[:5]) / 5, losses
    assert losses[0] == pytest.approx(math.log(len(set(TEXT))), abs=0.3)  # a fresh model: about uniform
    assert "using fused AdamW: False (available: True)" in out  # AdamW takes fused=, as PyTorch's
    assert "saving checkpoint at iter 10" in out and "saving checkpoint at iter 20" in out
    assert "GradScaler is enabled, but CUDA is not available" in err  # dtype defaults to float16 without CUDA
    ckpt = mt.load(project / "out" / "ckpt.pt")
    assert ckpt["iter_num"] == 20 and isinstance(ckpt["best_val_loss"], float)
    assert ckpt["model_args"]["vocab_size"] == len(set(TEXT)) and ckpt["config"]["compile"] is True
    assert sorted(ckpt["optimizer"]["state"]) == list(range(len(ckpt["optimizer"]["state"])))
    assert [len(g["params"]) for g in ckpt["optimizer"]["param_groups"]] == [10, 18]  # decay / no decay
    assert "transformer.wte.weight" in ckpt["model"] and "lm_head.weight" in ckpt["model"]  # tied: both keys


def test_nanogpt_style_resume_continues_from_the_saved_iteration(project, trained):
    saved = re.findall(r"saving checkpoint at iter 20, weights checksum (\S+)", trained[0])
    out, _ = _run(["train.py", "--out_dir=out", "--init_from=resume", "--max_iters=25"], project)
    assert "resumed at iter 20" in out
    assert f"weights checksum {saved[0]}" in out  # the very weights that were saved
    assert "optimizer steps [20.0]" in out  # AdamW's state came back: 20 steps taken
    iters = [int(m) for m in re.findall(r"^iter (\d+):", out, re.MULTILINE)]
    assert iters == list(range(20, 26))
    before, after = _losses(trained[0]), _losses(out)
    assert sum(after) / len(after) < sum(before[:5]) / 5  # it goes on from the trained state, not from scratch


def test_nanogpt_style_sample_draws_with_multinomial(project, trained):
    out, _ = _run(["sample.py", "out", "data"], project)
    samples = re.findall(r"^sample \d: (\d+) tokens: '(.*)'$", out, re.MULTILINE)
    assert [int(n) for n, _ in samples] == [31, 31]
    assert all(set(s.encode().decode("unicode_escape")) <= set(TEXT) for _, s in samples)
    assert samples[0][1] != samples[1][1]  # drawn, not argmax: two samples differ


def test_mingpt_style_trainer_with_a_dataloader_worker(project, tmp_path):
    (tmp_path / "input.txt").write_text(TEXT)
    out, _ = _run([project / "chargpt.py", tmp_path, 41], project)
    losses = [float(v) for v in re.findall(r"train loss ([0-9.]+)", out)]
    assert len(losses) == 41 and sum(losses[-5:]) / 5 < 0.8 * sum(losses[:5]) / 5, losses
    assert out.count("saving model") == 3 and "reloaded" in out and ": True" in out
    completions = re.findall(r"^completion '(.*)'$", out, re.MULTILINE)
    assert len(completions) == 3 and all(
        c.startswith("All:") and len(c.encode().decode("unicode_escape")) == 24 for c in completions)


def test_the_same_scripts_run_on_pytorch(project, tmp_path, monkeypatch, capsys):
    # they are PyTorch code: PyTorch itself runs train.py and sample.py, in-process, without the alias
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.setattr(torch, "compile", lambda m: m)  # the real compiler takes ~20 s to start; not the point
    flags = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32  # the scripts set them
    rng = torch.get_rng_state()  # and seed PyTorch's generator: other tests get theirs back
    try:
        _run_on_pytorch(project, tmp_path, monkeypatch, capsys)
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = flags
        torch.set_rng_state(rng)
        sys.modules.pop("model", None)


def _run_on_pytorch(project, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["train.py", f"--out_dir={tmp_path}", "--max_iters=10", "--compile=False"])
    sys.modules.pop("model", None)
    runpy.run_path(str(project / "train.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert len(_losses(out)) == 11 and "using fused AdamW: False (available: True)" in out
    monkeypatch.setattr(sys, "argv", ["sample.py", str(tmp_path), "data"])
    assert mt.load(tmp_path / "ckpt.pt")["iter_num"] == 10  # PyTorch's pickle, read through the allow-list
    runpy.run_path(str(project / "sample.py"), run_name="__main__")
    assert len(re.findall(r"^sample \d: 31 tokens", capsys.readouterr().out, re.MULTILINE)) == 2


def test_nanogpt_checkpoints_resume_across_pytorch_and_the_alias(project, tmp_path, monkeypatch, capsys):
    # ckpt.pt written by real PyTorch resumes through `minitorch-ln run` (torch.load(ckpt_path,
    # map_location=device), without weights_only, as nanoGPT calls it), and the alias's ckpt.pt (PyTorch's
    # zip format: the path ends .pt) resumes in real PyTorch. Both generators are PyTorch's mt19937, so a
    # resumed run draws the same batches on either side: its weights checksum, its loss at iteration 10 (the
    # saved weights) and at 11 (after one AdamW step from the saved optimizer state) agree to float32 rounding.
    import shutil

    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.setattr(torch, "compile", lambda m: m)
    flags, rng = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32), torch.get_rng_state()

    def on_pytorch(args):
        monkeypatch.setattr(sys, "argv", ["train.py", *args])
        sys.modules.pop("model", None)
        runpy.run_path(str(project / "train.py"), run_name="__main__")
        return capsys.readouterr().out

    def here(args):
        return _run(["train.py", *args], project)[0]

    def resumed(out):
        checksum = float(re.search(r"^weights checksum (\S+)", out, re.MULTILINE).group(1))
        losses = {int(i): float(v) for i, v in re.findall(r"^iter (\d+): loss ([0-9.]+)", out, re.MULTILINE)}
        assert "resumed at iter 10" in out and sorted(losses) == [10, 11], out
        return checksum, losses[10], losses[11]

    try:
        trained, figures = {"pytorch": tmp_path / "pt", "alias": tmp_path / "mt"}, {}
        on_pytorch([f"--out_dir={trained['pytorch']}", "--max_iters=10", "--compile=False"])
        here([f"--out_dir={trained['alias']}", "--max_iters=10", "--compile=False"])
        for origin, out_dir in trained.items():
            results = {}
            for runner, run in (("pytorch", on_pytorch), ("alias", here)):
                work = tmp_path / f"{origin}_on_{runner}"
                shutil.copytree(out_dir, work)
                results[runner] = resumed(run([f"--out_dir={work}", "--init_from=resume", "--max_iters=11",
                                               "--compile=False"]))
            figures[origin] = results
            (c_pt, l10_pt, l11_pt), (c_mt, l10_mt, l11_mt) = results["pytorch"], results["alias"]
            assert c_mt == pytest.approx(c_pt, rel=1e-9), origin
            assert l10_mt == pytest.approx(l10_pt, abs=2e-4) and l11_mt == pytest.approx(l11_pt, abs=2e-4), (origin, results)
        print(f"checkpoints resumed (checksum, loss 10, loss 11) by origin and runner: {figures}")  # pytest -s
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = flags
        torch.set_rng_state(rng)
        sys.modules.pop("model", None)


def _model_namespace(alias: bool) -> dict:
    ns = {"__name__": "model"}
    code = compile(textwrap.dedent(MODEL), "model.py", "exec")
    if alias:
        with torch_alias():
            exec(code, ns)  # noqa: S102 - our own test source
    else:
        exec(code, ns)  # noqa: S102
    return ns


def test_the_scripts_model_agrees_with_pytorch():
    # both attention paths (scaled_dot_product_attention; masked_fill(tril == 0, -inf) + softmax), weight
    # tying, the loss and every gradient, from the same weights and a random upstream gradient
    t_ns, m_ns = _model_namespace(False), _model_namespace(True)
    idx = np.random.default_rng(1).integers(0, 32, (3, 16))
    up = np.random.default_rng(2).standard_normal((3, 16, 32)).astype(np.float32)
    with torch.random.fork_rng():  # PyTorch's global generator is left as it was
        torch.manual_seed(0)
        tm = t_ns["GPT"](t_ns["GPTConfig"]())
    t_logits, t_loss = tm(torch.tensor(idx), torch.tensor(idx))
    (t_logits * torch.tensor(up)).sum().backward()
    weights = {k: v.detach().numpy() for k, v in tm.state_dict().items()}
    t_grads = [(n, p.grad.numpy()) for n, p in tm.named_parameters()]
    with torch_alias():  # PyTorch's own code must not run in here: its `import torch` would get the alias
        mm = m_ns["GPT"](m_ns["GPTConfig"]())
        mm.load_state_dict(weights)
        logits, loss = mm(mt.tensor(idx), mt.tensor(idx))
        (logits * mt.tensor(up)).sum().backward()
        np.testing.assert_allclose(logits.detach().numpy(), t_logits.detach().numpy(), rtol=1e-4, atol=1e-5)
        assert loss.item() == pytest.approx(t_loss.item(), rel=1e-5)
        assert [n for n, _ in mm.named_parameters()] == [n for n, _ in t_grads]
        for (n, p), (_, g) in zip(mm.named_parameters(), t_grads):
            np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-3, atol=1e-5, err_msg=n)
        mm.eval()
        mt.manual_seed(0)
        out = mm.generate(mt.tensor(idx[:1, :4]), 5, top_k=3)
        assert out.shape == (1, 9) and out.dtype == np.int64 and (out[:, :4].numpy() == idx[:1, :4]).all()


# ------------------------------------------------------------------------------------------ once blockers


def test_a_reduction_result_saves_in_a_checkpoint_dict(tmp_path):
    # nanoGPT saves best_val_loss = losses.mean(): a reduction's 0-d result is an array, not a NumPy scalar
    mt.save({"best_val_loss": mt.zeros(3).mean()}, tmp_path / "c.pt")
    assert float(mt.load(tmp_path / "c.pt")["best_val_loss"]) == 0.0


# ------------------------------------------------------------------------------------------ Module members


class _Net:
    """The same small model built in both frameworks from one seed's weights."""

    @staticmethod
    def build(lib, weights=None):
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)
                self.h = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
                self.head = nn.Linear(4, 10, bias=False)
                self.emb.weight = self.head.weight
                self.register_buffer("mask", lib.tril(lib.ones(3, 3)).view(1, 1, 3, 3))
                self.register_buffer("tmp", lib.zeros(2), persistent=False)

            def forward(self, x):
                y = self.emb(x)
                for layer in self.h:
                    y = layer(y)
                return self.head(y)

        net = Net()
        if weights is not None:
            net.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
        return net


def _pair():
    tnet = _Net.build(torch)
    weights = {k: v.detach().numpy().copy() for k, v in tnet.state_dict().items()}
    return tnet, _Net.build(mt, weights)


def test_traversal_names_and_orders_as_pytorch():
    tnet, net = _pair()
    for call in (lambda m: m.named_parameters(), lambda m: m.named_parameters(remove_duplicate=False),
                 lambda m: m.named_buffers(), lambda m: m.named_modules(), lambda m: m.state_dict().items()):
        assert [n for n, _ in call(net)] == [n for n, _ in call(tnet)]
    assert sum(p.numel() for p in net.parameters()) == sum(p.numel() for p in tnet.parameters())


def test_get_parameter_and_get_buffer_as_pytorch():
    tnet, net = _pair()
    assert net.get_parameter("h.1.weight") is net.h[1].weight and net.get_buffer("mask") is net.mask
    for target in ("h.1.nope", "mask", "h.5.weight"):
        with pytest.raises(AttributeError) as ours:
            net.get_parameter(target)
        with pytest.raises(AttributeError) as theirs:
            tnet.get_parameter(target)
        if target != "h.5.weight":  # a missing submodule is named in our own words
            assert str(ours.value) == str(theirs.value)
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        net.get_buffer("head.weight")


def test_module_bfloat16_casts_as_pytorch():
    tnet, net = _pair()
    assert net.bfloat16() is net and tnet.bfloat16() is tnet
    for (name, p), (tname, tp) in zip(net.named_parameters(), tnet.named_parameters()):
        assert name == tname and p.dtype == amp.bfloat16 and str(tp.dtype) == "torch.bfloat16" and p.requires_grad
        np.testing.assert_array_equal(p.array.astype(np.float32), tp.detach().float().numpy())
    assert net.to("cpu", non_blocking=True) is net  # non_blocking accepted, as PyTorch's


def test_load_state_dict_result_prints_as_pytorch():
    tnet, net = _pair()
    assert repr(net.load_state_dict(net.state_dict())) == repr(tnet.load_state_dict(tnet.state_dict()))
    partial = {k: v for k, v in net.state_dict().items() if k != "mask"}
    assert net.load_state_dict(partial, strict=False).missing_keys == ["mask"]


def _hooked(net, record, replace=False):
    def hook(module, grad_input, grad_output):
        record.append((len(grad_input), [g.detach().numpy().copy() for g in grad_input],
                       [g.detach().numpy().copy() for g in grad_output]))
        if replace:
            return tuple(g * 2 for g in grad_input)

    return net.h[1].register_full_backward_hook(hook)


@pytest.mark.parametrize("replace", [False, True])
def test_full_backward_hook_sees_pytorchs_gradients(replace):
    tnet, net = _pair()
    x = np.array([[1, 2, 3], [4, 5, 6]])
    up = np.random.default_rng(0).standard_normal((2, 3, 10)).astype(np.float32)  # a random upstream gradient
    rec_t, rec_m = [], []
    ht, hm = _hooked(tnet, rec_t, replace), _hooked(net, rec_m, replace)
    tnet(torch.tensor(x)).backward(torch.tensor(up))
    net(mt.tensor(x)).backward(mt.tensor(up))
    assert len(rec_t) == len(rec_m) == 1 and rec_m[0][0] == rec_t[0][0] == 1
    for ours, theirs in zip(rec_m[0][1] + rec_m[0][2], rec_t[0][1] + rec_t[0][2]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    # a replaced grad_input flows on to the layers below
    np.testing.assert_allclose(net.h[0].weight.grad.numpy(), tnet.h[0].weight.grad.numpy(), rtol=1e-4, atol=1e-6)
    ht.remove(), hm.remove()
    rec_m.clear()
    net(mt.tensor(x)).sum().backward()
    assert rec_m == []  # removed


def test_full_backward_hook_without_input_grads_and_pre_hook():
    lin, calls = mt.nn.Linear(3, 2), []
    lin.register_full_backward_pre_hook(lambda m, go: calls.append(("pre", go[0].shape)) or (go[0] * 0,))
    lin.register_full_backward_hook(lambda m, gi, go: calls.append(("hook", gi, float(go[0].abs().sum()))))
    lin(mt.ones(4, 3)).sum().backward()
    # no input needs a gradient: the hook fires with grad_input (None,) once grad_output is known;
    # the pre-hook's zeroed grad_output is what the hook and the weights see
    assert calls == [("pre", (4, 2)), ("hook", (None,), 0.0)]
    assert float(lin.weight.grad.abs().sum()) == 0.0
    with mt.no_grad():
        calls.clear()
        lin(mt.ones(4, 3, requires_grad=True))
    assert calls == []
    with pytest.raises(TypeError, match="callable"):
        lin.register_full_backward_hook(3)


def test_compile_keeps_the_module_and_orig_mod_points_to_it():
    from minitorch_ln.interop.torch_namespaces import compile as mt_compile

    net = _Net.build(mt)
    assert mt_compile(net) is net and net._orig_mod is net
    assert list(net.state_dict()) == [k for k, _ in _Net.build(mt).state_dict().items()]  # no prefix here


# ------------------------------------------------------------------------------------------ optimizers


def _groups(net):
    decay = [p for n, p in net.named_parameters() if p.dim() >= 2]
    nodecay = [p for n, p in net.named_parameters() if p.dim() < 2]
    return [{"params": decay, "weight_decay": 0.1}, {"params": nodecay, "weight_decay": 0.0}]


@pytest.mark.parametrize("name, kwargs", [("AdamW", {"fused": False}), ("AdamW", {"foreach": None}),
                                          ("Adam", {"fused": True, "capturable": False}),
                                          ("SGD", {"foreach": False, "momentum": 0.9})])
def test_optimizer_implementation_switches_are_accepted_and_change_nothing(name, kwargs):
    tnet, net = _pair()
    assert set(inspect.signature(getattr(torch.optim, name)).parameters) <= set(
        inspect.signature(getattr(mt.optim, name)).parameters)
    t_opt = getattr(torch.optim, name)(_groups(tnet), lr=1e-2, **kwargs)
    m_opt = getattr(mt.optim, name)(_groups(net), lr=1e-2, **kwargs)
    assert sorted(m_opt.param_groups[0]) == sorted(t_opt.param_groups[0])
    assert {k: m_opt.param_groups[1][k] for k in kwargs} == {k: t_opt.param_groups[1][k] for k in kwargs}
    x = np.array([[1, 2, 3]])
    for _ in range(3):
        for lib, n, opt in ((torch, tnet, t_opt), (mt, net, m_opt)):
            loss = n(lib.tensor(x)).pow(2).mean()
            loss.backward()
            lib.nn.utils.clip_grad_norm_(n.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
    for (k, a), (_, b) in zip(net.state_dict().items(), tnet.state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    assert all(p.grad is None for p in net.parameters())


def test_optimizer_switch_errors_as_pytorch():
    net = _Net.build(mt)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        mt.optim.AdamW(net.parameters(), fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="differentiable=True"):
        mt.optim.SGD(net.parameters(), differentiable=True)


def test_optimizer_state_dict_round_trip_through_a_checkpoint(tmp_path):
    tnet, net = _pair()
    opt = mt.optim.AdamW(_groups(net), lr=1e-2, betas=(0.9, 0.95))
    for _ in range(2):
        net(mt.tensor([[1, 2, 3]])).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    t_opt = torch.optim.AdamW(_groups(tnet), lr=1e-2, betas=(0.9, 0.95))
    tnet(torch.tensor([[1, 2, 3]])).sum().backward()
    t_opt.step()
    sd, t_sd = opt.state_dict(), t_opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [g["params"] for g in t_sd["param_groups"]]
    assert sorted(sd["state"]) == sorted(t_sd["state"]) and sorted(sd["state"][0]) == sorted(t_sd["state"][0])
    mt.save({"optimizer": sd, "iter_num": 2}, tmp_path / "ckpt.pt")
    opt2 = mt.optim.AdamW(_groups(net), lr=1e-3)
    opt2.load_state_dict(mt.load(tmp_path / "ckpt.pt")["optimizer"])
    assert opt2.param_groups[0]["lr"] == 1e-2 and opt2.param_groups[1]["weight_decay"] == 0.0
    old = {"state": {}, "param_groups": [{k: v for k, v in g.items() if k not in ("fused", "foreach")}
                                         for g in sd["param_groups"]]}
    opt2.load_state_dict(old)  # a state dict from before these keys: PyTorch's defaults fill them in
    assert opt2.param_groups[0]["fused"] is None and opt2.param_groups[1]["foreach"] is None
    opt2.load_state_dict(mt.load(tmp_path / "ckpt.pt")["optimizer"])
    for p, q in zip(opt.state, opt2.state):
        assert p is q and opt2.state[q]["step"] == 2
        np.testing.assert_array_equal(opt.state[p]["exp_avg_sq"].numpy(), opt2.state[q]["exp_avg_sq"].numpy())
    assert sorted(sd["param_groups"][0]) == sorted(t_sd["param_groups"][0])
    opt2.load_state_dict(t_sd)  # PyTorch's own (its step a 0-d tensor)
    assert all(s["step"] == 1 for s in opt2.state.values())
    np.testing.assert_allclose(opt2.state[net.h[0].weight]["exp_avg"].numpy(),
                               t_opt.state[tnet.h[0].weight]["exp_avg"].numpy())


# ------------------------------------------------------------------------------------------ data


def test_random_sampler_with_replacement_draws_lazily_in_chunks():
    # minGPT: RandomSampler(ds, replacement=True, num_samples=int(1e10)); drawing them all would need 75 GiB
    sampler = RandomSampler(range(7), replacement=True, num_samples=int(1e10))
    it = iter(sampler)
    first = [next(it) for _ in range(100)]
    assert len(sampler) == int(1e10) and all(0 <= i < 7 for i in first) and len(set(first)) == 7
    assert len(list(RandomSampler(range(7), replacement=True, num_samples=70))) == 70
    assert len(list(RandomSampler(range(7), replacement=True, num_samples=5))) == 5
