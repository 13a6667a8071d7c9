"""Training checkpoints: everything a run needs to continue exactly where it stopped.

A run directory holds one complete checkpoint at a time and a pointer to it::

    OUT/latest                       the name of the current checkpoint directory (one line)
    OUT/ckpt-00000500/model.safetensors      the model's state_dict (loadable by safetensors.torch)
    OUT/ckpt-00000500/optimizer.safetensors  the optimizer's tensors (AdamW's moments)
    OUT/ckpt-00000500/config.json            model config, training config, tokenizer, corpus info
    OUT/ckpt-00000500/state.json             step, the random generators' states, the optimizer's
                                             other state, metrics, a SHA-256 of each file above
                                             and one of its own content (state_sha256)

Writing is crash-safe: the new checkpoint is built in a temporary directory, each file flushed to
disk, the directory renamed into place, and only then is ``latest`` replaced (atomically, with
``os.replace``) and the previous checkpoint removed. Whenever the process dies, ``latest`` names a
complete checkpoint. Reading checks every file's SHA-256, and that of ``state.json``'s own content, so a
corrupted, truncated or edited checkpoint is reported instead of being half-loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import OrderedDict

import numpy as np

from .. import backend
from ..serialization import SerializationError, atomic_write_text, load, save
from ..tensor import Tensor

__all__ = ["CheckpointError", "RunDirLocked", "RunLock", "LOCK_FILE", "write_checkpoint", "read_checkpoint", "resolve_checkpoint", "latest_step",
           "flatten_state", "unflatten_state", "get_rng_states", "set_rng_states", "reseed_devices"]

FORMAT_VERSION = 1
_FILES = ("model.safetensors", "optimizer.safetensors", "config.json")


class CheckpointError(RuntimeError):
    """A missing, corrupt, truncated or incompatible checkpoint, or one that could not be written."""


# ----------------------------------------------------------------------------------------------
# One run at a time in a run directory
# ----------------------------------------------------------------------------------------------

LOCK_FILE = ".lock"  # OUT/.lock: held (fcntl.flock) by the run writing OUT, holding its PID


class RunDirLocked(RuntimeError):
    """Another process is running in this run directory."""


class RunLock:
    """An exclusive ``fcntl.flock`` on ``OUT/.lock`` for as long as a run writes ``OUT``.

    The kernel releases the lock when the process ends, however it ends (a crash, ``kill -9``), so
    a lock is never stale; :meth:`release` also removes the file. The file holds the holder's PID,
    which a refused run names. Where ``fcntl`` does not exist (Windows) nothing is locked.

    Raises (from :meth:`acquire`):
        RunDirLocked: when another process holds the lock.
    """

    def __init__(self, out_dir):
        self.out_dir = os.fspath(out_dir)
        self.path = os.path.join(self.out_dir, LOCK_FILE)
        self._file = None

    def acquire(self) -> "RunLock":
        try:
            import fcntl  # noqa: PLC0415
        except ImportError:  # pragma: no cover - not POSIX
            return self
        while True:
            f = open(self.path, "a+", encoding="utf-8")
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # BlockingIOError: held by another process
                f.seek(0)
                pid = f.read().strip()
                f.close()
                who = f"process {pid}" if pid.isdigit() else "another process (its PID is not written yet)"
                raise RunDirLocked(
                    f"{self.out_dir} is in use by another `minitorch-ln train` run ({who}): wait for it to finish "
                    "or stop it, or choose another --out"
                ) from None
            try:  # the holder before us may have removed the file we opened: lock the one at the path
                same = os.path.samestat(os.fstat(f.fileno()), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            f.close()
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        self._file = f
        return self

    def release(self) -> None:
        """Remove the lock file, then unlock (in this order, see :meth:`acquire`)."""
        if self._file is None:
            return
        try:
            os.remove(self.path)
        except OSError:
            pass
        self._file.close()  # closing the file releases the flock
        self._file = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
        return False


# ----------------------------------------------------------------------------------------------
# Nested state (optimizer state dicts) <-> {name: array} + JSON
# ----------------------------------------------------------------------------------------------


def _is_array(x) -> bool:
    return isinstance(x, (Tensor, np.ndarray)) or type(x).__module__.startswith("cupy")


def flatten_state(obj, tensors: dict, prefix: str = "s"):
    """Split a nested state (dicts, lists, scalars, tensors) into JSON plus ``tensors[name] = array``.

    Tensors are replaced by ``{"__tensor__": name}``; dicts with non-str keys (PyTorch optimizers
    index their state by int) become ``{"__items__": [[key, value], ...]}``.
    """
    if _is_array(obj):
        tensors[prefix] = obj
        return {"__tensor__": prefix}
    if isinstance(obj, dict):
        items = [[k, flatten_state(v, tensors, f"{prefix}.{k}")] for k, v in obj.items()]
        if all(isinstance(k, str) and not k.startswith("__") for k, _ in items):
            return {k: v for k, v in items}
        return {"__items__": items}
    if isinstance(obj, (list, tuple)):
        return [flatten_state(v, tensors, f"{prefix}.{i}") for i, v in enumerate(obj)]
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    raise CheckpointError(f"cannot checkpoint a value of type {type(obj).__name__} at {prefix!r}")


def unflatten_state(obj, tensors: dict):
    """Inverse of :func:`flatten_state`."""
    if isinstance(obj, dict):
        if set(obj) == {"__tensor__"}:
            name = obj["__tensor__"]
            if name not in tensors:
                raise CheckpointError(f"the optimizer state refers to tensor {name!r}, which its file lacks")
            return tensors[name]
        if set(obj) == {"__items__"}:
            return {k: unflatten_state(v, tensors) for k, v in obj["__items__"]}
        return {k: unflatten_state(v, tensors) for k, v in obj.items()}
    if isinstance(obj, list):
        return [unflatten_state(v, tensors) for v in obj]
    return obj


# ----------------------------------------------------------------------------------------------
# Random generator states
# ----------------------------------------------------------------------------------------------


def get_rng_states() -> dict:
    """The state of the random generators a run uses: the CPU generator of :mod:`backend` (batches,
    and dropout and initialisation on the CPU), and NumPy's and Python's global generators (used by
    nothing here, saved in case user code does).

    A GPU generator's state is not saved: CuPy's cuRAND state is about 100 MB. GPU runs are kept
    reproducible across a resume by :func:`reseed_devices` instead.
    """
    import random  # noqa: PLC0415

    return {"cpu": backend.get_rng_state(), "numpy_global": _np_global_state(), "python": _py_state(random)}


def set_rng_states(states: dict) -> None:
    """Restore the generators saved by :func:`get_rng_states`."""
    import random  # noqa: PLC0415

    backend.set_rng_state(states["cpu"])
    if "numpy_global" in states:
        st = states["numpy_global"]
        np.random.set_state((st[0], np.array(st[1], dtype=np.uint32), st[2], st[3], st[4]))
    if "python" in states:
        st = states["python"]
        random.setstate((st[0], tuple(st[1]), st[2]))


def reseed_devices(seed: int, step: int) -> None:
    """Re-seed every GPU generator from ``(seed, step)``, keeping the CPU generator's state.

    Called at each checkpoint step and when a run resumes from one, so the GPU random stream after
    step ``k`` is the same whether or not the run stopped at ``k``.
    """
    cpu = backend.get_rng_state()
    derived = int(np.random.SeedSequence([int(seed), int(step)]).generate_state(1, np.uint64)[0] >> 1)
    backend.manual_seed(derived)
    backend.set_rng_state(cpu)


def _np_global_state():
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return [kind, keys.tolist(), int(pos), int(has_gauss), float(cached)]


def _py_state(random):
    version, internal, gauss = random.getstate()
    return [version, list(internal), gauss]


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------


def _sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _state_sha256(state: dict) -> str:
    """SHA-256 of ``state`` (without its own ``state_sha256``) as canonical JSON: sorted keys, no spaces.

    Written and checked on the JSON-decoded form, so it is the same on both sides of the file.
    """
    body = {k: v for k, v in state.items() if k != "state_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def _fsync_dir(path) -> None:
    if hasattr(os, "O_DIRECTORY"):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def latest_step(out_dir) -> "int | None":
    """The step of ``out_dir``'s current checkpoint, or ``None`` when it has none."""
    pointer = os.path.join(os.fspath(out_dir), "latest")
    if not os.path.isfile(pointer):
        return None
    name = open(pointer, encoding="utf-8").read().strip()
    try:
        return int(name.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return None


def write_checkpoint(out_dir, step: int, model_state, optimizer_state, config: dict, state: dict) -> str:
    """Write a complete checkpoint for ``step`` into ``out_dir`` and make it the current one.

    Args:
        model_state: the model's ``state_dict()``.
        optimizer_state: the optimizer's ``state_dict()`` (nested; its tensors go to safetensors).
        config: JSON-able run configuration (``config.json``).
        state: JSON-able extra state (``step``, ``rng`` ... ) merged into ``state.json``.

    Returns:
        the path of the new checkpoint directory.
    """
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    name = f"ckpt-{step:08d}"
    final = os.path.join(out_dir, name)
    tmp = os.path.join(out_dir, f".{name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)  # left by a crash during an earlier write
    os.makedirs(tmp)
    try:
        save(model_state, os.path.join(tmp, "model.safetensors"), metadata={"step": str(step)})
        opt_tensors = {}
        opt_json = flatten_state(optimizer_state, opt_tensors, "optim")
        save(opt_tensors, os.path.join(tmp, "optimizer.safetensors"))
        atomic_write_text(os.path.join(tmp, "config.json"), json.dumps(config, indent=2) + "\n")
        full_state = {"format_version": FORMAT_VERSION, "step": step, **state, "optimizer": opt_json,
                      "sha256": {f: _sha256(os.path.join(tmp, f)) for f in _FILES}}
        full_state = json.loads(json.dumps(full_state))  # as it will be read back (tuples as lists, ...)
        full_state["state_sha256"] = _state_sha256(full_state)  # step, RNG states, learning rates: covered too
        atomic_write_text(os.path.join(tmp, "state.json"), json.dumps(full_state) + "\n")
        _fsync_dir(tmp)
        previous = resolve_checkpoint(out_dir) if latest_step(out_dir) is not None else None
        if os.path.exists(final):
            if previous is not None and os.path.samefile(previous, final):
                raise CheckpointError(f"checkpoint {final} is the current one and would be overwritten")
            shutil.rmtree(final)  # an unreferenced leftover of an interrupted run
        os.replace(tmp, final)
        _fsync_dir(out_dir)
        atomic_write_text(os.path.join(out_dir, "latest"), name + "\n")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if previous is not None and os.path.abspath(previous) != os.path.abspath(final):
        shutil.rmtree(previous, ignore_errors=True)
    return final


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------


def resolve_checkpoint(path) -> str:
    """The checkpoint directory for ``path``: a run directory (follows ``latest``) or a checkpoint directory.

    Raises:
        CheckpointError: when ``path`` holds neither.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise CheckpointError(f"checkpoint path {path!r} does not exist")
    pointer = os.path.join(path, "latest")
    if os.path.isfile(pointer):
        name = open(pointer, encoding="utf-8").read().strip()
        target = os.path.join(path, name)
        if not name or os.sep in name or not os.path.isdir(target):
            raise CheckpointError(f"{pointer} names checkpoint {name!r}, which does not exist in {path!r}")
        return target
    if os.path.isfile(os.path.join(path, "state.json")):
        return path
    raise CheckpointError(
        f"{path!r} holds no checkpoint: expected a run directory (with a 'latest' file) written by "
        "`minitorch-ln train --out`, or one of its ckpt-* directories"
    )


def read_checkpoint(path, device=None, load_optimizer: bool = True) -> dict:
    """Read and verify a checkpoint.

    Returns:
        ``{"dir", "config", "state", "model" (OrderedDict of Tensors), "optimizer" (nested state or
        None)}``.

    Raises:
        CheckpointError: for a missing file, a checksum mismatch (corrupt or truncated file), an
            unreadable file, or an unknown format version.
    """
    ckpt = resolve_checkpoint(path)
    try:
        with open(os.path.join(ckpt, "state.json"), encoding="utf-8") as f:
            state = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{ckpt}/state.json is unreadable or corrupt ({exc})") from None
    if not isinstance(state, dict) or state.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{ckpt}/state.json is not a minitorch_ln checkpoint of format {FORMAT_VERSION} "
            f"(found format {state.get('format_version') if isinstance(state, dict) else None!r})"
        )
    if state.get("state_sha256") != _state_sha256(state):
        raise CheckpointError(
            f"{ckpt}/state.json has been changed since it was written (its SHA-256 does not match the one it "
            "records): its step, random generator states or learning rates cannot be trusted to resume from"
            + ("" if "state_sha256" in state else " (it records none: written by an older minitorch_ln?)")
        )
    for fname in _FILES if load_optimizer else _FILES[:1] + _FILES[2:]:
        fpath = os.path.join(ckpt, fname)
        if not os.path.isfile(fpath):
            raise CheckpointError(f"checkpoint {ckpt} is incomplete: {fname} is missing")
        expected = state.get("sha256", {}).get(fname)
        if expected != _sha256(fpath):
            raise CheckpointError(
                f"checkpoint file {fpath} is corrupt or truncated: its SHA-256 does not match the one "
                "recorded when it was written"
            )
    try:
        with open(os.path.join(ckpt, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        model = load(os.path.join(ckpt, "model.safetensors"), device=device)
        optimizer = None
        if load_optimizer:
            tensors = load(os.path.join(ckpt, "optimizer.safetensors"), device=device)
            optimizer = unflatten_state(state["optimizer"], tensors)
    except (SerializationError, json.JSONDecodeError, KeyError) as exc:
        raise CheckpointError(f"checkpoint {ckpt} could not be read: {exc}") from None
    return {"dir": ckpt, "config": config, "state": state, "model": OrderedDict(model), "optimizer": optimizer}
