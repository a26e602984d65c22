"""The front end's entry point: C file path + ``Options`` -> ``FileAnalysis``.

For every candidate nest: extract the ``Scop``, classify its loops, check a ``#pragma mdh``
annotation, and build the ``MdhExpr`` -- or record, located, why the nest is kept as written.
``islpy.Error`` never escapes: it becomes a located ``UnsupportedInput`` for its nest. A nest
under the user's OpenMP is kept unless mdpoly may replace it (``mdpoly.frontend.omp_policy``).
Every nest is explained: when a nest is kept as a whole (no schedule of computations inside
it), the nests inside it are analysed as candidates of their own -- all but the one that holds
the reason it is kept, whose inner nests are, recursively (``inner_candidates``).
"""

from __future__ import annotations

import re
from dataclasses import replace

import islpy as isl
from pycparser import c_generator

from mdpoly.diagnostics import Diagnostic, DiagnosticSink, Severity, UnsupportedInput
from mdpoly.frontend.call_sizes import AssignedNames, call_site_sizes
from mdpoly.frontend.deps import Deps, analyze_dependences
from mdpoly.frontend.nest_span import function_start_line, nest_span
from mdpoly.frontend.normalize import respelled
from mdpoly.frontend.omp_policy import omp_policy, proven_parallel
from mdpoly.frontend.parse import ParsedFile, parse_c, pragma_text
from mdpoly.frontend.pinned_values import pinned_values
from mdpoly.frontend.pragmas import check_annotation, kept_arrays, parse_annotation
from mdpoly.frontend.schedule import scheduled
from mdpoly.frontend.scop import (
    Candidate,
    candidate_symbols,
    extract_scop,
    find_candidates,
    inner_candidates,
    loc_of,
    loop_headers,
    return_type_loc,
    stray_mdh_pragmas,
)
from mdpoly.frontend.sqrt_domains import nonnegative_needs
from mdpoly.frontend.to_mdh import build_mdh
from mdpoly.frontend.untile import Untiled, untiled
from mdpoly.frontend.user_teams import team_pragmas
from mdpoly.ir.mdh import Combine, MdhExpr, Precondition
from mdpoly.ir.nest import Computation, FileAnalysis, HostLoop, LoopSummary, NestAnalysis, PrivateLoop, ScheduleItem
from mdpoly.ir.scop import Scop
from mdpoly.options import Options, for_function


def analyze_file(path: str, options: Options, sink: DiagnosticSink | None = None) -> FileAnalysis:
    """Parse ``path`` and analyse each candidate nest.

    :raises InputError: the file cannot be read, preprocessed or parsed.
    :raises DependenceError: a ``#pragma mdh`` annotation contradicts the analysis.
    """
    parsed = parse_c(path, options)
    nests: list[NestAnalysis] = []
    candidates = find_candidates(parsed, options)
    if sink is not None:
        for p in stray_mdh_pragmas(parsed, candidates):
            sink.emit(Diagnostic(Severity.WARNING, "stray-pragma", loc_of(p), f"'#pragma {pragma_text(p)}' is not "
                                 "directly before a 'for' loop (only pragmas that apply to the loop may stand between); it is ignored"))
    for cand in candidates:
        nests.extend(analyze_tree(parsed, cand, for_function(options, cand.function)))
    return FileAnalysis(path, parsed.source_text, tuple(nests), team_pragmas(parsed))


#: Reasons under which the nests inside a kept nest are not analysed: they run under the user's OpenMP.
_NO_DESCENT = frozenset({"already-parallel", "in-omp-region"})


def analyze_tree(parsed: ParsedFile, cand: Candidate, options: Options) -> list[NestAnalysis]:
    """The analysis of ``cand``, then -- when it is kept as a whole -- of the nests inside it."""
    nest = _pinned(parsed, cand, analyze_nest(parsed, cand, options))
    out = [nest]
    if nest.mdh is None and nest.schedule is None and nest.kept is not None and nest.kept.code not in _NO_DESCENT:
        for inner in inner_candidates(cand, nest.kept.loc):
            out.extend(analyze_tree(parsed, inner, options))
    return out


