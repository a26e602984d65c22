"""Array and scalar privatization: a nest whose outer loops carry only false dependences on
temporaries -> those loops parallel, each thread with its own copy of the temporaries.

doitgen's ``for r, q: { for p: sum[p] = ...; for p: A[r][q][p] = sum[p]; }`` writes the whole
``sum`` before reading it in every ``(r, q)`` iteration: the dependences ``r`` and ``q`` carry on
``sum`` are anti and output dependences only, which a copy of ``sum`` per thread removes.
``privatize_nest`` finds the outermost perfectly nested loops of a kept nest (the band) and
checks, with isl, for every array or scalar ``X`` on which the band carries a dependence:

1. every read of ``X`` in a band iteration takes its value from a write of ``X`` in the same
   iteration (isl dataflow: no read without a source in the nest, every flow dependence inside
   one iteration) -- no value flows in across iterations;
2. its value after the nest can be restored: every band iteration writes the same elements of
   ``X`` (so the last iteration writes all of them last), which are copied out of the copy the
   last iteration used (OpenMP ``lastprivate``), or ``X`` is no object the code after the nest
   can see;
3. its copy can live on a thread's stack (its declared size is a constant, at most
   ``MAX_PRIVATE_ELEMENTS``), and it is not declared again inside the nest.

Every other dependence must not be carried by the band. The band's iterations are then
independent; inner loops' iterators become private; one read after the nest is lastprivate when
every band iteration assigns it (a loop directly in the band's body), else the nest is refused.
Run-time alias checks and the model's preconditions select the original nest when they fail.
The result is a ``PrivateLoop`` (rendered by ``mdpoly.backends.host_schedule`` for OpenMP); a refusal is a
sentence saying which temporary and why.
"""

from __future__ import annotations

import copy
import re
from dataclasses import replace

import islpy as isl
from pycparser import c_ast

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.alias import alias_checks, first_extents
from mdpoly.frontend.blocked import blocked
from mdpoly.frontend.c_text import SourceGenerator, loop_iterator
from mdpoly.frontend.call_sizes import call_site_sizes
from mdpoly.frontend.data_bounds import NotSurrogate, rows_work_c, surrogate_scop
from mdpoly.frontend.deps import compute_dependences, inexact_reduction, reduction_of
from mdpoly.frontend.inspector import NotInspectable, const_tables, index_and_control_arrays, inspector_code
from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.normalize.ast_util import walk_nodes
from mdpoly.frontend.normalize.members import PREFIX as MEMBER_PREFIX
from mdpoly.frontend.omp_headers import canonical_header
from mdpoly.frontend.parse import ParsedFile
from mdpoly.frontend.scatter import SCATTER_REFUSED, scatter_preconditions, scatter_reductions
from mdpoly.frontend.scop import Candidate, extract_scop, loc_of
from mdpoly.ir.mdh import Access, Combine
from mdpoly.ir.nest import SCATTER_WORK_PER_ELEMENT, PrivateCopy, PrivateLoop
from mdpoly.ir.scop import Scop, Statement, Variable

#: The largest temporary (elements) copied to every thread's stack.
MAX_PRIVATE_ELEMENTS = 1 << 16
_PRIV = "mdp_priv_"


class _Refused(Exception):
    """Privatization does not apply; the message says why."""


class ScatterRefusal(str):
    """Why a loop that updates arrays at indices read from memory (``Scop.scattered``) is no
    parallel loop with them as reductions: the nest's subscript refusal says it too."""


