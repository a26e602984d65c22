"""The search driver: one nest + sizes + ``TuneSettings`` -> ``TuningResult`` (from the cache or a search).

``tune_nest`` looks the nest up in the ``TuningCache`` (unless ``retune``); on a miss it measures
the heuristic default first (the baseline), then lets pyATF's technique (AUC bandit by default)
explore the target's space through ``NestEvaluator`` until the time or evaluation budget is
spent, and stores the best configuration. The target (``mdpoly.tuning.target.TuningTarget``) is
OpenMP unless one is given (``mdpoly.tuning.gpu`` for OpenCL and CUDA). Every candidate, kept or
rejected with why, is written to a JSON-lines log under ``<cache dir>/logs/``. A ``rich`` progress
bar on stderr shows evaluations, the best time and the speedup over the default.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from mdpoly import __version__
from mdpoly.backends.base import Backend
from mdpoly.ir.mdh import MdhExpr
from mdpoly.runtime.openmp import OpenMPRunner
from mdpoly.tuning.atf import TECHNIQUES, Config, InvalidConfiguration, batched_search, search
from mdpoly.tuning.cache import CacheEntry, TuningCache, cache_key
from mdpoly.tuning.evaluate import REFERENCE_TIMEOUT, BudgetSpent, NestEvaluator, Rejected, Render, TuningLog
from mdpoly.tuning.space import concrete_extents
from mdpoly.tuning.target import (
    OpenMPTarget,
    TuningTarget,
    params_from_dict,
    params_to_dict,
)

__all__ = ["TuneSettings", "TuningResult", "canonical_mdh", "key_fields", "known_sizes", "missing_sizes",
           "params_from_dict", "params_to_dict", "tune_nest"]

DEFAULT_SECONDS = 60.0
#: Bumped when the space or the cost function changes what "best" means.
SPACE_VERSION = 1


@dataclass(frozen=True, slots=True)
class TuneSettings:
    """Budget and technique of one tuning run (from ``Options``)."""

    technique: str = "auc_bandit"
    seconds: float | None = DEFAULT_SECONDS
    evaluations: int | None = None
    retune: bool = False
    cache_dir: Path | None = None
    progress: bool = True
    strict_fp: bool = False
    #: The budget was not given explicitly: scale it to what tuning can repay (``scaled_budget``).
    scale_to_default: bool = False
    #: Address of a Dask scheduler whose workers measure the candidates (``mdpoly.tuning.distributed``).
    workers: str | None = None
    #: The device selector the workers' runners use (``Target.device``; ``None``: their default).
    device: str | None = None
    #: Device targets: the share of the time budget (of ``REFERENCE_TIMEOUT`` without one) the
    #: tuner waits for the CPU original's reference before the default configuration's outputs on
    #: the device are the reference, cross-checked against the original when it finishes in time.
    reference_share: float = 0.1


#: An implicit budget is worth at most this many runs of the default configuration ...
AMORTIZE_RUNS = 2000
#: ... but never less than this many seconds.
MIN_IMPLICIT_SECONDS = 5.0


def scaled_budget(seconds: float | None, default_seconds: float | None) -> float | None:
    """The implicit time budget for a nest whose default runs ``default_seconds``.

    Tuning a kernel that runs in microseconds for a minute cannot pay for itself, so without an
    explicit ``--tune-time`` the budget is ``AMORTIZE_RUNS`` runs of the default, between
    ``MIN_IMPLICIT_SECONDS`` and the configured maximum.
    """
    if seconds is None or default_seconds is None or default_seconds == float("inf"):
        return seconds
    return min(seconds, max(MIN_IMPLICIT_SECONDS, AMORTIZE_RUNS * default_seconds))


@dataclass(frozen=True, slots=True)
class TuningResult:
    """What tuning chose for one nest; ``to_report`` is the ``--report`` JSON."""

    params: Any                     # the target's parameters (TuningParams, GpuParams)
    tuned_seconds: float
    default_seconds: float | None
    evaluations: int
    from_cache: bool
    technique: str
    tuning_seconds: float = 0.0
    log_path: str | None = None
    description: str = ""
    improvements: tuple[tuple[float, float], ...] = field(default=())
    config: dict[str, Any] | None = field(default=None, compare=False)   # the target's ``to_dict``
    #: candidates measured per Dask worker (``--tune-workers``), by worker address
    workers: tuple[tuple[str, int], ...] = field(default=())
    #: what the reference outputs were and how they were checked (``NestEvaluator.reference_note``)
    reference: str = ""
    #: rejected candidates by kind (``launch``: the device cannot launch them; ``wrong``, ``build``, ...)
    rejected: tuple[tuple[str, int], ...] = field(default=())
    #: why the search's winner was not confirmed against the default (``_confirm``), which then
    #: is the result; "" when the winner was confirmed or the default won the search
    unconfirmed: str = ""
    #: the confirmation could not measure (a failure, not a verdict): the result is not cached
    confirm_failed: bool = field(default=False, compare=False)

    def to_report(self) -> dict[str, Any]:
        config = self.config if self.config is not None else params_to_dict(self.params)
        out = {"params": self.description, "config": config,
               "tuned_seconds": self.tuned_seconds, "default_seconds": self.default_seconds,
               "evaluations": self.evaluations, "from_cache": self.from_cache, "technique": self.technique,
               "tuning_seconds": round(self.tuning_seconds, 3), "log": self.log_path}
        if self.workers:
            out["workers"] = dict(self.workers)
        if self.reference:
            out["reference"] = self.reference
        if self.rejected:
            out["rejected"] = dict(self.rejected)
        if self.unconfirmed:
            out["unconfirmed"] = self.unconfirmed
        return out


# {{{ sizes and keys


def known_sizes(mdh: MdhExpr, given: dict[str, int]) -> dict[str, int]:
    """The nest's static size parameters overlaid with ``--size`` values."""
    out = {name: v for name, v in mdh.params if v is not None}
    out.update(given)
    return out


