"""Body induction variables: nest copy -> the nest with counters and bumped pointers in closed form.

C that fills a buffer row after row steps a counter or a pointer in the loop bodies instead of
computing an index from the iterators:

    int idx = 0;                                  const float *src = a;
    for (int i = 0; i < n; i++)                   for (int i = 0; i < n; i++) {
      for (int j = 0; j < m; j++)                   for (int j = 0; j < m; j++) b[i*m + j] = src[j];
        out[idx++] = a[j * n + i];                  src += stride;
                                                  }

The value at a use is the value on entry plus the steps of all earlier iterations (trip counts of
completed inner loops times their steps per iteration) plus the steps textually earlier in the
same iteration; with those written out (``out[(int) ((long long) idx + (long long) i * m + j)]``,
``src[(long long) i * stride + j]``) the subscripts are affine, and the steps go. The variable
itself stays the base, unchanged in the nest, so no name is introduced.

Accepted: a local (or parameter) integer scalar ``x`` or pointer ``p`` that the nest changes only
by steps ``x++``, ``++x``, ``x--``, ``--x`` (also inside an expression: ``out[idx++]`` reads the
value before the step, ``out[++idx]`` after), ``x += c``, ``x -= c``, ``x = x + c``, ``x = x - c``
as statements or among a loop header's increments (``for (...; ...; i++, p += s)``: at the end of
each iteration), ``c`` an integer expression of names the nest does not change. The steps sit at the
top level of a loop body or inside inner loops ``for (j = L; j < U; j++)`` (or ``<=``) whose bounds
the nest does not change, so each inner loop runs ``U > L ? U - L : 0`` trips in every iteration
around it. A variable declared in the nest (``float *row = out + i*m;`` at the top of a body) is
handled the same way from its declaration to the end of its block (``local_pointers`` then
resolves it); one declared before the nest must be dead after it (its exit value is not
modelled).

Refused (the variable stays as written, and a later "not affine" message says why, through
``Induction`` reasons): a step under an ``if``, ``?:``, ``&&``, ``||``, ``switch`` or a loop that is
no such counted loop; ``break``, ``continue``, ``return`` or ``goto`` in the nest; any other
assignment of the variable, its address taken, ``volatile``; a statement that steps it inside an
expression and names it twice; the variable read in a loop header; an inner loop whose bounds
the nest changes (a triangle: its trip count is no product of sizes); a variable of an unsigned
type narrower than a pointer (or of a type narrower than ``int``) that reaches a subscript or
another scalar, whose wrap-around the model of the subscripts would not see; a ``_Bool`` (its steps
saturate or toggle).

Integer types: the closed form is computed in ``long long`` (``unsigned long long`` for a 64-bit
unsigned variable, whose steps wrap the same modulo 2^64) and converted to the variable's type,
as its own steps convert it; pointer offsets are ``long long``. A count of completed iterations
times the steps of one iteration is a change the original makes, so it fits where the original
does not overflow; the closed form can overflow where the original does not only if a product
of trip counts and a step exceeds 2^63 (the steps of an iteration that never completes are
computed too).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc
from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.normalize.ast_util import (
    assigned_names,
    declared_names,
    ids_in,
    loc_of,
    names_in,
    replace_top_down,
    walk_nodes,
)
from mdpoly.frontend.normalize.index_temps import pure_index
from mdpoly.frontend.symbols import SymbolTable, c_text
from mdpoly.ir.c_types import CType, parse_type

_JUMPS = (c_ast.Break, c_ast.Continue, c_ast.Return, c_ast.Goto, c_ast.Label)
_GUARDS = (c_ast.If, c_ast.TernaryOp, c_ast.Switch, c_ast.While, c_ast.DoWhile)


@dataclass(frozen=True, slots=True)
class Induction:
    """A variable the nest steps whose steps were left as written, and why (for messages)."""

    name: str
    reason: str
    loc: SourceLoc


@dataclass(frozen=True, slots=True)
class Inductions:
    """What ``close_inductions`` did: the variables rewritten, the ones refused, and the closed
    forms as C text next to the user's text they replaced (for messages)."""

    closed: tuple[str, ...] = ()
    refused: tuple[Induction, ...] = ()
    spellings: tuple[tuple[str, str], ...] = ()

    def then(self, later: Inductions) -> Inductions:
        """This run followed by ``later`` over the same nest: a variable ``later`` closed or refused
        takes its outcome from there."""
        seen = set(later.closed) | {r.name for r in later.refused}
        return Inductions(self.closed + later.closed, later.refused + tuple(r for r in self.refused if r.name not in seen),
                          self.spellings + later.spellings)


