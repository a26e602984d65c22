"""The driver's tuning hook: ``choose(target, nest, mdh, options, sink) -> (params, caps, TuningResult|None)``.

Without ``options.tune`` (or when tuning cannot run) the parameters are the target's default for
the limits it plans with (``mdpoly.device_limits.planning_limits``: ``--device-limits``, else the
device found at generation time, else the generic limits), said in a ``device-limits`` remark. Otherwise the nest is tuned at its sizes (static ones from the MDH, symbolic ones from
``--size``); a nest with an unknown size, an element type the runtime cannot allocate, or whose
reference does not run gets the defaults and a remark saying why it was not tuned. Each tuned
nest gets a remark with the chosen parameters, the times and where they came from (search or
cache).

Progress: on a terminal, ``tune_nest``'s live bar; on any other stderr (make, CI logs) one line
when a nest's tuning starts and one when it ends (tuned, default kept, not tuned; the time it
took), ``mdpoly: tuning in.c:5:3 (up to 60 s)`` / ``mdpoly: in.c:5:3: tuned in 12.3 s, 1.52x over
the default``; ``-q`` silences both.

A target with a ``tuner`` (work-group targets) is tuned on a real device, chosen as the
generated host code chooses it (``Target.device``: OpenCL ``MDPOLY_OPENCL_DEVICE``, else the first
GPU, else the first device; CUDA ``MDPOLY_CUDA_DEVICE``, else device 0), with that device's
limits, which the returned caps then are; without one (no pyopencl / cuda-python, no platform,
no driver) the nest gets the defaults and the remark "not tuned: no OpenCL device available to
tune on". The device is opened once per process. Other targets are tuned on the host CPU by
``mdpoly.tuning.tune``'s own runner.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from mdpoly.device_limits import planning_limits
from mdpoly.diagnostics import Diagnostic, DiagnosticSink, Severity
from mdpoly.ir.fields import view_member
from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.nest import NestAnalysis
from mdpoly.ir.target import TargetCaps
from mdpoly.options import Options
from mdpoly.targets import Target
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
                        scale_to_default=not options.tune_seconds_explicit and options.tune_evals is None,
                        workers=options.tune_workers)


def _remark(sink: DiagnosticSink | None, nest: NestAnalysis, code: str, message: str) -> None:
    if sink is not None:
        sink.emit(Diagnostic(Severity.REMARK, code, nest.loc, message))


#: the sinks that were told which device limits untuned GPU code is planned with (once per run)
_LIMITS_SAID: weakref.WeakKeyDictionary[DiagnosticSink, set[str]] = weakref.WeakKeyDictionary()


def _remark_once(sink: DiagnosticSink | None, nest: NestAnalysis, code: str, message: str) -> None:
    """``_remark``, but a message said once to ``sink`` (at its first nest) is not repeated."""
    if sink is None:
        return
    said = _LIMITS_SAID.setdefault(sink, set())
    if message not in said:
        said.add(message)
        _remark(sink, nest, code, message)


def _ms(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds * 1e3:.3f} ms"


def _rejections(result: TuningResult) -> str:
    """``; rejected: launch 3, wrong 1`` (``launch``: configurations the device cannot launch), or ""."""
    if not result.rejected:
        return ""
    return "; rejected: " + ", ".join(f"{kind} {n}" for kind, n in result.rejected)


def progress_stream(options: Options, sink: DiagnosticSink | None) -> TextIO | None:
    """Where the per-nest start and end lines go: the sink's stream unless it is a terminal
    (where the live bar shows) or ``-q`` is given; else ``None``."""
    if sink is None or options.quiet:
        return None
    isatty = getattr(sink.stream, "isatty", None)
    return None if isatty is not None and isatty() else sink.stream


def _line(stream: TextIO | None, text: str) -> None:
    if stream is not None:
        print(f"mdpoly: {text}", file=stream, flush=True)


def _budget(options: Options) -> str:
    parts = []
    if options.tune_seconds is not None:
        parts.append(f"up to {options.tune_seconds:g} s")
    if options.tune_evals is not None:
        parts.append(f"at most {options.tune_evals} evaluations")
    return f" ({', '.join(parts)})" if parts else ""


def _ending(result: TuningResult, default: Any) -> str:
    """How a nest's tuning ended, for its progress line."""
    if result.tuned_seconds == float("inf"):
        return "not tuned: no candidate ran correctly"
    if result.unconfirmed:
        return "default kept: the search's best was unconfirmed"
    if result.from_cache:
        return "tuned, from the tuning cache"
    if result.params == default or not result.default_seconds or not result.tuned_seconds:
        return "default kept: it was the fastest"
    return f"tuned, {result.default_seconds / result.tuned_seconds:.2f}x over the default"


