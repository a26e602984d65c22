"""Short loops that pick by their iterator: nest copy -> the nest with each such loop unrolled.

llama2.c rotates q, and k where the row has one, with a loop of one or two trips whose body
picks the vector by the iterator::

    int rotn = i < kv_dim ? 2 : 1;
    for (int v = 0; v < rotn; v++) {
        float *vec = v == 0 ? s->q : s->k;
        ...
    }

The bound is a select (no affine bound) and ``vec`` a pointer chosen per trip (no base and
offset), so the nest was refused twice over. Its trip count is small and bounded by a constant,
so the loop is written out: one copy of the body per possible trip ``k``, with ``v`` as ``k``,
conditions that are then constant folded (``0 == 0 ? s->q : s->k`` is ``s->q``, an ``if`` on
constants keeps its branch), and each copy a later trip may not reach guarded by the loop's
test (``if (1 < rotn)``). ``local_pointers`` then reads ``vec[i]`` as ``s->q[i]``.

A loop is unrolled when its header is ``for (int v = C; v < R; v++)`` (``v <= R``, ``R > v``;
``++v``, ``v += 1``, ``v = v + 1``; or ``v = C`` where ``v``, declared once, is not read after
the loop), ``v`` of a signed integer type of ``int``'s size or more (the literal that replaces it
has its type), ``C`` a non-negative integer constant and ``R`` a bound whose values are
non-negative integer constants: a constant or a ``?:`` of such without side effects whose tests
read only locals the function never addresses (nothing a trip could change), or a local of an
integer type declared once before the loop with such an initialiser (any side-effect-free
tests: it is evaluated once) and never assigned nor addressed. At most ``MAX_COPIES`` trips. And
it picks by its iterator (a ``?:`` or ``if`` in the body that tests ``v`` and constants only)
or its bound takes several values; a loop of a constant trip count that picks nothing is the
extractor's. The body must not assign ``v``, take its address, declare another ``v``, assign a
name ``R`` reads, nor ``break``, ``continue``, ``return`` or ``goto``; names it declares must be
declared nowhere else (the function, its parameters, the file's globals), and are given a prefix
of their own in every copy but the first (``mdp_u1_v0``), as sibling blocks with the same names
would shadow each other in the model. Constant conditions are folded only where every value is
an ``int`` (no ``u`` literal: no conversion to unsigned to mirror).

Exact: C runs the body for ``v = C, C + 1, ...`` while the test holds; the bound does not change
in the loop, so the trips that run are the first ones whose test holds, which is the copies
whose guards hold (each guard tests the same bound), in order, with the same values.
"""

from __future__ import annotations

import copy
from collections import Counter

from pycparser import c_ast

from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.normalize.ast_util import assigned_names, declared_names, names_in, replace_top_down, walk_nodes
from mdpoly.frontend.symbols import SymbolTable, _enum_value
from mdpoly.ir.c_types import CType, parse_type

#: the most trips a loop may have to be written out
MAX_COPIES = 4
_PREFIX = "mdp_u"
_FLIPPED = {"<": ">", "<=": ">="}
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
_COMPARE = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__, "==": int.__eq__,
            "!=": int.__ne__}


