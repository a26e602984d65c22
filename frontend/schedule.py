"""Whole-nest scheduling: a nest that is no single MDH -> host loops around MDH computations.

The MDH formalism describes one perfect band of ``++`` and reduction loops; real nests are
sequences of such bands under sequential loops (a time loop around stencil sweeps, the ``i``
loop of a matrix product that first scales ``C[i][*]``). When the nest as a whole is kept,
``schedule_nest`` looks inside it, outermost loop first:

1. **Distribution.** The loop's statements (at any depth) are split into the finest groups
   that keep every dependence pointing forward: a dependence (isl, between statement instances
   of the whole loop) from a textually later statement to an earlier one merges every
   statement between them into one group. Each group becomes a copy of the loop's subtree with
   only its statements; running the copies in textual order executes every dependence's source
   before its sink, as the original does. Adjacent groups are fused back whenever the fused
   band is an MDH computation (``C[i] = 0; for k C[i] += ...`` stays one computation). A body
   with declarations is not distributed (a temporary must stay with its users).
2. **Host loops.** A loop that cannot be distributed into computations stays as written in the
   host code (it is sequential, or its body is not one band); each ``for`` item of its body is
   scheduled in turn, with the loop's iterator as a size parameter of the bands inside. Items
   run in their original order, so analysing each band on its own is exact: every dependence
   outside a band is kept by the unchanged order of the host code. Whether a computation there
   that is parallel only along its reductions pays is the target's question
   (``mdpoly.profitability.reductions_in_host_loops``).

Before either, ``scheduled`` tries ``mdpoly.frontend.privatize``: outer loops that carry
dependences only on temporaries (doitgen's ``sum[p]``) become parallel with a copy of each
temporary per thread, which beats host loops around small computations. How a host loop is
rendered (for OpenMP, one parallel region around it) is ``mdpoly.backends.host_schedule``'s business.

**Parallel loops around sequential bodies.** A loop (at any depth) that is no computation but
carries no dependence once its temporaries are private -- ADI's row loop around a Thomas solve,
whose body holds two sequential loops -- becomes a ``PrivateLoop``: the loop in parallel, its
body as written (``privatize_nest(plain=True)`` checks it with isl). It is preferred to a host
loop and to a distribution with pieces that are no computations; a distribution into
computations only is preferred to it (those are tuned), and so is a host loop whose inner loops
all are computations when the loop has a constant number of iterations below
``FEW_ITERATIONS`` (too few to share among threads). A distribution whose pieces all stay host
loops is not used: it would only repeat the loop around the same inner items.

**Wavefronts.** A band that stays sequential as a whole with nothing parallel inside (or only
wavefronts) is tried as a tiled wavefront, then along a hyperplane
(``mdpoly.frontend.wavefront``); two sequential loops directly nested around reductions at
most (Nussinov's ``i``, ``j`` around the maximum over ``k``) are tried the same way.

A schedule without a single computation or parallel loop is dropped (the nest is kept as written). The bands
are new ``For`` nodes over parts of the function's AST (``Candidate.scope``/``host_decls``);
``analyse_band`` is the front end's per-nest analysis. Distribution and fusion are decided
with the isl dependences of ``mdpoly.frontend.deps``. Groups are intervals of the body, kept in textual
order, so no strongly-connected-component search is needed: the original order is always legal.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import islpy as isl
from pycparser import c_ast

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.c_text import SourceGenerator, loop_iterator
from mdpoly.frontend.deps import compute_dependences
from mdpoly.frontend.device_symbols import nest_symbols
from mdpoly.frontend.parse import ParsedFile
from mdpoly.frontend.privatize import ScatterRefusal, privatize_nest
from mdpoly.frontend.scop import Candidate, extract_scop, loc_of
from mdpoly.frontend.wavefront import hyperplane_band, wavefront_band
from mdpoly.ir.mdh import Combine
from mdpoly.ir.nest import (
    Computation,
    HostLoop,
    HostStatement,
    NestAnalysis,
    PrivateLoop,
    ScheduleItem,
    Wavefront,
)

AnalyseBand = Callable[[Candidate], NestAnalysis]

#: How many bands (and distribution models) one nest's schedule may analyse: each runs isl's
#: dataflow, and a long imperfect nest would otherwise take minutes.
MAX_BAND_ANALYSES = 40


class _OverBudget(Exception):
    """The schedule search spent its analyses."""


#: Kept reasons under which privatizing the outer loops' temporaries is tried first.
_PRIVATIZE = frozenset({"sequential-dependence", "imperfect-nest", "unsupported-statement", "mixed-reduction-operators",
                        "data-dependent-condition", "break"})

#: Kept reasons under which a band that nothing else parallelizes is tried as a wavefront (a
#: gather from a table the band never writes, ``subst[a[i]][b[j]]``, leaves the MDH model
#: refused but not the wavefront's, whose model reads it without locating it).
_WAVEFRONT_CODES = frozenset({"sequential-dependence", "non-affine-subscript"})

#: Kept reasons under which the nest's inner bands are not looked at.
_NOT_SCHEDULED = frozenset({"already-parallel", "isl-error"})


def statement_text(node: c_ast.Node) -> str:
    """C text of one statement (``;`` and newline included), macros expanded."""
    return str(SourceGenerator()._generate_stmt(node, add_indent=False))


def for_header(node: c_ast.For) -> str:
    gen = SourceGenerator()
    parts = [gen.visit(p) if p is not None else "" for p in (node.init, node.cond, node.next)]
    return f"for ({parts[0]}; {parts[1]}; {parts[2]})"


def _body_items(node: c_ast.For) -> list[c_ast.Node]:
    body = node.stmt
    if isinstance(body, c_ast.Compound):
        return list(body.block_items or [])
    return [body]


def _coord_key(node: c_ast.Node) -> tuple[int, int]:
    c = node.coord
    return (c.line or 0, c.column or 0) if c is not None else (0, 0)


class _Scheduler:
    def __init__(self, parsed: ParsedFile, cand: Candidate, analyse_band: AnalyseBand,
                 sizes: dict[str, int] | None = None, strict_fp: bool = False) -> None:
        self.parsed = parsed
        self.strict_fp = strict_fp
        self.top = cand
        self.analyse_band = analyse_band
        self.sizes = sizes
        self.spent = 0  # band analyses so far (each runs isl's dataflow)
        self.wave_refusals: list[str] = []  # why bands were not tiled wavefronts, innermost first
        #: loops (by ``id`` of their node) that would run in parallel around gathers were the written
        #: pointer ``restrict``: the refusal that says so, the host loop's reason
        self.restrict_hints: dict[int, str] = {}
        #: loops (by ``id`` of their node) refused as parallel loops around their bodies as written: why
        self.parallel_refusals: dict[int, str] = {}

    def band(self, node: c_ast.For, host_decls: tuple[c_ast.Decl, ...]) -> Candidate:
        return Candidate(node, self.top.func, self.top.marked, None, None, scope=self.top.node,
                         host_decls=host_decls)

    def analyse(self, cand: Candidate) -> NestAnalysis:
        self.spent += 1
        if self.spent > MAX_BAND_ANALYSES:
            raise _OverBudget
        na = self.analyse_band(cand)
        return replace(na, reference_c=statement_text(cand.node))

    # -- planning

    def plan(self, node: c_ast.For, host_decls: tuple[c_ast.Decl, ...],
             whole: NestAnalysis | None) -> tuple[ScheduleItem, ...]:
        """The schedule of the loop ``node`` (``whole``: its analysis as one band, when known)."""
        cand = self.band(node, host_decls)
        if whole is None:
            whole = self.analyse(cand)
            if whole.mdh is not None:
                return (Computation(whole),)
        # a loop that carries no dependence (once its temporaries are private) runs in parallel
        # around its body as written, unless it distributes into MDH computations only
        parallel = self.parallel_loop(cand)
        # a single loop whose body runs no loop gains nothing from distribution when it is
        # parallel as written: its pieces would be maps and reductions over the same iterations,
        # one pass over the data each (``z[2*i] = re[i]; z[2*i+1] = im[i];``)
        pieces = None if parallel is not None and not _has_loop(node.stmt) else self.distribution(cand)
        if pieces is not None and len(pieces) > 1:
            analysed: list[tuple[c_ast.For, NestAnalysis]] = []
            for piece in pieces:
                na = self.analyse(self.band(piece, host_decls))
                if na.mdh is None and parallel is not None:
                    return (parallel,)
                analysed.append((piece, na))
            # distribution pays where a piece becomes a computation as a whole; pieces that all stay
            # host loops would only repeat the loop (one region each) around the same inner items
            if any(na.mdh is not None for _, na in analysed):
                out: list[ScheduleItem] = []
                for piece, na in analysed:
                    if na.mdh is not None:
                        out.append(Computation(na, distributed=True))
                    else:
                        out.extend(self.host_loop(piece, host_decls, na))
                return tuple(out)
        if parallel is not None and not _few_iterations(whole):
            return (parallel,)
        items = self.host_loop(node, host_decls, whole)
        if parallel is not None:
            # too few iterations to share among threads: host loops around computations
            # (tuned, their own loops parallel) are preferred where every inner loop is one
            return items if _runs_in_parallel(items) else (parallel,)
        # nothing inside is parallel, or only wavefronts are: the band from here as one wavefront
        # (a time loop joins the band: tiles over time as well, far fewer barriers)
        if (len(items) == 1 and whole.kept is not None and whole.kept.code in _WAVEFRONT_CODES
                and (isinstance(items[0], HostStatement) or _only_wavefronts(items[0]))):
            wave = self.wavefront(cand)
            return (wave,) if wave is not None else items
        # two sequential loops around reductions at most (Nussinov's i, j around the k maximum):
        # the band from here along a hyperplane, its points in parallel
        if (len(items) == 1 and whole.kept is not None and whole.kept.code in _WAVEFRONT_CODES
                and _sequential_pair(items[0])):
            wave = self.wavefront(cand)
            return (wave,) if wave is not None else items
        return items

    def wavefront(self, cand: Candidate, tiled: bool = True) -> Wavefront | None:
        """The band from ``cand.node`` down as a tiled wavefront, else (or only, without ``tiled``)
        as a wavefront along a hyperplane (``mdpoly.frontend.wavefront`` checks both with isl), or
        ``None`` (and why, in ``wave_refusals``)."""
        self.spent += 1
        if self.spent > MAX_BAND_ANALYSES:
            raise _OverBudget
        result = wavefront_band(self.parsed, cand, sizes=self.sizes) if tiled else ""
        if isinstance(result, str):
            plane = hyperplane_band(self.parsed, cand, sizes=self.sizes)
            if isinstance(plane, Wavefront):
                return plane
            self.wave_refusals.append(f"{result}; nor along a hyperplane: {plane}" if result and plane != result
                                      else plane)
            return None
        return result

    def parallel_loop(self, cand: Candidate) -> PrivateLoop | None:
        """The loop ``cand.node`` as a parallel loop around its body as written (sequential inner
        loops included), its temporaries private where they carry its only dependences
        (``privatize_nest`` checks it with isl); ``None`` when its outer loop carries a dependence."""
        self.spent += 1
        if self.spent > MAX_BAND_ANALYSES:
            raise _OverBudget
        result = privatize_nest(self.parsed, cand, self.sizes, plain=True, strict_fp=self.strict_fp)
        if isinstance(result, str) and "'restrict'" in result:
            self.restrict_hints[id(cand.node)] = result
        if isinstance(result, str):
            self.parallel_refusals[id(cand.node)] = result
        return result if isinstance(result, PrivateLoop) else None

    def host_loop(self, node: c_ast.For, host_decls: tuple[c_ast.Decl, ...],
                  whole: NestAnalysis) -> tuple[ScheduleItem, ...]:
        """``node`` stays a loop of the host code; its ``for`` items are scheduled on their own."""
        inner_decls = list(host_decls)
        if isinstance(node.init, c_ast.DeclList):
            inner_decls.extend(node.init.decls)
        body: list[ScheduleItem] = []
        items = _body_items(node)
        for k, item in enumerate(items):
            # a loop under the user's pragma (``omp parallel for``, ``GCC unroll``) stays as written:
            # the pragma needs the loop directly after it
            if isinstance(item, c_ast.For) and not (k and isinstance(items[k - 1], c_ast.Pragma)):
                body.extend(self.plan(item, tuple(inner_decls), None))
            else:
                body.append(HostStatement(statement_text(item), loc_of(item, whole.loc),
                                          isinstance(item, c_ast.Decl | c_ast.DeclList)))
                if isinstance(item, c_ast.Decl):
                    inner_decls.append(item)
                elif isinstance(item, c_ast.DeclList):
                    inner_decls.extend(item.decls)
        if not any(isinstance(b, Computation | HostLoop | PrivateLoop | Wavefront) for b in body):
            return (HostStatement(statement_text(node), whole.loc),)
        reason = whole.kept.message if whole.kept is not None else "its body is not one band"
        reason = self.restrict_hints.get(id(node), reason)
        return (HostLoop(loop_iterator(node), for_header(node), loc_of(node, whole.loc), reason, tuple(body),
                         isinstance(node.init, c_ast.DeclList)),)

    # -- distribution

    def distribution(self, cand: Candidate) -> list[c_ast.For] | None:
        """The loop ``cand.node`` distributed over the finest legal groups of its statements (each
        group a copy of the loop's subtree pruned to its statements), then fused back greedily
        where the fused band is one computation; ``None`` when it cannot be distributed."""
        node = cand.node
        if _declares(node.stmt):
            return None  # a temporary must stay with its users
        try:
            self.spent += 1
            if self.spent > MAX_BAND_ANALYSES:
                raise _OverBudget
            scop = extract_scop(self.parsed, cand, privatize=False)  # the pieces are the text as written
            deps = compute_dependences(scop)
        except (UnsupportedInput, isl.Error):
            return None
        stmts = list(scop.statements)  # textual order
        if len(stmts) < 2 or scop.preconditions:
            # dependences exact only under run-time conditions (a flat subscript viewed as rows of a
            # run-time length): the pieces would run in the new order even where they fail
            return None
        known = {v.name for v in scop.variables}
        if any(a.buffer not in known for st in stmts for a in (st.write, *st.reads)):
            return None  # an object without a variable (an iterator read outside its loop): unseen dependences
        index = {st.name: k for k, st in enumerate(stmts)}
        # a backward dependence (from a later statement to an earlier one) joins every statement
        # between them: groups are intervals of the text, so the original order is always legal
        joined = [False] * len(stmts)  # joined[k]: statement k stays in the group of k - 1
        for d in deps:
            a, b = index[d.sink_stmt], index[d.source_stmt]
            for k in range(a + 1, b + 1):
                joined[k] = True
        groups: list[set[tuple[int, int]]] = []
        for k, st in enumerate(stmts):
            if groups and joined[k]:
                groups[-1].add((st.loc.line, st.loc.column))
            else:
                groups.append({(st.loc.line, st.loc.column)})
        if len(groups) < 2:
            return None
        keys = sorted((st.loc.line, st.loc.column) for st in stmts)
        if len(set(keys)) != len(keys) or any(_prune(node, keys, g) is None for g in groups):
            return None
        return self.fuse(cand, keys, groups)

    def fuse(self, cand: Candidate, keys: list[tuple[int, int]],
             groups: list[set[tuple[int, int]]]) -> list[c_ast.For]:
        """Fuse adjacent groups (in order) while the fused band is one MDH computation."""
        node = cand.node
        out: list[set[tuple[int, int]]] = []
        for g in groups:
            if out:
                merged = out[-1] | g
                piece = _prune(node, keys, merged)
                if piece is not None and self.analyse(self.band(piece, cand.host_decls)).mdh is not None:
                    out[-1] = merged
                    continue
            out.append(g)
        pieces = [_prune(node, keys, g) for g in out]
        return [p for p in pieces if p is not None]


class _Declares(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_For(self, node: c_ast.For) -> None:
        for part in (node.cond, node.next, node.stmt):  # the header's own declaration is the loop's
            if part is not None:
                self.visit(part)

    def visit_Decl(self, node: c_ast.Decl) -> None:
        self.found = True


def _has_loop(node: c_ast.Node) -> bool:
    """Whether ``node`` holds a loop."""
    if isinstance(node, c_ast.For | c_ast.While | c_ast.DoWhile):
        return True
    return any(_has_loop(child) for _, child in node.children())


def _declares(node: c_ast.Node) -> bool:
    """Whether ``node`` declares anything besides ``for`` iterators."""
    v = _Declares()
    v.visit(node)
    return v.found


def _prune(loop: c_ast.For, keys: list[tuple[int, int]], keep: set[tuple[int, int]]) -> c_ast.For | None:
    """A copy of ``loop`` with only the statements located at ``keep`` (``keys``: every statement
    of its subtree, by ``(line, column)``); ``None`` when a statement it keeps cannot be separated
    from one it drops (both inside one ``if``)."""
    body = _prune_items(_body_items(loop), keys, keep)
    if body is None:
        return None
    return c_ast.For(loop.init, loop.cond, loop.next, c_ast.Compound(body), coord=loop.coord)


def _prune_items(items: list[c_ast.Node], keys: list[tuple[int, int]],
                 keep: set[tuple[int, int]]) -> list[c_ast.Node] | None:
    starts = [_coord_key(it) for it in items]
    out: list[c_ast.Node] = []
    pragmas: list[c_ast.Node] = []
    for k, it in enumerate(items):
        if isinstance(it, c_ast.Pragma):
            pragmas.append(it)
            continue
        end = starts[k + 1] if k + 1 < len(items) else (1 << 60, 0)
        mine = [x for x in keys if starts[k] <= x < end]
        wanted = [x for x in mine if x in keep]
        if not wanted:
            pragmas = []
            continue
        if len(wanted) == len(mine):
            out.extend([*pragmas, it])
        elif isinstance(it, c_ast.For):
            sub = _prune(it, mine, keep)
            if sub is None:
                return None
            out.extend([*pragmas, sub])
        elif isinstance(it, c_ast.Compound):
            inner = _prune_items(list(it.block_items or []), mine, keep)
            if inner is None:
                return None
            out.extend([*pragmas, c_ast.Compound(inner, coord=it.coord)])
        else:
            return None
        pragmas = []
    return out


def _sequential_pair(item: ScheduleItem) -> bool:
    """Whether ``item`` is a host loop directly around one other, with no parallel loop inside
    (computations and loops around bodies as written parallel along their reductions only)."""
    if not (isinstance(item, HostLoop) and len(item.body) == 1 and isinstance(item.body[0], HostLoop)):
        return False
    return not any((isinstance(it, PrivateLoop) and not it.reductions) or isinstance(it, Wavefront)
                   or (isinstance(it, Computation) and any(lp.combine == Combine.CONCAT for lp in it.nest.loops))
                   for it in _flatten(item.body))


def _only_wavefronts(item: ScheduleItem) -> bool:
    """Whether ``item`` is a host loop around wavefronts only."""
    return isinstance(item, HostLoop) and all(isinstance(b, Wavefront) for b in item.body)


def schedule_nest(parsed: ParsedFile, cand: Candidate, whole: NestAnalysis,
                  analyse_band: AnalyseBand, sizes: dict[str, int] | None = None,
                  wave_refusals: list[str] | None = None, strict_fp: bool = False,
                  top_refusal: list[str] | None = None) -> tuple[ScheduleItem, ...] | None:
    """The schedule of a kept nest (see the module docstring), or ``None`` when no band of it is a
    computation, a parallel loop or a wavefront (``wave_refusals`` gets why bands were not
    wavefronts, innermost first; ``top_refusal`` why the outermost loop is no parallel loop
    around its body as written, when it was tried and refused with a reason)."""
    if whole.mdh is not None or whole.kept is None or whole.kept.code in _NOT_SCHEDULED:
        return None
    scheduler = _Scheduler(parsed, cand, analyse_band, sizes, strict_fp)
    try:
        items = scheduler.plan(cand.node, (), whole)
    except _OverBudget:
        return None  # too many statements and loops to schedule in reasonable time: kept as written
    finally:
        if wave_refusals is not None:
            wave_refusals.extend(scheduler.wave_refusals)
        if top_refusal is not None and id(cand.node) in scheduler.parallel_refusals:
            top_refusal.append(scheduler.parallel_refusals[id(cand.node)])
    if not any(isinstance(i, PrivateLoop | Wavefront) or (isinstance(i, Computation) and i.nest.mdh is not None)
               for i in _flatten(items)):
        return None
    return items


def scheduled(parsed: ParsedFile, cand: Candidate, whole: NestAnalysis, analyse_band: AnalyseBand,
              sizes: dict[str, int] | None = None, strict_fp: bool = False) -> NestAnalysis:
    """``whole`` (a nest's analysis as one band) with its schedule when it is kept: its outer loops
    made parallel by privatizing temporaries (``mdpoly.frontend.privatize``) when that applies,
    else host loops around computations (``schedule_nest``), else none (and why privatization
    was refused, when it was tried)."""
    refusal = ""
    if whole.mdh is None and whole.kept is not None and whole.kept.code in _PRIVATIZE:
        private = privatize_nest(parsed, cand, sizes, strict_fp=strict_fp)
        if isinstance(private, PrivateLoop):
            return replace(whole, schedule=(private,), symbols=nest_symbols(parsed, cand))
        refusal = private or ""
    waves: list[str] = []
    top: list[str] = []
    schedule = schedule_nest(parsed, cand, whole, analyse_band, sizes, waves, strict_fp, top)
    if schedule is not None:
        return replace(whole, schedule=schedule, privatization=refusal, symbols=nest_symbols(parsed, cand))
    # inner loops with bounds read from memory: why the outer loop cannot run around them as written
    bounds = top[0] if top and whole.kept is not None and whole.kept.code == "non-affine-bound" else ""
    if top and isinstance(top[0], ScatterRefusal) and whole.kept is not None:   # updates at indices read from memory
        whole = replace(whole, kept=replace(whole.kept, message=f"{whole.kept.message}; {top[0]}"))
    # the outermost band tried says most about why the nest has no wavefront
    return replace(whole, privatization=refusal, wavefront=waves[-1] if waves else "", data_bounds=bounds)


_LOOP_WORD = re.compile(r"\b(?:for|while|do)\b")

#: A loop of a constant number of iterations below this is too short to share among threads as a
#: parallel loop around its body when host loops around computations are the alternative.
FEW_ITERATIONS = 16


def _few_iterations(whole: NestAnalysis) -> bool:
    extent = whole.loops[0].extent.strip() if whole.loops else ""
    return extent.isdigit() and int(extent) < FEW_ITERATIONS


def _runs_in_parallel(items: tuple[ScheduleItem, ...]) -> bool:
    """Whether every loop of ``items`` (host loops aside) is a computation or a parallel loop:
    nothing but plain statements runs sequentially."""
    return all(isinstance(it, PrivateLoop)
               or (isinstance(it, Computation) and it.nest.mdh is not None)
               or (isinstance(it, HostLoop) and _runs_in_parallel(it.body))
               or (isinstance(it, HostStatement) and not _LOOP_WORD.search(it.text))
               for it in items)


def _flatten(items: tuple[ScheduleItem, ...]) -> list[ScheduleItem]:
    out: list[ScheduleItem] = []
    for it in items:
        out.append(it)
        if isinstance(it, HostLoop):
            out.extend(_flatten(it.body))
    return out
