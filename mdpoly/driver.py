"""The transformation driver: ``transform(analysis, options, sink) -> (out_text, outcomes)``.

For every nest of a ``FileAnalysis``: kept when the front end kept it or it has too little work;
otherwise, for the target of ``options.target`` (``mdpoly.targets``): its parameters (tuned when
``options.tune``) -> ``target.lower`` -> ``target.check`` -> ``target.render``; then all
generated code is spliced into the original text. Returns the new text and one ``NestOutcome``
per nest, in order; diagnostics about the outcomes are the report's job.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from mdpoly.backends.base import GeneratedCode, TeamCode
from mdpoly.backends.device_schedule import DeviceItems, Pays, device_schedule_items, device_statements
from mdpoly.backends.devices import DEVICE_TARGETS, devices_note, render_for_devices
from mdpoly.backends.host_schedule import applied_pins, render_schedule_regions
from mdpoly.backends.mpi import wrap_for_ranks
from mdpoly.backends.openmp import preamble as openmp_preamble
from mdpoly.backends.residency import render_resident
from mdpoly.cost_model import (
    CostDecision,
    CostInputs,
    calibration,
    cost_inputs,
    decide,
    gains_on_one_thread,
    group_per_tile,
    guard_private_loops,
    min_phase_ops,
    one_thread_gain_extent,
)
from mdpoly.device_limits import planning_limits
from mdpoly.diagnostics import (
    CompilerBug,
    Diagnostic,
    DiagnosticSink,
    Severity,
    SourceLoc,
    UnsupportedInput,
)
from mdpoly.frontend.loop_types import math_text
from mdpoly.hybrid import (
    GPU_TARGETS,
    device_refused_host,
    guarded_hybrid,
    loses_at_every_size,
    on_the_host,
    plan_file,
    refused_by_device,
    with_device,
)
from mdpoly.ir.kernel import KernelPlan
from mdpoly.ir.mdh import Affine, MdhExpr, Precondition
from mdpoly.ir.nest import (
    ALREADY_PARALLEL,
    ORIGINAL_NEST,
    HostLoop,
    HostStatement,
    NestAnalysis,
    NestOutcome,
    PrivateLoop,
    ScheduleItem,
    TeamPragma,
    kept_status,
    schedule_computations,
    schedule_items_of,
    schedule_wavefronts,
)
from mdpoly.ir.plan import Plan
from mdpoly.ir.ranks import RankRefusal, RankSplit
from mdpoly.ir.residency import DeviceData
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.gpu import lower_gpu
from mdpoly.lower.heuristics import MIN_VECTOR_EXTENT
from mdpoly.lower.split import split_for_ranks
from mdpoly.options import Options, for_function
from mdpoly.profitability import reduction_in_host_loop, reductions_in_host_loops
from mdpoly.splice import ClauseInsert, Replacement, source_identifiers, splice
from mdpoly.targets import Target, target_named
from mdpoly.tuning.hook import choose
from mdpoly.tuning.tune import TuningResult

#: Prefixes of the names inside generated code (locals, kernels' helpers, GPU runtime statics):
#: a file that uses such a name itself (a macro could break generated code) is kept as written.
RESERVED_PREFIXES = ("mdp_", "MDP_")
#: the names of mdpoly's output that a program may use (residency across calls, README)
USER_API = frozenset({"MDP_RESIDENT_API", "mdp_resident_keep", "mdp_resident_release", "mdp_resident_invalidate"})


class _Analysis(Protocol):
    """What ``transform`` reads of the front end's result (``FileAnalysis``, frozen: read-only)."""

    @property
    def path(self) -> str: ...

    @property
    def source_text(self) -> str: ...

    @property
    def nests(self) -> tuple[NestAnalysis, ...]: ...

    @property
    def team_pragmas(self) -> tuple[TeamPragma, ...]: ...


def _kept(nest: NestAnalysis, code: str, reason: str) -> NestOutcome:
    if nest.openmp:   # --replace-omp: not replaced after all, the user's pragma stays
        return NestOutcome(nest=nest, status=ALREADY_PARALLEL, code=ALREADY_PARALLEL, target=None,
                           reason=f"the loop is annotated '#pragma {nest.openmp}', which stays: {reason}")
    return NestOutcome(nest=nest, status=kept_status(code), reason=reason, code=code, target=None)


