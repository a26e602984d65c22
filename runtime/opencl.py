"""``OpenCLRunner``: build OpenCL C kernels with pyopencl and time them with profiling events.

A ``KernelRequest`` is a ``BuildRequest`` (``language="opencl"``, ``source`` the OpenCL C text,
``flags`` the build options) plus the launches one call makes: each ``Launch`` names a kernel of
the program and its global and local sizes; every kernel receives the arguments of ``args`` in
order (arrays as buffers, shape-``()`` specs by value with their dtype), as mdpoly's generated
kernels do (``<nest>`` and ``<nest>_combine`` share one argument list).

``run`` uploads the inputs, makes ``warmup`` untimed and ``repeats`` timed calls, each starting
from the original buffer contents, and returns the summed kernel time of each timed call from
``CL_PROFILING_COMMAND_START``/``END`` plus the outputs of the first call. Device choice: a
selector (index or name substring), else the first GPU, else the first device -- the rule of the
generated host code. ``device_limits()`` gives the limits lowering reads (``caps_from_device``).

Failures are isolated (style.md 3.11). OpenCL cannot stop a running kernel, and an
out-of-bounds kernel can take its process down, so ``run`` executes in a worker process
(``mdpoly.runtime.opencl_worker``) on the same device (its platform and device indices). The worker is
persistent: started on the first ``run``, it keeps its context and built programs between
measurements (starting one costs the pyopencl import and a context, about a second, too much per
candidate). Inputs travel as ``.npy`` files in a job directory; large inputs that the caller
passes again unchanged (the same array object) are written and loaded once. ``run`` waits at
most ``timeout`` seconds for the whole measurement; past it the worker is killed (``RunTimedOut``),
and a worker that dies raises ``RunFailed`` (kind ``crash``) with its stderr's tail; the next
``run`` starts a new worker. ``build`` stays in this process: it compiles, raises ``BuildFailed``
with the log, and hands the worker the program binary (or the source, where the driver cannot
reload binaries).
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mdpoly.runtime.base import (
    ArgSpec,
    BuildFailed,
    BuildRequest,
    Built,
    Measurement,
    RunFailed,
    RunTimedOut,
)


class NoOpenCLDevice(RunFailed):
    """pyopencl is missing, or no platform/device (matching the selector) exists."""

    kind = "no-device"


@dataclass(frozen=True, slots=True)
class Launch:
    kernel: str
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class KernelRequest(BuildRequest):
    launches: tuple[Launch, ...] = ()


def _import_cl() -> Any:
    try:
        import pyopencl as cl
    except ImportError as exc:  # the 'opencl' extra is not installed
        raise NoOpenCLDevice("pyopencl is not installed (pip install 'mdpoly[opencl]')") from exc
    return cl


def list_devices() -> list[Any]:
    """Every OpenCL device of every platform, in platform order (empty when none)."""
    cl = _import_cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        return []
    devices: list[Any] = []
    for p in platforms:
        try:
            devices += p.get_devices()
        except cl.Error:
            continue
    return devices


def choose_device(selector: str | None = None) -> Any:
    """The device for ``selector`` (index or case-insensitive name substring), else the first
    GPU, else the first device.

    :raises NoOpenCLDevice: when there is none, or none matches.
    """
    cl = _import_cl()
    devices = list_devices()
    if not devices:
        raise NoOpenCLDevice("no OpenCL platform or device found")
    if selector:
        if selector.isdigit():
            k = int(selector)
            if k < len(devices):
                return devices[k]
        else:
            for d in devices:
                if selector.lower() in f"{d.name} {d.platform.name}".lower():
                    return d
        raise NoOpenCLDevice(f"no OpenCL device matches {selector!r} ({len(devices)} found)")
    gpus = [d for d in devices if d.type & cl.device_type.GPU]
    return (gpus or devices)[0]


def _device_indices(device: Any) -> tuple[int, int]:
    """``device``'s platform index and its index on that platform (what the worker reopens)."""
    cl = _import_cl()
    for p, platform in enumerate(cl.get_platforms()):
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        for d, dev in enumerate(devices):
            if dev.int_ptr == device.int_ptr:
                return p, d
    raise NoOpenCLDevice(f"device {device.name!r} not found again among the platforms")


