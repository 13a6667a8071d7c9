"""``minitorch-ln export`` and ``minitorch-ln sample --onnx``: the trained GPT out to ONNX, and back in
through ONNX Runtime.

``export --checkpoint runs/train model.onnx`` loads the checkpoint as ``sample`` does, exports the
GPT with dynamic batch and sequence axes (input ``idx`` ``(batch, seq)`` int64, output ``logits``
``(batch, seq, vocab)``) and stores the tokenizer and ``block_size`` in the model's metadata, so
``sample --onnx model.onnx`` needs nothing else: it feeds the last ``block_size`` tokens to ONNX
Runtime and draws each next token exactly as ``GPT.generate`` does (same seeded generator, same
temperature and top-k rule).
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

META_TOKENIZER, META_BLOCK = "minitorch_ln.tokenizer", "minitorch_ln.block_size"


def _fail(command: str, exc) -> int:
    print(f"minitorch-ln {command}: error: {exc}", file=sys.stderr)
    return 1


def _user_errors() -> tuple:
    from ..backend import DeviceError
    from ..onnx.errors import OnnxExporterError
    from .checkpoint import CheckpointError
    from .tokenizer import TokenizerError

    return (CheckpointError, DeviceError, OnnxExporterError, TokenizerError, FileNotFoundError, ValueError, ImportError)


def export_checkpoint(checkpoint, out_path, opset_version=None):
    """Export the GPT of a checkpoint (run or ``ckpt-*`` directory) to ``out_path``; returns the ModelProto."""
    from ..onnx import export
    from ..tensor import tensor
    from .sampling import load_model

    model, tok, _ = load_model(checkpoint, device="cpu")
    T = min(8, model.config.block_size)
    idx = tensor(np.arange(2 * T, dtype=np.int64).reshape(2, T) % model.config.vocab_size)
    proto = export(model, (idx,), None, input_names=["idx"], output_names=["logits"], opset_version=opset_version,
                   dynamic_axes={"idx": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}})
    for key, value in ((META_TOKENIZER, json.dumps(tok.to_dict())), (META_BLOCK, str(model.config.block_size))):
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    with open(out_path, "wb") as fh:
        fh.write(proto.SerializeToString())
    return proto


def _session(path):
    try:
        import onnxruntime as ort
    except ImportError:
        raise ImportError("sampling from ONNX needs onnxruntime: pip install 'minitorch-ln[onnx]'") from None
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no ONNX model at {path}")
    try:
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - ORT raises its own types for a corrupt file
        raise ValueError(f"{path} is not an ONNX model ONNX Runtime can load ({type(exc).__name__}: {exc})") from None
    meta = sess.get_modelmeta().custom_metadata_map
    if META_BLOCK not in meta or [i.name for i in sess.get_inputs()] != ["idx"]:
        raise ValueError(f"{path} was not written by `minitorch-ln export` (no idx input and block_size metadata)")
    return sess, meta


def sample_onnx(path, prompt, max_new_tokens, temperature=1.0, top_k=None, seed=0) -> str:
    """``prompt`` and ``max_new_tokens`` tokens drawn from the exported GPT through ONNX Runtime."""
    from .. import backend
    from ..nn.gpt import _sample
    from .tokenizer import CharTokenizer

    sess, meta = _session(path)
    tok = CharTokenizer.from_dict(json.loads(meta[META_TOKENIZER]))
    block = int(meta[META_BLOCK])
    if prompt is None:
        prompt = "\n" if "\n" in tok.stoi else tok.chars[0]
    if not prompt:
        raise ValueError("the prompt is empty: give at least one character")
    out = tok.encode(prompt)[None, :].astype(np.int64)  # (1, T)
    backend.manual_seed(seed)
    gen = backend.generator("cpu")
    for _ in range(max_new_tokens):
        logits = sess.run(None, {"idx": out[:, -block:]})[0][:, -1].astype(np.float64)  # (1, V)
        out = np.concatenate([out, _sample(np, gen, logits, temperature, top_k)[:, None]], axis=1)
    return tok.decode(out[0])


def _cmd_export(args) -> int:
    try:
        proto = export_checkpoint(args.checkpoint, args.output, args.opset)
    except _user_errors() as exc:
        return _fail("export", exc)
    n_ln = sum(n.op_type == "LayerNormalization" for n in proto.graph.node)
    print(f"wrote {args.output}: {len(proto.graph.node)} nodes ({n_ln} LayerNormalization), opset "
          f"{proto.opset_import[0].version}, inputs idx (batch, seq) -> logits (batch, seq, vocab)")
    return 0


def _sample_or_onnx(original):
    def run(args) -> int:
        if args.onnx is None:
            return original(args)
        try:
            if args.max_new_tokens < 0:
                raise ValueError(f"--max-new-tokens must be >= 0, got {args.max_new_tokens}")
            if args.top_k is not None and args.top_k < 1:
                raise ValueError(f"--top-k must be >= 1, got {args.top_k}")
            if not args.temperature >= 0:
                raise ValueError(f"--temperature must be >= 0, got {args.temperature}")
            text = sample_onnx(args.onnx, args.prompt, args.max_new_tokens, args.temperature, args.top_k, args.seed)
        except _user_errors() as exc:
            return _fail("sample", exc)
        print(text)
        return 0
    return run


def register_onnx_commands(sub) -> None:
    """Add ``export`` and the ``--onnx`` option of ``sample`` (registered after ``sample``)."""
    p = sub.add_parser("export", help="export a trained GPT checkpoint to ONNX (needs the onnx extra)",
                       description="Export the GPT of a checkpoint written by `train` to an ONNX file with "
                                   "dynamic batch and sequence axes; `sample --onnx FILE` samples from it "
                                   "through ONNX Runtime. How export works: docs/onnx.md.")
    p.add_argument("--checkpoint", default="runs/train", metavar="PATH",
                   help="a run directory (its latest checkpoint) or a ckpt-* directory (default runs/train)")
    p.add_argument("output", metavar="MODEL.onnx", help="the file to write")
    p.add_argument("--opset", type=int, default=None, help="ONNX opset, 17 or later (default 18)")
    p.set_defaults(func=_cmd_export)
    sample = sub.choices.get("sample")
    if sample is not None:
        sample.add_argument("--onnx", default=None, metavar="MODEL.onnx",
                            help="sample from a model written by `minitorch-ln export`, through ONNX Runtime "
                                 "(--checkpoint is then not read)")
        sample.set_defaults(func=_sample_or_onnx(sample.get_default("func")))