def transform(analysis: _Analysis, options: Options,
              sink: DiagnosticSink | None = None) -> tuple[str, tuple[NestOutcome, ...]]:
    """Transform every profitable nest of ``analysis``; see the module docstring.

    :raises MdpolyError: for an unimplemented target.
    """
    target = target_named(options.target)
    outcomes: list[NestOutcome] = []
    reps: list[Replacement] = []
    used_names: set[str] = source_identifiers(analysis.source_text)   # fresh names only
    reserved = sorted(w for w in used_names if w.startswith(RESERVED_PREFIXES) and w not in USER_API)
    # GPU targets: nests where the device loses (set-up charged once per file) get the OpenMP target's code
    where = plan_file(analysis.nests, options, target.name, calibration(options.cost_calibration))
    for nest, device in zip(analysis.nests, where, strict=True):
        nest_options = for_function(options, nest.function)   # --size FUNC:NAME=VALUE
        if reserved and (nest.mdh is not None or nest.schedule is not None):
            outcomes.append(_kept(nest, "reserved-name", f"the file uses the identifier '{reserved[0]}'; names "
                                  f"starting with {' or '.join(repr(p) for p in RESERVED_PREFIXES)} are reserved for "
                                  "the code mdpoly generates"))
            continue
        nest_target = target if device is None or device.on_device else target_named("openmp")
        if nest.mdh is None and nest.schedule is not None:
            rep, outcome = _transform_schedule(nest, nest_target, nest_options, sink, used_names)
        else:
            code, outcome = _transform_nest(nest, nest_target, nest_options, sink, used_names)
            if code is None and device is None and loses_at_every_size(outcome, nest_target.name, options):
                code, host = _transform_nest(nest, target_named("openmp"), nest_options, sink, used_names)
                outcome = on_the_host(host, outcome)
            elif code is None and nest.mdh is not None and refused_by_device(outcome, nest_target.name, options):
                code, host = _transform_nest(nest, target_named("openmp"), nest_options, sink, used_names)
                outcome = device_refused_host(host, outcome) if code is not None else outcome
            rep = None if code is None else Replacement(nest.span, nest.function_line, code.call, code.definition,
                                                        code.preamble)
        outcomes.append(outcome if device is None else with_device(outcome, device))
        if rep is not None:
            reps.append(rep)
    clauses = () if reserved else _team_clauses(analysis, reps, options, sink)
    text = splice(analysis.source_text, reps, analysis.path, clauses)
    return text, tuple(outcomes)


def _team_clauses(analysis: _Analysis, reps: list[Replacement], options: Options,
                  sink: DiagnosticSink | None) -> tuple[ClauseInsert, ...]:
    """``num_threads(mdp_team())`` on each user's ``parallel for`` that stays in the output
    (``mdpoly.frontend.user_teams``), with a remark each; none under ``--omp-as-written``, nor in
    a GPU target's output that holds no OpenMP code of mdpoly's (the user's build may not enable OpenMP)."""
    if options.omp_as_written:
        return ()
    if options.target != "openmp" and not any("MDP_TEAM_H" in r.preamble for r in reps):
        return ()   # a GPU output without OpenMP code inside is built without -fopenmp (mdpoly-cc)
    out: list[ClauseInsert] = []
    preamble = openmp_preamble(("omp.h",))
    for tp in analysis.team_pragmas:
        if any(r.span.first_line <= tp.loc.line <= r.span.end_line for r in reps):
            continue   # replaced together with its nest (--replace-omp)
        out.append(ClauseInsert(tp.loc.line, tp.clause_column, " num_threads(mdp_team())", tp.function_line, preamble))
        if sink is not None:
            sink.emit(Diagnostic(Severity.REMARK, "run-time-team", tp.loc,
                                 f"the user's '#pragma omp {tp.directive}' gets a team size chosen at run time "
                                 "(num_threads(mdp_team()): the cores other processes leave free, at most "
                                 "OMP_NUM_THREADS); --omp-as-written leaves it as written"))
    return tuple(out)


