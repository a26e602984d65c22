"""OpenCL backend without a device: work-group parameters and constraints, lowering, rendering.

Kernel sources and host code are checked for structure; the host code also compiles with
``cc -fsyntax-only`` when ``CL/cl.h`` is installed. Running them is ``tests/e2e/test_opencl_examples.py``.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import mdh_examples as ex
import pytest

from mdpoly.backends.opencl import OPENCL_CAPS, OpenCLBackend, kernel_source
from mdpoly.diagnostics import CompilerBug, UnsupportedInput
from mdpoly.ir.mdh import Buffer
from mdpoly.lower.gpu import lower_gpu
from mdpoly.lower.gpu_caps import caps_from_device
from mdpoly.lower.gpu_defaults import default_gpu_params, default_ocl_groups, untiled_gpu_params
from mdpoly.lower.gpu_params import GPU_CONSTRAINTS, GpuParams, gpu_violations

GPU_CAPS = replace(OPENCL_CAPS, is_gpu=True, max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                   local_mem_bytes=48 * 1024, compute_units=132)
CPU_CAPS = caps_from_device(OPENCL_CAPS, {"max_work_group_size": 4096, "max_work_item_sizes": (4096, 4096, 4096),
                                          "local_mem_size": 1 << 20, "max_compute_units": 2, "is_gpu": False})

MDHS = {
    "matmul": ex.matmul(40, 50, 60), "matvec": ex.matvec(37, 101), "dot": ex.dot(1000003), "colmax": ex.colmax(53, 37),
    "jacobi2d": ex.jacobi2d(48), "mcc": ex.mcc(2, 8, 8, 16, 8, 3, 3), "symbolic": ex.matmul_symbolic(),
}


@pytest.mark.parametrize("caps", [CPU_CAPS, GPU_CAPS], ids=["cpu", "gpu"])
@pytest.mark.parametrize("name", list(MDHS))
def test_default_params_satisfy_every_constraint(name: str, caps: object) -> None:
    mdh = MDHS[name]
    params = default_gpu_params(mdh, caps)  # type: ignore[arg-type]
    assert gpu_violations(mdh, params, caps) == []  # type: ignore[arg-type]
    wg = params.wg_size()
    assert 1 <= wg <= (256 if caps is GPU_CAPS or params.tiled else 64)


def test_gpu_defaults_use_bigger_groups_than_cpu() -> None:
    mdh = MDHS["matmul"]
    assert untiled_gpu_params(mdh, GPU_CAPS).wg_size() > untiled_gpu_params(mdh, CPU_CAPS).wg_size()


def test_long_reduction_spreads_over_work_groups() -> None:
    mdh = MDHS["dot"]
    p = default_gpu_params(mdh, GPU_CAPS)
    assert p.num_wi[0] > 1 and p.num_wg[0] > 1
    plan = lower_gpu(mdh, p, GPU_CAPS)
    assert plan.local_combine and plan.partials
    src = kernel_source(plan)
    assert "__kernel void mdp_dot_combine(" in src and "barrier(CLK_LOCAL_MEM_FENCE);" in src
    assert "atomic" not in src
    assert "#pragma OPENCL EXTENSION cl_khr_fp64 : enable" in src


def test_seven_dims_fold_into_three() -> None:
    assert default_ocl_groups(7) == ((6,), (5,), (0, 1, 2, 3, 4))
    plan = lower_gpu(MDHS["mcc"], default_gpu_params(MDHS["mcc"], CPU_CAPS), CPU_CAPS)
    src = kernel_source(plan)
    assert "get_local_id(2)" in src and "get_local_id(3)" not in src


@pytest.mark.parametrize(("change", "broken"), [
    (dict(num_wi=(64, 64, 1)), "wg-size"),
    (dict(num_wg=(0, 0, 0)), "dim-roles"),
    (dict(pt=(16, 16, 1)), "private-tile"),
    (dict(ocl_groups=((0,), (1,))), "ocl-partition"),
])
def test_constraints_reject_bad_parameters(change: dict[str, object], broken: str) -> None:
    mdh = MDHS["matmul"]
    bad = replace(GpuParams((8, 8, 1), (1, 1, 1), (0, 0, 1), ((2,), (1,), (0,))), **change)  # type: ignore[arg-type]
    assert broken in gpu_violations(mdh, bad, OPENCL_CAPS)
    with pytest.raises(CompilerBug):
        lower_gpu(mdh, bad, OPENCL_CAPS)


def test_local_memory_constraint_reads_the_caps() -> None:
    mdh = MDHS["dot"]
    p = GpuParams((256,), (1,), (4,), ((0,),))
    tiny = replace(OPENCL_CAPS, local_mem_bytes=1024)
    assert "local-mem" in gpu_violations(mdh, p, tiny)
    assert gpu_violations(mdh, p, OPENCL_CAPS) == []
    assert {c.name for c in GPU_CONSTRAINTS} >= {"wg-size", "local-mem", "private-tile", "item-sizes"}


def test_indirect_buffers_are_refused() -> None:
    mdh = MDHS["matvec"]
    bufs = tuple(replace(b, kind="indirect") if b.name == "M" else b for b in mdh.buffers)  # type: ignore[arg-type]
    mdh = replace(mdh, buffers=bufs)
    with pytest.raises(UnsupportedInput):
        lower_gpu(mdh, default_gpu_params(mdh, CPU_CAPS), CPU_CAPS)


def test_copies_follow_reads_and_writes() -> None:
    plan = lower_gpu(MDHS["matvec"], default_gpu_params(MDHS["matvec"], CPU_CAPS), CPU_CAPS)
    by = {b.name: b for b in plan.buffers}
    assert by["M"].copy_in and not by["M"].copy_out
    assert by["y"].copy_out and by["y"].copy_in   # pointer of unknown length: not proven fully written
    assert "MDP_MAX" in by["y"].count
    plan = lower_gpu(MDHS["matmul"], default_gpu_params(MDHS["matmul"], CPU_CAPS), CPU_CAPS)
    c = {b.name: b for b in plan.buffers}["C"]
    assert c.copy_in  # accumulate reads C


def test_symbolic_sizes_are_kernel_arguments() -> None:
    mdh = MDHS["symbolic"]
    plan = lower_gpu(mdh, default_gpu_params(mdh, CPU_CAPS), CPU_CAPS)
    src = kernel_source(plan)
    assert "const long mdp_ext_0" in src and "const long mdp_nwg_0" in src


def test_host_code_checks_every_call_and_compiles(tmp_path: Path) -> None:
    mdh = MDHS["dot"]
    code = OpenCLBackend(CPU_CAPS).render(lower_gpu(mdh, default_gpu_params(mdh, GPU_CAPS), CPU_CAPS))
    assert "#define CL_TARGET_OPENCL_VERSION 120" in code.preamble
    assert code.preamble.index("CL_TARGET_OPENCL_VERSION") < code.preamble.index("#include <CL/cl.h>")
    assert "CL_PROGRAM_BUILD_LOG" in code.preamble and "MDPOLY_OPENCL_DEVICE" in code.preamble
    assert "CL_DEVICE_TYPE_GPU" in code.preamble and "atexit(mdp_cl_release)" in code.preamble
    for call in ("clEnqueueWriteBuffer", "clEnqueueNDRangeKernel", "clEnqueueReadBuffer"):
        assert f'"{call}"' in code.definition
    for call in ("clCreateBuffer", "clSetKernelArg", "clReleaseMemObject"):   # mdp_cl_buffer, mdp_cl_arg
        assert f'"{call}"' in code.preamble
    assert "-lOpenCL" in code.flags
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    src = tmp_path / "host.c"
    src.write_text(code.preamble + code.definition + "int main(void) { return 0; }\n")
    proc = subprocess.run(["cc", "-fsyntax-only", "-Wall", "-Werror", "-Wno-unused-function", str(src)],
                          capture_output=True, text=True)
    if proc.returncode != 0 and "CL/cl.h" in proc.stderr:
        pytest.skip("CL/cl.h is not installed (apt-get install opencl-c-headers)")
    assert proc.returncode == 0, proc.stderr


def test_nothing_vendor_specific_in_host_code() -> None:
    mdh = MDHS["matmul"]
    code = OpenCLBackend().render(lower_gpu(mdh, default_gpu_params(mdh, OPENCL_CAPS), OPENCL_CAPS))
    text = (code.preamble + code.definition).lower()
    assert "pocl" not in text.replace("pocl-opencl-icd", "") and "nvidia" not in text


def test_buffer_order_matches_host_params() -> None:
    mdh = MDHS["matvec"]
    plan = lower_gpu(mdh, default_gpu_params(mdh, CPU_CAPS), CPU_CAPS)
    assert [b.name for b in plan.buffers] == [b.name for b in plan.params]
    assert all(isinstance(b, Buffer) for b in plan.params)


def test_profile_requests_events_only_when_profiling() -> None:
    """``MDPOLY_PROFILE``: a profiling queue and one event per command; otherwise NULL events."""
    mdh = MDHS["dot"]
    code = OpenCLBackend(CPU_CAPS).render(lower_gpu(mdh, default_gpu_params(mdh, GPU_CAPS), CPU_CAPS))
    assert 'getenv("MDPOLY_PROFILE")' in code.preamble
    assert "mdp_cl_profile ? CL_QUEUE_PROFILING_ENABLE : 0" in code.preamble
    assert "mdpoly-profile: %s calls=%ld kernel_ms=%.6f transfer_ms=%.6f" in code.preamble
    for line in code.definition.splitlines():
        if "clEnqueue" in line:
            assert "mdp_cl_profile ? &mdp_" in line and ": NULL)" in line, line
    assert code.definition.index("clFinish") < code.definition.index("mdp_cl_profile_add(")


def test_device_buffers_and_arguments_are_kept_across_calls() -> None:
    """Buffers are static, (re)created by ``mdp_cl_buffer`` only when a call needs more bytes and
    released at exit; kernel objects are created once; arguments are set when their value changes."""
    mdh = MDHS["dot"]
    code = OpenCLBackend(CPU_CAPS).render(lower_gpu(mdh, default_gpu_params(mdh, GPU_CAPS), CPU_CAPS))
    body = code.definition
    globals_ = [b for b in lower_gpu(mdh, default_gpu_params(mdh, GPU_CAPS), CPU_CAPS).buffers if b.role == "global"]
    for b in globals_:
        assert f"static cl_mem mdp_mem_{b.name};" in body and f"mdp_cl_buffer(&mdp_mem_{b.name}, " in body
    assert "clCreateBuffer" not in body and "clReleaseMemObject" not in body and "clSetKernelArg" not in body
    assert "if (!mdp_kernel)" in body and "mdp_cl_arg(mdp_kernel, 0, " in body
    pre = code.preamble
    assert "if (*mem && bytes <= *cap)" in pre and "clReleaseMemObject(*mdp_cl_buffers[i])" in pre
    assert pre.index("clReleaseMemObject(*mdp_cl_buffers[i])") < pre.index("clReleaseContext(mdp_cl_context)")


def test_int_index_arithmetic_when_everything_fits() -> None:
    """Static sizes: ``int`` index arithmetic inside the kernel, 64-bit extent parameters (the ABI)."""
    mdh = MDHS["matmul"]
    plan = lower_gpu(mdh, default_gpu_params(mdh, GPU_CAPS), GPU_CAPS)
    assert plan.index_type == "int"
    src = kernel_source(plan)
    assert "const long mdp_ext64_0" in src and "const int mdp_ext_0 = (int)mdp_ext64_0;" in src
    assert "(long)" not in src.split("__kernel", 1)[1]
    sym = lower_gpu(MDHS["symbolic"], default_gpu_params(MDHS["symbolic"], GPU_CAPS), GPU_CAPS)
    assert sym.index_type == "long"
