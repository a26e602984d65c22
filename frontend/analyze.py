"""The front end's entry point: C file path + ``Options`` -> ``FileAnalysis``.

For every candidate nest: extract the ``Scop``, classify its loops, check a ``#pragma mdh``
annotation, and build the ``MdhExpr`` -- or record, located, why the nest is kept as written.
``islpy.Error`` never escapes: it becomes a located ``UnsupportedInput`` for its nest.
"""

from __future__ import annotations

import islpy as isl
from pycparser import c_generator

from mdpoly.diagnostics import Diagnostic, DiagnosticSink, Severity, UnsupportedInput
from mdpoly.frontend.call_sizes import call_site_sizes
from mdpoly.frontend.deps import Deps, analyze_dependences
from mdpoly.frontend.nest_span import function_start_line, nest_span
from mdpoly.frontend.normalize import respelled
from mdpoly.frontend.parse import ParsedFile, parse_c
from mdpoly.frontend.pragmas import check_annotation, parse_annotation
from mdpoly.frontend.schedule import scheduled
from mdpoly.frontend.scop import (
    Candidate,
    extract_scop,
    find_candidates,
    loc_of,
    loop_headers,
    return_type_loc,
)
from mdpoly.frontend.to_mdh import build_mdh
from mdpoly.ir.mdh import Combine, MdhExpr
from mdpoly.ir.nest import FileAnalysis, LoopSummary, NestAnalysis
from mdpoly.ir.scop import Scop
from mdpoly.options import Options


def analyze_file(path: str, options: Options, sink: DiagnosticSink | None = None) -> FileAnalysis:
    """Parse ``path`` and analyse each candidate nest.

    :raises InputError: the file cannot be read, preprocessed or parsed.
    :raises DependenceError: a ``#pragma mdh`` annotation contradicts the analysis.
    """
    parsed = parse_c(path, options)
    nests = tuple(analyze_nest(parsed, c, options) for c in find_candidates(parsed, options))
    return FileAnalysis(path, parsed.source_text, nests)


def analyze_nest(parsed: ParsedFile, cand: Candidate, options: Options) -> NestAnalysis:
    """The ``NestAnalysis`` of one candidate (``mdh`` set, or ``kept`` with a located reason, and
    then the schedule of host loops and computations inside it, when there is one)."""
    whole = analyze_band(parsed, cand, options)
    return scheduled(parsed, cand, whole, lambda band: analyze_band(parsed, band, options), dict(options.sizes))


def analyze_band(parsed: ParsedFile, cand: Candidate, options: Options) -> NestAnalysis:
    """The ``NestAnalysis`` of one candidate as a single band (no schedule)."""
    pragma_line = loc_of(cand.pragma).line if cand.pragma is not None else None
    span = nest_span(parsed.source_text, cand.loc, pragma_line)
    func_line = function_start_line(parsed.source_text, return_type_loc(cand.func))
    loops = tuple(LoopSummary(it, ext, Combine.SEQ) for it, ext in loop_headers(cand))
    mdh: MdhExpr | None = None
    kept: Diagnostic | None = None
    try:
        scop, deps = _analyse(parsed, cand, options)
        loops = tuple(LoopSummary(scop.loops[lc.loop].iterator, scop.loops[lc.loop].extent.to_c(), lc.combine)
                      for lc in deps.loops)
        if cand.pragma is not None and scop.pragma_text is not None and scop.pragma_loc is not None:
            check_annotation(parse_annotation(scop.pragma_text, scop.pragma_loc), scop, deps)
        mdh = _build(scop, deps, options, call_site_sizes(parsed.ast, cand.func, scop.params))
    except UnsupportedInput as e:
        severity = Severity.WARNING if cand.marked else Severity.NOTE
        kept = Diagnostic(severity, e.code, e.loc or cand.loc, e.message)
    return NestAnalysis(loc=cand.loc, span=span, function=cand.function, function_line=func_line, loops=loops,
                        mdh=mdh, kept=kept, marked=cand.marked, requested=cand.pragma is not None,
                        reference_c=c_generator.CGenerator().visit(cand.node) if mdh is not None else "")


def _analyse(parsed: ParsedFile, cand: Candidate, options: Options) -> tuple[Scop, Deps]:
    scop = extract_scop(parsed, cand)
    try:
        return scop, analyze_dependences(scop, options)
    except isl.Error as e:
        raise UnsupportedInput(f"isl failed to analyse this nest: {e}", cand.loc, "isl-error") from e
    except UnsupportedInput as e:
        raise respelled(e, scop) from None


def _build(scop: Scop, deps: Deps, options: Options, known: dict[str, int]) -> MdhExpr:
    try:
        return build_mdh(scop, deps, options, known)
    except isl.Error as e:
        raise UnsupportedInput(f"isl failed to analyse this nest: {e}", scop.loc, "isl-error") from e
    except UnsupportedInput as e:
        raise respelled(e, scop) from None
