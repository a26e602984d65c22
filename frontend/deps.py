"""Dependence analysis and loop classification: ``Scop`` + ``Options`` -> ``Deps``.

Every access gets its own isl tuple (``A<n>``) over its statement's domain and a schedule that
is the statement's 2d+1 schedule plus one dimension ordering a statement's reads before its
write, so isl's dataflow (``UnionAccessInfo.compute_flow``) reports RAW, WAR and WAW
dependences between individual accesses. A loop is ``++`` when it carries none; a reduction
(``+ * max min``) when all it carries are through the accumulator of reduction updates
(``x op= e``, ``x = x op e``, ``x = fmax(x, e)``, ``x = x > e ? x : e``...) sharing one
operator, and the accumulator is not otherwise touched in that loop; else ``seq``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import islpy as isl

from mdpoly.frontend.expr_types import NameTypes, call_argument_type, expr_type
from mdpoly.ir.c_types import CType, parse_type, promote, usual_conversions
from mdpoly.ir.mdh import Access, Combine
from mdpoly.ir.scop import (
    Binary,
    Call,
    Cast,
    Cond,
    Expr,
    Ref,
    Scop,
    Statement,
    Unary,
    expr_refs,
)
from mdpoly.options import Options

# {{{ reduction updates


@dataclass(frozen=True, slots=True)
class Reduction:
    """Statement ``stmt`` folds ``term`` into ``accumulator`` with ``op``."""

    stmt: str
    op: Combine
    accumulator: Access
    term: Expr
    #: an argmax/argmin (``op.is_arg``): the other statement of the pair (``idx = e > m ? i : idx``
    #: right before ``m = e > m ? e : m``), whose accumulator this one's updates also touch
    partner: str = ""


_MAX_FUNCS = frozenset({"fmax", "fmaxf", "fmaxl"})
_BITWISE_ASSIGN = {"&=": Combine.BAND, "|=": Combine.BOR, "^=": Combine.BXOR}
_MIN_FUNCS = frozenset({"fmin", "fminf", "fminl"})


def _is_acc(e: Expr, acc: Access) -> bool:
    return isinstance(e, Ref) and e.access == acc


def _uses(e: Expr, acc: Access) -> bool:
    return acc in expr_refs(e)


def reduction_of(stmt: Statement, name_type: NameTypes | None = None) -> Reduction | None:
    """The reduction ``stmt`` performs, or None when it is no reduction update.

    ``x -= e`` and ``x = x - e`` add ``-e`` negated in the type C subtracts in (``long s; s -=
    u`` with ``unsigned u`` subtracts in ``long``, so ``-(long)u``), known from ``name_type``."""
    x, e = stmt.write, stmt.rhs

    def make(op: Combine, term: Expr) -> Reduction | None:
        return None if _uses(term, x) else Reduction(stmt.name, op, x, term)

    def negated(term: Expr) -> Expr:
        if name_type is not None:
            acc_t, term_t = name_type(x.buffer), expr_type(term, name_type)
            if acc_t is not None and term_t is not None:
                op_t = usual_conversions(promote(acc_t), promote(term_t))
                if op_t != promote(term_t):
                    return Unary("-", Cast(op_t.name, term))
        return Unary("-", term)

    if stmt.op == "+=":
        return make(Combine.ADD, e)
    if stmt.op == "-=":
        return make(Combine.ADD, negated(e))
    if stmt.op == "*=":
        return make(Combine.MUL, e)
    if stmt.op in _BITWISE_ASSIGN:
        return make(_BITWISE_ASSIGN[stmt.op], e)
    if stmt.op != "=":
        return None
    if isinstance(e, Binary) and e.op in ("+", "*", "&", "|", "^"):
        op = {"+": Combine.ADD, "*": Combine.MUL, "&": Combine.BAND, "|": Combine.BOR, "^": Combine.BXOR}[e.op]
        if _is_acc(e.left, x):
            return make(op, e.right)
        if _is_acc(e.right, x):
            return make(op, e.left)
    if isinstance(e, Binary) and e.op == "-" and _is_acc(e.left, x):
        return make(Combine.ADD, negated(e.right))
    if isinstance(e, Call) and len(e.args) == 2 and e.func in _MAX_FUNCS | _MIN_FUNCS:
        op = Combine.MAX if e.func in _MAX_FUNCS else Combine.MIN
        if _is_acc(e.args[0], x):
            return make(op, e.args[1])
        if _is_acc(e.args[1], x):
            return make(op, e.args[0])
    if isinstance(e, Cond) and isinstance(e.cond, Binary) and e.cond.op in ("<", "<=", ">", ">="):
        a, b = e.cond.left, e.cond.right
        if {e.then, e.other} == {a, b} and (_is_acc(a, x) or _is_acc(b, x)):
            other = b if _is_acc(a, x) else a
            picks_a_when_greater = (e.then == a) == (e.cond.op in (">", ">="))
            return make(Combine.MAX if picks_a_when_greater else Combine.MIN, other)
    return None


def arg_pairs(scop: Scop, reductions: dict[str, Reduction]) -> dict[str, Reduction]:
    """Argmax/argmin pairs among the statements: ``idx = C ? I : idx`` directly followed by the
    max/min update ``m = C ? e : m`` with the same condition ``C`` (what ``if (e > m) { m = e;
    idx = i; }`` is modelled as), where ``I`` reads neither ``m`` nor ``idx``. Returns both
    statements' reductions, with the argmax/argmin operator: ``>``/``<`` keep the first index
    among equal values, ``>=``/``<=`` the last (as the sequential loop does)."""
    out: dict[str, Reduction] = {}
    for s_idx, s_val in itertools.pairwise(scop.statements):
        red = reductions.get(s_val.name)
        e, v = s_idx.rhs, s_val.rhs
        if (red is None or red.op not in (Combine.MAX, Combine.MIN) or not isinstance(v, Cond)
                or not isinstance(e, Cond) or s_idx.op != "=" or e.cond != v.cond or not _is_acc(e.other, s_idx.write)
                or s_idx.loops != s_val.loops or s_idx.guards != s_val.guards
                or s_idx.position[:-1] != s_val.position[:-1] or s_idx.write.buffer == red.accumulator.buffer
                or s_idx.name in reductions or s_idx.name in out or s_val.name in out):
            continue
        if {a.buffer for a in expr_refs(e.then)} & {s_idx.write.buffer, red.accumulator.buffer}:
            continue
        assert isinstance(v.cond, Binary)
        strict = v.cond.op in ("<", ">")
        if red.op is Combine.MAX:
            op = Combine.ARGMAX if strict else Combine.ARGMAX_LAST
        else:
            op = Combine.ARGMIN if strict else Combine.ARGMIN_LAST
        out[s_val.name] = Reduction(s_val.name, op, red.accumulator, red.term, s_idx.name)
        out[s_idx.name] = Reduction(s_idx.name, op, s_idx.write, e.then, s_val.name)
    return out


def scop_name_type(scop: Scop) -> NameTypes:
    """The C type of each iterator and scalar/element of the nest's variables."""
    iters = {lp.iterator: lp.c_type for lp in scop.loops}

    def name_type(name: str) -> CType | None:
        if name in iters:
            return parse_type(iters[name])
        try:
            var = scop.variable(name)
        except KeyError:
            return None
        return parse_type(var.scalar_type or var.elem_type)
    return name_type


