"""``OpenMPRunner``: build C+OpenMP sources as shared libraries and run them in a worker process.

Builds with ``cc -O3 -march=native -fopenmp -shared -fPIC``; runs ``mdpoly.runtime.ctypes_worker`` in a
separate process per measurement, so a crashing or hanging candidate is discarded without
taking the caller down.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mdpoly.runtime.base import (
    LAUNCH_REFUSED_MARK,
    LAUNCH_REFUSED_STATUS,
    ArgSpec,
    BuildFailed,
    BuildRequest,
    Built,
    LaunchRefused,
    Measurement,
    RunFailed,
    RunTimedOut,
)

DEFAULT_FLAGS = ("-O3", "-march=native", "-fopenmp", "-shared", "-fPIC")
#: Inputs at least this large are written once per array object and reused by later runs.
SHARED_INPUT_BYTES = 1 << 20
#: At most this many such files are kept (the oldest removed first).
SHARED_INPUT_FILES = 16


def _kill_group(pid: int) -> None:
    """SIGKILL to the process group ``pid`` leads, if any of it is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


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
    #: seconds one compilation may take: a candidate the compiler labours on (gcc 12 spent over
    #: 8 minutes on a 2 x 4 block with a SIMD reduction over 8 accumulators) fails to build
    compile_timeout: float = 60.0
    #: ``time.perf_counter()`` by which every build and run must be over (a tuner's budget; ``None``:
    #: only the limits above): a compilation or a worker still going then is killed
    deadline: float | None = None

    def __init__(self, work_dir: str | None = None, threads: int | None = None) -> None:
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="mdpoly-rt-"))
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.threads = threads
        self.env: dict[str, str] = {}
        self._shared: dict[tuple[int, str, tuple[int, ...]], tuple[np.ndarray, str]] = {}

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
        limit = self.compile_timeout
        if self.deadline is not None:
            limit = max(0.0, min(limit, self.deadline - start))
        # a session of its own: on a timeout the compiler's own children (cc1) end with it
        # the compiler's temporary files (``cc*.s``) go to the work folder, removed with it even
        # when the compiler is killed before it could remove them itself
        env = {**os.environ, "TMPDIR": str(self.work_dir)}
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True, env=env) as proc:
            try:
                _, stderr = proc.communicate(timeout=limit)
            except subprocess.TimeoutExpired as exc:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                why = "the tuning budget ended" if limit < self.compile_timeout else ""
                raise BuildFailed(f"compilation ran longer than {limit:g} s{' (' + why + ')' if why else ''}",
                                  cmd, "") from exc
            except BaseException:   # interrupted, terminated: the compiler goes too, now
                _kill_group(proc.pid)
                proc.communicate()
                raise
        if proc.returncode != 0:
            raise BuildFailed("compilation failed", cmd, stderr[-4000:])
        return Built(request, str(lib), time.perf_counter() - start)

    def run(self, built: Built, inputs: dict[str, np.ndarray], repeats: int = 5,
            warmup: int = 1, timeout: float = 30.0) -> Measurement:
        job = Path(tempfile.mkdtemp(prefix="job-", dir=self.work_dir))
        specs = built.request.args
        files = [self._input_file(job, k, spec, inputs[spec.name]) for k, spec in enumerate(specs)]
        (job / "job.json").write_text(json.dumps({
            "library": built.artifact, "entry": built.request.entry,
            "args": [{"name": s.name, "is_output": s.is_output, "file": f} for s, f in zip(specs, files)],
            "repeats": repeats, "warmup": warmup, "timing": self.timing, "hold": built.request.hold,
        }))
        env = {**os.environ, **self.env}
        if self.threads:
            env["OMP_NUM_THREADS"] = str(self.threads)
        start = time.perf_counter()
        try:
            status = self._wait(job, env, timeout, repeats)
            if status != 0:
                err = (job / "stderr.txt").read_text(errors="replace")[-2000:]
                refused = [line for line in err.splitlines() if line.startswith(LAUNCH_REFUSED_MARK)]
                if status == LAUNCH_REFUSED_STATUS and refused:
                    raise LaunchRefused(refused[0][len(LAUNCH_REFUSED_MARK):].strip())
                raise RunFailed(f"candidate process exited with status {status}: {err}")
            wall = time.perf_counter() - start
            times = host = tuple(json.loads((job / "times.json").read_text()))
            calls: tuple[float, ...] = ()
            transfers: tuple[float, ...] = ()
            if self.timing is not None:
                profile = json.loads((job / "timing.json").read_text())
                times, calls, transfers = tuple(profile["kernel"]), tuple(profile["call"]), tuple(profile["transfer"])
            outputs = {s.name: np.load(job / f"out_{k}.npy") for k, s in enumerate(specs) if s.is_output}
        finally:
            shutil.rmtree(job, ignore_errors=True)
        return Measurement(times, outputs, calls, wall, transfers, host)

    def _input_file(self, job: Path, k: int, spec: ArgSpec, value: np.ndarray) -> str:
        """The ``.npy`` file of argument ``k``: in the job for small values; for large ones, a file
        of the runner's written once per array object and reused while the caller passes the same
        array again (a tuner passes the nest's inputs to every candidate), the newest
        ``SHARED_INPUT_FILES`` kept."""
        if value.nbytes < SHARED_INPUT_BYTES:
            path = job / f"in_{k}.npy"
            np.save(path, np.ascontiguousarray(value, dtype=spec.dtype).reshape(spec.shape))
            return str(path)
        ident = (id(value), spec.dtype, spec.shape)
        hit = self._shared.get(ident)
        if hit is not None and hit[0] is value:
            return hit[1]
        if len(self._shared) >= SHARED_INPUT_FILES:
            Path(self._shared.pop(next(iter(self._shared)))[1]).unlink(missing_ok=True)
        fd, name = tempfile.mkstemp(prefix="input-", suffix=".npy", dir=self.work_dir)
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, np.ascontiguousarray(value, dtype=spec.dtype).reshape(spec.shape))
        self._shared[ident] = (value, name)
        return name

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
            if self.deadline is not None:
                limit = min(limit, self.deadline)
            warm = not self.warm_seconds
            try:
                while True:
                    try:
                        return proc.wait(timeout=0.02)
                    except subprocess.TimeoutExpired:
                        pass
                    now = time.perf_counter()
                    if not warm and (job / "warm").exists():
                        warm, limit = True, now + timeout
                        if self.deadline is not None:
                            limit = min(limit, self.deadline)
                    if now > limit:
                        proc.kill()
                        proc.wait()
                        what = (f"{repeats} timed calls ran longer than {timeout:.1f} s" if self.warm_seconds and warm
                                else f"candidate ran longer than {limit - start:.1f} s")
                        raise RunTimedOut(f"{what} (worker killed)") from None
            except BaseException:   # also interrupted or terminated: no worker outlives the caller
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                raise
