"""The driver's tuning hooks: ``choose_params(nest, mdh, backend, options, sink) -> (TuningParams, TuningResult|None)``
for OpenMP, ``choose_gpu_params(...) -> (GpuParams, TargetCaps, TuningResult|None)`` for OpenCL and CUDA.

Without ``options.tune`` (or when tuning cannot run) this is ``default_params``. Otherwise the
nest is tuned at its sizes (static ones from the MDH, symbolic ones from ``--size``); a nest with
an unknown size, an element type the runtime cannot allocate, or whose reference does not run
gets the defaults and a remark saying why it was not tuned. Each tuned nest gets a remark with
the chosen parameters, the times and where they came from (search or cache).

Work-group targets are tuned on a real device, chosen as the generated host code chooses it
(OpenCL: ``MDPOLY_OPENCL_DEVICE``, else the first GPU, else the first device; CUDA:
``MDPOLY_CUDA_DEVICE``, else device 0), with that device's limits; without one (no pyopencl /
cuda-python, no platform, no driver) the nest gets the defaults and the remark "not tuned: no
OpenCL device available to tune on". The device is opened once per process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mdpoly.backends.base import Backend
from mdpoly.diagnostics import Diagnostic, DiagnosticSink, Severity
from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.nest import NestAnalysis
from mdpoly.ir.target import TargetCaps
from mdpoly.lower import default_params
from mdpoly.lower.params import TuningParams
from mdpoly.options import Options
from mdpoly.tuning.tune import (
    TuneSettings,
    TuningResult,
    known_sizes,
    missing_sizes,
    tune_nest,
)


def settings_from(options: Options) -> TuneSettings:
    return TuneSettings(technique=options.tune_technique, seconds=options.tune_seconds,
                        evaluations=options.tune_evals, retune=options.retune,
                        cache_dir=Path(options.cache_dir) if options.cache_dir else None,
                        progress=not options.quiet, strict_fp=options.strict_fp,
                        scale_to_default=not options.tune_seconds_explicit and options.tune_evals is None)


def _remark(sink: DiagnosticSink | None, nest: NestAnalysis, code: str, message: str) -> None:
    if sink is not None:
        sink.emit(Diagnostic(Severity.REMARK, code, nest.loc, message))


def _ms(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds * 1e3:.3f} ms"


def choose_params(nest: NestAnalysis, mdh: MdhExpr, backend: Backend, options: Options,
                  sink: DiagnosticSink | None) -> tuple[TuningParams, TuningResult | None]:
    """The parameters to lower ``mdh`` with, and the tuning result when tuning chose them."""
    default = default_params(mdh, backend.caps, options.strict_fp)
    if not options.tune:
        return default, None
    sizes = known_sizes(mdh, dict(options.sizes))
    missing = missing_sizes(mdh, sizes)
    if missing:
        n = missing[0]
        _remark(sink, nest, "not-tuned", f"not tuned: size of '{n}' unknown (use --size {n}=VALUE)")
        return default, None
    try:
        result = tune_nest(mdh, nest.reference_c, sizes, backend, settings_from(options))
    except Exception as exc:  # noqa: BLE001 - tuning is an optimisation: any failure keeps the defaults, said
        _remark(sink, nest, "not-tuned", f"not tuned: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
        return default, None
    if result.tuned_seconds == float("inf"):
        _remark(sink, nest, "not-tuned", f"not tuned: no candidate ran correctly ({result.evaluations} tried)")
        return default, None
    speed = (f", {result.default_seconds / result.tuned_seconds:.2f}x over the default"
             if result.default_seconds and result.tuned_seconds else "")
    origin = "from the tuning cache" if result.from_cache else (
        f"{result.evaluations} evaluations in {result.tuning_seconds:.1f} s, {result.technique}")
    _remark(sink, nest, "tuned", f"tuned ({origin}): {_ms(result.tuned_seconds)} vs default "
            f"{_ms(result.default_seconds)}{speed}; {result.description}")
    return result.params, result


# {{{ work-group targets (OpenCL, CUDA)

#: One opened device per (target name, device), or why there is none, for the life of the process.
_GPU_TARGETS: dict[tuple[str, str | None], Any] = {}
_DEVICE_WORDS = {"opencl": "OpenCL", "cuda": "CUDA"}


def gpu_tuning_target(name: str, options: Options) -> Any:
    """The ``GpuTarget`` for ``name`` on the device the host code would use (``options``'s
    ``opencl_device``/``cuda_device``), or the reason (a ``str``) why there is none; opened once."""
    device = options.opencl_device if name == "opencl" else options.cuda_device if name == "cuda" else None
    key = (name, device)
    if key not in _GPU_TARGETS:
        from mdpoly.tuning.gpu import cuda_target, opencl_target
        try:
            if name == "opencl":
                _GPU_TARGETS[key] = opencl_target(device or None)
            elif name == "cuda":
                _GPU_TARGETS[key] = cuda_target(device or None)
            else:
                _GPU_TARGETS[key] = f"no tuner for target '{name}'"
        except Exception as exc:  # noqa: BLE001 - no device (or a broken driver) means: not tuned, said
            _GPU_TARGETS[key] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    return _GPU_TARGETS[key]


def choose_gpu_params(nest: NestAnalysis, mdh: MdhExpr, backend: Backend, options: Options,
                      sink: DiagnosticSink | None) -> tuple[Any, TargetCaps, TuningResult | None]:
    """The ``GpuParams`` to lower ``mdh`` with, the caps they were chosen for (the tuning device's,
    or the backend's when not tuned), and the tuning result when tuning chose them."""
    from mdpoly.lower.gpu_params import default_gpu_params

    default = default_gpu_params(mdh, backend.caps)
    if not options.tune:
        return default, backend.caps, None
    sizes = known_sizes(mdh, dict(options.sizes))
    missing = missing_sizes(mdh, sizes)
    if missing:
        n = missing[0]
        _remark(sink, nest, "not-tuned", f"not tuned: size of '{n}' unknown (use --size {n}=VALUE)")
        return default, backend.caps, None
    target = gpu_tuning_target(backend.name, options)
    if isinstance(target, str):
        word = _DEVICE_WORDS.get(backend.name, backend.name)
        _remark(sink, nest, "not-tuned", f"not tuned: no {word} device available to tune on ({target})")
        return default, backend.caps, None
    try:
        result = tune_nest(mdh, nest.reference_c, sizes, backend, settings_from(options), target=target)
    except Exception as exc:  # noqa: BLE001 - tuning is an optimisation: any failure keeps the defaults, said
        _remark(sink, nest, "not-tuned", f"not tuned: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
        return default, backend.caps, None
    if result.tuned_seconds == float("inf"):
        _remark(sink, nest, "not-tuned", f"not tuned: no candidate ran correctly ({result.evaluations} tried)")
        return default, backend.caps, None
    speed = (f", {result.default_seconds / result.tuned_seconds:.2f}x over the default"
             if result.default_seconds and result.tuned_seconds else "")
    origin = "from the tuning cache" if result.from_cache else (
        f"{result.evaluations} evaluations in {result.tuning_seconds:.1f} s, {result.technique}")
    device = target.identity().get("device", "")
    _remark(sink, nest, "tuned", f"tuned on {device} ({origin}): {_ms(result.tuned_seconds)} vs default "
            f"{_ms(result.default_seconds)}{speed}; {result.description}")
    return result.params, target.caps, result

# }}}
