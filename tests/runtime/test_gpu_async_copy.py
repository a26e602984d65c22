"""Double-buffered ``__local`` tiles filled by asynchronous copies (``GpuParams.async_copy``, CUDA
``cp.async`` on sm_80+): two buffers per cached input, the next reduction tile's copies issued into
the other buffer at the start of a tile, waited for (all groups but the newest) before the barrier.

The buffer logic is checked differentially on PoCL: the OpenCL writer renders the same plan with
synchronous copies into the two buffers (a target whose caps are told it has async copies), against
numpy, on prime sizes (partial tiles, unaligned vectors: the element fallback and the zero fill),
aligned sizes (16-byte chunks), several work-groups along the reduction (groups with one tile or
none), doubles (8-byte chunks) and the multi-channel convolution (three reduction dims: the double
buffer restarts inside the outer reduction loops). Constraints, the plan check, the tuning space, and
the CUDA spelling compiled for sm_90 (cp.async in the cubin's PTX) and for sm_75 (the synchronous
fallback, no cp.async)."""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT / "tests" / "core", ROOT / "tests" / "e2e", ROOT / "tests" / "runtime", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import mdh_examples as ex  # noqa: E402
import test_opencl_runner as runner  # noqa: E402
from test_gpu_prefetch import _nvrtc_reason  # noqa: E402
from test_opencl_runner import MCC_SIZES, check_mcc, needs_device  # noqa: E402

from mdpoly.backends.cuda import CUDA_CAPS  # noqa: E402
from mdpoly.backends.cuda import kernel_source as cuda_source  # noqa: E402
from mdpoly.backends.opencl import OPENCL_CAPS  # noqa: E402
from mdpoly.backends.opencl import kernel_source as opencl_source  # noqa: E402
from mdpoly.diagnostics import CompilerBug  # noqa: E402
from mdpoly.lower.gpu import lower_gpu  # noqa: E402
from mdpoly.lower.gpu_defaults import default_gpu_params  # noqa: E402
from mdpoly.lower.gpu_params import (  # noqa: E402
    GpuParams,
    gpu_params_from_dict,
    gpu_params_to_dict,
    gpu_violations,
    local_bytes,
)
from mdpoly.lower.kernel_checks import check_kernel_plan, local_memory_bytes  # noqa: E402
from mdpoly.tuning.gpu import gpu_neighbours, gpu_space  # noqa: E402

GROUPS = ((1,), (0,), (2,))
ASYNC_OPENCL = replace(OPENCL_CAPS, async_copy=True)


def _run_async(mdh, params: GpuParams, inputs: dict[str, np.ndarray]):  # type: ignore[no-untyped-def]
    """``runner.run_plan`` on a copy of the PoCL target whose caps allow ``async_copy``."""
    target = copy.copy(runner.TARGET)
    target.caps = replace(runner.TARGET.caps, async_copy=True)   # type: ignore[union-attr]
    saved = runner.TARGET
    runner.TARGET = target
    try:
        return runner.run_plan(mdh, params, inputs)
    finally:
        runner.TARGET = saved


ASYNC_MATMUL = [  # (M, N, K, num_wi, pt, num_wg, kt, vec, pad, gvec)
    (13, 17, 29, (4, 8, 1), (3, 2, 1), (0, 0, 1), (0, 0, 8), (), 0, 1),           # elements, partial last tile
    (13, 17, 29, (4, 8, 1), (3, 2, 1), (0, 0, 2), (0, 0, 4), (), 0, 4),           # unaligned vectors, 2 groups on k
    (13, 17, 29, (4, 4, 1), (4, 8, 1), (0, 0, 1), (0, 0, 8), (4, 4, 1), 1, 4),    # vector reads, padding
    (16, 32, 48, (4, 4, 1), (2, 4, 1), (0, 0, 1), (0, 0, 8), (), 0, 4),           # aligned: 16-byte chunks
    (16, 32, 48, (4, 4, 1), (4, 8, 1), (0, 0, 2), (0, 0, 8), (4, 4, 1), 1, 4),    # aligned, vector reads, 2 groups
    (16, 32, 8, (4, 4, 1), (2, 2, 1), (0, 0, 4), (0, 0, 4), (), 0, 2),            # 4 groups, 2 tiles: groups without one
]