#: One opened device tuner per (target name, device), or why there is none, for the life of the process.
_TUNERS: dict[tuple[str, str | None], Any] = {}


def device_tuner(target: Target[Any, Any], options: Options) -> Any:
    """``target``'s tuning target on the device the host code would use, or the reason (a ``str``)
    why there is none; opened once. ``None`` for a target tuned on the host by ``tune_nest``."""
    if target.tuner is None:
        return None
    key = (target.name, target.device(options))
    if key not in _TUNERS:
        try:
            _TUNERS[key] = target.tuner(options)
        except Exception as exc:  # noqa: BLE001 - no device (or a broken driver) means: not tuned, said
            _TUNERS[key] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    return _TUNERS[key]


def choose(target: Target[Any, Any], nest: NestAnalysis, mdh: MdhExpr, options: Options,
           sink: DiagnosticSink | None) -> tuple[Any, TargetCaps, TuningResult | None]:
    """The parameters to lower ``mdh`` with for ``target``, the caps they were chosen for (the
    tuning device's, or the target's when not tuned on a device), and the tuning result when
    tuning chose them."""
    limits = planning_limits(target, options)
    caps = limits.caps
    default = target.default_params(mdh, caps, options.strict_fp)

    def untuned() -> tuple[Any, TargetCaps, None]:
        if target.limits is not None:
            _remark_once(sink, nest, "device-limits", f"untuned parameters planned with {limits.text()}")
        return default, caps, None

    if not options.tune:
        return untuned()
    if any(view_member(b.name) for b in mdh.buffers):  # the tuner's buffers are arrays of the element type
        _remark(sink, nest, "not-tuned", "not tuned: it accesses array-of-structs fields")
        return untuned()
    sizes = known_sizes(mdh, dict(options.sizes))
    missing = missing_sizes(mdh, sizes)
    if missing:
        n = missing[0]
        _remark(sink, nest, "not-tuned", f"not tuned: size of '{n}' unknown (use --size {n}=VALUE)")
        return untuned()
    tuner = device_tuner(target, options)
    if isinstance(tuner, str):
        _remark(sink, nest, "not-tuned", f"not tuned: no {target.word} device available to tune on ({tuner})")
        return untuned()
    lines = progress_stream(options, sink)
    _line(lines, f"tuning {nest.loc}{_budget(options)}")
    start = time.perf_counter()
    try:
        settings = replace(settings_from(options), device=target.device(options))
        result = tune_nest(mdh, nest.reference_c, sizes, target.backend(caps), settings, target=tuner)
    except Exception as exc:  # noqa: BLE001 - tuning is an optimisation: any failure keeps the defaults, said
        _line(lines, f"{nest.loc}: not tuned ({type(exc).__name__}) after {time.perf_counter() - start:.1f} s")
        _remark(sink, nest, "not-tuned", f"not tuned: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
        return untuned()
    _line(lines, f"{nest.loc}: {_ending(result, default)} ({time.perf_counter() - start:.1f} s)")
    if result.tuned_seconds == float("inf"):
        _remark(sink, nest, "not-tuned", f"not tuned: no candidate ran correctly ({result.evaluations} tried"
                f"{_rejections(result)}){'; ' + result.reference if result.reference else ''}")
        return untuned()
    speed = (f", {result.default_seconds / result.tuned_seconds:.2f}x over the default"
             if result.default_seconds and result.tuned_seconds and not result.unconfirmed else "")
    origin = "from the tuning cache" if result.from_cache else (
        f"{result.evaluations} evaluations in {result.tuning_seconds:.1f} s, {result.technique}")
    where = f" on {tuner.identity().get('device', '')}" if tuner is not None else ""
    if result.workers:
        from mdpoly.tuning.distributed import workers_summary
        origin += f"; candidates measured on {workers_summary(dict(result.workers))}"
    origin += _rejections(result)
    times = (f"default kept ({_ms(result.default_seconds)}), unconfirmed: {result.unconfirmed}"
             if result.unconfirmed else
             f"{_ms(result.tuned_seconds)} vs default {_ms(result.default_seconds)}{speed}")
    _remark(sink, nest, "tuned", f"tuned{where} ({origin}): {times}; {result.description}"
            f"{'; ' + result.reference if result.reference else ''}")
    return result.params, (tuner.caps if tuner is not None else caps), result