def inexact_reduction(scop: Scop, red: Reduction) -> str | None:
    """Why reordering ``red``'s updates would change the result under C's type rules, or None.

    ``+``/``*`` on an integer accumulator are exact (modulo 2^n, as gcc converts) only when the
    update is computed in integer arithmetic: ``int s; s += 1.5f`` computes in ``float`` and
    truncates after every step. ``max``/``min`` commute with the final conversion only when every
    value of the term fits the accumulator's type (floating accumulators: any arithmetic term,
    rounding is monotonic).
    """
    name_type = scop_name_type(scop)
    acc = name_type(red.accumulator.buffer)
    term = expr_type(red.term, name_type)
    where = f"'{red.accumulator.to_c()}'"
    if acc is None or term is None:
        return f"the C types in the update of {where} are not all arithmetic types mdpoly knows"
    if acc.is_bool:
        return f"{where} is a _Bool, which converts every update to 0 or 1"
    stmt = next(s for s in scop.statements if s.name == red.stmt)
    if isinstance(stmt.rhs, Call):
        arg = call_argument_type(stmt.rhs.func)
        if arg is not None:
            term = arg  # fmax/fmin convert both operands to their floating type
            if acc.is_integer:
                return (f"{where} is '{acc.name}' but '{stmt.rhs.func}' computes in '{arg.name}' and the result is "
                        "converted back after every step")
    if red.op.is_arg:
        # which index wins depends on exact comparisons: the stored value must be the compared one
        if not acc.holds_all_of(term):
            return (f"{where} is '{acc.name}' but the values it is compared with (or takes) are '{term.name}', "
                    f"which do not all fit '{acc.name}' exactly")
        return None
    if red.op.is_bitwise:
        if acc.is_float or term.is_float:
            return f"{where} is combined with a bitwise operator on a floating-point value"
        return None  # modulo 2^n conversions commute with &, |, ^
    if red.op in (Combine.ADD, Combine.MUL):
        if acc.is_integer and term.is_float:
            computed = usual_conversions(acc, term)
            return (f"{where} is '{acc.name}' but its update is computed in '{computed.name}' and truncated to "
                    f"'{acc.name}' after every step, so the updates cannot be reordered")
        return None
    if acc.is_float:
        return None
    if term.is_float or not acc.holds_all_of(term):
        return (f"{where} is '{acc.name}' but the values it is compared with are '{term.name}', which do not all "
                f"fit '{acc.name}'")
    return None


