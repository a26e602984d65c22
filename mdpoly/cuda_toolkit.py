"""Where the CUDA toolkit is, and the flags a C build of ``--target cuda`` output needs.

``find_cuda()`` looks at ``$CUDA_HOME``, ``$CUDA_PATH``, the toolkit of the first ``nvcc`` on
``PATH`` (through symlinks; a wrapper script is tried as ``<dir>/../cuda``), then
``/usr/local/cuda``: the first directory with ``include/cuda.h`` wins. NVRTC (``nvrtc.h`` and
``libnvrtc``) comes from the toolkit, else from NVIDIA's ``nvidia-cuda-nvrtc`` wheel when it is
importable (``nvidia/cu13`` or ``nvidia/cuda_nvrtc``; that wheel ships only ``libnvrtc.so.<major>``,
so it is linked by file name with an rpath). ``libcuda`` is the driver's; on a machine without a
driver the toolkit's ``lib64/stubs/libcuda.so`` lets the program link (it cannot run there).

The generated program then builds with::

    cc -O2 out.c -I$CUDA/include -L$CUDA/lib64 -L$CUDA/lib64/stubs -lcuda -lnvrtc -lm
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class CudaToolkit:
    root: Path
    include_dirs: tuple[Path, ...]
    lib_dirs: tuple[Path, ...]
    nvrtc_lib: str            # "-lnvrtc", or "-l:libnvrtc.so.13" for the wheel's library
    rpath: tuple[Path, ...]

    @property
    def has_nvrtc(self) -> bool:
        return any((d / "nvrtc.h").is_file() for d in self.include_dirs)

    @property
    def has_libcuda(self) -> bool:
        """Whether ``-lcuda`` resolves: the toolkit's stub or a driver library in a lib dir."""
        dirs = list(self.lib_dirs) + [Path(p) for p in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                                                           "/usr/lib/aarch64-linux-gnu")]
        return any((d / "libcuda.so").exists() for d in dirs)

    def compile_flags(self) -> tuple[str, ...]:
        return tuple(f"-I{d}" for d in self.include_dirs)

    def link_flags(self) -> tuple[str, ...]:
        flags = [f"-L{d}" for d in self.lib_dirs]
        flags += [f"-Wl,-rpath,{d}" for d in self.rpath]
        return (*flags, "-lcuda", self.nvrtc_lib)


def _candidates() -> list[Path]:
    out: list[Path] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            out.append(Path(os.environ[var]))
    nvcc = shutil.which("nvcc")
    if nvcc:
        real = Path(nvcc).resolve()
        out.append(real.parent.parent)
        out.append(Path(nvcc).parent.parent / "cuda")
    out.append(Path("/usr/local/cuda"))
    return out


def _nvrtc_wheel() -> Path | None:
    """``.../site-packages/nvidia/<cu13|cuda_nvrtc>`` of an installed nvidia-cuda-nvrtc wheel."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return None
    for base in (spec.submodule_search_locations or []) if spec else []:
        for sub in ("cu13", "cu12", "cuda_nvrtc"):
            d = Path(base) / sub
            if (d / "include" / "nvrtc.h").is_file():
                return d
    return None


def find_cuda() -> CudaToolkit | None:
    """The CUDA toolkit to build against, or ``None`` when no ``cuda.h`` is found."""
    root = next((c for c in _candidates() if (c / "include" / "cuda.h").is_file()), None)
    if root is None:
        return None
    includes = [root / "include"]
    lib64 = root / "lib64" if (root / "lib64").is_dir() else root / "lib"
    libs = [lib64]
    if (lib64 / "stubs").is_dir():
        libs.append(lib64 / "stubs")
    nvrtc_lib = "-lnvrtc"
    rpath: list[Path] = []
    if not (root / "include" / "nvrtc.h").is_file():
        wheel = _nvrtc_wheel()
        if wheel is not None:
            includes.append(wheel / "include")
            lib = wheel / "lib"
            if not (lib / "libnvrtc.so").exists():
                versioned = sorted(lib.glob("libnvrtc.so.*[0-9]"), key=lambda p: len(p.name))
                if versioned:
                    nvrtc_lib = f"-l:{versioned[0].name}"
            libs.append(lib)
            rpath.append(lib)
    return CudaToolkit(root, tuple(includes), tuple(libs), nvrtc_lib, tuple(rpath))
