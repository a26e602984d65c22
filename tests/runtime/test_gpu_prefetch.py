"""Double-buffered ``__local`` tiles (``GpuParams.prefetch``) and 8 x 16 register tiles: the next reduction tile of the
cached inputs is loaded into registers while the current one is computed.

Differential: the tiled kernels run on PoCL through the shipped host code and are compared with
numpy (matrix product; multi-channel convolution, whose innermost reduction loop is the one
prefetched; few cases: PoCL compiles registers live across barriers slowly), at prime sizes so that tiles are partial, with reductions split over work-groups
so that a group walks several tiles, one tile, or none. The CUDA spelling compiles with NVRTC.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT / "tests" / "core", ROOT / "tests" / "e2e", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import mdh_examples as ex  # noqa: E402
from test_opencl_runner import MCC_SIZES, check_mcc, needs_device, run_plan  # noqa: E402

from mdpoly.backends.cuda import CUDA_CAPS  # noqa: E402
from mdpoly.backends.cuda import kernel_source as cuda_source  # noqa: E402
from mdpoly.backends.opencl import OPENCL_CAPS  # noqa: E402
from mdpoly.backends.opencl import kernel_source as opencl_source  # noqa: E402
from mdpoly.lower.gpu import lower_gpu  # noqa: E402
from mdpoly.lower.gpu_defaults import default_gpu_params  # noqa: E402
from mdpoly.lower.gpu_params import (  # noqa: E402
    MAX_PREFETCH_REGS,
    GpuParams,
    gpu_params_from_dict,
    gpu_params_to_dict,
    gpu_violations,
    prefetch_regs,
)
from mdpoly.tuning.gpu import gpu_neighbours, gpu_space  # noqa: E402

PREFETCH_MATMUL = [  # (num_wi, pt, num_wg, kt, cache) with prefetch on; K = 29
    ((4, 8, 1), (3, 2, 1), (0, 0, 1), (0, 0, 5), (1, 1)),     # 6 tiles in one group, the last partial
    ((4, 8, 1), (3, 2, 1), (0, 0, 2), (0, 0, 7), (1, 0)),     # 2 groups of 2 and 3 tiles, A cached only
    ((2, 4, 2), (1, 3, 1), (0, 0, 3), (0, 0, 4), (0, 1)),     # 2 work-items along the reduction too
    ((8, 8, 1), (4, 4, 1), (0, 0, 1), (0, 0, 32), (1, 1)),    # one tile longer than the reduction
    ((4, 4, 1), (2, 2, 1), (0, 0, 8), (0, 0, 5), (1, 1)),     # 8 groups, 6 tiles: two groups get none
    ((16, 16, 1), (8, 8, 1), (0, 0, 1), (0, 0, 16), (1, 1)),  # the GPU default shape, 2 tiles
]


@needs_device
@pytest.mark.parametrize("num_wi,pt,num_wg,kt,cache", PREFETCH_MATMUL)
def test_prefetched_matmul_matches_numpy(num_wi, pt, num_wg, kt, cache) -> None:  # type: ignore[no-untyped-def]
    mdh = ex.matmul(13, 17, 29)
    params = GpuParams(num_wi, pt, num_wg, ((1,), (0,), (2,)), kt, cache, prefetch=1)
    assert gpu_violations(mdh, params, OPENCL_CAPS) == []
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.prefetch and "mdp_pf" in opencl_source(plan)
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((13, 29), (29, 17), (13, 17)))
    m = run_plan(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(m.outputs["C"].reshape(13, 17), c + a @ b, rtol=1e-4, atol=1e-4)


PREFETCH_MCC = [  # dims n,p,q,k,r,s,c: the innermost reduction (c) is prefetched, r and s tile around it
    ((1, 1, 4, 8, 1, 1, 1), (1, 5, 1, 2, 1, 1, 1), (0, 0, 0, 0, 1, 1, 2), (0, 0, 0, 0, 2, 3, 3), (1, 1)),
    ((1, 1, 8, 8, 1, 1, 1), (1, 2, 1, 3, 1, 1, 1), (0, 0, 0, 0, 2, 1, 1), (0, 0, 0, 0, 1, 2, 4), (0, 1)),
]


@needs_device
@pytest.mark.parametrize("num_wi,pt,num_wg,kt,cache", PREFETCH_MCC)
def test_prefetched_mcc_matches_numpy(num_wi, pt, num_wg, kt, cache) -> None:  # type: ignore[no-untyped-def]
    params = GpuParams(num_wi, pt, num_wg, ((3,), (2,), (0, 1, 4, 5, 6)), kt, cache, prefetch=1)
    assert gpu_violations(ex.mcc(*MCC_SIZES), params, OPENCL_CAPS) == []
    check_mcc(params, seed=6)


def test_prefetch_constraints() -> None:
    mdh = ex.matmul(13, 17, 29)
    ok = GpuParams((4, 8, 1), (3, 2, 1), (0, 0, 1), ((1,), (0,), (2,)), (0, 0, 5), (1, 1), prefetch=1)
    assert gpu_violations(mdh, ok, OPENCL_CAPS) == []
    assert prefetch_regs(mdh, ok) == 2 + 3   # A: 12 x 5 = 60, B: 5 x 16 = 80 elements over 32 items
    assert "prefetch" in gpu_violations(mdh, replace(ok, cache=(0, 0)), OPENCL_CAPS)   # nothing cached
    assert "prefetch" in gpu_violations(mdh, replace(ok, prefetch=3), OPENCL_CAPS)
    few = GpuParams((1, 1, 1), (3, 2, 1), (0, 0, 1), ((1,), (0,), (2,)), (0, 0, 29), (1, 1), prefetch=1)
    assert prefetch_regs(mdh, few) > MAX_PREFETCH_REGS   # one work-item would hold 3 x 29 + 29 x 2 values
    assert "prefetch" in gpu_violations(mdh, few, OPENCL_CAPS)
    assert gpu_violations(mdh, replace(few, prefetch=0), OPENCL_CAPS) == []
    assert not lower_gpu(mdh, replace(ok, prefetch=0), OPENCL_CAPS).prefetch


def test_gpu_defaults_prefetch_and_round_trip_through_the_cache() -> None:
    mdh = ex.matmul(1024, 1024, 1024)
    for caps in (replace(OPENCL_CAPS, is_gpu=True), CUDA_CAPS):
        p = default_gpu_params(mdh, caps)
        assert p.prefetch == 1 and gpu_violations(mdh, p, caps) == []
        assert gpu_params_from_dict(gpu_params_to_dict(p)) == p
        assert "PREFETCH=1" in p.describe(mdh)
    assert default_gpu_params(mdh, OPENCL_CAPS).prefetch == 0   # off a GPU (PoCL compiles it slowly)


def test_tuning_space_and_neighbours_switch_prefetch() -> None:
    mdh = ex.matmul(64, 64, 64)
    space = gpu_space(mdh, {}, OPENCL_CAPS)
    pf = next(s for s in space.specs if s.name == "PF")
    assert pf.values == (0, 1)
    p = replace(default_gpu_params(mdh, OPENCL_CAPS), prefetch=1)
    assert gpu_violations(mdh, p, OPENCL_CAPS) == []
    flipped = [q for q in gpu_neighbours(space, p, OPENCL_CAPS) if q.prefetch != p.prefetch]
    assert flipped and all(gpu_violations(mdh, q, OPENCL_CAPS) == [] for q in flipped)


def _nvrtc_reason() -> str | None:
    from cuda_harness import nvrtc_unavailable
    return nvrtc_unavailable()


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
@pytest.mark.parametrize("name", ["matmul", "mcc"])
def test_prefetched_kernels_compile_with_nvrtc_for_sm90(name: str, tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90
    mdh = ex.matmul(1024, 1024, 1024) if name == "matmul" else ex.mcc(1, 56, 56, 64, 64, 3, 3)
    params = default_gpu_params(mdh, CUDA_CAPS)
    plan = lower_gpu(mdh, params, CUDA_CAPS)
    assert plan.prefetch
    compile_for_sm90(cuda_source(plan), plan.name, tmp_path)


def test_no_default_prefetch_when_the_innermost_reduction_has_one_tile() -> None:
    one_channel = ex.mcc(1, 508, 508, 1, 1, 5, 5)     # the c loop (innermost reduction) has 1 point
    three = ex.mcc(16, 112, 112, 64, 3, 7, 7)         # the 7 x 7 x 3 window is one tile
    many = ex.mcc(1, 56, 56, 64, 64, 3, 3)            # 64 channels: several tiles of c per work-group
    assert default_gpu_params(one_channel, CUDA_CAPS).prefetch == 0
    assert default_gpu_params(three, CUDA_CAPS).prefetch == 0
    assert default_gpu_params(many, CUDA_CAPS).prefetch == 1


TILE_8_BY_16 = GpuParams((4, 8, 1), (8, 16, 1), (0, 0, 1), ((1,), (0,), (2,)), (0, 0, 4), (1, 1), (4, 4, 1))


@needs_device
def test_8_by_16_register_tile_matches_numpy() -> None:
    """The largest private tile the constraints allow (``MAX_PRIVATE_ELEMS`` = 128 accumulators);
    without the prefetch, which PoCL compiles too slowly at this size (NVRTC below)."""
    mdh = ex.matmul(37, 70, 45)
    params = TILE_8_BY_16
    assert gpu_violations(mdh, params, OPENCL_CAPS) == []
    assert "private-tile" in gpu_violations(mdh, replace(params, pt=(16, 16, 1)), OPENCL_CAPS)
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((37, 45), (45, 70), (37, 70)))
    m = run_plan(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(m.outputs["C"].reshape(37, 70), c + a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
def test_prefetched_8_by_16_tile_compiles_with_nvrtc(tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90
    mdh = ex.matmul(1024, 1024, 1024)
    params = replace(TILE_8_BY_16, prefetch=1)
    assert gpu_violations(mdh, params, CUDA_CAPS) == []
    plan = lower_gpu(mdh, params, CUDA_CAPS)
    assert plan.prefetch
    compile_for_sm90(cuda_source(plan), plan.name, tmp_path)