# }}}

# {{{ dependences


@dataclass(frozen=True, slots=True)
class Dependence:
    """A dependence from access ``source`` of ``source_stmt`` to ``sink`` of ``sink_stmt``."""

    kind: str  # "flow" | "anti" | "output"
    source_stmt: str
    source: Access
    sink_stmt: str
    sink: Access
    carried_by: tuple[int, ...]  # indices of the loops that carry it

    def describe(self, scop: Scop) -> str:
        if self.kind == "flow":
            writer = _stmt(scop, self.sink_stmt).write.to_c()
            return f"{writer} reads {self.sink.to_c()}"
        if self.kind == "anti":
            return f"{self.sink.to_c()} overwrites an element read as {self.source.to_c()}"
        return f"{self.source.to_c()} and {self.sink.to_c()} write the same element"


@dataclass(frozen=True, slots=True)
class LoopClass:
    loop: int
    combine: Combine
    reason: str | None = None  # why seq


@dataclass(frozen=True, slots=True)
class Deps:
    """The classification of every loop of a ``Scop``."""

    loops: tuple[LoopClass, ...]
    dependences: tuple[Dependence, ...]
    reductions: tuple[Reduction, ...]  # reduction updates that some reduction loop relies on
    mixed_ops: bool = False


def _stmt(scop: Scop, name: str) -> Statement:
    return next(s for s in scop.statements if s.name == name)


@dataclass(frozen=True, slots=True)
class _Tagged:
    tag: str
    stmt: Statement
    access: Access
    is_write: bool


def _tagged_accesses(scop: Scop) -> list[_Tagged]:
    out: list[_Tagged] = []
    for st in scop.statements:
        for r in st.reads:
            out.append(_Tagged(f"A{len(out)}", st, r, False))
        out.append(_Tagged(f"A{len(out)}", st, st.write, True))
    return out


def _union(maps: list[isl.UnionMap], space_params: str) -> isl.UnionMap:
    u = isl.UnionMap(f"{space_params}{{ }}")
    for m in maps:
        u = u.union(m)
    return u


def product_context(scop: Scop) -> isl.Set | None:
    """What the exact product ``P = a * b`` of two size parameters (``Scop.products``) implies,
    as a set of parameter values: zero where a factor is, the sign of the factors' product, and
    ``|P| >= |a|``, ``|P| >= |b|`` (also ``P >= a + b - 1`` for positive factors) elsewhere. A
    padded grid's planes ``u[(k * (ny + 2) + j) * (nx + 2) + i]`` at ``k = 0, 1, nz, nz + 1`` are
    rows ``j + c * (ny + 2)`` of a view whose row offsets hold ``ny * nz``: without these facts
    the product is a free parameter and the planes seem to overlap. Exact facts only (the model's
    products are computed without overflow), so no dependence is lost; ``None`` without products."""
    if not scop.products:
        return None
    pieces = []
    for p, a, b in scop.products:
        pieces.append(" or ".join((
            f"({a} = 0 and {p} = 0)", f"({b} = 0 and {p} = 0)",
            f"({a} >= 1 and {b} >= 1 and {p} >= {a} and {p} >= {b} and {p} >= {a} + {b} - 1)",
            f"({a} <= -1 and {b} <= -1 and {p} >= -{a} and {p} >= -{b})",
            f"({a} >= 1 and {b} <= -1 and {p} <= -{a} and {p} <= {b})",
            f"({a} <= -1 and {b} >= 1 and {p} <= {a} and {p} <= -{b})")))
    return isl.Set(f"[{', '.join(scop.params)}] -> {{ : {' and '.join(f'({q})' for q in pieces)} }}")


