"""Index temporaries: nest copy -> the nest with integer temporaries substituted where subscripts use them.

``int c = x + y*nx + z*nx*ny; out[c] = in[c] + in[c - 1];`` indexes with a name the polyhedral
model cannot see through; written out (``out[(int) (x + y*nx + ...)]``) the subscripts are affine
again. Substituted: an integer scalar declared in the nest with an initialiser (``T c = e;``), or a
scalar declared before the nest that the nest assigns once (``c = e;``), dead after the nest,
and read only after that assignment in its block; ``e`` built from names, integer constants,
arithmetic, comparisons, integer casts and ``?:`` (no memory read, no call), and used -- directly
or through other temporaries -- in a subscript or a loop header. Each use becomes ``(T) (e)``, so
the value is converted exactly as the assignment converts it, and the definition goes.

The substitution is exact only while ``e`` means the same at every use: no name of ``e`` may be
assigned or re-declared after the definition in its block, and the temporary itself must not
be assigned again. Where that fails, or the program reads the temporary after the nest, the
nest is refused at the definition, with the reason.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc, UnsupportedInput
from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.normalize.ast_util import assigned_names, declared_names, ids_in, loc_of, names_in
from mdpoly.frontend.symbols import SymbolTable, c_text
from mdpoly.ir.c_types import INT, CType, parse_type, promote, usual_conversions

INT_MAX = 2**31 - 1

_PURE_BINARY = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "&",
                          "|", "^"})


def _integer_type(text: str) -> CType | None:
    t = parse_type(text)
    return t if t is not None and t.is_integer and not t.is_bool else None


def pure_index(e: c_ast.Node, symbols: SymbolTable) -> bool:
    """Whether ``e`` reads no memory and calls nothing: names, integer constants, arithmetic,
    comparisons, integer casts, ``?:``."""
    if isinstance(e, c_ast.ID):
        return True
    if isinstance(e, c_ast.Constant):
        return "int" in e.type or e.type in ("long", "unsigned")
    if isinstance(e, c_ast.BinaryOp):
        return e.op in _PURE_BINARY and pure_index(e.left, symbols) and pure_index(e.right, symbols)
    if isinstance(e, c_ast.UnaryOp):
        return e.op in ("-", "+", "!", "~") and pure_index(e.expr, symbols)
    if isinstance(e, c_ast.Cast):
        return _integer_type(symbols.resolve(c_text(e.to_type))) is not None and pure_index(e.expr, symbols)
    if isinstance(e, c_ast.TernaryOp):
        return all(pure_index(x, symbols) for x in (e.cond, e.iftrue, e.iffalse))
    return False


def _index_uses(node: c_ast.Node) -> set[str]:
    """Names read in subscripts and loop headers under ``node``."""
    out: set[str] = set()

    def walk(n: c_ast.Node | None) -> None:
        if n is None:
            return
        if isinstance(n, c_ast.ArrayRef):
            out.update(names_in(n.subscript))
        elif isinstance(n, c_ast.For):
            for part in (n.init, n.cond, n.next):
                out.update(names_in(part))
        for _name, child in n.children():
            walk(child)

    walk(node)
    return out


@dataclass(frozen=True, slots=True)
class _Definition:
    """One temporary's definition ``T name = value;`` (or ``name = value;``), an item of ``block``."""

    block: c_ast.Compound
    item: c_ast.Node
    name: str
    value: c_ast.Node
    c_type: str