def privatize_nest(parsed: ParsedFile, cand: Candidate, sizes: dict[str, int] | None = None,
                   plain: bool = False, strict_fp: bool = False) -> PrivateLoop | str | None:
    """The nest ``cand`` with its outer band parallel and its temporaries private, the reason it
    cannot be (a sentence), or ``None`` when the band carries no dependence on a temporary.
    ``sizes``: known values of size parameters (``--size``), besides those of the call sites.
    With ``plain``, a band that carries no dependence at all is a ``PrivateLoop`` too (without
    copies): a parallel loop whose body, sequential inner loops included, runs as written in each
    iteration (the scheduler's fallback for a loop that is no MDH computation). A loop whose
    iterations run along the arrays' contiguous dimension is then blocked inside its inner loops
    (``mdpoly.frontend.blocked``). A scalar that the band only folds into (``changed += ...``,
    ``m = fmax(m, e)``) is a reduction of the parallel loop (``PrivateLoop.reductions``); with
    ``strict_fp``, not a floating-point sum or product."""
    data_bounded: tuple[c_ast.For, ...] = ()   # inner loops with bounds read from memory, modelled by surrogates
    try:
        try:
            scop = extract_scop(parsed, cand, privatize=False, opaque_reads=True, row_args=True)
        except UnsupportedInput as err:
            if not plain or err.code != "non-affine-bound":
                raise
            try:
                scop, data_bounded = surrogate_scop(parsed, cand, err)
            except NotSurrogate as why:
                return str(why)
            except UnsupportedInput as inner:
                return f"modelled as one guarded iteration each, they leave the nest refused: {inner.message}"
        band = perfect_band(cand.node)
        deps = compute_dependences(scop)
    except UnsupportedInput as err:   # a gather the user can clear with 'restrict' is worth saying
        if err.code == SCATTER_REFUSED:   # and so is why updates at indices read from memory are no reduction
            return ScatterRefusal(err.message)
        return err.message if "'restrict'" in err.message else None
    except isl.Error:
        return None
    if not scop.statements:
        return None
    inflow = sorted({d.sink.buffer for d in deps if d.kind == "flow" and d.sink.buffer in scop.index_arrays_written})
    if inflow:   # a gather's subscript reads what the nest wrote: an inspection ahead of it would not
        return (f"the subscript of a gather reads '{inflow[0]}', whose elements the nest writes before reading "
                "them")
    # an object the model has no variable for (an inner loop's iterator read outside its loop:
    # its value flows between iterations unseen by the dependences) is not this module's case
    modelled = {v.name for v in scop.variables}
    if any(a.buffer not in modelled for st in scop.statements for a in (st.write, *st.reads)):
        return None
    loops = _band_loops(scop, len(band))
    if not loops:
        return None
    refusal: str | None = None
    for k in range(len(loops), 0, -1):
        try:
            result = _privatized(parsed, cand, scop, deps, band[:k], loops[:k], plain, strict_fp)
            if result is not None and data_bounded:
                # the surrogates count each inner loop once per row: the nonzeros, where known, add the rest
                rows = rows_work_c(cand.node, data_bounded)
                base = instance_bound_c(scop)
                return _estimated(replace(result, work=None, work_c=f"{base} + {rows}" if base and rows else base))
            if result is not None:
                known = {**call_site_sizes(parsed.ast, cand.func, scop.params), **(sizes or {})}
                return _estimated(replace(blocked(result, cand.node), work=instance_count(scop, known),
                                          work_c=instance_bound_c(scop)))
        except _Refused as why:
            refusal = refusal or str(why)
        except (UnsupportedInput, isl.Error):
            return None
    if data_bounded and refusal is None:
        loop = ", ".join(f"'{scop.loops[lp].iterator}'" for lp in loops[:1])
        refusal = f"loop {loop} carries a dependence through what it writes"
    if refusal and scop.scattered:
        names = ", ".join(f"'{x}'" for x in sorted(scop.scattered))
        return ScatterRefusal(f"as a parallel loop reducing into {names}: {refusal}")
    return refusal


