"""Tiled wavefronts: a kept band whose dependences all have constant distances -> ``Wavefront``.

An in-place Gauss--Seidel sweep (``A[i][j] = f(A[i-1][j], A[i][j-1], A[i][j+1], A[i+1][j])``)
or a dynamic-programming table (``D[i][j] = f(D[i-1][j], D[i][j-1], D[i-1][j-1])``) carries
dependences along every loop of its band, so no loop of it is parallel. Its dependences have
constant distance vectors, though, and Pluto's recipe applies (tiling hyperplanes, here found by
a small search rather than Pluto's ILP):

1. **Distances.** The band is the loops perfectly nested from the candidate's ``for`` down (at
   most ``MAX_DEPTH``; the body of the innermost runs as written at every point; a loop that
   counts downwards has the coordinate ``-iterator``, so coordinates grow in time). The direct
   dependences between the body's statement instances (isl dataflow: flow from the last
   writer, anti to the next writer, output to the next writer; every other ordering of two
   accesses follows from these) are projected onto band points; pairs within one point are kept
   by the body's own order. Scalars the body assigns before it reads them in every point (and
   that are not read after the band) are temporaries: each thread has its own copy, and their
   dependences are left out. The distance vectors, over all values of the parameters (the
   sizes, and the iterators of host loops around the band), form a finite set, or -- where each
   point runs an inner loop (Nussinov's split ``k``), enough work per point -- any set isl can
   bound below after a skew.
2. **Skew.** A unimodular lower-triangular skew ``y_r = x_r + sum c_rm x_m`` (``m < r``,
   ``0 <= c_rm <= MAX_SKEW``, smallest sum first) that makes every component of every distance
   non-negative (checked on each distance, or by isl on the set of distances): the skewed band
   is fully permutable, so rectangular tiles are legal.
3. **Tiles and wavefronts.** Tile ``T_r = floor(y_r / S_r)``; wavefront ``w = sum T_r``. The new
   schedule maps a point to ``(w, T, x)``: wavefronts in order, the tiles of one wavefront in
   parallel, a tile's points in the original lexicographic order (each point's body as
   written).
4. **Legality, by isl, before use.** Every projected dependence ``p -> q`` must have
   ``w(p) < w(q)``, or the same tile and ``p`` lexicographically before ``q``: no dependence joins
   two tiles of one wavefront, and none points backwards. Anything not proved is refused.

isl's code generator (``AstBuild.node_from_schedule_map``) writes the loops over ``(w, T, x)``;
``_CPrinter`` prints them as C with the tile loop marked by ``WAVEFRONT_TILES`` (the renderer
puts the worksharing pragma there). The result is a ``Wavefront`` (rendered by
``mdpoly.backends.wavefront_code`` for OpenMP, by ``mdpoly.backends.device_wavefront`` for GPU
targets: a launch per wavefront, a device thread per tile), with, where the sizes are known, its
counts of wavefronts, points and points per tile for the cost model; a refusal is a sentence.

The band's model reads gathers from arrays it never writes without locating them (``subst[a[i]][b[j]]``,
``mdpoly.frontend.opaque_reads``: no dependence can involve them); a gather that would need a
run-time inspection is refused. Size parameters the front end made (a padded row length
``i*(m + 1) + j``, a hoisted member) are declared at the start of the band's code
(``Wavefront.derived``).

``hyperplane_band`` is the fallback for non-uniform dependences that no skew makes non-negative:
no tiles, a search for one affine function of the iterators that every dependence increases;
its points are shared the same way (see its docstring).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import replace

import islpy as isl
from pycparser import c_ast

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.alias import alias_checks
from mdpoly.frontend.c_text import SourceGenerator, loop_iterator
from mdpoly.frontend.call_sizes import call_site_sizes
from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.parse import ParsedFile
from mdpoly.frontend.privatize import fix_known_params, instance_count, iteration_local, perfect_band
from mdpoly.frontend.scop import Candidate, extract_scop, loc_of
from mdpoly.frontend.tile_wavefront import group_threads, inner_coefficients, inner_shape, tile_points
from mdpoly.ir.fields import view_member
from mdpoly.ir.nest import WAVEFRONT_TILES, TileWave, Wavefront
from mdpoly.ir.scop import Scop

#: Tile edges per band depth (points of each skewed dimension, outermost first); tuned later.
DEFAULT_TILES: dict[int, tuple[int, ...]] = {2: (64, 64), 3: (16, 16, 16)}
#: The deepest band tiled (deeper perfect nests tile their outer loops, the rest is the body).
MAX_DEPTH = 3
#: The largest skew factor tried.
MAX_SKEW = 4
#: The most distinct distance vectors looked at.
MAX_DISTANCES = 512
#: Iterator types the point loops may assign isl's (``long``) bounds to.
_SIGNED = frozenset({"int", "signed", "signed int", "long", "long int", "signed long", "long long",
                     "long long int", "short", "short int", "ptrdiff_t"})
_WAVE = "mdp_w"
#: isl's node kinds whose names islpy's stubs lack (``for``, ``if`` are Python keywords)
_FOR = isl.ast_node_type.for_  # type: ignore[attr-defined]
_IF = isl.ast_node_type.if_  # type: ignore[attr-defined]
_TILE = "mdp_t"


class _Refused(Exception):
    """No wavefront for this band; the message says why."""


def wavefront_band(parsed: ParsedFile, cand: Candidate, tiles: dict[int, tuple[int, ...]] | None = None,
                   sizes: dict[str, int] | None = None) -> Wavefront | str:
    """The band from ``cand.node`` down as a tiled wavefront, or why it cannot be (a sentence).

    ``tiles``: the tile edges per band depth (``DEFAULT_TILES`` where not given); ``sizes``:
    known values of size parameters (``--size``), besides those of the call sites."""
    edges = {**DEFAULT_TILES, **(tiles or {})}
    deps: list[isl.UnionMap] = []  # the band's dependences, computed once for every depth tried

    def build(scop: Scop, band: list[c_ast.For]) -> tuple[Wavefront, isl.Map]:
        if not deps:
            deps.append(_dependences(scop))
        return _wavefront(cand, scop, deps[0], band, edges[len(band)])

    return _over_depths(parsed, cand, sizes, build)


def _prefix(scop: Scop) -> str:
    return f"[{', '.join(scop.params)}] -> " if scop.params else ""


def _dependences(scop: Scop, skip: frozenset[str] = frozenset()) -> isl.UnionMap:
    """The direct dependences between statement instances: flow (from the last writer), anti
    and output (to the next writer); none on the objects ``skip`` (temporaries made private)."""
    prefix = _prefix(scop)
    empty = isl.UnionMap(f"{prefix}{{ }}")
    reads, writes, sched = empty, empty, empty
    for st in scop.statements:
        dom = isl.Set(scop.domain_str(st))
        for acc in st.reads:
            if acc.buffer not in skip:
                reads = reads.union(isl.Map(scop.access_str(st, acc)).intersect_domain(dom).to_union_map())
        if st.write.buffer not in skip:
            writes = writes.union(isl.Map(scop.access_str(st, st.write)).intersect_domain(dom).to_union_map())
        sched = sched.union(isl.Map(scop.schedule_str(st)).intersect_domain(dom).to_union_map())

    def flow(sink: isl.UnionMap, must: isl.UnionMap, may: isl.UnionMap) -> isl.UnionMap:
        info = isl.UnionAccessInfo.from_sink(sink).set_must_source(must).set_may_source(may)
        return info.set_schedule_map(sched).compute_flow().get_may_dependence()

    return flow(reads, writes, empty).union(flow(writes, writes, reads))


def _to_band(m: isl.Map, depth: int) -> isl.Map:
    m = m.project_out(isl.dim_type.in_, depth, m.dim(isl.dim_type.in_) - depth)
    m = m.project_out(isl.dim_type.out, depth, m.dim(isl.dim_type.out) - depth)
    return m.set_tuple_name(isl.dim_type.in_, "B").set_tuple_name(isl.dim_type.out, "B")


def _band_dependences(deps: isl.UnionMap, prefix: str, xs: list[str], ys: list[str], names: list[str],
                      after: str) -> isl.Map:
    """``deps`` as a relation between iterations ``B[xs] -> B[ys]`` of the band's loops, without
    the pairs inside one iteration; refused when none is left (``after`` ends that reason)."""
    depth = len(xs)
    band_deps: isl.Map | None = None
    ml = deps.get_map_list()
    for q in range(ml.n_map()):
        m = _to_band(ml.get_at(q), depth)
        band_deps = m if band_deps is None else band_deps.union(m)
    differ = isl.Map(f"{prefix}{{ B[{', '.join(xs)}] -> B[{', '.join(ys)}] : "
                     f"{' or '.join(f'{x} != {y}' for x, y in zip(xs, ys, strict=True))} }}")
    if band_deps is None or band_deps.intersect(differ).is_empty():
        raise _Refused(f"no dependence joins two iterations of the loops {_list(names)}{after}")
    return band_deps.intersect(differ).coalesce()


def _wavefront(cand: Candidate, scop: Scop, deps: isl.UnionMap, band: list[c_ast.For],
               sizes: tuple[int, ...]) -> tuple[Wavefront, isl.Map]:
    depth = len(band)
    names = [loop_iterator(b) for b in band]
    for st in scop.statements:
        if list(scop.iterators(st)[:depth]) != names:
            raise _Refused(f"a statement of the band is not inside loop '{names[-1]}'")
    loops = [scop.loops[scop.statements[0].loops[r]] for r in range(depth)]
    steps = [lp.step for lp in loops]  # a downward loop runs its points in the order of -iterator
    for lp in loops:
        if lp.c_type not in _SIGNED:
            raise _Refused(f"the iterator '{lp.iterator}' has type '{lp.c_type}', not a signed integer")
    # scalars assigned before they are read in every point: a copy per thread, no dependences
    temps, outside = _private_scalars(cand, scop, names)
    if temps:
        deps = _dependences(scop, frozenset(temps))
    prefix = _prefix(scop)
    xs = [f"x{r}" for r in range(depth)]
    ys = [f"y{r}" for r in range(depth)]
    band_deps = _band_dependences(deps, prefix, xs, ys, names, "")
    try:
        dist = _distances(band_deps, names)
    except _Refused as why:
        if not _runs_loop(band):
            raise
        skew = _skew_exact(band_deps, steps, names, prefix, str(why))
    else:
        skew = _skew([tuple(s * d for s, d in zip(steps, v, strict=True)) for v in dist], names)
    domain: isl.Set | None = None
    for st in scop.statements:
        d = isl.Set(scop.domain_str(st))
        d = d.project_out(isl.dim_type.set, depth, d.dim(isl.dim_type.set) - depth).set_tuple_name("B")
        domain = d if domain is None else domain.union(d)
    assert domain is not None
    ts = [f"T{r}" for r in range(depth)]
    skewed = [" + ".join([ys[r], *(f"{c} * {ys[m]}" for m, c in enumerate(skew[r]) if c)]) for r in range(depth)]
    tile_cons = [f"{s} * {t} <= {y} <= {s} * {t} + {s - 1}" for s, t, y in zip(sizes, ts, skewed, strict=True)]
    # the loop over the tiles of one wavefront that is shared out comes first (``_parallel_dim``)
    order = _tile_order(depth)
    sched = isl.Map(f"{prefix}{{ B[{', '.join(xs)}] -> [w, {', '.join(ts[r] for r in order)}, {', '.join(ys)}] : "
                    f"{' and '.join(f'{y} = {s} * {x}' for x, y, s in zip(xs, ys, steps, strict=True))} and "
                    f"{' and '.join(tile_cons)}"
                    f" and w = {' + '.join(ts)} }}").intersect_domain(domain.coalesce())
    _check(band_deps, sched, depth, prefix, names)
    waves = _generate(sched, prefix, names, [lp.c_type for lp in loops], steps, band, scop.params)
    try:   # the one-thread-per-tile form stands without it
        in_tile = _in_tile(band_deps, sched, domain.coalesce(), skew, sizes, steps, names,
                           [lp.c_type for lp in loops], band, scop.params, prefix)
    except isl.Error:
        in_tile = None
    private, exits = _iterators(cand, band, names)
    try:
        checks = alias_checks(scop)
    except UnsupportedInput as err:
        raise _Refused(err.message) from err
    gen = SourceGenerator()
    coords = [n if st == 1 else f"-{n}" for n, st in zip(names, steps, strict=True)]
    return Wavefront(tuple(names), tuple(_skew_text(coords, skew)), sizes, loc_of(cand.node),
                     waves, str(gen._generate_stmt(cand.node, add_indent=False)),
                     tuple(sorted({*private, *outside})), exits, checks, scop.preconditions,
                     tuple(scop.params), in_tile=in_tile), sched


def _runs_loop(band: list[c_ast.For]) -> bool:
    """Whether the band's body runs a loop at each point. Dependences that are not constant come
    from such loops (Nussinov's split ``k``); where a point is a few operations (Floyd--Warshall's
    one minimum), a barrier per wavefront under a sequential loop costs more than sharing gains."""
    inner = _Inner()
    inner.visit(band[-1].stmt)
    return inner.loops > 0


def _private_scalars(cand: Candidate, scop: Scop, names: list[str]) -> tuple[list[str], list[str]]:
    """The scalars the band writes whose every read takes the value written in the same point and
    that are not read after it (their dependences vanish with a copy per thread), and those of
    them declared outside the nest (each thread's copy); other scalars keep their dependences."""
    written = {st.write.buffer for st in scop.statements}
    temps = [v.name for v in scop.variables
             if not v.shape and v.kind in ("scalar", "local") and v.name in written
             and not iteration_local(scop, names, v.name)]
    outside = {v.name for v in scop.variables if v.name in temps and v.kind == "scalar"}
    live = live_after(cand.func.body, cand.node, outside)
    return [t for t in temps if t not in live], sorted(outside - live)


def _skew_exact(band_deps: isl.Map, steps: list[int], names: list[str], prefix: str, why: str) -> list[tuple[int, ...]]:
    """The smallest lower-triangular skew making every component of every distance non-negative,
    checked by isl over the distances as a set (not constant: Nussinov's ``T[i][k]`` for every
    ``k`` between ``i`` and ``j``)."""
    depth = len(names)
    deltas = band_deps.deltas()
    ds = [f"d{r}" for r in range(depth)]
    slots = [(r, m) for r in range(1, depth) for m in range(r)]
    combos = sorted(itertools.product(range(MAX_SKEW + 1), repeat=len(slots)), key=lambda c: (sum(c), c))
    for combo in combos:
        rows = [[0] * r for r in range(depth)]
        for (r, m), c in zip(slots, combo, strict=True):
            rows[r][m] = c
        cons = " and ".join(" + ".join([f"{steps[r]} * {ds[r]}", *(f"{c * steps[m]} * {ds[m]}"
                                                                  for m, c in enumerate(rows[r]) if c)]) + " >= 0"
                            for r in range(depth))
        if deltas.is_subset(isl.Set(f"{prefix}{{ B[{', '.join(ds)}] : {cons} }}")):
            return [tuple(row) for row in rows]
    raise _Refused(f"{why}, and no skew of them by factors up to {MAX_SKEW} makes every distance non-negative")


def _tile_order(depth: int) -> list[int]:
    """The tile dimensions in the order of their loops: first the one whose tiles of a wavefront
    are shared among the threads. In a 3-D band the first loop is usually time, with a few tiles
    only (60 steps: 4 tiles of 16), so the second is shared; the others run inside each share."""
    first = 1 if depth >= 3 else 0
    return [first, *(r for r in range(depth) if r != first)]


def _list(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def _distances(band_deps: isl.Map, names: list[str]) -> list[tuple[int, ...]]:
    """Every distance vector of ``band_deps`` over all parameter values (a finite set, or refused)."""
    deltas = band_deps.deltas()
    deltas = deltas.project_out(isl.dim_type.param, 0, deltas.dim(isl.dim_type.param)).coalesce()
    if not deltas.is_bounded():
        raise _Refused(f"the dependence distances of the loops {_list(names)} are not constant")
    count = deltas.count_val()
    if not count.is_int() or count.to_python() > MAX_DISTANCES:
        raise _Refused(f"the loops {_list(names)} have too many distinct dependence distances")
    out: list[tuple[int, ...]] = []

    def take(pt: isl.Point) -> None:
        out.append(tuple(pt.get_coordinate_val(isl.dim_type.set, r).to_python() for r in range(len(names))))

    deltas.foreach_point(take)
    return out


def _skew(dist: list[tuple[int, ...]], names: list[str]) -> list[tuple[int, ...]]:
    """The smallest lower-triangular skew (row ``r``: factors of ``x_0 .. x_{r-1}``) making every
    component of every distance non-negative."""
    depth = len(names)
    slots = [(r, m) for r in range(1, depth) for m in range(r)]
    combos = sorted(itertools.product(range(MAX_SKEW + 1), repeat=len(slots)), key=lambda c: (sum(c), c))
    for combo in combos:
        rows = [[0] * r for r in range(depth)]
        for (r, m), c in zip(slots, combo, strict=True):
            rows[r][m] = c
        if all(d[r] + sum(c * d[m] for m, c in enumerate(rows[r])) >= 0 for d in dist for r in range(depth)):
            return [tuple(row) for row in rows]
    raise _Refused(f"no skew of the loops {_list(names)} by factors up to {MAX_SKEW} makes every dependence "
                   "distance non-negative")


def _skew_text(names: list[str], skew: list[tuple[int, ...]]) -> list[str]:
    out = []
    for r, row in enumerate(skew):
        terms = [names[r]] + [names[m] if c == 1 else f"{c}*{names[m]}" for m, c in enumerate(row) if c]
        out.append("+".join(terms).replace("+-", "-"))
    return out


def _check(band_deps: isl.Map, sched: isl.Map, depth: int, prefix: str, names: list[str]) -> None:
    """Every dependence goes to a later wavefront, or stays in its tile and goes forward in it."""
    a = ["w", *(f"T{r}" for r in range(depth)), *(f"x{r}" for r in range(depth))]
    b = [f"{v}_" for v in a]
    same_tile = " and ".join(f"T{r} = T{r}_" for r in range(depth))
    lex = " or ".join("(" + " and ".join([*(f"x{m} = x{m}_" for m in range(r)), f"x{r} < x{r}_"]) + ")"
                      for r in range(depth))
    ok = isl.Map(f"{prefix}{{ [{', '.join(a)}] -> [{', '.join(b)}] : w < w_ or "
                 f"(w = w_ and {same_tile} and ({lex})) }}")
    timed = band_deps.apply_domain(sched).apply_range(sched)
    if not timed.is_subset(ok):
        raise _Refused(f"isl could not prove the tiled wavefront of the loops {_list(names)} keeps every dependence")


# {{{ C text of isl's loops


class _CPrinter:
    """isl's AST for the wavefront schedule as C: ``mdp_*`` loops declared ``long``; the band's
    loops assign the user's iterators (declared with their type where the original header
    declares them; a downward loop's iterator is set from its upward ``mdp_p<r>``); sizes are
    read as ``long``; every point runs ``body``; ``WAVEFRONT_TILES`` precedes each loop over the
    tiles of one wavefront (the first tile dimension of ``_tile_order``)."""

    def __init__(self, names: list[str], types: list[str], declared: list[bool], steps: list[int], body: str,
                 params: set[str], tile_loop: str = "", assign: bool = False,
                 point: Callable[[list[str]], list[str]] | None = None) -> None:
        self.names = names
        #: instead of a point's body: the lines for a statement instance's coordinates (a tile's code)
        self.point = point
        #: the loop over the parts of one wavefront that is shared out; ``assign``: every point
        #: assigns each iterator from isl's expression (a hyperplane's loops are not the band's)
        self.tile_loop = tile_loop or f"{_TILE}{_tile_order(len(names))[0]}"
        self.assign = assign
        self.params = params
        self.steps = steps
        self.types = dict(zip(names, types, strict=True))
        self.declared = dict(zip(names, declared, strict=True))
        self.body = body.rstrip("\n")
        self.lines: list[str] = []

    def node(self, node: isl.AstNode, depth: int, in_tile: bool) -> None:
        kind = node.get_type()
        pad = "  " * depth
        if kind == isl.ast_node_type.block:
            children = node.block_get_children()
            for q in range(children.n_ast_node()):
                self.node(children.get_at(q), depth, in_tile)
        elif kind == _IF:
            self.lines.append(f"{pad}if ({self.expr(node.if_get_cond())}) {{")
            self.node(node.if_get_then_node(), depth + 1, in_tile)
            if node.if_has_else_node():
                self.lines.append(f"{pad}}} else {{")
                self.node(node.if_get_else_node(), depth + 1, in_tile)
            self.lines.append(f"{pad}}}")
        elif kind == isl.ast_node_type.mark:
            self.node(node.mark_get_node(), depth, in_tile)
        elif kind == _FOR:
            self.loop(node, depth, in_tile)
        elif kind == isl.ast_node_type.user:
            self.user(node.user_get_expr(), depth, in_tile)
        else:
            raise _Refused("isl's code generator made a node the wavefront printer does not know")

    def loop(self, node: isl.AstNode, depth: int, in_tile: bool) -> None:
        pad = "  " * depth
        it = node.for_get_iterator().get_id().get_name()
        tile = it == self.tile_loop
        decl = "long " if it.startswith("mdp_") else (f"{self.types[it]} " if self.declared.get(it) else "")
        init = self.expr(node.for_get_init())
        if node.for_is_degenerate() and not tile:
            self.lines.append(f"{pad}{{")
            self.lines.append(f"{pad}  {decl}{it} = {init};")
            self.node(node.for_get_body(), depth + 1, in_tile)
            self.lines.append(f"{pad}}}")
            return
        if tile and node.for_is_degenerate():
            cond = f"{it} <= {init}"
        else:
            c = node.for_get_cond()
            inc = node.for_get_inc()
            if (c.get_type() != isl.ast_expr_type.op or c.op_get_type() not in (isl.ast_expr_op_type.le,
                                                                               isl.ast_expr_op_type.lt)
                    or self.expr(c.op_get_arg(0)) != it or inc.get_type() != isl.ast_expr_type.int
                    or inc.int_get_val().to_python() != 1):
                raise _Refused("isl's code generator made a loop of a form the wavefront printer does not take")
            cond = f"{it} {'<=' if c.op_get_type() == isl.ast_expr_op_type.le else '<'} {self.expr(c.op_get_arg(1))}"
        if tile:
            if in_tile:
                raise _Refused("isl's code generator nested one tile loop in another")
            self.lines.append(WAVEFRONT_TILES)
        self.lines.append(f"{pad}for ({decl}{it} = {init}; {cond}; {it}++) {{")
        self.node(node.for_get_body(), depth + 1, in_tile or tile)
        self.lines.append(f"{pad}}}")

    def user(self, expr: isl.AstExpr, depth: int, in_tile: bool) -> None:
        if not in_tile:
            raise _Refused("isl's code generator placed points outside every tile loop")
        args = [self.expr(expr.op_get_arg(q)) for q in range(1, expr.op_get_n_arg())]
        if self.point is not None:
            self.lines.extend("  " * depth + ln if ln.strip() else ln for ln in self.point(args))
            return
        if not self.assign and any(a != n for a, n, s in zip(args, self.names, self.steps, strict=True) if s == 1):
            raise _Refused("isl's code generator named a point by other than the band's iterators")
        pad = "  " * depth
        # a downward loop's points are counted upwards by ``mdp_p<r>``: its iterator is ``-mdp_p<r>``
        sets = [f"{self.types[n] + ' ' if self.declared[n] else ''}{n} = {a};"
                for a, n, s in zip(args, self.names, self.steps, strict=True) if s != 1 or self.assign]
        body = self.body if not sets else "{\n" + "\n".join(["  " + x for x in sets] + [
            "  " + ln if ln.strip() and not ln.startswith("#") else ln for ln in self.body.splitlines()]) + "\n}"
        self.lines.extend(pad + ln if ln.strip() and not ln.startswith("#") else ln for ln in body.splitlines())

    def expr(self, e: isl.AstExpr) -> str:
        kind = e.get_type()
        if kind == isl.ast_expr_type.id:
            name = str(e.id_get_id().get_name())
            # sizes may be unsigned or narrower: isl's arithmetic is over the integers
            return f"((long){name})" if name in self.params else name
        if kind == isl.ast_expr_type.int:
            v = e.int_get_val().to_python()
            return f"({v})" if v < 0 else f"{v}L" if abs(v) > (1 << 31) - 1 else str(v)
        if kind != isl.ast_expr_type.op:
            raise _Refused("isl's code generator made an expression the wavefront printer does not know")
        op = e.op_get_type()
        args = [self.expr(e.op_get_arg(q)) for q in range(e.op_get_n_arg())]
        t = isl.ast_expr_op_type
        binary = {t.add: "+", t.sub: "-", t.mul: "*", t.div: "/", t.pdiv_q: "/", t.pdiv_r: "%", t.zdiv_r: "%",
                  t.eq: "==", t.le: "<=", t.lt: "<", t.ge: ">=", t.gt: ">", t.and_: "&&", t.and_then: "&&",
                  t.or_: "||", t.or_else: "||"}
        if op in binary and len(args) == 2:
            return f"({args[0]} {binary[op]} {args[1]})"
        if op == t.minus and len(args) == 1:
            return f"(-{args[0]})"
        if op in (t.min, t.max) and args:
            sign = "<" if op == t.min else ">"
            out = args[0]
            for a in args[1:]:
                out = f"({out} {sign} {a} ? {out} : {a})"
            return out
        if op in (t.cond, t.select) and len(args) == 3:
            return f"({args[0]} ? {args[1]} : {args[2]})"
        if op == t.fdiv_q and len(args) == 2:
            divisor = e.op_get_arg(1)
            if divisor.get_type() != isl.ast_expr_type.int or divisor.int_get_val().to_python() <= 0:
                raise _Refused("isl's code generator divided by other than a positive constant")
            a, b = args
            return f"({a} >= 0 ? {a} / {b} : -((-{a} + {b} - 1) / {b}))"
        raise _Refused("isl's code generator made an expression the wavefront printer does not know")


def _generate(sched: isl.Map, prefix: str, names: list[str], types: list[str], steps: list[int],
              band: list[c_ast.For], params: tuple[str, ...]) -> str:
    ctx = sched.get_ctx()
    depth = len(names)
    ids = isl.IdList.alloc(ctx, 2 * depth + 1)
    points = [n if s == 1 else f"mdp_p{r}" for r, (n, s) in enumerate(zip(names, steps, strict=True))]
    for nm in [_WAVE, *(f"{_TILE}{r}" for r in _tile_order(depth)), *points]:
        ids = ids.add(isl.Id(nm, context=ctx))
    build = isl.AstBuild.from_context(isl.Set(f"{prefix}{{ : }}")).set_iterators(ids)
    ast = build.node_from_schedule_map(isl.UnionMap.from_map(sched))
    body = str(SourceGenerator()._generate_stmt(band[-1].stmt, add_indent=False))
    declared = [isinstance(b.init, c_ast.DeclList) for b in band]
    printer = _CPrinter(names, types, declared, steps, body, set(params))
    printer.node(ast, 0, False)
    if WAVEFRONT_TILES not in printer.lines:
        raise _Refused("isl's code generator made no tile loop")
    return "\n".join(printer.lines)


def _in_tile(band_deps: isl.Map, sched: isl.Map, domain: isl.Set, skew: list[tuple[int, ...]],
             sizes: tuple[int, ...], steps: list[int], names: list[str], types: list[str], band: list[c_ast.For],
             params: tuple[str, ...], prefix: str) -> TileWave | None:
    """The tiles' own wavefronts for a work-group per tile (``mdpoly.frontend.tile_wavefront``):
    isl's loops over wavefronts and tiles (one statement instance per non-empty tile) with the
    tile's code at each; ``None`` where no inner hyperplane is proved, a loop steps by other than
    one, or isl's loops are of a form the printer does not take (one thread per tile stays)."""
    coefficients = inner_coefficients(band_deps, sched, skew, sizes, prefix)
    if coefficients is None or any(abs(s) != 1 for s in steps):
        return None
    depth = len(names)
    declared = [isinstance(b.init, c_ast.DeclList) for b in band]
    body = str(SourceGenerator()._generate_stmt(band[-1].stmt, add_indent=False))
    iterators = [(f"{t} " if d else "", n) for n, t, d in zip(names, types, declared, strict=True)]
    order = _tile_order(depth)
    printer = _CPrinter(names, types, declared, steps, body, set(params))
    condition = printer.expr(_condition(domain))

    def point(args: list[str]) -> list[str]:   # args: the wavefront, then the tiles in loop order
        tile = [""] * depth
        for k, r in enumerate(order):
            tile[r] = args[1 + k]
        return tile_points(coefficients, sizes, skew, steps, iterators, condition, body, tile)

    ids = [_WAVE, *(f"{_TILE}{r}" for r in order)]
    tiles = sched.range().project_out(isl.dim_type.set, 1 + depth, depth).set_tuple_name("Tile")
    tmap = isl.Map(f"{prefix}{{ Tile[{', '.join(ids)}] -> [{', '.join(ids)}] }}").intersect_domain(tiles)
    ctx = sched.get_ctx()
    id_list = isl.IdList.alloc(ctx, len(ids))
    for nm in ids:
        id_list = id_list.add(isl.Id(nm, context=ctx))
    build = isl.AstBuild.from_context(isl.Set(f"{prefix}{{ : }}")).set_iterators(id_list)
    tile_printer = _CPrinter(names, types, declared, steps, body, set(params), point=point)
    try:
        tile_printer.node(build.node_from_schedule_map(isl.UnionMap.from_map(tmap)), 0, False)
    except _Refused:
        return None
    if WAVEFRONT_TILES not in tile_printer.lines:
        return None
    inner, candidates, _ = inner_shape(coefficients, sizes)
    return TileWave("\n".join(tile_printer.lines), coefficients, inner, candidates, group_threads(candidates))


def _condition(domain: isl.Set) -> isl.AstExpr:
    """The band's domain as an isl expression over its points' coordinates ``mdp_x<r>`` (and the sizes)."""
    depth = domain.dim(isl.dim_type.set)
    for r in range(depth):
        domain = domain.set_dim_name(isl.dim_type.set, r, f"mdp_x{r}")
    n = domain.dim(isl.dim_type.param)
    params = domain.move_dims(isl.dim_type.param, n, isl.dim_type.set, 0, depth).params()
    return isl.AstBuild.from_context(isl.Set.universe(params.get_space())).expr_from_set(params)


# }}}


class _Inner(c_ast.NodeVisitor):
    """Iterators assigned by ``for`` headers inside the band's body that the headers do not declare."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.loops = 0

    def visit_For(self, node: c_ast.For) -> None:
        self.loops += 1
        if isinstance(node.init, c_ast.Assignment) and isinstance(node.init.lvalue, c_ast.ID):
            self.names.add(str(node.init.lvalue.name))
        self.generic_visit(node)


def _iterators(cand: Candidate, band: list[c_ast.For], names: list[str]) -> tuple[tuple[str, ...], str]:
    """The iterators each tile needs its own copy of, and the band's headers around nothing (which
    leave the iterators declared outside at their exit values; ``""`` when each header declares its own)."""
    outer = [n for b, n in zip(band, names, strict=True) if not isinstance(b.init, c_ast.DeclList)]
    inner = _Inner()
    inner.visit(band[-1].stmt)
    live = live_after(cand.func.body, cand.node, inner.names - set(names))
    if live:
        raise _Refused(f"the iterator '{sorted(live)[0]}' of a loop inside the band is read after it")
    private = tuple(sorted(set(outer) | inner.names))
    if not outer:
        return private, ""
    gen = SourceGenerator()
    heads = []
    for b in band:
        parts = [gen.visit(p) if p is not None else "" for p in (b.init, b.cond, b.next)]
        heads.append(f"for ({parts[0]}; {parts[1]}; {parts[2]})")
    return private, " ".join(f"{h} {{" for h in heads) + " " + "}" * len(heads)


# {{{ wavefronts along a hyperplane (non-uniform dependences)

#: The largest absolute coefficient of a hyperplane tried.
MAX_COEFFICIENT = 2


def hyperplane_band(parsed: ParsedFile, cand: Candidate, sizes: dict[str, int] | None = None) -> Wavefront | str:
    """The band from ``cand.node`` down run along a hyperplane, or why it cannot be (a sentence).

    For bands whose dependence distances are not constant and that no skew makes fully
    permutable (so no tiles: ``wavefront_band`` refuses), but that all go forward along one affine function
    ``h = c . x`` of the band's iterators (small integer ``c``, fewest non-zeros first):
    ``h(sink) - h(source) >= 1`` for every dependence between two band points, proved by isl
    over the exact (non-uniform) relations. Scalars the body assigns before it reads them in
    every point are temporaries: each thread has its own copy, and their dependences are
    dropped (``mdpoly.frontend.privatize.iteration_local`` checks it). The new schedule maps a
    point to ``(h, the other iterators)`` with one iterator with coefficient +-1 left out (each
    point computes it from ``h``): the values of ``h`` in order, the points of one value in
    parallel (the loop over the outermost remaining iterator is shared), each point's body as
    written. isl proves every dependence goes to a larger ``h`` and generates the loops."""
    return _over_depths(parsed, cand, sizes, lambda scop, band: _hyperplane(parsed, cand, scop, band))


def _count(s: isl.Set, known: dict[str, int]) -> int | None:
    fixed = fix_known_params(s, known)
    if fixed is None:
        return None
    count = fixed.count_val()
    return count.to_python() if count.is_int() else None


def _wave_counts(wave: Wavefront, sched: isl.Map, known: dict[str, int]) -> Wavefront:
    """``wave`` with, where the sizes are known, how many wavefronts the schedule ``sched`` (band
    point -> ``[w, the parallel item's loop, ...]``) runs, how many band points, and at most how
    many points one parallel item (a tile, or a hyperplane's point or row of points) runs."""
    rng = sched.range()
    n = rng.dim(isl.dim_type.set)
    waves = _count(rng.project_out(isl.dim_type.set, 1, n - 1), known)
    points = _count(sched.domain(), known)
    item: int | None = 1
    if wave.hyperplane:   # the dimensions after the shared one run inside an item: their box
        item = 1 if n <= 2 else _count(rng.project_out(isl.dim_type.set, 0, 2), known)
    else:
        tile = 1
        for t in wave.tiles:
            tile *= t
        item = min(tile, points) if points is not None else tile
        return replace(wave, wavefronts=waves, points=points, item_points=item, item_tiles=_item_tiles(rng, known))
    return replace(wave, wavefronts=waves, points=points, item_points=item)


def _item_tiles(rng: isl.Set, known: dict[str, int]) -> int | None:
    """At most how many tiles one parallel item runs in turn, where the sizes are known: the
    values of each tile loop between the shared one and the last (which the wavefront fixes),
    multiplied (``rng``: the schedule's range ``[w, tiles in loop order..., points...]``)."""
    depth = (rng.dim(isl.dim_type.set) - 1) // 2
    out = 1
    for k in range(2, depth):   # set dimension k: a tile loop inside the shared one, not the last
        one = rng.project_out(isl.dim_type.set, k + 1, rng.dim(isl.dim_type.set) - k - 1)
        n = _count(one.project_out(isl.dim_type.set, 0, k), known)
        if n is None:
            return None
        out *= n
    return out


def _over_depths(parsed: ParsedFile, cand: Candidate, sizes: dict[str, int] | None,
                 build: Callable[[Scop, list[c_ast.For]], tuple[Wavefront, isl.Map]]) -> Wavefront | str:
    """``build`` on the band from ``cand.node`` down, deepest first (at most ``MAX_DEPTH`` loops,
    at least two), its instance count (and wavefront counts, ``_wave_counts``) attached; else the
    first reason a depth was refused."""
    band = perfect_band(cand.node)
    if len(band) < 2:
        return (f"a wavefront needs two or more perfectly nested loops, and loop '{loop_iterator(band[0])}' "
                "has none directly inside it")
    try:
        scop = extract_scop(parsed, cand, privatize=False, opaque_reads=True)
    except UnsupportedInput as err:
        return err.message
    except isl.Error as err:
        return f"isl failed on the band: {err}"
    if scop.inspected or scop.index_arrays_written:   # no inspection runs ahead of a wavefront
        gathered = sorted(scop.inspected | scop.index_arrays_written)[0]
        return (f"its loops gather from '{gathered}' at indices read from memory, which only a run-time inspection "
                "could check against what the band writes")
    derived = _derived_sizes(scop, band)
    if isinstance(derived, str):
        return derived
    refusal = ""
    for depth in range(min(len(band), MAX_DEPTH), 1, -1):
        try:
            wave, sched = build(scop, band[:depth])
            known = {**call_site_sizes(parsed.ast, cand.func, scop.params), **(sizes or {})}
            wave = replace(wave, work=instance_count(scop, known), derived=derived,
                           revisits=_revisits(scop, [loop_iterator(b) for b in band[:depth]]))
            return _wave_counts(wave, sched, known)
        except _Refused as why:
            refusal = refusal or str(why)
        except (isl.Error, UnsupportedInput) as err:
            refusal = refusal or f"isl failed on the band: {err}"
    return refusal


def _revisits(scop: Scop, names: list[str]) -> bool:
    """Whether some array write of the band leaves out one of its iterators (``A[i][j]`` in a
    ``t, i, j`` band: each sweep writes the same elements again)."""
    return any(st.write.index and not st.write.depends_on(it) for st in scop.statements for it in names)


def _derived_sizes(scop: Scop, band: list[c_ast.For]) -> tuple[tuple[str, str], ...] | str:
    """The size parameters the front end made (a padded row length ``mdp_sum_mp1``, a product
    ``mdp_p_j_n``, a hoisted member), each with the C expression the band's code declares it as,
    or why one cannot be declared there: a struct field view (no value of its own), or a value
    that reads an iterator of the band (it changes inside the band)."""
    inside = {loop_iterator(b) for b in band}
    out: list[tuple[str, str]] = []
    for v in scop.variables:
        if not v.c_value:
            continue
        if view_member(v.name) or set(re.findall(r"[A-Za-z_]\w*", v.c_value)) & inside:
            return f"its loops use the size '{v.name}' = {v.c_value}, which only a computation's call passes"
        out.append((v.name, v.c_value))
    return tuple(out)


def _temporaries(cand: Candidate, scop: Scop, names: list[str]) -> tuple[list[str], list[str]]:
    """The scalars the band writes whose every read takes the value written in the same point
    (refused otherwise), and those of them declared outside the nest (each thread's copy)."""
    written = {st.write.buffer for st in scop.statements}
    temps: list[str] = []
    for v in scop.variables:
        if v.shape or v.kind not in ("scalar", "local") or v.name not in written:
            continue
        why = iteration_local(scop, names, v.name)
        if why:
            raise _Refused(why)
        temps.append(v.name)
    outside = [v.name for v in scop.variables if v.name in temps and v.kind == "scalar"]
    live = live_after(cand.func.body, cand.node, set(outside))
    if live:
        raise _Refused(f"the temporary '{sorted(live)[0]}' is read after the loops {_list(names)}")
    return temps, outside


def _affine_text(coeffs: tuple[int, ...], names: list[str]) -> str:
    """``c . x`` as C, positive terms first (``j-i``, ``2*i+j``)."""
    terms = sorted(((c, n) for c, n in zip(coeffs, names, strict=True) if c), key=lambda t: t[0] < 0)
    out = ""
    for c, n in terms:
        word = n if abs(c) == 1 else f"{abs(c)}*{n}"
        out += (word if not out and c > 0 else f"-{word}" if c < 0 else f"+{word}")
    return out


def _hyperplane(parsed: ParsedFile, cand: Candidate, scop: Scop, band: list[c_ast.For]) -> tuple[Wavefront, isl.Map]:
    depth = len(band)
    names = [loop_iterator(b) for b in band]
    if not _runs_loop(band):
        # a few operations per point: a barrier per hyperplane and accesses across rows cost more
        # than sharing the points gains (Floyd--Warshall's i, j); tiles would be needed
        raise _Refused(f"a point of the loops {_list(names)} runs no loop, too little work to share the points "
                       "of each hyperplane")
    for st in scop.statements:
        if list(scop.iterators(st)[:depth]) != names:
            raise _Refused(f"a statement of the band is not inside loop '{names[-1]}'")
    modelled = {v.name for v in scop.variables}
    if any(a.buffer not in modelled for st in scop.statements for a in (st.write, *st.reads)):
        raise _Refused("the band reads an object the model has no variable for")
    loops = [scop.loops[scop.statements[0].loops[r]] for r in range(depth)]
    for lp in loops:
        if lp.c_type not in _SIGNED:
            raise _Refused(f"the iterator '{lp.iterator}' has type '{lp.c_type}', not a signed integer")
    temps, outside = _temporaries(cand, scop, names)
    deps = _dependences(scop, frozenset(temps))
    prefix = _prefix(scop)
    xs = [f"x{r}" for r in range(depth)]
    ys = [f"y{r}" for r in range(depth)]
    band_deps = _band_dependences(deps, prefix, xs, ys, names, " once its temporaries are private")
    coeffs = _search(band_deps, prefix, xs, ys, names)
    # the innermost iterator of coefficient +-1 is computed from h; the others stay loops
    gone = max(r for r in range(depth) if abs(coeffs[r]) == 1)
    rest = [r for r in range(depth) if r != gone]
    h = " + ".join(f"{c} * {x}" for c, x in zip(coeffs, xs, strict=True) if c)
    domain: isl.Set | None = None
    for st in scop.statements:
        d = isl.Set(scop.domain_str(st))
        d = d.project_out(isl.dim_type.set, depth, d.dim(isl.dim_type.set) - depth).set_tuple_name("B")
        domain = d if domain is None else domain.union(d)
    assert domain is not None
    sched = isl.Map(f"{prefix}{{ B[{', '.join(xs)}] -> [w, {', '.join(xs[r] for r in rest)}] : w = {h} }}"
                    ).intersect_domain(domain.coalesce())
    if not sched.is_injective():
        raise _Refused(f"the hyperplane of the loops {_list(names)} does not name each point once")
    timed = band_deps.apply_domain(sched).apply_range(sched)
    later = isl.Map(f"{prefix}{{ [w, {', '.join(f'a{r}' for r in rest)}] -> [w_, {', '.join(f'b{r}' for r in rest)}] "
                    ": w < w_ }")
    if not timed.is_subset(later):
        raise _Refused(f"isl could not prove the hyperplane wavefront of the loops {_list(names)} keeps every "
                       "dependence")
    waves = _generate_hyperplane(sched, prefix, names, [lp.c_type for lp in loops], band, scop.params, len(rest))
    private, exits = _iterators(cand, band, names)
    try:
        checks = alias_checks(scop)
    except UnsupportedInput as err:
        raise _Refused(err.message) from err
    gen = SourceGenerator()
    return Wavefront(tuple(names), tuple(names), (), loc_of(cand.node), waves,
                     str(gen._generate_stmt(cand.node, add_indent=False)), tuple(sorted({*private, *outside})),
                     exits, checks, scop.preconditions, tuple(scop.params),
                     hyperplane=_affine_text(coeffs, names)), sched


def _search(band_deps: isl.Map, prefix: str, xs: list[str], ys: list[str], names: list[str]) -> tuple[int, ...]:
    """The first ``c`` (fewest non-zeros, then smallest) with ``c . (sink - source) >= 1`` on every
    dependence and some coefficient +-1."""
    span = range(-MAX_COEFFICIENT, MAX_COEFFICIENT + 1)
    combos = sorted((c for c in itertools.product(span, repeat=len(xs)) if any(abs(v) == 1 for v in c)),
                    key=lambda c: (sum(1 for v in c if v), sum(abs(v) for v in c), [-v for v in c[::-1]]))
    for c in combos:
        grow = " + ".join(f"{v} * ({y} - {x})" for v, x, y in zip(c, xs, ys, strict=True) if v)
        ok = isl.Map(f"{prefix}{{ B[{', '.join(xs)}] -> B[{', '.join(ys)}] : {grow} >= 1 }}")
        if band_deps.is_subset(ok):
            return c
    raise _Refused(f"no hyperplane of the loops {_list(names)} with coefficients up to {MAX_COEFFICIENT} orders "
                   "every dependence")


def _generate_hyperplane(sched: isl.Map, prefix: str, names: list[str], types: list[str], band: list[c_ast.For],
                         params: tuple[str, ...], rest: int) -> str:
    ctx = sched.get_ctx()
    ids = isl.IdList.alloc(ctx, rest + 1)
    for nm in [_WAVE, *(f"{_TILE}{r}" for r in range(rest))]:
        ids = ids.add(isl.Id(nm, context=ctx))
    build = isl.AstBuild.from_context(isl.Set(f"{prefix}{{ : }}")).set_iterators(ids)
    ast = build.node_from_schedule_map(isl.UnionMap.from_map(sched))
    body = str(SourceGenerator()._generate_stmt(band[-1].stmt, add_indent=False))
    declared = [isinstance(b.init, c_ast.DeclList) for b in band]
    printer = _CPrinter(names, types, declared, [1] * len(names), body, set(params), tile_loop=f"{_TILE}0",
                        assign=True)
    printer.node(ast, 0, False)
    if WAVEFRONT_TILES not in printer.lines:
        raise _Refused("isl's code generator made no loop over the points of a wavefront")
    return "\n".join(printer.lines)


# }}}
