"""Per-nest diagnostics and the ``--report`` JSON: ``NestOutcome``s -> remarks/notes and a dict.

Remarks are printed in clang's shape through a ``DiagnosticSink``
(``in.c:12:5: remark: loop nest parallelized: i:++ j:++ k:+``); the JSON schema is stable::

    {"nests": [{"file", "line", "column", "status": "transformed"|"kept"|"already-parallel", "reason", "code",
                "loops": [{"iterator", "extent", "combine"}], "mdh": <dsl string or null>, "target",
                "tuning": {"params", "config", "tuned_seconds", "default_seconds", "evaluations",
                           "from_cache", "technique", ...} or null,
                "cost": {"choice", "reason", "min_ops", "guard", "parallel_if", "min_call_ops",
                         "threads", "seq_ns", "par_ns", "loaded_ns", "inputs": {...}},
                "limits": {"source": "device"|"given"|"generic", "name", "compute_units", ...}}]}

``limits`` (OpenCL/CUDA computations) are the device limits the code was planned with
(``mdpoly.device_limits``): the device found at generation time, ``--device-limits``, or the generic ones.

``cost`` (schema 3) is the cost model's decision on an MDH computation (``mdpoly.cost_model``):
``choice`` ``parallel``, ``guarded`` (parallel when the run-time ``guard`` holds), ``sequential``
or ``forced`` (``--all-nests``, ``#pragma mdh``). With ``--target cuda|opencl`` a nest the model
weighed against the host (``mdpoly.hybrid``) has ``cost.device`` (``DeviceDecision.to_report``:
``choice`` ``device`` or ``host``, the estimates and their inputs; on the host its ``target`` is
``openmp``), and a computation guarded at run time has ``cost.host``: the decision of the OpenMP
code its guard falls back to.

``line``/``column`` locate the outermost ``for`` of the nest. A nest whose generated code holds
only under run-time preconditions (a delinearized flat subscript's view, C's conversions in a loop
header) has ``"preconditions": [{"check", "reason", "otherwise": "original"}]``: each ``check`` is
evaluated once per call, and when one is false the original nest runs. With ``--mpi``, each computation
also has ``"mpi"``: which dimension was split over the MPI ranks, or why none was; with
``--devices``, ``"devices"``: which dimension was split over the devices, or why none was.
``"specialised_for"`` (OpenMP) lists the values its code has a specialised copy for
(``["km->dim == 4"]``, ``mdpoly.frontend.pinned_values``): that copy runs when the values match.
"""

from __future__ import annotations

import re
from dataclasses import asdict, replace
from typing import Any

from mdpoly import __version__
from mdpoly.diagnostics import Diagnostic, DiagnosticSink, Severity, SourceLoc
from mdpoly.ir.mdh import with_c_values
from mdpoly.ir.nest import (
    ALREADY_PARALLEL,
    Computation,
    FileAnalysis,
    HostLoop,
    HostStatement,
    NestOutcome,
    PrivateLoop,
    ScheduleItem,
    Wavefront,
    kept_status,
    schedule_computations,
    schedule_items_of,
    schedule_wavefronts,
)
from mdpoly.options import Options


def outcomes_from_analysis(analysis: FileAnalysis, target: str | None = None) -> tuple[NestOutcome, ...]:
    """Outcomes from the analysis alone (``--emit mdh``): transformed exactly when an MDH exists."""
    out: list[NestOutcome] = []
    for n in analysis.nests:
        if n.mdh is None and n.schedule is not None:
            parts = outcomes_from_analysis(replace(analysis, nests=tuple(
                c.nest for c in schedule_computations(n.schedule))), target)
            out.append(NestOutcome(n, "transformed", None, None, target, parts=parts))
        elif n.mdh is not None:
            out.append(NestOutcome(n, "transformed", None, None, target))
        else:
            kept = n.kept
            out.append(NestOutcome(n, kept_status(kept.code if kept else None), kept.message if kept else "not analysed",
                                   kept.code if kept else "unsupported", None))
    return tuple(out)


