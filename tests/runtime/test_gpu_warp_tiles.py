"""Warp tiles (``GpuParams.warp_tile``): the work-items of a work-group are renumbered so that each
warp of 32 consecutive local ids covers a ``wm x wn`` rectangle of the two dims on NDRange dims 1
and 0 instead of 32 consecutive work-items of the dim on NDRange dim 0.

Differential on PoCL against numpy: matrix products with 8 x 4 and 4 x 8 warps over 16 x 16 and
8 x 32 work-groups, with partial edge tiles, vector reads of the copies, the register prefetch, two
groups along the reduction, the untiled kernel; the multi-channel convolution. Constraints, the plan
check (the renumbering is a bijection of the work-group: isl), the tuning space, an sm_90 compile."""

from __future__ import annotations

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
from test_gpu_prefetch import _nvrtc_reason  # noqa: E402
from test_opencl_runner import MCC_SIZES, check_mcc, needs_device, run_plan  # noqa: E402

from mdpoly.backends.cuda import CUDA_CAPS  # noqa: E402
from mdpoly.backends.cuda import kernel_source as cuda_source  # noqa: E402
from mdpoly.backends.opencl import OPENCL_CAPS  # noqa: E402
from mdpoly.backends.opencl import kernel_source as opencl_source  # noqa: E402
from mdpoly.diagnostics import CompilerBug  # noqa: E402
from mdpoly.lower.gpu import lower_gpu  # noqa: E402
from mdpoly.lower.gpu_defaults import default_gpu_params  # noqa: E402
from mdpoly.lower.gpu_params import GpuParams, gpu_params_from_dict, gpu_params_to_dict, gpu_violations  # noqa: E402
from mdpoly.lower.kernel_checks import check_kernel_plan  # noqa: E402
from mdpoly.tuning.gpu import gpu_neighbours, gpu_space  # noqa: E402

GROUPS = ((1,), (0,), (2,))

WARP_MATMUL = [  # (M, N, K, num_wi, pt, num_wg, kt, cache, vec, prefetch, warp)
    (37, 45, 29, (16, 16, 1), (2, 2, 1), (0, 0, 1), (0, 0, 8), (1, 1), (), 0, (8, 4)),        # partial edge tiles
    (37, 45, 29, (16, 16, 1), (2, 2, 1), (0, 0, 2), (0, 0, 4), (1, 1), (), 1, (4, 8)),        # prefetch, 2 groups on k
    (40, 72, 24, (8, 32, 1), (1, 2, 1), (0, 0, 1), (0, 0, 8), (1, 1), (), 0, (8, 4)),         # 8 x 32 items, 2 warps across
    (64, 64, 16, (16, 16, 1), (4, 4, 1), (0, 0, 1), (0, 0, 8), (1, 1), (4, 4, 1), 0, (4, 8)),  # vector reads of the copies
    (37, 45, 29, (16, 16, 1), (1, 1, 1), (0, 0, 1), (), (), (), 0, (4, 8)),                   # untiled kernel
]


