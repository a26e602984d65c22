"""Lowering: ``lower(mdh, params) -> Plan``, the MDH low-level program as one fused loop tree.

Shape of the result (mdh-formalism.md §4.4, §7.3, fused phases):

* de-composition: tile loops, outermost the collapsed parallel loop over the layer-1 tiles of
  ``parallel_dims``, then the other concat tiles (layer 1, then layer 2);
* a private result tile per output (only when the nest reduces), initialised with the start value
  (the output's old value for ``accumulate``, ``init`` when given, else the neutral element), so
  one thread's reduction order equals the original one;
* the reduction tile loops, then the point loops in ``loop_order``, the innermost one ``simd``
  (reducing into scalar accumulators when it is a reduction dim): the scalar phase;
* re-composition: the tile's results stored to the outputs. With ``split_dim`` the reduction's
  layer-1 tiles are shared by a thread team; each thread keeps partials for the whole (small,
  static) concat domain, copied to a per-thread slot and combined in thread order afterwards --
  deterministic for a given thread count, no atomics.

Concat-only nests write their outputs directly from the point loops.

Packed panels (``TuningParams.pack_b``/``pack_a``): the nest runs inside a block that allocates
one heap slot per thread for each packed input (``Declare.heap``); each parallel tile takes its
thread's slot (``ThreadNum``), and every register-blocked tile copies, per reduction tile, the
packed inputs' values over its full blocks into the slot in the micro-kernel's order before the
micro-kernel, which then reads the copy; the remainder nests read the user's arrays.

Non-rectangular domains (``MdhExpr.domain``, the MDH over the bounding box): the scalar phase
visits only the domain's points -- each constraint ``e >= 0`` clips the point loop of its
innermost dim (in ``loop_order``) when that dim's coefficient is +-1 (``j >= i`` starts the ``j``
loop at ``max(tile start, i)``), else it is a ``Guard`` inside that loop -- so ``f`` is
evaluated, and inputs read, only in the domain; elsewhere a reduction keeps its start value,
which is what combining the neutral element gives. Result tiles start, and outputs are stored,
only at the concat points that satisfy the constraints naming concat iterators alone (an
``init`` output is written there even when its reduction range is empty); the other points of
a tile start at the neutral element and are never stored. The threads share the parallel tiles
as ``TuningParams.distribution`` says (``cyclic`` balances a triangle).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from dataclasses import replace

from mdpoly.diagnostics import CompilerBug, UnsupportedInput
from mdpoly.ir.mdh import Access, Affine, Buffer, Combine, MdhExpr
from mdpoly.ir.plan import (
    REGISTER_LAYER,
    Apply,
    Assign,
    Assume,
    AsType,
    Barrier,
    Block,
    BlockEnd,
    Const,
    Declare,
    FExpr,
    Guard,
    Iterator,
    Loop,
    ParallelRegion,
    Plan,
    Prefetch,
    Ref,
    Stmt,
    TeamForm,
    TeamThreads,
    ThreadCount,
    ThreadNum,
    TileShare,
    Value,
    Var,
)
from mdpoly.lower.neutral import neutral
from mdpoly.lower.params import (
    PACK_PREFETCH_AHEAD,
    TuningParams,
    pack_elems,
    packed_inputs,
    reduction_box,
    violations,
)

PREFIX = "mdp_"

#: A split reduction's team form (``TeamForm``): the enclosing region has at most this many
#: threads, and one thread's partials at most ``MAX_TEAM_SLOT`` elements, so that the shared
#: partials (declared before the region, on the stack) stay small.
MAX_TEAM = 256
MAX_TEAM_SLOT = 16
#: Below this many points of its reduction, a call of a team form is reduced by one thread alone
#: (in its combining part): sharing it costs a barrier more (a few microseconds on two cores).
MIN_TEAM_POINTS = 2048


# {{{ affine helpers


def _add(a: Affine, b: Affine, scale: int = 1) -> Affine:
    terms = dict(a.terms)
    for n, c in b.terms:
        terms[n] = terms.get(n, 0) + scale * c
    return Affine.of(terms, a.constant + scale * b.constant)


def _var(name: str) -> Affine:
    return Affine.of({name: 1})


def _const(c: int) -> Affine:
    return Affine.of({}, c)


def _subst(a: Affine, m: dict[str, Affine]) -> Affine:
    """``a`` with each name of ``m`` replaced by its affine expression."""
    out = Affine.of({n: c for n, c in a.terms if n not in m}, a.constant)
    for n, c in a.terms:
        if n in m:
            out = _add(out, m[n], c)
    return out


def _subst_ref(r: Ref, m: dict[str, Affine]) -> Ref:
    return Ref(r.name, tuple(_subst(e, m) for e in r.index), r.deref)

# }}}


class _Clip:
    """The domain constraints distributed over a nest of point loops: per dim, extra lower bounds
    (``lowers``) and upper bounds (``uppers``) of its loop, and ``guards`` checked first thing in
    its body; ``inner``: constraints naming no iterator, checked around the innermost body."""

    def __init__(self) -> None:
        self.lowers: dict[int, tuple[Affine, ...]] = {}
        self.uppers: dict[int, tuple[Affine, ...]] = {}
        self.guards: dict[int, tuple[Affine, ...]] = {}
        self.inner: tuple[Affine, ...] = ()

    def guard(self, d: int, body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        conds = self.guards.get(d, ())
        return (Guard(conds, body),) if conds else body

    def guard_inner(self, body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        return (Guard(self.inner, body),) if self.inner else body


class _Lowerer:
    def __init__(self, mdh: MdhExpr, p: TuningParams) -> None:
        self.m = mdh
        self.p = p
        self.dims = mdh.dims
        self.concat = [i for i, d in enumerate(mdh.dims) if not d.combine.is_reduction]
        self.reds = [i for i, d in enumerate(mdh.dims) if d.combine.is_reduction]
        self.op: Combine | None = mdh.reduction_op
        if self.reds and self.op is None:
            raise UnsupportedInput("reduction dimensions combine with different operators",
                                   mdh.loc, code="mixed-reduction-operators")
        self.headers: set[str] = set()
        self.split = p.split_dim is not None
        concat_its = {mdh.dims[d].iterator for d in self.concat}
        all_its = {d.iterator for d in mdh.dims}
        #: the constraints that name concat iterators only: which output points are stored
        self.store_domain = tuple(c for c in mdh.domain if (c.names() & all_its) <= concat_its)
        #: inputs read from packed panels (``pack_a``/``pack_b``): input number -> blocked dim
        self.packed = packed_inputs(mdh, p)
        #: a packed panel's slot of the current thread (``0`` when no parallel loop runs the nest)
        self.slot = _var(f"{PREFIX}slot") if p.parallel_dims else _const(0)
        #: while the micro-kernel is built: per blocked dim, a panel's offset at the block's first point
        self.pack_base: dict[int, Affine] = {}

    # {{{ names and bounds

    def it(self, d: int) -> str:
        return self.dims[d].iterator

    def tvar(self, d: int, layer: int) -> str:
        return f"{PREFIX}{self.it(d)}_t{layer}"

    def hi(self, d: int) -> Affine:
        return _add(self.dims[d].lower, self.dims[d].extent)

    def tile_loop(self, d: int, layer: int, body: tuple[Stmt, ...]) -> Loop:
        t = self.p.tiles[d]
        up: tuple[Affine, ...]
        if layer == 1:
            lo, up = self.dims[d].lower, (self.hi(d),)
        else:
            outer = _var(self.tvar(d, layer - 1))
            lo, up = outer, (_add(outer, _const(t[layer - 2])), self.hi(d))
        return Loop(self.tvar(d, layer), lo, up, t[layer - 1], body, dim=d, layer=layer,
                    share=self.share(d) if layer == 1 else None)

    def share(self, d: int) -> TileShare | None:
        """The run-time step of ``d``'s parallel tile loop (``TileShare``), where it has one: the
        first parallel dim, of an extent known only at run time (a static one's tile is the
        tuner's to choose), tiled once, its tiles handed out in blocks (packed panels too: their
        slots are sized by the largest step)."""
        p = self.p
        if (not p.parallel_dims or d != p.parallel_dims[0] or self.dims[d].static_extent is not None
                or len(p.tiles[d]) != 1 or p.distribution != "block"):
            return None
        least = p.register_tile[d] if p.register_tile else 1
        if p.tiles[d][0] <= least:
            return None
        others = tuple((self.dims[e].lower, self.hi(e), p.tiles[e][0]) for e in p.parallel_dims[1:])
        return TileShare(f"{PREFIX}{self.it(d)}_ts", p.tiles[d][0], least, others)

    def point_range(self, d: int) -> tuple[Affine, tuple[Affine, ...]]:
        t = self.p.tiles[d]
        if not t:
            return self.dims[d].lower, (self.hi(d),)
        base = _var(self.tvar(d, len(t)))
        ext = self.dims[d].static_extent
        if ext is not None and t[-1] >= ext and len(t) == 1:
            return base, (self.hi(d),)
        share = self.share(d)
        return base, (_add(base, _var(share.var) if share else _const(t[-1])), self.hi(d))

    def point_loop(self, d: int, body: tuple[Stmt, ...], simd: bool = False,
                   reductions: tuple[tuple[Combine, str], ...] = (),
                   ranges: dict[int, tuple[Affine, tuple[Affine, ...]]] | None = None,
                   clip: _Clip | None = None) -> Loop:
        lo, up = ranges[d] if ranges and d in ranges else self.point_range(d)
        more: tuple[Affine, ...] = ()
        if clip is not None:
            more = clip.lowers.get(d, ())
            up = up + clip.uppers.get(d, ())
            body = clip.guard(d, body)
        return Loop(self.it(d), lo, up, 1, body, dim=d, layer=0,
                    schedule="simd" if simd else "seq", reductions=reductions, more_lower=more)

    def clip(self, order: list[int]) -> _Clip | None:
        """How the point loops in ``order`` (outermost first, every dim a constraint names among
        them) keep to the domain; ``None`` for a rectangular nest."""
        if not self.m.domain:
            return None
        pos = {self.it(d): k for k, d in enumerate(order)}
        clip = _Clip()
        for c in self.m.domain:
            names = [n for n in c.names() if n in pos]
            if len(names) < len(c.names() & {d.iterator for d in self.dims}):
                raise CompilerBug(f"domain constraint '{c} >= 0' names a dim outside the point loops", self.m.loc)
            if not names:
                clip.inner += (c,)
                continue
            it = max(names, key=lambda n: pos[n])
            d = order[pos[it]]
            a = c.coeff(it)
            rest = _add(c, _var(it), -a)
            if a == 1:      # it + rest >= 0: it >= -rest
                clip.lowers[d] = (*clip.lowers.get(d, ()), _add(_const(0), rest, -1))
            elif a == -1:   # rest - it >= 0: it < rest + 1
                clip.uppers[d] = (*clip.uppers.get(d, ()), _add(rest, _const(1)))
            else:
                clip.guards[d] = (*clip.guards.get(d, ()), c)
        return clip

    def store_guard(self, body: tuple[Stmt, ...], orelse: tuple[Stmt, ...] = ()) -> tuple[Stmt, ...]:
        """``body`` at the concat points of the domain only (``store_domain``)."""
        if not self.store_domain:
            return body
        return (Guard(self.store_domain, body, orelse),)

    # }}}

    # {{{ result tiles

    def res_extent(self, d: int) -> int:
        """Size of the private result tile along concat dim ``d``."""
        t = () if self.split else self.p.tiles[d]
        ext = self.dims[d].static_extent
        if t:
            return t[-1] if ext is None else max(1, min(t[-1], ext))
        if ext is None:
            raise CompilerBug(f"result tile of symbolic dim '{self.it(d)}' needs a tile size", self.m.loc)
        return max(ext, 1)

    def res_index(self, d: int) -> Affine:
        t = () if self.split else self.p.tiles[d]
        base = _var(self.tvar(d, len(t))) if t else self.dims[d].lower
        return _add(_var(self.it(d)), base, -1)

    def res_ref(self, o: int, extra: tuple[Affine, ...] = ()) -> Ref:
        return Ref(f"{PREFIX}res{o}", extra + tuple(self.res_index(d) for d in self.concat))

    def res_shape(self) -> tuple[Affine, ...]:
        return tuple(_const(self.res_extent(d)) for d in self.concat)

    # }}}

    # {{{ values

    def access_ref(self, acc: Access) -> Ref:
        buf = self.m.buffer(acc.buffer)
        return Ref(acc.buffer, acc.index, deref=buf.kind == "scalar" and buf.written)

    def iterator_binds(self, at: dict[str, Affine] | None = None) -> tuple[tuple[str, Value], ...]:
        """Each iterator as the user's expressions see it: the (moved) point in its declared type."""
        return tuple((d.iterator, AsType(d.iterator_type, (at or {}).get(d.iterator, _var(d.iterator))))
                     for d in self.dims)

    def f_value(self, o: int, at: dict[str, Affine] | None = None) -> FExpr:
        """``f``'s result ``o``; ``at`` moves the point (iterator -> affine expression)."""
        f = self.m.f
        binds = tuple((name, self.input_ref(n, acc, at)) for n, (name, acc) in enumerate(zip(f.params, self.m.inputs)))
        return FExpr(f.results[o], binds + self.iterator_binds(at))

    def input_ref(self, n: int, acc: Access, at: dict[str, Affine] | None) -> Ref:
        """Input ``n`` at the (moved) point: the user's buffer, or inside a micro-kernel with packed
        panels its packed copy (the sliver's start ``pack_base`` plus the point's lane)."""
        d = self.packed.get(n)
        if d is not None and d in self.pack_base and at is not None:
            lane = _add(at[self.it(d)], _var(self.rvar(d)), -1)
            return Ref(self.pack_name(n), (self.slot, _add(self.pack_base[d], lane)))
        return _subst_ref(self.access_ref(acc), at or {})

    def pack_name(self, n: int) -> str:
        return f"{PREFIX}pk{n}"

    def neutral(self, o: int) -> Const:
        assert self.op is not None
        op = self.op.value_op
        if self.op.is_arg and o == 1:  # the index no point has: after every index in the tie rule's order
            op = Combine.MAX if self.op.keeps_last else Combine.MIN
        text, header = neutral(op, self.m.outputs[o].elem_type)
        if header:
            self.headers.add(header)
        return Const(text)

    def start_value(self, o: int) -> Value:
        out = self.m.outputs[o]
        if out.update == "accumulate":
            return self.access_ref(out.access)
        if out.init is not None:
            return FExpr(out.init, self.iterator_binds(), role="init")
        return self.neutral(o)

    def stored(self, o: int, value: Value) -> Value:
        """What output ``o`` receives for its reduced ``value``: the value, or its ``finish``."""
        fin = self.m.outputs[o].finish
        if fin is None:
            return value
        binds = ((fin.result, value), *((p, self.access_ref(a)) for p, a in zip(fin.params, fin.inputs)))
        return FExpr(fin.expr, binds + self.iterator_binds(), role="finish")

    def combine_all(self, targets: list[Ref | Var], at: dict[str, Affine] | None = None,
                    tag: str = "") -> tuple[Stmt, ...]:
        """``targets[o] = targets[o] (op) f_o`` for every output, in the loop's order; an
        argmax/argmin updates the (value, index) pair at once, as the sequential loop does:
        ``if (v > m) { m = v; i = idx; }`` (``>=`` keeping the last of equal values)."""
        assert self.op is not None
        if not self.op.is_arg:
            out: tuple[Stmt, ...] = ()
            for o, t in enumerate(targets):
                out += self.combine_into(t, o, at, tag)
            return out
        v, x, k = f"{PREFIX}v{tag}", f"{PREFIX}x{tag}", f"{PREFIX}k{tag}"
        cmp = {Combine.ARGMAX: ">", Combine.ARGMAX_LAST: ">=", Combine.ARGMIN: "<", Combine.ARGMIN_LAST: "<="}[self.op]
        return (Declare(v, self.m.outputs[0].elem_type, init=self.f_value(0, at)),
                Declare(x, self.m.outputs[1].elem_type, init=self.f_value(1, at)),
                *self.pick(k, f"{PREFIX}c {cmp} {PREFIX}b", (Var(v), Var(x)), (targets[0], targets[1])))

    def pick(self, flag: str, cond: str, new: tuple[Value, Value], old: tuple[Ref | Var, Ref | Var],
             into: tuple[Ref | Var, Ref | Var] | None = None) -> tuple[Stmt, ...]:
        """``flag = cond``, then ``into = flag ? new : old`` for both halves of a (value, index)
        pair; ``cond`` names ``mdp_c``/``mdp_b`` (new and old value) and ``mdp_ci``/``mdp_bi``
        (new and old index). ``into`` defaults to ``old``."""
        binds = ((f"{PREFIX}c", new[0]), (f"{PREFIX}b", old[0]), (f"{PREFIX}ci", new[1]), (f"{PREFIX}bi", old[1]))
        used = tuple(b for b in binds if re.search(rf"\b{b[0]}\b", cond))
        sel = f"{flag} ? {PREFIX}c : {PREFIX}b"
        dest = into or old
        return (Declare(flag, "int", init=FExpr(cond, used, role="combine")),
                *(Assign(dest[h], FExpr(sel, ((flag, Var(flag)), (f"{PREFIX}c", new[h]), (f"{PREFIX}b", old[h])),
                                        role="combine"))
                  for h in range(2)))

    def arg_merge(self, flag: str, total: tuple[Var, Var], part: tuple[Ref, Ref]) -> tuple[Stmt, ...]:
        """``total = total (op) part`` for two partial (value, index) pairs of any parts of the
        range: the better value, and among equal values the smaller (``keeps_last``: larger)
        index; no partial holds a NaN (no comparison takes one). Associative and commutative."""
        assert self.op is not None
        better = ">" if self.op.value_op is Combine.MAX else "<"
        tie = ">" if self.op.keeps_last else "<"
        return self.pick(flag, f"{PREFIX}c {better} {PREFIX}b || ({PREFIX}c == {PREFIX}b && {PREFIX}ci {tie} {PREFIX}bi)",
                         part, total)

    def arg_final(self, flag: str, start: tuple[Var, Var], total: tuple[Var, Var]) -> tuple[Stmt, ...]:
        """The pair the sequential loop ends with, from its start value ``start`` (before every
        index) and the merged pair ``total`` of the whole range: ``total`` when it beats the start
        under the loop's own comparison (``>=``: and some point was taken, its index is no
        longer the neutral one)."""
        assert self.op is not None
        better = ">" if self.op.value_op is Combine.MAX else "<"
        if self.op.keeps_last:
            cond = f"{PREFIX}c {better}= {PREFIX}b && {PREFIX}ci != {self.neutral(1).text}"
        else:
            cond = f"{PREFIX}c {better} {PREFIX}b"
        return self.pick(flag, cond, total, start)

    def combine_into(self, target: Ref | Var, o: int, at: dict[str, Affine] | None = None,
                     tag: str = "") -> tuple[Stmt, ...]:
        """``target = target (op) f_o``; max/min bind ``f_o`` first so it is computed once."""
        assert self.op is not None
        cur: Value = target
        val: Value = self.f_value(o, at)
        if self.op in (Combine.MAX, Combine.MIN):
            tmp = f"{PREFIX}v{o}{tag}"
            return (Declare(tmp, self.m.outputs[o].elem_type, init=val),
                    Assign(target, Apply(self.op, cur, Var(tmp))))
        return (Assign(target, Apply(self.op, cur, val)),)

    # }}}

    # {{{ loop nests

    def concat_point_nest(self, body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        """Loops over the concat points of the current tile (vector dim innermost)."""
        order = list(self.concat)
        v = self.p.vector_dim
        if v in order:
            order.remove(v)
            order.append(v)
        stmts = body
        for k, d in enumerate(reversed(order)):
            stmts = (self.point_loop(d, stmts, simd=(k == 0 and d == v)),)
        return stmts

    def full_concat_nest(self, body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        """Loops over the whole concat domain (split mode), ignoring tiles."""
        stmts = body
        for d in reversed(self.concat):
            stmts = (Loop(self.it(d), self.dims[d].lower, (self.hi(d),), 1, stmts, dim=d),)
        return stmts

    def compute(self, ranges: dict[int, tuple[Affine, tuple[Affine, ...]]] | None = None,
                dims: list[int] | None = None) -> tuple[Stmt, ...]:
        """The scalar phase: point loops in ``loop_order`` around the combine or the store.

        ``dims`` restricts the point loops to those dims (the others are walked outside),
        ``ranges`` overrides their point ranges (register-block remainders).
        """
        if dims is None and self.p.register_blocked:
            return self.compute_blocked()
        order = [d for d in self.p.loop_order if dims is None or d in dims]
        v = self.p.vector_dim
        outs = range(len(self.m.outputs))
        clip = self.clip(order)
        if not self.reds:
            inner: tuple[Stmt, ...] = tuple(
                Assign(self.access_ref(self.m.outputs[o].access), self.f_value(o)) for o in outs)
            stmts = clip.guard_inner(inner) if clip else inner
            for d in reversed(order):
                stmts = (self.point_loop(d, stmts, simd=(d == v), ranges=ranges, clip=clip),)
            return stmts
        arg = self.op is not None and self.op.is_arg
        if v is not None and v in self.reds and not arg:  # no SIMD reduction over (value, index) pairs
            assert self.op is not None
            accs = [f"{PREFIX}acc{o}" for o in outs]
            body: tuple[Stmt, ...] = self.combine_all([Var(a) for a in accs])
            if clip:
                body = clip.guard_inner(body)
            red = tuple((self.op, a) for a in accs)
            simd_loop = self.point_loop(v, body, simd=True, reductions=red, ranges=ranges, clip=clip)
            stmts = (Block((
                *(Declare(accs[o], self.m.outputs[o].elem_type, init=self.res_ref(o)) for o in outs),
                simd_loop,
                *(Assign(self.res_ref(o), Var(accs[o])) for o in outs))),)
            order = order[:-1]
        else:
            body = self.combine_all([self.res_ref(o) for o in outs])
            stmts = clip.guard_inner(body) if clip else body
        for d in reversed(order):
            simd = d == v and not (arg and d in self.reds)
            stmts = (self.point_loop(d, stmts, simd=simd, ranges=ranges, clip=clip),)
        return stmts

    # }}}

    # {{{ register blocks

    def compute_blocked(self) -> tuple[Stmt, ...]:
        """The scalar phase with register blocks over the blocked concat dims ``B``.

        Concat dims that are not blocked keep their point loops outside. Inside, the block loops
        (step = register tile, over the full blocks) hold the micro-kernel; for each blocked dim
        ``B[m]`` a remainder nest walks ``B[:m]`` over their full blocks, ``B[m]`` past them and
        ``B[m+1:]`` whole, with the plain point loops -- together exactly the tile's points.
        """
        p = self.p
        order = list(p.loop_order)
        blocked = [d for d in order if d in self.concat and p.register_tile[d] > 1]
        outer = [d for d in order if d in self.concat and d not in blocked]
        rng = {d: self.point_range(d) for d in blocked}
        ends = {d: f"{PREFIX}{self.it(d)}_e" for d in blocked}
        decls = tuple(Declare(ends[d], "long", init=BlockEnd(rng[d][0], rng[d][1], p.register_tile[d]))
                      for d in blocked)
        pack: tuple[Stmt, ...] = ()
        for d in sorted(set(self.packed.values())):
            pack += self.pack_panels(d, rng[d][0], _var(ends[d]))
            self.pack_base[d] = self.pack_offset(d, _var(self.rvar(d)), rng[d][0])
        try:
            stmts: tuple[Stmt, ...] = self.micro_kernel(blocked)
        finally:
            self.pack_base = {}
        nest = list(blocked)
        if any(d != p.vector_dim for d in self.packed.values()) and p.vector_dim in nest:
            # packed row panels: BLIS's order, the SIMD dim's blocks outside, so that one sliver of
            # the SIMD-dim panel stays in L1 while the row panels stream (the micro-kernel's
            # accumulators keep their order: gcc allocates registers by it)
            nest.remove(p.vector_dim)
            nest.insert(0, p.vector_dim)
        for d in reversed(nest):
            stmts = (Loop(self.rvar(d), rng[d][0], (_var(ends[d]),), p.register_tile[d], stmts,
                          dim=d, layer=REGISTER_LAYER),)
        rest: tuple[Stmt, ...] = ()
        inner = blocked + [d for d in order if d not in self.concat]
        for m, dm in enumerate(blocked):
            ranges: dict[int, tuple[Affine, tuple[Affine, ...]]] = {
                d: (rng[d][0], (_var(ends[d]),)) for d in blocked[:m]}
            ranges[dm] = (_var(ends[dm]), rng[dm][1])
            rest += self.compute(ranges, inner)
        body: tuple[Stmt, ...] = (Block(decls + pack + stmts + rest),)
        for d in reversed(outer):
            body = (self.point_loop(d, body),)
        return body

    def rvar(self, d: int) -> str:
        return f"{PREFIX}{self.it(d)}_r"

    # {{{ packed panels

    def pack_offset(self, d: int, block: Affine, start: Affine) -> Affine:
        """Offset in a panel sliced along blocked dim ``d`` of the sliver of the block starting at
        ``block`` (``start``: the tile's first point) at the current reduction point: slivers of
        ``register_tile[d]`` lanes times the reduction box, reduction points row-major in
        ``loop_order`` inside a sliver."""
        p = self.p
        box = reduction_box(self.m, p)
        assert box is not None
        lanes = p.register_tile[d]
        off = _add(block, start, -1)
        off = Affine.of({n: c * math.prod(box) for n, c in off.terms}, off.constant * math.prod(box))
        reds = [d for d in p.loop_order if d in self.reds]
        stride = lanes
        for k in range(len(reds) - 1, -1, -1):
            r = reds[k]
            rel = _add(_var(self.it(r)), self.point_range(r)[0], -1)
            off = _add(off, rel, stride)
            stride *= box[k]
        return off

    def pack_panels(self, d: int, start: Affine, end: Affine) -> tuple[Stmt, ...]:
        """Copy the values of each input packed along blocked dim ``d`` over ``d``'s full blocks
        ``[start, end)`` of the tile and the reduction tile into the thread's slot, in the
        micro-kernel's order (slivers of ``register_tile[d]`` lanes).

        The copy's loops (the slivers with their lanes, as one group, and the reduction points)
        run in the order of the input's subscripts (``copy_order``), so that the copy reads the
        user's array along its rows: ``B[k][j]`` packed along ``j`` walks ``k`` outside the
        slivers (a row's slivers one after another), ``A[i][k]`` packed along ``i`` walks ``k``
        innermost. The lane loop is a SIMD loop when it is innermost and ``d`` is the SIMD dim."""
        p = self.p
        lanes = p.register_tile[d]
        q, lane = f"{PREFIX}{self.it(d)}_q", f"{PREFIX}{self.it(d)}_p"
        base = self.pack_offset(d, _var(q), start)
        point = {self.it(d): _var(lane)}
        inputs = [n for n, x in sorted(self.packed.items()) if x == d]
        copies = tuple(Assign(Ref(self.pack_name(n), (self.slot, _add(base, _add(_var(lane), _var(q), -1)))),
                              _subst_ref(self.access_ref(self.m.inputs[n]), point))
                       for n in inputs)
        order = self.copy_order(d, [r for r in p.loop_order if r in self.reds], self.m.inputs[inputs[0]])
        body: tuple[Stmt, ...] = copies
        for k in range(len(order) - 1, -1, -1):
            r = order[k]
            if r != d:
                lo, up = self.point_range(r)
                body = (Loop(self.it(r), lo, up, 1, body),)
                continue
            simd = d == p.vector_dim and k == len(order) - 1
            lane_loop = Loop(lane, _var(q), (_add(_var(q), _const(lanes)),), 1, body, schedule="simd" if simd else "seq")
            ahead = self.copy_prefetch(order[k - 1], q, inputs) if simd and k > 0 and p.pack_prefetch else ()
            body = (Loop(q, start, (end,), lanes, (*ahead, lane_loop)),)
        return body

    def copy_prefetch(self, r: int, q: str, inputs: list[int]) -> tuple[Stmt, ...]:
        """Inside a row-wise copy (the lanes innermost, reduction dim ``r`` just outside the
        slivers): a prefetch of each sliver's line ``PACK_PREFETCH_AHEAD`` points of ``r`` ahead
        (a panel's rows are far apart in memory, more than the hardware prefetchers follow), where
        that point is still in ``r``'s tile."""
        it = self.it(r)
        ahead = _add(_var(it), _const(PACK_PREFETCH_AHEAD))
        point = {self.it(self.packed[inputs[0]]): _var(q), it: ahead}
        inside = tuple(_add(u, ahead, -1) for u in self.point_range(r)[1])
        refs = tuple(Prefetch(_subst_ref(self.access_ref(self.m.inputs[n]), point)) for n in inputs)
        return (Guard(tuple(_add(c, _const(-1)) for c in inside), refs),)

    def copy_order(self, d: int, reds: list[int], acc: Access) -> list[int]:
        """The packing copy's loops, outermost first: ``d`` (its slivers and lanes) and the
        reduction dims ``reds``, stably sorted by the last subscript of ``acc`` that names each
        one's iterator (later subscripts vary faster in memory); a dim no subscript names first."""
        def last(x: int) -> int:
            it = self.it(x)
            return max((k for k, e in enumerate(acc.index) if it in e.names()), default=-1)
        return sorted([d, *reds], key=last)

    def pack_buffers(self, body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        """``body`` with the packed panels' per-thread heap buffers around it (one slot per thread
        of the parallel loop, which takes its slot by thread number)."""
        if not self.packed:
            return body
        threads: tuple[Stmt, ...] = ()
        count = _const(1)
        if self.p.parallel_dims:
            nt = f"{PREFIX}nthreads"
            threads, count = (ThreadCount(nt, self.p.num_threads),), _var(nt)
        bufs = []
        for k, d in sorted(self.packed.items()):
            n = pack_elems(self.m, self.p, d)
            assert n is not None
            t = self.m.buffer(self.m.inputs[k].buffer).elem_type
            bufs.append(Declare(self.pack_name(k), " ".join(w for w in t.split() if w not in ("const", "volatile")),
                                (count, _const(n)), heap=True))
        return (Block((*threads, *bufs, *body)),)

    # }}}

    def micro_kernel(self, blocked: list[int]) -> tuple[Stmt, ...]:
        """One register block: accumulators loaded from the result tile, the reduction point loops
        around every block point's combine (unrolled), accumulators stored back.

        A concat SIMD dim ``v`` becomes a ``simd_lanes``-wide SIMD loop around it all (point
        ``v = lane + u * lanes``); a reduction SIMD dim is the innermost loop, reducing into
        every accumulator.
        """
        assert self.op is not None
        p = self.p
        v = p.vector_dim
        lanes = p.simd_lanes
        lane = f"{PREFIX}{self.it(v)}_l" if v in blocked else ""
        offsets: list[list[tuple[int, Affine]]] = []
        for d in blocked:
            if d == v:
                offsets.append([(d, _add(_var(lane), _const(u * lanes))) for u in range(p.register_tile[d] // lanes)])
            else:
                offsets.append([(d, _add(_var(self.rvar(d)), _const(a))) for a in range(p.register_tile[d])])
        points = [{self.it(d): e for d, e in pt} for pt in itertools.product(*offsets)]
        outs = range(len(self.m.outputs))
        accs = {(n, o): f"{PREFIX}a{o}_{n}" for n in range(len(points)) for o in outs}
        loads = tuple(Declare(accs[n, o], self.m.outputs[o].elem_type, init=_subst_ref(self.res_ref(o), pt))
                      for n, pt in enumerate(points) for o in outs)
        stores = tuple(Assign(_subst_ref(self.res_ref(o), pt), Var(accs[n, o]))
                       for n, pt in enumerate(points) for o in outs)
        if self.op.is_arg:
            raise CompilerBug("register blocks of an argmax/argmin (its f reads the iterators)", self.m.loc)
        body: tuple[Stmt, ...] = ()
        for n, pt in enumerate(points):
            body += self.combine_all([Var(accs[n, o]) for o in outs], pt, tag=f"_{n}")
        reds = [d for d in p.loop_order if d in self.reds]
        if v is not None and v in self.reds:
            reds.remove(v)
            red = tuple((self.op, a) for a in accs.values())
            body = (self.point_loop(v, body, simd=True, reductions=red),)
        for d in reversed(reds):
            body = (self.point_loop(d, body),)
        kernel = loads + body + stores
        if not lane:
            return (Block(kernel),)
        assert v is not None
        start = _var(self.rvar(v))
        promises = tuple(Assume(*self.point_range(d)) for d in reds)
        return (*promises, Loop(lane, start, (_add(start, _const(lanes)),), 1, kernel, schedule="simd"))

    # }}}

    # {{{ tile nests

    def wrap_tiles(self, dims_layers: list[tuple[int, int]], body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        stmts = body
        for d, layer in reversed(dims_layers):
            stmts = (self.tile_loop(d, layer, stmts),)
        return stmts

    def concat_tile_order(self) -> list[tuple[int, int]]:
        p = self.p
        first = [(d, 1) for d in p.parallel_dims]
        rest1 = [(d, 1) for d in self.concat if d not in p.parallel_dims and p.tiles[d]]
        rest2 = [(d, 2) for d in self.concat if len(p.tiles[d]) == 2]
        return first + rest1 + rest2

    def reduction_tile_order(self, skip_split_l1: bool) -> list[tuple[int, int]]:
        p = self.p
        l1 = [(d, 1) for d in self.reds if p.tiles[d] and not (skip_split_l1 and d == p.split_dim)]
        l2 = [(d, 2) for d in self.reds if len(p.tiles[d]) == 2]
        return l1 + l2

    def lower_direct(self) -> tuple[Stmt, ...]:
        """Parallel concat tiles; private result tiles when reducing."""
        outs = range(len(self.m.outputs))
        inner = self.wrap_tiles(self.reduction_tile_order(False), self.compute())
        if self.reds:
            decls = tuple(Declare(f"{PREFIX}res{o}", self.m.outputs[o].elem_type, self.res_shape())
                          for o in outs)
            init = self.concat_point_nest(self.store_guard(
                tuple(Assign(self.res_ref(o), self.start_value(o)) for o in outs),
                tuple(Assign(self.res_ref(o), self.neutral(o)) for o in outs)))
            store = self.concat_point_nest(self.store_guard(
                tuple(Assign(self.access_ref(self.m.outputs[o].access), self.stored(o, self.res_ref(o)))
                      for o in outs)))
            inner = (Block(decls + init + inner + store),)
        if self.packed and self.p.parallel_dims:
            inner = (Declare(self.slot.to_c(), "int", init=ThreadNum()), *inner)
        stmts = self.wrap_tiles(self.concat_tile_order(), inner)
        if self.p.parallel_dims:
            first = stmts[0]
            assert isinstance(first, Loop)
            stmts = (replace(first, schedule="parallel", collapse=len(self.p.parallel_dims),
                             num_threads=self.p.num_threads, distribution=self.p.distribution),)
        return self.pack_buffers(stmts)

    def lower_split(self) -> tuple[tuple[Stmt, ...], TeamForm | None]:
        """One reduction dim shared by a thread team; per-thread partials combined in order. Also
        the same as run by the threads of an enclosing region (``TeamForm``), when one thread's
        partials are at most ``MAX_TEAM_SLOT`` elements: a thread's share into its slot of
        shared partials, a barrier, then one thread combining them in thread order."""
        assert self.op is not None and self.p.split_dim is not None
        outs = range(len(self.m.outputs))
        nt, tid = f"{PREFIX}nthreads", f"{PREFIX}tid"
        parts = [f"{PREFIX}part{o}" for o in outs]
        types = [self.m.outputs[o].elem_type for o in outs]
        t_var = f"{PREFIX}t"

        flat = False  # the team form's partials: one flat slot of ``team_slot`` elements per thread
        team_slot = math.prod(self.res_extent(d) for d in self.concat)

        def part_ref(o: int, who: str) -> Ref:
            if not flat:
                return Ref(parts[o], (_var(who), *(self.res_index(d) for d in self.concat)))
            index, stride = Affine.of({who: team_slot}), team_slot
            for d in self.concat:
                stride //= self.res_extent(d)
                index = _add(index, self.res_index(d), stride)
            return Ref(parts[o], (index,))

        inner = self.wrap_tiles(
            self.concat_tile_order() + self.reduction_tile_order(True), self.compute())
        shared = self.tile_loop(self.p.split_dim, 1, inner)
        shared = Loop(shared.var, shared.lower, shared.upper, shared.step, shared.body, shared.dim,
                      shared.layer, "thread_for", distribution=self.p.distribution)
        region = ParallelRegion(nt, tid, (
            *(Declare(f"{PREFIX}res{o}", types[o], self.res_shape()) for o in outs),
            *self.full_concat_nest(tuple(Assign(self.res_ref(o), self.neutral(o)) for o in outs)),
            shared,
            *self.full_concat_nest(tuple(Assign(part_ref(o, tid), self.res_ref(o)) for o in outs)),
        ))
        init_parts = Loop(t_var, _const(0), (_var(nt),), 1,
                          self.full_concat_nest(tuple(Assign(part_ref(o, t_var), self.neutral(o)) for o in outs)))
        body = (Block((
            ThreadCount(nt, self.p.num_threads),
            *(Declare(parts[o], types[o], (_var(nt), *self.res_shape())) for o in outs),
            init_parts, region, *self.combine_partials(_var(nt), t_var, part_ref))),)
        if team_slot > MAX_TEAM_SLOT:
            return body, None
        flat = True
        split = self.p.split_dim
        others = math.prod(max(e, 1) for d in self.reds if d != split and (e := self.dims[d].static_extent) is not None)
        size, least = self.dims[split].extent, -(-MIN_TEAM_POINTS // others)
        big: tuple[Affine, ...] = () if size.is_constant and size.constant >= least else (_add(size, _const(-least)),)
        share: tuple[Stmt, ...] = (
            Block((
                *(Declare(f"{PREFIX}res{o}", types[o], self.res_shape()) for o in outs),
                *self.full_concat_nest(tuple(Assign(self.res_ref(o), self.neutral(o)) for o in outs)),
                shared,
                *self.full_concat_nest(tuple(Assign(part_ref(o, tid), self.res_ref(o)) for o in outs)))),
            Barrier(),
        )
        combine = self.combine_partials(_var(nt), t_var, part_ref)
        # too few points to share: one thread reduces them all in the combining part
        alone = (Block((
            *(Declare(f"{PREFIX}res{o}", types[o], self.res_shape()) for o in outs),
            *self.full_concat_nest(tuple(Assign(self.res_ref(o), self.neutral(o)) for o in outs)),
            replace(shared, schedule="seq"),
            *self.combine_partials(_const(1), t_var, lambda o, who: self.res_ref(o)))),)
        team_body = (TeamThreads("", tid), Guard(big, share)) if big else (TeamThreads("", tid), *share)
        finish = (TeamThreads(nt), Guard(big, combine, alone)) if big else (TeamThreads(nt), *combine)
        partials = tuple(Declare(parts[o], types[o], (_const(MAX_TEAM * team_slot),)) for o in outs)
        return body, TeamForm(team_body, finish, partials, MAX_TEAM)

    def combine_partials(self, count: Affine, t_var: str, part_ref: Callable[[int, str], Ref]) -> tuple[Stmt, ...]:
        """The per-thread partials ``part_ref(o, t)`` for ``t < count`` combined in thread order
        with each output's start value, and the outputs stored (at the concat points of the domain)."""
        assert self.op is not None
        outs = range(len(self.m.outputs))
        types = [self.m.outputs[o].elem_type for o in outs]
        total = [f"{PREFIX}r{o}" for o in outs]
        combine: tuple[Stmt, ...]
        if self.op.is_arg:  # merge the partials by value and index, then against the start value
            start = [f"{PREFIX}s{o}" for o in outs]
            tot, st = (Var(total[0]), Var(total[1])), (Var(start[0]), Var(start[1]))
            combine = self.full_concat_nest(self.store_guard((
                *(Declare(total[o], types[o], init=self.neutral(o)) for o in outs),
                Loop(t_var, _const(0), (count,), 1,
                     self.arg_merge(f"{PREFIX}k", tot, (part_ref(0, t_var), part_ref(1, t_var)))),
                *(Declare(start[o], types[o], init=self.start_value(o)) for o in outs),
                *self.arg_final(f"{PREFIX}kf", st, tot)[:1],
                *(Assign(self.access_ref(self.m.outputs[o].access),
                         self.stored(o, FExpr(f"{PREFIX}kf ? {PREFIX}c : {PREFIX}b",
                                              ((f"{PREFIX}kf", Var(f"{PREFIX}kf")), (f"{PREFIX}c", tot[o]),
                                               (f"{PREFIX}b", st[o])), role="combine")))
                  for o in outs),
            )))
        else:
            combine = self.full_concat_nest(self.store_guard((
                *(Declare(total[o], types[o], init=self.start_value(o)) for o in outs),
                Loop(t_var, _const(0), (count,), 1,
                     tuple(Assign(Var(total[o]), Apply(self.op, Var(total[o]), part_ref(o, t_var))) for o in outs)),
                *(Assign(self.access_ref(self.m.outputs[o].access), self.stored(o, Var(total[o]))) for o in outs),
            )))
        return combine

    # }}}

    def run(self) -> Plan:
        for o in self.m.outputs:
            if (o.update == "accumulate" or o.init is not None) and not self.reds:
                raise UnsupportedInput("an accumulating output needs a reduction dimension to give its operator",
                                       self.m.loc, code="no-reduction-operator")
        check_exit_values(self.m)
        body, team = self.lower_split() if self.split else (self.lower_direct(), None)
        return Plan(
            name=self.m.name, loc=self.m.loc, params=function_params(self.m), body=body, mdh=self.m,
            tuning=self.p, needs_math="math.h" in self.headers, needs_limits="limits.h" in self.headers,
            iterators=plan_iterators(self.m), team=team,
        )


def check_exit_values(mdh: MdhExpr) -> None:
    """Refuse a non-rectangular nest whose iterator, declared before it, must be left at its exit
    value where the domain decides that value.

    ``Iterator`` computes exit values from the bounding box, which is right for a loop whose own
    bounds and enclosing guards name no iterator. The exit value of ``j`` in ``for (j = 0;
    j <= i; ...)`` is that of its last run; ``MdhExpr.domain`` does not say whether ``j <= i`` is
    the loop's bound or an ``if`` around the body (which leaves ``j`` at the box's end), so such
    an iterator, or one inside a loop a guard may skip, is refused.

    :raises UnsupportedInput: code ``non-rectangular-domain``.
    """
    if not mdh.domain:
        return
    pos = {d.iterator: k for k, d in enumerate(mdh.dims)}
    names = {b.name for b in mdh.buffers}
    innermost = [max((pos[n] for n in c.names() if n in pos), default=-1) for c in mdh.domain]
    for k, d in enumerate(mdh.dims):
        if d.iterator in names and any(m <= k for m in innermost):
            raise UnsupportedInput(
                f"iterator '{d.iterator}' is declared before the nest and its exit value depends on the "
                "non-rectangular domain (declare it in its for statement)", mdh.loc, "non-rectangular-domain")


def plan_iterators(mdh: MdhExpr) -> tuple[Iterator, ...]:
    """The nest's iterators with their types; ``live`` for those declared outside the nest (the
    front end lists them among the buffers)."""
    names = {b.name for b in mdh.buffers}
    return tuple(Iterator(d.iterator, d.iterator_type, d.lower, d.extent, d.iterator in names, d.step)
                 for d in mdh.dims)


def function_params(mdh: MdhExpr) -> tuple[Buffer, ...]:
    """The generated function's parameters: read-only scalars first (array shapes may use them).

    Iterators are never parameters: the generated code declares its own loops over them, and an
    iterator declared before the nest (C89 style) is set to its exit value at the call site.
    """
    its = {d.iterator for d in mdh.dims}
    bufs = tuple(b for b in mdh.buffers if b.name not in its)
    first = tuple(b for b in bufs if b.kind == "scalar" and not b.written)
    return first + tuple(b for b in bufs if b not in first)


def lower(mdh: MdhExpr, params: TuningParams) -> Plan:
    """Lower ``mdh`` with the tuning parameters ``params`` to a Plan.

    :raises CompilerBug: when ``params`` violates a constraint of ``mdpoly.lower.params``.
    :raises UnsupportedInput: for nests the Plan cannot express (mixed reduction operators,
        accumulation without a reduction dimension, max/min over a type of unknown range).
    """
    bad = violations(mdh, params)
    if bad:
        raise CompilerBug(f"invalid tuning parameters for '{mdh.name}' ({params.describe(mdh)}): "
                          + ", ".join(bad), mdh.loc)
    return _Lowerer(mdh, params).run()
