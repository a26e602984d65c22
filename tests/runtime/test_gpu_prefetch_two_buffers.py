"""Register prefetch into two ``__local`` buffers (``GpuParams.prefetch`` 2): the next reduction tile's
registers are stored into the other buffer right after the current tile is computed, one barrier per
tile instead of two.

Differential on PoCL against numpy (matrix product at prime sizes: partial tiles, reductions split
over work-groups so that a group walks several tiles, one or none; vector copies; an MCC whose outer
reduction loops restart the pipeline), the ``__local`` memory it takes (two buffers), the tuner's
neighbours, and an sm_90 compile of the CUDA spelling.
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
from mdpoly.lower.gpu_params import GpuParams, gpu_violations, local_bytes  # noqa: E402
from mdpoly.lower.kernel_checks import local_memory_bytes  # noqa: E402
from mdpoly.tuning.gpu import gpu_neighbours, gpu_space  # noqa: E402

TWO_BUFFER_MATMUL = [  # (num_wi, pt, num_wg, kt, cache, gvec); K = 29
    ((4, 8, 1), (3, 2, 1), (0, 0, 1), (0, 0, 5), (1, 1), 1),     # 6 tiles in one group, the last partial
    ((4, 8, 1), (4, 4, 1), (0, 0, 2), (0, 0, 4), (1, 1), 4),     # vector copies (B's rows stored whole), 2 groups
    ((2, 4, 2), (1, 3, 1), (0, 0, 3), (0, 0, 4), (0, 1), 1),     # 2 work-items along the reduction, B cached only
    ((4, 4, 1), (2, 2, 1), (0, 0, 8), (0, 0, 5), (1, 1), 1),     # 8 groups, 6 tiles: two groups get none
]


@needs_device
@pytest.mark.parametrize("num_wi,pt,num_wg,kt,cache,gvec", TWO_BUFFER_MATMUL)
def test_two_buffer_prefetch_matmul_matches_numpy(num_wi, pt, num_wg, kt, cache, gvec) -> None:  # type: ignore[no-untyped-def]
    mdh = ex.matmul(13, 17, 29)
    params = GpuParams(num_wi, pt, num_wg, ((1,), (0,), (2,)), kt, cache, prefetch=2, gvec=gvec)
    assert gpu_violations(mdh, params, OPENCL_CAPS) == []
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    src = opencl_source(plan)
    assert plan.prefetch and plan.prefetch_buffers == 2 and "mdp_buf ^= 1;" in src
    loop = src[src.index("mdp_t_2 = "):]
    assert loop[:loop.index("mdp_buf ^= 1;")].count("barrier(CLK_LOCAL_MEM_FENCE)") == 1   # one per tile
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((13, 29), (29, 17), (13, 17)))
    m = run_plan(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(m.outputs["C"].reshape(13, 17), c + a @ b, rtol=1e-4, atol=1e-4)


@needs_device
def test_two_buffer_prefetch_mcc_matches_numpy() -> None:
    """The innermost reduction (c) is prefetched; the r and s tile loops around it restart the pipeline."""
    params = GpuParams((1, 1, 4, 8, 1, 1, 1), (1, 5, 1, 2, 1, 1, 1), (0, 0, 0, 0, 1, 1, 2),
                       ((3,), (2,), (0, 1, 4, 5, 6)), (0, 0, 0, 0, 2, 3, 3), (1, 1), prefetch=2)
    assert gpu_violations(ex.mcc(*MCC_SIZES), params, OPENCL_CAPS) == []
    check_mcc(params, seed=8)


def test_two_buffers_take_twice_the_local_memory() -> None:
    mdh = ex.matmul(1024, 1024, 1024)
    one = default_gpu_params(mdh, CUDA_CAPS)
    assert one.prefetch == 1
    two = replace(one, prefetch=2)
    assert gpu_violations(mdh, two, CUDA_CAPS) == []
    assert local_bytes(mdh, two) == 2 * local_bytes(mdh, one)   # both copies' sizes are multiples of 4
    plan = lower_gpu(mdh, two, CUDA_CAPS)
    assert local_memory_bytes(plan) == local_bytes(mdh, two)
    small = replace(CUDA_CAPS, local_mem_bytes=local_bytes(mdh, one))
    assert gpu_violations(mdh, one, small) == []
    assert "tile-local-mem" in gpu_violations(mdh, two, small)
    assert "PREFETCH=2" in two.describe(mdh)


def test_neighbours_reach_two_buffers() -> None:
    mdh = ex.matmul(64, 64, 64)
    space = gpu_space(mdh, {}, OPENCL_CAPS)
    p = replace(default_gpu_params(mdh, OPENCL_CAPS), prefetch=1)
    assert gpu_violations(mdh, p, OPENCL_CAPS) == []
    assert any(q.prefetch == 2 for q in gpu_neighbours(space, p, OPENCL_CAPS))
    back = [q.prefetch for q in gpu_neighbours(space, replace(p, prefetch=2), OPENCL_CAPS)]
    assert 1 in back and 0 in back
    big = ex.matmul(1024, 1024, 1024)
    two = replace(default_gpu_params(big, CUDA_CAPS), prefetch=2)
    near = gpu_neighbours(gpu_space(big, {}, CUDA_CAPS), two, CUDA_CAPS)
    assert any(q.prefetch == 2 and q.async_copy == 1 for q in near)   # the mixed form (CUDA has async copies)


def _nvrtc_reason() -> str | None:
    from cuda_harness import nvrtc_unavailable
    return nvrtc_unavailable()


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
def test_two_buffer_kernel_compiles_with_nvrtc_for_sm90(tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90
    mdh = ex.matmul(1024, 1024, 1024)
    plan = lower_gpu(mdh, replace(default_gpu_params(mdh, CUDA_CAPS), prefetch=2), CUDA_CAPS)
    assert plan.prefetch_buffers == 2
    compile_for_sm90(cuda_source(plan), plan.name, tmp_path)


MIXED_MATMUL = [  # (M, N, K, num_wi, pt, num_wg, kt, vec, gvec): prefetch 2 with async_copy 1
    (16, 32, 48, (4, 4, 1), (4, 8, 1), (0, 0, 2), (0, 0, 8), (4, 4, 1), 4),   # aligned: B's rows whole, A via registers
    (13, 17, 29, (4, 8, 1), (4, 4, 1), (0, 0, 2), (0, 0, 4), (), 4),          # unaligned rows, partial tiles, 2 groups
    (16, 32, 8, (4, 4, 1), (2, 4, 1), (0, 0, 4), (0, 0, 4), (), 4),           # 4 groups, 2 tiles: groups without one
]


@needs_device
@pytest.mark.parametrize("m,n,k,num_wi,pt,num_wg,kt,vec,gvec", MIXED_MATMUL)
def test_mixed_async_and_register_copies_match_numpy(m, n, k, num_wi, pt, num_wg, kt, vec, gvec) -> None:  # type: ignore[no-untyped-def]
    """The input whose copy stores whole vectors (B, rows along j) goes by the asynchronous copies
    (synchronous on PoCL, whose caps are told it has them), the transposed one (A) through registers."""
    from test_gpu_async_copy import ASYNC_OPENCL, _run_async
    mdh = ex.matmul(m, n, k)
    params = GpuParams(num_wi, pt, num_wg, ((1,), (0,), (2,)), kt, (1, 1), vec, prefetch=2, gvec=gvec, async_copy=1)
    assert gpu_violations(mdh, params, ASYNC_OPENCL) == []
    assert "async-copy" in gpu_violations(mdh, replace(params, prefetch=1), ASYNC_OPENCL)
    plan = lower_gpu(mdh, params, ASYNC_OPENCL)
    src = opencl_source(plan)
    assert "mdp_pf1" not in src and "mdp_async_copy" not in src   # B not through registers; OpenCL: plain copies
    if vec:   # A's tile transposed (vector reads along i): through registers
        assert "mdp_pf0" in src
    rng = np.random.default_rng(9)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n)))
    out = _run_async(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(out.outputs["C"].reshape(m, n), c + a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
def test_mixed_kernel_compiles_with_nvrtc_for_sm90(tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90
    mdh = ex.matmul(1024, 1024, 1024)
    plan = lower_gpu(mdh, replace(default_gpu_params(mdh, CUDA_CAPS), prefetch=2, async_copy=1), CUDA_CAPS)
    src = cuda_source(plan)
    assert plan.async_copy and "mdp_async_wait_all();" in src and "mdp_pf1" not in src
    compile_for_sm90(src, plan.name, tmp_path)
