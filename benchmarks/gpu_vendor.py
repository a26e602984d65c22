"""Vendor-library references of the GPU benchmarks: workload + sizes -> :class:`VendorResult`.

sgemm: cuBLAS through CuPy (``cupy.matmul``; CuPy uses TF32 only with ``CUPY_TF32=1``, which is
cleared here) and through PyTorch (``torch.matmul`` with ``allow_tf32 = False``). MCC: cuDNN
through ``torch.nn.functional.conv2d`` (fp32, ``cudnn.allow_tf32 = False``, ``cudnn.benchmark``
so that cuDNN picks its fastest algorithm), once NCHW and once NHWC (``channels_last``), with the
workload's stride (``STR``). Each candidate is warmed up, then timed two ways: *kernel only*, the
device time of the kernels it launches (CUPTI through ``torch.profiler``: the ``kernel`` events of
``ITERS`` calls summed, divided by ``ITERS``; memsets and copies are not kernels), and *per call*,
CUDA events around each Python call (median; for kernels of a few microseconds this is Python's
launch gap more than the kernel). The result is the candidate with the least kernel-only time. The inputs are the kernel programs' own (the LCG of ``bench_common.h``,
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
    kernel_ms: float | None = None     # CUPTI kernel-only time per call (events' when the profiler fails)
    event_ms: float | None = None      # CUDA events around each call, median
    checksum: float | None = None
    magnitude: float | None = None
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
    """``in`` (N, IH, IW, C) and ``w`` (K, R, S, C) as ``benchmarks/kernels/mcc.c`` (stride 1) and
    ``mcc_strided.c`` fill them: IH, IW default to (P-1)*STR+R, (Q-1)*STR+S."""
    st = s.get("STR", 1)
    shape_in = (s["N"], s.get("IH", (s["P"] - 1) * st + s["R"]), s.get("IW", (s["Q"] - 1) * st + s["S"]), s["C"])
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


def _kernel_only_ms(fn: Callable[[], object]) -> float:
    """Device time of the CUDA kernels ``ITERS`` calls of ``fn`` launch, per call (CUPTI via
    ``torch.profiler``; a kernel of CuPy's runs in the same process and context, so it is seen too)."""
    import json
    import tempfile

    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(ITERS):
            fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(trace)
        with open(trace) as f:
            events = json.load(f).get("traceEvents", [])
    kernels = [e for e in events if e.get("cat") == "kernel" and "dur" in e]
    if not kernels:
        raise RuntimeError("the profiler saw no kernel")
    return sum(float(e["dur"]) for e in kernels) / 1e3 / ITERS


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


Timing = tuple[float, float, float, float]   # kernel-only ms, per-call event ms, checksum, magnitude


def _sgemm_cupy(s: Mapping[str, int]) -> Timing:
    os.environ.pop("CUPY_TF32", None)
    import cupy
    a, b = (cupy.asarray(m) for m in sgemm_inputs(s))
    out = cupy.matmul(a, b).astype(cupy.float64)
    checksum, magnitude = float(out.sum()), float(cupy.abs(out).sum())
    def call() -> object:
        return cupy.matmul(a, b)
    return _kernel_only_ms(call), _median_ms(call, lambda: cupy.cuda.Event()), checksum, magnitude


def _sgemm_torch(s: Mapping[str, int]) -> Timing:
    torch = _torch()
    a, b = (torch.from_numpy(m).cuda() for m in sgemm_inputs(s))
    out = torch.matmul(a, b).double()
    checksum, magnitude = float(out.sum()), float(out.abs().sum())
    def call() -> object:
        return torch.matmul(a, b)
    return (_kernel_only_ms(call), _median_ms(call, lambda: torch.cuda.Event(enable_timing=True)),
            checksum, magnitude)


def _mcc_torch(s: Mapping[str, int], channels_last: bool) -> Timing:
    torch = _torch()
    x_nhwc, w_krsc = mcc_inputs(s)
    x = torch.from_numpy(x_nhwc).cuda().permute(0, 3, 1, 2)   # N C H W (a view)
    w = torch.from_numpy(w_krsc).cuda().permute(0, 3, 1, 2)   # K C R S
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    x, w = x.contiguous(memory_format=fmt), w.contiguous(memory_format=fmt)
    conv = torch.nn.functional.conv2d
    stride = s.get("STR", 1)
    with torch.no_grad():
        out = conv(x, w, stride=stride).double()
        checksum, magnitude = float(out.sum()), float(out.abs().sum())
        def call() -> object:
            return conv(x, w, stride=stride)
        kernel = _kernel_only_ms(call)
        ms = _median_ms(call, lambda: torch.cuda.Event(enable_timing=True))
    return kernel, ms, checksum, magnitude


CANDIDATES: dict[str, tuple[tuple[str, Callable[[Mapping[str, int]], Timing]], ...]] = {
    "sgemm": (("cuBLAS (cupy.matmul)", _sgemm_cupy), ("cuBLAS (torch.matmul)", _sgemm_torch)),
    "mcc": (("cuDNN (torch conv2d NCHW)", lambda s: _mcc_torch(s, channels_last=False)),
            ("cuDNN (torch conv2d NHWC)", lambda s: _mcc_torch(s, channels_last=True))),
}


def measure_vendor(kind: str, sizes: Mapping[str, int]) -> VendorResult:
    """Time every candidate of ``kind`` (``sgemm`` or ``mcc``) at ``sizes``; keep the fastest kernel-only."""
    result = VendorResult()
    for name, fn in CANDIDATES[kind]:
        try:
            ms, event_ms, checksum, magnitude = fn(sizes)
        except ImportError as exc:
            result.candidates[name] = {"status": "skipped", "detail": f"not installed: {exc.name or exc}"}
            continue
        except Exception as exc:   # a failed reference is a table cell, not a crash
            result.candidates[name] = {"status": "failed", "detail": f"{type(exc).__name__}: {str(exc)[:300]}"}
            continue
        result.candidates[name] = {"status": "ok", "kernel_ms": ms, "event_ms": event_ms, "checksum": checksum}
        if result.kernel_ms is None or ms < result.kernel_ms:
            result.name, result.status, result.kernel_ms, result.event_ms = name, "ok", ms, event_ms
            result.checksum, result.magnitude = checksum, magnitude
    if result.status != "ok":
        failed = [f"{n}: {c['detail']}" for n, c in result.candidates.items()]
        result.status = "failed" if any(c["status"] == "failed" for c in result.candidates.values()) else "skipped"
        result.detail = "; ".join(failed)
    return result