def analyze_nest(parsed: ParsedFile, cand: Candidate, options: Options) -> NestAnalysis:
    """The ``NestAnalysis`` of one candidate (``mdh`` set, or ``kept`` with a located reason, and
    then the schedule of host loops and computations inside it, when there is one)."""
    policy = omp_policy(cand, options.replace_omp)
    if policy.held is not None:
        return analyze_band(parsed, cand, options, held=policy.held)
    # a pragma the loop's replacement must take along, but that shares the loop's line (a macro
    # such as ``PFOR for (...)``, or ``_Pragma``): the splice replaces whole pragma lines only
    inline = next((p for p in cand.pragmas if loc_of(p).line == cand.loc.line), None)
    if inline is not None:
        return analyze_band(parsed, cand, options, held=UnsupportedInput(
            f"'#pragma {pragma_text(inline)}' comes from a macro or '_Pragma' on the loop's line: mdpoly cannot "
            "replace the loop without it", cand.loc, "already-parallel" if policy.on_loop else "pragma-on-loop-line"))
    if policy.replaces:   # the user's OpenMP goes only for one computation proven parallel
        whole = analyze_band(parsed, replace(cand, omp_pragma=None), options)
        refusal = proven_parallel(policy, cand, whole)
        if refusal is not None:
            return analyze_band(parsed, cand, options, held=refusal)
        return replace(whole, openmp=pragma_text(policy.replaces[0]) if policy.on_loop else "")
    whole = analyze_band(parsed, cand, options)
    nest = scheduled(parsed, cand, whole, lambda band: analyze_band(parsed, band, options), dict(options.sizes),
                       options.strict_fp)
    if nest.schedule is None:
        return nest
    names = {w for h in schedule_headers(nest.schedule) for w in re.findall(r"[A-Za-z_]\w*", h)}
    return replace(nest, host_sizes=tuple(sorted(call_site_sizes(parsed.ast, cand.func, sorted(names)).items())))


def _pinned(parsed: ParsedFile, cand: Candidate, nest: NestAnalysis) -> NestAnalysis:
    """``nest`` with the values the file pins for the scalars its generated code reads
    (``mdpoly.frontend.pinned_values``): its computation's read-only scalars, and in a schedule
    each computation's and each parallel loop's (their function's parameters and the struct
    members they read; no name declared inside the nest, which a specialised copy could not see)."""
    declared = AssignedNames()
    declared.visit(cand.node)
    inside = set(declared.inits)

    def of_computation(n: NestAnalysis) -> NestAnalysis:
        if n.mdh is None:
            return n
        sources = {b.name: b.c_value or b.name for b in n.mdh.buffers if b.kind == "scalar" and not b.written}
        pins = pinned_values(parsed.ast, cand.func, sources)
        needs = nonnegative_needs(n.mdh)
        n = replace(n, nonnegative=needs) if needs else n
        return replace(n, pinned=tuple(sorted(pins.items()))) if pins else n

    def of_loop(loop: PrivateLoop) -> PrivateLoop:
        members = dict(loop.values)   # names the function assigns anywhere are never pinned (``pinned_values``)
        names = set(re.findall(r"(?<![\w.>])[A-Za-z_]\w*", loop.text)) - inside - set(members)
        pins = pinned_values(parsed.ast, cand.func, {**members, **{w: w for w in names}})
        return replace(loop, pinned=tuple(sorted(pins.items()))) if pins else loop

    def of_items(items: tuple[ScheduleItem, ...]) -> tuple[ScheduleItem, ...]:
        out: list[ScheduleItem] = []
        for it in items:
            if isinstance(it, HostLoop):
                it = replace(it, body=of_items(it.body))
            elif isinstance(it, Computation):
                it = replace(it, nest=of_computation(it.nest))
            elif isinstance(it, PrivateLoop):
                it = of_loop(it)
            out.append(it)
        return tuple(out)

    nest = of_computation(nest)
    return replace(nest, schedule=of_items(nest.schedule)) if nest.schedule is not None else nest