def _estimated(loop: PrivateLoop) -> PrivateLoop:
    """``loop``, whose scattered reductions (if any) the run-time guard weighs against its work
    (``SCATTER_WORK_PER_ELEMENT``): refused where it has no estimate, or where its known work
    never outweighs copies of its whole declared arrays on two threads."""
    if not loop.scattered:
        return loop
    if not loop.work_c:
        raise _Refused("the copies per thread of its scattered updates need an estimate of its work at run time, "
                       "and its loops' trip counts give none")
    if loop.work is not None and all(r.whole for r in loop.scattered):
        elements = sum(int(r.length) for r in loop.scattered)
        if loop.work <= SCATTER_WORK_PER_ELEMENT * 2 * elements:
            raise _Refused(f"its {loop.work} statement instances never exceed {SCATTER_WORK_PER_ELEMENT} x 2 threads x "
                           f"the {elements} elements of {', '.join(repr(r.name) for r in loop.scattered)}, which each "
                           "thread would zero and combine a copy of")
    return loop


def iteration_local(scop: Scop, names: list[str], x: str) -> str:
    """``""`` when every read of ``x`` in an iteration of the loops ``names`` (the scop's outermost)
    takes its value from a write of ``x`` in the same iteration (a copy per thread removes every
    dependence on it), else why not (a sentence)."""
    try:
        _Isl(scop, len(names)).no_value_flows_in(x, names)
    except _Refused as why:
        return str(why)
    return ""


def fix_known_params(s: isl.Set, known: dict[str, int]) -> isl.Set | None:
    """``s`` with the known parameters fixed and the others it does not involve projected out
    (``None``: it involves an unknown one)."""
    for q in reversed(range(s.dim(isl.dim_type.param))):
        name = s.get_dim_name(isl.dim_type.param, q)
        if name in known:
            s = s.fix_val(isl.dim_type.param, q, isl.Val.int_from_si(s.get_ctx(), known[name]))
        elif s.involves_dims(isl.dim_type.param, q, 1):
            return None
        else:
            s = s.project_out(isl.dim_type.param, q, 1)
    return s


def instance_count(scop: Scop, known: dict[str, int]) -> int | None:
    """How many statement instances the nest (or band) runs (``None`` when a size it depends on is
    unknown; a parameter no loop bound names -- ``fout[c*9 + q]``'s ``c`` -- does not count)."""
    total = 0
    for st in scop.statements:
        dom = fix_known_params(isl.Set(scop.domain_str(st)), known)
        if dom is None:
            return None
        count = dom.count_val()
        if not count.is_int():
            return None
        total += count.to_python()
    return total


def instance_bound_c(scop: Scop) -> str:
    """An estimate of how many statement instances the nest runs, as C in ``double`` arithmetic
    over the user's names (for a run-time guard): per statement the product of its loops' trip
    counts; ``""`` when a loop's bounds name an iterator (a triangle: no box here)."""
    terms = []
    for st in scop.statements:
        product = trips_product_c(scop, list(st.loops))
        if product is None:
            return ""
        terms.append(product or "1.0")
    return " + ".join(terms)


def trips_product_c(scop: Scop, loops: list[int]) -> str | None:
    """The product of the trip counts of ``loops`` (indices into ``scop.loops``) as C in ``double``
    arithmetic over the user's names (``""`` for no loop), or None where a bound names an iterator."""
    iterators = {lp.iterator for lp in scop.loops}
    values = {v.name: v.c_value for v in scop.variables if v.c_value}
    factors = []
    for k in loops:
        extent = scop.loops[k].extent
        if any(n in iterators for n, _ in extent.terms):
            return None
        parts = [f"{c}.0 * (double)({values.get(n, n)})" for n, c in extent.terms]
        factors.append("(" + " + ".join([*parts, f"{extent.constant}.0"]) + ")")
    return " * ".join(factors)


def perfect_band(node: c_ast.For) -> list[c_ast.For]:
    """The outermost perfectly nested loops from ``node`` down."""
    out = [node]
    while True:
        body = out[-1].stmt
        if isinstance(body, c_ast.Compound) and body.block_items and len(body.block_items) == 1:
            body = body.block_items[0]
        if not isinstance(body, c_ast.For):
            return out
        out.append(body)