def _cost(nest: NestAnalysis, target: Target[Any, Any], options: Options, in_host_loop: bool) -> CostDecision:
    """The cost model's decision on ``nest`` (an MDH computation) for ``target``."""
    assert nest.mdh is not None
    forced = "--all-nests" if options.all_nests else "#pragma mdh" if nest.requested else ""
    return decide(cost_inputs(nest.mdh, dict(options.sizes), target.name, in_host_loop, forced),
                  calibration(options.cost_calibration))


def _guarded(mdh: MdhExpr, cost: CostDecision) -> MdhExpr:
    """``mdh`` with the cost model's run-time guard first among its preconditions (none: as is).
    Not for a computation split over ranks or devices: every rank must take the same branch."""
    pre = cost.precondition()
    return mdh if pre is None else replace(mdh, preconditions=(pre, *mdh.preconditions))


#: Generated OpenMP code that cannot beat the nest as written on one thread (no tiled reduction,
#: register blocks or reordered loops: ``gains_on_one_thread``) runs only with a team of two or more
#: (``mdp_team()``, the preamble's run-time team size: OMP_NUM_THREADS=1, or every other core busy);
#: otherwise the nest as written runs. Not inside host loops, whose regions choose their team themselves.
ONE_THREAD = Precondition("mdp_team() > 1", "a team of two or more threads (with one, the nest as written is faster)")


#: The team that repays generated code whose vector loop is short (``one_thread_gain_extent``):
#: a vertical blur over 3 interleaved channels, its taps outside the 3-point vector loop, ran
#: 2-3.5x slower per thread than the nest as written (whose taps gcc unrolls): 0.67x sequential
#: on 2 threads, 2.8x on 16 (16-core Xeon).
SHORT_VECTOR_TEAM = 4


def _short_vector_needs(extent: Affine) -> Precondition:
    """A vector loop long enough to gain (``one_thread_gain_extent``), or a team that repays it."""
    return Precondition(f"mdp_team() >= {SHORT_VECTOR_TEAM} || {math_text(extent)} >= {MIN_VECTOR_EXTENT}",
                        f"{MIN_VECTOR_EXTENT} or more points of the vector loop, or a team of {SHORT_VECTOR_TEAM} or "
                        "more threads (with a shorter loop, the nest as written is up to 3.5x faster per thread)")


