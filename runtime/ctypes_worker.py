"""Worker process for ``mdpoly.runtime.openmp``: load a shared library, call its entry, time it.

Run as ``python -m runtime.ctypes_worker JOB_DIR``. ``JOB_DIR/job.json`` names the library, the
entry symbol, the argument layout and the repetition counts; ``JOB_DIR/in_<k>.npy`` hold the
argument buffers. The worker writes ``out_<k>.npy`` for outputs (after the first call, on fresh
inputs) and ``times.json``. A crash or hang ends this process only.
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
    originals = [np.load(job_path / f"in_{k}.npy") for k in range(len(job["args"]))]

    fresh = [np.ascontiguousarray(a.copy()) for a in originals]
    _call(entry, fresh)
    for k, spec in enumerate(job["args"]):
        if spec["is_output"]:
            np.save(job_path / f"out_{k}.npy", fresh[k])

    scratch = [np.ascontiguousarray(a.copy()) for a in originals]
    for _ in range(job["warmup"]):
        _call(entry, scratch)
    times = []
    for _ in range(job["repeats"]):
        for dst, src in zip(scratch, originals):
            if dst.size < 1 << 22:
                np.copyto(dst, src)
        times.append(_call(entry, scratch))
    (job_path / "times.json").write_text(json.dumps(times))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