def _band_loops(scop: Scop, depth: int) -> list[int]:
    """Indices (in ``scop.loops``) of the loops every statement shares, outermost first (at most ``depth``)."""
    out: list[int] = []
    for d in range(depth):
        firsts = {s.loops[d] if len(s.loops) > d else -1 for s in scop.statements}
        if len(firsts) != 1 or -1 in firsts:
            break
        out.append(firsts.pop())
    return out


def _privatized(parsed: ParsedFile, cand: Candidate, scop: Scop, deps: list, band: list[c_ast.For],
                loops: list[int], plain: bool = False, strict_fp: bool = False) -> PrivateLoop | None:
    k = len(loops)
    names = [scop.loops[lp].iterator for lp in loops]
    carried = [d for d in deps if set(d.carried_by) & set(loops)]
    if not carried and not plain:
        return None  # nothing to privatize: the band is parallel as it is (or not this module's case)
    # locals declared in the band's body are new in every iteration (C gives them no value on
    # entry), and scalars the band only folds into are the parallel loop's reductions
    fresh = fresh_locals(scop, band[-1], {d.source.buffer for d in carried} | {d.sink.buffer for d in carried})
    reductions = scalar_reductions(scop, {d.source.buffer for d in carried} - fresh, strict_fp)
    # arrays updated at indices read from memory are reduced like those scalars (``frontend.scatter``)
    scatters = scatter_reductions(scop, _OMP_REDUCTION, strict_fp)
    if isinstance(scatters, str):
        raise _Refused(scatters)
    folded = fresh | set(reductions) | scop.scattered
    carried = [d for d in carried if not {d.source.buffer, d.sink.buffer} & folded]
    if not carried and not plain and not reductions and not scatters:
        return None
    temps = sorted({d.source.buffer for d in carried} | {d.sink.buffer for d in carried})
    subscripts = [(a.buffer, e) for st in scop.statements for a in (st.write, *st.reads) for e in a.index]
    if any(x == buf and {n for n, _ in e.terms} & set(names) for x in temps for buf, e in subscripts):
        return None  # an array indexed by the band's iterators is data, not a temporary
    written = {s.write.buffer for s in scop.statements}
    for x in temps:
        if x not in written:
            raise _Refused(f"loop '{names[0]}' carries a dependence on '{x}', which the nest only reads")
    for v in scop.variables:   # the loop runs the user's text, where the member is no variable of its own
        if v.kind == "scalar" and v.c_value and v.name.startswith(MEMBER_PREFIX) and v.name in written:
            raise _Refused(f"it assigns the struct member '{v.c_value}', which a parallel loop around the nest's "
                           "own text cannot give each thread a copy of")
    ctx = _Isl(scop, k)
    copies = []
    for x in temps:
        var = scop.variable(x)
        if var.kind == "local":
            raise _Refused(f"'{x}' is declared inside the nest")
        ctx.no_value_flows_in(x, names)
        copies.append(_copy(cand, scop, ctx, var, names))
    collapse = _collapse(scop, loops)
    private = sorted(set(_inner_iterators(cand.node, band))
                     | {str(b.init.lvalue.name) for b in band[collapse:]
                        if isinstance(b.init, c_ast.Assignment) and isinstance(b.init.lvalue, c_ast.ID)})
    # an inner iterator read after the nest gets the sequentially last iteration's value
    # (``lastprivate``) when every iteration assigns it: the header of a loop directly in the body
    live = live_after(cand.func.body, cand.node, set(private))
    if live - _assigned_each_iteration(band[collapse - 1]):
        raise _Refused(f"the iterator '{sorted(live - _assigned_each_iteration(band[collapse - 1]))[0]}' "
                       "of an inner loop is read after the nest")
    private = [v for v in private if v not in live]
    try:
        checks = alias_checks(scop)
    except UnsupportedInput as err:
        raise _Refused(err.message) from err
    renamed = _renamed(cand.node, {c.name: c.private for c in copies})
    for loop in perfect_band(renamed)[:collapse]:
        why = canonical_header(loop, loop_iterator(loop))   # ``t + 1 < n`` as ``t < (long long) (n) - 1``
        if why is not None:
            raise _Refused(why)
    # the band's iterators are left at their exit values only where the program may read them
    exits = _skeleton(band[:collapse]) if live_after(cand.func.body, cand.node, set(names[:collapse])) else ""
    gen = SourceGenerator()
    inspector = ""
    if scop.inspected:
        values = {v.name: v.c_value or v.name for v in scop.variables}
        written = {st.write.buffer for st in scop.statements}
        # a gathered pointer that indexes or decides (``x[ci[p]]``, ``if (ci[p] == r)``, through a
        # temporary too: ``int c = ci[p]; ... x[c]``) is readable
        # too: the elements of it the inspection reads are the ones it records in its range, which
        # the checks keep off every write (the others stay unread: their temporaries are not needed)
        deciding = index_and_control_arrays(cand.node)
        readable = frozenset(values[v.name] for v in scop.variables if v.kind in ("array", "pointer")
                             and (v.name not in written or v.name in scop.index_arrays_written)
                             and (v.name not in scop.opaque or (v.name in scop.inspected
                                                                 and values[v.name] in deciding)))
        try:
            inspector = inspector_code(cand.node, {x: values.get(x, x) for x in sorted(scop.inspected)},
                                       const_tables(parsed.ast, cand.func), readable, scop.scattered)
        except NotInspectable as why:
            raise _Refused(f"{why}; 'restrict' on the pointers the nest writes would rule out any overlap "
                           "with what it gathers") from None
    return PrivateLoop(tuple(names[:collapse]), loc_of(cand.node), _text(gen, renamed), _text(gen, cand.node),
                       tuple(copies), tuple(private), exits, checks,
                       scop.preconditions + scatter_preconditions(scatters), tuple(scop.params),
                       lastprivate=tuple(sorted(live)), reductions=tuple(sorted(reductions.items())),
                       values=tuple((v.name, v.c_value) for v in scop.variables if v.c_value), inspector=inspector,
                       scattered=scatters, uneven=_uneven_cost(cand.node),
                       trips_c=trips_product_c(scop, loops[:collapse]) or "",
                       extents=tuple(sorted(first_extents(scop).items())))


