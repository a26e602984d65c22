"""The C files of the generated code (``backends/c/``, ``mdpoly.backends.c_files``) compile on their own.

The host runtimes are checked with ``cc -fsyntax-only`` against the OpenCL and CUDA headers, the
OpenCL kernel prelude is built by the OpenCL device's compiler (PoCL in CI) and the CUDA one by
NVRTC; each is skipped, with the reason, where its compiler or headers are missing.
"""

from __future__ import annotations

import shutil
import subprocess
from importlib.resources import files
from pathlib import Path

import pytest

from mdpoly.backends.c_files import c_file, render

C_DIR = Path(str(files("mdpoly.backends") / "c"))


def _cc(path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["cc", "-fsyntax-only", "-x", "c", "-std=c99", "-Wall", "-Wno-unused-function", "-Werror",
                           *flags, str(path)], capture_output=True, text=True)


def test_every_c_file_is_package_data_with_a_header():
    names = sorted(p.name for p in C_DIR.iterdir())
    assert names == ["cuda_async.h", "cuda_host.h", "cuda_kernel.h", "mdp_team.h", "multi_device.h", "multi_device_cuda.h",
                     "multi_device_opencl.h", "opencl_host.h", "opencl_kernel.cl"]
    for name in names:
        text = (C_DIR / name).read_text()
        assert text.startswith(f"/* {name}: "), name
        assert not text.count("@"), name    # no placeholder of the old kind is left
        assert c_file(name) == text[text.index("*/") + 2:].lstrip("\n")


@pytest.mark.skipif(shutil.which("cc") is None or not Path("/usr/include/CL/cl.h").is_file(),
                    reason="no C compiler or no OpenCL headers (opencl-headers)")
def test_opencl_host_runtime_compiles_on_its_own():
    proc = _cc(C_DIR / "opencl_host.h")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(shutil.which("cc") is None or not Path("/usr/include/CL/cl.h").is_file(),
                    reason="no C compiler or no OpenCL headers (opencl-headers)")
def test_multi_device_opencl_runtime_compiles_after_the_host_runtime(tmp_path):
    path = tmp_path / "md_opencl.c"
    path.write_text(c_file("opencl_host.h") + c_file("multi_device.h") + c_file("multi_device_opencl.h"))
    proc = _cc(path)
    assert proc.returncode == 0, proc.stderr


def test_multi_device_cuda_runtime_compiles_after_the_host_runtime(tmp_path):
    from mdpoly.cuda_toolkit import find_cuda
    kit = find_cuda()
    if shutil.which("cc") is None or kit is None or not kit.has_nvrtc:
        pytest.skip("no C compiler or no CUDA toolkit with NVRTC headers (install the CUDA toolkit, or pip install nvidia-cuda-nvrtc)")
    path = tmp_path / "md_cuda.c"
    path.write_text(c_file("cuda_host.h") + c_file("multi_device.h") + c_file("multi_device_cuda.h"))
    proc = _cc(path, *kit.compile_flags())
    assert proc.returncode == 0, proc.stderr


def test_cuda_host_runtime_compiles_on_its_own():
    from mdpoly.cuda_toolkit import find_cuda
    kit = find_cuda()
    if shutil.which("cc") is None or kit is None or not kit.has_nvrtc:
        pytest.skip("no C compiler or no CUDA toolkit with NVRTC headers (install the CUDA toolkit, or pip install nvidia-cuda-nvrtc)")
    proc = _cc(C_DIR / "cuda_host.h", *kit.compile_flags())
    assert proc.returncode == 0, proc.stderr
    # a user's size macro named like a header's parameter (N) does not break the headers
    proc = _cc(C_DIR / "cuda_host.h", "-DN=500", "-DC=3", *kit.compile_flags())
    assert proc.returncode == 0, proc.stderr


def _opencl_device():
    try:
        from mdpoly.runtime.opencl import OpenCLDevice
        return OpenCLDevice()
    except Exception as exc:  # noqa: BLE001 - no pyopencl, no ICD, no device
        pytest.skip(f"no OpenCL device to compile with: {exc}")


def test_opencl_kernel_prelude_builds_as_opencl_c():
    cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed (pip install 'mdpoly[opencl]')")
    dev = _opencl_device().device
    # C's float functions take an int argument too (sqrtf(n)): OpenCL's overloads alone are ambiguous
    src = c_file("opencl_kernel.cl") + ("__kernel void k(__global float *x, int n) "
                                        "{ x[0] = sqrtf(x[0]) + sqrtf(n) + powf(n, 2) + INFINITY; }\n")
    cl.Program(cl.Context([dev]), src).build(options=["-cl-std=CL1.2"])


def test_cuda_kernel_prelude_compiles_with_nvrtc():
    import importlib.util
    if importlib.util.find_spec("cuda") is None:
        pytest.skip("cuda-python is not installed (pip install 'mdpoly[cuda]')")
    from mdpoly.runtime.cuda import compile_cuda
    src = c_file("cuda_kernel.h") + 'extern "C" __global__ void k(uint *x) { x[0] = UINT_MAX; }\n'
    assert compile_cuda(src, ["--gpu-architecture=compute_90"], False).startswith(b"//")


@pytest.mark.parametrize("arch", ["compute_90", "compute_75"])
def test_cuda_async_helpers_compile_with_nvrtc(arch: str):
    """cp.async for sm_80+, the synchronous fallback below: both compile, and only the first has cp.async."""
    import importlib.util
    if importlib.util.find_spec("cuda") is None:
        pytest.skip("cuda-python is not installed (pip install 'mdpoly[cuda]')")
    from mdpoly.runtime.cuda import compile_cuda
    src = c_file("cuda_kernel.h") + c_file("cuda_async.h") + (
        'extern "C" __global__ void k(const float *x, float *y) {\n'
        '    __shared__ __align__(16) float s[64];\n'
        '    mdp_async_copy((float4 *)(s + 4 * (threadIdx.x % 16)), (const float4 *)(x + 4 * (threadIdx.x % 16)));\n'
        '    mdp_async_copy(s + threadIdx.x % 64, x + threadIdx.x);\n'
        '    mdp_async_commit();\n    mdp_async_wait_prior();\n    __syncthreads();\n'
        '    y[threadIdx.x] = s[threadIdx.x % 64];\n}\n')
    ptx = compile_cuda(src, [f"--gpu-architecture={arch}"], False).decode()
    assert ("cp.async.cg.shared.global" in ptx) == (arch == "compute_90")
    assert ("cp.async.wait_group" in ptx) == (arch == "compute_90")


def test_fields_are_checked():
    text = "/* t.c: a test */\nint ${name} = ${value};\n"
    assert render("t.c", text, {"name": "x", "value": "1"}) == "int x = 1;\n"
    with pytest.raises(ValueError, match="fields"):
        render("t.c", text, {"name": "x"})
    with pytest.raises(ValueError, match="fields"):
        render("t.c", text, {"name": "x", "value": "1", "typo": "2"})
    with pytest.raises(ValueError):
        render("t.c", "int $ x;\n", {})
