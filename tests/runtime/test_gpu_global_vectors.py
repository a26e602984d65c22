"""Vectorized ``__global`` -> ``__local`` copies (``GpuParams.gvec``): each work-item loads ``gvec``
neighbouring elements of a cached input's box row as one vector when they lie in the array and
their address is aligned, else element by element.

Differential on PoCL against numpy: prime sizes (rows of 29 and 17 floats, so most vectors are
unaligned and the edge tiles partial: the element fallback), sizes that are multiples of 4 (every
vector aligned: the vector loads, and vector stores into row-major copies), with and without the
prefetch, padding and vector reads of the copies; the multi-channel convolution (its channel row
in the box). Constraints, the plan check and the tuning space; the CUDA spelling compiled for
sm_90 (NVRTC or nvcc)."""

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
from mdpoly.lower.gpu_params import (  # noqa: E402
    GpuParams,
    gpu_params_from_dict,
    gpu_params_to_dict,
    gpu_violations,
    prefetch_regs,
)
from mdpoly.lower.kernel_checks import check_kernel_plan  # noqa: E402
from mdpoly.tuning.gpu import gpu_neighbours, gpu_space  # noqa: E402

GROUPS = ((1,), (0,), (2,))

VECTOR_MATMUL = [  # (M, N, K, num_wi, pt, num_wg, kt, vec, prefetch, pad, gvec)
    (13, 17, 29, (4, 8, 1), (3, 2, 1), (0, 0, 1), (0, 0, 8), (), 0, 0, 4),          # unaligned rows, partial tiles
    (13, 17, 29, (4, 8, 1), (3, 2, 1), (0, 0, 2), (0, 0, 4), (), 1, 0, 2),          # + prefetch, 2 groups along k
    (13, 17, 29, (4, 4, 1), (4, 8, 1), (0, 0, 1), (0, 0, 8), (4, 4, 1), 1, 1, 4),   # vector reads, padding
    (16, 32, 48, (4, 4, 1), (2, 4, 1), (0, 0, 1), (0, 0, 8), (), 0, 0, 4),          # aligned: vector loads and stores
    (16, 32, 48, (4, 4, 1), (4, 8, 1), (0, 0, 2), (0, 0, 8), (4, 4, 1), 1, 1, 4),   # aligned, every option on
    (16, 32, 48, (4, 4, 1), (2, 2, 1), (0, 0, 1), (0, 0, 4), (), 1, 0, 2),          # aligned float2
]