def _uneven_cost(node: c_ast.Node) -> bool:
    """Whether the iterations' costs are ones only the data decide: a ``while`` or ``do``/``while``
    loop runs in the body (an escape-time loop per pixel), a ``for`` loop that ``break``s (a
    search), or a loop under a branch (shading only the pixels a ray hits)."""
    for n in walk_nodes(node):
        if isinstance(n, c_ast.While | c_ast.DoWhile):
            return True
        if n is not node and isinstance(n, c_ast.For) and any(isinstance(b, c_ast.Break) for b in walk_nodes(n.stmt)):
            return True
        if isinstance(n, c_ast.If) and any(isinstance(m, c_ast.For) for m in walk_nodes(n)):
            return True
    return False


#: OpenMP's reduction identifiers of the reductions a parallel loop may perform
_OMP_REDUCTION = {Combine.ADD: "+", Combine.MUL: "*", Combine.MAX: "max", Combine.MIN: "min",
                  Combine.BAND: "&", Combine.BOR: "|", Combine.BXOR: "^"}


def scalar_reductions(scop: Scop, names: set[str], strict_fp: bool) -> dict[str, str]:
    """Of the scalars ``names``, those that every statement touching them folds a term into with
    one operator (``x += e``, ``x = x > e ? x : e``; the term never reads ``x``), each with its
    OpenMP reduction identifier: combined per thread and once at the end, they get the value the
    loop gives them in any order (up to reassociation, which ``strict_fp`` refuses for floats)."""
    out: dict[str, str] = {}
    for x in sorted(names):
        try:
            var = scop.variable(x)
        except KeyError:
            continue
        if var.shape or var.kind == "local" or var.c_value:
            continue
        touching = [st for st in scop.statements if st.write.buffer == x or any(a.buffer == x for a in st.reads)]
        reds = [reduction_of(st) for st in touching]
        if not reds or any(r is None or r.accumulator.buffer != x or r.accumulator.index or r.op.is_arg
                           or r.partner for r in reds):
            continue
        ops = {r.op for r in reds if r is not None}
        op = ops.pop()
        if ops or op not in _OMP_REDUCTION or any(inexact_reduction(scop, r) for r in reds if r is not None):
            continue
        if strict_fp and var.is_float and op in (Combine.ADD, Combine.MUL):
            continue
        out[x] = _OMP_REDUCTION[op]
    return out


