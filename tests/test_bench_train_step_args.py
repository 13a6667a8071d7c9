"""``benchmarks/bench_train_step.py``'s options: ``--only compile`` builds the torch.compile peer it times (before,
a bare ``KeyError: 'compile'`` after building the models unless ``--compile`` was also given), and ``--only jax``
with ``--no-jax`` is refused by the parser (before, the same bare KeyError)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "bench_train_step.py"


def _run(*code_or_args, python_code=None):
    cmd = [sys.executable, "-c", python_code] if python_code else [sys.executable, str(BENCH), *code_or_args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_only_compile_builds_the_compiled_peer():
    code = (f"import sys; sys.path.insert(0, {str(BENCH.parent)!r}); import bench_train_step as b; "
            "print(b._parse(['--only', 'compile']).compile, b._parse([]).compile, b._parse(['--compile']).compile)")
    res = _run(python_code=code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "False", "True"]


def test_only_jax_with_no_jax_is_refused_by_the_parser():
    res = _run("--only", "jax", "--no-jax", "--preset", "tiny")
    assert res.returncode == 2
    assert "--only jax times JAX alone, --no-jax leaves it out" in res.stderr
    assert "KeyError" not in res.stderr