def schedule_headers(items: tuple[ScheduleItem, ...]) -> list[str]:
    """The headers of every host loop of a schedule, nested ones included."""
    out: list[str] = []
    for it in items:
        if isinstance(it, HostLoop):
            out += [it.header, *schedule_headers(it.body)]
    return out


def analyze_band(parsed: ParsedFile, cand: Candidate, options: Options,
                 held: UnsupportedInput | None = None) -> NestAnalysis:
    """The ``NestAnalysis`` of one candidate as a single band (no schedule); ``held``: the nest
    is kept for this reason, unanalysed.

    A nest with hand-blocked loops (``mdpoly.frontend.untile``) is analysed un-tiled first
    (constant block sizes around a reduction stay blocked: tiles of known extents). That
    analysis stands when it is a computation whose point loops all are ``++`` or reductions:
    every dependence then joins two instances of the same point, or is a reduction's own, which
    the tiles' order only reassociates (what reductions already allow; ``--strict-fp`` makes a
    floating-point sum sequential, and so keeps it blocked). Else the nest is analysed as
    written, blocked, and ``blocked`` says why. A nest under pragmas of its own (``#pragma mdh``,
    the user's OpenMP) is analysed as written: they describe its loops as they are."""
    if held is None and not cand.pragmas and cand.pragma is None and cand.omp_pragma is None:
        found = untiled(cand, candidate_symbols(parsed, cand))
        if found is not None:
            flat = _band_analysis(parsed, found.cand, options, preconditions=found.preconditions)
            why = _untiling_refusal(flat, found)
            if why is None and not found.preconditions and any(
                    lp.iterator in found.points and lp.combine.is_reduction for lp in flat.loops):
                # constant block sizes around a reduction: each tile is a computation of known
                # extents (packed panels, register blocks), the whole ranges may be run-time ones (a
                # blocked SGEMM ran at 0.18x of sequential un-tiled, 1.23x tiled, one thread, 16-core host)
                why = ("its tiles are reductions of constant extents, which run packed and register-blocked; "
                       "un-tiled, the extents could be known at run time only")
            if why is None:
                return replace(flat, untiled=_untiled_note(flat, found))
            return replace(_band_analysis(parsed, cand, options), blocked=f"{found.describe()}: {why}")
    return _band_analysis(parsed, cand, options, held)


def _untiling_refusal(flat: NestAnalysis, found: Untiled) -> str | None:
    """Why the un-tiled analysis ``flat`` of ``found`` may not replace the blocked nest, or None."""
    if flat.mdh is None:
        reason = flat.kept.message if flat.kept is not None else "not analysed"
        return f"un-tiled, the nest would not be one computation ({reason})"
    for lp in flat.loops:
        if lp.iterator in found.points and lp.combine is not Combine.CONCAT and not lp.combine.is_reduction:
            return f"un-tiled, loop '{lp.iterator}' would be {lp.combine.value}"
        if lp.iterator in found.points and lp.combine.is_arg and not found.same_order:   # ties: the first in order
            return (f"un-tiled, loop '{lp.iterator}' would be an {lp.combine.value}, whose ties the order of the "
                    "tiles decides")
    return None


def _untiled_note(flat: NestAnalysis, found: Untiled) -> str:
    """The remark's text: which loops run un-tiled, as what, and under which run-time check."""
    dims = " ".join(f"{lp.iterator}:{lp.combine.value}" for lp in flat.loops if lp.iterator in found.points)
    checks = " && ".join(p.c_expr for p in found.preconditions)
    when = f", when {checks} (else as written)" if checks else ""
    return (f"{found.describe()} run over their whole ranges ({dims}: the order of the tiles changes no "
            f"result){when}")


