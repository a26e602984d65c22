"""Vendor-library references of the GPU benchmarks: workload + sizes -> :class:`VendorResult`.

sgemm: cuBLAS through CuPy (``cupy.matmul``; CuPy uses TF32 only with ``CUPY_TF32=1``, which is
cleared here) and through PyTorch (``torch.matmul`` with ``allow_tf32 = False``). MCC: cuDNN
through ``torch.nn.functional.conv2d`` (fp32, ``cudnn.allow_tf32 = False``, ``cudnn.benchmark``
so that cuDNN picks its fastest algorithm), once NCHW and once NHWC (``channels_last``). Each
candidate is warmed up, then timed call by call with CUDA events; the result is the fastest
candidate's median. The inputs are the kernel programs' own (the LCG of ``bench_common.h``,
reproduced in numpy), so the sum of the outputs is compared with the sequential C checksum.

Needs numpy plus CuPy and/or PyTorch; a missing library is a ``skipped`` candidate, never an
error. Nothing here imports mdpoly: the file is copied into the prepared folder.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

WARMUP = 10
ITERS = 50
LCG_A, LCG_C, LCG_SEED = 1103515245, 12345, 12345


@dataclass
class VendorResult:
    """The fastest candidate (``name``, median ``kernel_ms``) and every candidate's outcome."""

    name: str = ""
    status: str = "skipped"
    kernel_ms: float | None = None
    checksum: float | None = None
    detail: str = ""
    candidates: dict[str, dict[str, object]] = field(default_factory=dict)


def lcg_floats(count: int, state: int) -> tuple[np.ndarray, int]:
    """The next ``count`` values of ``bench_next()`` from ``state``, and the state after them.

    ``s' = a s + c (mod 2^32)``, so ``s_n = a^n s_0 + c (a^(n-1) + ... + 1)``: powers and their
    prefix sums wrap modulo 2^64 in uint64, which keeps them right modulo 2^32.
    """
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.full(count, LCG_A, dtype=np.uint64))                 # a^1 .. a^n
        geometric = np.cumsum(np.concatenate(([np.uint64(1)], powers[:-1])))       # sum_{i<n} a^i
        states = (powers * np.uint64(state) + geometric * np.uint64(LCG_C)) & np.uint64(0xFFFFFFFF)
    values = ((states >> np.uint64(8)) & np.uint64(0xFFFF)).astype(np.float32) / np.float32(32768.0) - np.float32(1.0)
    return values, int(states[-1])


