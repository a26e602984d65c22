"""Launch bounds (``GpuParams.min_blocks``, CUDA ``__launch_bounds__``): the main kernel asks the
compiler to keep registers for ``min_blocks`` resident work-groups per multiprocessor. Only on
targets whose caps have ``launch_bounds``; the constraint, the plan check, the spelling (main
kernel only), the tuning space, and an sm_90 compile of the bounded 8 x 8 tile kernel."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT / "tests" / "core", ROOT / "tests" / "e2e", ROOT / "tests" / "runtime", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import mdh_examples as ex  # noqa: E402
from test_gpu_prefetch import _nvrtc_reason  # noqa: E402

from mdpoly.backends.cuda import CUDA_CAPS  # noqa: E402
from mdpoly.backends.cuda import kernel_source as cuda_source  # noqa: E402
from mdpoly.backends.opencl import OPENCL_CAPS  # noqa: E402
from mdpoly.backends.opencl import kernel_source as opencl_source  # noqa: E402
from mdpoly.diagnostics import CompilerBug  # noqa: E402
from mdpoly.ir.mdh import MdhExpr  # noqa: E402
from mdpoly.lower.gpu import lower_gpu  # noqa: E402
from mdpoly.lower.gpu_defaults import default_gpu_params  # noqa: E402
from mdpoly.lower.gpu_params import GpuParams, gpu_violations  # noqa: E402
from mdpoly.lower.kernel_checks import check_kernel_plan  # noqa: E402
from mdpoly.tuning.gpu import gpu_neighbours, gpu_space  # noqa: E402


def _bounded() -> tuple[MdhExpr, GpuParams]:
    mdh = ex.matmul(1024, 1024, 1024)
    return mdh, replace(default_gpu_params(mdh, CUDA_CAPS), min_blocks=2)


def test_constraint_needs_a_target_with_launch_bounds() -> None:
    mdh, p = _bounded()
    assert gpu_violations(mdh, p, CUDA_CAPS) == []
    assert "launch-bounds" in gpu_violations(mdh, p, OPENCL_CAPS)
    assert "launch-bounds" in gpu_violations(mdh, replace(p, min_blocks=9), CUDA_CAPS)
    wide = replace(p, num_wi=(32, 32, 1), pt=(2, 2, 1), min_blocks=3)
    assert "launch-bounds" in gpu_violations(mdh, wide, CUDA_CAPS)
    assert "MINB=2" in p.describe(mdh)


def test_main_kernel_only_is_bounded_and_opencl_spells_nothing() -> None:
    mdh, p = _bounded()
    plan = lower_gpu(mdh, p, CUDA_CAPS)
    assert plan.min_groups == 2 and plan.partials                              # a combine kernel too
    src = cuda_source(plan)
    assert src.count("__launch_bounds__(256, 2)") == 1
    assert f'__launch_bounds__(256, 2) {plan.name}(' in src
    assert "__launch_bounds__" not in cuda_source(replace(plan, min_groups=0))
    assert "__launch_bounds__" not in opencl_source(plan)
    check_kernel_plan(plan, CUDA_CAPS)
    with pytest.raises(CompilerBug, match="launch bounds"):
        check_kernel_plan(plan, OPENCL_CAPS)


def test_space_and_neighbours_switch_launch_bounds_on_cuda_only() -> None:
    mdh = ex.matmul(64, 64, 64)
    assert next(s for s in gpu_space(mdh, {}, CUDA_CAPS).specs if s.name == "MINB").values == (0, 2)
    assert not any(s.name == "MINB" for s in gpu_space(mdh, {}, OPENCL_CAPS).specs)
    space = gpu_space(mdh, {}, CUDA_CAPS)
    p = default_gpu_params(mdh, CUDA_CAPS)
    assert any(q.min_blocks == 2 for q in gpu_neighbours(space, p, CUDA_CAPS))
    assert not any(q.min_blocks for q in gpu_neighbours(gpu_space(mdh, {}, OPENCL_CAPS), p, OPENCL_CAPS))


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
def test_bounded_kernel_compiles_for_sm90(tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90
    mdh, p = _bounded()
    plan = lower_gpu(mdh, p, CUDA_CAPS)
    compile_for_sm90(cuda_source(plan), plan.name, tmp_path)


def test_defaults_bound_big_tiles_and_split_skinny_reductions() -> None:
    # 8 x 8 tiles on 64 concat groups: two resident groups per SM, the reduction split 4 ways (one
    # wave of 256 of 2 x 132 slots); without launch bounds (OpenCL on the same GPU) 2 ways, one group each
    p = default_gpu_params(ex.matmul(1024, 1024, 1024, update="assign", init="0.0f"), CUDA_CAPS)
    assert (p.pt, p.min_blocks, p.num_wg) == ((8, 8, 1), 2, (0, 0, 4))
    gpu = replace(CUDA_CAPS, name="opencl", launch_bounds=False)
    q = default_gpu_params(ex.matmul(1024, 1024, 1024, update="assign", init="0.0f"), gpu)
    assert (q.min_blocks, q.num_wg) == (0, (0, 0, 2))
    # skinny MatMuls (fewer concat work-groups than SMs): split-K with partials and the combine kernel
    for m, n, k in ((1, 4096, 25088), (16, 1000, 2048), (16, 4096, 25088)):
        mdh = ex.matmul(m, n, k, update="assign", init="0.0f")
        s = default_gpu_params(mdh, CUDA_CAPS)
        assert s.num_wg[2] >= 32 and lower_gpu(mdh, s, CUDA_CAPS).partials
        assert s.num_wg[2] <= -(-k // s.kt[2]) // 2            # every group walks two tiles or more