class _Refused(Exception):
    def __init__(self, reason: str, node: c_ast.Node | None) -> None:
        super().__init__(reason)
        self.reason, self.node = reason, node


@dataclass(frozen=True, slots=True)
class _Loop:
    """A counted loop ``for (j = lower; j < upper; j++)`` (``inclusive``: ``j <= upper``)."""

    node: c_ast.For
    iterator: str
    lower: c_ast.Node
    upper: c_ast.Node
    inclusive: bool


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
class _Var:
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


def _is_name(e: c_ast.Node | None, name: str) -> bool:
    return isinstance(e, c_ast.ID) and e.name == name


def step_of(node: c_ast.Node, name: str) -> tuple[c_ast.Node | None, bool, bool] | None:
    """``(step, negative, before)`` when ``node`` steps ``name`` (``step`` None: 1; ``before``: the
    expression's value is the one before the step), else None."""
    if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--") and _is_name(node.expr, name):
        return None, node.op.endswith("--"), node.op.startswith("p")
    if not (isinstance(node, c_ast.Assignment) and _is_name(node.lvalue, name)):
        return None
    if node.op in ("+=", "-="):
        return node.rvalue, node.op == "-=", False
    r = node.rvalue
    if node.op == "=" and isinstance(r, c_ast.BinaryOp) and r.op in ("+", "-"):
        if _is_name(r.left, name) and name not in names_in(r.right):
            return r.right, r.op == "-", False
        if r.op == "+" and _is_name(r.right, name) and name not in names_in(r.left):
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
    unit = stepped is not None and not stepped[1] and (stepped[0] is None or _const(stepped[0]) == 1)
    if it is None or lower is None or not unit or not (
            isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=") and _is_name(cond.left, it)):
        raise _Refused(f"the loop at line {line} around a step is not a loop 'for (j = L; j < U; j++)'", loop)
    assert isinstance(cond, c_ast.BinaryOp)
    if it in assigned_names(loop.stmt):
        raise _Refused(f"the loop at line {line} around a step changes its iterator '{it}' in its body", loop)
    for bound in (lower, cond.right):
        if not pure_index(bound, symbols):
            raise _Refused(f"the loop at line {line} around a step has the bound '{c_text(bound)}', which may read "
                           "memory the nest writes", loop)
        moved = names_in(bound) & (changed | {it})
        if moved:
            raise _Refused(f"the trip count of the loop at line {line} depends on '{sorted(moved)[0]}', which the "
                           "nest changes, so the steps before an iteration are no affine function of the iterators",
                           loop)
    return _Loop(loop, it, lower, cond.right, cond.op == "<=")


class _Closer:
    """Rewrites one variable's uses in one region (statements in order), in place."""

    def __init__(self, var: _Var, changed: set[str], symbols: SymbolTable) -> None:
        self.var, self.changed, self.symbols = var, changed, symbols
        self.spellings: list[tuple[str, str]] = []

    # -- the steps

    def _term(self, step: c_ast.Node | None, negative: bool, where: c_ast.Node) -> _Term:
        if step is not None:
            if not pure_index(step, self.symbols) or names_in(step) & self.changed or not all(
                    self._integer(n) for n in names_in(step)):
                raise _Refused(f"'{self.var.name}' is stepped by '{c_text(step)}', which is no integer expression of "
                               "names the nest leaves unchanged", where)
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
            raise _Refused(f"a statement that steps '{self.var.name}' inside an expression names it again", node)
        self._check_unconditional(stmt, node)
        step, negative, before = step_of(node, self.var.name)  # type: ignore[misc]
        return node, self._term(step, negative, node), before

    def _check_unconditional(self, stmt: c_ast.Node, target: c_ast.Node) -> None:
        def path(n: c_ast.Node, guarded: bool) -> bool | None:   # None: not under n
            if n is target:
                if guarded:
                    raise _Refused(f"'{self.var.name}' is stepped behind '?:', '&&' or '||', so not in every "
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
                raise _Refused(f"'{self.var.name}' is stepped under {what}, so not the same number of times in every "
                               "iteration", node)
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
            return offset if _is_name(n, name) else None

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
        low = _const(lp.lower)
        if c.completed:
            it = _cast(w, c_ast.ID(lp.iterator))
            return it if low == 0 else c_ast.BinaryOp("-", it, copy.deepcopy(lp.lower))
        high = _const(lp.upper)
        if low is not None and high is not None:
            return c_ast.Constant("int", str(max(high - low + int(lp.inclusive), 0)))
        span: c_ast.Node = _cast(w, copy.deepcopy(lp.upper))
        if low != 0:
            span = c_ast.BinaryOp("-", span, copy.deepcopy(lp.lower))
        if lp.inclusive:
            span = c_ast.BinaryOp("+", span, c_ast.Constant("int", "1"))
        if id(lp.node) in running:   # inside the loop now, and its trips are the same in every run: it runs
            return span
        runs = c_ast.BinaryOp(">=" if lp.inclusive else ">", copy.deepcopy(lp.upper), copy.deepcopy(lp.lower))
        return c_ast.TernaryOp(runs, span, c_ast.Constant("int", "0"))

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


def _var(name: str, typ: c_ast.Node | None, symbols: SymbolTable) -> _Var | None:
    """The variable ``name`` of declared type ``typ`` when it is an integer scalar or a pointer."""
    if isinstance(typ, c_ast.PtrDecl):
        pointee = typ.type
        if isinstance(pointee, c_ast.TypeDecl) and isinstance(pointee.type, c_ast.IdentifierType) \
                and symbols.resolve(" ".join(pointee.type.names)) == "void":
            return None   # no element size: p[k] is no C
        return _Var(name, None, "")
    if isinstance(typ, c_ast.TypeDecl) and isinstance(typ.type, c_ast.IdentifierType):
        text = symbols.resolve(" ".join(n for n in typ.type.names if n not in ("const", "volatile", "register")))
        t = parse_type(text)
        if t is not None and t.is_integer:
            return _Var(name, t, t.name)
    return None


def _check_variable(var: _Var, region: c_ast.Node, symbols: SymbolTable, typ: c_ast.Node) -> None:
    """Refuse what makes a closed form wrong: other writes, ``&x``, ``volatile``, reads in headers."""
    name = var.name
    if symbols.type_is_volatile(typ):
        raise _Refused(f"'{name}' is volatile", None)
    for n in walk_nodes(region):
        if isinstance(n, c_ast.UnaryOp) and n.op == "&" and _is_name(n.expr, name):
            raise _Refused(f"the address of '{name}' is taken", n)
        target = n.lvalue if isinstance(n, c_ast.Assignment) else \
            n.expr if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") else None
        if _is_name(target, name) and step_of(n, name) is None:
            raise _Refused(f"'{name}' is assigned by '{c_text(n)}', which is no step by a fixed amount", n)
        if isinstance(n, c_ast.For):
            steps = header_steps(n, name)
            increments = [x for x in n.next.exprs if not any(x is y for y in steps)] \
                if isinstance(n.next, c_ast.ExprList) else [n.next]
            for part in (n.init, n.cond, *increments):
                if part is not None and name in names_in(part):
                    raise _Refused(f"'{name}' is read or stepped in the header of the loop at line "
                                   f"{n.coord.line if n.coord else '?'}, other than as one of its increments", n)
        if isinstance(n, _JUMPS):
            raise _Refused(f"the nest has a '{type(n).__name__.lower()}', so its loops may not run every iteration",
                           n)
    t = var.ctype
    if t is not None and t.is_bool:
        raise _Refused(f"'{name}' is a _Bool, whose steps saturate or toggle instead of counting", None)
    if t is not None and (t.size < 4 or (not t.signed and t.size < 8)):
        for n in _index_reads(region, name):
            raise _Refused(f"'{name}' is '{t.name}', whose steps wrap where a subscript computed from it would not",
                           n)


def _index_reads(region: c_ast.Node, name: str) -> list[c_ast.Node]:
    """Reads of ``name`` that may reach a subscript: under a subscript or ``*``, or stored in a scalar."""
    out: list[c_ast.Node] = []
    for n in walk_nodes(region):
        parts: list[c_ast.Node | None] = []
        if isinstance(n, c_ast.ArrayRef):
            parts = [n.subscript]
        elif isinstance(n, c_ast.UnaryOp) and n.op == "*":
            parts = [n.expr]
        elif isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.TypeDecl):
            parts = [n.init]
        elif isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID) and n.lvalue.name != name:
            parts = [n.rvalue]
        out.extend(p for p in parts if p is not None and name in names_in(p))
    return out