def compute_dependences(scop: Scop) -> list[Dependence]:
    """All RAW, WAR and WAW dependences between accesses, with the loops carrying each."""
    prefix = f"[{', '.join(scop.params)}] -> " if scop.params else ""
    tagged = _tagged_accesses(scop)
    by_tag = {t.tag: t for t in tagged}
    context = product_context(scop)
    doms = {t.tag: isl.Set(scop.domain_str(t.stmt, t.tag)) for t in tagged}
    if context is not None:
        doms = {tag: d.intersect_params(context) for tag, d in doms.items()}
    acc = {t.tag: isl.Map(scop.access_str(t.stmt, t.access, t.tag)).intersect_domain(doms[t.tag]) for t in tagged}
    sch = {t.tag: isl.Map(scop.schedule_str(t.stmt, t.tag, 1 if t.is_write else 0)).intersect_domain(doms[t.tag])
           for t in tagged}
    reads = _union([acc[t.tag].to_union_map() for t in tagged if not t.is_write], prefix)
    writes = _union([acc[t.tag].to_union_map() for t in tagged if t.is_write], prefix)
    sched = _union([m.to_union_map() for m in sch.values()], prefix)
    empty = isl.UnionMap(f"{prefix}{{ }}")

    def flow(sink: isl.UnionMap, must: isl.UnionMap, may: isl.UnionMap | None) -> isl.UnionMap:
        ai = isl.UnionAccessInfo.from_sink(sink).set_must_source(must)
        if may is not None:
            ai = ai.set_may_source(may)
        return ai.set_schedule_map(sched).compute_flow().get_may_dependence()

    found: list[Dependence] = []
    for kind, umap in (("flow", flow(reads, writes, None)), ("anti", flow(writes, empty, reads)),
                       ("output", flow(writes, writes, None))):
        ml = umap.get_map_list()
        for k in range(ml.n_map()):
            m = ml.get_at(k)
            if m.is_empty():
                continue
            src = by_tag[m.get_tuple_name(isl.dim_type.in_)]
            dst = by_tag[m.get_tuple_name(isl.dim_type.out)]
            timed = m.apply_domain(sch[src.tag]).apply_range(sch[dst.tag])
            carried = tuple(lp for lp in range(len(scop.loops)) if _carries(scop, lp, timed, prefix))
            found.append(Dependence(kind, src.stmt.name, src.access, dst.stmt.name, dst.access, carried))
    return found


def _loop_path(scop: Scop, loop: int) -> tuple[int, ...] | None:
    depth = scop.loops[loop].depth
    for st in scop.statements:
        if loop in st.loops:
            return st.position[:depth]
    return None


def _carries(scop: Scop, loop: int, timed: isl.Map, prefix: str) -> bool:
    path = _loop_path(scop, loop)
    if path is None:
        return False
    n = timed.dim(isl.dim_type.in_)
    t = [f"t{q}" for q in range(n)]
    u = [f"u{q}" for q in range(n)]
    it_dim = 2 * scop.loops[loop].depth - 1
    cons = [f"t{2 * m} = {p}" for m, p in enumerate(path)]
    cons += [f"u{q} = t{q}" for q in range(it_dim)]
    cons.append(f"u{it_dim} != t{it_dim}")
    sel = isl.Map(f"{prefix}{{ [{', '.join(t)}] -> [{', '.join(u)}] : {' and '.join(cons)} }}")
    return not timed.intersect(sel).is_empty()


# }}}

# {{{ classification


def _inside(scop: Scop, stmt: str, loop: int) -> bool:
    return loop in _stmt(scop, stmt).loops