def _pure(node: c_ast.Node) -> bool:
    """Whether evaluating ``node`` changes nothing and calls nothing."""
    return not any(isinstance(n, c_ast.Assignment | c_ast.FuncCall)
                   or (isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"))
                   for n in walk_nodes(node))


def _constant(node: c_ast.Node) -> int | None:
    """The value of an ``int`` constant expression of literals without ``u`` suffixes, ``+ - *``,
    comparisons, ``&& || !`` and ``?:`` (every value an ``int``: no unsigned conversion or
    wrap to mirror), else None."""
    v: int | None = None
    if isinstance(node, c_ast.Constant):
        if node.type != "int" or "u" in node.value.lower():
            return None
        v = _enum_value(node, {})
    elif isinstance(node, c_ast.UnaryOp) and node.op in ("!", "-", "+"):
        a = _constant(node.expr)
        v = None if a is None else int(not a) if node.op == "!" else -a if node.op == "-" else a
    elif isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"):
        a = _constant(node.left)
        if a is None:
            return None
        if (node.op == "&&" and not a) or (node.op == "||" and a):
            return int(bool(a))
        b = _constant(node.right)
        v = None if b is None else int(bool(b))
    elif isinstance(node, c_ast.BinaryOp) and node.op in (*_COMPARE, "+", "-", "*"):
        a, b = _constant(node.left), _constant(node.right)
        if a is None or b is None:
            return None
        v = int(_COMPARE[node.op](a, b)) if node.op in _COMPARE else a + b if node.op == "+" \
            else a - b if node.op == "-" else a * b
    elif isinstance(node, c_ast.TernaryOp):
        c = _constant(node.cond)
        v = None if c is None else _constant(node.iftrue if c else node.iffalse)
    return v if v is not None and _INT_MIN <= v <= _INT_MAX else None


def _values(node: c_ast.Node) -> set[int] | None:
    """The values ``node`` may take: a constant, or a ``?:`` without side effects of such."""
    if isinstance(node, c_ast.TernaryOp):
        if not _pure(node.cond):
            return None
        a, b = _values(node.iftrue), _values(node.iffalse)
        return None if a is None or b is None else a | b
    v = _enum_value(node, {})
    return None if v is None else {v}


class _Unroller:
    def __init__(self, func: c_ast.FuncDef, symbols: SymbolTable) -> None:
        self.func = func
        self.symbols = symbols
        self.outside = set(symbols.decls) | symbols.params
        self.parents: dict[int, c_ast.Node] = {}
        for n in walk_nodes(func.body):
            for _name, child in n.children():
                self.parents[id(child)] = n
        self.decls: dict[str, list[c_ast.Decl]] = {}
        for n in walk_nodes(func.body):
            if isinstance(n, c_ast.Decl) and n.name:
                self.decls.setdefault(n.name, []).append(n)
        self.changed = assigned_names(func.body)
        self.addressed = {n.expr.name for n in walk_nodes(func.body)
                          if isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID)}
        self.locals = set(self.decls) | symbols.params
        self.taken = set(self.decls) | names_in(func.body)
        self.count = 0

    def _type(self, decl: c_ast.Decl) -> CType | None:
        t = decl.type
        if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType) \
                or "volatile" in (decl.quals or []) + (t.quals or []):
            return None
        return parse_type(self.symbols.resolve(" ".join(t.type.names)))

    def _bound_values(self, bound: c_ast.Node, loop: c_ast.For) -> set[int] | None:
        """The values of ``bound``: those of a select of constants whose tests read only locals
        the function never addresses (no memory a trip or a call could change), or of a local
        of an integer type declared once before ``loop`` (in a block around it) with such an
        initialiser (any tests) and never changed."""
        if not isinstance(bound, c_ast.ID):
            if any(isinstance(n, c_ast.ArrayRef | c_ast.StructRef) or (isinstance(n, c_ast.UnaryOp) and n.op == "*")
                   for n in walk_nodes(bound)):
                return None
            names = names_in(bound)
            return _values(bound) if names <= self.locals and not names & self.addressed else None
        found = self.decls.get(bound.name, [])
        if len(found) != 1 or bound.name in self.changed or bound.name in self.addressed:
            return None
        d = found[0]
        ctype = self._type(d)
        if d.init is None or ctype is None or not ctype.is_integer or ctype.is_bool:
            return None
        if not self._before_in_scope(d, loop):
            return None
        values = _values(d.init)
        if values is None or any(not ctype.min_value <= v <= ctype.max_value for v in values):
            return None
        return values

    def _before_in_scope(self, decl: c_ast.Decl, loop: c_ast.Node) -> bool:
        """Whether ``decl`` is an item of a block around ``loop``, before the item holding it."""
        node: c_ast.Node = loop
        while id(node) in self.parents:
            parent = self.parents[id(node)]
            if isinstance(parent, c_ast.Compound):
                items = parent.block_items or []
                at = next((k for k, x in enumerate(items) if x is node), 0)
                if any(x is decl for x in items[:at]):
                    return True
            node = parent
        return False

    def _header(self, loop: c_ast.For) -> tuple[str, str, int, str, c_ast.Node] | None:
        """``(v, suffix, C, op, R)`` of ``for (int v = C; v op R; v++)``, ``op`` ``<`` or ``<=``;
        ``suffix``: the one of ``v``'s type's literals (a signed type of ``int``'s size or more,
        so that the constant that replaces ``v`` has its type)."""
        init, it, first, decl = loop.init, None, None, None
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
            decl = init.decls[0]
            it, first = decl.name, decl.init
        elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
            it, first = init.lvalue.name, init.rvalue
            found = self.decls.get(it, [])
            if len(found) != 1 or it in self.addressed or live_after(self.func.body, loop, {it}):
                return None
            decl = found[0]
        if it is None or first is None or decl is None:
            return None
        ctype = self._type(decl)
        if ctype is None or not ctype.is_integer or not ctype.signed or ctype.size < 4:
            return None
        suffix = "" if ctype.size == 4 else "LL" if "long long" in ctype.name else "L"
        start = _enum_value(first, {})
        if start is None or start < 0 or not _steps_by_one(loop.next, it):
            return None
        c = loop.cond
        if not isinstance(c, c_ast.BinaryOp):
            return None
        if isinstance(c.left, c_ast.ID) and c.left.name == it and c.op in _FLIPPED:
            return it, suffix, start, c.op, c.right
        if isinstance(c.right, c_ast.ID) and c.right.name == it and c.op in _FLIPPED.values():
            return it, suffix, start, {v: k for k, v in _FLIPPED.items()}[c.op], c.left
        return None

    def unrolled(self, loop: c_ast.For) -> c_ast.Compound | None:
        """``loop`` written out (see the module's text), or None when it is no such loop."""
        header = self._header(loop)
        if header is None:
            return None
        it, suffix, start, op, bound = header
        values = self._bound_values(bound, loop)
        if not values or min(values) < 0 or not _pure(bound):
            return None
        last = max(values) + (1 if op == "<=" else 0)   # trips run for start <= v < last
        surely = min(values) + (1 if op == "<=" else 0)
        if last - start < 1 or last - start > MAX_COPIES:
            return None
        body = loop.stmt
        if len(values) == 1 and not _picks_by(body, it):
            return None
        if it in assigned_names(body) or it in declared_names(body) or names_in(bound) & assigned_names(body):
            return None
        if any(isinstance(n, c_ast.Break | c_ast.Continue | c_ast.Return | c_ast.Goto | c_ast.Label)
               for n in walk_nodes(body)):
            return None
        inner = Counter(n.name for n in walk_nodes(body) if isinstance(n, c_ast.Decl) and n.name)
        if any(len(self.decls.get(name, [])) != count or name in self.outside for name, count in inner.items()):
            return None   # a name declared elsewhere too: a read of the other one would be renamed
        copies: list[c_ast.Node] = []
        for k in range(start, last):
            piece = self._copy(body, it, f"{k}{suffix}", set(inner) if k > start else set())
            if k >= surely:
                piece = c_ast.If(_guard(k, op, bound, loop), piece, None, coord=loop.coord)
            copies.append(piece)
        self.count += 1
        return c_ast.Compound(copies, coord=loop.coord)

    def _copy(self, body: c_ast.Node, it: str, k: str, renamed: set[str]) -> c_ast.Node:
        """``body`` with ``it`` as the literal ``k``, constant conditions folded, ``renamed`` names prefixed."""
        prefix = self._prefix() if renamed else ""
        holder = c_ast.Compound([copy.deepcopy(body)])

        def substitute(n: c_ast.Node) -> c_ast.Node | None:
            if isinstance(n, c_ast.ID) and n.name == it:
                return c_ast.Constant("int", k, coord=n.coord)
            if isinstance(n, c_ast.ID) and n.name in renamed:
                return c_ast.ID(prefix + n.name, coord=n.coord)
            if isinstance(n, c_ast.Decl) and n.name in renamed:
                n.name = prefix + n.name
                t = n.type
                while not isinstance(t, c_ast.TypeDecl):
                    t = t.type
                t.declname = n.name
            if isinstance(n, c_ast.StructRef):   # the member of ``s.v`` is no name
                new = substitute(n.name)
                if new is not None:
                    n.name = new
                else:
                    replace_top_down(n.name, substitute)
                return n
            return None

        replace_top_down(holder, substitute)
        replace_top_down(holder, _folded)
        piece = holder.block_items[0]
        return piece if isinstance(piece, c_ast.Compound) else c_ast.Compound([piece], coord=piece.coord)

    def _prefix(self) -> str:
        n = 1
        while any(name.startswith(f"{_PREFIX}{n}_") for name in self.taken):
            n += 1
        p = f"{_PREFIX}{n}_"
        self.taken.add(p)
        return p