def outcome_diagnostic(o: NestOutcome) -> Diagnostic:
    """The remark (transformed) or note/warning (kept) for one nest."""
    n = o.nest
    if o.status == "transformed" and n.schedule is not None:
        resident = "".join(f"; {note}" for _, note in o.resident)
        resident += "".join(f"; {note}" for _, note in o.device_items)
        one = f"; {o.one_thread}" if o.one_thread else ""
        device = f"; {o.cost_text}" if o.cost_text else ""   # a GPU target's file: device or host (mdpoly.hybrid)
        return Diagnostic(Severity.REMARK, "", n.loc,
                          f"loop nest scheduled: {schedule_text(n.schedule, o.parts, o.regions, o.private_loops)}"
                          f"{resident}{device}{one}{_pinned_note(o)}{_scatter_note(o)}")
    if o.status == "transformed":
        loops = " ".join(f"{_user_name(lp.iterator)}:{lp.combine.value}" for lp in n.loops)
        ranks = f"; {o.ranks}" if o.ranks else ""
        ranks += f"; {o.devices}" if o.devices else ""
        ranks += "".join(f"; {note}" for _, note in o.resident)
        return Diagnostic(Severity.REMARK, "", n.loc, f"loop nest parallelized: {loops}{ranks}{_cost_note(o)}"
                                                      f"{_pinned_note(o)}{_preconditions_note(o)}{_exits_note(o)}")
    loc = n.kept.loc if n.kept is not None and n.kept.code == o.code and n.kept.loc else n.loc
    severity = n.kept.severity if n.kept is not None and n.kept.code == o.code else Severity.NOTE
    what = ("loop nest already parallel (OpenMP)" if o.status == ALREADY_PARALLEL else
            "loop nest kept as written" if o.code in _UNDER_USER_OPENMP else "loop nest kept sequential")
    return Diagnostic(severity, o.code or "", loc, f"{what}: {_user_names(o.reason or 'unknown reason')}")


#: A local of an expanded helper with a loop (``frontend.normalize.loop_helpers``: ``mdp_h1_k``)
#: or the iterator of an expanded ``memset`` (``frontend.normalize.mem_calls``: ``mdp_mem1_k``)
#: or of a loop over a pointer (``frontend.normalize.pointer_loops``: ``mdp_ptr1_p``) or with a
#: run-time step (``frontend.normalize.runtime_steps``: ``mdp_step1_i``).
_HELPER_LOCAL = re.compile(r"^mdp_(?:h|mem|ptr|step|bump)\d+_(\w+)$")


def _user_names(text: str) -> str:
    """``text`` with every helper local spelled as the user wrote it (``score[mdp_h1_i]`` as ``score[i]``)."""
    return _HELPER_LOCAL_IN_TEXT.sub(lambda m: m.group(1), text)


_HELPER_LOCAL_IN_TEXT = re.compile(r"\bmdp_(?:h|mem|ptr|step|bump)\d+_(\w+)\b")


def _user_name(iterator: str) -> str:
    """An iterator as the user wrote it: a helper's loop ``k`` (``mdp_h1_k``) as ``k``."""
    m = _HELPER_LOCAL.match(iterator) or _STRIDED.match(iterator)
    return m.group(1) if m else iterator


#: The iterator counting the steps of a loop with a constant step (``frontend.scop_loops``: ``mdp_s_t``).
_STRIDED = re.compile(r"^mdp_s_(\w+)$")


#: Reasons of nests kept as written because they are (or hold) the user's OpenMP: not sequential.
_UNDER_USER_OPENMP = frozenset({"in-omp-region", "openmp-inside"})


def _scatter_note(o: NestOutcome) -> str:
    """``; the loop at line 12 runs in parallel with 'h' as a scatter reduction when: ...`` for each
    parallel loop with scattered reductions (``PrivateLoop.scattered``): its run-time conditions."""
    if o.nest.schedule is None:
        return ""
    kept = {loc for loc, why in o.private_loops if why}
    out = ""
    for loop in schedule_items_of(o.nest.schedule, PrivateLoop):
        if not loop.scattered or loop.loc in kept:
            continue
        names = ", ".join(f"'{r.name}'" for r in loop.scattered)
        conditions = [p.reason.removeprefix("cost: ") for p in loop.preconditions]
        if loop.checks:
            conditions.append("what it updates overlaps nothing else it reads or writes (checked at run time"
                              + (", after an inspection of its indices)" if loop.inspector else ")"))
        many = "s" if len(loop.scattered) > 1 else ""
        out += (f"; the loop at line {loop.loc.line} runs in parallel with {names} as scatter reduction{many} when "
                + "; ".join(conditions) + ", else as written")
    return out