def _transform_nest(nest: NestAnalysis, target: Target[Any, Any], options: Options, sink: DiagnosticSink | None,
                    used_names: set[str], in_host_loop: bool = False) -> tuple[GeneratedCode | None, NestOutcome]:
    """One band: its generated code and outcome, or ``None`` and why it is kept (the cost model
    says it does not pay; ``in_host_loop``: it runs once per iteration of host loops around it)."""
    if nest.mdh is None:
        kept = nest.kept
        return None, _kept(nest, kept.code if kept else "unsupported", kept.message if kept else "not an MDH computation")
    cost = _cost(nest, target, options, in_host_loop)
    if not cost.parallel:
        return None, replace(_kept(nest, "too-little-work", f"too little work: {cost.reason}{_sizes_note(nest.mdh)}"),
                             cost=cost.to_report(), cost_text=cost.text())
    mdh = nest.mdh
    name, k = mdh.name, 1
    while name in used_names:
        k += 1
        name = f"{mdh.name}_{k}"
    used_names.add(name)
    if name != mdh.name:
        mdh = replace(mdh, name=name)
    tuning = None
    split = split_for_ranks(mdh) if options.mpi else None   # --mpi: one dimension over the ranks
    on_devices = options.devices is not None and target.name in DEVICE_TARGETS
    if on_devices:   # --devices: one dimension over the devices, with the same slice model
        split = split_for_ranks(mdh)
    original_options = options
    if isinstance(split, RankSplit):
        mdh = split.sliced   # a reduction's per-rank outputs are partial results: not comparable, not tuned
        options = replace(options, tune=False) if split.kind == "reduction" else options
    try:
        plain = None
        if on_devices and isinstance(split, RankSplit):
            plain, params, caps, tuning = _plain_for_devices(nest, target, split, original_options, sink, used_names)
            if target.violations(mdh, params, caps):   # not valid for the slice: its own parameters
                params, caps, tuning = choose(target, nest, mdh, options, sink)
        else:
            params, caps, tuning = choose(target, nest, mdh, options, sink)
        if on_devices and isinstance(split, RankSplit) and target.lower is lower_gpu:
            plan = lower_gpu(mdh, params, caps, within=split.original)   # the whole computation's index type
        else:
            plan = target.lower(mdh, params, caps)
        kept_note = ""
        if isinstance(plan, KernelPlan) and nest.keep:   # #pragma mdh resident(...)
            plan, kept_note = _keep(plan, nest.keep)
        if split is None:   # the run-time guard: at the call, and (OpenMP) the team's condition inside
            if isinstance(plan, Plan):
                gains = gains_on_one_thread(plan)
                cost = cost.for_plan(gains)
                plan = replace(plan, parallel_if=cost.parallel_if or "", pinned=_pins_of(plan, nest),
                               nonnegative=_nonnegative_of(plan, nest))
                if not gains and not in_host_loop and cost.choice != "forced":
                    plan = replace(plan, mdh=replace(plan.mdh, preconditions=(ONE_THREAD, *plan.mdh.preconditions)))
                extent = one_thread_gain_extent(plan) if gains else None
                if extent is not None and not in_host_loop and cost.choice != "forced":
                    plan = replace(plan, mdh=replace(plan.mdh, preconditions=(_short_vector_needs(extent),
                                                                              *plan.mdh.preconditions)))
            plan = replace(plan, mdh=_guarded(plan.mdh, cost))
        target.check(plan, caps)
        if on_devices and isinstance(split, RankSplit) and options.devices is not None:
            code = render_for_devices(plan, split, target.name, options.devices, plain)
        else:
            code = target.render(plan, caps)
        if isinstance(split, RankSplit) and not on_devices:
            code = wrap_for_ranks(code, split, user_init=bool(used_names & {"MPI_Init", "MPI_Init_thread"}))
    except UnsupportedInput as err:
        return None, _kept(nest, err.code, err.message)
    except CompilerBug as err:
        return None, _kept(nest, err.code, f"internal error, nest kept: {err.message}")
    report, text = cost.to_report(), cost.text()
    if cost.choice == "guarded" and target.name in GPU_TARGETS and split is None and not in_host_loop:
        # a call too small for the device runs the OpenMP target's code (itself guarded), not the nest as written
        host, host_outcome = _transform_nest(nest, target_named("openmp"), original_options, sink, used_names)
        if host is not None:
            code = guarded_hybrid(code, host)
            report = {**report, "host": host_outcome.cost}
            text += f"; otherwise on the host (OpenMP{', ' + host_outcome.cost_text if host_outcome.cost_text else ''})"
    return code, NestOutcome(nest=nest, status="transformed", reason=None, code=None, target=target.name,
                             tuning=tuning.to_report() if tuning is not None else None,
                             ranks=split.note if split is not None and not on_devices else None,
                             devices=_devices_note(split, "mdp_resident_keep" in used_names or bool(nest.keep))
                             if split is not None and on_devices else None,
                             resident=((nest.loc, kept_note),) if kept_note else (),
                             cost=report, cost_text=text,
                             limits=planning_limits(target, options).to_report() if target.limits else None,
                             pinned=_pinned_shown(plan), promised=_promised_shown(plan))


def _keep(plan: KernelPlan, names: tuple[str, ...]) -> tuple[KernelPlan, str]:
    """``plan`` keeping on the device, between calls, those of ``names`` that it reads and does
    not write (``#pragma mdh resident(...)``), and the remark's words on what it keeps."""
    buffers = {b.name: b for b in plan.buffers if b.role == "global"}
    keep = tuple(n for n in names if n in buffers and not buffers[n].written)
    words = [f"{', '.join(keep)} kept on the device between calls (#pragma mdh resident)"] if keep else []
    words += [f"'{n}' not kept: the computation writes it" for n in names if n in buffers and buffers[n].written]
    return replace(plan, keep=keep), "; ".join(words)