def _steps_by_one(step: c_ast.Node | None, it: str) -> bool:
    """``v++``, ``++v``, ``v += 1`` or ``v = v + 1``."""
    def is_it(n: c_ast.Node) -> bool:
        return isinstance(n, c_ast.ID) and n.name == it

    if isinstance(step, c_ast.UnaryOp):
        return step.op in ("++", "p++") and is_it(step.expr)
    if isinstance(step, c_ast.Assignment) and is_it(step.lvalue):
        if step.op == "+=":
            return _enum_value(step.rvalue, {}) == 1
        r = step.rvalue
        return step.op == "=" and isinstance(r, c_ast.BinaryOp) and r.op == "+" and (
            (is_it(r.left) and _enum_value(r.right, {}) == 1) or (is_it(r.right) and _enum_value(r.left, {}) == 1))
    return False


def _picks_by(body: c_ast.Node, it: str) -> bool:
    """Whether ``body`` has a ``?:`` or ``if`` whose test reads ``it`` and constants only."""
    for n in walk_nodes(body):
        if isinstance(n, c_ast.TernaryOp | c_ast.If):
            names = names_in(n.cond)
            if names == {it} and _pure(n.cond):
                return True
    return False


def _folded(n: c_ast.Node) -> c_ast.Node | None:
    """``n`` with constant conditions decided (``replace_top_down``'s rewrite), None when it has none."""
    if isinstance(n, c_ast.TernaryOp | c_ast.If):
        c = _constant(n.cond)
        if c is not None:
            chosen = n.iftrue if c else n.iffalse
            if chosen is None:
                return c_ast.Compound([], coord=n.coord)
            holder = c_ast.Compound([chosen])
            replace_top_down(holder, _folded)
            return holder.block_items[0]
    return None


