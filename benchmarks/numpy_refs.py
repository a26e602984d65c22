"""numpy references for the benchmark workloads: sizes -> median seconds of the same computation.

numpy calls the vendor BLAS (``A @ B``, ``M @ v``, ``x @ y``) where one exists; the others are
written with slicing or ``einsum(optimize=True)``. Inputs are random (not the C programs' LCG),
so these rows are timed but not checksum-compared.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping

import numpy as np

Sizes = Mapping[str, int]


def _median_time(fn: Callable[[], object], reps: int) -> float:
    fn()   # warm-up, as the C programs do
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _uniform(rng: np.random.Generator, shape: tuple[int, ...], dtype: type = np.float32) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def sgemm(s: Sizes, reps: int) -> float:
    rng = np.random.default_rng(0)
    a, b = _uniform(rng, (s["M"], s["K"])), _uniform(rng, (s["K"], s["N"]))
    return _median_time(lambda: a @ b, reps)


def matvec(s: Sizes, reps: int) -> float:
    rng = np.random.default_rng(0)
    m, v = _uniform(rng, (s["I"], s["K"])), _uniform(rng, (s["K"],))
    return _median_time(lambda: m @ v, reps)


def dot(s: Sizes, reps: int) -> float:
    rng = np.random.default_rng(0)
    x, y = _uniform(rng, (s["N"],), np.float64), _uniform(rng, (s["N"],), np.float64)
    return _median_time(lambda: x @ y, reps)


def jacobi2d(s: Sizes, reps: int) -> float:
    rng = np.random.default_rng(0)
    a = _uniform(rng, (s["N"], s["M"]))
    b = np.zeros_like(a)
    fifth = np.float32(0.2)

    def step() -> None:
        b[1:-1, 1:-1] = fifth * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    return _median_time(step, reps)


def mcc(s: Sizes, reps: int) -> float:
    rng = np.random.default_rng(0)
    inp = _uniform(rng, (s["N"], s["P"] + s["R"] - 1, s["Q"] + s["S"] - 1, s["C"]))
    w = _uniform(rng, (s["K"], s["R"], s["S"], s["C"]))
    windows = np.lib.stride_tricks.sliding_window_view(inp, (s["R"], s["S"]), axis=(1, 2))  # n p q c r s
    return _median_time(lambda: np.einsum("npqcrs,krsc->npqk", windows, w, optimize=True), reps)


REFERENCES: dict[str, Callable[[Sizes, int], float]] = {
    "sgemm": sgemm, "matvec": matvec, "dot": dot, "jacobi2d": jacobi2d, "mcc": mcc,
}
