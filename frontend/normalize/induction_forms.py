"""Closed forms of one induction variable: statements + the variable -> the statements with its
steps dropped and each read its value on entry plus the steps before it (``inductions`` decides
which variables may be closed; this module builds and checks the forms).

An offset is a sum of terms ``count * ... * step``: a count is the iterations of a loop ``for (j =
L; j < U; j++)`` its current run has completed (``j - L``), or all its trips (``U > L ? U - L :
0``, simply ``U - L`` inside the loop, whose bounds the nest does not change). A loop stepping by
a constant ``s > 1`` (``j += s``) has completed ``(j - L) / s`` (``j - L >= 0``: C's quotient
is the floor) and runs ``U > L ? (U - L + s - 1) / s : 0`` trips; a downward loop ``for (j = H;
j > L; j -= s)`` (or ``j--``, ``>=``) has completed ``(H - j) / s`` of its ``H > L ? (H - L + s
- 1) / s : 0`` trips. The value of a read
is the variable's value on entry plus the whole iterations of the loops around it (their counts
times their steps per iteration) plus the steps textually before it in the same iteration. The
sum is computed in ``long long`` (``unsigned long long`` for a 64-bit unsigned variable) and
converted to the variable's type; a pointer ``p`` read as ``p[e]``, ``*p`` or ``p->f`` becomes
the element ``p[offset + e]``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import assigned_names, ids_in, names_in, replace_top_down, walk_nodes
from mdpoly.frontend.normalize.index_temps import pure_index
from mdpoly.frontend.symbols import SymbolTable, c_text
from mdpoly.ir.c_types import CType, parse_type

_GUARDS = (c_ast.If, c_ast.TernaryOp, c_ast.Switch, c_ast.While, c_ast.DoWhile)


class NoClosedForm(Exception):
    """Why a variable has no closed form here, at ``node`` (None: its declaration)."""

    def __init__(self, reason: str, node: c_ast.Node | None) -> None:
        super().__init__(reason)
        self.reason, self.node = reason, node


@dataclass(frozen=True, slots=True)
class _Loop:
    """A counted loop ``for (j = lower; j < upper; j += step)`` (``inclusive``: ``j <= upper``);
    ``down``: ``for (j = lower; j > upper; j -= step)`` (``inclusive``: ``j >= upper``)."""

    node: c_ast.For
    iterator: str
    lower: c_ast.Node
    upper: c_ast.Node
    inclusive: bool
    step: int = 1
    down: bool = False


@dataclass(frozen=True, slots=True)
class _Count:
    """Iterations of ``loop``: those its current run has completed (``j - L``), or all its trips."""

    loop: _Loop
    completed: bool


@dataclass(frozen=True, slots=True)
class _Term:
    """``± counts... * step`` of an offset (``step`` None: 1)."""

    counts: tuple[_Count, ...]
    step: c_ast.Node | None
    negative: bool

    def times(self, count: _Count) -> _Term:
        return _Term((count, *self.counts), self.step, self.negative)


Offset = tuple[_Term, ...]


@dataclass(frozen=True, slots=True)
class InductionVar:
    """The variable being closed: its name, its integer type (None: a pointer), the work type."""

    name: str
    ctype: CType | None
    type_text: str

    @property
    def work(self) -> str:
        t = self.ctype
        return "unsigned long long" if t is not None and not t.signed and t.size >= 8 else "long long"


def _typename(text: str) -> c_ast.Typename:
    return c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(text.split())))


def _cast(text: str, e: c_ast.Node) -> c_ast.Node:
    return c_ast.Cast(_typename(text), e)


def _const(e: c_ast.Node) -> int | None:
    """The value of a decimal ``int`` constant, else None."""
    v = e.value if isinstance(e, c_ast.Constant) and e.type == "int" else ""
    return int(v) if v.isdigit() and (v == "0" or v[0] != "0") else None


def is_name(e: c_ast.Node | None, name: str) -> bool:
    return isinstance(e, c_ast.ID) and e.name == name


def step_of(node: c_ast.Node, name: str) -> tuple[c_ast.Node | None, bool, bool] | None:
    """``(step, negative, before)`` when ``node`` steps ``name`` (``step`` None: 1; ``before``: the
    expression's value is the one before the step), else None."""
    if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--") and is_name(node.expr, name):
        return None, node.op.endswith("--"), node.op.startswith("p")
    if not (isinstance(node, c_ast.Assignment) and is_name(node.lvalue, name)):
        return None
    if node.op in ("+=", "-="):
        return node.rvalue, node.op == "-=", False
    r = node.rvalue
    if node.op == "=" and isinstance(r, c_ast.BinaryOp) and r.op in ("+", "-"):
        if is_name(r.left, name) and name not in names_in(r.right):
            return r.right, r.op == "-", False
        if r.op == "+" and is_name(r.right, name) and name not in names_in(r.left):
            return r.left, False, False
    return None


def header_steps(loop: c_ast.For, name: str) -> list[c_ast.Node]:
    """The steps of ``name`` among the increments of ``loop``'s header (``for (...; ...; j++, p++)``):
    they run at the end of every iteration, after the body."""
    nxt = loop.next
    items = nxt.exprs if isinstance(nxt, c_ast.ExprList) else []
    return [x for x in items if step_of(x, name) is not None]


def _counted(loop: c_ast.For, changed: set[str], symbols: SymbolTable) -> _Loop:
    """``loop`` as a counted loop whose trip count ``changed`` names do not change, or refused."""
    line = loop.coord.line if loop.coord is not None else "?"
    init, cond, nxt = loop.init, loop.cond, loop.next
    it: str | None = None
    lower: c_ast.Node | None = None
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and isinstance(init.decls[0], c_ast.Decl):
        it, lower = init.decls[0].name, init.decls[0].init
    elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        it, lower = init.lvalue.name, init.rvalue
    if it is not None and isinstance(nxt, c_ast.ExprList):   # j++, p++: j's own step among the others
        own = header_steps(loop, it)
        nxt = own[0] if len(own) == 1 else None
    stepped = step_of(nxt, it) if it is not None and nxt is not None else None
    step = None if stepped is None else 1 if stepped[0] is None else _const(stepped[0])
    down = stepped is not None and stepped[1]
    if it is None or lower is None or not step or not (
            isinstance(cond, c_ast.BinaryOp) and cond.op in ((">", ">=") if down else ("<", "<="))
            and is_name(cond.left, it)):
        raise NoClosedForm(f"the loop at line {line} around a step is not a loop 'for (j = L; j < U; j++)' (or "
                           "'j += s', 's' a positive constant, or downward 'j > L; j--')", loop)
    assert isinstance(cond, c_ast.BinaryOp)
    if it in assigned_names(loop.stmt):
        raise NoClosedForm(f"the loop at line {line} around a step changes its iterator '{it}' in its body", loop)
    for bound in (lower, cond.right):
        if not pure_index(bound, symbols):
            raise NoClosedForm(f"the loop at line {line} around a step has the bound '{c_text(bound)}', which may read "
                               "memory the nest writes", loop)
        moved = names_in(bound) & (changed | {it})
        if moved:
            raise NoClosedForm(f"the trip count of the loop at line {line} depends on '{sorted(moved)[0]}', which the "
                               "nest changes, so the steps before an iteration are no affine function of the iterators",
                               loop)
    return _Loop(loop, it, lower, cond.right, cond.op in ("<=", ">="), step, down)


class Closer:
    """Rewrites one variable's uses in one region (statements in order), in place."""

    def __init__(self, var: InductionVar, changed: set[str], symbols: SymbolTable) -> None:
        self.var, self.changed, self.symbols = var, changed, symbols
        self.spellings: list[tuple[str, str]] = []

    # -- the steps

    def _term(self, step: c_ast.Node | None, negative: bool, where: c_ast.Node) -> _Term:
        if step is not None:
            if not pure_index(step, self.symbols) or names_in(step) & self.changed or not all(
                    self._integer(n) for n in names_in(step)):
                raise NoClosedForm(f"'{self.var.name}' is stepped by '{c_text(step)}', which is no integer "
                                   "expression of names the nest leaves unchanged", where)
            if _const(step) == 1:
                step = None
        return _Term((), step, negative)

    def _integer(self, name: str) -> bool:
        """Whether ``name`` is an integer scalar or an enumerator (a step of another type rounds)."""
        var = self.symbols.variable(name)
        if var is None:
            return name in self.symbols.enum_values
        t = parse_type(var.scalar_type)
        return var.kind == "scalar" and t is not None and t.is_integer and not t.is_bool

    def _embedded(self, stmt: c_ast.Node) -> tuple[c_ast.Node, _Term, bool] | None:
        """The one step inside statement ``stmt`` (node, term, value before the step), or None."""
        steps = [n for n in walk_nodes(stmt) if step_of(n, self.var.name) is not None]
        if not steps:
            return None
        node = steps[0]
        if len(steps) > 1 or sum(1 for i in ids_in(stmt) if i.name == self.var.name) > 1:
            raise NoClosedForm(f"a statement that steps '{self.var.name}' inside an expression names it again", node)
        self._check_unconditional(stmt, node)
        step, negative, before = step_of(node, self.var.name)  # type: ignore[misc]
        return node, self._term(step, negative, node), before

    def _check_unconditional(self, stmt: c_ast.Node, target: c_ast.Node) -> None:
        def path(n: c_ast.Node, guarded: bool) -> bool | None:   # None: not under n
            if n is target:
                if guarded:
                    raise NoClosedForm(f"'{self.var.name}' is stepped behind '?:', '&&' or '||', so not in every "
                                       "iteration", target)
                return True
            for _name, child in n.children():
                inner = guarded or isinstance(n, c_ast.TernaryOp) or (
                    isinstance(n, c_ast.BinaryOp) and n.op in ("&&", "||"))
                if path(child, inner):
                    return True
            return None

        path(stmt, False)

    def delta(self, node: c_ast.Node | None) -> Offset:
        """The change of the variable over one execution of statement ``node`` (checked)."""
        if node is None:
            return ()
        if self.var.name not in names_in(node):
            return ()
        if isinstance(node, c_ast.Compound):
            return tuple(t for item in node.block_items or [] for t in self.delta(item))
        if isinstance(node, c_ast.For):
            inner = self.per_trip(node)
            if not inner:
                return ()
            loop = _counted(node, self.changed, self.symbols)
            return tuple(t.times(_Count(loop, False)) for t in inner)
        whole = step_of(node, self.var.name)
        if whole is not None:
            return (self._term(whole[0], whole[1], node),)
        if isinstance(node, _GUARDS):
            if any(step_of(n, self.var.name) is not None for n in walk_nodes(node)):
                what = {c_ast.If: "an 'if'", c_ast.TernaryOp: "'?:'", c_ast.Switch: "a 'switch'"}.get(
                    type(node), "a loop whose trips the data decide")
                raise NoClosedForm(f"'{self.var.name}' is stepped under {what}, so not the same number of times in "
                                   "every iteration", node)
            return ()
        found = self._embedded(node)
        return (found[1],) if found is not None else ()

    def per_trip(self, loop: c_ast.For) -> Offset:
        """The change of the variable over one iteration of ``loop``: its body, then its header's steps."""
        at_end: list[_Term] = []
        for x in header_steps(loop, self.var.name):
            found = step_of(x, self.var.name)
            assert found is not None
            at_end.append(self._term(found[0], found[1], x))
        return (*self.delta(loop.stmt), *at_end)

    # -- the rewrite

    def block(self, items: list[c_ast.Node], offset: Offset, running: frozenset[int]) -> tuple[list[c_ast.Node],
                                                                                                Offset]:
        """``items`` rewritten (steps dropped) and the offset after them."""
        out: list[c_ast.Node] = []
        for item in items:
            if self.var.name not in names_in(item):
                out.append(item)
                continue
            whole = step_of(item, self.var.name)
            if whole is not None:
                offset = (*offset, self._term(whole[0], whole[1], item))
                continue
            if isinstance(item, c_ast.Compound):
                item.block_items, offset = self.block(item.block_items or [], offset, running)
                out.append(item)
                continue
            if isinstance(item, c_ast.For):
                whole_loop = self.delta(item)   # before the rewrite drops its steps
                self.loop(item, offset, running)
                offset = (*offset, *whole_loop)
                out.append(item)
                continue
            self.delta(item)   # refuses a step under a guard
            found = None if isinstance(item, _GUARDS) else self._embedded(item)
            if found is None:
                item = self.uses(item, offset, running)
            else:
                node, term, before = found
                item = self.uses(item, offset, running, (node, offset if before else (*offset, term)))
                offset = (*offset, term)
            out.append(item)
        return out, offset

    def loop(self, node: c_ast.For, offset: Offset, running: frozenset[int]) -> None:
        per_trip = self.per_trip(node)
        if not per_trip:
            node.stmt = self.uses(node.stmt, offset, running)
            return
        loop = _counted(node, self.changed, self.symbols)
        if isinstance(node.next, c_ast.ExprList):   # the header's steps go: they are in per_trip
            stepped = header_steps(node, self.var.name)
            rest = [x for x in node.next.exprs if not any(x is y for y in stepped)]
            node.next = rest[0] if len(rest) == 1 else c_ast.ExprList(rest, coord=node.next.coord)
        inside = (*offset, *(t.times(_Count(loop, True)) for t in per_trip))
        running = running | {id(node)}
        if isinstance(node.stmt, c_ast.Compound):
            node.stmt.block_items, _end = self.block(node.stmt.block_items or [], inside, running)
        else:
            items, _end = self.block([node.stmt], inside, running)
            node.stmt = items[0] if len(items) == 1 else c_ast.Compound(items, coord=node.stmt.coord)

    def uses(self, stmt: c_ast.Node, offset: Offset, running: frozenset[int],
             step: tuple[c_ast.Node, Offset] | None = None) -> c_ast.Node:
        """Every read of the variable under ``stmt`` as its closed form (``step``: a step node and
        the offset of its value)."""
        name = self.var.name

        def at(n: c_ast.Node) -> Offset | None:   # the offset of the variable's value that n reads
            if step is not None and n is step[0]:
                return step[1]
            return offset if is_name(n, name) else None

        def rewrite(n: c_ast.Node) -> c_ast.Node | None:
            if self.var.ctype is None:   # a pointer: p[e], *p, p->f as elements of p's base
                if isinstance(n, c_ast.ArrayRef) and (off := at(n.name)) is not None:
                    inner = c_ast.Compound([n.subscript])
                    replace_top_down(inner, rewrite)
                    return self._element(n, off, running, inner.block_items[0])
                if isinstance(n, c_ast.UnaryOp) and n.op == "*" and (off := at(n.expr)) is not None:
                    return self._element(n, off, running, None)
                if isinstance(n, c_ast.StructRef) and n.type == "->" and (off := at(n.name)) is not None:
                    return c_ast.StructRef(self._element(n, off, running, None), ".", n.field, coord=n.coord)
            off = at(n)
            return self._value(n, off, running) if off is not None else None

        holder = c_ast.Compound([stmt])
        replace_top_down(holder, rewrite)
        return holder.block_items[0]

    def _sum(self, offset: Offset, running: frozenset[int], start: c_ast.Node | None) -> c_ast.Node:
        total = start
        for t in offset:
            product: c_ast.Node | None = None
            for c in t.counts:
                f = self._count(c, running)
                product = f if product is None else c_ast.BinaryOp("*", product, f)
            if t.step is not None:
                s = copy.deepcopy(t.step)
                s = s if _const(s) is not None else _cast(self.var.work, s)
                product = s if product is None else c_ast.BinaryOp("*", product, s)
            if product is None:
                product = c_ast.Constant("int", "1")
            if total is None:
                total = c_ast.UnaryOp("-", product) if t.negative else product
            else:
                total = c_ast.BinaryOp("-" if t.negative else "+", total, product)
        assert total is not None
        return total

    def _count(self, c: _Count, running: frozenset[int]) -> c_ast.Node:
        w, lp = self.var.work, c.loop
        s = lp.step
        # the loop runs from ``start`` towards ``stop``: ``hi - lo`` is the distance it may go
        hi, lo = (lp.lower, lp.upper) if lp.down else (lp.upper, lp.lower)
        if c.completed:
            it = _cast(w, c_ast.ID(lp.iterator))
            if lp.down:   # H - j
                done: c_ast.Node = c_ast.BinaryOp("-", _cast(w, copy.deepcopy(lp.lower)), it)
            else:
                done = it if _const(lp.lower) == 0 else c_ast.BinaryOp("-", it, copy.deepcopy(lp.lower))
            return done if s == 1 else c_ast.BinaryOp("/", done, c_ast.Constant("int", str(s)))
        low, high = _const(lo), _const(hi)
        if low is not None and high is not None:
            return c_ast.Constant("int", str(max((high - low + int(lp.inclusive) + s - 1) // s, 0)))
        span: c_ast.Node = _cast(w, copy.deepcopy(hi))
        if low != 0:
            span = c_ast.BinaryOp("-", span, copy.deepcopy(lo))
        if lp.inclusive or s > 1:   # the trips of j += s over [L, U): (U - L + s - 1) / s
            span = c_ast.BinaryOp("+", span, c_ast.Constant("int", str(s - 1 + int(lp.inclusive))))
        if s > 1:
            span = c_ast.BinaryOp("/", span, c_ast.Constant("int", str(s)))
        if id(lp.node) in running:   # inside the loop now, and its trips are the same in every run: it runs
            return span
        runs = c_ast.BinaryOp(">=" if lp.inclusive else ">", copy.deepcopy(hi), copy.deepcopy(lo))
        return c_ast.TernaryOp(runs, span, c_ast.Constant("int", "0"))

    def exit_value(self, offset: Offset) -> c_ast.Node:
        """The variable's value after the statements whose change is ``offset`` (outside every
        loop: each count is all of a loop's trips, ``U > L ? U - L : 0``, so an empty loop adds
        nothing), as a C expression over its value on entry."""
        name = c_ast.ID(self.var.name)
        if not offset:
            return name
        if self.var.ctype is None:
            return c_ast.BinaryOp("+", name, self._sum(offset, frozenset(), None))
        return _cast(self.var.type_text, self._sum(offset, frozenset(), _cast(self.var.work, name)))

    def _value(self, n: c_ast.Node, offset: Offset, running: frozenset[int]) -> c_ast.Node:
        """The variable's value at ``n`` (its name, or a step of it)."""
        name = self.var.name
        if not offset:
            new: c_ast.Node = c_ast.ID(name, coord=n.coord)
        elif self.var.ctype is None:
            new = c_ast.BinaryOp("+", c_ast.ID(name, coord=n.coord), self._sum(offset, running, None))
        else:
            new = _cast(self.var.type_text, self._sum(offset, running, _cast(self.var.work, c_ast.ID(name))))
        self.spellings.append((c_text(new), c_text(n)))
        return new

    def _element(self, n: c_ast.Node, offset: Offset, running: frozenset[int], subscript: c_ast.Node | None
                 ) -> c_ast.Node:
        """``p[offset + subscript]`` for the pointer ``p`` read at ``n`` (``p[e]``, ``*p``, ``p->f``)."""
        base = c_ast.ID(self.var.name, coord=n.coord)
        spelled = c_text(n)
        if not offset:
            index: c_ast.Node = subscript if subscript is not None else c_ast.Constant("int", "0")
        else:
            index = self._sum(offset, running, None)
            if subscript is not None:
                index = c_ast.BinaryOp("+", index, subscript)
        new = c_ast.ArrayRef(base, index, coord=n.coord)
        self.spellings.append((c_text(new), spelled))
        return new
