"""The cost function: ``TuningParams`` -> median seconds of the generated code, or a typed rejection.

``NestEvaluator`` owns one nest at fixed sizes: random inputs (``make_buffers``), the reference
outputs (the original nest compiled once; if that fails, the default plan's outputs, said in the
log), and a memo of every candidate already measured. ``evaluate(params)`` lowers, checks,
renders, wraps the function in ``mdpoly_entry`` (``backends/entry.py``), builds it with the
runner, runs it, compares the outputs with the reference and returns the median time of the
timed calls. Every outcome, good or bad, goes to the ``TuningLog``; a bad one raises ``Rejected``
with its kind: ``constraint`` (the parameters or the plan are invalid), ``build``, ``crash``,
``timeout`` or ``wrong``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from backends.base import Backend
from backends.entry import entry_function, reference_function
from mdpoly.diagnostics import MdpolyError
from mdpoly.ir.mdh import MdhExpr
from mdpoly.lower import check_plan, lower, violations
from mdpoly.lower.lower import function_params
from mdpoly.lower.params import TuningParams
from mdpoly.tuning.buffers import make_buffers, numpy_dtype
from runtime.base import ArgSpec, BuildRequest, Measurement, RuntimeFailure
from runtime.openmp import OpenMPRunner

ENTRY = "mdpoly_entry"
REFERENCE = "mdpoly_reference"
REFERENCE_HEADERS = ("math.h", "stdlib.h", "string.h", "limits.h", "float.h", "stdint.h", "stddef.h")
FLOAT_RTOL = 1e-3
#: Seconds of timed calls one evaluation aims at; the repetition count follows from it.
TARGET_RUN_SECONDS = 0.25
MIN_REPEATS, MAX_REPEATS = 3, 200


class Rejected(Exception):
    """A candidate that cannot be used; ``kind`` says why in one word."""

    def __init__(self, kind: str, why: str) -> None:
        super().__init__(f"{kind}: {why}")
        self.kind = kind
        self.why = why


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

    params: TuningParams
    seconds: float | None
    kind: str            # "ok" or the rejection kind
    why: str = ""


def _compare(name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    """Why ``got`` is not ``want`` (``None`` when equal enough)."""
    if got.shape != want.shape:
        return f"'{name}' has shape {got.shape}, expected {want.shape}"
    if want.dtype.kind == "f":
        scale = float(np.max(np.abs(want))) if want.size else 1.0
        atol = FLOAT_RTOL * max(scale, 1.0)
        ok = np.isclose(got, want, rtol=FLOAT_RTOL, atol=atol, equal_nan=True)
    else:
        ok = got == want
    if bool(np.all(ok)):
        return None
    bad = int(np.size(ok) - np.count_nonzero(ok))
    first = np.unravel_index(int(np.argmin(ok)), ok.shape) if ok.shape else ()
    return (f"'{name}' differs in {bad} of {ok.size} elements, first at {tuple(int(i) for i in first)}: "
            f"{got[first]!r} vs {want[first]!r}")


class NestEvaluator:
    """Measures candidates of one nest at fixed sizes (see the module docstring)."""

    def __init__(self, mdh: MdhExpr, reference_c: str, sizes: dict[str, int], backend: Backend,
                 runner: OpenMPRunner, log: TuningLog, default: TuningParams,
                 render: Render | None = None, seed: int = 0) -> None:
        self.mdh = mdh
        self.sizes = dict(sizes)
        self.backend = backend
        self.runner = runner
        self.log = log
        self.default = default
        self.render = render or self.render_candidate
        self.params = function_params(mdh)
        self.inputs = make_buffers(mdh, self.sizes, seed)
        self.args = tuple(ArgSpec(b.name, numpy_dtype(b.elem_type), tuple(self.inputs[b.name].shape), b.written)
                          for b in self.params)
        self.memo: dict[TuningParams, Outcome] = {}
        self.history: list[Outcome] = []
        self.repeats = MIN_REPEATS
        self.timeout = 60.0
        self.reference, self.reference_seconds = self._reference(reference_c)

    # {{{ reference

    def _reference(self, reference_c: str) -> tuple[dict[str, np.ndarray], float]:
        its = tuple(d.iterator for d in self.mdh.dims)
        why = "the nest has no reference text"
        if reference_c.strip():
            src = "".join(f"#include <{h}>\n" for h in REFERENCE_HEADERS) + reference_function(
                REFERENCE, self.params, reference_c, its)
            try:
                built = self.runner.build(BuildRequest(src, REFERENCE, self.args))
                m = self.runner.run(built, self.inputs, repeats=1, warmup=0, timeout=600.0)
                self._calibrate(m.median)
                self.log.write({"event": "reference", "source": "original nest", "seconds": m.median,
                                "repeats": self.repeats, "timeout": self.timeout})
                return m.outputs, m.median
            except RuntimeFailure as exc:
                why = f"{exc.kind}: {str(exc)[:2000]}"
        self.log.write({"event": "reference", "source": "default plan", "why_not_original": why})
        try:
            m = self._run(self.render(self.default), repeats=1, timeout=600.0)
        except (RuntimeFailure, MdpolyError) as exc:
            raise Rejected("reference", f"neither the original nest nor the default plan ran: {exc}") from exc
        self._calibrate(m.median)
        return m.outputs, m.median

    def _calibrate(self, seconds: float) -> None:
        """Repetitions and timeout from the (sequential) reference time."""
        per = max(seconds, 1e-6)
        self.repeats = int(min(MAX_REPEATS, max(MIN_REPEATS, TARGET_RUN_SECONDS / per)))
        self.timeout = 10.0 + 4.0 * per * (self.repeats + 2)

    # }}}

    def render_candidate(self, params: TuningParams) -> str:
        """The candidate's C source: preamble, generated function, ``mdpoly_entry``.

        :raises Rejected: (``constraint``) when lowering or the plan checks refuse ``params``.
        """
        bad = violations(self.mdh, params)
        if bad:
            raise Rejected("constraint", ", ".join(bad))
        try:
            plan = lower(self.mdh, params)
            check_plan(plan)
            code = self.backend.render(plan)
        except MdpolyError as exc:
            raise Rejected("constraint", f"{type(exc).__name__}: {exc}") from exc
        return code.preamble + code.definition + entry_function(ENTRY, plan.params, plan.name)

    def _run(self, source: str, repeats: int, timeout: float) -> Measurement:
        built = self.runner.build(BuildRequest(source, ENTRY, self.args))
        return self.runner.run(built, self.inputs, repeats=repeats, warmup=1, timeout=timeout)

    def evaluate(self, params: TuningParams) -> float:
        """Median seconds of ``params``'s code on the nest's inputs.

        :raises Rejected: for an invalid, failing or wrong candidate (also when memoised).
        """
        if params in self.memo:
            o = self.memo[params]
            if o.seconds is None:
                raise Rejected(o.kind, o.why)
            return o.seconds
        start = time.perf_counter()
        try:
            source = self.render(params)
            m = self._run(source, self.repeats, self.timeout)
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
        self.memo[params] = outcome
        self.history.append(outcome)
        self.log.write({"event": "candidate", "params": params.describe(self.mdh), "status": outcome.kind,
                        "seconds": outcome.seconds, "why": outcome.why or None,
                        "eval_seconds": round(time.perf_counter() - start, 3)})
        if outcome.seconds is None:
            raise Rejected(outcome.kind, outcome.why)
        return outcome.seconds