def analyze_dependences(scop: Scop, options: Options) -> Deps:
    """Classify every loop of ``scop``. :raises islpy.Error: on an isl failure (caught upstream)."""
    deps = compute_dependences(scop)
    reductions: dict[str, Reduction] = {}
    inexact: dict[str, str] = {}  # statement -> why its reduction cannot be reordered
    name_type = scop_name_type(scop)
    for st in scop.statements:
        r = reduction_of(st, name_type)
        if r is None:
            continue
        reductions[st.name] = r
    reductions.update(arg_pairs(scop, reductions))
    for name, r in list(reductions.items()):
        why = inexact_reduction(scop, r)
        if why is not None:
            del reductions[name]
            inexact[name] = why
    classes: list[LoopClass] = []
    used: dict[str, Reduction] = {}
    ops_seen: set[Combine] = set()
    for lp in range(len(scop.loops)):
        it = scop.loops[lp].iterator
        carried = [d for d in deps if lp in d.carried_by]
        if not carried:
            # A loop of at most one iteration carries nothing; when its statements are all
            # reduction updates of accumulators independent of it, it is still their reduction.
            inside = [st for st in scop.statements if lp in st.loops]
            trivial = [reductions[st.name] for st in inside if st.name in reductions
                       and not reductions[st.name].accumulator.depends_on(it)]
            if inside and len(trivial) == len(inside) and len({r.op for r in trivial}) == 1:
                ops_seen.add(trivial[0].op)
                used.update((r.stmt, r) for r in trivial)
                classes.append(LoopClass(lp, trivial[0].op))
            else:
                classes.append(LoopClass(lp, Combine.CONCAT))
            continue
        verdict = _reduction_verdict(scop, lp, carried, deps, reductions, options, inexact)
        if isinstance(verdict, str):
            classes.append(LoopClass(lp, Combine.SEQ, f"loop '{it}' {verdict}"))
            continue
        op, reds = verdict
        ops_seen.update(r.op for r in reds)
        for r in reds:
            used[r.stmt] = r
        classes.append(LoopClass(lp, op))
    return Deps(tuple(classes), tuple(deps), tuple(used.values()), mixed_ops=len(ops_seen) > 1)


def _reduction_verdict(scop: Scop, lp: int, carried: list[Dependence], all_deps: list[Dependence],
                       reductions: dict[str, Reduction], options: Options,
                       inexact: dict[str, str]) -> tuple[Combine, list[Reduction]] | str:
    """The reduction a loop performs, or why it is sequential (a phrase after "loop 'i' ")."""
    reds: list[Reduction] = []
    for d in carried:
        if d.sink_stmt in inexact and d.source_stmt == d.sink_stmt:
            return f"carries a reduction that C's type rules make order-dependent: {inexact[d.sink_stmt]}"
        red = reductions.get(d.sink_stmt)
        pair = reductions.get(red.partner) if red is not None and red.partner else None
        if red is not None and red.partner and pair is None:
            return f"carries an argmax/argmin on '{red.accumulator.buffer}' whose other half cannot be reordered"
        stmts = {red.stmt, pair.stmt} if red is not None and pair is not None else {d.sink_stmt}
        accs = {red.accumulator, pair.accumulator} if red is not None and pair is not None else \
            {red.accumulator} if red is not None else set()
        if red is None or d.source_stmt not in stmts or d.source not in accs or d.sink not in accs:
            return f"carries {_kind_phrase(d.kind)} on '{d.sink.buffer}' ({d.describe(scop)})"
        if red not in reds:
            reds.append(red)
    ops = sorted({r.op for r in reds}, key=lambda o: o.value)
    op = ops[0]  # several operators in one loop: reported as mixed-reduction-operators
    it = scop.loops[lp].iterator
    for red in reds:
        acc = red.accumulator
        if acc.depends_on(it):
            return (f"carries an output dependence on '{acc.buffer}' ('{acc.to_c()}' is written again in a "
                    "later iteration)")
        for d in all_deps:
            ends = ((d.source_stmt, d.source), (d.sink_stmt, d.sink))
            mine = [e for e in ends if e == (red.stmt, acc)]
            other = [e for e in ends if e[0] not in (red.stmt, red.partner) and lp in _stmt(scop, e[0]).loops]
            if mine and other:
                return (f"carries a reduction into '{acc.to_c()}' that is also accessed by "
                        f"'{_stmt(scop, other[0][0]).text}'")
        var = scop.variable(acc.buffer)
        if options.strict_fp and var.is_float and op in (Combine.ADD, Combine.MUL):
            return (f"carries a floating-point '{op.value}' reduction into '{acc.to_c()}', "
                    "which --strict-fp forbids reassociating")
    return op, reds


def _kind_phrase(kind: str) -> str:
    return {"flow": "a flow dependence", "anti": "an anti dependence", "output": "an output dependence"}[kind]


# }}}