def sgemm_inputs(s: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """``A`` (M x K) and ``B`` (K x N) as ``benchmarks/kernels/sgemm.c`` fills them."""
    a, state = lcg_floats(s["M"] * s["K"], LCG_SEED)
    b, _ = lcg_floats(s["K"] * s["N"], state)
    return a.reshape(s["M"], s["K"]), b.reshape(s["K"], s["N"])


def mcc_inputs(s: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """``in`` (N, P+R-1, Q+S-1, C) and ``w`` (K, R, S, C) as ``benchmarks/kernels/mcc.c`` fills them."""
    shape_in = (s["N"], s["P"] + s["R"] - 1, s["Q"] + s["S"] - 1, s["C"])
    shape_w = (s["K"], s["R"], s["S"], s["C"])
    x, state = lcg_floats(int(np.prod(shape_in)), LCG_SEED)
    w, _ = lcg_floats(int(np.prod(shape_w)), state)
    return x.reshape(shape_in), w.reshape(shape_w)


def _median_ms(fn: Callable[[], object], event: Callable[[], object]) -> float:
    """Median of ``ITERS`` single calls timed by CUDA events (``event()`` makes one), after a warm-up."""
    for _ in range(WARMUP):
        fn()
    times = []
    for _ in range(ITERS):
        start, end = event(), event()
        start.record()   # type: ignore[attr-defined]
        fn()
        end.record()     # type: ignore[attr-defined]
        end.synchronize()   # type: ignore[attr-defined]
        times.append(_elapsed(start, end))
    return statistics.median(times)


def _elapsed(start: object, end: object) -> float:
    if hasattr(start, "elapsed_time"):            # torch.cuda.Event
        return float(start.elapsed_time(end))     # type: ignore[attr-defined]
    import cupy  # cupy.cuda.Event
    return float(cupy.cuda.get_elapsed_time(start, end))


def _torch():   # type: ignore[no-untyped-def]
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    return torch


def _sgemm_cupy(s: Mapping[str, int]) -> tuple[float, float]:
    os.environ.pop("CUPY_TF32", None)
    import cupy
    a, b = (cupy.asarray(m) for m in sgemm_inputs(s))
    out = cupy.matmul(a, b)
    checksum = float(out.astype(cupy.float64).sum())
    return _median_ms(lambda: cupy.matmul(a, b), lambda: cupy.cuda.Event()), checksum


def _sgemm_torch(s: Mapping[str, int]) -> tuple[float, float]:
    torch = _torch()
    a, b = (torch.from_numpy(m).cuda() for m in sgemm_inputs(s))
    checksum = float(torch.matmul(a, b).double().sum())
    return _median_ms(lambda: torch.matmul(a, b), lambda: torch.cuda.Event(enable_timing=True)), checksum


def _mcc_torch(s: Mapping[str, int], channels_last: bool) -> tuple[float, float]:
    torch = _torch()
    x_nhwc, w_krsc = mcc_inputs(s)
    x = torch.from_numpy(x_nhwc).cuda().permute(0, 3, 1, 2)   # N C H W (a view)
    w = torch.from_numpy(w_krsc).cuda().permute(0, 3, 1, 2)   # K C R S
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    x, w = x.contiguous(memory_format=fmt), w.contiguous(memory_format=fmt)
    conv = torch.nn.functional.conv2d
    with torch.no_grad():
        checksum = float(conv(x, w).double().sum())
        ms = _median_ms(lambda: conv(x, w), lambda: torch.cuda.Event(enable_timing=True))
    return ms, checksum


CANDIDATES: dict[str, tuple[tuple[str, Callable[[Mapping[str, int]], tuple[float, float]]], ...]] = {
    "sgemm": (("cuBLAS (cupy.matmul)", _sgemm_cupy), ("cuBLAS (torch.matmul)", _sgemm_torch)),
    "mcc": (("cuDNN (torch conv2d NCHW)", lambda s: _mcc_torch(s, channels_last=False)),
            ("cuDNN (torch conv2d NHWC)", lambda s: _mcc_torch(s, channels_last=True))),
}


def measure_vendor(kind: str, sizes: Mapping[str, int]) -> VendorResult:
    """Time every candidate of ``kind`` (``sgemm`` or ``mcc``) at ``sizes``; keep the fastest."""
    result = VendorResult()
    for name, fn in CANDIDATES[kind]:
        try:
            ms, checksum = fn(sizes)
        except ImportError as exc:
            result.candidates[name] = {"status": "skipped", "detail": f"not installed: {exc.name or exc}"}
            continue
        except Exception as exc:   # a failed reference is a table cell, not a crash
            result.candidates[name] = {"status": "failed", "detail": f"{type(exc).__name__}: {str(exc)[:300]}"}
            continue
        result.candidates[name] = {"status": "ok", "kernel_ms": ms, "checksum": checksum}
        if result.kernel_ms is None or ms < result.kernel_ms:
            result.name, result.status, result.kernel_ms, result.checksum = name, "ok", ms, checksum
    if result.status != "ok":
        failed = [f"{n}: {c['detail']}" for n, c in result.candidates.items()]
        result.status = "failed" if any(c["status"] == "failed" for c in result.candidates.values()) else "skipped"
        result.detail = "; ".join(failed)
    return result
