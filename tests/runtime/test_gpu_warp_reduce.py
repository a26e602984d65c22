"""The warp-shuffle work-group combine (``GpuParams.warp_reduce``): split-K inside one work-group, the
reduction work-items of each concat point reduced first within their warp (CUDA ``__shfl_down_sync``),
then one value per warp through ``__local`` memory, folded in warp order.

Differential on PoCL against numpy: PoCL has no sub-group shuffles, so the OpenCL writer renders the
shuffle through a ``__local`` exchange (used only where a target's caps claim ``warp_shuffle``, as
here): the lane strides, the per-warp stores, the fold and the stores of the results are the CUDA
kernel's. GEMV shapes (one output row), several rows, sizes that are no multiple of the work-group
(partial warps of outputs, a reduction shorter than a tile), one warp per group and 32, several
private points per work-item, the tiled and the untiled kernel, doubles, a max reduction. Then the
constraints, the plan check, the tuning space and the CUDA spelling compiled for sm_90."""

from __future__ import annotations

import copy
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
from test_opencl_runner import needs_device  # noqa: E402

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
    warp_reduce_stride,
)
from mdpoly.lower.kernel_checks import check_kernel_plan  # noqa: E402
from mdpoly.runtime.base import LaunchRefused  # noqa: E402
from mdpoly.tuning.gpu import gpu_neighbours, gpu_space  # noqa: E402

#: The GEMV grouping: the output dim j alone on NDRange dim 0, i and k on dim 1 (k faster).
GEMV_GROUPS = ((1,), (0, 2))
#: OpenCL caps as PoCL's (work-groups up to 4096 items), with warp shuffles claimed.
SHUFFLE_OPENCL = replace(OPENCL_CAPS, warp_shuffle=True, max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 1024))


def _run(mdh, params: GpuParams, inputs: dict[str, np.ndarray]):  # type: ignore[no-untyped-def]
    """``runner.run_plan`` on a copy of the PoCL target whose caps claim warp shuffles."""
    target = copy.copy(runner.TARGET)
    target.caps = replace(runner.TARGET.caps, warp_shuffle=True, preferred_wg_multiple=32)  # type: ignore[union-attr]
    saved = runner.TARGET
    runner.TARGET = target
    try:
        return runner.run_plan(mdh, params, inputs)
    except LaunchRefused as e:   # a device whose compiled kernel allows smaller groups (NVIDIA: 256)
        pytest.skip(f"the OpenCL device refuses this work-group: {e}")
    finally:
        runner.TARGET = saved


MATMUL = [  # (M, N, K, num_wi, pt, kt, ty)
    (1, 1000, 2048, (1, 4, 64), (1, 1, 1), (0, 0, 2048), "float"),    # the default GEMV shape, one tile
    (1, 37, 1031, (1, 8, 128), (1, 1, 1), (0, 0, 1031), "float"),     # partial output warps, odd reduction
    (1, 45, 300, (1, 16, 64), (1, 2, 1), (0, 0, 300), "float"),       # two private points per work-item
    (3, 29, 515, (1, 4, 8), (1, 1, 1), (0, 0, 64), "float"),          # one warp per group, several tiles
    (2, 50, 333, (1, 2, 512), (1, 1, 1), (), "float"),                # untiled, 32 warps, 2 outputs per warp row
    (1, 21, 777, (1, 8, 32), (1, 1, 1), (0, 0, 777), "double"),       # 8-byte shuffles
    (1, 17, 90, (1, 1, 256), (1, 1, 1), (), "float"),                 # one output per warp: strides 16 .. 1
]


@needs_device
@pytest.mark.parametrize("m,n,k,num_wi,pt,kt,ty", MATMUL)
def test_warp_reduced_matmul_matches_numpy(m, n, k, num_wi, pt, kt, ty) -> None:  # type: ignore[no-untyped-def]
    mdh = ex.matmul(m, n, k, ty=ty)
    params = GpuParams(num_wi, pt, (0, 0, 1), GEMV_GROUPS, kt, (0, 0) if kt else (), warp_reduce=1)
    assert gpu_violations(mdh, params, SHUFFLE_OPENCL) == []
    plan = lower_gpu(mdh, params, SHUFFLE_OPENCL)
    assert plan.warp_reduce == num_wi[1] and "mdp_xch0" in opencl_source(plan)
    rng = np.random.default_rng(41)
    dt = np.float32 if ty == "float" else np.float64
    a, b, c = (rng.standard_normal(s).astype(dt) for s in ((m, k), (k, n), (m, n)))
    out = _run(mdh, params, {"A": a, "B": b, "C": c})
    tol = 1e-3 if ty == "float" else 1e-10
    assert np.allclose(out.outputs["C"].reshape(m, n), c + a @ b, rtol=tol, atol=tol)


