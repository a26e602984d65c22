"""OpenCL candidates as they ship (``mdpoly.runtime.host_code`` over ``mdpoly.tuning.gpu.opencl_target``) on a real device (PoCL in CI).

Each test runs the generated host code of a plan -- its kernels built and launched by the host
code itself -- on the nest's buffers and compares with numpy; failures come back typed. Skipped,
with the reason, when pyopencl, an OpenCL device or a C compiler is missing.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT / "tests" / "core", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import mdh_examples as ex  # noqa: E402

from mdpoly.backends.gpu_host import c_string  # noqa: E402
from mdpoly.backends.opencl import OPENCL_CAPS  # noqa: E402
from mdpoly.lower.gpu import lower_gpu  # noqa: E402
from mdpoly.lower.gpu_caps import caps_from_device  # noqa: E402
from mdpoly.lower.gpu_params import GpuParams, gpu_violations  # noqa: E402
from mdpoly.lower.lower import function_params  # noqa: E402
from mdpoly.runtime.base import ArgSpec, BuildFailed, BuildRequest, Measurement  # noqa: E402
from mdpoly.runtime.opencl import NoOpenCLDevice  # noqa: E402
from mdpoly.tuning.gpu import GpuTarget, opencl_target  # noqa: E402


def _target() -> GpuTarget | str:
    try:
        return opencl_target()
    except NoOpenCLDevice as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - a broken ICD setup
        return f"OpenCL unusable: {exc}"


TARGET = _target()
needs_device = pytest.mark.skipif(isinstance(TARGET, str) or shutil.which("cc") is None,
                                  reason=str(TARGET) if isinstance(TARGET, str) else "no C compiler")


def run_plan(mdh, params: GpuParams, inputs: dict[str, np.ndarray], repeats: int = 1) -> Measurement:  # type: ignore[no-untyped-def]
    """``params``'s shipped host code (with its kernels) on ``inputs`` (the nest's buffers by name)."""
    assert isinstance(TARGET, GpuTarget)
    args = tuple(ArgSpec(b.name, inputs[b.name].dtype.name, inputs[b.name].shape, b.written) for b in function_params(mdh))
    cand = TARGET.candidate(mdh, params, {}, args)
    return TARGET.runner.run(TARGET.runner.build(cand.request), inputs, repeats=repeats, warmup=0)


#: The MCC the tiled, prefetching and padded plans are checked on (``check_mcc``).
MCC_SIZES = (2, 7, 5, 11, 13, 3, 2)


def check_mcc(params: GpuParams, seed: int) -> None:
    """``params``'s plan of the MCC of ``MCC_SIZES`` on random data equals numpy's sliding-window sum."""
    n, p, q, k, c, r, s = MCC_SIZES
    mdh = ex.mcc(n, p, q, k, c, r, s)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, p + r - 1, q + s - 1, c)).astype(np.float32)
    w = rng.standard_normal((k, r, s, c)).astype(np.float32)
    out = rng.standard_normal((n, p, q, k)).astype(np.float32)
    m = run_plan(mdh, params, {"in": x, "w": w, "out": out})
    ref = out.astype(np.float64).copy()
    for dr in range(r):
        for ds in range(s):
            ref += np.einsum("npqc,kc->npqk", x[:, dr:dr + p, ds:ds + q, :].astype(np.float64), w[:, dr, ds, :])
    assert np.allclose(m.outputs["out"].reshape(n, p, q, k), ref, rtol=1e-4, atol=1e-4)


@needs_device
def test_device_limits_fill_target_caps() -> None:
    assert isinstance(TARGET, GpuTarget)
    caps = caps_from_device(OPENCL_CAPS, TARGET.device.device_limits())
    assert caps.max_work_group_size >= 1 and caps.local_mem_bytes >= 1024
    assert TARGET.device.device_identity().count("|") == 3 and TARGET.runner.device_identity() == \
        TARGET.device.device_identity()


@needs_device
@pytest.mark.parametrize("n", [1, 101, 100003])
def test_dot_product_runs_and_is_timed(n: int) -> None:
    """The default plan (partials and the combine kernel for large n); its time is the host code's."""
    assert isinstance(TARGET, GpuTarget)
    mdh = ex.dot(n)
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    m = run_plan(mdh, TARGET.default(mdh), {"x": x, "y": y, "s": np.array([0.5])}, repeats=3)
    assert len(m.times) == 3 and all(t > 0 for t in m.times)
    assert len(m.call_times) == 3 and all(c >= t for c, t in zip(m.call_times, m.times))
    assert np.allclose(m.outputs["s"][0], 0.5 + x @ y, rtol=1e-10, atol=1e-9)