def _cost_note(o: NestOutcome) -> str:
    """``; cost: ...`` where the cost model decided (not where the nest was forced)."""
    if not o.cost_text or o.cost is None:
        return ""
    if o.cost.get("choice") == "forced":   # but a GPU target's refusal, the reason the host runs it, shows
        device = o.cost.get("device")
        if isinstance(device, dict) and device.get("choice") == "refused":
            return f"; device: host: {device['reason']}"
        return ""
    return f"; {o.cost_text}"


def _preconditions_note(o: NestOutcome) -> str:
    """``; the generated code runs where CHECK, else the nest as written`` for the front end's
    run-time preconditions (a flat subscript's view, C's conversions in a loop header), so that a
    check real inputs never pass shows in the remark, not only in the report."""
    mdh = o.nest.mdh
    if mdh is None or not mdh.preconditions:
        return ""
    # a front end's size parameter (``mdp_p_n_nq``) in the user's words (its C expression)
    values = {b.name: b.c_value for b in mdh.buffers if b.c_value}
    checks = " && ".join(with_c_values(p.c_expr, values) for p in mdh.preconditions)
    return f"; the generated code runs where {checks}, else the nest as written"


def _exits_note(o: NestOutcome) -> str:
    """``; 'w' is set to its exit value after it`` for the counters and bumped pointers the program
    reads after the nest (``MdhExpr.exits``): the generated code leaves them, the call site sets them."""
    mdh = o.nest.mdh
    if mdh is None or not mdh.exits:
        return ""
    names = ", ".join(f"'{x.name}'" for x in mdh.exits)
    return f"; {names} {'is' if len(mdh.exits) == 1 else 'are'} set to {'its' if len(mdh.exits) == 1 else 'their'} " \
           "exit value after it"


def _pinned_note(o: NestOutcome) -> str:
    """``; specialised for km->dim == 4 (...)`` where the code has a copy for pinned values, and
    ``; a copy for soft2 >= 0 (...)`` where it has one promising that to the compiler."""
    promised = (f"; a copy for {' && '.join(o.promised)} (there its square roots need no errno path, "
                "so the compiler can vectorize them; generic code otherwise)") if o.promised else ""
    if not o.pinned:
        return promised
    return promised + (f"; specialised for {', '.join(o.pinned)}, the value{'s' if len(o.pinned) > 1 else ''} the file sets "
            "(generic code otherwise)")


def _part_text(o: NestOutcome) -> str:
    loops = " ".join(f"{_user_name(lp.iterator)}:{lp.combine.value}" for lp in o.nest.loops)
    where = f"line {o.nest.loc.line}"
    if o.status == "transformed":
        return f"[{loops} MDH at {where}]"
    return f"[kept at {where}: {o.code}]"


def schedule_text(items: tuple[ScheduleItem, ...], parts: tuple[NestOutcome, ...],
                  regions: tuple[tuple[SourceLoc, str], ...] = (),
                  private: tuple[tuple[SourceLoc, str], ...] = ()) -> str:
    """One line for a schedule, e.g. ``t:seq{ [i:++ MDH at line 9] [i:++ MDH at line 11] }``;
    ``parts`` are the computations' outcomes in schedule order; a host loop run as one parallel
    region (``regions``) reads ``t:seq-in-region{ ... }``. A parallel loop around its body as
    written reads ``[i:++ private-body]`` (``[r:++ q:++ with private sum]`` with copies of
    temporaries), or ``[kept at line 7: code]`` when ``private`` (by location) gives a reason
    code under which it runs as written."""
    queue = list(parts)
    in_region = {loc for loc, why in regions if not why}
    kept = {loc: why for loc, why in private if why}

    def walk(its: tuple[ScheduleItem, ...]) -> list[str]:
        out: list[str] = []
        for it in its:
            if isinstance(it, HostLoop):
                seq = "seq-in-region" if it.loc in in_region else "seq"
                out.append(f"{_user_name(it.iterator)}:{seq}{{ {' '.join(walk(it.body))} }}")
            elif isinstance(it, Computation):
                out.append(_part_text(queue.pop(0)) if queue else "[?]")
            elif isinstance(it, PrivateLoop) and it.loc in kept:
                out.append(f"[kept at line {it.loc.line}: {kept[it.loc]}]")
            elif isinstance(it, PrivateLoop):
                names = ", ".join(c.name for c in it.copies)
                body = f"with private {names}" if names else "private-body"
                body += f" in blocks of {it.blocked}" if it.blocked else ""
                body += "".join(f" scatter-reduction({r.op}:{r.name})" for r in it.scattered)
                out.append(f"[{' '.join(f'{_user_name(v)}:++' for v in it.iterators)} {body}]")
            elif isinstance(it, Wavefront):
                out.append(f"[{it.describe()}]")
        return out
    return " ".join(walk(items))


