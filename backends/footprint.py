"""A host statement's C text -> the elements of each resident array it touches (``Footprint``).

A statement (or a loop of host statements) inside a data region's loop runs on the host; instead
of copying the whole resident arrays back before it and in again after it, the region copies
only a bounding range of the elements it touches (``mdpoly.backends.residency``). For each
access ``A[e0][e1]...`` whose subscripts are affine in the statement's own ``for`` iterators and
in names the statement does not change (the region's iterator, sizes, scalars), the box of its
subscripts is bounded from those loops' headers: each iterator's lowest and highest value in
terms of the enclosing ones, substituted innermost first (a superset: conditions and empty
iterations are ignored). The bounds are C text evaluated at run time, before the statement and
again after it (the names they read are the same then). An array with any other use in the
statement (a subscript that is not affine or reads what the statement writes, an address taken,
a ``for`` whose range is not known) has no footprint: it is copied whole, as before.
"""

from __future__ import annotations

from pycparser import c_ast, c_parser

from mdpoly.ir.residency import AccessBox, Footprint

#: an affine expression: coefficients by name, and the constant under the key ``""``
_Affine = dict[str, int]


class _NotAffine(Exception):
    pass


def _affine(node: c_ast.Node) -> _Affine:
    """``node`` as an affine expression over names. :raises _NotAffine: otherwise."""
    if isinstance(node, c_ast.Constant) and node.type == "int":
        text = node.value.rstrip("uUlL")
        try:
            return {"": int(text, 0) if not (len(text) > 1 and text.startswith("0") and text.isdigit()) else int(text, 8)}
        except ValueError:
            raise _NotAffine from None
    if isinstance(node, c_ast.ID):
        return {node.name: 1}
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        a = _affine(node.expr)
        return {n: -c for n, c in a.items()} if node.op == "-" else a
    if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-"):
        a, b = _affine(node.left), _affine(node.right)
        k = 1 if node.op == "+" else -1
        out = dict(a)
        for n, c in b.items():
            out[n] = out.get(n, 0) + k * c
        return out
    if isinstance(node, c_ast.BinaryOp) and node.op == "*":
        a, b = _affine(node.left), _affine(node.right)
        if set(a) <= {""}:
            a, b = b, a
        if not set(b) <= {""}:
            raise _NotAffine
        k = b.get("", 0)
        return {n: c * k for n, c in a.items()}
    raise _NotAffine


def _plus(a: _Affine, b: _Affine, k: int = 1) -> _Affine:
    out = dict(a)
    for n, c in b.items():
        out[n] = out.get(n, 0) + k * c
    return out


class _Range:
    """A ``for`` iterator's lowest and highest value (affine over enclosing names), or unknown."""

    def __init__(self, name: str, low: _Affine | None, high: _Affine | None) -> None:
        self.name, self.low, self.high = name, low, high


def _loop_range(node: c_ast.For) -> _Range | None:
    """The iterator and range of ``for (v = lo; v < hi; v++)`` (and ``<=``, ``>``, ``>=``, ``--``,
    ``+= c``, ``-= c``); ``None`` when the header has another form."""
    init = node.init
    name: str | None = None
    start: c_ast.Node | None = None
    if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        name, start = init.lvalue.name, init.rvalue
    elif isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
        name, start = init.decls[0].name, init.decls[0].init
    elif isinstance(init, c_ast.Decl) and init.init is not None:
        name, start = init.name, init.init
    if name is None or start is None:
        return None
    nxt, up = node.next, None
    if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++", "--", "p--") and _is(nxt.expr, name):
        up = "+" in nxt.op
    elif (isinstance(nxt, c_ast.Assignment) and nxt.op in ("+=", "-=") and _is(nxt.lvalue, name)
          and isinstance(nxt.rvalue, c_ast.Constant) and nxt.rvalue.type == "int"):
        try:
            step = _affine(nxt.rvalue).get("", 0)
        except _NotAffine:
            return None
        if step <= 0:
            return None
        up = nxt.op == "+="
    cond = node.cond
    if up is None or not isinstance(cond, c_ast.BinaryOp) or cond.op not in ("<", "<=", ">", ">="):
        return None
    op, other = cond.op, cond.right
    if not _is(cond.left, name):
        if not _is(cond.right, name):
            return None
        op, other = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op], cond.left
    try:
        first, bound = _affine(start), _affine(other)
    except _NotAffine:
        return None
    if up and op in ("<", "<="):
        return _Range(name, first, _plus(bound, {"": -1}) if op == "<" else bound)
    if not up and op in (">", ">="):
        return _Range(name, _plus(bound, {"": 1}) if op == ">" else bound, first)
    return None


def _is(node: c_ast.Node, name: str) -> bool:
    return isinstance(node, c_ast.ID) and node.name == name