class _Substituter:
    def __init__(self, nest: c_ast.Node, body: c_ast.Node, symbols: SymbolTable, fallback: SourceLoc,
                 assignments: bool) -> None:
        self.nest, self.body, self.symbols, self.fallback = nest, body, symbols, fallback
        self.assignments = assignments
        self.assigned = assigned_names(nest)
        self.counts = _assignment_counts(nest)
        self.local_types = _declared_types(nest)

    def _type(self, name: str, t: c_ast.Node) -> str | None:
        """The resolved integer type of a scalar declaration, else None."""
        if not isinstance(t, c_ast.TypeDecl) or self.symbols.type_is_volatile(t):
            return None
        var = self.symbols._variable(name, t)
        if var is None or var.kind != "scalar" or _integer_type(var.scalar_type) is None:
            return None
        return var.scalar_type

    def _type_of(self, e: c_ast.Node) -> CType | None:
        """The C type of a ``pure_index`` expression (None when unknown)."""
        if isinstance(e, c_ast.ID):
            t = self.local_types.get(e.name)
            var = self.symbols._variable(e.name, t) if t is not None else self.symbols.variable(e.name)
            return parse_type(var.scalar_type) if var is not None and var.kind == "scalar" else None
        if isinstance(e, c_ast.Constant):
            return INT if e.value.isdigit() and int(e.value) <= INT_MAX and (e.value == "0" or e.value[0] != "0") \
                else None
        if isinstance(e, c_ast.Cast):
            return parse_type(self.symbols.resolve(c_text(e.to_type)))
        if isinstance(e, c_ast.UnaryOp):
            inner = self._type_of(e.expr)
            return INT if e.op == "!" else promote(inner) if inner is not None else None
        if isinstance(e, c_ast.BinaryOp) and e.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
            return INT
        pair = (e.left, e.right) if isinstance(e, c_ast.BinaryOp) else (e.iftrue, e.iffalse) \
            if isinstance(e, c_ast.TernaryOp) else None
        if pair is None:
            return None
        a, b = self._type_of(pair[0]), self._type_of(pair[1])
        if a is None or b is None:
            return None
        if isinstance(e, c_ast.BinaryOp) and e.op in ("<<", ">>"):
            return promote(a)
        return usual_conversions(promote(a), promote(b))

    def definitions(self) -> list[_Definition]:
        """Every candidate definition in the nest, in textual order."""
        out: list[_Definition] = []

        def walk(n: c_ast.Node | None) -> None:
            if n is None:
                return
            if isinstance(n, c_ast.Compound):
                for item in n.block_items or []:
                    d = self._definition(n, item)
                    if d is not None:
                        out.append(d)
            for _name, child in n.children():
                walk(child)

        walk(self.nest)
        return out

    def _definition(self, block: c_ast.Compound, item: c_ast.Node) -> _Definition | None:
        if isinstance(item, c_ast.Decl) and item.name and item.init is not None and item.name not in self.assigned:
            t = self._type(item.name, item.type)
            if t is not None and pure_index(item.init, self.symbols):
                return _Definition(block, item, item.name, item.init, t)
            return None
        if (self.assignments and isinstance(item, c_ast.Assignment) and item.op == "="
                and isinstance(item.lvalue, c_ast.ID)
                and self.counts.get(item.lvalue.name) == 1 and pure_index(item.rvalue, self.symbols)):
            name = item.lvalue.name
            decl = self.symbols.decls.get(name)
            if decl is None or name in self.symbols.addressed or name in declared_names(self.nest):
                return None
            t = self._type(name, decl)
            if t is not None:
                return _Definition(block, item, name, item.rvalue, t)
        return None

    def _only_in_nest(self, name: str) -> bool:
        """Whether the liveness answer can be trusted: the nest sits in the function's body (a band
        built from part of a loop does not, and ``live_after`` then cannot see the loops around
        it), or ``name`` is read nowhere outside the nest."""
        if _contains(self.body, self.nest):
            return True
        return len(_ids(self.body, name)) == len(_ids(self.nest, name))

    def run(self) -> None:
        defs = self.definitions()
        wanted = _index_uses(self.nest)
        grew = True
        while grew:  # a temporary in the value of one that subscripts use is one they use too
            grew = False
            for d in defs:
                if d.name in wanted and not names_in(d.value) <= wanted:
                    wanted |= names_in(d.value)
                    grew = True
        for d in defs:
            if d.name in wanted:
                self._substitute(d)

    def _substitute(self, d: _Definition) -> None:
        items = d.block.block_items or []
        if d.item not in items:
            return
        k = next(i for i, x in enumerate(items) if x is d.item)
        rest = items[k + 1:]
        where = loc_of(d.item, self.fallback)
        if any(d.name in declared_names(x) for x in rest):
            return  # re-declared in an inner scope: its uses there are another variable's
        if isinstance(d.item, c_ast.Assignment):
            outside = [i for i in _ids(self.nest, d.name) if not any(_contains(x, i) for x in rest)
                       and i is not d.item.lvalue]
            if outside:
                raise UnsupportedInput(f"index temporary '{d.name}' is also read where this assignment has not set it",
                                       loc_of(outside[0], where), "non-affine-subscript")
            if live_after(self.body, self.nest, {d.name}) or not self._only_in_nest(d.name):
                raise UnsupportedInput(f"index temporary '{d.name}' is read after the nest, so its assignment in the "
                                       "nest cannot be substituted into the subscripts", where, "non-affine-subscript")
        changed = set().union(*(assigned_names(x) | declared_names(x) for x in rest)) if rest else set()
        stale = names_in(d.value) & changed
        if stale:
            raise UnsupportedInput(f"index temporary '{d.name}' = '{c_text(d.value)}' cannot be substituted into the "
                                   f"subscripts: '{sorted(stale)[0]}' changes after it", where, "non-affine-subscript")
        cast_type = c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(d.c_type.split())))
        same = self._type_of(d.value) == _integer_type(d.c_type)  # then the value needs no conversion
        for x in rest:
            _replace_name(x, d.name, lambda: copy.deepcopy(d.value) if same
                          else c_ast.Cast(copy.deepcopy(cast_type), copy.deepcopy(d.value)))
        d.block.block_items = [x for x in items if x is not d.item]