@needs_device
def test_warp_reduced_column_max_matches_numpy() -> None:
    # colmax: out[j] = max over i of M[i][j]; the reduction is dim 0, j on NDRange dim 0 below it
    mdh = ex.colmax(700, 19)
    params = GpuParams((64, 4), (1, 1), (1, 0), ((1,), (0,)), warp_reduce=1)
    assert gpu_violations(mdh, params, SHUFFLE_OPENCL) == []
    rng = np.random.default_rng(42)
    m = rng.standard_normal((700, 19)).astype(np.float32)
    names = [b.name for b in mdh.buffers]
    out = _run(mdh, params, {names[0]: m, names[1]: np.full(19, -np.inf, np.float32)})
    assert np.array_equal(out.outputs[names[1]], m.max(axis=0))


def test_constraints_name_what_the_shuffle_combine_needs() -> None:
    mdh = ex.matmul(1, 1000, 2048)
    good = GpuParams((1, 8, 32), (1, 1, 1), (0, 0, 1), GEMV_GROUPS, warp_reduce=1)
    assert gpu_violations(mdh, good, CUDA_CAPS) == [] and warp_reduce_stride(mdh, good) == 8
    assert gpu_violations(mdh, good, OPENCL_CAPS) == ["warp-reduce"]                         # no shuffles
    swapped = replace(good, ocl_groups=((0, 2), (1,)))                                          # k below j
    assert gpu_violations(mdh, swapped, CUDA_CAPS) == ["warp-reduce"]
    wide = replace(good, num_wi=(1, 32, 32))                                                    # no reduction in a warp
    assert gpu_violations(mdh, wide, CUDA_CAPS) == ["warp-reduce"]
    partial = replace(good, num_wi=(1, 4, 4))                                                   # half a warp
    assert gpu_violations(mdh, partial, CUDA_CAPS) == ["warp-reduce"]
    assert gpu_violations(mdh, replace(good, warp_reduce=2), CUDA_CAPS) == ["warp-reduce"]
    chars = ex.matmul(1, 64, 64, ty="char")
    assert gpu_violations(chars, good, CUDA_CAPS) == ["warp-reduce"]                           # 1-byte outputs
    assert warp_reduce_stride(mdh, replace(good, warp_reduce=0)) == 8                          # the layout alone
    assert gpu_params_from_dict(gpu_params_to_dict(good)) == good
    assert "WRED=1" in good.describe(mdh)


def test_plan_check_refuses_a_wrong_lane_stride() -> None:
    mdh = ex.matmul(1, 1000, 2048)
    params = GpuParams((1, 8, 32), (1, 1, 1), (0, 0, 1), GEMV_GROUPS, warp_reduce=1)
    plan = lower_gpu(mdh, params, CUDA_CAPS)
    check_kernel_plan(plan, CUDA_CAPS)
    with pytest.raises(CompilerBug, match="lane stride 4"):
        check_kernel_plan(replace(plan, warp_reduce=4), CUDA_CAPS)
    with pytest.raises(CompilerBug, match="32-wide warp shuffles"):
        check_kernel_plan(plan, OPENCL_CAPS)


def test_tuning_space_and_neighbours_offer_the_shuffle_combine_on_cuda_only() -> None:
    mdh = ex.matmul(1, 1000, 2048)
    assert next(s for s in gpu_space(mdh, {}, CUDA_CAPS).specs if s.name == "WRED").values == (0, 1)
    assert not any(s.name == "WRED" for s in gpu_space(mdh, {}, OPENCL_CAPS).specs)
    p = replace(default_gpu_params(mdh, CUDA_CAPS), warp_reduce=0)
    near = gpu_neighbours(gpu_space(mdh, {}, CUDA_CAPS), p, CUDA_CAPS)
    assert any(q.warp_reduce == 1 and q.num_wi == p.num_wi for q in near)
    assert any(q.warp_reduce == 1 and q.num_wi != p.num_wi for q in near)
    assert not any(q.warp_reduce for q in gpu_neighbours(gpu_space(mdh, {}, OPENCL_CAPS), p, OPENCL_CAPS))


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
@pytest.mark.parametrize("num_wi,ty", [((1, 4, 64), "float"), ((1, 8, 128), "float"), ((1, 4, 8), "double")])
def test_shuffle_combine_compiles_for_sm90(num_wi: tuple[int, int, int], ty: str, tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90
    mdh = ex.matmul(1, 1000, 2048, ty=ty)
    params = GpuParams(num_wi, (1, 1, 1), (0, 0, 1), GEMV_GROUPS, (0, 0, 2048), (0, 0), warp_reduce=1)
    plan = lower_gpu(mdh, params, CUDA_CAPS)
    source = cuda_source(plan)
    assert "__shfl_down_sync(0xffffffffu, mdp_v0, mdp_s)" in source and "mdp_xch" not in source
    assert ("mdp_scratch0[" in source) == (num_wi[1] * num_wi[2] > 32)
    compile_for_sm90(source, plan.name, tmp_path)
