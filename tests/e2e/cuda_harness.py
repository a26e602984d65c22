"""CUDA helpers for the tests: toolkit flags, kernel extraction, NVRTC compilation, a stub ``libcuda``.

No GPU is needed for any of it. ``link_flags`` links against the toolkit's ``lib64/stubs/libcuda.so``
or the driver's ``libcuda.so``; where neither exists (a toolkit assembled from NVIDIA's pip wheels
has no stubs) it builds a stand-in ``libcuda.so`` whose functions are the ``cu*`` symbols the object
file needs, each returning an error -- the program links, and run it fails at ``cuInit`` as it
would with NVIDIA's stub. Skips name their reason.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

from mdpoly.cuda_toolkit import CudaToolkit, find_cuda

_SRC = re.compile(r"static const char mdp_cu_src_(\w+)\[\] =\n(.*?\");\n", re.S)


def toolkit_unavailable() -> str | None:
    """Why generated CUDA host code cannot be compiled here, or ``None``."""
    kit = find_cuda()
    if kit is None:
        return "no CUDA toolkit (cuda.h) found via CUDA_HOME, CUDA_PATH, nvcc or /usr/local/cuda"
    if not kit.has_nvrtc:
        return f"the CUDA toolkit at {kit.root} has no nvrtc.h (pip install nvidia-cuda-nvrtc)"
    return None


def kernel_sources(out_c: str) -> dict[str, str]:
    """The CUDA C kernel sources embedded in generated C text, by nest name."""
    out: dict[str, str] = {}
    for m in _SRC.finditer(out_c):
        out[m.group(1)] = "".join(ast.literal_eval(line.strip()) for line in m.group(2).splitlines())
    return out


@functools.lru_cache(maxsize=1)
def nvrtc_unavailable() -> str | None:
    if importlib.util.find_spec("cuda") is not None:
        try:
            from cuda.bindings import nvrtc
            err, _, _ = nvrtc.nvrtcVersion()
            if int(getattr(err, "value", err)) == 0:
                return None
        except Exception as exc:  # noqa: BLE001 - any failure means: use nvcc
            reason = f"cuda-python NVRTC unusable: {exc}"
        else:
            reason = "cuda-python NVRTC unusable"
    else:
        reason = "cuda-python is not installed (pip install 'mdpoly[cuda]')"
    if shutil.which("nvcc"):
        return None
    return f"{reason}, and no nvcc (CUDA toolkit)"


def compile_for_sm90(source: str, name: str, work: Path) -> None:
    """Compile CUDA C for sm_90 with NVRTC (cuda-python) or ``nvcc -c -x cu``; raise on errors."""
    try:
        from mdpoly.runtime.cuda import compile_cuda
        image = compile_cuda(source, ["--gpu-architecture=sm_90", "--fmad=false"], True, name=name)
        assert image[:4] == b"\x7fELF"
        return
    except ImportError:
        pass
    except Exception as exc:
        if type(exc).__name__ != "NoCudaDevice":
            raise
    src = work / f"{name}.cu"
    src.write_text(source)
    proc = subprocess.run(["nvcc", "-arch=sm_90", "-c", "-x", "cu", str(src), "-o", str(work / f"{name}.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _undefined_cuda_symbols(obj: Path) -> list[str]:
    nm = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True).stdout
    return sorted({line.split()[-1] for line in nm.splitlines() if re.fullmatch(r"\s*U cu\w+", line)})


def link_flags(kit: CudaToolkit, obj: Path, work: Path) -> tuple[list[str], bool]:
    """Linker flags for ``obj`` and whether they use a stand-in ``libcuda`` built here."""
    flags = list(kit.link_flags())
    if kit.has_libcuda:
        return flags, False
    stub_dir = work / "stub"
    stub_dir.mkdir(exist_ok=True)
    body = "".join(f"int {s}(void) {{ return 34; }}\n" for s in _undefined_cuda_symbols(obj))
    (stub_dir / "cuda_stub.c").write_text("/* stand-in for the toolkit's stub libcuda: every call fails */\n" + body)
    subprocess.run(["cc", "-shared", "-fPIC", str(stub_dir / "cuda_stub.c"), "-o", str(stub_dir / "libcuda.so")],
                   check=True, capture_output=True, text=True)
    return [f"-L{stub_dir}", f"-Wl,-rpath,{stub_dir}", *flags], True


def cuda_device_unavailable() -> str | None:
    """Why no CUDA program can run here (``nvidia-smi`` fails or lists no GPU), or ``None``."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "no CUDA device: nvidia-smi not found (no NVIDIA driver)"
    proc = subprocess.run([smi, "-L"], capture_output=True, text=True)
    if proc.returncode != 0 or "GPU" not in proc.stdout:
        return f"no CUDA device: nvidia-smi -L failed: {(proc.stderr or proc.stdout).strip()[-200:]}"
    return None