def _declared_types(nest: c_ast.Node) -> dict[str, c_ast.Node]:
    """Name -> declared type of the names declared in the nest (iterators among them)."""
    out: dict[str, c_ast.Node] = {}

    def walk(n: c_ast.Node | None) -> None:
        if n is None:
            return
        if isinstance(n, c_ast.Decl) and n.name:
            out.setdefault(n.name, n.type)
        for _name, child in n.children():
            walk(child)

    walk(nest)
    return out


def _assignment_counts(nest: c_ast.Node) -> dict[str, int]:
    out: dict[str, int] = {}

    def walk(n: c_ast.Node | None) -> None:
        if n is None:
            return
        target = n.lvalue if isinstance(n, c_ast.Assignment) else \
            n.expr if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&") else None
        if isinstance(target, c_ast.ID):
            out[target.name] = out.get(target.name, 0) + 1
        for _name, child in n.children():
            walk(child)

    walk(nest)
    return out


def _ids(node: c_ast.Node, name: str) -> list[c_ast.ID]:
    """The ``ID`` nodes naming ``name`` under ``node``."""
    return [i for i in ids_in(node) if i.name == name]


def _contains(tree: c_ast.Node, node: c_ast.Node) -> bool:
    if tree is node:
        return True
    return any(_contains(child, node) for _name, child in tree.children())


def _replace_name(node: c_ast.Node, name: str, make: Callable[[], c_ast.Node]) -> None:
    """Every read of ``name`` under ``node`` becomes ``make()`` (in place)."""
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__") or (isinstance(node, c_ast.StructRef) and attr == "field"):
            continue
        value = getattr(node, attr, None)
        if isinstance(value, c_ast.ID) and value.name == name:
            setattr(node, attr, make())
        elif isinstance(value, c_ast.Node):
            _replace_name(value, name, make)
        elif isinstance(value, list):
            for k, item in enumerate(value):
                if isinstance(item, c_ast.ID) and item.name == name:
                    value[k] = make()
                elif isinstance(item, c_ast.Node):
                    _replace_name(item, name, make)


def substitute_index_temps(nest: c_ast.Node, body: c_ast.Node, symbols: SymbolTable, fallback: SourceLoc,
                           assignments: bool = True) -> None:
    """Substitute, in ``nest`` (a copy inside ``body``, the function's body copy, edited in place),
    the integer temporaries subscripts and loop headers use (with ``assignments``, also scalars
    declared before the nest and assigned in it, whose assignment then goes).

    :raises UnsupportedInput: such a temporary whose value changes between its definition and a
        use, or (assigned in the nest, declared before it) read after the nest or before it is set.
    """
    _Substituter(nest, body, symbols, fallback, assignments).run()
