"""Worker process for ``mdpoly.runtime.opencl``: run OpenCL kernels on one device, job after job.

Run as ``python -m runtime.opencl_worker PLATFORM DEVICE`` (indices into ``cl.get_platforms()``
and that platform's ``get_devices()``, so the parent's device choice is reproduced exactly). The
worker creates its context and profiling queue once and writes ``ready`` on its protocol stream
(the original stdout; fd 1 is pointed at stderr so driver chatter cannot corrupt it). Then, per
line on stdin naming a job directory: ``job.json`` holds the program (``binary`` file and/or
``source``, build ``flags``), the ``launches``, the argument layout (``args``: name, dtype,
shape, is_output, ``file`` of its ``.npy``) and ``repeats``/``warmup``. The worker writes
``out_<k>.npy`` for the outputs of the first call, ``result.json`` (``{"times": [...]}`` or
``{"error": "..."}``) and the line ``done``. A kernel that hangs or crashes ends this process
only; the parent kills it at its timeout and starts a new one.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def _program(cl: Any, ctx: Any, dev: Any, job: dict[str, Any], cache: dict[str, Any]) -> Any:
    key = job["key"]
    if key in cache:
        return cache[key]
    flags = list(job["flags"])
    program = None
    if job.get("binary"):
        try:
            program = cl.Program(ctx, [dev], [Path(job["binary"]).read_bytes()]).build(options=flags)
        except cl.Error:
            program = None   # a driver that cannot reload its binaries: build from source
    if program is None:
        program = cl.Program(ctx, job["source"]).build(options=flags)
    cache[key] = program
    return program


def _load(path: str, cache: dict[str, np.ndarray]) -> np.ndarray:
    """Inputs the parent marked ``shared`` (large, unchanged between jobs) are loaded once."""
    if path in cache:
        return cache[path]
    return np.load(path)


def run_job(cl: Any, ctx: Any, dev: Any, queue: Any, job_dir: Path, programs: dict[str, Any],
            shared: dict[str, np.ndarray]) -> dict[str, Any]:
    job = json.loads((job_dir / "job.json").read_text())
    for stale in set(shared) - {spec["file"] for spec in job["args"]}:
        del shared[stale]
    program = _program(cl, ctx, dev, job, programs)
    hosts: list[np.ndarray] = []
    bufs: list[Any] = []
    for spec in job["args"]:
        arr = _load(spec["file"], shared)
        if spec.get("shared"):
            shared[spec["file"]] = arr
        arr = np.ascontiguousarray(arr, dtype=spec["dtype"]).reshape(tuple(spec["shape"]))
        hosts.append(arr)
        if arr.shape == ():
            bufs.append(arr.dtype.type(arr))
        else:
            bufs.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE, max(arr.nbytes, 1)))
    kernels = [(getattr(program, ln["kernel"]), ln) for ln in job["launches"]]
    times: list[float] = []
    for call in range(job["warmup"] + job["repeats"]):
        for arr, buf in zip(hosts, bufs):
            if arr.shape != ():
                cl.enqueue_copy(queue, buf, arr)
        events = []
        for kern, ln in kernels:
            kern.set_args(*bufs)
            local = tuple(ln["local_size"]) if ln["local_size"] is not None else None
            events.append(cl.enqueue_nd_range_kernel(queue, kern, tuple(ln["global_size"]), local))
        queue.finish()
        if call == 0:
            for k, (spec, buf, arr) in enumerate(zip(job["args"], bufs, hosts)):
                if spec["is_output"] and arr.shape != ():
                    out = np.empty_like(arr)
                    cl.enqueue_copy(queue, out, buf)
                    np.save(job_dir / f"out_{k}.npy", out)
        if call >= job["warmup"]:
            times.append(sum((e.profile.end - e.profile.start) for e in events) * 1e-9)
    return {"times": times}


def main(platform: int, device: int) -> int:
    # A crashing kernel must end this process at once: writing a core of a process holding
    # device buffers (and piping it to a crash handler) takes minutes, all counted as a timeout.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    import pyopencl as cl

    dev = cl.get_platforms()[platform].get_devices()[device]
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, dev, properties=cl.command_queue_properties.PROFILING_ENABLE)
    programs: dict[str, Any] = {}
    shared: dict[str, np.ndarray] = {}
    proto.write("ready\n")
    for line in sys.stdin:
        job_dir = Path(line.strip())
        start = time.perf_counter()
        try:
            result = run_job(cl, ctx, dev, queue, job_dir, programs, shared)
        except (cl.Error, AttributeError, KeyError, ValueError, OSError) as exc:
            result = {"error": f"{type(exc).__name__}: {exc}"[-4000:]}
        result["worker_seconds"] = time.perf_counter() - start
        (job_dir / "result.json").write_text(json.dumps(result))
        proto.write("done\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2])))