def _candidates(region: c_ast.Node) -> list[str]:
    """Names stepped in ``region`` outside loop headers, sorted (a stable order of rewrites)."""
    headers: set[int] = set()
    for n in walk_nodes(region):
        if isinstance(n, c_ast.For):
            headers.update(id(x) for x in walk_nodes(n.init) if n.init is not None)
            if not isinstance(n.next, c_ast.ExprList):   # j++ alone: the iterator's own step
                headers.update(id(x) for x in walk_nodes(n.next) if n.next is not None)
    out: list[str] = []
    for n in walk_nodes(region):
        if id(n) in headers:
            continue
        target = n.lvalue if isinstance(n, c_ast.Assignment) else \
            n.expr if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") else None
        if isinstance(target, c_ast.ID) and step_of(n, target.name) is not None and target.name not in out:
            out.append(target.name)
    return sorted(out)


def _iterators(nest: c_ast.Node) -> set[str]:
    """Names a loop header sets, or steps and tests (``for (j = 0; j < m; j++, p++)``: ``j``)."""
    out: set[str] = set()
    for n in walk_nodes(nest):
        if isinstance(n, c_ast.For):
            stepped = assigned_names(n.next)
            if isinstance(n.next, c_ast.ExprList):
                stepped &= names_in(n.cond)
            out |= assigned_names(n.init) | declared_names(n.init) | stepped
    return out