def fresh_locals(scop: Scop, innermost: c_ast.For, names: set[str]) -> set[str]:
    """Of ``names``, the scalars declared (not ``static``) in the body of the band's innermost
    loop ``innermost``."""
    decls: dict[str, c_ast.Decl] = {}

    class _Decls(c_ast.NodeVisitor):
        def visit_Decl(self, node: c_ast.Decl) -> None:
            decls[str(node.name)] = node
            self.generic_visit(node)

    _Decls().visit(innermost.stmt)
    out = set()
    for x in names:
        d = decls.get(x)
        if d is not None and "static" not in (d.storage or []) and isinstance(d.type, c_ast.TypeDecl):
            out.add(x)
    return out


def _text(gen: SourceGenerator, node: c_ast.Node) -> str:
    return str(gen._generate_stmt(node, add_indent=False))


class _Isl:
    """isl relations of one scop with a band of its first ``k`` loops."""

    def __init__(self, scop: Scop, k: int) -> None:
        self.scop = scop
        self.k = k
        self.prefix = f"[{', '.join(scop.params)}] -> " if scop.params else ""
        self.empty = isl.UnionMap(f"{self.prefix}{{ }}")

    def domain(self, s: Statement, tag: str) -> isl.Set:
        return isl.Set(self.scop.domain_str(s, tag))

    def access(self, s: Statement, acc: Access, tag: str) -> isl.Map:
        return isl.Map(self.scop.access_str(s, acc, tag)).intersect_domain(self.domain(s, tag))

    def sched(self, s: Statement, tag: str, sub: int) -> isl.UnionMap:
        return isl.Map(self.scop.schedule_str(s, tag, sub)).intersect_domain(self.domain(s, tag)).to_union_map()

    def no_value_flows_in(self, x: str, names: list[str]) -> None:
        """Every read of ``x`` takes its value from a write of ``x`` in the same band iteration."""
        reads, writes, sched = self.empty, self.empty, self.empty
        n = 0
        for s in self.scop.statements:
            for acc in s.reads:
                if acc.buffer == x:
                    tag = f"R{n}"
                    n += 1
                    reads = reads.union(self.access(s, acc, tag).to_union_map())
                    sched = sched.union(self.sched(s, tag, 0))
            if s.write.buffer == x:
                tag = f"W{n}"
                n += 1
                writes = writes.union(self.access(s, s.write, tag).to_union_map())
                sched = sched.union(self.sched(s, tag, 1))
        if reads.is_empty():
            return
        flow = (isl.UnionAccessInfo.from_sink(reads).set_must_source(writes).set_schedule_map(sched)
                .compute_flow())
        if not flow.get_may_no_source().is_empty():
            raise _Refused(f"'{x}' is read before the nest writes it: its value flows into the nest")
        ml = flow.get_may_dependence().get_map_list()
        for q in range(ml.n_map()):
            m = ml.get_at(q)
            same = " and ".join(f"s{d} = t{d}" for d in range(self.k))
            src = [f"s{d}" for d in range(m.dim(isl.dim_type.in_))]
            dst = [f"t{d}" for d in range(m.dim(isl.dim_type.out))]
            eq = isl.Map(f"{self.prefix}{{ {m.get_tuple_name(isl.dim_type.in_)}[{', '.join(src)}] -> "
                         f"{m.get_tuple_name(isl.dim_type.out)}[{', '.join(dst)}] : {same} }}")
            if not m.is_subset(eq):
                loop = ", ".join(f"'{v}'" for v in names[:self.k])
                raise _Refused(f"a value of '{x}' written in one iteration of loop {loop} is read in a later one")

    def _map_to_band(self, m: isl.Map) -> isl.Map:
        m = m.project_out(isl.dim_type.in_, self.k, m.dim(isl.dim_type.in_) - self.k)
        return m.set_tuple_name(isl.dim_type.in_, "mdp_band")

    def _set_to_band(self, d: isl.Set) -> isl.Set:
        return d.project_out(isl.dim_type.set, self.k, d.dim(isl.dim_type.set) - self.k).set_tuple_name("mdp_band")

    def written(self, x: str) -> tuple[isl.Map, isl.Set]:
        """``{band iteration -> element of x it writes}`` and the band's iterations."""
        w: isl.Map | None = None
        dom: isl.Set | None = None
        for n, s in enumerate(self.scop.statements):
            d = self._set_to_band(self.domain(s, f"S{n}"))
            dom = d if dom is None else dom.union(d)
            if s.write.buffer == x:
                m = self._map_to_band(self.access(s, s.write, f"S{n}"))
                w = m if w is None else w.union(m)
        assert w is not None and dom is not None
        return w.coalesce(), dom.coalesce()


