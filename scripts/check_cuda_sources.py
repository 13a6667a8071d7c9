"""Compile every CUDA kernel source of ``minitorch_ln/kernels/`` with nvcc, without a GPU.

The sources are strings that CuPy compiles with NVRTC at first use on a GPU; this script catches
syntax and type errors (and register spills, with ``--verbose``) on any machine that has the CUDA
toolkit. Each module's ``example_kernels()`` lists representative template instances; the script
takes their addresses so nvcc instantiates them, and compiles to PTX (``-arch=sm_90`` by default).

    python scripts/check_cuda_sources.py [--arch sm_90] [--verbose]

Exit status 0 when every module compiles, 1 otherwise; 2 when nvcc is not installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from minitorch_ln.kernels import cuda_batch_norm, cuda_common, cuda_group_norm, cuda_local_response_norm, cuda_layer_norm, cuda_optim, cuda_softmax  # noqa: E402

MODULES = {"cuda_layer_norm": cuda_layer_norm, "cuda_softmax": cuda_softmax, "cuda_optim": cuda_optim,
           "cuda_group_norm": cuda_group_norm, "cuda_batch_norm": cuda_batch_norm, "cuda_local_response_norm": cuda_local_response_norm}


def translation_unit(module) -> str:
    """The module's full source plus one address-taking line per example instance."""
    keep = "\n".join(f"void* mtln_keep_{i} = (void*)&{name};" for i, name in enumerate(module.example_kernels()))
    return cuda_common.full_source(module.SOURCE) + "\n" + keep + "\n"


def compile_module(name: str, module, arch: str, verbose: bool) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, f"{name}.cu")
        with open(src, "w") as f:
            f.write(translation_unit(module))
        cmd = ["nvcc", "-cubin" if verbose else "-ptx", f"-arch={arch}", "-std=c++17", src, "-o",
               os.path.join(tmp, f"{name}.out")]
        if verbose:
            cmd += ["-Xptxas", "-v"]
        res = subprocess.run(cmd, capture_output=True, text=True)
        return res.returncode == 0, res.stdout + res.stderr


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="sm_90", help="GPU architecture for nvcc (default sm_90, an H100/H200)")
    parser.add_argument("--verbose", action="store_true", help="compile to cubin and print ptxas register/spill use")
    args = parser.parse_args(argv)
    if shutil.which("nvcc") is None:
        print("nvcc not found: install the CUDA toolkit to check the kernel sources", file=sys.stderr)
        return 2
    ok_all = True
    for name, module in MODULES.items():
        ok, log = compile_module(name, module, args.arch, args.verbose)
        ok_all &= ok
        print(f"{name}: {'ok' if ok else 'FAILED'} ({len(module.example_kernels())} instances, {args.arch})")
        if not ok or args.verbose:
            print(log)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