def _ancestors(tree: c_ast.Node, node: c_ast.Node) -> list[c_ast.Node] | None:
    """The nodes from ``tree`` down to ``node``'s parent, or None when ``node`` is not in ``tree``."""
    if tree is node:
        return []
    for _name, child in tree.children():
        found = _ancestors(child, node)
        if found is not None:
            return [tree, *found]
    return None


def _fresh_in_each_run(name: str, body: c_ast.Node, nest: c_ast.Node) -> bool:
    """Whether every run of ``nest`` starts from a value no earlier run left: the nest is in no
    loop of ``body``, or ``name`` is declared in a block around it inside the innermost such loop
    (``live_after`` does not count the nest's own reads, which a loop around it repeats). A band
    that is a new node over part of a loop's body (``mdpoly.frontend.schedule``) is in a loop."""
    path = _ancestors(body, nest)
    if path is None:
        return False
    loops = [k for k, n in enumerate(path) if isinstance(n, c_ast.For | c_ast.While | c_ast.DoWhile)]
    if not loops:
        return True
    return any(isinstance(n, c_ast.Compound) and any(isinstance(x, c_ast.Decl) and x.name == name
                                                     for x in n.block_items or [])
               for n in path[loops[-1] + 1:])


def _loc(node: c_ast.Node | None, fallback: SourceLoc) -> SourceLoc:
    return loc_of(node, fallback) if node is not None else fallback