@needs_device
@pytest.mark.parametrize("m,n,k,num_wi,pt,num_wg,kt,vec,prefetch,pad,gvec", VECTOR_MATMUL)
def test_vector_copies_match_numpy(m, n, k, num_wi, pt, num_wg, kt, vec, prefetch, pad, gvec) -> None:  # type: ignore[no-untyped-def]
    mdh = ex.matmul(m, n, k)
    params = GpuParams(num_wi, pt, num_wg, GROUPS, kt, (1, 1), vec, prefetch, pad, gvec)
    assert gpu_violations(mdh, params, OPENCL_CAPS) == []
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.tiles is not None and all(t.gvec == gvec for t in plan.tiles)
    assert f"float{gvec}" in opencl_source(plan)
    rng = np.random.default_rng(11)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n)))
    out = run_plan(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(out.outputs["C"].reshape(m, n), c + a @ b, rtol=1e-4, atol=1e-4)


@needs_device
@pytest.mark.parametrize("gvec,prefetch", [(4, 0), (2, 1)])
def test_vector_copies_mcc_matches_numpy(gvec: int, prefetch: int) -> None:
    # channel tiles of 4 of the 13 channels: the input's and the weights' box rows are 4 channels
    params = GpuParams((1, 1, 4, 8, 1, 1, 1), (1, 5, 1, 2, 1, 1, 1), (0, 0, 0, 0, 1, 1, 2),
                       ((3,), (2,), (0, 1, 4, 5, 6)), (0, 0, 0, 0, 2, 3, 4), (1, 1), prefetch=prefetch, gvec=gvec)
    mdh = ex.mcc(*MCC_SIZES)
    assert gpu_violations(mdh, params, OPENCL_CAPS) == []
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.tiles is not None and [t.gvec for t in plan.tiles] == [gvec, gvec]
    check_mcc(params, seed=12)


def test_vector_copy_constraints_and_layout() -> None:
    mdh = ex.matmul(64, 64, 64)
    p = GpuParams((16, 16, 1), (2, 2, 1), (0, 0, 1), GROUPS, (0, 0, 16), (1, 1), gvec=4)
    assert gpu_violations(mdh, p, OPENCL_CAPS) == []
    plan = lower_gpu(mdh, p, OPENCL_CAPS)
    assert plan.tiles is not None
    a, b = plan.tiles
    assert (a.gvec, a.vstore, b.gvec, b.vstore) == (4, True, 4, True)     # row-major copies: whole vectors
    assert "gvec" in gpu_violations(mdh, replace(p, gvec=3), OPENCL_CAPS)
    assert "gvec" in gpu_violations(mdh, replace(p, cache=(0, 0)), OPENCL_CAPS)
    narrow = replace(p, kt=(0, 0, 6), num_wi=(16, 1, 1), pt=(1, 1, 1))
    assert gpu_violations(mdh, narrow, OPENCL_CAPS) == []           # box rows of 6 (A) and 1 (B): element loads
    scalar = lower_gpu(mdh, narrow, OPENCL_CAPS).tiles
    assert scalar is not None and [t.gvec for t in scalar] == [1, 1]
    doubles = ex.matmul(64, 64, 64, ty="double")
    assert "gvec" in gpu_violations(doubles, p, OPENCL_CAPS)
    assert gpu_violations(mdh, replace(p, kt=(0, 0, 6), gvec=2), OPENCL_CAPS) == []
    # only the inputs whose box row is a multiple of gvec load vectors: A's row is kt = 6
    odd = lower_gpu(mdh, replace(p, kt=(0, 0, 6)), OPENCL_CAPS)
    assert odd.tiles is not None and [t.gvec for t in odd.tiles] == [1, 4]
    # vector reads of the copies move A's vector position innermost: its copy rows (along k) are strided
    v = lower_gpu(mdh, replace(p, pt=(8, 8, 1), vec=(4, 4, 1)), OPENCL_CAPS)
    assert v.tiles is not None and [(t.gvec, t.vstore) for t in v.tiles] == [(4, False), (4, True)]
    # the prefetch budget counts elements (boxes of 128 over 256 work-items); the writer rounds up to vectors
    q = replace(p, prefetch=1, kt=(0, 0, 4))
    assert prefetch_regs(mdh, q) == 1 + 1 == prefetch_regs(mdh, replace(q, gvec=1))
    assert "float4 mdp_pf0[1];" in opencl_source(lower_gpu(mdh, q, OPENCL_CAPS))
    assert gpu_params_from_dict(gpu_params_to_dict(p)) == p
    assert gpu_params_from_dict({k: v for k, v in gpu_params_to_dict(p).items() if k != "gvec"}).gvec == 1
    assert "GVEC=4" in p.describe(mdh)


def test_plan_check_rejects_a_vector_copy_that_misses_elements() -> None:
    mdh = ex.matmul(64, 64, 64)
    p = GpuParams((16, 16, 1), (2, 2, 1), (0, 0, 1), GROUPS, (0, 0, 16), (1, 1), gvec=4)
    plan = lower_gpu(mdh, p, OPENCL_CAPS)
    assert plan.tiles is not None
    check_kernel_plan(plan, OPENCL_CAPS)
    bad = replace(plan, tiles=(replace(plan.tiles[0], box=(32, 6)), plan.tiles[1]))
    with pytest.raises(CompilerBug, match="vectors of 4"):
        check_kernel_plan(bad, OPENCL_CAPS)
    # a row of 14 is copied in vectors aligned in __global memory, never stored as whole vectors
    unaligned = replace(plan, tiles=(replace(plan.tiles[0], box=(32, 14)), plan.tiles[1]))
    with pytest.raises(CompilerBug, match="stored per element"):
        check_kernel_plan(unaligned, OPENCL_CAPS)
    check_kernel_plan(replace(plan, tiles=(replace(plan.tiles[0], box=(32, 14), vstore=False), plan.tiles[1])),
                      OPENCL_CAPS)
    strided = replace(plan, tiles=(replace(plan.tiles[0], strides=(1, 32)), plan.tiles[1]))
    with pytest.raises(CompilerBug, match="not aligned"):
        check_kernel_plan(strided, OPENCL_CAPS)


def test_default_loads_vectors_where_legal() -> None:
    big = default_gpu_params(ex.matmul(1024, 1024, 1024), CUDA_CAPS)
    assert big.gvec == 4
    conv = ex.mcc(16, 112, 112, 64, 3, 7, 7)        # rows of 3 channels merged with the width: vectors
    assert default_gpu_params(conv, CUDA_CAPS).gvec == 4


def test_tuning_space_and_neighbours_switch_vector_copies() -> None:
    mdh = ex.matmul(64, 64, 64)
    space = gpu_space(mdh, {}, OPENCL_CAPS)
    assert next(s for s in space.specs if s.name == "GVEC").values == (1, 4)
    p = GpuParams((16, 16, 1), (2, 2, 1), (0, 0, 1), GROUPS, (0, 0, 16), (1, 1))
    vectors = [q for q in gpu_neighbours(space, p, OPENCL_CAPS) if q.gvec > 1]
    assert {q.gvec for q in vectors} == {2, 4} and all(gpu_violations(mdh, q, OPENCL_CAPS) == [] for q in vectors)


@pytest.mark.campaign   # large kernels (README.md "Run the tests")
@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
def test_vector_copies_compile_for_sm90(tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90
    mdh = ex.matmul(1024, 1024, 1024)
    params = default_gpu_params(mdh, CUDA_CAPS)
    assert params.gvec == 4 and params.prefetch == 1
    for q in (params, replace(params, prefetch=0), replace(params, gvec=2, pad=1)):
        plan = lower_gpu(mdh, q, CUDA_CAPS)
        source = cuda_source(plan)
        assert "*(const float" in source
        compile_for_sm90(source, plan.name, tmp_path)
