"""``mdpoly.runtime.opencl.OpenCLRunner`` on a real device (PoCL in CI): build, run, time, fail typed.

The kernels are mdpoly's own (``lower_gpu`` + ``kernel_source``) on the device's queried limits,
launched as the generated host code launches them, and compared with numpy. Skipped, with the
reason, when pyopencl or an OpenCL device is missing.
"""

from __future__ import annotations

import math
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

from mdpoly.backends.opencl import OPENCL_CAPS, kernel_source  # noqa: E402
from mdpoly.ir.kernel import KernelPlan  # noqa: E402
from mdpoly.lower.gpu import lower_gpu  # noqa: E402
from mdpoly.lower.gpu_params import GpuParams, caps_from_device, default_gpu_params, gpu_violations  # noqa: E402
from mdpoly.runtime.base import ArgSpec, BuildFailed  # noqa: E402
from mdpoly.runtime.opencl import KernelRequest, Launch, NoOpenCLDevice, OpenCLRunner  # noqa: E402


def _runner() -> OpenCLRunner | str:
    try:
        return OpenCLRunner()
    except NoOpenCLDevice as exc:
        return str(exc)
    except Exception as exc:  # a broken ICD setup
        return f"OpenCL unusable: {exc}"


RUNNER = _runner()
needs_device = pytest.mark.skipif(isinstance(RUNNER, str), reason=str(RUNNER))
DTYPES = {"float": "float32", "double": "float64", "int": "int32"}


def request_for(plan: KernelPlan, sizes: dict[str, int]) -> KernelRequest:
    """The kernel arguments and launches the generated host code would use (static sizes)."""
    args: list[ArgSpec] = []
    for b in plan.buffers:
        n = eval(b.count.replace("MDP_MAX", "max"), {"max": max}, dict(sizes))  # static counts only
        args.append(ArgSpec(b.name, DTYPES[b.device_type], () if b.role == "value" else (int(n),), b.written))
    for d in plan.dims:
        args += [ArgSpec(f"lo{d.index}", "int64", ()), ArgSpec(f"ext{d.index}", "int64", ())]
    for d in plan.concat:
        args.append(ArgSpec(f"nwg{d.index}", "int64", ()))
    ncp = math.prod(d.extent.constant for d in plan.concat)
    red_wg = math.prod(d.num_wg for d in plan.reductions)
    if plan.partials:
        args += [ArgSpec(f"part{n}", DTYPES[o.elem_type], (ncp * red_wg,)) for n, o in enumerate(plan.outputs)]
    glob, loc = [], []
    for g in plan.grid_axes:
        lsz, groups = 1, 1
        for i in g:
            d = plan.dims[i]
            lsz *= d.num_wi
            groups *= d.num_wg if d.is_reduction else math.ceil(d.extent.constant / (d.pt * d.num_wi))
        loc.append(lsz)
        glob.append(lsz * groups)
    launches = [Launch(plan.name, tuple(glob), tuple(loc))]
    if plan.partials:
        launches.append(Launch(plan.name + "_combine", (ncp,), None))
    return KernelRequest(kernel_source(plan), plan.name, tuple(args), language="opencl", launches=tuple(launches))


def scalars(plan: KernelPlan) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for d in plan.dims:
        out[f"lo{d.index}"] = np.array(d.lower.constant, dtype=np.int64)
        out[f"ext{d.index}"] = np.array(d.extent.constant, dtype=np.int64)
        if not d.is_reduction:
            out[f"nwg{d.index}"] = np.array(math.ceil(d.extent.constant / (d.pt * d.num_wi)), dtype=np.int64)
    return out


@needs_device
def test_device_limits_fill_target_caps() -> None:
    assert isinstance(RUNNER, OpenCLRunner)
    caps = caps_from_device(OPENCL_CAPS, RUNNER.device_limits())
    assert caps.max_work_group_size >= 1 and caps.local_mem_bytes >= 1024
    assert RUNNER.device_identity().count("|") == 3


