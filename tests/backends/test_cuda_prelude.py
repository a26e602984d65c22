"""The CUDA prelude under both CUDA compilers: NVRTC (no system headers) and ``nvcc`` (whose host
headers define glibc's ``INFINITY``/``HUGE_VAL``/``NAN`` as ``__builtin_inff()`` & co. first).

The first test needs only ``cpp``: it preprocesses the prelude after glibc's definitions, as
``nvcc`` does, and checks that every infinity and NaN expands to a bit pattern, never back to a
name the prelude does not define (``#define __builtin_inff() INFINITY`` was self-referential
there). The others compile a reduction with a ``-INFINITY`` neutral element for ``sm_90``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import mdh_examples as ex
import pytest

from mdpoly.backends.cuda import CUDA_CAPS, CUDA_PRELUDE, kernel_source
from mdpoly.lower.gpu import lower_gpu
from mdpoly.lower.gpu_defaults import default_gpu_params

# What glibc's <math.h> says (bits/inf.h, bits/nan.h, math.h with GCC), which nvcc's
# cuda_runtime.h has included before the kernel source.
GLIBC_MATH = """\
#define INFINITY (__builtin_inff ())
#define NAN (__builtin_nanf (""))
#define HUGE_VAL (__builtin_huge_val ())
#define HUGE_VALF (__builtin_huge_valf ())
"""


def _expand(prefix: str, body: str) -> str:
    text = prefix + "\n".join(CUDA_PRELUDE) + "\n" + body
    proc = subprocess.run(["cpp", "-P", "-undef"], input=text, capture_output=True, text=True, check=True)
    return proc.stdout


@pytest.mark.skipif(shutil.which("cpp") is None, reason="no cpp")
@pytest.mark.parametrize("prefix", [GLIBC_MATH, ""], ids=["nvcc-glibc-headers", "nvrtc-no-headers"])
def test_infinities_expand_to_bit_patterns(prefix: str) -> None:
    body = ("float a = -INFINITY; double b = HUGE_VAL; float c = HUGE_VALF; float d = NAN;\n"
            "float e = __builtin_inff(); double f = __builtin_inf(); float g = __builtin_nanf(\"\");\n")
    out = _expand(prefix, body).splitlines()[-2:]
    text = "\n".join(out)
    assert not re.search(r"\b(INFINITY|HUGE_VALF?|NAN|__builtin_\w+)\b", text), text
    assert text.count("__int_as_float(0x7f800000)") == 3 and text.count("__longlong_as_double(") == 2


def _colmax_kernel() -> tuple[str, str]:
    mdh = ex.colmax(53, 37)   # max over rows: neutral element -INFINITY
    plan = lower_gpu(mdh, default_gpu_params(mdh, CUDA_CAPS), CUDA_CAPS)
    src = kernel_source(plan)
    assert "INFINITY" in src
    return src, plan.name


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc on PATH (install the CUDA toolkit)")
@pytest.mark.parametrize("mode", ["-c", "--ptx"])
def test_max_reduction_kernel_compiles_with_nvcc(mode: str, tmp_path: Path) -> None:
    src, name = _colmax_kernel()
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    proc = subprocess.run(["nvcc", "-arch=sm_90", mode, "-x", "cu", str(cu), "-o", str(tmp_path / "k.out")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _nvrtc_missing() -> str | None:
    try:
        from cuda.bindings import nvrtc
        err, _, _ = nvrtc.nvrtcVersion()
    except Exception as exc:  # noqa: BLE001 - any failure: no NVRTC here
        return f"no usable NVRTC (cuda-python, pip install 'mdpoly[cuda]'): {exc}"
    return None if int(getattr(err, "value", err)) == 0 else "NVRTC reports an error"


@pytest.mark.skipif(_nvrtc_missing() is not None, reason=str(_nvrtc_missing()))
def test_max_reduction_kernel_compiles_with_nvrtc() -> None:
    from mdpoly.runtime.cuda import compile_cuda
    src, name = _colmax_kernel()
    image = compile_cuda(src, ["--gpu-architecture=sm_90", "--fmad=false"], True, name=name)
    assert image[:4] == b"\x7fELF"