@needs_device
@pytest.mark.parametrize("m,n,k,num_wi,pt,num_wg,kt,vec,pad,gvec", ASYNC_MATMUL)
def test_double_buffered_matmul_matches_numpy(m, n, k, num_wi, pt, num_wg, kt, vec, pad, gvec) -> None:  # type: ignore[no-untyped-def]
    mdh = ex.matmul(m, n, k)
    params = GpuParams(num_wi, pt, num_wg, GROUPS, kt, (1, 1), vec, 0, pad, gvec, async_copy=1)
    assert gpu_violations(mdh, params, ASYNC_OPENCL) == []
    plan = lower_gpu(mdh, params, ASYNC_OPENCL)
    assert plan.async_copy and "mdp_buf ^= 1;" in opencl_source(plan)
    rng = np.random.default_rng(21)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n)))
    out = _run_async(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(out.outputs["C"].reshape(m, n), c + a @ b, rtol=1e-4, atol=1e-4)


@needs_device
def test_double_buffered_double_matmul_matches_numpy() -> None:
    m, n, k = 9, 10, 23
    mdh = ex.matmul(m, n, k, ty="double")
    params = GpuParams((4, 4, 1), (2, 2, 1), (0, 0, 1), GROUPS, (0, 0, 4), (1, 1), async_copy=1)
    rng = np.random.default_rng(22)
    a, b, c = (rng.standard_normal(s) for s in ((m, k), (k, n), (m, n)))
    out = _run_async(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(out.outputs["C"].reshape(m, n), c + a @ b, rtol=1e-12, atol=1e-12)


@needs_device
@pytest.mark.parametrize("gvec", [1, 4])
def test_double_buffered_mcc_matches_numpy(gvec: int) -> None:
    # channel tiles of 4 of the 13 channels inside the r and s loops: the double buffer restarts per (r, s)
    params = GpuParams((1, 1, 4, 8, 1, 1, 1), (1, 5, 1, 2, 1, 1, 1), (0, 0, 0, 0, 1, 1, 2),
                       ((3,), (2,), (0, 1, 4, 5, 6)), (0, 0, 0, 0, 2, 3, 4), (1, 1), gvec=gvec, async_copy=1)
    assert gpu_violations(ex.mcc(*MCC_SIZES), params, ASYNC_OPENCL) == []
    target = copy.copy(runner.TARGET)
    target.caps = replace(runner.TARGET.caps, async_copy=True)   # type: ignore[union-attr]
    saved = runner.TARGET
    runner.TARGET = target
    try:
        check_mcc(params, seed=23)
    finally:
        runner.TARGET = saved


@needs_device
@pytest.mark.parametrize("gvec,kt", [(4, (1, 3, 3)), (2, (2, 2, 3)), (4, (3, 3, 1)), (4, (3, 3, 3))])
def test_double_buffered_merged_row_convolution_matches_numpy(gvec: int, kt: tuple[int, ...]) -> None:
    # a strided 3-channel convolution whose input copy is one merged (width x channel) row per (n, h)
    from test_gpu_merged_rows import check_strided, strided_mcc
    mdh = strided_mcc(2, 5, 7, 6, 3, 3, 3, 2, 1)
    params = GpuParams((1, 1, 4, 8, 1, 1, 1), (1, 1, 2, 1, 1, 1, 1), (0, 0, 0, 0, 1, 1, 1),
                       ((3,), (2,), (0, 1, 4, 5, 6)), (0, 0, 0, 0, *kt), (1, 1), gvec=gvec, async_copy=1)
    assert gpu_violations(mdh, params, ASYNC_OPENCL) == []
    assert lower_gpu(mdh, params, ASYNC_OPENCL).async_copy
    target = copy.copy(runner.TARGET)
    target.caps = replace(runner.TARGET.caps, async_copy=True)   # type: ignore[union-attr]
    saved = runner.TARGET
    runner.TARGET = target   # run_plan reads it at each call
    try:
        check_strided(mdh, params, seed=40 + gvec)
    finally:
        runner.TARGET = saved


def test_defaults_keep_the_register_prefetch() -> None:
    # measured on an H200 (benchmarks/results/gpu_2026-11-25_h200_async.md): the register prefetch ran faster
    p = default_gpu_params(ex.matmul(1024, 1024, 1024, update="assign", init="0.0f"), CUDA_CAPS)
    assert (p.async_copy, p.prefetch, p.warp_tile) == (0, 1, ())


def _sgemm() -> tuple[object, GpuParams]:
    mdh = ex.matmul(1024, 1024, 1024, update="assign", init="0.0f")
    return mdh, replace(default_gpu_params(mdh, CUDA_CAPS), prefetch=0, async_copy=1)


def test_async_constraints_and_doubled_local_memory() -> None:
    mdh, p = _sgemm()
    assert gpu_violations(mdh, p, CUDA_CAPS) == []                               # type: ignore[arg-type]
    assert "async-copy" in gpu_violations(mdh, p, OPENCL_CAPS)                   # type: ignore[arg-type]
    assert "async-copy" in gpu_violations(mdh, replace(p, prefetch=1), CUDA_CAPS)   # type: ignore[arg-type]
    assert "async-copy" in gpu_violations(mdh, replace(p, cache=(0, 0)), CUDA_CAPS)  # type: ignore[arg-type]
    assert "async-copy" in gpu_violations(mdh, replace(p, async_copy=2), CUDA_CAPS)  # type: ignore[arg-type]
    single = local_bytes(mdh, replace(p, async_copy=0))                          # type: ignore[arg-type]
    assert local_bytes(mdh, p) == 2 * single                                     # type: ignore[arg-type]
    plan = lower_gpu(mdh, p, CUDA_CAPS)                                          # type: ignore[arg-type]
    assert local_memory_bytes(plan) == 2 * single
    # a copy that fits once but not twice: refused with async copies only
    small = replace(CUDA_CAPS, local_mem_bytes=single + 1024)
    assert gpu_violations(mdh, replace(p, async_copy=0), small) == []            # type: ignore[arg-type]
    assert "tile-local-mem" in gpu_violations(mdh, p, small)                     # type: ignore[arg-type]
    assert "ASYNC=1" in p.describe(mdh)                                          # type: ignore[arg-type]
    assert gpu_params_from_dict(gpu_params_to_dict(p)) == p
    assert gpu_params_from_dict({k: v for k, v in gpu_params_to_dict(p).items() if k != "async_copy"}).async_copy == 0


def test_plan_check_rejects_async_copies_where_they_cannot_run() -> None:
    mdh, p = _sgemm()
    plan = lower_gpu(mdh, p, CUDA_CAPS)                                          # type: ignore[arg-type]
    check_kernel_plan(plan, CUDA_CAPS)
    with pytest.raises(CompilerBug, match="asynchronous"):
        check_kernel_plan(plan, replace(CUDA_CAPS, async_copy=False))
    with pytest.raises(CompilerBug, match="asynchronous"):
        check_kernel_plan(replace(plan, prefetch=True), CUDA_CAPS)
    with pytest.raises(CompilerBug, match="local memory"):
        check_kernel_plan(plan, replace(CUDA_CAPS, local_mem_bytes=local_memory_bytes(plan) - 4))


def test_cuda_spelling_and_opencl_plain_copies() -> None:
    mdh, p = _sgemm()
    plan = lower_gpu(mdh, p, CUDA_CAPS)                                          # type: ignore[arg-type]
    src = cuda_source(plan)
    assert "cp.async.cg.shared.global" in src and src.count("mdp_async_wait_prior();") == 1
    assert "mdp_async_copy((float4 *)" in src and "mdp_pf" not in src
    off = cuda_source(lower_gpu(mdh, replace(p, async_copy=0), CUDA_CAPS))      # type: ignore[arg-type]
    assert "cp.async" not in off and "mdp_buf" not in off
    ocl = opencl_source(plan)
    assert "cp.async" not in ocl and "mdp_async" not in ocl and "mdp_buf ^= 1;" in ocl


def test_tuning_space_and_neighbours_switch_async_copies_on_cuda_only() -> None:
    mdh = ex.matmul(256, 256, 256)
    assert next(s for s in gpu_space(mdh, {}, CUDA_CAPS).specs if s.name == "ASYNC").values == (0, 1)
    assert not any(s.name == "ASYNC" for s in gpu_space(mdh, {}, OPENCL_CAPS).specs)
    p = default_gpu_params(mdh, CUDA_CAPS)
    near = gpu_neighbours(gpu_space(mdh, {}, CUDA_CAPS), p, CUDA_CAPS)
    assert any(q.async_copy == 1 and q.prefetch == 0 for q in near)
    assert not any(q.async_copy for q in gpu_neighbours(gpu_space(mdh, {}, OPENCL_CAPS), p, OPENCL_CAPS))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc (CUDA toolkit)")
@pytest.mark.parametrize("arch", ["sm_90", "sm_75"])
def test_async_kernel_compiles_with_nvcc(arch: str, tmp_path: Path) -> None:
    """cp.async in the PTX for sm_90, the synchronous fallback (none) for sm_75; no register spills
    in the launch-bounded 8 x 8 sgemm tile."""
    mdh, p = _sgemm()
    plan = lower_gpu(mdh, p, CUDA_CAPS)                                          # type: ignore[arg-type]
    cu = tmp_path / "k.cu"
    cu.write_text(cuda_source(plan))
    ptx = subprocess.run(["nvcc", f"-arch={arch}", "-ptx", str(cu), "-o", str(tmp_path / "k.ptx")],
                         capture_output=True, text=True)
    assert ptx.returncode == 0, ptx.stderr
    assert ("cp.async.cg.shared.global" in (tmp_path / "k.ptx").read_text()) == (arch == "sm_90")
    cubin = subprocess.run(["nvcc", f"-arch={arch}", "-cubin", "--resource-usage", str(cu), "-o",
                            str(tmp_path / "k.cubin")], capture_output=True, text=True)
    assert cubin.returncode == 0, cubin.stderr
    if arch == "sm_90":
        assert "0 bytes spill stores" in cubin.stdout + cubin.stderr


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
def test_async_mcc_kernel_compiles_for_sm90(tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90
    mdh = ex.mcc(16, 112, 112, 64, 4, 3, 3)
    p = replace(default_gpu_params(mdh, CUDA_CAPS), prefetch=0, async_copy=1)
    assert gpu_violations(mdh, p, CUDA_CAPS) == []
    plan = lower_gpu(mdh, p, CUDA_CAPS)
    compile_for_sm90(cuda_source(plan), plan.name, tmp_path)
