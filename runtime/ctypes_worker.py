"""Worker process for ``mdpoly.runtime.openmp``: load a shared library, call its entry, time it.

Run as ``python -m mdpoly.runtime.ctypes_worker JOB_DIR``. ``JOB_DIR/job.json`` names the library,
the entry symbol, the argument layout (each argument's ``.npy`` file) and the repetition counts.
The worker writes ``out_<k>.npy`` for outputs (after the first call, on fresh inputs), the file
``warm`` once the warm-up calls are done, and ``times.json`` (each timed call's wall seconds). When ``job.json`` names a
``timing`` symbol (``void timing(double *out)``, GPU host code: ``mdpoly.backends.entry.timing_function``),
the worker calls it after every timed call and writes ``timing.json``: the calls' kernel, transfer
and whole-call seconds as that host code's own profiling measured them. When it names a ``hold``
symbol (``void hold(void **args)``, GPU host code: the arguments kept on the device), the worker
calls it once after the first call, on the buffers of the warm-up and timed calls, so those calls
copy nothing. A crash or hang ends this process only.
"""

from __future__ import annotations

import ctypes
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np


def _call(entry: Callable[[ctypes.Array[ctypes.c_void_p]], None], buffers: list[np.ndarray]) -> float:
    ptrs = (ctypes.c_void_p * len(buffers))(*[b.ctypes.data for b in buffers])
    start = time.perf_counter()
    entry(ptrs)
    return time.perf_counter() - start


def main(job_dir: str) -> int:
    job_path = Path(job_dir)
    job = json.loads((job_path / "job.json").read_text())
    lib = ctypes.CDLL(job["library"])
    entry = getattr(lib, job["entry"])
    entry.restype = None
    entry.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    originals = [np.load(arg["file"]) for arg in job["args"]]
    timing = None
    if job.get("timing"):
        timing = getattr(lib, job["timing"])
        timing.restype = None
        timing.argtypes = [ctypes.POINTER(ctypes.c_double)]
    profile = (ctypes.c_double * 3)()
    measured: dict[str, list[float]] = {"kernel": [], "transfer": [], "call": []}

    fresh = [np.ascontiguousarray(a.copy()) for a in originals]
    _call(entry, fresh)
    for k, spec in enumerate(job["args"]):
        if spec["is_output"]:
            np.save(job_path / f"out_{k}.npy", fresh[k])

    scratch = [np.ascontiguousarray(a.copy()) for a in originals]
    if job.get("hold"):
        hold = getattr(lib, job["hold"])
        hold.restype = None
        hold.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        _call(hold, scratch)
    for _ in range(job["warmup"]):
        _call(entry, scratch)
    (job_path / "warm").touch()   # the parent's limit for the timed calls starts now
    times = []
    for _ in range(job["repeats"]):
        for dst, src in zip(scratch, originals):
            if dst.size < 1 << 22:
                np.copyto(dst, src)
        times.append(_call(entry, scratch))
        if timing is not None:
            timing(profile)
            for k, key in enumerate(("kernel", "transfer", "call")):
                measured[key].append(profile[k] * 1e-3)
    (job_path / "times.json").write_text(json.dumps(times))
    if timing is not None:
        (job_path / "timing.json").write_text(json.dumps(measured))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
