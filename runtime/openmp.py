"""``OpenMPRunner``: build C+OpenMP sources as shared libraries and run them in a worker process.

Builds with ``cc -O3 -march=native -fopenmp -shared -fPIC``; runs ``mdpoly.runtime.ctypes_worker`` in a
separate process per measurement, so a crashing or hanging candidate is discarded without
taking the caller down.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mdpoly.runtime.base import (
    BuildFailed,
    BuildRequest,
    Built,
    Measurement,
    RunFailed,
    RunTimedOut,
)

DEFAULT_FLAGS = ("-O3", "-march=native", "-fopenmp", "-shared", "-fPIC")


class OpenMPRunner:
    """Shared libraries built with ``flags`` (and linked with ``libs``), run in a worker process
    with the environment ``env`` added; ``timing``: the exported profile symbol the worker reads
    after each call (``None``: the worker's wall clock is the time)."""

    name = "openmp"
    flags: tuple[str, ...] = DEFAULT_FLAGS
    libs: tuple[str, ...] = ("-lm",)
    timing: str | None = None
    #: seconds the worker's start and warm-up calls may take at least (0: one limit for the run)
    warm_seconds: float = 0.0

    def __init__(self, work_dir: str | None = None, threads: int | None = None) -> None:
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="mdpoly-rt-"))
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.threads = threads
        self.env: dict[str, str] = {}

    def device_identity(self) -> str:
        model = "unknown-cpu"
        try:
            for line in Path("/proc/cpuinfo").read_text().splitlines():
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        return f"{model} x{os.cpu_count()}"

    def compiler_identity(self, compiler: str = "cc") -> str:
        out = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=False)
        return (out.stdout.splitlines() or ["unknown"])[0]

    def build(self, request: BuildRequest) -> Built:
        digest = hashlib.sha256((request.source + request.compiler + " ".join(self.flags + request.flags + self.libs))
                                .encode()).hexdigest()[:16]
        src = self.work_dir / f"k_{digest}.c"
        lib = self.work_dir / f"k_{digest}.so"
        if lib.exists():
            return Built(request, str(lib), 0.0)
        src.write_text(request.source)
        cmd = [request.compiler, *self.flags, *request.flags, str(src), "-o", str(lib), *self.libs]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise BuildFailed("compilation failed", cmd, proc.stderr[-4000:])
        return Built(request, str(lib), time.perf_counter() - start)

    def run(self, built: Built, inputs: dict[str, np.ndarray], repeats: int = 5,
            warmup: int = 1, timeout: float = 30.0) -> Measurement:
        job = Path(tempfile.mkdtemp(prefix="job-", dir=self.work_dir))
        specs = built.request.args
        for k, spec in enumerate(specs):
            arr = np.ascontiguousarray(inputs[spec.name], dtype=spec.dtype).reshape(spec.shape)
            np.save(job / f"in_{k}.npy", arr)
        (job / "job.json").write_text(json.dumps({
            "library": built.artifact, "entry": built.request.entry,
            "args": [{"name": s.name, "is_output": s.is_output} for s in specs],
            "repeats": repeats, "warmup": warmup, "timing": self.timing,
        }))
        env = {**os.environ, **self.env}
        if self.threads:
            env["OMP_NUM_THREADS"] = str(self.threads)
        start = time.perf_counter()
        try:
            status = self._wait(job, env, timeout, repeats)
            if status != 0:
                err = (job / "stderr.txt").read_text(errors="replace")[-2000:]
                raise RunFailed(f"candidate process exited with status {status}: {err}")
            wall = time.perf_counter() - start
            times = tuple(json.loads((job / "times.json").read_text()))
            calls: tuple[float, ...] = ()
            if self.timing is not None:
                profile = json.loads((job / "timing.json").read_text())
                times, calls = tuple(profile["kernel"]), tuple(profile["call"])
            outputs = {s.name: np.load(job / f"out_{k}.npy") for k, s in enumerate(specs) if s.is_output}
        finally:
            shutil.rmtree(job, ignore_errors=True)
        return Measurement(times, outputs, calls, wall)

    def _wait(self, job: Path, env: dict[str, str], timeout: float, repeats: int) -> int:
        """Runs the worker on ``job`` and returns its exit status. Without ``warm_seconds`` the
        whole run gets ``timeout`` seconds; with it, the worker's start and warm-up calls (where
        GPU host code builds its kernels) get ``max(timeout, warm_seconds)`` and the timed calls
        ``timeout`` more.

        :raises RunTimedOut: past either limit (the worker is killed)."""
        start = time.perf_counter()
        with (job / "stderr.txt").open("wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "mdpoly.runtime.ctypes_worker", str(job)],
                                    stdout=subprocess.DEVNULL, stderr=err, env=env)
            limit = start + (max(timeout, self.warm_seconds) if self.warm_seconds else timeout)
            warm = not self.warm_seconds
            while True:
                try:
                    return proc.wait(timeout=0.02)
                except subprocess.TimeoutExpired:
                    now = time.perf_counter()
                    if not warm and (job / "warm").exists():
                        warm, limit = True, now + timeout
                    if now > limit:
                        proc.kill()
                        proc.wait()
                        what = (f"{repeats} timed calls ran longer than {timeout:.1f} s" if self.warm_seconds and warm
                                else f"candidate ran longer than {limit - start:.1f} s")
                        raise RunTimedOut(f"{what} (worker killed)") from None
