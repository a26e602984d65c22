"""Profitability: ``estimate(mdh, options) -> WorkEstimate`` and the reductions inside host loops.

Counts the nest's work (iterations times operations of the scalar function plus the combine)
and the bytes its accesses touch, with symbolic extents taken from ``--size`` hints
(``mdpoly.cost_model.work``). Whether that work repays running in parallel is the cost model's
decision (``mdpoly.cost_model.decide``).
"""

from __future__ import annotations

from dataclasses import dataclass

from mdpoly.cost_model import ops_per_point, work
from mdpoly.diagnostics import Diagnostic, Severity
from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.nest import Computation, HostLoop, NestAnalysis, ScheduleItem, schedule_computations
from mdpoly.options import Options


@dataclass(frozen=True, slots=True)
class WorkEstimate:
    """``iterations`` of the domain, ``ops`` = iterations x operations each, ``bytes`` touched;
    ``None`` where a size is unknown."""

    iterations: int | None
    ops: int | None
    bytes: int | None


def estimate(mdh: MdhExpr, options: Options) -> WorkEstimate:
    ops, touched, _ = work(mdh, dict(options.sizes))
    if ops is None:
        return WorkEstimate(None, None, None)
    return WorkEstimate(ops // ops_per_point(mdh), ops, touched)


def reductions_in_host_loops(items: tuple[ScheduleItem, ...]) -> frozenset[int]:
    """The computations (by ``id``) inside host loops that are parallel only along reduction
    loops: each call would start a thread team and combine partial results for one (often short)
    reduction, a dot product per row of a triangular solve. They pay only where the threads of
    one parallel region around the host loop already run (OpenMP, ``TeamCode``), combining
    partials at a barrier; elsewhere they are kept as written (``reduction_in_host_loop``)."""
    out: set[int] = set()
    for it in items:
        if isinstance(it, HostLoop):
            out |= {id(c) for c in schedule_computations(it.body) if _reduction_only(c)}
    return frozenset(out)


def _reduction_only(c: Computation) -> bool:
    mdh = c.nest.mdh
    return mdh is not None and all(d.combine.is_reduction for d in mdh.dims)


def reduction_in_host_loop(nest: NestAnalysis, why: str) -> Diagnostic:
    """Why a computation of ``reductions_in_host_loops`` is kept as written (``why``: what its
    target or host loop lacks)."""
    return Diagnostic(Severity.NOTE, "reduction-in-host-loop", nest.loc,
                      "only its reduction loops are parallel and it runs once per iteration of the sequential "
                      f"loops around it, {why}: starting threads and combining partial results would cost more "
                      "than it saves")