@needs_device
def test_matmul_with_explicit_parameters() -> None:
    mdh = ex.matmul(13, 17, 29)
    params = GpuParams(num_wi=(2, 4, 8), pt=(3, 2, 1), num_wg=(0, 0, 2), ocl_groups=((2,), (0, 1)))
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.local_combine and plan.partials
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((13, 29), (29, 17), (13, 17)))
    m = run_plan(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(m.outputs["C"].reshape(13, 17), c + a @ b, rtol=1e-4, atol=1e-4)


@needs_device
def test_build_failure_is_typed_with_log() -> None:
    assert isinstance(TARGET, GpuTarget)
    with pytest.raises(BuildFailed) as info:
        TARGET.runner.build(BuildRequest("void mdpoly_entry(void **args) { undeclared = 1; }", "mdpoly_entry", ()))
    assert "undeclared" in info.value.log


# {{{ tiled kernels (GpuParams.kt / cache): register tiles, reduction tiles, __local input copies

TILED_MATMUL = [  # (num_wi, pt, num_wg, kt, cache): non-divisible tiles at prime sizes
    ((4, 8, 1), (3, 2, 1), (0, 0, 1), (0, 0, 5), (1, 1)),
    ((4, 8, 1), (3, 2, 1), (0, 0, 2), (0, 0, 7), (1, 0)),
    ((2, 4, 2), (1, 3, 1), (0, 0, 3), (0, 0, 4), (0, 1)),
    ((8, 8, 1), (4, 4, 1), (0, 0, 1), (0, 0, 64), (1, 1)),   # one tile longer than the reduction
    ((1, 16, 4), (5, 1, 1), (0, 0, 1), (0, 0, 3), (0, 0)),
]


@needs_device
@pytest.mark.parametrize("num_wi,pt,num_wg,kt,cache", TILED_MATMUL)
def test_tiled_matmul_matches_numpy(num_wi, pt, num_wg, kt, cache) -> None:  # type: ignore[no-untyped-def]
    mdh = ex.matmul(13, 17, 29)
    params = GpuParams(num_wi, pt, num_wg, ((1,), (0,), (2,)), kt, cache)
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.tiles is not None and [t.cached for t in plan.tiles] == [bool(c) for c in cache]
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((13, 29), (29, 17), (13, 17)))
    m = run_plan(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(m.outputs["C"].reshape(13, 17), c + a @ b, rtol=1e-4, atol=1e-4)


TILED_MATMUL_VEC = [  # (num_wi, pt, num_wg, kt, cache, vec): chunked private tiles, vector reads of __local copies
    ((4, 8, 1), (4, 8, 1), (0, 0, 1), (0, 0, 5), (1, 1), (4, 4, 1)),
    ((2, 4, 1), (8, 4, 1), (0, 0, 2), (0, 0, 7), (1, 0), (4, 2, 1)),
    ((4, 4, 1), (4, 4, 1), (0, 0, 1), (0, 0, 4), (0, 1), (2, 4, 1)),
    ((16, 16, 1), (8, 8, 1), (0, 0, 1), (0, 0, 16), (1, 1), (4, 4, 1)),   # the GPU default shape
]


@needs_device
@pytest.mark.parametrize("num_wi,pt,num_wg,kt,cache,vec", TILED_MATMUL_VEC)
def test_vector_tiled_matmul_matches_numpy(num_wi, pt, num_wg, kt, cache, vec) -> None:  # type: ignore[no-untyped-def]
    mdh = ex.matmul(13, 17, 29)
    params = GpuParams(num_wi, pt, num_wg, ((1,), (0,), (2,)), kt, cache, vec)
    assert gpu_violations(mdh, params, OPENCL_CAPS) == []
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.tiles is not None
    assert [t.vread for t in plan.tiles] == [vec[d] if c else 1 for c, d in zip(cache, (0, 1))]
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((13, 29), (29, 17), (13, 17)))
    m = run_plan(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(m.outputs["C"].reshape(13, 17), c + a @ b, rtol=1e-4, atol=1e-4)


TILED_MCC = [  # dims n,p,q,k,r,s,c; the input's box has a halo (p + r, q + s)
    ((1, 1, 4, 8, 1, 1, 1), (1, 5, 1, 2, 1, 1, 1), (0, 0, 0, 0, 1, 1, 2), (0, 0, 0, 0, 2, 3, 3), (1, 1)),
    ((1, 2, 4, 4, 1, 1, 2), (2, 3, 2, 1, 1, 1, 1), (0, 0, 0, 0, 1, 1, 1), (0, 0, 0, 0, 3, 1, 5), (1, 0)),
    ((1, 1, 8, 8, 1, 1, 1), (1, 2, 1, 3, 1, 1, 1), (0, 0, 0, 0, 2, 1, 1), (0, 0, 0, 0, 1, 2, 4), (0, 1)),
]


@needs_device
@pytest.mark.parametrize("num_wi,pt,num_wg,kt,cache", TILED_MCC)
def test_tiled_mcc_matches_numpy(num_wi, pt, num_wg, kt, cache) -> None:  # type: ignore[no-untyped-def]
    check_mcc(GpuParams(num_wi, pt, num_wg, ((3,), (2,), (0, 1, 4, 5, 6)), kt, cache), seed=2)


def test_tiled_constraints() -> None:
    mdh = ex.matmul(13, 17, 29)
    ok = GpuParams((4, 8, 1), (3, 2, 1), (0, 0, 1), ((1,), (0,), (2,)), (0, 0, 5), (1, 1))
    assert gpu_violations(mdh, ok, OPENCL_CAPS) == []
    assert "tile-shape" in gpu_violations(mdh, replace(ok, kt=(1, 0, 5)), OPENCL_CAPS)
    assert "tile-shape" in gpu_violations(mdh, replace(ok, kt=(), cache=(1, 1)), OPENCL_CAPS)
    assert "tile-shape" in gpu_violations(mdh, replace(ok, cache=(1,)), OPENCL_CAPS)
    big = replace(ok, num_wi=(16, 16, 1), pt=(8, 8, 1), kt=(0, 0, 64))
    assert "tile-local-mem" in gpu_violations(mdh, big, OPENCL_CAPS)
    assert gpu_violations(mdh, replace(big, cache=(0, 0)), OPENCL_CAPS) == []
    assert "vec" in gpu_violations(mdh, replace(ok, vec=(4, 1, 1)), OPENCL_CAPS)    # PT 3
    assert "vec" in gpu_violations(mdh, replace(ok, vec=(1, 2, 2)), OPENCL_CAPS)    # a reduction dim
    assert gpu_violations(mdh, replace(ok, vec=(1, 2, 1)), OPENCL_CAPS) == []

# }}}


# {{{ failures are isolated in the worker process (style.md 3.11)

HANG = "{ volatile int mdp_spin = 1; while (mdp_spin) { } }"
OOB = "x[get_global_id(0) + ((long)1 << 40)] = 1.0f;"


def _broken(statement: str) -> BuildRequest:
    """The default plan of a small sum's shipped host code with ``statement`` first in its kernel."""
    assert isinstance(TARGET, GpuTarget)
    mdh = ex.dot(64, "float")
    args = tuple(ArgSpec(b.name, "float32", (64,) if b.kind == "array" else (1,), b.written)
                 for b in function_params(mdh))
    req = TARGET.candidate(mdh, TARGET.default(mdh), {}, args).request
    body = req.source.index("\n", req.source.index('"__kernel void')) + 1
    return replace(req, source=req.source[:body] + c_string(statement) + "\n" + req.source[body:])


def _inputs() -> dict[str, np.ndarray]:
    return {"x": np.ones(64, np.float32), "y": np.ones(64, np.float32), "s": np.zeros(1, np.float32)}


@pytest.mark.campaign   # waits out its timeout (README.md "Run the tests")
@needs_device
def test_hanging_kernel_is_killed_at_its_timeout() -> None:
    import time

    from mdpoly.runtime.base import RunTimedOut
    assert isinstance(TARGET, GpuTarget)
    built = TARGET.runner.build(_broken(HANG))
    start = time.perf_counter()
    with pytest.raises(RunTimedOut) as info:
        TARGET.runner.run(built, _inputs(), repeats=1, warmup=0, timeout=1.0)
    assert info.value.kind == "timeout"
    assert time.perf_counter() - start < TARGET.runner.warm_seconds + 5.0   # the kernel loops forever


@needs_device
def test_out_of_bounds_kernel_crashes_the_worker_only() -> None:
    from mdpoly.runtime.base import RunFailed, RunTimedOut
    assert isinstance(TARGET, GpuTarget)
    with pytest.raises(RunFailed) as info:
        TARGET.runner.run(TARGET.runner.build(_broken(OOB.replace("x[", "s["))), _inputs(), repeats=1, warmup=0,
                          timeout=60.0)
    assert not isinstance(info.value, RunTimedOut) and info.value.kind == "crash"
    m = run_plan(ex.dot(64, "float"), TARGET.default(ex.dot(64, "float")), _inputs())
    assert m.outputs["s"][0] == 64.0

# }}}