def missing_sizes(mdh: MdhExpr, sizes: dict[str, int]) -> list[str]:
    """Size parameters the loop bounds need that have no value, in first-use order."""
    out: list[str] = []
    for d in mdh.dims:
        for name in sorted(d.lower.names() | d.extent.names()):
            if name not in sizes and name not in out:
                out.append(name)
    return out


def canonical_mdh(mdh: MdhExpr) -> str:
    """The MDH text with the generated function name normalised away, plus what ``to_dsl`` omits."""
    text = mdh.to_dsl().replace(mdh.name, "<nest>")
    lowers = ",".join(f"{d.iterator}>={d.lower.to_c()}" for d in mdh.dims)
    shapes = ";".join(f"{b.name}:{b.kind}:{b.elem_type}[{']['.join(b.shape)}]{'w' if b.written else ''}"
                      for b in mdh.buffers)
    return f"{text}\nlowers {lowers}\nbuffers {shapes}"


def key_fields(mdh: MdhExpr, sizes: dict[str, int], backend: Backend, runner: Any,
               strict_fp: bool, space_version: int = SPACE_VERSION) -> dict[str, Any]:
    """Everything that decides the best configuration; the technique and budget are not in it.

    ``runner`` is anything with ``device_identity()`` and ``compiler_identity()`` (a runner, or a
    target naming its device: for OpenCL platform, device and driver version)."""
    return {
        "mdh": canonical_mdh(mdh),
        "sizes": sorted(sizes.items()),
        "extents": list(concrete_extents(mdh, sizes)),
        "elem_types": sorted({b.elem_type for b in mdh.buffers}),
        "target": backend.name,
        "caps": asdict(backend.caps),
        "device": runner.device_identity(),
        "compiler": runner.compiler_identity(),
        "mdpoly": __version__,
        "space": space_version,
        "strict_fp": strict_fp,
    }


# }}}


#: Share of the budget that local search around the default may take before the global search.
REFINE_SHARE = 0.5


def _refine(ev: NestEvaluator, space: Any, target: TuningTarget[Any], start_params: Any,
            consider: Any, settings: TuneSettings, start: float, tick: Any, best: Any) -> None:
    """First-improvement hill climbing from ``start_params`` over ``neighbours`` (memoised), within
    ``REFINE_SHARE`` of the time and evaluation budgets; stops at a local optimum."""
    t_cap = None if settings.seconds is None else settings.seconds * REFINE_SHARE
    e_cap = None if settings.evaluations is None else max(1, int(settings.evaluations * REFINE_SHARE))
    current = start_params
    improved = True
    while improved:
        improved = False
        for q in target.neighbours(space, current):
            if t_cap is not None and time.perf_counter() - start >= t_cap:
                return
            if e_cap is not None and len(ev.history) >= e_cap:
                return
            try:
                seconds = ev.evaluate(q)
            except Rejected:
                tick()
                continue
            consider(q, seconds)
            tick()
            b = best()
            if b is not None and b[1] == q:
                current, improved = q, True
                break