def schedule_dict(items: tuple[ScheduleItem, ...], parts: tuple[NestOutcome, ...],
                  regions: tuple[tuple[SourceLoc, str], ...] = (),
                  private: tuple[tuple[SourceLoc, str], ...] = ()) -> list[dict[str, Any]]:
    """The ``"schedule"`` of the report: host loops (with why they stay sequential, and for an
    outermost one of an OpenMP nest whether it runs as one parallel region or why not),
    statements kept as written, computations with their own outcome, and parallel loops around
    their bodies as written (``"kept"``: the reason code when one runs as written)."""
    queue = list(parts)
    notes = dict(regions)
    kept = {loc: why for loc, why in private if why}

    def walk(its: tuple[ScheduleItem, ...]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for it in its:
            if isinstance(it, HostLoop):
                entry = {"kind": "host-loop", "iterator": it.iterator, "line": it.loc.line,
                         "column": it.loc.column, "reason": it.reason, "body": walk(it.body)}
                if it.loc in notes:
                    entry["parallel_region"] = not notes[it.loc]
                    if notes[it.loc]:
                        entry["no_region_reason"] = notes[it.loc]
                out.append(entry)
            elif isinstance(it, HostStatement):
                out.append({"kind": "statement", "line": it.loc.line, "column": it.loc.column})
            elif isinstance(it, PrivateLoop):
                entry = {"kind": "private-loop", "line": it.loc.line, "column": it.loc.column,
                         "parallel": list(it.iterators), "private": [c.name for c in it.copies]}
                if it.blocked:
                    entry["blocked"] = it.blocked
                if it.reductions:
                    entry["reductions"] = {name: op for name, op in it.reductions}
                if it.scattered:
                    entry["scatter_reductions"] = [{"name": r.name, "op": r.op, "whole": r.whole,
                                                    "start": r.start, "length": r.length} for r in it.scattered]
                if it.preconditions:
                    entry["preconditions"] = [{"c": p.c_expr, "reason": p.reason} for p in it.preconditions]
                if it.loc in kept:
                    entry["kept"] = kept[it.loc]
                out.append(entry)
            elif isinstance(it, Wavefront):
                out.append({"kind": "wavefront", "line": it.loc.line, "column": it.loc.column,
                            "loops": list(it.iterators), "skew": list(it.skew), "tiles": list(it.tiles)})
                if it.hyperplane:
                    out[-1]["hyperplane"] = it.hyperplane
            else:
                o = queue.pop(0) if queue else None
                entry = _nest_dict(o) if o is not None else {}
                entry.update({"kind": "computation", "distributed": it.distributed})
                out.append(entry)
        return out
    return walk(items)


def emit_outcomes(outcomes: tuple[NestOutcome, ...], sink: DiagnosticSink) -> None:
    for o in outcomes:
        sink.emit(outcome_diagnostic(o))
        _emit_blocking(o, sink)
        for part in o.parts:
            if part.status != "transformed":
                sink.emit(outcome_diagnostic(part))
            elif _cost_note(part) or part.pinned or _exits_note(part):
                loops = " ".join(f"{_user_name(lp.iterator)}:{lp.combine.value}" for lp in part.nest.loops)
                sink.emit(Diagnostic(Severity.REMARK, "", part.nest.loc,
                                     f"computation {loops}{_cost_note(part)}{_pinned_note(part)}{_exits_note(part)}"))
            _emit_blocking(part, sink)
        if o.status == "kept" and o.nest.privatization:
            sink.emit(Diagnostic(Severity.NOTE, "not-privatizable", o.nest.loc,
                                 f"its temporaries cannot be private to each iteration: {o.nest.privatization}"))
        if o.status == "kept" and o.nest.data_bounds:
            sink.emit(Diagnostic(Severity.NOTE, "data-bounded-loops", o.nest.loc,
                                 "its outer loop cannot run in parallel around its inner loops whose bounds are read "
                                 f"from memory: {o.nest.data_bounds}"))
        if o.status == "kept" and o.nest.wavefront:
            sink.emit(Diagnostic(Severity.NOTE, "no-wavefront", o.nest.loc,
                                 f"its loops cannot run as a tiled wavefront: {o.nest.wavefront}"))


def _emit_blocking(o: NestOutcome, sink: DiagnosticSink) -> None:
    """What became of the nest's hand-blocked loops (``mdpoly.frontend.untile``): un-tiled (a
    remark, when its code runs), or kept blocked and why (a note)."""
    if o.nest.untiled and o.status == "transformed":
        sink.emit(Diagnostic(Severity.REMARK, "hand-blocked", o.nest.loc,
                             f"hand-blocked loops un-tiled: {o.nest.untiled}"))
    if o.nest.blocked:
        sink.emit(Diagnostic(Severity.NOTE, "hand-blocked", o.nest.loc,
                             f"hand-blocked loops kept blocked: {o.nest.blocked}"))


#: 2: ``schedule`` on scheduled nests, ``mdpoly_version`` and ``options``; 3: status
#: ``already-parallel`` (the user's OpenMP), entries for the nests inside a nest kept as a whole, ``cost`` on
#: computations.
SCHEMA_VERSION = 3


def report_dict(outcomes: tuple[NestOutcome, ...], options: Options | None = None) -> dict[str, Any]:
    """The ``--report`` document: versions, the options used (when given) and every nest."""
    nests = []
    for o in outcomes:
        entry = _nest_dict(o)
        if o.nest.schedule is not None and (o.parts or any(isinstance(i, PrivateLoop) for i in o.nest.schedule)
                                             or o.private_loops or schedule_wavefronts(o.nest.schedule)):
            entry["schedule"] = schedule_dict(o.nest.schedule, o.parts, o.regions, o.private_loops)
            if o.one_thread:
                entry["one_thread"] = o.one_thread
            if o.resident:   # GPU: the data kept on the device over each outermost host loop
                entry["device_data"] = [{"line": loc.line, "column": loc.column, "note": note}
                                        for loc, note in o.resident]
            if o.device_items:   # GPU: items that are no computation, run on the device
                entry["device_items"] = [{"line": loc.line, "column": loc.column, "note": note}
                                         for loc, note in o.device_items]
        nests.append(entry)
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "mdpoly_version": __version__}
    if options is not None:
        out["options"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(options).items()}
    out["nests"] = nests
    return out