@needs_device
@pytest.mark.parametrize("n", [1, 101, 100003])
def test_dot_product_runs_and_is_timed(n: int) -> None:
    assert isinstance(RUNNER, OpenCLRunner)
    caps = caps_from_device(OPENCL_CAPS, RUNNER.device_limits())
    mdh = ex.dot(n)
    plan = lower_gpu(mdh, default_gpu_params(mdh, caps), caps)
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    inputs = {"x": x, "y": y, "s": np.array([0.5]), "part0": np.zeros(1), **scalars(plan)}
    req = request_for(plan, {})
    inputs["part0"] = np.zeros(next((a.shape for a in req.args if a.name == "part0"), (1,)))
    m = RUNNER.run(RUNNER.build(req), inputs, repeats=3, warmup=1)
    assert len(m.times) == 3 and all(t > 0 for t in m.times)
    assert np.allclose(m.outputs["s"][0], 0.5 + x @ y, rtol=1e-10, atol=1e-9)


@needs_device
def test_matmul_with_explicit_parameters() -> None:
    assert isinstance(RUNNER, OpenCLRunner)
    mdh = ex.matmul(13, 17, 29)
    params = GpuParams(num_wi=(2, 4, 8), pt=(3, 2, 1), num_wg=(0, 0, 2), ocl_groups=((2,), (0, 1)))
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.local_combine and plan.partials
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((13, 29), (29, 17), (13, 17)))
    inputs = {"A": a, "B": b, "C": c, "part0": np.zeros(13 * 17 * 2, np.float32), **scalars(plan)}
    m = RUNNER.run(RUNNER.build(request_for(plan, {})), inputs, repeats=1, warmup=0)
    assert np.allclose(m.outputs["C"].reshape(13, 17), c + a @ b, rtol=1e-4, atol=1e-4)


@needs_device
def test_build_failure_is_typed_with_log() -> None:
    assert isinstance(RUNNER, OpenCLRunner)
    with pytest.raises(BuildFailed) as info:
        RUNNER.build(KernelRequest("__kernel void k(__global float *x) { x[0] = undeclared; }", "k", (),
                                   language="opencl"))
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
    assert isinstance(RUNNER, OpenCLRunner)
    mdh = ex.matmul(13, 17, 29)
    params = GpuParams(num_wi, pt, num_wg, ((1,), (0,), (2,)), kt, cache)
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.tiles is not None and [t.cached for t in plan.tiles] == [bool(c) for c in cache]
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((13, 29), (29, 17), (13, 17)))
    inputs = {"A": a, "B": b, "C": c, "part0": np.zeros(13 * 17 * max(num_wg[2], 1), np.float32), **scalars(plan)}
    m = RUNNER.run(RUNNER.build(request_for(plan, {})), inputs, repeats=1, warmup=0)
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
    assert isinstance(RUNNER, OpenCLRunner)
    mdh = ex.matmul(13, 17, 29)
    params = GpuParams(num_wi, pt, num_wg, ((1,), (0,), (2,)), kt, cache, vec)
    assert gpu_violations(mdh, params, OPENCL_CAPS) == []
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.tiles is not None
    assert [t.vread for t in plan.tiles] == [vec[d] if c else 1 for c, d in zip(cache, (0, 1))]
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((13, 29), (29, 17), (13, 17)))
    inputs = {"A": a, "B": b, "C": c, "part0": np.zeros(13 * 17 * max(num_wg[2], 1), np.float32), **scalars(plan)}
    m = RUNNER.run(RUNNER.build(request_for(plan, {})), inputs, repeats=1, warmup=0)
    assert np.allclose(m.outputs["C"].reshape(13, 17), c + a @ b, rtol=1e-4, atol=1e-4)


TILED_MCC = [  # dims n,p,q,k,r,s,c; the input's box has a halo (p + r, q + s)
    ((1, 1, 4, 8, 1, 1, 1), (1, 5, 1, 2, 1, 1, 1), (0, 0, 0, 0, 1, 1, 2), (0, 0, 0, 0, 2, 3, 3), (1, 1)),
    ((1, 2, 4, 4, 1, 1, 2), (2, 3, 2, 1, 1, 1, 1), (0, 0, 0, 0, 1, 1, 1), (0, 0, 0, 0, 3, 1, 5), (1, 0)),
    ((1, 1, 8, 8, 1, 1, 1), (1, 2, 1, 3, 1, 1, 1), (0, 0, 0, 0, 2, 1, 1), (0, 0, 0, 0, 1, 2, 4), (0, 1)),
]