def _guard(k: int, op: str, bound: c_ast.Node, loop: c_ast.For) -> c_ast.Node:
    """The test of trip ``k``: ``k op bound``, decided per branch of a literal select
    (``1 < (i < kv_dim ? 2 : 1)`` is ``i < kv_dim``)."""
    decided = _decided(k, op, bound)
    if isinstance(decided, c_ast.Node):
        return decided
    return c_ast.BinaryOp(op, c_ast.Constant("int", str(k), coord=loop.coord), copy.deepcopy(bound),
                          coord=loop.coord)


def _decided(k: int, op: str, bound: c_ast.Node) -> c_ast.Node | bool | None:
    """``k op bound`` as a constant or a condition over the selects' tests, None when neither."""
    if isinstance(bound, c_ast.TernaryOp):
        a, b = _decided(k, op, bound.iftrue), _decided(k, op, bound.iffalse)
        cond = copy.deepcopy(bound.cond)
        if a is True and b is False:
            return cond
        if a is False and b is True:
            return c_ast.UnaryOp("!", cond, coord=cond.coord)
        if isinstance(a, bool) and a == b:
            return a
        return None
    v = _enum_value(bound, {})
    return None if v is None else _COMPARE[op](k, v)


def unroll_short_loops(nest: c_ast.Node, func: c_ast.FuncDef, symbols: SymbolTable) -> int:
    """Write out, in ``nest`` (a copy inside ``func``'s copy, edited in place; not its own
    header), each short loop that picks by its iterator (see the module's text); ``symbols``:
    what the function sees (its parameters, the file's globals and types). Returns how many."""
    u = _Unroller(func, symbols)

    def rewrite(n: c_ast.Node) -> c_ast.Node | None:
        return u.unrolled(n) if isinstance(n, c_ast.For) else None

    replace_top_down(nest, rewrite)
    return u.count
