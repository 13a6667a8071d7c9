"""The ``minitorch-ln`` command (also ``python -m minitorch_ln``).

Each subcommand is one ``_add_<name>(subparsers)`` function that builds its parser and sets
``func`` to the function that runs it; :data:`SUBCOMMANDS` lists them in ``--help`` order, so a new
subcommand is one function and one entry. A ``func`` returns the exit code. Errors a user can cause
(a missing file, a bad option, a corrupt checkpoint, no GPU) print one clear line to stderr and exit
with status 1; argparse's own usage errors exit with 2.
"""

from __future__ import annotations

import argparse
import os
import sys

from .cli_args import allow_negative_values, check_seed, parse_shape
from .exercise_command import register_exercise_command
from .graph_command import register_graph_command
from .onnx_command import register_onnx_commands

EXIT_USER_ERROR = 1


def _user_errors() -> tuple:
    """Exceptions that mean bad input, reported in one line rather than a traceback."""
    from ..backend import DeviceError  # noqa: PLC0415
    from .checkpoint import CheckpointError, RunDirLocked  # noqa: PLC0415
    from .corpus import CorpusError  # noqa: PLC0415
    from .dataset import DatasetError  # noqa: PLC0415
    from .tokenizer import TokenizerError  # noqa: PLC0415
    from ..serialization import SerializationError  # noqa: PLC0415
    from .train import ConfigError  # noqa: PLC0415

    return (DeviceError, CheckpointError, RunDirLocked, CorpusError, DatasetError, TokenizerError,
            SerializationError, ConfigError, FileNotFoundError)


def _fail(command: str, exc: BaseException) -> int:
    print(f"minitorch-ln {command}: error: {exc}", file=sys.stderr)
    return EXIT_USER_ERROR


def _out_of_memory(command: str, what: str, hint: str) -> int:
    print(f"minitorch-ln {command}: error: out of memory while {what}; {hint}", file=sys.stderr)
    return EXIT_USER_ERROR


# ------------------------------------------------------------------------------------------ info


def _cmd_info(args) -> int:
    import numpy as np  # noqa: PLC0415

    from .. import backend, kernels  # noqa: PLC0415
    from .._version import __version__  # noqa: PLC0415

    print(f"minitorch_ln {__version__}")
    print(f"python       {sys.version.split()[0]}")
    print(f"numpy        {np.__version__}")
    try:
        import numba  # noqa: PLC0415
    except Exception:  # noqa: BLE001 - not installed, or an installation that fails to import
        numba = None
    if numba is None:
        print("numba        not installed (the CPU LayerNorm runs on the slower NumPy kernels: pip install numba)")
    else:
        jit_off = "; NUMBA_DISABLE_JIT is set: the loops run as plain Python, about 100x slower" \
            if numba.config.DISABLE_JIT else ""
        print(f"numba        {numba.__version__}{jit_off}")
    print(f"cpu kernels  {kernels.get_cpu_kernels()}, {kernels.get_num_threads()} thread(s) "
          "(MINITORCH_LN_CPU_KERNELS, MINITORCH_LN_NUM_THREADS)")
    try:
        import cupy  # noqa: PLC0415

        print(f"cupy         {cupy.__version__}")
    except ImportError:
        print("cupy         not installed (GPU support: pip install 'minitorch-ln[cuda12]' or '[cuda13]')")
    if backend.cuda_is_available():
        cp = backend.cupy_or_error()
        n = cp.cuda.runtime.getDeviceCount()
        names = [cp.cuda.runtime.getDeviceProperties(i)["name"].decode() for i in range(n)]
        print(f"gpu          {n} usable: {', '.join(names)}")
    else:
        print("gpu          none usable")
    return 0


def _add_info(sub) -> None:
    p = sub.add_parser("info", help="versions, and whether CuPy and a GPU are usable")
    p.set_defaults(func=_cmd_info)


# ------------------------------------------------------------------------------------------ train