class _Walk(c_ast.NodeVisitor):
    """Every access of the arrays ``names`` with the ``for`` ranges around it; the names the
    statement assigns or declares; the arrays used in a way that has no footprint."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.loops: list[_Range] = []
        self.accesses: list[tuple[str, list[c_ast.Node], bool, tuple[_Range, ...]]] = []
        self.assigned: set[str] = set()
        self.whole: set[str] = set()

    def visit_For(self, node: c_ast.For) -> None:
        rng = _loop_range(node)
        for part in (node.init, node.cond, node.next):
            if part is not None:
                self.visit(part)
        self.loops.append(rng if rng is not None else _Range("", None, None))
        if node.stmt is not None:
            self.visit(node.stmt)
        self.loops.pop()

    def visit_Decl(self, node: c_ast.Decl) -> None:
        if node.name:
            self.assigned.add(node.name)
        self.generic_visit(node)

    def visit_Assignment(self, node: c_ast.Assignment) -> None:
        self._target(node.lvalue)
        self.visit(node.rvalue)

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op in ("++", "--", "p++", "p--"):
            self._target(node.expr)
            return
        if node.op == "&":   # an address taken: whatever is written through it is unknown
            base = node.expr
            while isinstance(base, c_ast.ArrayRef):
                base = base.name
            if isinstance(base, c_ast.ID) and base.name in self.names:
                self.whole.add(base.name)
        self.generic_visit(node)

    def visit_ArrayRef(self, node: c_ast.ArrayRef) -> None:
        self._access(node, False)

    def visit_ID(self, node: c_ast.ID) -> None:
        if node.name in self.names:   # a mention that is no subscripted access
            self.whole.add(node.name)

    def _target(self, node: c_ast.Node) -> None:
        if isinstance(node, c_ast.ID):
            self.assigned.add(node.name)
            if node.name in self.names:
                self.whole.add(node.name)
        elif isinstance(node, c_ast.ArrayRef):
            self._access(node, True)
        else:
            self.visit(node)

    def _access(self, node: c_ast.ArrayRef, written: bool) -> None:
        subs: list[c_ast.Node] = []
        base: c_ast.Node = node
        while isinstance(base, c_ast.ArrayRef):
            subs.append(base.subscript)
            base = base.name
        for s in subs:
            self.visit(s)
        if isinstance(base, c_ast.ID) and base.name in self.names:
            self.accesses.append((base.name, subs[::-1], written, tuple(self.loops)))
        else:
            self.visit(base)


def _bound(f: _Affine, loops: tuple[_Range, ...], lowest: bool) -> _Affine | None:
    """The lowest (or highest) value of ``f`` when each loop's iterator runs over its range,
    innermost first; ``None`` when an iterator it needs has no known range."""
    f = dict(f)
    for rng in reversed(loops):
        if not rng.name:
            continue
        c = f.pop(rng.name, 0)
        if c == 0:
            continue
        side = rng.low if (c > 0) == lowest else rng.high
        if side is None:
            return None
        f = _plus(f, {n: c * k for n, k in side.items()})
    return f


def _c(f: _Affine) -> str:
    """``f`` as C text in ``long long`` arithmetic."""
    terms = [f"(long long)({n})" if c == 1 else f"{c}LL * (long long)({n})"
             for n, c in sorted(f.items()) if n and c]
    if f.get("", 0) or not terms:
        terms.append(f"{f.get('', 0)}LL")
    return "(" + " + ".join(terms) + ")"


def footprints(text: str, arrays: tuple[str, ...]) -> dict[str, Footprint]:
    """The footprint of each of ``arrays`` that the statement ``text`` touches only through affine
    subscripts it can bound; an array missing from the result is copied whole."""
    try:
        ast = c_parser.CParser().parse("void mdp_f(void) {\n" + text + "\n}")
    except Exception:   # noqa: BLE001 - a typedef name or a construct pycparser lacks: copy whole
        return {}
    walk = _Walk(set(arrays))
    walk.visit(ast)
    loop_names = {rng.name for _, _, _, loops in walk.accesses for rng in loops if rng.name}
    out: dict[str, Footprint] = {}
    for name in arrays:
        boxes: list[AccessBox] = []
        ranks: set[int] = set()
        ok = name not in walk.whole
        for array, subs, written, loops in walk.accesses if ok else ():
            if array != name:
                continue
            local = {rng.name for rng in loops if rng.name}
            low: list[str] = []
            high: list[str] = []
            for s in subs:
                try:
                    f = _affine(s)
                except _NotAffine:
                    ok = False
                    break
                lo, hi = _bound(f, loops, True), _bound(f, loops, False)
                if lo is None or hi is None:
                    ok = False
                    break
                # what is left must not change while the statement runs
                if any(n and (n in walk.assigned or n in loop_names or n in local) for n in (*lo, *hi)):
                    ok = False
                    break
                low.append(_c(lo))
                high.append(_c(hi))
            if not ok:
                break
            ranks.add(len(subs))
            box = AccessBox(tuple(low), tuple(high), written)
            if box not in boxes:
                boxes.append(box)
        if ok and boxes and len(ranks) == 1:
            out[name] = Footprint(name, tuple(boxes))
    return out
