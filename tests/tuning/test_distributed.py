"""Tuning on a Dask cluster (``--tune-workers``): a real ``LocalCluster`` of two worker processes.

Checked: both workers measure candidates (the tuning log names the worker of each), the result
lands in the client's cache, the tuned ``out.c`` prints what the sequential program prints, and
a candidate that crashes on a worker, or kills the worker itself, is a rejection, not a failed
tuning; OpenCL candidates go to workers declaring a GPU (PoCL in CI). The tests that start a
cluster are marked ``campaign`` (README.md "Run the tests": ``pytest -m campaign``).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="Dask distributed is not installed (pip install 'mdpoly[dask]')")

from test_space import MATMUL  # noqa: E402

from mdpoly.backends.entry import entry_function  # noqa: E402
from mdpoly.backends.openmp import OpenMPBackend  # noqa: E402
from mdpoly.differential import compare_outputs  # noqa: E402
from mdpoly.lower import check_plan, lower  # noqa: E402
from mdpoly.runtime.base import ArgSpec, BuildRequest  # noqa: E402
from mdpoly.tuning.cache import TuningCache  # noqa: E402
from mdpoly.tuning.distributed import Job, RunnerSpec, run_job, workers_summary  # noqa: E402
from mdpoly.tuning.evaluate import ENTRY  # noqa: E402
from mdpoly.tuning.target import Candidate  # noqa: E402
from mdpoly.tuning.tune import TuneSettings, tune_nest  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MDPOLY = [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())"]


@pytest.fixture(scope="module")
def cluster():
    """Two single-threaded worker processes, each declaring one CPU and one "GPU" (PoCL's CPU
    device stands in for it in the OpenCL case)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, resources={"CPU": 1, "GPU": 1},
                                  dashboard_address=":0", silence_logs=40) as c:
        yield c


def _cc(src: Path, exe: Path, *defines: str) -> str:
    subprocess.run(["cc", "-O2", "-fopenmp", *defines, str(src), "-o", str(exe), "-lm"], check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True, env={"OMP_NUM_THREADS": "2"},
                          timeout=60).stdout