def close_inductions(nest: c_ast.Node, body: c_ast.Node, symbols: SymbolTable, fallback: SourceLoc) -> Inductions:
    """Rewrite, in ``nest`` (a copy inside ``body``, the function's body copy; edited in place),
    every induction variable of the form above into closed forms of the iterators; the others
    stay as written, each with its reason in the result."""
    closed: list[str] = []
    refused: list[Induction] = []
    spellings: list[tuple[str, str]] = []
    iterators = _iterators(nest)
    inner_decls = _inner_declarations(nest)
    for name in _candidates(nest):
        if name in iterators:
            continue
        try:
            if name in inner_decls:
                decl, block = inner_decls[name]
                done = _close_declared(name, decl, block, symbols)
            else:
                done = _close_outside(name, nest, body, symbols)
        except _Refused as e:
            refused.append(Induction(name, e.reason, _loc(e.node, fallback)))
            continue
        if done is not None:
            closed.append(name)
            spellings.extend(done)
    return Inductions(tuple(closed), tuple(refused), tuple(spellings))


def _inner_declarations(nest: c_ast.Node) -> dict[str, tuple[c_ast.Decl, c_ast.Compound]]:
    """Names declared once in the nest, at the top level of a block: name -> (declaration, block)."""
    seen: dict[str, int] = {}
    out: dict[str, tuple[c_ast.Decl, c_ast.Compound]] = {}
    for n in walk_nodes(nest):
        if isinstance(n, c_ast.Decl) and n.name:
            seen[n.name] = seen.get(n.name, 0) + 1
        if isinstance(n, c_ast.Compound):
            for item in n.block_items or []:
                if isinstance(item, c_ast.Decl) and item.name:
                    out[item.name] = (item, n)
    return {k: v for k, v in out.items() if seen.get(k) == 1}


def _close_outside(name: str, nest: c_ast.Node, body: c_ast.Node, symbols: SymbolTable
                   ) -> list[tuple[str, str]] | None:
    """Close ``name``, declared before ``nest``: its value on entry is the base."""
    if name in declared_names(nest):
        return None   # another variable of that name in some inner scope
    typ = symbols.decls.get(name)
    var = _var(name, typ, symbols) if typ is not None else None
    if var is None or typ is None:
        return None
    if name not in symbols.locals and name not in symbols.params:
        raise _Refused(f"'{name}' is not local to the function: its value after the nest is visible elsewhere", None)
    if name in symbols.addressed:
        raise _Refused(f"the address of '{name}' is taken", None)
    if any(isinstance(n, c_ast.Decl) and n.name == name and set(n.storage or []) & {"static", "extern"}
           for n in walk_nodes(body)):
        raise _Refused(f"'{name}' is static: its value outlives the call", None)
    _check_variable(var, nest, symbols, typ)
    if live_after(body, nest, {name}):
        raise _Refused(f"'{name}' is read after the nest; its exit value is not modelled", None)
    if not _fresh_in_each_run(name, body, nest):
        raise _Refused(f"the nest runs in a loop, and each run starts from the value of '{name}' the last one left",
                       None)
    closer = _Closer(var, assigned_names(nest) | declared_names(nest), symbols)
    closer.delta(nest)   # all checks before any edit
    items, _end = closer.block([nest], (), frozenset())
    if len(items) != 1 or items[0] is not nest:
        raise _Refused(f"'{name}' is stepped by the nest's own statement", nest)
    return closer.spellings


def _close_declared(name: str, decl: c_ast.Decl, block: c_ast.Compound, symbols: SymbolTable) -> list[tuple[str, str]] | None:
    """Close ``name``, declared in ``block`` of the nest: from its declaration to the block's end."""
    var = _var(name, decl.type, symbols)
    if var is None:
        return None
    items = block.block_items or []
    k = next(i for i, x in enumerate(items) if x is decl)
    region = c_ast.Compound(items[k + 1:])
    if decl.init is None:
        raise _Refused(f"'{name}' is declared without a value", decl)
    if set(decl.storage or []) & {"static", "extern"}:
        raise _Refused(f"'{name}' is static: its value outlives each run of its block", decl)
    if name in names_in(decl.init):
        return None
    _check_variable(var, region, symbols, decl.type)
    closer = _Closer(var, assigned_names(region) | declared_names(region), symbols)
    closer.delta(region)
    rest, _end = closer.block(list(items[k + 1:]), (), frozenset())
    block.block_items = [*items[:k + 1], *rest]
    return closer.spellings
