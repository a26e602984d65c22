"""``OpenMPRunner``: build C+OpenMP sources as shared libraries and run them in a worker process.

Builds with ``cc -O3 -march=native -fopenmp -shared -fPIC``; runs ``mdpoly.runtime.ctypes_worker`` in a
separate process per measurement, so a crashing or hanging candidate is discarded without
taking the caller down.
"""

from __future__ import annotations

import hashlib
import json
import os
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
    name = "openmp"

    def __init__(self, work_dir: str | None = None, threads: int | None = None) -> None:
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="mdpoly-rt-"))
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.threads = threads

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
        digest = hashlib.sha256(
            (request.source + request.compiler + " ".join(request.flags)).encode()).hexdigest()[:16]
        src = self.work_dir / f"k_{digest}.c"
        lib = self.work_dir / f"k_{digest}.so"
        if lib.exists():
            return Built(request, str(lib), 0.0)
        src.write_text(request.source)
        cmd = [request.compiler, *DEFAULT_FLAGS, *request.flags, str(src), "-o", str(lib), "-lm"]
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
            "repeats": repeats, "warmup": warmup,
        }))
        env = dict(os.environ)
        if self.threads:
            env["OMP_NUM_THREADS"] = str(self.threads)
        try:
            proc = subprocess.run([sys.executable, "-m", "mdpoly.runtime.ctypes_worker", str(job)],
                                  capture_output=True, text=True, timeout=timeout, env=env, check=False)
        except subprocess.TimeoutExpired as exc:
            raise RunTimedOut(f"candidate ran longer than {timeout:.1f} s") from exc
        if proc.returncode != 0:
            raise RunFailed(f"candidate process exited with status {proc.returncode}: {proc.stderr[-2000:]}")
        times = tuple(json.loads((job / "times.json").read_text()))
        outputs = {s.name: np.load(job / f"out_{k}.npy") for k, s in enumerate(specs) if s.is_output}
        for f in job.iterdir():
            f.unlink()
        job.rmdir()
        return Measurement(times, outputs)