def _devices_note(split: RankSplit | RankRefusal, keeps: bool) -> str:
    """``devices_note``, and where the program keeps arrays on the device between calls
    (``keeps``), that a split computation copies them at each call all the same."""
    note = devices_note(split)
    if isinstance(split, RankSplit) and keeps:
        note += ("; arrays kept with mdp_resident_keep or #pragma mdh resident stay on the device when the call runs on one device, but "
                 "are copied at each call when it is split over several (each device holds its own part)")
    return note


def _plain_for_devices(nest: NestAnalysis, target: Target[Any, Any], split: RankSplit, options: Options,
                       sink: DiagnosticSink | None, used_names: set[str]) -> tuple[
        tuple[Any, GeneratedCode] | None, Any, TargetCaps, TuningResult | None]:
    """``--devices``: the plan and code of the whole computation as the build without ``--devices``
    makes them (its parameters, under a fresh name; the code a one-slot run calls), or ``None``
    when that computation cannot be generated on its own; and those parameters, their caps and
    tuning result (the slices' kernels use them where they are valid for a slice)."""
    params, caps, tuning = choose(target, nest, split.original, options, sink)
    name, k = f"{split.original.name}_one", 1
    while name in used_names:
        k += 1
        name = f"{split.original.name}_one{k}"
    try:
        plan = target.lower(replace(split.original, name=name), params, caps)
        target.check(plan, caps)
        code = target.render(plan, caps)
    except (UnsupportedInput, CompilerBug):
        return None, params, caps, tuning
    used_names.add(name)
    return (plan, code), params, caps, tuning


def _device_loop_pays(target: Target[Any, Any], options: Options, nest: NestAnalysis) -> Pays:
    """The cost model's verdict on a parallel loop run on the device (two operations per statement
    instance): ``""`` when it pays or is requested, else why not."""
    forced = "--all-nests" if options.all_nests else "#pragma mdh" if nest.requested else ""

    def pays(work: int | None, nbytes: int | None, in_host_loop: bool) -> str:
        if work is None:
            return ""   # sizes known at run time only: it runs on the device, as inside host loops
        cost = decide(CostInputs(target.name, 2 * work, nbytes, "", 2, in_host_loop=in_host_loop, forced=forced))
        return "" if cost.parallel else f"too little work: {cost.reason}"
    return pays


def _add_items(items: DeviceItems, calls: dict[int, str], data: dict[int, DeviceData], definitions: list[str],
               preambles: list[str]) -> None:
    """Adds the device items' calls, buffers, definitions and runtime to a schedule's."""
    for item_id, item in items.codes.items():
        calls[item_id], data[item_id] = item.call, item.device_data
        definitions.append(item.definition)
        if item.preamble not in preambles:
            preambles.append(item.preamble)


def _kept_reduction(nest: NestAnalysis, why: str) -> NestOutcome:
    d = reduction_in_host_loop(nest, why)
    return _kept(replace(nest, kept=d), d.code, d.message)