@needs_device
@pytest.mark.parametrize("m,n,k,num_wi,pt,num_wg,kt,cache,vec,prefetch,warp", WARP_MATMUL)
def test_warp_tiled_matmul_matches_numpy(m, n, k, num_wi, pt, num_wg, kt, cache, vec, prefetch, warp) -> None:  # type: ignore[no-untyped-def]
    mdh = ex.matmul(m, n, k)
    params = GpuParams(num_wi, pt, num_wg, GROUPS, kt, cache, vec, prefetch, warp_tile=warp)
    assert gpu_violations(mdh, params, OPENCL_CAPS) == []
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.warp_tile == warp and f"warp tile {warp[0]} x {warp[1]}" in opencl_source(plan)
    rng = np.random.default_rng(31)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n)))
    out = run_plan(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(out.outputs["C"].reshape(m, n), c + a @ b, rtol=1e-4, atol=1e-4)


@needs_device
def test_warp_tiled_mcc_matches_numpy() -> None:
    # 8 x 8 work-items over (q, k): two warps of 4 rows of 8 in hardware order, renumbered 8 x 4 and 4 x 8 (the
    # warps side by side along k)
    for warp in ((8, 4), (2, 16), (4, 8)):
        params = GpuParams((1, 1, 8, 8, 1, 1, 1), (1, 5, 1, 2, 1, 1, 1), (0, 0, 0, 0, 1, 1, 2),
                           ((3,), (2,), (0, 1, 4, 5, 6)), (0, 0, 0, 0, 2, 3, 4), (1, 1), warp_tile=warp)
        if warp == (2, 16):   # 16 work-items across do not divide the 8 along k
            assert gpu_violations(ex.mcc(*MCC_SIZES), params, OPENCL_CAPS) == ["warp-tile"]
            continue
        assert gpu_violations(ex.mcc(*MCC_SIZES), params, OPENCL_CAPS) == []
        check_mcc(params, seed=32)


def _sgemm() -> tuple[object, GpuParams]:
    mdh = ex.matmul(1024, 1024, 1024, update="assign", init="0.0f")
    return mdh, replace(default_gpu_params(mdh, CUDA_CAPS), warp_tile=(4, 8))


def test_warp_tile_constraints() -> None:
    mdh, p = _sgemm()
    assert gpu_violations(mdh, p, CUDA_CAPS) == []                                            # type: ignore[arg-type]
    for bad in ((3, 8), (4, 4), (64, 1 // 2), (4, 8, 1)):
        assert "warp-tile" in gpu_violations(mdh, replace(p, warp_tile=bad), CUDA_CAPS)      # type: ignore[arg-type]
    assert "warp-tile" in gpu_violations(mdh, replace(p, warp_tile=(1, 32)), CUDA_CAPS)      # type: ignore[arg-type]
    merged = replace(p, ocl_groups=((1, 0), (2,)))
    assert "warp-tile" in gpu_violations(mdh, merged, CUDA_CAPS)                              # type: ignore[arg-type]
    third = replace(p, num_wi=(16, 8, 2))
    assert "warp-tile" in gpu_violations(mdh, third, CUDA_CAPS)                               # type: ignore[arg-type]
    assert "WARP=4x8" in p.describe(mdh)                                                      # type: ignore[arg-type]
    assert gpu_params_from_dict(gpu_params_to_dict(p)) == p
    assert gpu_params_from_dict({k: v for k, v in gpu_params_to_dict(p).items() if k != "warp_tile"}).warp_tile == ()


def test_plan_check_rejects_a_renumbering_that_is_not_one_to_one() -> None:
    mdh, p = _sgemm()
    plan = lower_gpu(mdh, p, CUDA_CAPS)                                                       # type: ignore[arg-type]
    check_kernel_plan(plan, CUDA_CAPS)
    with pytest.raises(CompilerBug, match="does not divide"):
        check_kernel_plan(replace(plan, warp_tile=(3, 8)), CUDA_CAPS)
    with pytest.raises(CompilerBug, match="grid axes"):
        check_kernel_plan(replace(plan, grid_axes=((1, 0), (2,))), CUDA_CAPS)
    dims = tuple(replace(d, num_wi=2) if d.index == 2 else d for d in plan.dims)
    with pytest.raises(CompilerBug, match="third dim"):
        check_kernel_plan(replace(plan, dims=dims, local_combine=True), CUDA_CAPS)


def test_cuda_spelling_and_hardware_order_without_it() -> None:
    mdh, p = _sgemm()
    src = cuda_source(lower_gpu(mdh, p, CUDA_CAPS))                                           # type: ignore[arg-type]
    assert "mdp_wi_1 = (mdp_l / 32 % 2) * 8 + mdp_l % 8;" in src
    assert "mdp_wi_0 = (mdp_l / 32 / 2) * 4 + mdp_l % 32 / 8;" in src
    assert "warp tile" not in cuda_source(lower_gpu(mdh, replace(p, warp_tile=()), CUDA_CAPS))  # type: ignore[arg-type]


def test_tuning_space_and_neighbours_set_warp_tiles() -> None:
    mdh = ex.matmul(256, 256, 256)
    for caps in (CUDA_CAPS, OPENCL_CAPS):
        space = gpu_space(mdh, {}, caps)
        assert next(s for s in space.specs if s.name == "WARP").values == (0, 4, 8)
        p = default_gpu_params(mdh, caps)
        near = gpu_neighbours(space, p, caps)
        assert {q.warp_tile for q in near} >= {(8, 4), (4, 8)}
        assert all(gpu_violations(mdh, q, caps) == [] for q in near)


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
def test_warp_tiled_async_kernel_compiles_for_sm90(tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90
    mdh, p = _sgemm()
    plan = lower_gpu(mdh, replace(p, prefetch=0, async_copy=1), CUDA_CAPS)                   # type: ignore[arg-type]
    compile_for_sm90(cuda_source(plan), plan.name, tmp_path)