def _copy(cand: Candidate, scop: Scop, ctx: _Isl, var: Variable, names: list[str]) -> PrivateCopy:
    """The per-thread copy of ``var`` and the code that fills it and writes its last values back."""
    x = var.name
    if var.kind not in ("array", "scalar") or any(not re.fullmatch(r"\d+", d.strip()) for d in var.shape):
        raise _Refused(f"'{x}' has no constant size to give each thread a copy of it")
    elems = 1
    for d in var.shape:
        elems *= int(d)
    if elems > MAX_PRIVATE_ELEMENTS:
        raise _Refused(f"'{x}' has {elems} elements, too many for a copy on every thread's stack")
    if _declared_inside(cand.node, x):
        raise _Refused(f"'{x}' is declared again inside the nest")
    w, dom = ctx.written(x)
    every = isl.Map.from_domain_and_range(dom, w.range())
    if not w.is_equal(every):
        loop = ", ".join(f"'{v}'" for v in names[:ctx.k])
        raise _Refused(f"the iterations of loop {loop} write different elements of '{x}', so its values after "
                       "the nest are not all the last iteration's")
    priv = f"{_PRIV}{x}"
    decl = f"{var.elem_type} {priv}{''.join(f'[{d.strip()}]' for d in var.shape)};"
    if not var.shape:
        return PrivateCopy(x, priv, decl, f"{priv} = {x};", f"{x} = {priv};")
    loops = _copy_loops(ctx, w.range(), scop)
    if loops is None:
        raise _Refused(f"the elements of '{x}' the nest writes have no simple loops to copy them")
    subs = lambda a, b: lambda m: f"{a}[{']['.join(m.group(1).split(', '))}] = {b}[{']['.join(m.group(1).split(', '))}];"  # noqa: E731
    pattern = re.compile(r"mdp_copy\(([^()]*)\);")
    return PrivateCopy(x, priv, decl, pattern.sub(subs(priv, x), loops), pattern.sub(subs(x, priv), loops))


def _copy_loops(ctx: _Isl, elements: isl.Set, scop: Scop) -> str | None:
    """C loops over ``elements`` calling ``mdp_copy(c0, c1, ...)`` at each (isl's code generator)."""
    if any(re.fullmatch(r"c\d+", p) for p in scop.params):
        return None
    n = elements.dim(isl.dim_type.set)
    its = ", ".join(f"e{d}" for d in range(n))
    sched = isl.Map(f"{ctx.prefix}{{ mdp_copy[{its}] -> [{its}] }}").intersect_domain(
        elements.set_tuple_name("mdp_copy"))
    build = isl.AstBuild.from_context(isl.Set(f"{ctx.prefix}{{ : }}"))
    text = str(build.node_from_schedule_map(isl.UnionMap.from_map(sched)).to_C_str())
    if re.search(r"\b(floord|min|max)\b|%", text):
        return None
    return text.rstrip()