def _transform_schedule(nest: NestAnalysis, target: Target[Any, Any], options: Options, sink: DiagnosticSink | None,
                        used_names: set[str]) -> tuple[Replacement | None, NestOutcome]:
    """A scheduled nest: every computation generated on its own, the host loops kept around them.

    The nest counts as transformed when at least one computation is; its replacement text is the
    schedule with each transformed computation's call (whose run-time-check fallback is that
    computation's own text) and every other part as written."""
    assert nest.schedule is not None
    calls: dict[int, str] = {}
    teams: dict[int, TeamCode] = {}
    data: dict[int, DeviceData] = {}   # GPU computations: what they keep on the device
    own: dict[int, str] = {}  # definitions a region may leave uncalled: index -> function name
    parts: list[NestOutcome] = []
    definitions: list[str] = []
    preambles: list[str] = []
    # the GPU API whose device code the schedule's own items get ("": none)
    api = "" if options.mpi or options.devices is not None else target.name
    # reductions parallel only along their reduction loops: only with the team of a region around them;
    # GPU targets launch them as device reductions on the loop's resident data instead
    region_only = frozenset() if api in ("opencl", "cuda") else reductions_in_host_loops(nest.schedule)
    no_region = ("" if target.name == "openmp" and not options.mpi and options.devices is None
                 else f"and the {target.name} target has no parallel region around it")
    index: dict[int, int] = {}  # id(computation) -> its outcome's position in ``parts``
    looped = {id(c) for it in nest.schedule if isinstance(it, HostLoop) for c in schedule_computations(it.body)}
    per_call: set[int] = set()  # computations whose run-time guard decides per call: no region around them
    for comp in schedule_computations(nest.schedule):
        index[id(comp)] = len(parts)
        if id(comp) in region_only and no_region:
            parts.append(_kept_reduction(comp.nest, no_region))
            continue
        code, outcome = _transform_nest(comp.nest, target, options, sink, used_names, id(comp) in looped)
        parts.append(outcome)
        if code is None:
            continue
        if outcome.cost is not None and outcome.cost.get("choice") == "guarded":
            per_call.add(id(comp))
        if id(comp) in region_only and (code.team is None or code.team.kind != "shared"):
            parts[-1] = _kept_reduction(comp.nest, "and its reduction is not shared by the threads of a region")
            continue
        calls[id(comp)] = code.call.replace(ORIGINAL_NEST, comp.nest.reference_c.rstrip())
        definitions.append(code.definition)
        if code.team is not None:
            teams[id(comp)] = code.team
            own[len(definitions) - 1] = code.name
        if code.device_data is not None:
            data[id(comp)] = code.device_data
        if code.preamble and code.preamble not in preambles:
            preambles.append(code.preamble)
    cal = calibration(options.cost_calibration)
    device_items = device_schedule_items(nest, api, used_names, _device_loop_pays(target, options, nest),
                                         lambda wave: group_per_tile(wave, cal))
    _add_items(device_items, calls, data, definitions, preambles)
    min_work = 0 if options.all_nests or nest.requested else min_phase_ops(1, calibration(options.cost_calibration))
    items = guard_private_loops(nest.schedule, min_work) if target.name == "openmp" else nest.schedule
    rendered = render_schedule_regions(items, calls, teams, openmp=target.name == "openmp",
                                       min_work=min_work,
                                       region_only=region_only, per_call=frozenset(per_call))
    rendered = replace(rendered, private=device_items.statuses(rendered.private))
    for cid in rendered.outside:
        parts[index[cid]] = _kept_reduction(parts[index[cid]].nest, "and that loop is no parallel region")
        del calls[cid]
    if not calls and not rendered.private_loops and not rendered.wavefronts:
        small = [p for p in parts if p.code == "too-little-work"]
        if rendered.small or small:
            outer = next((f"; loop '{it.iterator}' around it runs as written: {it.reason}" for it in items
                          if isinstance(it, HostLoop) and it.reason), "")
            return None, _kept(nest, "too-little-work", (small[0].reason if small and small[0].reason else
                                                         _small_loops_reason(items, min_work)) + outer)
        if rendered.private:   # GPU: a PrivateLoop's body (sequential loops, private copies) stays on the host
            costly = [r for _, r in device_items.refusals if r.startswith("too little work")]
            if costly and len(costly) == len(device_items.refusals):
                return None, _kept(nest, "too-little-work", costly[0])
            why = f" (on the device: {device_items.refusals[0][1]})" if device_items.refusals else ""
            return None, _kept(nest, "sequential-body", "its parallel loops run their bodies as written (sequential "
                               f"inner loops or private temporaries), which only the OpenMP target does in parallel{why}")
        waves = schedule_wavefronts(nest.schedule)
        if waves:   # GPU: the device translation refused it (or no GPU API: --mpi, --devices)
            at = {w.loc for w in waves}
            why = next((r for loc, r in device_items.refusals if loc in at),
                       f"the {target.name} target has no device form of it here")
            return None, _kept(nest, "wavefront-openmp-only", "its wavefront runs in parallel on the OpenMP "
                               f"target only (on the device: {why})")
        kept = nest.kept
        return None, _kept(nest, kept.code if kept else "unsupported", kept.message if kept else "not scheduled")
    resident: tuple[tuple[SourceLoc, str], ...] = ()
    # GPU: host statements and kept computations on resident arrays as kernels of their own
    statements = device_statements(nest, api, calls, data, used_names)
    _add_items(statements, calls, data, definitions, preambles)
    device_items = device_items.merged(statements)
    if target.name in ("opencl", "cuda") and calls:   # data kept on the device over host loops
        refused = ("--mpi: each rank's call gathers its results on the host" if options.mpi else
                   "--devices: each device holds its own copies" if options.devices is not None else "")
        text, resident = render_resident(nest.schedule, calls, data, target.name, refused)
        rendered = replace(rendered, text=text)
    if "mdp_team()" in rendered.text and not any("MDP_TEAM_H" in p for p in preambles):
        preambles.append(openmp_preamble(("omp.h",)))   # a region, private loop or wavefront's team size
    definitions = [d for k, d in enumerate(definitions) if k not in own or own[k] + "(" in rendered.text]
    definitions.extend(rendered.definitions)
    outcome = NestOutcome(nest=replace(nest, schedule=items), status="transformed", reason=None, code=None,
                          target=target.name,
                          parts=tuple(parts), regions=rendered.regions if teams or rendered.private_loops or rendered.wavefronts else (),
                          resident=resident, private_loops=rendered.private, device_items=device_items.notes)
    if target.name == "openmp":
        outcome = replace(outcome, pinned=_loop_pins_shown(items, rendered.regions))
    text = rendered.text
    conditions: list[str] = []
    notes: list[str] = []
    if _one_thread_runs_original(nest, target, options, parts, items):
        conditions.append("mdp_team() > 1")
        notes.append("when the team has one thread")
        if not any("MDP_TEAM_H" in p for p in preambles):
            preambles.append(openmp_preamble(("omp.h",)))
    work = _schedule_work_guard(nest, target, options, parts, items)
    if work is not None:
        conditions.append(work)
        notes.append("when no computation of it has the work to run in parallel (its split parts would only "
                     "add passes)")
    if conditions:
        text = f"if ({' && '.join(conditions)})\n{text}\nelse\n{{\n{ORIGINAL_NEST}\n}}"   # the splicer's copy
        outcome = replace(outcome, one_thread="the nest as written runs " + " or ".join(notes))
    return (Replacement(nest.span, nest.function_line, text, "\n".join(definitions), "\n".join(preambles)),
            outcome)


