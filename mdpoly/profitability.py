"""Profitability: ``estimate(mdh, options) -> WorkEstimate`` and ``too_little_work(...)``.

Counts the nest's work (iterations times operations of the scalar function plus the combine)
and the bytes its accesses touch, with symbolic extents taken from ``--size`` hints. A nest whose
known work cannot repay starting a thread team is kept as written (code ``too-little-work``),
unless ``options.all_nests`` or the nest carries ``#pragma mdh`` (a ``#pragma scop`` region only
says where to look). A computation inside host loops is judged per call: it runs once per
iteration of them, each time paying the start of a thread team.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from mdpoly.diagnostics import Diagnostic, Severity
from mdpoly.ir.c_types import parse_type
from mdpoly.ir.mdh import Affine, MdhExpr
from mdpoly.ir.nest import Computation, HostLoop, NestAnalysis, ScheduleItem, schedule_computations
from mdpoly.options import Options

#: Below this many operations a parallel region (a few microseconds to start) does not pay off.
MIN_WORK = 1 << 17



@dataclass(frozen=True, slots=True)
class WorkEstimate:
    """``iterations`` of the domain, ``ops`` = iterations x operations each, ``bytes`` touched;
    ``None`` where a size is unknown."""

    iterations: int | None
    ops: int | None
    bytes: int | None


def _value(a: Affine, sizes: dict[str, int]) -> int | None:
    total = a.constant
    for name, c in a.terms:
        if name not in sizes:
            return None
        total += c * sizes[name]
    return total


def _ops_per_point(mdh: MdhExpr) -> int:
    text = " ".join(mdh.f.results)
    ops = len(re.findall(r"[-+*/%]|\b[A-Za-z_]\w*\s*\(", text))
    reduces = any(d.combine.is_reduction for d in mdh.dims)
    return max(1, ops + (len(mdh.outputs) if reduces else 0))


def estimate(mdh: MdhExpr, options: Options) -> WorkEstimate:
    sizes = dict(options.sizes)
    sizes.update({n: v for n, v in mdh.params if v is not None})
    exts = {d.iterator: _value(d.extent, sizes) for d in mdh.dims}
    if any(e is None for e in exts.values()):
        return WorkEstimate(None, None, None)
    known = {k: max(v, 0) for k, v in exts.items() if v is not None}
    iters = math.prod(known.values())
    touched = 0
    for acc, ty in [(a, mdh.buffer(a.buffer).elem_type) for a in mdh.inputs] + \
                   [(o.access, o.elem_type) for o in mdh.outputs]:
        used = [known[d.iterator] for d in mdh.dims if acc.depends_on(d.iterator)]
        touched += math.prod(used) * (t.size if (t := parse_type(ty)) is not None else 8)
    return WorkEstimate(iters, iters * _ops_per_point(mdh), touched)


def too_little_work(nest: NestAnalysis, options: Options) -> Diagnostic | None:
    """The reason to keep ``nest`` as written for lack of work, or ``None`` to transform it."""
    if nest.mdh is None or options.all_nests or nest.requested:
        return None
    est = estimate(nest.mdh, options)
    if est.ops is None or est.ops >= MIN_WORK:
        return None
    return Diagnostic(Severity.REMARK, "too-little-work", nest.loc, "too little work")


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