def _nest_dict(o: NestOutcome) -> dict[str, Any]:
    n = o.nest
    out: dict[str, Any] = {
        "file": n.loc.file,
        "line": n.loc.line,
        "column": n.loc.column,
        "status": o.status,
        "reason": o.reason,
        "code": o.code,
        "loops": [{"iterator": lp.iterator, "extent": lp.extent, "combine": lp.combine.value} for lp in n.loops],
        "mdh": n.mdh.to_dsl() if n.mdh is not None else None,
        "target": o.target,
        "tuning": o.tuning,
    }
    if o.cost is not None:   # the cost model's decision (mdpoly.cost_model.CostDecision.to_report)
        out["cost"] = o.cost
    if o.limits is not None:   # GPU targets: the device limits the code was planned with
        out["limits"] = o.limits
    if o.pinned:   # the values its code has a specialised copy for
        out["specialised_for"] = list(o.pinned)
    if o.promised:   # the conditions its code has a copy promising to the compiler
        out["promised"] = list(o.promised)
    if o.ranks is not None:   # --mpi: the dimension split over the ranks, or why none
        out["mpi"] = o.ranks
    if o.devices is not None:   # --devices: the dimension split over the devices, or why none
        out["devices"] = o.devices
    if n.mdh is not None and n.mdh.preconditions:   # checked before each call; false: the original nest runs
        out["preconditions"] = [{"check": p.c_expr, "reason": p.reason, "otherwise": "original"}
                                for p in n.mdh.preconditions]
    if n.privatization:
        out["privatization"] = n.privatization
    if n.wavefront:
        out["wavefront"] = n.wavefront
    if n.data_bounds:
        out["data_bounds"] = n.data_bounds
    if n.untiled:
        out["untiled"] = n.untiled
    if n.blocked:
        out["blocked"] = n.blocked
    return out