def _sizes_note(mdh: MdhExpr) -> str:
    """`` (with the sizes the file sets: km->k = 16)``: the values of size parameters the cost model
    took from the file (call sites, member stores), as the user wrote them."""
    exprs = {b.name: b.c_value or b.name for b in mdh.buffers}
    known = [f"{exprs.get(n, n)} = {v}" for n, v in mdh.params if v is not None]
    return f" (with the sizes the file sets: {', '.join(known)})" if known else ""


def _small_loops_reason(items: tuple[ScheduleItem, ...], min_work: int) -> str:
    """Why a schedule's parallel loops (``PrivateLoop``) all run as written: the first one's work."""
    for loop in schedule_items_of(items, PrivateLoop):
        if loop.work is not None and 2 * loop.work < min_work:
            return (f"too little work: {2 * loop.work} operations per call do not repay 1 thread "
                    f"synchronization(s) (at least {min_work} do)")
    return "too little work"


def _pinned_shown(plan: Plan | KernelPlan) -> tuple[str, ...]:
    """``plan``'s pinned values as the report shows them (``km->dim == 4``)."""
    if not isinstance(plan, Plan):
        return ()
    exprs = {b.name: b.c_value or b.name for b in plan.params}
    return tuple(f"{exprs[n]} == {lit}" for n, lit in plan.pinned)


def _promised_shown(plan: Plan | KernelPlan) -> tuple[str, ...]:
    """``plan``'s promised conditions (``Plan.nonnegative``) as the report shows them (``cfg->eps >= 0``)."""
    if not isinstance(plan, Plan):
        return ()
    exprs = {b.name: b.c_value or b.name for b in plan.params}
    return tuple(f"{exprs[n]} >= 0" for n in plan.nonnegative)


def _loop_pins_shown(items: tuple[ScheduleItem, ...], regions: tuple[tuple[SourceLoc, str], ...]) -> tuple[str, ...]:
    """The pinned values the schedule's parallel loops have specialised copies for (``applied_pins``;
    a loop inside a host loop that became a parallel region keeps fewer)."""
    in_region = {loc for loc, why in regions if not why}
    out: list[str] = []
    for it in items:
        region = isinstance(it, HostLoop) and it.loc in in_region
        for loop in schedule_items_of((it,), PrivateLoop):
            out += [f"{expr} == {lit}" for _, lit, expr in applied_pins(loop, region)]
    return tuple(dict.fromkeys(out))


