"""Adapter over pyATF: our parameter specs → its constrained Chain-of-Trees space and search.

The rest of mdpoly speaks ``ParamSpec`` (name, candidate values, a predicate over earlier
parameters) and ``search(...)``; only this module imports pyatf, so replacing it is a one-module
change. pyATF matches constraint arguments by parameter *name* (``inspect.signature``), so each
predicate is wrapped in a callable whose signature lists exactly the names it reads.
"""

from __future__ import annotations

import inspect
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

Config = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """A tuning parameter: ``values`` to try, and ``constraint(cfg)`` over itself and ``reads``."""

    name: str
    values: tuple[Any, ...]
    constraint: Callable[[Config], bool] | None = field(default=None, compare=False)
    reads: tuple[str, ...] = ()
    doc: str = ""


def _signed_constraint(spec: ParamSpec) -> Callable[..., bool]:
    names = (spec.name, *[r for r in spec.reads if r != spec.name])
    pred = spec.constraint
    assert pred is not None

    def constraint(**values: Any) -> bool:
        return bool(pred(values))

    constraint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return constraint


def _import_pyatf() -> None:
    """Import pyatf, undoing what its import does to the process: it replaces the SIGINT handler
    by one that prints to stdout and lets a running search end early as if it had finished, so
    Ctrl-C would neither stop mdpoly nor say so on stderr. Python's handler (``KeyboardInterrupt``)
    is put back."""
    import pyatf.tuner as tuner

    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is tuner.sigint_handler):
        signal.signal(signal.SIGINT, tuner.original_sigint_handler)


def build_search_space(specs: tuple[ParamSpec, ...], one_dimensional: bool = False) -> Any:
    """The constrained space (pyATF ``SearchSpace``); every configuration in it is valid."""
    _import_pyatf()
    from pyatf import TP, Set
    from pyatf.search_space import SearchSpace

    tps = [TP(s.name, Set(*s.values), _signed_constraint(s) if s.constraint else None) for s in specs]
    return SearchSpace(*tps, enable_1d_access=one_dimensional, verbosity=0)


TECHNIQUES = ("auc_bandit", "simulated_annealing", "random", "exhaustive")


def _technique(name: str) -> Any:
    _import_pyatf()
    from pyatf.search_techniques import (
        AUCBandit,
        Exhaustive,
        Random,
        SimulatedAnnealing,
    )

    return {"auc_bandit": AUCBandit, "simulated_annealing": SimulatedAnnealing,
            "random": Random, "exhaustive": Exhaustive}[name]()


class InvalidConfiguration(Exception):
    """Raised by an evaluation callback for a configuration that failed (build, crash, wrong)."""


def search(specs: tuple[ParamSpec, ...], evaluate: Callable[[Config], float], *,
           technique: str = "auc_bandit", seconds: float | None = None,
           evaluations: int | None = None) -> tuple[Config | None, float]:
    """Search the constrained space; ``evaluate`` returns a cost or raises InvalidConfiguration.

    Stops after ``seconds`` or ``evaluations`` (whichever first) or when the space is exhausted.
    Returns the best configuration and its cost (``None, inf`` when no configuration was valid).
    """
    _import_pyatf()
    from pyatf import Tuner
    from pyatf.abort_conditions import Duration, Evaluations, Or
    from pyatf.tuning_data import CostFunctionError

    space = build_search_space(specs, one_dimensional=technique == "exhaustive")
    size = space.constrained_size
    limit = min(evaluations, size) if evaluations else size
    abort: Any = Evaluations(limit)
    if seconds is not None:
        abort = Or(abort, Duration(timedelta(seconds=seconds)))

    def cost(config: Config) -> float:
        try:
            return evaluate(dict(config))
        except InvalidConfiguration as exc:
            raise CostFunctionError(str(exc)) from exc

    best, best_cost, _ = (Tuner().search_space(space).search_technique(_technique(technique))
                          .verbosity(0).tune(cost, abort))
    if best is None or best_cost is None:
        return None, float("inf")
    return dict(best), float(best_cost)


def batched_search(specs: tuple[ParamSpec, ...], evaluate_batch: Callable[[list[Config]], list[float | None]], *,
                   width: int, technique: str = "auc_bandit", seconds: float | None = None,
                   evaluations: int | None = None, seed: int = 0) -> tuple[Config | None, float]:
    """``search`` for an evaluator that measures ``width`` configurations at once.

    pyATF's techniques propose one configuration after another, each after the last one's cost;
    here each round asks the technique for its proposal and fills the batch up to ``width`` with
    configurations drawn uniformly from the constrained space (the ``random`` technique's way);
    only the technique's own proposals are reported back to it. ``exhaustive`` takes the next
    ``width`` configurations in order. ``evaluate_batch`` returns each configuration's cost, or
    ``None`` for an invalid one. Stops as ``search`` does.
    """
    import random
    import time

    exhaustive = technique == "exhaustive"
    space = build_search_space(specs, one_dimensional=exhaustive)
    size = space.constrained_size
    limit = min(evaluations, size) if evaluations else size
    end = None if seconds is None else time.perf_counter() + seconds
    rng = random.Random(seed)
    tech = None if exhaustive else _technique(technique)
    if tech is not None:
        tech.initialize(space.num_tps)
    best: tuple[Config | None, float] = (None, float("inf"))
    done = 0
    while done < limit and (end is None or time.perf_counter() < end):
        n = max(1, min(width, limit - done))
        own: list[Any] = []
        if exhaustive:
            keys: list[Any] = list(range(done, min(size, done + n)))
        else:
            assert tech is not None
            own = list(tech.get_next_coordinates())[:n]
            keys = own + [tuple(1.0 - rng.random() for _ in range(space.num_tps)) for _ in range(n - len(own))]
        if not keys:
            break
        configs = [dict(space.get_configuration(k)) for k in keys]
        costs = evaluate_batch(configs)
        done += len(keys)
        if tech is not None and own:
            tech.report_costs({k: costs[i] for i, k in enumerate(own)})
        for cfg, cost in zip(configs, costs):
            if cost is not None and cost < best[1]:
                best = (cfg, cost)
    if tech is not None:
        tech.finalize()
    return best
