"""The cost function: a target's parameters -> median seconds of the generated code, or a typed rejection.

``NestEvaluator`` owns one nest at fixed sizes and one ``TuningTarget``: random inputs
(``make_buffers``), the reference outputs, computed once (the original nest compiled for the host
CPU by the reference runner; if that fails, or the text never names a written value the front end
introduced, such as an argmax's value temporary, the default candidate's outputs, said in the log),
and a memo of every candidate already measured.

A device target may not wait for a slow CPU original (``reference_wait`` seconds, 0 when the
nest's point count alone says it cannot finish in time, ``MIN_POINT_SECONDS``): the original
then goes on running in the background while the default configuration's outputs on the device
are the reference (that run is also the default's measurement), and ``finish_reference``
cross-checks the default against the original once it is done, within the budget: outputs that
differ discard the tuning (``Rejected("reference")``); an original that does not finish in time
leaves the reference unchecked, said in ``reference_note``. ``evaluate(params)`` asks the target for the
candidate (lowered, checked, rendered as the output file gets it and wrapped in ``mdpoly_entry``;
OpenCL/CUDA: the host code with its kernels and a timing export), builds it with the target's
runner, runs it, compares the outputs with the reference and returns the median time of the
timed calls (GPU: kernel time from the host code's own profiling; the log has each candidate's
whole-call time and the SHA-256 of its generated function beside it). Every outcome, good
or bad, goes to the ``TuningLog``; a bad one raises ``Rejected`` with its kind: ``constraint``
(the parameters or the plan are invalid), ``build``, ``crash``, ``timeout`` or ``wrong``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from mdpoly.backends.entry import reference_function
from mdpoly.diagnostics import MdpolyError
from mdpoly.differential import compare_arrays
from mdpoly.ir.mdh import MdhExpr
from mdpoly.lower.lower import function_params
from mdpoly.lower.params import TuningParams
from mdpoly.runtime.base import ArgSpec, BuildRequest, Measurement, Runner, RuntimeFailure
from mdpoly.tuning.buffers import make_buffers, numpy_dtype
from mdpoly.tuning.target import ENTRY, Candidate, Rejected, TuningTarget

__all__ = ["ENTRY", "BudgetSpent", "NestEvaluator", "Outcome", "Rejected", "Render", "TuningLog"]
REFERENCE = "mdpoly_reference"
REFERENCE_HEADERS = ("math.h", "stdlib.h", "string.h", "limits.h", "float.h", "stdint.h", "stddef.h")
FLOAT_RTOL = 1e-3
#: Seconds of timed calls one evaluation aims at; the repetition count follows from it.
TARGET_RUN_SECONDS = 0.25
MIN_REPEATS, MAX_REPEATS = 3, 200
#: Targets calibrated on the default candidate (GPU kernels): its seconds of timed calls, and how
#: many times the default's time a candidate may take before it is cut off as ``timeout``.
DEVICE_RUN_SECONDS = 0.05
DEVICE_SLOWDOWN_CUTOFF = 20.0
#: Seconds an evaluation may run past the tuning deadline (``NestEvaluator.deadline``).
DEADLINE_MARGIN = 2.0
#: Seconds the CPU original may run at most (without a deadline).
REFERENCE_TIMEOUT = 600.0
#: No sequential nest runs faster than this per point of its domain: a nest whose point count
#: times this exceeds ``reference_wait`` is not waited for at all.
MIN_POINT_SECONDS = 0.25e-9


class BudgetSpent(Exception):
    """Raised by ``NestEvaluator.evaluate`` instead of starting a candidate that cannot finish before
    the search deadline (its evaluation would take longer than the fastest one so far): the search
    stops there, with the best found so far."""


class TuningLog:
    """Append-only JSON lines: one record per event (reference, candidate, result)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fh: TextIO | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = path.open("a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        if self._fh is not None:
            self._fh.write(json.dumps({"t": round(time.time(), 3), **record}, default=str) + "\n")
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


Render = Callable[[TuningParams], str]


@dataclass(frozen=True, slots=True)
class Outcome:
    """One measured candidate."""

    params: Any
    seconds: float | None
    kind: str            # "ok" or the rejection kind
    why: str = ""


def _compare(name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    """Why ``got`` is not ``want`` (``None`` when equal enough): ``mdpoly.differential``'s rule,
    floats within ``FLOAT_RTOL`` relative to the larger value, or to the array's magnitude
    (at least 1) for values near zero, since reductions reassociate."""
    scale = float(np.max(np.abs(want))) if want.dtype.kind in "fc" and want.size else 1.0
    if not np.isfinite(scale):
        finite = np.abs(want[np.isfinite(want)])
        scale = float(np.max(finite)) if finite.size else 1.0
    return compare_arrays(name, got, want, rtol=FLOAT_RTOL, atol=FLOAT_RTOL * max(scale, 1.0))


class _Background:
    """One call run in a thread: its result or its exception once ``done``."""

    def __init__(self, call: Callable[[], Measurement]) -> None:
        self.result: Measurement | None = None
        self.error: RuntimeFailure | None = None
        self.started = time.perf_counter()
        self.seconds = 0.0
        self._thread = threading.Thread(target=self._main, args=(call,), daemon=True)
        self._thread.start()

    def _main(self, call: Callable[[], Measurement]) -> None:
        try:
            self.result = call()
        except RuntimeFailure as exc:
            self.error = exc
        self.seconds = time.perf_counter() - self.started

    def wait(self, seconds: float | None) -> bool:
        """Whether the call is done after waiting at most ``seconds`` (``None``: until it is)."""
        self._thread.join(seconds)
        return not self._thread.is_alive()


class NestEvaluator:
    """Measures ``target``'s candidates of one nest at fixed sizes (see the module docstring).

    ``reference_wait``: seconds to wait for the CPU original before the default configuration's
    outputs become the reference (``None``: wait for it, as for CPU targets)."""

    def __init__(self, mdh: MdhExpr, reference_c: str, sizes: dict[str, int], target: TuningTarget[Any],
                 reference_runner: Runner, log: TuningLog, default: Any, seed: int = 0,
                 deadline: float | None = None, reference_wait: float | None = None,
                 end: float | None = None) -> None:
        self.mdh = mdh
        self.sizes = dict(sizes)
        self.target = target
        self.runner = target.runner
        self.reference_runner = reference_runner
        self.log = log
        self.default = default
        self.params = function_params(mdh)
        self.inputs = make_buffers(mdh, self.sizes, seed)
        self.args = tuple(ArgSpec(b.name, numpy_dtype(b.elem_type), tuple(self.inputs[b.name].shape), b.written)
                          for b in self.params)
        self.memo: dict[Any, Outcome] = {}
        #: per measured parameter set: the median whole-call seconds (where the code reports them,
        #: else ``None``), the run's wall seconds, its timed calls and the median wall seconds of a
        #: timed call in the worker (where reported; what timeouts derive from)
        self.runs: dict[Any, tuple[float | None, float, int, float | None]] = {}
        self.history: list[Outcome] = []
        self.repeats = MIN_REPEATS
        self.timeout = 60.0
        #: ``time.perf_counter()`` by which tuning must end; no measurement's timeout reaches past
        #: it by more than ``DEADLINE_MARGIN`` (``None``: no time budget).
        self.deadline = deadline
        #: ``time.perf_counter()`` by which everything -- reference, builds, runs, confirmation -- must
        #: be over (the whole budget; ``None``: no time budget): no build or run reaches past it
        self.end = end
        self._bound_runners()
        #: the shortest wall seconds an ``ok`` evaluation took (build and run): what the next one is
        #: expected to take at least, so that one that cannot finish before the deadline is not started
        self.fastest_eval: float | None = None
        self.reference_wait = reference_wait
        #: the CPU original still running in the background (cross-checked by ``finish_reference``)
        self.pending: _Background | None = None
        #: what the reference is and how it was checked, for the tuning remark
        self.reference_note = ""
        self.reference, self.reference_seconds = self._reference(reference_c)

    # {{{ reference

    def _reference(self, reference_c: str) -> tuple[dict[str, np.ndarray], float]:
        its = tuple(d.iterator for d in self.mdh.dims)
        why = "the nest has no reference text"
        # a written value the front end introduced that the text never names (an argmax's value
        # temporary, set by the call site): the text cannot compute it, and may read memory
        # only the call site's value keeps in range (``a[best]``)
        unnamed = [b.name for b in self.params if b.written and b.c_value
                   and not re.search(rf"\b{re.escape(b.name)}\b", reference_c)]
        if unnamed:
            why = f"the nest as written does not compute '{unnamed[0]}', which the front end introduced"
        elif reference_c.strip():
            src = "".join(f"#include <{h}>\n" for h in REFERENCE_HEADERS) + reference_function(
                REFERENCE, self.params, reference_c, its, {d.iterator: d.iterator_type for d in self.mdh.dims})
            try:
                built = self.reference_runner.build(BuildRequest(src, REFERENCE, self.args))
                if self.reference_wait is None:
                    m = self.reference_runner.run(built, self.inputs, repeats=1, warmup=0,
                                                  timeout=self._budgeted(REFERENCE_TIMEOUT))
                    return self._original(m)
                job = self._start_original(built)
                wait = self.reference_wait
                points = math.prod(self.target_extents())
                if points * MIN_POINT_SECONDS > wait:
                    wait = 0.0
                if job.wait(wait):
                    if job.error is not None:
                        raise job.error
                    assert job.result is not None
                    return self._original(job.result)
                self.pending = job
                why = (f"the CPU original did not finish within {wait:.1f} s" if wait else
                       f"the CPU original cannot finish within {self.reference_wait:.1f} s ({points} points)")
            except RuntimeFailure as exc:
                why = f"{exc.kind}: {str(exc)[:2000]}"
        self.log.write({"event": "reference", "source": "default plan", "why_not_original": why})
        start = time.perf_counter()
        try:
            cand = self.candidate(self.default)
            m = self._run(cand, repeats=MIN_REPEATS if self.pending else 1, timeout=REFERENCE_TIMEOUT)
        except (RuntimeFailure, MdpolyError, Rejected) as exc:
            raise Rejected("reference", f"neither the original nest nor the default plan ran: {exc}") from exc
        self._calibrate(m.median)
        if self.pending is not None:   # the default's measurement too: it is not run again
            self._remember(self.default, Outcome(self.default, m.median, "ok"), m, cand, start)
            self.reference_note = f"reference: the default configuration's outputs on the device ({why})"
        return m.outputs, m.median

    def target_extents(self) -> tuple[int, ...]:
        """The nest's extents at its sizes."""
        from mdpoly.tuning.space import concrete_extents
        return concrete_extents(self.mdh, self.sizes)

    def _original(self, m: Measurement) -> tuple[dict[str, np.ndarray], float]:
        self._calibrate(m.median)
        self.log.write({"event": "reference", "source": "original nest", "seconds": m.median,
                        "repeats": self.repeats, "timeout": self.timeout})
        return m.outputs, m.median

    def _start_original(self, built: Any) -> _Background:
        """The CPU original run in the background, its timeout cut to the budget now."""
        timeout = self._budgeted(REFERENCE_TIMEOUT)
        return _Background(lambda: self.reference_runner.run(built, self.inputs, repeats=1, warmup=0,
                                                             timeout=timeout))

    def finish_reference(self) -> str:
        """Cross-checks the default's outputs (the reference) against the CPU original still running
        in the background, waiting for it until the deadline (plus ``DEADLINE_MARGIN``); returns
        ``reference_note`` (what was done, for the remark).

        :raises Rejected: (``reference``) when the original's outputs differ from the default's.
        """
        job, self.pending = self.pending, None
        if job is None:
            return self.reference_note
        left = None if self.deadline is None else max(0.0, self.deadline - time.perf_counter()) + DEADLINE_MARGIN
        if self.end is not None:
            left = min(left if left is not None else REFERENCE_TIMEOUT, max(0.0, self.end - time.perf_counter()))
        record: dict[str, Any] = {"event": "cross-check"}
        if not job.wait(left):
            record.update(status="not run", why="the CPU original did not finish within the budget")
            check = "not cross-checked: the CPU original did not finish within the budget"
        elif job.error is not None:
            record.update(status="not run", why=f"{job.error.kind}: {str(job.error)[:500]}")
            check = f"not cross-checked: the CPU original failed ({job.error.kind})"
        else:
            assert job.result is not None
            for b in self.params:
                if b.written:
                    why = _compare(b.name, self.reference[b.name], job.result.outputs[b.name])
                    if why is not None:
                        self.log.write({**record, "status": "differs", "why": why, "seconds": job.seconds})
                        raise Rejected("reference", "the default configuration's outputs differ from the CPU "
                                       f"original's: {why}")
            record.update(status="agrees", seconds=round(job.seconds, 3))
            check = f"cross-checked against the CPU original ({job.seconds:.1f} s): agrees"
        self.log.write(record)
        self.reference_note = f"{self.reference_note}; {check}" if self.reference_note else check
        return self.reference_note

    def _calibrate(self, seconds: float) -> None:
        """Repetitions and timeout from the (sequential) reference time."""
        per = max(seconds, 1e-6)
        self.repeats = int(min(MAX_REPEATS, max(MIN_REPEATS, TARGET_RUN_SECONDS / per)))
        self.timeout = 10.0 + 4.0 * per * (self.repeats + 2)

    def calibrate_device(self, default_seconds: float) -> None:
        """Repetitions and timeout from the default candidate (GPU targets): about
        ``DEVICE_RUN_SECONDS`` of timed kernel time; the timeout bounds the timed calls (the
        runner gives the worker's start, input loading, kernel build and warm-up calls a limit of
        their own) by what they really take: ``DEVICE_SLOWDOWN_CUTOFF`` times the default's timed
        call as the worker measures it (kernels, launches and whatever copies a call still makes;
        with the inputs held on the device, none), so a candidate that much slower than the
        default is cut off."""
        per = max(default_seconds, 1e-6)
        self.repeats = int(min(MAX_REPEATS, max(MIN_REPEATS, DEVICE_RUN_SECONDS / per)))
        call, wall, _, host = self.runs.get(self.default, (None, 0.0, 0, None))
        call = max(call or 0.0, host or 0.0, per)
        self.timeout = 1.0 + DEVICE_SLOWDOWN_CUTOFF * call * (self.repeats + 1)
        self.log.write({"event": "calibrate", "default_seconds": default_seconds, "default_call_seconds": call,
                        "default_run_seconds": wall, "repeats": self.repeats, "timeout": self.timeout})

    # }}}

    def candidate(self, params: Any) -> Candidate:
        """The target's candidate for ``params``.

        :raises Rejected: (``constraint``) when the parameters, lowering or the plan checks refuse them.
        """
        bad = self.target.violations(self.mdh, params)
        if bad:
            raise Rejected("constraint", ", ".join(bad))
        try:
            return self.target.candidate(self.mdh, params, self.sizes, self.args)
        except MdpolyError as exc:
            raise Rejected("constraint", f"{type(exc).__name__}: {exc}") from exc

    def _run(self, cand: Candidate, repeats: int, timeout: float) -> Measurement:
        built = self.runner.build(cand.request)
        inputs = {**self.inputs, **cand.inputs} if cand.inputs else self.inputs
        return self.runner.run(built, inputs, repeats=repeats, warmup=1, timeout=self._budgeted(timeout))

    def _budgeted(self, timeout: float) -> float:
        """``timeout``, cut to end at most ``DEADLINE_MARGIN`` seconds past the deadline, and never
        past ``end``."""
        now = time.perf_counter()
        if self.deadline is not None:
            timeout = min(timeout, max(0.0, self.deadline - now) + DEADLINE_MARGIN)
        if self.end is not None:
            timeout = min(timeout, max(0.0, self.end - now))
        return timeout

    def _bound_runners(self) -> None:
        """Every build and run of the target's and the reference's runners ends by ``end`` (their
        ``deadline``: compilation and the worker's warm-up included, which their own limits do not bound)."""
        for r in (self.runner, self.reference_runner):
            if hasattr(r, "deadline"):
                r.deadline = self.end

    def set_end(self, end: float | None) -> None:
        """A new ``end`` (an implicit budget scaled after the default's measurement)."""
        self.end = end
        self._bound_runners()

    def _log_extra(self, params: Any) -> dict[str, Any]:
        """Fields a subclass adds to a candidate's log record (``DaskEvaluator``: its worker)."""
        return {}

    def remeasure(self, params: Any) -> float:
        """A fresh median of an already valid ``params`` (no memo), for paired confirmation runs.

        :raises Rejected: when the candidate fails this time, or (``timeout``) when the rest of the
            budget cannot hold another run of it (its last run's wall time).
        """
        if self.end is not None:
            wall = self.runs.get(params, (None, 0.0, 0, None))[1]
            if time.perf_counter() + wall > self.end:
                raise Rejected("timeout", "the tuning budget has no time left for another run")
        try:
            return self._run(self.candidate(params), self.repeats, self.timeout).median
        except (RuntimeFailure, MdpolyError) as exc:
            raise Rejected("crash", str(exc)[:2000]) from exc

    def _remember(self, params: Any, outcome: Outcome, m: Measurement | None, cand: Candidate | None,
                  start: float) -> None:
        """Memo, history, run record and log record of one measured (or refused) ``params``."""
        if m is not None:
            self.runs[params] = (statistics.median(m.call_times) if m.call_times else None, m.wall_seconds,
                                 len(m.times), statistics.median(m.host_times) if m.host_times else None)
        digest = hashlib.sha256(cand.function.encode()).hexdigest() if cand is not None and cand.function else None
        self.memo[params] = outcome
        self.history.append(outcome)
        self.log.write({"event": "candidate", "params": self.target.describe(self.mdh, params),
                        "status": outcome.kind, "seconds": outcome.seconds, "why": outcome.why or None,
                        "call_seconds": self.runs.get(params, (None,))[0], "function_sha256": digest,
                        "eval_seconds": round(time.perf_counter() - start, 3), **self._log_extra(params)})

    def evaluate(self, params: Any) -> float:
        """Median seconds of ``params``'s code on the nest's inputs.

        :raises Rejected: for an invalid, failing or wrong candidate (also when memoised).
        """
        if params in self.memo:
            o = self.memo[params]
            if o.seconds is None:
                raise Rejected(o.kind, o.why)
            return o.seconds
        start = time.perf_counter()
        if (self.deadline is not None and self.fastest_eval is not None
                and start + self.fastest_eval > self.deadline + DEADLINE_MARGIN):
            raise BudgetSpent(f"{self.deadline + DEADLINE_MARGIN - start:.1f} s left, an evaluation takes "
                              f"{self.fastest_eval:.1f} s at least")
        cand: Candidate | None = None
        m: Measurement | None = None
        try:
            cand = self.candidate(params)
            m = self._run(cand, self.repeats, self.timeout)
            for b in self.params:
                if b.written:
                    why = _compare(b.name, m.outputs[b.name], self.reference[b.name])
                    if why is not None:
                        raise Rejected("wrong", why)
            outcome = Outcome(params, m.median, "ok")
        except Rejected as exc:
            outcome = Outcome(params, None, exc.kind, exc.why)
        except RuntimeFailure as exc:
            outcome = Outcome(params, None, exc.kind, str(exc)[:2000])
        except MdpolyError as exc:
            outcome = Outcome(params, None, "constraint", f"{type(exc).__name__}: {exc}"[:2000])
        self._remember(params, outcome, m, cand, start)
        if outcome.seconds is None:
            raise Rejected(outcome.kind, outcome.why)
        took = time.perf_counter() - start
        self.fastest_eval = took if self.fastest_eval is None else min(self.fastest_eval, took)
        return outcome.seconds