def _pins_of(plan: Plan, nest: NestAnalysis) -> tuple[tuple[str, str], ...]:
    """The pinned values (``NestAnalysis.pinned``) of ``plan``'s read-only scalar parameters."""
    read = {b.name for b in plan.params if b.kind == "scalar" and not b.written}
    return tuple((name, literal) for name, literal in nest.pinned if name in read)


def _nonnegative_of(plan: Plan, nest: NestAnalysis) -> tuple[str, ...]:
    """The scalars of ``NestAnalysis.nonnegative``, when every one is a read-only scalar parameter
    of ``plan`` (a promise about a name the function does not take could not be checked)."""
    read = {b.name for b in plan.params if b.kind == "scalar" and not b.written}
    return nest.nonnegative if set(nest.nonnegative) <= read else ()


_C_WORDS = frozenset({"double", "float", "long", "int", "unsigned", "short", "char", "signed", "sizeof", "size_t"})


def _schedule_work_guard(nest: NestAnalysis, target: Target[Any, Any], options: Options, parts: list[NestOutcome],
                         items: tuple[ScheduleItem, ...]) -> str | None:
    """The C condition under which a scheduled nest's code can run anything in parallel, to be
    tested once before the nest (``None``: always, or not decidable there): the disjunction of
    its computations' run-time work guards, when every transformed part is such a guarded
    computation and the schedule has no other parallel item. Each guard must read only names
    the nest leaves alone (no iterator of its host loops, nothing its statements or computations
    write), so its value before the nest is its value at every call inside. Where none holds,
    each computation would run its own loops as written, the statements split apart by the
    schedule as separate passes: the nest as written does the same work in one."""
    if target.name != "openmp" or options.mpi or options.devices is not None or options.all_nests or nest.requested:
        return None
    if schedule_wavefronts(items):
        return None
    if schedule_items_of(items, PrivateLoop):
        return None
    done = [p for p in parts if p.status == "transformed"]
    if not done or any(p.cost is None or p.cost.get("choice") != "guarded" or not p.cost.get("guard") for p in done):
        return None
    changed: set[str] = {it.iterator for it in schedule_items_of(items, HostLoop)}
    for st in schedule_items_of(items, HostStatement):
        changed |= source_identifiers(st.text)
    for p in parts:
        if p.nest.mdh is not None:
            changed |= {b.name for b in p.nest.mdh.buffers if b.written}
            changed |= {b.c_value for b in p.nest.mdh.buffers if b.written and b.c_value}
    guards = list(dict.fromkeys(str(p.cost["guard"]) for p in done if p.cost is not None))
    if any((source_identifiers(g) - _C_WORDS) & changed for g in guards):
        return None
    either = " || ".join(f"({g})" for g in guards)
    return f"({either})" if len(guards) > 1 else either   # one operand of the conditions' '&&'


def _one_thread_runs_original(nest: NestAnalysis, target: Target[Any, Any], options: Options,
                              parts: list[NestOutcome], items: tuple[ScheduleItem, ...]) -> bool:
    """Whether a scheduled nest's OpenMP code should give way to the nest as written when the
    run-time team has one thread: none of its generated computations beats the nest as written
    on one thread (``gains_on_one_thread``), and it has no blocked parallel loop and no tiled
    wavefront that writes elements again (a time loop's sweeps, whose tiles reuse the cache), which
    may; the same rule as ``ONE_THREAD`` for a nest of one computation, which a schedule's
    computations cannot apply themselves inside host loops."""
    if target.name != "openmp" or options.mpi or options.devices is not None or options.all_nests or nest.requested:
        return False
    if any(w.revisits for w in schedule_wavefronts(items)) or any(p.blocked for p in schedule_items_of(items, PrivateLoop)):
        return False
    done = [p for p in parts if p.status == "transformed"]
    return all(p.cost is not None and p.cost.get("gains_on_one_thread") is False for p in done)