@needs_device
@pytest.mark.parametrize("num_wi,pt,num_wg,kt,cache", TILED_MCC)
def test_tiled_mcc_matches_numpy(num_wi, pt, num_wg, kt, cache) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(RUNNER, OpenCLRunner)
    n, p, q, k, c, r, s = 2, 7, 5, 11, 13, 3, 2
    mdh = ex.mcc(n, p, q, k, c, r, s)
    params = GpuParams(num_wi, pt, num_wg, ((3,), (2,), (0, 1, 4, 5, 6)), kt, cache)
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((n, p + r - 1, q + s - 1, c)).astype(np.float32)
    w = rng.standard_normal((k, r, s, c)).astype(np.float32)
    out = rng.standard_normal((n, p, q, k)).astype(np.float32)
    parts = math.prod(v for v in num_wg if v) * n * p * q * k
    inputs = {"in": x, "w": w, "out": out, "part0": np.zeros(parts, np.float32), **scalars(plan)}
    m = RUNNER.run(RUNNER.build(request_for(plan, {})), inputs, repeats=1, warmup=0)
    ref = out.astype(np.float64).copy()
    for dr in range(r):
        for ds in range(s):
            ref += np.einsum("npqc,kc->npqk", x[:, dr:dr + p, ds:ds + q, :].astype(np.float64), w[:, dr, ds, :])
    assert np.allclose(m.outputs["out"].reshape(n, p, q, k), ref, rtol=1e-4, atol=1e-4)


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

HANG = "__kernel void k(__global float *x, long n) { while (n > 0) { x[0] += 1.0f; n += x[0] > -1.0f; } }"
OOB = "__kernel void k(__global float *x) { x[get_global_id(0) + ((long)1 << 40)] = 1.0f; }"


def _single(source: str, args: tuple[ArgSpec, ...]) -> KernelRequest:
    return KernelRequest(source, "k", args, language="opencl", launches=(Launch("k", (1,), (1,)),))


def _still_runs(runner: OpenCLRunner) -> None:
    req = _single("__kernel void k(__global float *x) { x[0] = 42.0f; }", (ArgSpec("x", "float32", (1,), True),))
    m = runner.run(runner.build(req), {"x": np.zeros(1, np.float32)}, repeats=1, warmup=0)
    assert m.outputs["x"][0] == 42.0


@needs_device
def test_hanging_kernel_is_killed_at_its_timeout() -> None:
    assert isinstance(RUNNER, OpenCLRunner)
    import time

    from mdpoly.runtime.base import RunTimedOut
    req = _single(HANG, (ArgSpec("x", "float32", (1,), True), ArgSpec("n", "int64", ())))
    built = RUNNER.build(req)
    _still_runs(RUNNER)                      # the worker is up: the timeout measures the kernel alone
    start = time.perf_counter()
    with pytest.raises(RunTimedOut) as info:
        RUNNER.run(built, {"x": np.zeros(1, np.float32), "n": np.array(1, np.int64)}, repeats=1, timeout=1.0)
    assert info.value.kind == "timeout" and time.perf_counter() - start < 5.0
    _still_runs(RUNNER)                      # a fresh worker takes over


@needs_device
def test_out_of_bounds_kernel_crashes_the_worker_only() -> None:
    assert isinstance(RUNNER, OpenCLRunner)
    from mdpoly.runtime.base import RunFailed, RunTimedOut
    req = _single(OOB, (ArgSpec("x", "float32", (1,), True),))
    with pytest.raises(RunFailed) as info:
        RUNNER.run(RUNNER.build(req), {"x": np.zeros(1, np.float32)}, repeats=1, warmup=0, timeout=60.0)
    assert not isinstance(info.value, RunTimedOut) and info.value.kind == "crash"
    assert "worker exited" in str(info.value)
    _still_runs(RUNNER)

# }}}