def _band_analysis(parsed: ParsedFile, cand: Candidate, options: Options, held: UnsupportedInput | None = None,
                   preconditions: tuple[Precondition, ...] = ()) -> NestAnalysis:
    """``analyze_band`` of ``cand`` as it is; ``preconditions``: run-time conditions its model
    needs besides its own (an un-tiled nest's positive block sizes)."""
    # the loop's own pragmas (#pragma mdh, OpenMP loop directives) go with it when it is replaced
    first = cand.pragmas[0] if cand.pragmas else cand.pragma
    pragma_line = loc_of(first).line if first is not None else None
    span = nest_span(parsed.source_text, cand.loc, pragma_line)
    func_line = function_start_line(parsed.source_text, return_type_loc(cand.func))
    loops = tuple(LoopSummary(it, ext, Combine.SEQ) for it, ext in loop_headers(cand))
    mdh: MdhExpr | None = None
    kept: Diagnostic | None = None
    try:
        if held is not None:
            raise held
        scop, deps = _analyse(parsed, cand, options)
        if preconditions:
            scop = replace(scop, preconditions=scop.preconditions + tuple(p for p in preconditions
                                                                          if p not in scop.preconditions))
        loops = tuple(LoopSummary(scop.loops[lc.loop].iterator, scop.loops[lc.loop].extent.to_c(), lc.combine)
                      for lc in deps.loops)
        if cand.pragma is not None and scop.pragma_text is not None and scop.pragma_loc is not None:
            check_annotation(parse_annotation(scop.pragma_text, scop.pragma_loc), scop, deps)
        mdh = _build(scop, deps, options, _known_sizes(parsed, cand, scop))
    except UnsupportedInput as e:
        # the user's OpenMP kept as it is is no failure, unless a #pragma mdh asked for the nest
        severity = Severity.WARNING if (cand.pragma is not None if held is not None else cand.marked) else Severity.NOTE
        kept = Diagnostic(severity, e.code, e.loc or cand.loc, e.message)
    return NestAnalysis(loc=cand.loc, span=span, function=cand.function, function_line=func_line, loops=loops,
                        mdh=mdh, kept=kept, marked=cand.marked, requested=cand.pragma is not None,
                        reference_c=c_generator.CGenerator().visit(cand.node) if mdh is not None else "",
                        keep=kept_arrays(cand.func))


def _analyse(parsed: ParsedFile, cand: Candidate, options: Options) -> tuple[Scop, Deps]:
    scop = extract_scop(parsed, cand)
    try:
        return scop, analyze_dependences(scop, options)
    except isl.Error as e:
        raise UnsupportedInput(f"isl failed to analyse this nest: {e}", cand.loc, "isl-error") from e
    except UnsupportedInput as e:
        raise respelled(e, scop) from None


def _known_sizes(parsed: ParsedFile, cand: Candidate, scop: Scop) -> dict[str, int]:
    """The values of ``scop``'s size parameters that the file fixes: the constants every call
    site passes (``call_site_sizes``) and the small constants every store to a struct member
    stores (``pinned_values``: ``km.dim = 4``). They steer tuning and the cost model's decision;
    the generated code stays correct for any value."""
    known = call_site_sizes(parsed.ast, cand.func, scop.params)
    members = {v.name: v.c_value for v in scop.variables if v.c_value and v.name in scop.params and v.name not in known}
    for name, literal in pinned_values(parsed.ast, cand.func, members).items():
        if re.fullmatch(r"-?\d+", literal):
            known[name] = int(literal)
    return known


def _build(scop: Scop, deps: Deps, options: Options, known: dict[str, int]) -> MdhExpr:
    try:
        return build_mdh(scop, deps, options, known)
    except isl.Error as e:
        raise UnsupportedInput(f"isl failed to analyse this nest: {e}", scop.loc, "isl-error") from e
    except UnsupportedInput as e:
        raise respelled(e, scop) from None
