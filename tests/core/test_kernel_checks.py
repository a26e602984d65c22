"""``check_kernel_plan``: every example's default work-group plan passes on the OpenCL and CUDA
caps; plans broken one property at a time (``dataclasses.replace``) raise ``CompilerBug``.

The coverage property is the textbook one: each point of a dim's index range is computed by
exactly one (work-group, work-item, private point) -- a gap leaves an output unwritten, an
overlap adds a reduction's point twice."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import mdh_examples as ex
import pytest

from mdpoly.backends.cuda import CUDA_CAPS
from mdpoly.backends.opencl import OPENCL_CAPS
from mdpoly.diagnostics import CompilerBug, UnsupportedInput
from mdpoly.frontend.analyze import analyze_file
from mdpoly.ir.kernel import KernelPlan
from mdpoly.ir.mdh import Affine
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.gpu import lower_gpu
from mdpoly.lower.gpu_defaults import default_gpu_params, untiled_gpu_params
from mdpoly.lower.gpu_params import GpuParams
from mdpoly.lower.kernel_checks import check_kernel_plan, local_memory_bytes
from mdpoly.options import Options

EXAMPLES = Path(__file__).resolve().parents[2] / "c_examples"
CAPS = {"opencl": OPENCL_CAPS, "cuda": CUDA_CAPS}
MDHS = {
    "matmul": ex.matmul(40, 50, 60), "matvec": ex.matvec(37, 101), "dot": ex.dot(1000003), "colmax": ex.colmax(53, 37),
    "jacobi2d": ex.jacobi2d(48), "mcc": ex.mcc(2, 8, 8, 16, 8, 3, 3), "symbolic": ex.matmul_symbolic(),
}


def _plan(name: str, caps: TargetCaps = OPENCL_CAPS, params: GpuParams | None = None) -> KernelPlan:
    mdh = MDHS[name]
    return lower_gpu(mdh, params or default_gpu_params(mdh, caps), caps)


def _with_dim(plan: KernelPlan, d: int, **change: object) -> KernelPlan:
    dims = list(plan.dims)
    dims[d] = replace(dims[d], **change)  # type: ignore[arg-type]
    return replace(plan, dims=tuple(dims))


@pytest.mark.parametrize("target", list(CAPS))
@pytest.mark.parametrize("name", list(MDHS))
def test_default_and_untiled_plans_pass(name: str, target: str) -> None:
    caps = CAPS[target]
    check_kernel_plan(_plan(name, caps), caps)
    check_kernel_plan(_plan(name, caps, untiled_gpu_params(MDHS[name], caps)), caps)


@pytest.mark.parametrize("target", list(CAPS))
@pytest.mark.parametrize("source", sorted(p.name for p in EXAMPLES.glob("*.c")))
def test_every_c_example_default_plan_passes(source: str, target: str) -> None:
    caps = CAPS[target]
    cwd = os.getcwd()
    os.chdir(EXAMPLES)
    try:
        analysis = analyze_file(source, Options(target=target))  # type: ignore[arg-type]
    finally:
        os.chdir(cwd)
    checked = 0
    for nest in analysis.nests:
        if nest.mdh is None:
            continue
        try:
            plan = lower_gpu(nest.mdh, default_gpu_params(nest.mdh, caps), caps)
        except UnsupportedInput:
            continue
        check_kernel_plan(plan, caps)
        checked += 1
    assert checked or source in ("prefix_sum.c",)


def test_private_points_overlapping_the_next_work_item_are_caught() -> None:
    plan = _plan("matvec")
    d = plan.concat[0].index
    plan = _with_dim(plan, d, num_wi=4, pt=2, vec=1)
    check_kernel_plan(plan, OPENCL_CAPS)          # consistent: passes
    # chunks of 3 points for a private tile of 2: a work-item writes into its neighbour's points
    with pytest.raises(CompilerBug, match="more than once"):
        check_kernel_plan(_with_dim(plan, d, vec=3), OPENCL_CAPS)


@pytest.mark.parametrize("tiled", [False, True])
def test_reduction_walk_with_wrong_group_count_is_caught(tiled: bool) -> None:
    mdh = MDHS["matvec"]
    base = default_gpu_params(mdh, OPENCL_CAPS) if tiled else untiled_gpu_params(mdh, OPENCL_CAPS)
    plan = lower_gpu(mdh, base, OPENCL_CAPS)
    assert (plan.tiles is not None) == tiled
    r = plan.reductions[0].index
    # the kernels step num_wg * num_wi (or num_wg tiles) along the reduction: a plan whose dim
    # claims num_wg 0 computes nothing of it
    with pytest.raises(CompilerBug, match="never visited"):
        check_kernel_plan(_with_dim(plan, r, num_wg=0), OPENCL_CAPS)
    if tiled:   # tiles of 0 points: nothing of the reduction is computed
        with pytest.raises(CompilerBug, match="never visited"):
            check_kernel_plan(_with_dim(plan, r, kt=0), OPENCL_CAPS)


def test_reduction_over_groups_without_combine_kernel_is_caught() -> None:
    mdh = MDHS["dot"]
    p = untiled_gpu_params(mdh, OPENCL_CAPS)
    plan = lower_gpu(mdh, replace(p, num_wg=(4,)), OPENCL_CAPS)
    assert plan.partials
    check_kernel_plan(plan, OPENCL_CAPS)
    with pytest.raises(CompilerBug, match="without a combine kernel"):
        check_kernel_plan(replace(plan, partials=False), OPENCL_CAPS)
    with pytest.raises(CompilerBug, match="does not combine"):
        check_kernel_plan(replace(plan, local_combine=False), OPENCL_CAPS)


def test_dims_and_grid_axes_must_match_the_mdh() -> None:
    plan = _plan("matmul")
    with pytest.raises(CompilerBug, match="kernel dims"):
        check_kernel_plan(replace(plan, dims=plan.dims[:-1]), OPENCL_CAPS)
    with pytest.raises(CompilerBug, match="is not MDH dim"):
        check_kernel_plan(_with_dim(plan, 0, extent=Affine.of({}, 39)), OPENCL_CAPS)
    with pytest.raises(CompilerBug, match="partition"):
        check_kernel_plan(replace(plan, grid_axes=((0,), (0, 2))), OPENCL_CAPS)
    with pytest.raises(CompilerBug, match="grid axes"):
        check_kernel_plan(replace(plan, grid_axes=((0,), (1,), (2,), ())), OPENCL_CAPS)


def test_limits_of_the_caps_are_checked() -> None:
    plan = _plan("matmul", CUDA_CAPS)
    small = replace(CUDA_CAPS, max_work_group_size=plan.wg_size() - 1)
    with pytest.raises(CompilerBug, match="work-items per group"):
        check_kernel_plan(plan, small)
    axis0 = plan.grid_axes[0]
    n0 = 1
    for d in axis0:
        n0 *= plan.dims[d].num_wi
    narrow = replace(CUDA_CAPS, max_work_item_sizes=(n0 - 1, 1024, 64))
    if n0 > 1:
        with pytest.raises(CompilerBug, match="grid axis 0"):
            check_kernel_plan(plan, narrow)
    used = local_memory_bytes(plan)
    assert used > 0   # the default matmul plan caches its inputs
    with pytest.raises(CompilerBug, match="local memory"):
        check_kernel_plan(plan, replace(CUDA_CAPS, local_mem_bytes=used - 1))


def test_symbolic_extent_is_checked_for_every_size() -> None:
    plan = _plan("symbolic")
    check_kernel_plan(plan, OPENCL_CAPS)
    d = plan.concat[0].index
    with pytest.raises(CompilerBug, match="more than once"):
        check_kernel_plan(_with_dim(plan, d, pt=3, vec=2), OPENCL_CAPS)