#: Seconds a new worker may take to import pyopencl and create its context.
WORKER_START_SECONDS = 60.0
#: Inputs at least this large are written once per array object and reused by later runs.
SHARED_INPUT_BYTES = 1 << 20
#: At most this many shared input files are kept (oldest removed first).
SHARED_INPUT_FILES = 16


class _Worker:
    """One ``mdpoly.runtime.opencl_worker`` process and its line protocol (see that module)."""

    def __init__(self, platform: int, device: int, log_path: Path) -> None:
        self.log_path = log_path
        self._log = log_path.open("ab")
        env = dict(os.environ)
        self.proc = subprocess.Popen([sys.executable, "-m", "mdpoly.runtime.opencl_worker", str(platform), str(device)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, env=env)
        self._buf = b""
        try:
            line = self.read_line(time.monotonic() + WORKER_START_SECONDS)
        except TimeoutError:
            line = f"no answer in {WORKER_START_SECONDS:.0f} s"
        if line != "ready":
            raise self.died(f"the OpenCL worker did not start ({line!r})")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def read_line(self, deadline: float) -> str | None:
        """The next protocol line; ``None`` at end of stream.

        :raises TimeoutError: when ``deadline`` (``time.monotonic``) passes first.
        """
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode(errors="replace").strip()

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def died(self, what: str) -> RunFailed:
        self.kill()
        try:
            tail = self.log_path.read_bytes()[-2000:].decode(errors="replace")
        except OSError:
            tail = ""
        return RunFailed(f"{what}: worker exited with status {self.proc.returncode}\n{tail}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                f.close()
        self._log.close()


def _stop(worker: list[_Worker | None], work_dir: Path) -> None:
    if worker[0] is not None:
        worker[0].kill()
        worker[0] = None
    shutil.rmtree(work_dir, ignore_errors=True)


class OpenCLRunner:
    name = "opencl"

    def __init__(self, selector: str | None = None) -> None:
        cl = _import_cl()
        self._cl = cl
        self.device = choose_device(selector)
        self.indices = _device_indices(self.device)
        self.context = cl.Context([self.device])
        self._programs: dict[str, tuple[str, str | None]] = {}   # key -> (source, binary file)
        self.work_dir = Path(tempfile.mkdtemp(prefix="mdpoly-ocl-"))
        self._worker: list[_Worker | None] = [None]
        self._shared: dict[tuple[int, str, tuple[int, ...]], tuple[np.ndarray, str]] = {}
        self._jobs = 0
        self._finalizer = weakref.finalize(self, _stop, self._worker, self.work_dir)

    def close(self) -> None:
        """Stop the worker and remove the job files (also done when the runner is collected)."""
        self._finalizer()

    def device_identity(self) -> str:
        d = self.device
        return f"{d.platform.name} | {d.name} | {d.version} | driver {d.driver_version}"

    def device_limits(self) -> dict[str, Any]:
        """The device limits work-group lowering reads (keys of ``caps_from_device``)."""
        d = self.device
        return {
            "max_work_group_size": int(d.max_work_group_size),
            "max_work_item_sizes": tuple(int(x) for x in d.max_work_item_sizes),
            "local_mem_size": int(d.local_mem_size),
            "max_compute_units": int(d.max_compute_units),
            "is_gpu": bool(d.type & self._cl.device_type.GPU),
        }

    def build(self, request: BuildRequest) -> Built:
        key = hashlib.sha256((request.source + "\0" + " ".join(request.flags)).encode()).hexdigest()[:16]
        if key in self._programs:
            return Built(request, key, 0.0)
        start = time.perf_counter()
        cl = self._cl
        try:
            program = cl.Program(self.context, request.source).build(options=list(request.flags))
        except (cl.RuntimeError, cl.LogicError) as exc:
            raise BuildFailed("OpenCL build failed", ["clBuildProgram", *request.flags], str(exc)[-4000:]) from exc
        del program   # compiled here only for a located build log; the worker builds its own copy
        # No binary is handed over: asking PoCL for CL_PROGRAM_BINARIES runs its code generator
        # in this process, and for a pathological kernel that can take unbounded time. The worker
        # compiles from source, where the candidate's timeout can stop it.
        self._programs[key] = (request.source, None)
        return Built(request, key, time.perf_counter() - start)

    def _input_file(self, job: Path, k: int, spec: ArgSpec, value: np.ndarray) -> tuple[str, bool]:
        """The ``.npy`` holding argument ``k``, and whether it is a shared (reused) file."""
        if spec.shape == () or value.nbytes < SHARED_INPUT_BYTES:
            path = job / f"in_{k}.npy"
            np.save(path, np.ascontiguousarray(value, dtype=spec.dtype).reshape(spec.shape))
            return str(path), False
        ident = (id(value), spec.dtype, spec.shape)
        hit = self._shared.get(ident)
        if hit is not None and hit[0] is value:
            return hit[1], True
        if len(self._shared) >= SHARED_INPUT_FILES:
            old = next(iter(self._shared))
            Path(self._shared.pop(old)[1]).unlink(missing_ok=True)
        path = self.work_dir / f"shared_{self._jobs}_{k}.npy"
        np.save(path, np.ascontiguousarray(value, dtype=spec.dtype).reshape(spec.shape))
        self._shared[ident] = (value, str(path))
        return str(path), True

    def run(self, built: Built, inputs: dict[str, np.ndarray], repeats: int = 5,
            warmup: int = 1, timeout: float = 30.0) -> Measurement:
        """Measure ``built`` in the worker (see the module docstring).

        :raises RunTimedOut: when the measurement takes longer than ``timeout`` seconds.
        :raises RunFailed: when the worker reports an OpenCL error or dies.
        """
        req = built.request
        launches = req.launches if isinstance(req, KernelRequest) else ()
        if not launches:
            raise RunFailed("an OpenCL run needs a KernelRequest with at least one Launch")
        source, binary = self._programs[built.artifact]
        self._jobs += 1
        job = self.work_dir / f"job_{self._jobs}"
        job.mkdir()
        try:
            args = []
            for k, spec in enumerate(req.args):
                path, shared = self._input_file(job, k, spec, inputs[spec.name])
                args.append({"name": spec.name, "dtype": spec.dtype, "shape": list(spec.shape),
                             "is_output": spec.is_output, "file": path, "shared": shared})
            (job / "job.json").write_text(json.dumps({
                "key": built.artifact, "source": source, "binary": binary, "flags": list(req.flags),
                "launches": [{"kernel": ln.kernel, "global_size": list(ln.global_size),
                              "local_size": None if ln.local_size is None else list(ln.local_size)}
                             for ln in launches],
                "args": args, "repeats": repeats, "warmup": warmup,
            }))
            result = self._request(job, timeout)
            if "error" in result:
                raise RunFailed(f"OpenCL run failed: {result['error']}")
            outputs = {s.name: np.load(job / f"out_{k}.npy") for k, s in enumerate(req.args)
                       if s.is_output and s.shape != ()}
            return Measurement(tuple(result["times"]), outputs)
        finally:
            shutil.rmtree(job, ignore_errors=True)

    def _request(self, job: Path, timeout: float) -> dict[str, Any]:
        worker = self._worker[0]
        if worker is None or not worker.alive():
            self._worker[0] = None
            worker = _Worker(*self.indices, self.work_dir / "worker.log")
            self._worker[0] = worker
        deadline = time.monotonic() + timeout
        try:
            worker.send(str(job))
            line = worker.read_line(deadline)
        except TimeoutError:
            worker.kill()
            self._worker[0] = None
            raise RunTimedOut(f"candidate ran longer than {timeout:.1f} s (worker killed)") from None
        except OSError as exc:   # a broken pipe: the worker died before reading the job
            self._worker[0] = None
            raise worker.died(f"candidate crashed the OpenCL worker ({exc})") from exc
        if line != "done":
            self._worker[0] = None
            raise worker.died("candidate crashed the OpenCL worker")
        result: dict[str, Any] = json.loads((job / "result.json").read_text())
        return result
