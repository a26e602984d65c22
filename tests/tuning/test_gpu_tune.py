"""Tuning the work-group targets (OpenCL; CUDA shares the code): space, candidates, driver.

The space tests need no device. The tuning runs need an OpenCL device (PoCL in CI) and are
skipped with the reason when there is none; they use tiny budgets and assert no timings.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from mdpoly.backends.gpu_host import c_string
from mdpoly.backends.opencl import OPENCL_CAPS, OpenCLBackend
from mdpoly.differential import compare_outputs
from mdpoly.lower.gpu_caps import caps_from_device
from mdpoly.lower.gpu_defaults import default_gpu_params
from mdpoly.lower.gpu_params import gpu_violations
from mdpoly.tuning.atf import build_search_space
from mdpoly.tuning.gpu import GpuTarget, cuda_target_on, gpu_neighbours, gpu_space, opencl_target
from mdpoly.tuning.tune import TuneSettings, tune_nest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "core"))
import mdh_examples as ex  # noqa: E402

MDPOLY = [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())"]


def _target() -> GpuTarget | str:
    try:
        return opencl_target(os.environ.get("MDPOLY_OPENCL_DEVICE") or None)
    except Exception as exc:  # noqa: BLE001 - no pyopencl, no ICD, no device
        return f"no OpenCL device to tune on: {exc}"


TARGET = _target()
needs_device = pytest.mark.skipif(isinstance(TARGET, str), reason=str(TARGET))
needs_cl_build = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")


def _all_configs(specs):
    space = build_search_space(specs, one_dimensional=True)
    return [space.get_configuration(i) for i in range(space.constrained_size)]


def _sample_configs(specs, n: int = 1500):
    """``n`` configurations drawn uniformly (fixed seed) from the constrained space, or all of them."""
    space = build_search_space(specs, one_dimensional=True)
    size = space.constrained_size
    picks = range(size) if size <= n else random.Random(0).sample(range(size), n)
    return [dict(space.get_configuration(i)) for i in picks]


# {{{ the space (no device)


TIGHT = replace(OPENCL_CAPS, max_work_group_size=64, max_work_item_sizes=(32, 8, 4), local_mem_bytes=512,
                is_gpu=True, preferred_wg_multiple=8)
LOOSE = replace(OPENCL_CAPS, max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64), local_mem_bytes=49152,
                is_gpu=True, preferred_wg_multiple=32, compute_units=80)


@pytest.mark.parametrize("mdh", [ex.matmul(24, 40, 33), ex.dot(5000), ex.matvec(37, 64)], ids=lambda m: m.name)
def test_space_honours_device_limits(mdh):
    space = gpu_space(mdh, {}, TIGHT)
    configs = _sample_configs(space.specs)
    assert configs
    for cfg in configs:
        p = space.to_params(cfg)
        assert gpu_violations(mdh, p, TIGHT) == [], (cfg, p)
        assert p.wg_size() <= 64
        for k, g in enumerate(p.ocl_groups):
            assert math.prod(p.num_wi[d] for d in g) <= TIGHT.max_work_item_sizes[k]
        if p.reduction_wi(mdh) > 1:
            assert p.wg_size() * 4 * len(mdh.outputs) <= TIGHT.local_mem_bytes or mdh.name.endswith("dot")


def test_space_uses_the_limits_it_is_given():
    mdh = ex.matmul(64, 64, 64)
    small = build_search_space(gpu_space(mdh, {}, TIGHT).specs).constrained_size
    big = build_search_space(gpu_space(mdh, {}, replace(TIGHT, max_work_group_size=256,
                                                        max_work_item_sizes=(256, 256, 256))).specs)
    assert big.constrained_size > small


@pytest.mark.parametrize("caps", [TIGHT, LOOSE], ids=["tight", "loose"])
@pytest.mark.parametrize("mdh", [ex.matmul(24, 40, 33), ex.mcc(1, 7, 7, 64, 32, 3, 3), ex.dot(5000)],
                         ids=lambda m: m.name)
def test_tiled_space_yields_only_valid_configs(mdh, caps):
    space = gpu_space(mdh, {}, caps)
    configs = _sample_configs(space.specs)
    params = [space.to_params(c) for c in configs]
    for cfg, p in zip(configs, params):
        assert gpu_violations(mdh, p, caps) == [], (cfg, p)
    if mdh.name == "mdp_dot":   # no concat dim: the tiled kernel does not serve it
        assert not any(p.tiled for p in params) and not any(s.name.startswith(("KT_", "MEM_")) for s in space.specs)
        return
    assert any(p.tiled for p in params) and any(not p.tiled for p in params)
    assert any(any(p.cache) for p in params)
    assert {p.kt for p in params if p.tiled} != {params[0].kt}   # KT varies


@pytest.mark.campaign   # a large space (README.md "Run the tests")
def test_mcc_space_is_built_without_enumerating_it():
    """Building the constrained space evaluates the constraints a bounded number of times, far
    fewer than the space has configurations (pyATF's chain of trees prunes early). How long it
    takes is a benchmark (``benchmarks/space_build.py``), not a test."""
    mdh = ex.mcc(2, 8, 8, 16, 8, 3, 3)   # c_examples/mcc.c
    for caps in (TIGHT, LOOSE, OPENCL_CAPS):
        calls = [0]

        def counted(pred):
            def constraint(cfg):
                calls[0] += 1
                return pred(cfg)
            return constraint

        specs = tuple(replace(s, constraint=counted(s.constraint)) if s.constraint else s
                      for s in gpu_space(mdh, {}, caps).specs)
        size = build_search_space(specs).constrained_size
        # about 40k (tight) and 144k (loose) evaluations for 2e7 and 3e8 configurations
        assert size > 1_000_000 and calls[0] < 500_000 and calls[0] * 100 < size, (size, calls[0])


def test_neighbours_move_kt_cache_and_private_tiles():
    mdh = ex.matmul(64, 64, 64)
    space = gpu_space(mdh, {}, LOOSE)
    d = default_gpu_params(mdh, LOOSE)
    assert d.tiled and any(d.cache)
    ns = gpu_neighbours(space, d, LOOSE)
    assert all(gpu_violations(mdh, q, LOOSE) == [] for q in ns)
    assert any(q.kt != d.kt and q.tiled for q in ns)
    assert any(q.cache != d.cache and q.tiled for q in ns)
    assert any(q.pt != d.pt for q in ns)
    untiled = [q for q in ns if not q.tiled]
    assert untiled and any(q.tiled for q in gpu_neighbours(space, untiled[0], LOOSE))


class _NoDevice:
    """Device queries without a device: the target's own limits, a made-up identity."""

    def device_limits(self):
        return {}

    def device_identity(self):
        return "no device"


def _arg_specs(mdh, sizes=None):
    from mdpoly.runtime.base import ArgSpec
    from mdpoly.tuning.buffers import make_buffers, numpy_dtype
    bufs = make_buffers(mdh, sizes or {})
    return tuple(ArgSpec(b.name, numpy_dtype(b.elem_type), tuple(bufs[b.name].shape), b.written)
                 for b in mdh.buffers)


def test_cuda_candidates_are_the_shipped_host_code_with_its_fmad():
    """A CUDA candidate is the host code the backend renders (NVRTC's --fmad follows the nest), with
    the entry and timing exports; no device is needed to make it."""
    from mdpoly.backends.cuda import CudaBackend
    from mdpoly.lower.gpu import lower_gpu
    target = cuda_target_on(_NoDevice())
    for reassociates in (False, True):
        mdh = replace(ex.matmul(16, 16, 16), reassociates_fp=reassociates)
        params = target.default(mdh)
        plan = lower_gpu(mdh, params, target.caps)
        cand = target.candidate(mdh, params, {}, _arg_specs(mdh))
        shipped = CudaBackend(target.caps).render(plan)
        assert cand.function == shipped.definition and shipped.definition in cand.request.source
        assert f'"{plan.name}", {int(reassociates)});' in cand.function
        assert "void mdpoly_entry(void **args)" in cand.request.source
        assert "void mdpoly_timing(double *out)" in cand.request.source


def _cuda_compile_reason() -> str | None:
    from mdpoly.cuda_toolkit import find_cuda
    kit = find_cuda()
    if shutil.which("cc") is None:
        return "no C compiler"
    if kit is None or not kit.has_nvrtc:
        return "no CUDA toolkit with NVRTC headers (install the CUDA toolkit, or pip install nvidia-cuda-nvrtc)"
    return None


@pytest.mark.skipif(_cuda_compile_reason() is not None, reason=str(_cuda_compile_reason()))
def test_cuda_candidates_build_without_a_gpu(tmp_path):
    """The candidate compiles against the toolkit's headers with the runner's flags and, where a
    libcuda (driver or toolkit stub) exists, links as the runner's shared library. Running it needs
    a GPU (tests/e2e/test_cuda_examples.py and tuning runs on a GPU machine)."""
    from mdpoly.cuda_toolkit import find_cuda
    target = cuda_target_on(_NoDevice())
    mdh = ex.dot(3001)
    cand = target.candidate(mdh, target.default(mdh), {}, _arg_specs(mdh))
    src = tmp_path / "cand.c"
    src.write_text(cand.request.source)
    flags = [f for f in target.runner.flags if f != "-shared"]
    proc = subprocess.run(["cc", "-c", "-Wall", "-Werror", *flags, str(src), "-o", str(tmp_path / "cand.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    kit = find_cuda()
    if kit is not None and kit.has_libcuda:
        built = target.runner.build(cand.request)
        assert Path(built.artifact).is_file()


def test_default_and_neighbours_are_valid():
    mdh = ex.mcc(1, 7, 7, 64, 32, 3, 3)
    space = gpu_space(mdh, {}, TIGHT)
    d = default_gpu_params(mdh, TIGHT)
    assert d.ocl_groups in space.ocl
    ns = gpu_neighbours(space, d, TIGHT)
    assert ns and all(gpu_violations(mdh, q, TIGHT) == [] for q in ns)


@needs_device
def test_device_caps_come_from_the_device():
    assert isinstance(TARGET, GpuTarget)
    lim = TARGET.device.device_limits()
    assert TARGET.caps == caps_from_device(OPENCL_CAPS, lim)
    mdh = ex.matmul(16, 16, 16)
    space = gpu_space(mdh, {}, TARGET.caps)
    for cfg in _sample_configs(space.specs, 300):
        p = space.to_params(cfg)
        assert p.wg_size() <= lim["max_work_group_size"]
        assert gpu_violations(mdh, p, TARGET.caps) == []

# }}}

# {{{ tuning on a device


def _settings(tmp_path: Path, evals: int = 6) -> TuneSettings:
    return TuneSettings(seconds=None, evaluations=evals, retune=True, cache_dir=tmp_path / "cache", progress=False)


@needs_device
@pytest.mark.parametrize("mdh", [pytest.param(ex.matmul(33, 20, 47), marks=pytest.mark.campaign), ex.dot(3001)],
                         ids=lambda m: m.name)   # matmul: a campaign (README.md "Run the tests")
def test_small_budget_tuning_returns_a_valid_config(mdh, tmp_path):
    assert isinstance(TARGET, GpuTarget)
    r = tune_nest(mdh, "", {}, OpenCLBackend(), _settings(tmp_path), target=TARGET)
    assert r.tuned_seconds < float("inf") and 1 <= r.evaluations <= 6
    assert gpu_violations(mdh, r.params, TARGET.caps) == []
    assert r.config == TARGET.to_dict(r.params) and TARGET.from_dict(r.config) == r.params
    log = [json.loads(line) for line in Path(r.log_path).read_text().splitlines()]
    assert log[0]["target"] == "opencl" and log[0]["device"] == TARGET.runner.device_identity()
    statuses = {c["status"] for c in log if c["event"] == "candidate"}
    # timeout: far slower than the default; launch: more work-items or registers than the compiled
    # kernel allows on this device (NVIDIA's OpenCL), refused before it runs
    assert "ok" in statuses and statuses <= {"ok", "timeout", "launch"}, statuses


class _Broken(GpuTarget):
    """Breaks every candidate but the default: a build error or a wrong result, alternately."""

    def __init__(self, base: GpuTarget, mdh) -> None:
        self.__dict__.update(base.__dict__)
        self.good = default_gpu_params(mdh, base.caps)
        self.n = 0

    def candidate(self, mdh, params, sizes, args):
        cand = super().candidate(mdh, params, sizes, args)
        if params == self.good:
            return cand
        self.n += 1
        src = cand.request.source
        if self.n % 2:   # a build error
            return replace(cand, request=replace(cand.request, source="this is not C;\n" + src))
        # a wrong result, memory-safe: the host code tells the kernel dim 0 is one shorter, so it skips the last row
        ext = "mdp_ext_0 = (cl_long)("
        assert src.count(ext) == 1
        return replace(cand, request=replace(cand.request, source=src.replace(ext, ext + "-1 + ")))


@pytest.mark.campaign   # a tuning run (README.md "Run the tests")
@needs_device
def test_broken_candidates_are_discarded(tmp_path):
    assert isinstance(TARGET, GpuTarget)
    mdh = ex.matmul(17, 19, 23)
    broken = _Broken(TARGET, mdh)
    r = tune_nest(mdh, "", {}, OpenCLBackend(), _settings(tmp_path, 8), target=broken)
    assert r.params == broken.good and r.tuned_seconds < float("inf")
    log = [json.loads(line) for line in Path(r.log_path).read_text().splitlines()]
    kinds = {c["status"] for c in log if c["event"] == "candidate"}
    assert {"ok", "build", "wrong"} <= kinds
    assert next(c for c in log if c["event"] == "result")["rejected"]

class _Pathological(GpuTarget):
    """Every candidate but the default hangs (spins forever) or writes far out of bounds, alternately."""

    def __init__(self, base: GpuTarget, mdh) -> None:
        self.__dict__.update(base.__dict__)
        self.good = default_gpu_params(mdh, base.caps)
        self.n = 0

    def candidate(self, mdh, params, sizes, args):
        cand = super().candidate(mdh, params, sizes, args)
        if params == self.good:
            return cand
        self.n += 1
        out = next(a.name for a in args if a.is_output)
        # The spin reads the output through a volatile global pointer on every turn: a volatile
        # private flag alone was compiled away by NVIDIA's OpenCL compiler (the loop then ended).
        bad = (f"{{ volatile __global float *mdp_spin = {out}; while (mdp_spin[0] == mdp_spin[0] "
               "|| mdp_spin[0] != mdp_spin[0]) { } }" if self.n % 2 else
               f"{out}[get_global_id(0) + ((long)1 << 40)] = 1.0f;")
        # the kernel source is a C string in the host code: the statement goes in as one more line of it
        src = cand.request.source
        body = src.index("\n", src.index('"__kernel void')) + 1
        return replace(cand, request=replace(cand.request, source=src[:body] + c_string(bad) + "\n" + src[body:]))


@pytest.mark.campaign   # a tuning run (README.md "Run the tests")
@needs_device
def test_hanging_and_crashing_candidates_end_the_worker_not_the_tuner(tmp_path):
    assert isinstance(TARGET, GpuTarget)
    mdh = ex.matmul(17, 19, 23)
    bad = _Pathological(TARGET, mdh)
    start = time.perf_counter()
    r = tune_nest(mdh, "", {}, OpenCLBackend(), _settings(tmp_path, 5), target=bad)
    assert r.params == bad.good and r.tuned_seconds < float("inf")
    log = [json.loads(line) for line in Path(r.log_path).read_text().splitlines()]
    kinds = [c["status"] for c in log if c["event"] == "candidate"]
    # PoCL compiles a kernel at its first launch, which may outlast the calibrated timeout before the
    # out-of-bounds write crashes: either kind is a discarded candidate (the crash itself:
    # tests/runtime/test_opencl_runner.py). Each evaluation is bounded by its timeout plus a worker start.
    # (a candidate the device cannot launch is refused before it runs: 'launch')
    assert kinds[0] == "ok" and "timeout" in kinds and set(kinds[1:]) <= {"timeout", "crash", "launch"}, kinds
    calibrated = next(c for c in log if c["event"] == "calibrate")["timeout"]
    # Bounds, not timings: without the worker a looping kernel never returns. They are generous so
    # that a loaded CI machine cannot trip them.
    assert all(c["eval_seconds"] < calibrated + 120.0 for c in log if c["event"] == "candidate")
    assert time.perf_counter() - start < 300.0


@pytest.mark.campaign   # a tuning run (README.md "Run the tests")
@needs_device
def test_time_budget_bounds_a_hanging_candidate(tmp_path):
    """A measurement's timeout never reaches past the tuning budget by more than the margin."""
    assert isinstance(TARGET, GpuTarget)
    from mdpoly.tuning.evaluate import DEADLINE_MARGIN, NestEvaluator, TuningLog
    mdh = ex.matmul(17, 19, 23)
    bad = _Pathological(TARGET, mdh)
    ev = NestEvaluator(mdh, "", {}, bad, TARGET.runner, TuningLog(None), bad.good,
                       deadline=time.perf_counter() + 1.0)
    ev.timeout = 600.0
    start = time.perf_counter()
    # the smallest work-group among the neighbours: one the device can launch (a larger one may be
    # refused before it runs, and then nothing hangs)
    params = min(bad.neighbours(bad.space(mdh, {}), bad.good), key=lambda q: q.wg_size())
    with pytest.raises(Exception) as info:
        ev.evaluate(params)
    assert getattr(info.value, "kind", "") == "timeout"
    assert time.perf_counter() - start < 1.0 + DEADLINE_MARGIN + 60.0   # a bound (the kernel loops forever)

# }}}

# {{{ the driver


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.startswith(("OCL_", "POCL_", "MDPOLY_OPENCL"))}
    env.update(PATH=os.environ.get("PATH", "/usr/bin:/bin"), PYTHONPATH=str(REPO),
               MDPOLY_CACHE_DIR=str(tmp_path / "cache"), **extra)
    return env


def _build_run(src: Path, exe: Path, *flags: str) -> str:
    subprocess.run(["cc", "-O2", str(src), "-o", str(exe), *flags, "-lm"], check=True, capture_output=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=300).stdout


@needs_device
@needs_cl_build
@pytest.mark.parametrize("example,defines", [pytest.param("matmul.c", ["-D", "N=40"], marks=pytest.mark.campaign),
                                             ("dot.c", ["-D", "N=20000"])])   # matmul: a campaign (README "Run the tests")
def test_cli_tunes_opencl_and_out_c_is_correct(example, defines, tmp_path):
    src = REPO / "c_examples" / example
    out = tmp_path / "out.c"
    env = _env(tmp_path)
    cmd = [*MDPOLY, str(src), "-o", str(out), "--target", "opencl", "--tune-evals", "5", "--all-nests", *defines,
           "--report", str(tmp_path / "r.json")]
    proc = _run(cmd, env)
    assert proc.returncode == 0, proc.stderr
    assert "remark: tuned on " in proc.stderr, proc.stderr
    nest = next(n for n in json.loads((tmp_path / "r.json").read_text())["nests"] if n.get("tuning"))
    assert {"num_wi", "pt", "num_wg", "ocl_groups"} <= set(nest["tuning"]["config"])
    flags = [f"-D{d}" for d in defines if d != "-D"]
    want = _build_run(src, tmp_path / "orig", *flags)
    got = _build_run(out, tmp_path / "got", *flags, "-lOpenCL")
    assert compare_outputs(want, got, rtol=1e-4, atol=1e-5) is None, (want, got)
    # the cache is keyed by the device: the second run hits it
    proc = _run(cmd, env)
    assert proc.returncode == 0 and "from the tuning cache" in proc.stderr, proc.stderr
    db = sqlite3.connect(tmp_path / "cache" / "tuning.sqlite3")
    fields = [json.loads(row[0]) for row in db.execute("SELECT key_fields FROM tuned")]
    assert TARGET.runner.device_identity() in {f["device"] for f in fields}


@needs_device
@needs_cl_build
def test_a_candidate_is_plain_data_another_runner_can_evaluate():
    """A pickled candidate, built and run by a runner of its own, gives the nest's result."""
    import pickle

    import numpy as np

    from mdpoly.runtime.host_code import HostCodeRunner
    assert isinstance(TARGET, GpuTarget)
    mdh = ex.dot(3001)
    cand = TARGET.candidate(mdh, TARGET.default(mdh), {}, _arg_specs(mdh))
    copy = pickle.loads(pickle.dumps(cand))
    assert copy == cand and copy.function == cand.function
    r = TARGET.runner
    runner = HostCodeRunner("opencl", r.compile_flags, r.link_libs, r.host_env)
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal(3001), rng.standard_normal(3001)
    m = runner.run(runner.build(copy.request), {"x": x, "y": y, "s": np.array([1.0])}, repeats=2)
    assert np.isclose(m.outputs["s"][0], 1.0 + x @ y, rtol=1e-10, atol=1e-9) and len(m.times) == 2


def _function_in(out_c: str, name: str) -> str:
    """The generated host function ``name`` of ``out_c`` as its backend rendered it: from its kernel
    source string to the end of its body, and its launch check ``<name>_fits`` after it."""
    start = out_c.index(f"static const char mdp_src_{name}[] =")
    end = out_c.index("\n}\n", out_c.index(f"static void {name}(", start)) + 3
    fits = f"MDP_FITS_FN {name}_fits(void)"
    if out_c.startswith(fits, end):
        end = out_c.index("\n}\n", end) + 3
    return out_c[start:end]


@pytest.mark.campaign   # a tuning run (README.md "Run the tests")
@needs_device
@needs_cl_build
def test_tuned_candidate_is_the_shipped_code(tmp_path):
    """The candidate the tuner measured and chose is the function out.c holds, byte for byte: the
    tuning log's SHA-256 of the winner's generated function equals that of the function in out.c."""
    src = REPO / "c_examples" / "matmul.c"
    out = tmp_path / "out.c"
    proc = _run([*MDPOLY, str(src), "-o", str(out), "--target", "opencl", "--tune-evals", "4", "-D", "N=24",
                 "--all-nests"], _env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "remark: tuned on " in proc.stderr, proc.stderr
    logs = sorted((tmp_path / "cache" / "logs").glob("*.jsonl"))
    assert logs
    log = [json.loads(line) for line in logs[-1].read_text().splitlines()]
    name = log[0]["nest"]
    result = next(r for r in log if r["event"] == "result")
    measured = {c["function_sha256"] for c in log if c["event"] == "candidate" and c["status"] == "ok"
                and c["params"] == result["params"]}
    shipped = hashlib.sha256(_function_in(out.read_text(), name).encode()).hexdigest()
    assert measured == {shipped}


def test_no_device_falls_back_to_defaults_with_a_remark(tmp_path):
    src = REPO / "c_examples" / "matmul.c"
    out = tmp_path / "out.c"
    env = _env(tmp_path, MDPOLY_OPENCL_DEVICE="no-such-device-anywhere")
    proc = _run([*MDPOLY, str(src), "-o", str(out), "--target", "opencl", "--tune-evals", "3", "--all-nests"], env)
    assert proc.returncode == 0, proc.stderr
    assert "not tuned: no OpenCL device available to tune on" in proc.stderr
    assert "matmul.c:" in proc.stderr.split("not tuned: no OpenCL")[0].splitlines()[-1]
    assert "__kernel void" in out.read_text()

# }}}