_TRAIN_HELP = """\
Train a character-level GPT (nn.GPT) with AdamW, linear warm-up and cosine decay, and gradient
clipping; evaluate on a held-out split; write checkpoints, metrics.jsonl, loss.png and a sample to
--out.

Without --text the corpus is built in: the docstrings of this Python's standard library (every
module, class and function docstring in its .py files, read with `ast`, never imported), about
1.7 million characters of English technical prose that every CPython installation carries. It
differs between Python versions, so the run records its size and SHA-256.

--resume continues the run in --out exactly where it stopped (same batches, same losses, the same
final weights); --steps is the run's total, and only --steps and --device may change on resume.
Ctrl-C, a plain `kill` (SIGTERM) or a closed terminal (SIGHUP) saves a checkpoint and exits (status
130); a NaN/Inf loss stops the run (status 3) naming the step and the op, keeping the last good
checkpoint. A run that stopped before its first checkpoint can simply be started again with the
same --out. One run at a time writes an --out: a second is refused, naming the first's process.

--text is read in bounded memory: its token ids go to a memory-mapped file in the temporary
directory ($TMPDIR), 2 bytes a character, and a text too large for the space there is refused.
"""


def _train_options(p) -> None:
    from .train import TrainConfig  # noqa: PLC0415

    d = TrainConfig()

    def opt(flag, help_text, **kw):
        # default None = "not given", so that --resume can tell a changed option from a default
        p.add_argument(flag, default=None, help=help_text, **kw)

    opt("--text", "a UTF-8 text file to train on, with at least 2 distinct characters (default: the standard "
        "library's docstrings)", metavar="PATH")
    opt("--preset", f"model size (default {d.preset})", choices=["tiny", "small"])
    opt("--steps", f"total optimizer steps of the run (default {d.steps})", type=int)
    opt("--batch-size", f"sequences per step (default {d.batch_size})", type=int)
    opt("--block-size", f"context length in characters (default {d.block_size})", type=int)
    opt("--lr", f"peak learning rate (default {d.lr:g})", type=float)
    opt("--min-lr", f"learning rate at the end of the cosine decay (default {d.min_lr:g})", type=float)
    opt("--warmup-steps", f"linear warm-up steps (default {d.warmup_steps}, capped at a tenth of the schedule "
        "for short runs: --steps 200 warms up over 20)", type=int)
    opt("--lr-decay-steps", "step where the cosine decay reaches --min-lr (default: --steps)", type=int)
    opt("--weight-decay", f"AdamW weight decay of weight matrices (default {d.weight_decay:g})", type=float)
    opt("--grad-clip", f"clip the global gradient norm to this; 0 disables (default {d.grad_clip:g})", type=float)
    opt("--dropout", f"dropout probability (default {d.dropout:g})", type=float)
    opt("--norm", f"LayerNorm placement: pre (Pre-LN) or post (Post-LN) (default {d.norm})", choices=["pre", "post"])
    opt("--device", f"cpu, cuda or cuda:N (default {d.device})")
    opt("--seed", f"random seed (default {d.seed})", type=int)
    opt("--eval-interval", f"evaluate the held-out loss every N steps (default {d.eval_interval})", type=int)
    opt("--eval-batches", f"held-out batches per evaluation (default {d.eval_batches})", type=int)
    opt("--checkpoint-interval", "write a checkpoint every N steps (default: --eval-interval)", type=int)
    opt("--val-fraction", f"fraction of the text held out (default {d.val_fraction:g})", type=float)
    p.add_argument("--out", default="runs/train", metavar="DIR", help="run directory (default runs/train)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    p.add_argument("--nproc", type=int, default=None, metavar="N", help="train data-parallel on N ranks (MPI)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (for logs)")
    p.add_argument("--sample-chars", type=int, default=None, metavar="N",
                   help="length of the sample printed at the end (default 300)")


def _cmd_train(args) -> int:
    from .train import ConfigError, TrainConfig, train  # noqa: PLC0415

    if args.nproc is not None:  # N ranks through mpiexec, rank 0 writing (apps/train_parallel.py)
        from .train_parallel import launch_train  # noqa: PLC0415

        return launch_train(args.nproc, args.argv)
    names = [f for f in TrainConfig.__dataclass_fields__]
    overrides = {n: getattr(args, n) for n in names if hasattr(args, n)}
    try:
        extra = {} if args.sample_chars is None else {"sample_chars": args.sample_chars}
        if args.sample_chars is not None and args.sample_chars < 0:
            raise ConfigError(f"--sample-chars must be >= 0, got {args.sample_chars}")
        if args.seed is not None:
            check_seed(args.seed)
        if args.text == "-":
            raise ConfigError("--text -: reading the text from standard input is not supported (the run records "
                              "the file to check it on --resume); save the text to a file and pass its path")
        summary = train(overrides, out_dir=args.out, resume=args.resume, progress=not args.no_progress, **extra)
    except _user_errors() + (ValueError,) as exc:
        return _fail("train", exc)
    except OSError as exc:  # a write that failed outside a checkpoint (metrics.jsonl, sample.txt): a full disk
        where = f" ({exc.filename})" if exc.filename else ""
        return _fail("train", f"cannot write into --out {args.out}{where}: {exc.strerror or exc}")
    except MemoryError:
        return _out_of_memory("train", "building the model or a batch (activations grow with --batch-size x "
                              "--block-size, attention with --block-size squared)",
                              "use a smaller --batch-size, --block-size or --preset")
    except KeyboardInterrupt:  # a second Ctrl-C while the first was being handled
        print("minitorch-ln train: interrupted again: stopped without saving; the last checkpoint is intact",
              file=sys.stderr)
        return 130
    return summary["exit_code"]


def _add_train(sub) -> None:
    p = sub.add_parser("train", help="train a character-level GPT on text (default: stdlib docstrings)",
                       description=_TRAIN_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    _train_options(p)
    p.set_defaults(func=_cmd_train)


# ------------------------------------------------------------------------------------------ sample


_BARE_FLAGS = ("preset", "config", "vocab_size", "block_size", "n_layer", "n_head", "d_model", "norm")


def _load_for_sampling(args):
    """``(model, tokenizer)``: a run/checkpoint directory, or a bare .safetensors file with a config."""
    from .sampling import load_model, load_weights  # noqa: PLC0415
    from .tokenizer import CharTokenizer  # noqa: PLC0415

    given = [f"--{f.replace('_', '-')}" for f in _BARE_FLAGS + ("vocab_from",) if getattr(args, f) is not None]
    if not (os.path.isfile(args.checkpoint) and args.checkpoint.endswith(".safetensors")):
        if given:
            raise ValueError(f"{', '.join(given)} apply to a bare .safetensors weights file only; the checkpoint "
                             f"{args.checkpoint} carries its own configuration")
        model, tok, _ = load_model(args.checkpoint, device=args.device)
        return model, tok
    fields = {f: getattr(args, f) for f in _BARE_FLAGS[2:-1]}
    if args.norm is not None:
        fields["norm_first"] = args.norm == "pre"
    model, tok, _ = load_weights(args.checkpoint, args.preset, args.config, device=args.device, **fields)
    if args.vocab_from is not None:  # the characters of the training text, numbered as `train` numbers them
        from .corpus import iter_clean_text  # noqa: PLC0415

        chars = set()
        for piece in iter_clean_text(args.vocab_from):
            chars.update(piece)
        tok = CharTokenizer(chars)
        if tok.vocab_size != model.config.vocab_size:
            raise ValueError(f"--vocab-from {args.vocab_from} has {tok.vocab_size} distinct characters, but the "
                             f"model has {model.config.vocab_size} token embeddings")
    if tok is None:
        from .sampling import IdCodec  # noqa: PLC0415

        tok = IdCodec(model.config.vocab_size)  # no vocabulary: token ids in and out
    return model, tok


def _cmd_sample(args) -> int:
    from .. import backend  # noqa: PLC0415
    from .sampling import generate_text  # noqa: PLC0415

    try:
        if args.max_new_tokens < 0:
            raise ValueError(f"--max-new-tokens must be >= 0, got {args.max_new_tokens}")
        if not args.temperature >= 0:
            raise ValueError(f"--temperature must be >= 0 (0: greedy, the likeliest token each step), "
                             f"got {args.temperature}")
        if args.top_k is not None and args.top_k < 1:
            raise ValueError(f"--top-k must be >= 1, got {args.top_k}")
        check_seed(args.seed)
        if args.device is not None and backend.Device(args.device).type == "cuda":
            backend.cupy_or_error()
        model, tok = _load_for_sampling(args)
        prompt = args.prompt if args.prompt is not None else ("\n" if "\n" in tok.stoi else tok.chars[0])
        backend.manual_seed(args.seed)
        text = generate_text(model, tok, prompt, args.max_new_tokens, args.temperature, args.top_k)
    except _user_errors() + (ValueError,) as exc:
        return _fail("sample", exc)
    except MemoryError:
        return _out_of_memory("sample", "sampling", "use a smaller --max-new-tokens")
    print(text)  # the prompt, the generated characters, and one newline
    return 0


def _add_sample(sub) -> None:
    p = sub.add_parser("sample", help="generate text from a checkpoint written by `train`, or a .safetensors file",
                       description="Continue a prompt with a trained GPT. --checkpoint is a run directory, a "
                                   "ckpt-* directory, or a bare .safetensors state dict of nn.GPT (e.g. written "
                                   "by PyTorch from the same-named model) whose configuration is given with "
                                   "--config or --preset and the size flags; its vocabulary comes from --config "
                                   "('tokenizer' or 'chars') or --vocab-from, else prompt and output are token ids.")
    p.add_argument("--checkpoint", default="runs/train", metavar="PATH",
                   help="a run directory (its latest checkpoint), a ckpt-* directory, or a .safetensors weights "
                        "file (default runs/train)")
    p.add_argument("--prompt", default=None, help="text to continue (default: a newline)")
    p.add_argument("--max-new-tokens", type=int, default=300, help="characters to generate (default 300)")
    p.add_argument("--temperature", type=float, default=1.0,
                   help="softmax temperature; 0: greedy decoding, the likeliest character each step (default 1.0)")
    p.add_argument("--top-k", type=int, default=None, help="sample only among the k likeliest characters")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: the run's)")
    g = p.add_argument_group("a bare .safetensors weights file: its configuration")
    g.add_argument("--config", default=None, metavar="JSON",
                   help="a JSON file or inline object of GPTConfig fields, or a run's config.json")
    g.add_argument("--preset", default=None, choices=["tiny", "small"], help="the model size it was built with")
    for flag, what in (("--vocab-size", "vocabulary size (default: from tok_emb.weight)"),
                       ("--block-size", "context length (default: from pos_emb.weight)"),
                       ("--n-layer", "blocks"), ("--n-head", "attention heads"), ("--d-model", "model width")):
        g.add_argument(flag, type=int, default=None, help=what)
    g.add_argument("--norm", default=None, choices=["pre", "post"], help="LayerNorm placement (default pre)")
    g.add_argument("--vocab-from", default=None, metavar="TEXT",
                   help="the training text: its characters, sorted, are the vocabulary (as `train` builds it)")
    allow_negative_values(p)
    p.set_defaults(func=_cmd_sample)


# ------------------------------------------------------------------------------------------ gradcheck


def _cmd_gradcheck(args) -> int:
    from .gradcheck_targets import TARGETS, run_gradcheck  # noqa: PLC0415

    if args.list or args.name is None:
        width = max(len(n) for n in TARGETS)
        for name, t in TARGETS.items():
            print(f"{name:<{width}}  {t.description} (default shape {' '.join(map(str, t.default_shape))})")
        return 0 if args.list else _fail("gradcheck", ValueError("name an op or module to check (see --list)"))
    try:
        shape = None if args.shape is None else parse_shape(args.shape)
        check_seed(args.seed)
        ok = run_gradcheck(args.name, shape=shape, eps=args.eps, atol=args.atol, rtol=args.rtol,
                           dtype=args.dtype, seed=args.seed, device=args.device, fast_mode=args.fast_mode)
    except _user_errors() + (ValueError, TypeError) as exc:
        return _fail("gradcheck", exc)
    except MemoryError:
        return _out_of_memory("gradcheck", "building the Jacobians", "use a smaller --shape or --fast-mode")
    return 0 if ok else 1


def _add_gradcheck(sub) -> None:
    p = sub.add_parser(
        "gradcheck", help="finite-difference gradient check of an op or module, with a report",
        description="Compare an op's or module's backward with central finite differences of its forward "
                    "(every element of the Jacobian) and print the largest errors. float64 passes; try "
                    "--dtype float32 to watch rounding make a correct backward fail.",
    )
    p.add_argument("name", nargs="?", help="the op or module to check (see --list)")
    p.add_argument("--list", action="store_true", help="list the ops and modules that can be checked")
    p.add_argument("--shape", nargs="+", default=None,
                   help="input shape, e.g. 2,3,4 or 2 3 4 (default: the op's)")
    p.add_argument("--eps", type=float, default=1e-6, help="finite-difference step, in (0, 0.1] (default 1e-6)")
    p.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance, >= 0 (default 1e-5)")
    p.add_argument("--rtol", type=float, default=1e-3, help="relative tolerance, >= 0 (default 1e-3)")
    p.add_argument("--fast-mode", action="store_true",
                   help="check uᵀJv for random u, v instead of every Jacobian entry (for large shapes)")
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"], help="(default float64)")
    p.add_argument("--seed", type=int, default=0, help="random seed for the inputs (default 0)")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    allow_negative_values(p)
    p.set_defaults(func=_cmd_gradcheck)


# ------------------------------------------------------------------------------------------ graph


def _add_graph(sub) -> None:
    register_graph_command(sub)


# ------------------------------------------------------------------------------------------ run


def _cmd_run(args) -> int:
    from .launch import run_command  # noqa: PLC0415 - with --nproc-per-node N: N ranks through mpiexec

    return run_command(args.script, args.args, args.nproc_per_node, cuda_as_cpu=args.cuda_as_cpu)


def _add_run(sub) -> None:
    p = sub.add_parser("run", help="run a PyTorch script on minitorch_ln (import torch gives minitorch_ln)",
                       description="Run SCRIPT.py as `python SCRIPT.py args...` would, with `import torch` resolved "
                                   "to minitorch_ln (docs/torch_compat.md); its exit status is the command's.")
    p.add_argument("--nproc-per-node", type=int, default=None, metavar="N",
                   help="start N ranks through MPI with torchrun's environment (docs/distributed.md)")
    p.add_argument("--cuda-as-cpu", action="store_true",
                   help="make every 'cuda'/'cuda:N' device the CPU, for a script that hard-codes the GPU "
                        "(nanoGPT's DDP path; docs/distributed.md)")
    p.add_argument("script", metavar="SCRIPT.py", help="the script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments, passed on as they are")
    p.set_defaults(func=_cmd_run)


# ------------------------------------------------------------------------------------------ parser

SUBCOMMANDS = [_add_info, _add_train, _add_sample, register_onnx_commands, _add_gradcheck, _add_graph, _add_run,
               register_exercise_command]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="minitorch-ln",
        description="minitorch_ln: a tensor/autograd mini-framework built around LayerNorm.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # train --nproc re-runs it in each rank
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader went away (`minitorch-ln info | head -3`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the interpreter's final flush cannot fail again
        return 141  # 128 + SIGPIPE, as a shell reports it
