"""CUDA backend without a GPU: caps, kernel spellings over the shared writer, host code, NVRTC.

Kernel sources are checked for structure and compiled with NVRTC for ``sm_90`` (cuda-python, or
``nvcc``); host code is checked for its API calls and error handling, and compiled with
``cc -fsyntax-only`` when ``cuda.h`` and ``nvrtc.h`` are found. Building and running whole programs
is ``tests/e2e/test_cuda_examples.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import mdh_examples as ex
import pytest

from mdpoly.backends.cuda import CUDA_CAPS, CudaBackend, kernel_source
from mdpoly.backends.cuda_host import HEADER_IDENTIFIERS
from mdpoly.backends.opencl import kernel_source as opencl_source
from mdpoly.cuda_toolkit import find_cuda
from mdpoly.lower.gpu import lower_gpu
from mdpoly.lower.gpu_defaults import default_gpu_params
from mdpoly.lower.gpu_params import GpuParams, gpu_violations

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from cuda_harness import compile_for_sm90, nvrtc_unavailable, toolkit_unavailable

MDHS = {
    "matmul": ex.matmul(40, 50, 60), "matvec": ex.matvec(37, 101), "dot": ex.dot(1000003), "colmax": ex.colmax(53, 37),
    "jacobi2d": ex.jacobi2d(48), "mcc": ex.mcc(2, 8, 8, 16, 8, 3, 3), "symbolic": ex.matmul_symbolic(),
}


def plan_of(name: str, params: GpuParams | None = None):  # type: ignore[no-untyped-def]
    mdh = MDHS[name]
    return lower_gpu(mdh, params or default_gpu_params(mdh, CUDA_CAPS), CUDA_CAPS)


def test_caps_are_cuda_limits() -> None:
    assert CUDA_CAPS.max_work_group_size == 1024
    assert CUDA_CAPS.max_work_item_sizes == (1024, 1024, 64)
    assert CUDA_CAPS.local_mem_bytes == 48 * 1024
    assert CUDA_CAPS.parallel_layers == 2 and CUDA_CAPS.is_gpu
    assert CudaBackend().caps.name == "cuda"


@pytest.mark.parametrize("name", list(MDHS))
def test_default_params_fit_cuda_limits(name: str) -> None:
    p = default_gpu_params(MDHS[name], CUDA_CAPS)
    assert gpu_violations(MDHS[name], p, CUDA_CAPS) == []


def test_block_of_1025_threads_and_too_much_shared_memory_are_rejected() -> None:
    mdh = MDHS["dot"]
    assert "wg-size" in gpu_violations(mdh, GpuParams((2048,), (1,), (1,), ((0,),)), CUDA_CAPS)
    big = ex.dot(1 << 20)   # 1024 doubles = 8 KiB of scratch fits; 48 KiB is the limit
    assert gpu_violations(big, GpuParams((1024,), (1,), (4,), ((0,),)), CUDA_CAPS) == []


@pytest.mark.parametrize("name", list(MDHS))
def test_kernels_differ_from_opencl_only_in_spellings(name: str) -> None:
    plan = plan_of(name)
    cu, cl = kernel_source(plan), opencl_source(plan)
    assert "__kernel" not in cu and "get_" not in cu and "__global " not in cu and "__local" not in cu
    bounds = f"__launch_bounds__({plan.wg_size()}, {plan.min_groups}) " if plan.min_groups else ""
    assert f'extern "C" __global__ void {bounds}{plan.name}(' in cu
    assert "atomic" not in cu
    # same decisions: the same tuned constants and the same number of statements
    defines = lambda s: [ln for ln in s.splitlines() if ln.startswith("#define MDP_")]  # noqa: E731
    assert defines(cu) == defines(cl)
    assert cu.count("for (") == cl.count("for (") and cu.count("if (") == cl.count("if (")


def test_reduction_across_threads_and_blocks() -> None:
    plan = plan_of("dot")
    assert plan.local_combine and plan.partials
    src = kernel_source(plan)
    assert "__shared__ double mdp_scratch0[MDP_WG_SIZE];" in src
    assert src.count("__syncthreads();") == 3
    assert f'extern "C" __global__ void {plan.name}_combine(' in src
    assert f"(({plan.index_type})blockIdx.x * blockDim.x + threadIdx.x)" in src   # int: static sizes < 2^30


def test_folded_dims_use_three_thread_axes_and_one_grid_axis() -> None:
    src = kernel_source(plan_of("mcc"))
    assert "threadIdx.z" in src and "blockIdx.y" not in src and "blockIdx.z" not in src
    # the group index of NDRange dim 2 is what is left of blockIdx.x after dims 0 and 1
    assert re.search(r"mdp_g = \(\((int|long)\)blockIdx\.x / \(\(.+\) \* \(.+\)\)\);", src)


def test_symbolic_sizes_are_kernel_arguments() -> None:
    src = kernel_source(plan_of("symbolic"))
    assert "const long mdp_ext_0" in src and "const long mdp_nwg_0" in src


def test_host_code_checks_every_call() -> None:
    code = CudaBackend().render(plan_of("dot"))
    host = code.preamble + code.definition
    assert "cuInit failed with error" in host
    for call in ("cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuModuleLoadData",
                 "cuModuleGetFunction", "cuMemAlloc", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuLaunchKernel",
                 "cuCtxSynchronize", "cuMemFree", "nvrtcCreateProgram", "nvrtcGetCUBIN", "nvrtcGetPTX"):
        assert f'"{call}"' in host, call
    assert "cuGetErrorString" in host and "nvrtcGetErrorString" in host and "exit(1);" in host
    assert "MDPOLY_CUDA_DEVICE" in host and "MDPOLY_CACHE_DIR" in host and "XDG_CACHE_HOME" in host
    assert "--gpu-architecture=%s_%d" in host and "cuCtxCreate" not in host
    # every driver call in the nest's function is checked
    for line in code.definition.splitlines():
        m = re.search(r"\b(cu[A-Z]\w*)\(", line)
        if m:
            assert "mdp_cu_check(" in line, line
    assert code.flags == ("-lcuda", "-lnvrtc")
    # device buffers are kept across calls: allocated by mdp_cu_buffer when a call needs more, freed at exit
    globals_ = [b for b in plan_of("dot").buffers if b.role == "global"]
    assert code.definition.count("mdp_cu_buffer(&mdp_mem_") == len(globals_) + 1   # + the partials
    assert "cuMemFree" not in code.definition and "cuMemAlloc" not in code.definition
    assert "static CUdeviceptr mdp_mem_" in code.definition
    assert code.preamble.index("cuMemFree(*mdp_cu_buffers[i])") < code.preamble.index("cuDevicePrimaryCtxRelease")


def test_copies_follow_reads_and_writes() -> None:
    code = CudaBackend().render(plan_of("matvec"))
    assert "cuMemcpyHtoD(mdp_mem_M" in code.definition and "cuMemcpyDtoH((void *)M" not in code.definition


@pytest.mark.skipif(toolkit_unavailable() is not None, reason=str(toolkit_unavailable()))
@pytest.mark.parametrize("name", ["dot", "mcc", "symbolic"])
def test_host_code_compiles(name: str, tmp_path: Path) -> None:
    kit = find_cuda()
    assert kit is not None
    code = CudaBackend().render(plan_of(name))
    # user size macros named like cuda.h parameters must not break the headers
    src = tmp_path / "host.c"
    src.write_text("#define N 500\n#define T 2\n#define LTOIR 1\n" + code.preamble + code.definition)
    proc = subprocess.run(["cc", "-fsyntax-only", "-Wall", "-Werror", "-Wno-unused-function", *kit.compile_flags(),
                           str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.skipif(toolkit_unavailable() is not None, reason=str(toolkit_unavailable()))
def test_suspended_macros_cover_the_installed_headers() -> None:
    kit = find_cuda()
    assert kit is not None
    names: set[str] = set()
    for d in kit.include_dirs:
        for header in ("cuda.h", "nvrtc.h"):
            if (d / header).is_file():
                text = re.sub(r"/\*.*?\*/|//[^\n]*", "", (d / header).read_text(errors="replace"), flags=re.S)
                body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
                names |= set(re.findall(r"\b[A-Z][A-Z0-9_]*\b", body))
    missing = {n for n in names if not n.startswith(("CU", "NVRTC", "NVCL", "CIG_"))} - set(HEADER_IDENTIFIERS)
    assert not missing


@pytest.mark.skipif(nvrtc_unavailable() is not None, reason=str(nvrtc_unavailable()))
@pytest.mark.parametrize("name", list(MDHS))
def test_kernels_compile_with_nvrtc_for_sm90(name: str, tmp_path: Path) -> None:
    plan = plan_of(name)
    compile_for_sm90(kernel_source(plan), plan.name, tmp_path)


def test_profile_events_bracket_copies_and_launches() -> None:
    """``MDPOLY_PROFILE``: events 0/1 around the copies in, 3/4 around the copies out; the kernels'
    pair (5, then 2 in ``mdp_cu_gate_open``) goes right around the launches, behind the stream's
    wait on the gate (``mdp_cu_gate_hold``), which opens only after every launch is queued: no
    host work between the kernel events on the device's timeline."""
    code = CudaBackend().render(plan_of("dot"))
    body = code.definition
    rec = {i: body.index(f"mdp_cu_profile_record({i});") for i in (0, 1, 3, 4)}
    hold, opened = body.index("mdp_cu_gate_hold();"), body.index("mdp_cu_gate_open();")
    assert rec[0] > body.rindex("mdp_cu_buffer(") and rec[1] > body.rindex("cuMemcpyHtoD") and rec[0] < rec[1]
    assert rec[1] < body.index("mdp_args[]") < hold < body.index("cuLaunchKernel")
    assert opened > body.rindex("cuLaunchKernel") and opened < body.index("cuCtxSynchronize")
    assert body.index("cuCtxSynchronize") < rec[3] < body.index("cuMemcpyDtoH") < rec[4]
    assert body.index("mdp_cu_profile_add(") > rec[4]
    assert body.index("mdp_host0 = mdp_cu_profile ? mdp_cu_now_ms()") > body.index("mdp_cu_function(")
    gate = code.preamble[code.preamble.index("static void mdp_cu_gate_hold"):]
    assert gate.index("cuStreamWaitValue32") < gate.index("mdp_cu_profile_record(5)")
    opening = code.preamble[code.preamble.index("static void mdp_cu_gate_open"):]
    assert opening.index("mdp_cu_profile_record(2)") < opening.index("*mdp_cu_gate = mdp_cu_gate_seq")
    # the kernel interval less what the gated events add to as many launches (calibrated at start-up)
    assert "raw = mdp_cu_elapsed(5, 2);" in code.preamble
    assert "mdp_cu_last.kernel_ms = raw - mdp_cu_floor(launches);" in code.preamble
    assert "mdp_cu_calibrate();" in code.preamble[code.preamble.index("static void mdp_cu_init"):]
    launches = len(code.definition.split("cuLaunchKernel(")) - 1
    assert f"mdp_host0, {launches});" in code.definition
    assert 'getenv("MDPOLY_PROFILE")' in code.preamble and "atexit(mdp_cu_profile_report)" in code.preamble
    assert "host_ms=%.6f" in code.preamble
    assert "mdpoly-profile: %s calls=%ld kernel_ms=%.6f transfer_ms=%.6f" in code.preamble
