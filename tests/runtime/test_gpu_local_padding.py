"""Bank-conflict padding of the ``__local`` copies (``GpuParams.pad``): each row of a copy is
longer by ``pad`` elements (vectors where the copy is read as vectors). Differential on PoCL
against numpy at prime sizes (partial tiles), row-major and vector layouts, a stencil-like halo
(multi-channel convolution); the layout's strides and size, the constraints, the tuning space, and
the CUDA spelling compiled by NVRTC."""

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
from mdpoly.lower.gpu import lower_gpu  # noqa: E402
from mdpoly.lower.gpu_params import MAX_PAD, GpuParams, gpu_violations, local_bytes, local_layout  # noqa: E402
from mdpoly.tuning.gpu import gpu_neighbours, gpu_space  # noqa: E402

PADDED_MATMUL = [  # (num_wi, pt, num_wg, kt, cache, vec, pad)
    ((4, 8, 1), (3, 2, 1), (0, 0, 1), (0, 0, 5), (1, 1), (), 1),
    ((4, 8, 1), (3, 2, 1), (0, 0, 2), (0, 0, 7), (1, 1), (), 3),
    ((4, 8, 1), (4, 8, 1), (0, 0, 1), (0, 0, 5), (1, 1), (4, 4, 1), 1),    # vector reads: pitch + 1 vector
    ((16, 16, 1), (8, 8, 1), (0, 0, 1), (0, 0, 16), (1, 1), (4, 4, 1), 2),
]


@needs_device
@pytest.mark.parametrize("num_wi,pt,num_wg,kt,cache,vec,pad", PADDED_MATMUL)
def test_padded_matmul_matches_numpy(num_wi, pt, num_wg, kt, cache, vec, pad) -> None:  # type: ignore[no-untyped-def]
    mdh = ex.matmul(13, 17, 29)
    params = GpuParams(num_wi, pt, num_wg, ((1,), (0,), (2,)), kt, cache, vec, pad=pad)
    assert gpu_violations(mdh, params, OPENCL_CAPS) == []
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    unpadded = lower_gpu(mdh, replace(params, pad=0), OPENCL_CAPS)
    assert plan.tiles is not None and unpadded.tiles is not None
    assert [t.local_elems for t in plan.tiles] > [t.local_elems for t in unpadded.tiles]
    rng = np.random.default_rng(8)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((13, 29), (29, 17), (13, 17)))
    m = run_plan(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(m.outputs["C"].reshape(13, 17), c + a @ b, rtol=1e-4, atol=1e-4)


@needs_device
def test_padded_mcc_matches_numpy() -> None:
    params = GpuParams((1, 1, 4, 8, 1, 1, 1), (1, 5, 1, 2, 1, 1, 1), (0, 0, 0, 0, 1, 1, 2), ((3,), (2,), (0, 1, 4, 5, 6)),
                       (0, 0, 0, 0, 2, 3, 3), (1, 1), pad=1)
    assert gpu_violations(ex.mcc(*MCC_SIZES), params, OPENCL_CAPS) == []
    check_mcc(params, seed=9)


def test_padded_layout_and_constraints() -> None:
    mdh = ex.matmul(64, 64, 64)
    p = GpuParams((16, 16, 1), (2, 2, 1), (0, 0, 1), ((1,), (0,), (2,)), (0, 0, 16), (1, 1), pad=1)
    assert local_layout(mdh, p, 0) == ((17, 1), 32 * 17, None)      # A's 32 x 16 box, rows of 16 + 1
    assert local_layout(mdh, p, 1) == ((33, 1), 16 * 33, None)      # B's 16 x 32 box, rows of 32 + 1
    assert local_bytes(mdh, p) == 4 * (32 * 17 + 16 * 33)
    assert gpu_violations(mdh, p, OPENCL_CAPS) == []
    assert "pad" in gpu_violations(mdh, replace(p, pad=MAX_PAD + 1), OPENCL_CAPS)
    assert "pad" in gpu_violations(mdh, replace(p, cache=(0, 0)), OPENCL_CAPS)
    tiny = replace(OPENCL_CAPS, local_mem_bytes=local_bytes(mdh, replace(p, pad=0)))
    assert "tile-local-mem" in gpu_violations(mdh, p, tiny)          # the padding must fit too


def test_tuning_space_and_neighbours_switch_padding() -> None:
    mdh = ex.matmul(64, 64, 64)
    space = gpu_space(mdh, {}, OPENCL_CAPS)
    assert next(s for s in space.specs if s.name == "PAD").values == (0, 1)
    p = GpuParams((16, 16, 1), (2, 2, 1), (0, 0, 1), ((1,), (0,), (2,)), (0, 0, 16), (1, 1))
    padded = [q for q in gpu_neighbours(space, p, OPENCL_CAPS) if q.pad]
    assert padded and all(gpu_violations(mdh, q, OPENCL_CAPS) == [] for q in padded)


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
def test_padded_prefetched_kernel_compiles_with_nvrtc(tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90
    mdh = ex.matmul(1024, 1024, 1024)
    params = GpuParams((16, 16, 1), (8, 8, 1), (0, 0, 5), ((1,), (0,), (2,)), (0, 0, 16), (1, 1), (4, 4, 1), 1, 1)
    assert gpu_violations(mdh, params, CUDA_CAPS) == []
    plan = lower_gpu(mdh, params, CUDA_CAPS)
    compile_for_sm90(cuda_source(plan), plan.name, tmp_path)