class _Progress:
    """A ``rich`` bar on stderr (a no-op when disabled or stderr is not a terminal)."""

    def __init__(self, enabled: bool, name: str, settings: TuneSettings) -> None:
        self.bar: Any = None
        self.start = time.perf_counter()
        if not (enabled and sys.stderr.isatty()):
            return
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.total = float(settings.evaluations or 0) if settings.seconds is None else float(settings.seconds)
        self.by_time = settings.seconds is not None
        self.bar = Progress(TextColumn(f"tuning {name}"), BarColumn(), TimeElapsedColumn(),
                            TextColumn("{task.fields[info]}"), console=Console(stderr=True), transient=True)
        self.task = self.bar.add_task("tune", total=self.total or None, info="")
        self.bar.start()

    def update(self, evaluations: int, best: float | None, default: float | None) -> None:
        if self.bar is None:
            return
        info = f"{evaluations} evals"
        if best is not None:
            info += f", best {best * 1e3:.3f} ms"
            if default:
                info += f" ({default / best:.2f}x default)"
        done = time.perf_counter() - self.start if self.by_time else float(evaluations)
        self.bar.update(self.task, completed=min(done, self.total) if self.total else done, info=info)

    def rescale(self, settings: TuneSettings) -> None:
        """Follow a budget changed after the bar started (see ``scaled_budget``)."""
        if self.bar is None or not self.by_time or settings.seconds is None:
            return
        self.total = float(settings.seconds)
        self.bar.update(self.task, total=self.total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _log_path(cache_dir: Path, key: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return cache_dir / "logs" / f"{stamp}-{key[:12]}-{os.getpid()}.jsonl"


def tune_nest(mdh: MdhExpr, reference_c: str, sizes: dict[str, int], backend: Backend,
              settings: TuneSettings, *, runner: OpenMPRunner | None = None, cache: TuningCache | None = None,
              render: Render | None = None, target: TuningTarget[Any] | None = None) -> TuningResult:
    """Tune ``mdh`` at ``sizes`` (every loop-bound size must be known, see ``missing_sizes``).

    ``target`` is the target to tune for (default: ``OpenMPTarget`` over ``backend`` and
    ``runner``); ``runner`` (default: a fresh ``OpenMPRunner``) also builds the reference.
    ``render`` replaces the OpenMP candidate source generator (tests inject broken candidates).

    :raises Rejected: (``reference``) when neither the original nest nor the default plan runs.
    """
    if settings.technique not in TECHNIQUES:
        raise ValueError(f"unknown tuning technique '{settings.technique}'")
    with tempfile.TemporaryDirectory(prefix="mdpoly-tune-") as work:
        rt = runner or OpenMPRunner(work_dir=work)
        tg: TuningTarget[Any] = target or OpenMPTarget(backend, rt, settings.strict_fp, render)
        default = tg.default(mdh)
        ident = rt if target is None else _Identity(tg.identity())
        fields = key_fields(mdh, sizes, backend, ident, settings.strict_fp, tg.space_version)
        if target is not None:
            fields["caps"] = asdict(tg.caps)
        key = cache_key(fields)
        cache_dir = settings.cache_dir
        db = cache or (TuningCache(cache_dir) if cache_dir is not None else None)
        if db is not None and not settings.retune:
            hit = db.get(fields)
            if hit is not None:
                try:
                    params = tg.from_dict(hit.config)
                    bad = tg.violations(mdh, params)
                except (KeyError, TypeError, ValueError):
                    bad = ["unreadable cache entry"]
                if not bad:
                    return TuningResult(params, hit.tuned_seconds, hit.default_seconds, hit.evaluations, True,
                                        settings.technique, hit.tuning_seconds, None, tg.describe(mdh, params),
                                        config=tg.to_dict(params))
        log_path = _log_path(cache_dir, key) if cache_dir is not None else None
        log = TuningLog(log_path)
        try:
            with _cluster(settings.workers) as client:
                result = _search(mdh, reference_c, sizes, tg, settings, rt, log, default, client)
        finally:
            log.close()
    result = replace(result, log_path=str(log_path) if log_path else None, config=tg.to_dict(result.params))
    if db is not None and not result.confirm_failed and (target is None or result.tuned_seconds != float("inf")):
        db.put(fields, CacheEntry(tg.to_dict(result.params), result.tuned_seconds, result.default_seconds,
                                  result.evaluations, result.tuning_seconds))
    return result


class _Identity:
    """A target's ``identity()`` in the shape ``key_fields`` reads."""

    def __init__(self, ident: dict[str, str]) -> None:
        self.ident = ident

    def device_identity(self) -> str:
        return self.ident.get("device", "")

    def compiler_identity(self) -> str:
        return self.ident.get("compiler", "")


#: Paired re-measurements of the winner against the default before the winner is accepted ...
CONFIRM_ROUNDS = 3
#: ... more of them, up to this many, while either side's times spread by more than ``CONFIRM_NOISE``
#: (max / min - 1: a busy or noisy machine, where three pairs decide little) ...
CONFIRM_MAX_ROUNDS = 7
CONFIRM_NOISE = 0.15
#: ... after which the winner must be at least this much faster in the median (a single lucky
#: measurement is not a win) and faster in most of the pairs.
CONFIRM_MARGIN = 0.97


def _spread(times: list[float]) -> float:
    return max(times) / min(times) - 1.0 if times and min(times) > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Confirmation:
    """What ``_confirm`` decided: the chosen configuration and both times, and why the winner was
    not confirmed ("" when it was)."""

    seconds: float
    params: Any
    default_seconds: float
    unconfirmed: str = ""
    #: re-measuring failed (no verdict on the winner, only on this run)
    failed: bool = False


def _confirm(ev: NestEvaluator, log: TuningLog, default: Any, winner: Any, winner_seconds: float,
             default_seconds: float) -> Confirmation:
    """Re-measure winner and default alternately; keep the winner only if it stays faster.

    The chosen configuration's time and the default's come from the paired re-measurements (so
    the reported speedup compares like with like). When re-measuring fails (a candidate that
    crashes or times out this time), the default is kept with its time from the search, and the
    winner is reported unconfirmed with why: a winner is never kept unchecked.

    Timings on a loaded machine fluctuate more than many candidates differ, and the search keeps the
    minimum of noisy measurements, which favours lucky ones. Interleaving the two in
    ``CONFIRM_ROUNDS`` rounds exposes both to the same conditions; where the times still scatter
    (``CONFIRM_NOISE``) more rounds follow, up to ``CONFIRM_MAX_ROUNDS``, and the winner must win the
    median by ``CONFIRM_MARGIN`` and most of the pairs.
    """
    import statistics

    d_times: list[float] = []
    w_times: list[float] = []
    try:
        while len(d_times) < CONFIRM_ROUNDS or (
                len(d_times) < CONFIRM_MAX_ROUNDS and max(_spread(d_times), _spread(w_times)) > CONFIRM_NOISE):
            d_times.append(ev.remeasure(default))
            w_times.append(ev.remeasure(winner))
    except Rejected as exc:
        why = exc.why.strip().splitlines()[0][:300] if exc.why.strip() else exc.kind
        log.write({"event": "confirm", "status": "failed; default kept", "why": exc.why[:500],
                   "winner_search_seconds": winner_seconds})
        return Confirmation(default_seconds, default, default_seconds,
                            f"re-measuring it failed ({exc.kind}: {why})", failed=True)
    d_med, w_med = statistics.median(d_times), statistics.median(w_times)
    pairs_won = sum(w < d for w, d in zip(w_times, d_times))
    keep = w_med <= CONFIRM_MARGIN * d_med and 2 * pairs_won > len(d_times)
    log.write({"event": "confirm", "default_seconds": d_times, "winner_seconds": w_times,
               "status": "winner kept" if keep else "default kept"})
    if keep:
        return Confirmation(w_med, winner, d_med)
    return Confirmation(d_med, default, d_med,
                        f"not faster in {len(d_times)} paired re-measurements (median {w_med * 1e3:.3f} ms vs "
                        f"default {d_med * 1e3:.3f} ms, faster in {pairs_won} of {len(d_times)})")


@contextmanager
def _cluster(address: str | None) -> Iterator[Any]:
    """A Dask client of the scheduler at ``address`` for the search, closed after it (``None``
    without an address: measure here)."""
    if address is None:
        yield None
        return
    from mdpoly.tuning.distributed import connect
    client = connect(address)
    try:
        yield client
    finally:
        client.close()


def _refine_batched(ev: Any, space: Any, target: TuningTarget[Any], start_params: Any, measure: Any,
                    settings: TuneSettings, start: float, best: Any) -> None:
    """``_refine`` for an evaluator that measures batches: the whole neighbourhood of the current
    point at once (within the same caps), then a step to the best of it (steepest descent)."""
    t_cap = None if settings.seconds is None else settings.seconds * REFINE_SHARE
    e_cap = None if settings.evaluations is None else max(1, int(settings.evaluations * REFINE_SHARE))
    current, seen = start_params, {start_params}
    while True:
        if t_cap is not None and time.perf_counter() - start >= t_cap:
            return
        batch = [q for q in target.neighbours(space, current) if q not in seen]
        if e_cap is not None:
            batch = batch[:max(0, e_cap - len(ev.history))]
        if not batch:
            return
        seen.update(batch)
        measure(batch)
        b = best()
        if b is None or b[1] == current or b[1] not in batch:
            return
        current = b[1]


def _evaluator(mdh: MdhExpr, reference_c: str, sizes: dict[str, int], target: TuningTarget[Any],
               settings: TuneSettings, reference_runner: Any, log: TuningLog, default: Any,
               deadline: float | None, client: Any) -> NestEvaluator:
    if client is None:
        wait = None
        if target.calibrate_from_default:
            wait = settings.reference_share * (REFERENCE_TIMEOUT if settings.seconds is None else settings.seconds)
        return NestEvaluator(mdh, reference_c, sizes, target, reference_runner, log, default, deadline=deadline,
                             reference_wait=wait, end=deadline)
    from mdpoly.tuning.distributed import DaskEvaluator, RunnerSpec
    spec = RunnerSpec(target.name, settings.device, getattr(target.runner, "threads", None))
    return DaskEvaluator(mdh, reference_c, sizes, target, reference_runner, log, default, deadline=deadline,
                         client=client, spec=spec, end=deadline)


#: The share of the budget kept for the confirmation of a winner (``_confirm``) at most ...
CONFIRM_SHARE = 0.25


def _confirm_reserve(ev: NestEvaluator, default: Any, seconds: float) -> float:
    """Seconds of the budget ``seconds`` kept after the search for the confirmation: the paired
    re-measurements of ``CONFIRM_ROUNDS`` rounds, each run as long as the default's run took
    (its wall time: the worker's start, warm-up and timed calls), at most ``CONFIRM_SHARE``."""
    wall = ev.runs.get(default, (None, 0.0, 0, None))[1]
    return min(CONFIRM_SHARE * seconds, 2 * CONFIRM_ROUNDS * wall)


def _search(mdh: MdhExpr, reference_c: str, sizes: dict[str, int], target: TuningTarget[Any],
            settings: TuneSettings, reference_runner: Any, log: TuningLog, default: Any,
            client: Any = None) -> TuningResult:
    start = time.perf_counter()
    log.write({"event": "start", "nest": mdh.name, "mdh": mdh.to_dsl(), "sizes": sizes, "target": target.name,
               "device": target.identity().get("device"),
               "technique": settings.technique, "seconds": settings.seconds, "evaluations": settings.evaluations,
               "default": target.describe(mdh, default)})
    # the budget covers everything from here: the reference, the default's measurement, the search
    # and the confirmation; the search ends early enough to leave the confirmation its time
    deadline = None if settings.seconds is None else start + settings.seconds
    ev = _evaluator(mdh, reference_c, sizes, target, settings, reference_runner, log, default, deadline, client)
    prefetch = getattr(ev, "prefetch", None)     # measures batches (DaskEvaluator)
    space = target.space(mdh, sizes)
    log.write({"event": "space", "parameters": {s.name: len(s.values) for s in space.specs}})
    progress = _Progress(settings.progress, mdh.name, settings)
    best: tuple[float, Any] | None = None
    improvements: list[tuple[float, float]] = []
    default_seconds: float | None = None

    def consider(p: Any, seconds: float) -> None:
        nonlocal best
        if best is None or seconds < best[0]:
            best = (seconds, p)
            improvements.append((round(time.perf_counter() - start, 3), seconds))

    try:
        try:
            default_seconds = ev.evaluate(default)
            consider(default, default_seconds)
            if target.calibrate_from_default:
                ev.calibrate_device(default_seconds)
        except Rejected as exc:
            log.write({"event": "default-rejected", "kind": exc.kind, "why": exc.why})
        if settings.scale_to_default:
            budget = scaled_budget(settings.seconds, default_seconds)
            if budget != settings.seconds:
                log.write({"event": "budget", "seconds": budget,
                           "why": f"implicit budget scaled to {AMORTIZE_RUNS} default runs"})
                settings = replace(settings, seconds=budget)
                progress.rescale(settings)
                ev.set_end(None if budget is None else start + budget)
        if settings.seconds is not None:
            ev.deadline = start + settings.seconds - _confirm_reserve(ev, default, settings.seconds)
        progress.update(len(ev.history), best[0] if best else None, default_seconds)

        def cost(cfg: Config) -> float:
            p = space.to_params(cfg)
            try:
                seconds = ev.evaluate(p)
            except Rejected as exc:
                raise InvalidConfiguration(f"{exc.kind}: {exc.why}") from exc
            finally:
                progress.update(len(ev.history), best[0] if best else None, default_seconds)
            consider(p, seconds)
            progress.update(len(ev.history), best[0] if best else None, default_seconds)
            return seconds

        def measure(batch: list[Any]) -> list[float | None]:
            assert prefetch is not None
            prefetch(batch)
            out: list[float | None] = []
            for p in batch:
                try:
                    seconds = ev.evaluate(p)
                    consider(p, seconds)
                    out.append(seconds)
                except Rejected:
                    out.append(None)
                progress.update(len(ev.history), best[0] if best else None, default_seconds)
            return out

        try:
            if prefetch is None:
                _refine(ev, space, target, default if best is None else best[1], consider, settings, start,
                        lambda: progress.update(len(ev.history), best[0] if best else None, default_seconds),
                        lambda: best)
            else:
                _refine_batched(ev, space, target, default if best is None else best[1], measure, settings, start,
                                lambda: best)
            left = None if ev.deadline is None else ev.deadline - time.perf_counter()
            evals = None if settings.evaluations is None else settings.evaluations - len(ev.history)
            if (evals is None or evals > 0) and (left is None or left > 0) and prefetch is None:
                search(space.specs, cost, technique=settings.technique, seconds=left, evaluations=evals)
            elif (evals is None or evals > 0) and (left is None or left > 0):
                batched_search(space.specs, lambda cfgs: measure([space.to_params(c) for c in cfgs]),
                               width=getattr(ev, "width", 1), technique=settings.technique, seconds=left,
                               evaluations=evals)
        except BudgetSpent as exc:   # the next evaluation could not finish in time: the best so far
            log.write({"event": "budget-spent", "why": str(exc)})
    finally:
        progress.close()
    note = ev.finish_reference()
    rejected: dict[str, int] = {}
    for o in ev.history:
        if o.kind != "ok":
            rejected[o.kind] = rejected.get(o.kind, 0) + 1
    if best is None:
        elapsed = time.perf_counter() - start
        log.write({"event": "result", "status": "no valid configuration; default kept", "rejected": rejected})
        return TuningResult(default, float("inf"), default_seconds, len(ev.history), False, settings.technique,
                            elapsed, None, target.describe(mdh, default), reference=note,
                            rejected=tuple(sorted(rejected.items())))
    seconds, params = best
    unconfirmed, confirm_failed = "", False
    if default_seconds is not None and params != default:
        c = _confirm(ev, log, default, params, seconds, default_seconds)
        if c.unconfirmed:
            unconfirmed = f"the search's best ({target.describe(mdh, params)}) {c.unconfirmed}"
        seconds, params, default_seconds, confirm_failed = c.seconds, c.params, c.default_seconds, c.failed
    elapsed = time.perf_counter() - start   # the whole budget's use, the confirmation included
    workers = tuple(sorted(getattr(ev, "by_worker", {}).items()))
    log.write({"event": "result", "params": target.describe(mdh, params), "config": target.to_dict(params),
               "seconds": seconds,
               "default_seconds": default_seconds, "evaluations": len(ev.history), "rejected": rejected,
               "improvements": improvements, "tuning_seconds": round(elapsed, 3),
               **({"workers": dict(workers)} if workers else {}),
               **({"unconfirmed": unconfirmed} if unconfirmed else {})})
    return TuningResult(params, seconds, default_seconds, len(ev.history), False, settings.technique, elapsed,
                        None, target.describe(mdh, params), tuple(improvements), workers=workers, reference=note,
                        rejected=tuple(sorted(rejected.items())), unconfirmed=unconfirmed,
                        confirm_failed=confirm_failed)