def _log(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


@pytest.mark.campaign
def test_cli_tunes_matvec_on_two_workers(cluster, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "MDPOLY_DASK_SCHEDULER": cluster.scheduler_address}
    src = REPO / "c_examples" / "matvec.c"
    sizes = ("-DI=96", "-DK=80")
    cmd = [*MDPOLY, str(src), *sizes, "-o", str(tmp_path / "out.c"), "--tune-evals", "8",
           "--tune-technique", "random", "--cache-dir", str(tmp_path / "cache"), "--report", str(tmp_path / "r.json")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "candidates measured on 2 workers" in proc.stderr, proc.stderr
    t = json.loads((tmp_path / "r.json").read_text())["nests"][0]["tuning"]
    assert t["from_cache"] is False and set(t["workers"]) == set(cluster.scheduler_info["workers"])
    log = _log(t["log"])
    measured = [r["worker"] for r in log if r["event"] == "candidate" and r.get("worker")]
    assert set(measured) == set(cluster.scheduler_info["workers"])
    assert any(r["event"] == "candidate" and r["status"] == "ok" for r in log)
    assert sum(t["workers"].values()) == len([r for r in log if r["event"] == "candidate" and r.get("worker")])
    # the client's cache holds the result: a second run reads it (and asks no worker)
    db = TuningCache(tmp_path / "cache")
    with db._connect() as conn:
        assert conn.execute("SELECT COUNT(*) FROM tuned").fetchone()[0] == 1
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "from the tuning cache" in proc.stderr, proc.stderr
    # the float sum may be reassociated (no --strict-fp): equal within matvec's tolerance in tests/e2e
    mismatch = compare_outputs(_cc(src, tmp_path / "orig", *sizes), _cc(tmp_path / "out.c", tmp_path / "tuned", *sizes),
                               rtol=1e-4, atol=1e-4)
    assert mismatch is None, mismatch


CRASH = f"#include <stdlib.h>\nvoid {ENTRY}(void **args) {{ abort(); }}\n"


@pytest.mark.campaign
def test_crashing_candidate_on_a_worker_is_rejected(cluster, analyze, tmp_path):
    nest = analyze(MATMUL, M=24, N=32, K=16)
    seen: list[int] = []

    def render(params):
        seen.append(1)
        if len(seen) in (2, 3):
            return CRASH
        plan = lower(nest.mdh, params)
        check_plan(plan)
        code = OpenMPBackend().render(plan)
        return code.preamble + code.definition + entry_function(ENTRY, plan.params, plan.name)

    settings = TuneSettings(seconds=None, evaluations=6, cache_dir=tmp_path, progress=False,
                            workers=cluster.scheduler_address)
    result = tune_nest(nest.mdh, nest.reference_c, {}, OpenMPBackend(), settings, render=render)
    assert result.tuned_seconds < float("inf")
    crashed = [r for r in _log(result.log_path) if r["event"] == "candidate" and r["status"] == "crash"]
    assert crashed and all(r["worker"] in cluster.scheduler_info["workers"] for r in crashed)


def test_a_failure_on_the_worker_itself_is_a_typed_rejection():
    """``run_job`` answers every failure as data: a compile error, and a runner it cannot make."""
    args = (ArgSpec("x", "float32", (4,), True),)
    bad_c = Job(RunnerSpec("openmp"), Candidate(BuildRequest("not C", ENTRY, args)), repeats=1, timeout=10)
    r = run_job(bad_c, {"x": __import__("numpy").zeros(4, "float32")})
    assert r.measurement is None and r.kind == "build"
    no_target = Job(RunnerSpec("no-such-target"), Candidate(BuildRequest("", ENTRY, args)), repeats=1, timeout=10)
    r = run_job(no_target, {})
    assert r.measurement is None and r.kind == "crash" and "no-such-target" in r.why
    assert workers_summary({"tcp://b": 2, "tcp://a": 5}) == "2 workers (tcp://a: 5, tcp://b: 2)"


@pytest.mark.campaign
def test_opencl_candidates_measured_on_workers(cluster, tmp_path):
    """OpenCL (PoCL in CI): jobs ask for a GPU; each worker opens the device itself."""
    import os

    from mdpoly.backends.opencl import OpenCLBackend
    from mdpoly.tuning.gpu import opencl_target
    sys.path.insert(0, str(REPO / "tests" / "core"))
    import mdh_examples as ex
    try:
        target = opencl_target(os.environ.get("MDPOLY_OPENCL_DEVICE") or None)
    except Exception as exc:  # noqa: BLE001 - no pyopencl, no ICD, no device
        pytest.skip(f"no OpenCL device to tune on: {exc}")
    mdh = ex.dot(3001)
    settings = TuneSettings(seconds=None, evaluations=5, cache_dir=tmp_path, progress=False,
                            workers=cluster.scheduler_address)
    r = tune_nest(mdh, "", {}, OpenCLBackend(), settings, target=target)
    assert r.tuned_seconds < float("inf") and r.workers
    log = _log(r.log_path)
    assert any(rec["event"] == "workers" and rec["resources"] == {"GPU": 1} for rec in log)
    ok = [rec for rec in log if rec["event"] == "candidate" and rec["status"] == "ok"]
    assert ok and all(rec["worker"] in cluster.scheduler_info["workers"] for rec in ok)


KILL_WORKER = (f"#include <signal.h>\n#include <unistd.h>\n"
               f"void {ENTRY}(void **args) {{ kill(getppid(), SIGKILL); pause(); }}\n")


@pytest.mark.campaign
def test_a_worker_killed_by_its_candidate_is_a_rejection(analyze, tmp_path):
    """The candidate kills the worker process that runs it: the scheduler gives up on the job
    (no retries allowed here), the client rejects the candidate and tunes on with the restarted worker."""
    import dask

    nest = analyze(MATMUL, M=24, N=32, K=16)
    seen: list[int] = []

    def render(params):
        seen.append(1)
        if len(seen) == 2:
            return KILL_WORKER
        plan = lower(nest.mdh, params)
        check_plan(plan)
        code = OpenMPBackend().render(plan)
        return code.preamble + code.definition + entry_function(ENTRY, plan.params, plan.name)

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"CPU": 1},
                                     dashboard_address=":0", silence_logs=50) as one:
        settings = TuneSettings(seconds=None, evaluations=4, cache_dir=tmp_path, progress=False,
                                workers=one.scheduler_address)
        result = tune_nest(nest.mdh, nest.reference_c, {}, OpenMPBackend(), settings, render=render)
    assert result.tuned_seconds < float("inf")
    log = _log(result.log_path)
    lost = [r for r in log if r["event"] == "candidate" and r["status"] == "crash"]
    assert lost and "failed on the cluster" in lost[0]["why"], [r.get("why") for r in log]