class _Names(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.iterators: list[tuple[str, bool]] = []  # (name, declared in the header)
        self.decls: set[str] = set()

    def visit_For(self, node: c_ast.For) -> None:
        init = node.init
        if isinstance(init, c_ast.DeclList):
            self.iterators += [(str(d.name), True) for d in init.decls]
        elif isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID):
            self.iterators.append((str(init.lvalue.name), False))
        self.generic_visit(node)

    def visit_Decl(self, node: c_ast.Decl) -> None:
        self.decls.add(str(node.name))
        self.generic_visit(node)


def _inner_iterators(node: c_ast.For, band: list[c_ast.For]) -> list[str]:
    """Iterators of the loops inside the band that are declared outside the nest (not in a
    header, ``for (int k = ...)``, nor in the band's body, ``int k; for (k = 0; ...)``)."""
    v = _Names()
    v.visit(band[-1].stmt)
    inside = {d.name for d in walk_nodes(band[-1].stmt) if isinstance(d, c_ast.Decl) and d.name}
    return sorted({n for n, declared in v.iterators if not declared and n not in inside})


def _assigned_each_iteration(loop: c_ast.For) -> set[str]:
    """Iterators that every iteration of ``loop`` assigns: those of ``for`` loops directly in its
    body whose header assigns them (``for (j = 0; ...)`` runs its first clause even for no trip)."""
    body = loop.stmt
    items = list(body.block_items or []) if isinstance(body, c_ast.Compound) else [body]
    return {str(it.init.lvalue.name) for it in items
            if isinstance(it, c_ast.For) and isinstance(it.init, c_ast.Assignment) and it.init.op == "="
            and isinstance(it.init.lvalue, c_ast.ID)}


def _declared_inside(node: c_ast.For, name: str) -> bool:
    v = _Names()
    v.visit(node)
    return name in v.decls


def _collapse(scop: Scop, loops: list[int]) -> int:
    """How many band loops OpenMP may collapse: while a loop's bounds name no outer band iterator."""
    names: set[str] = set()
    for q, lp in enumerate(loops):
        loop = scop.loops[lp]
        used = {n for n, _ in loop.lower.terms} | {n for n, _ in loop.upper.terms}
        if used & names:
            return q
        names.add(loop.iterator)
    return len(loops)


class _Rename(c_ast.NodeVisitor):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_ID(self, node: c_ast.ID) -> None:
        if node.name in self.names:
            node.name = self.names[node.name]

    def visit_StructRef(self, node: c_ast.StructRef) -> None:
        self.visit(node.name)  # not the field

    def visit_FuncCall(self, node: c_ast.FuncCall) -> None:
        if node.args is not None:
            self.visit(node.args)


def _renamed(node: c_ast.For, names: dict[str, str]) -> c_ast.For:
    out = copy.deepcopy(node)
    _Rename(names).visit(out)
    return out


def _skeleton(band: list[c_ast.For]) -> str:
    """The band's headers with nothing inside: run after the parallel loop, they leave the
    iterators declared outside at their exit values (``""`` when every header declares its own)."""
    if all(isinstance(b.init, c_ast.DeclList) for b in band):
        return ""
    gen = SourceGenerator()
    heads = []
    for b in band:
        parts = [gen.visit(p) if p is not None else "" for p in (b.init, b.cond, b.next)]
        heads.append(f"for ({parts[0]}; {parts[1]}; {parts[2]})")
    return " ".join(f"{h} {{" for h in heads) + " " + "}" * len(heads)
