"""Locals that hold a constant: nest copy -> the nest with their values where it reads them.

``const int B = 32; for (i0 = 0; i0 < n; i0 += B)`` steps by a name, which the model takes for a
size parameter: a run-time step (``runtime_steps``), whose counted loop multiplies the counter by
``B`` (not affine). The value is known, and written out (``i0 += 32``) the loop is a strided loop
of the model. A local is such a constant when the function declares it once, outside the nest,
of an integer type (no pointer, array or ``volatile``), with an integer constant expression as
its initialiser (literals, enumerators, such constants declared before it, ``+ - * <<``, ``()``)
whose value its type holds, and never assigns it nor takes its address. A ``const`` local is
read as its value everywhere in the nest; any other such local (``int bs = 64;``, assigned once
before the nest from a constant and never written again) in the nest's loop headers only (its
steps and bounds), so that the names the user reads in the remarks stay where they help. A name
the nest declares itself is no such local there.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import assigned_names, declared_names, replace_top_down, walk_nodes
from mdpoly.frontend.symbols import SymbolTable, _enum_value
from mdpoly.ir.c_types import parse_type


@dataclass(frozen=True, slots=True)
class ConstantLocal:
    """A local whose value is ``value`` wherever the function can read it; ``const``: so declared."""

    name: str
    value: int
    c_type: str
    const: bool


def constant_locals(func: c_ast.FuncDef, nest: c_ast.Node, symbols: SymbolTable) -> dict[str, ConstantLocal]:
    """The locals of ``func`` outside ``nest`` that hold a constant (see the module docstring)."""
    decls: dict[str, list[c_ast.Decl]] = {}
    for n in walk_nodes(func.body):
        if isinstance(n, c_ast.Decl) and n.name:
            decls.setdefault(n.name, []).append(n)
    inside = declared_names(nest)
    changed = assigned_names(func.body) | symbols.addressed
    known: dict[str, int] = dict(symbols.enum_values)
    out: dict[str, ConstantLocal] = {}
    # declarations in source order: an initialiser may read a constant declared before it
    for name, found in sorted(decls.items(), key=lambda kv: _order(kv[1][0])):
        if len(found) != 1 or name in inside or name in changed or name not in symbols.locals:
            continue
        d = found[0]
        t = d.type
        if d.init is None or not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
            continue
        quals = set(d.quals or []) | set(t.quals or [])
        ctype = parse_type(symbols.resolve(" ".join(t.type.names)))
        if "volatile" in quals or symbols.is_volatile(name) or ctype is None or not ctype.is_integer or ctype.is_bool:
            continue
        value = _enum_value(d.init, known)
        if value is None or not ctype.min_value <= value <= ctype.max_value:
            continue
        known[name] = value
        out[name] = ConstantLocal(name, value, ctype.name, "const" in quals)
    return out


def _order(d: c_ast.Decl) -> tuple[int, int]:
    c = d.coord
    return (c.line or 0, c.column or 0) if c is not None else (0, 0)


def substitute_constant_locals(nest: c_ast.For, func: c_ast.FuncDef, symbols: SymbolTable) -> None:
    """Write, in ``nest`` (a copy, edited in place; its own header too), each constant local's
    value where the module docstring says: ``const`` ones everywhere, others in loop headers."""
    consts = constant_locals(func, nest, symbols)
    if not consts:
        return
    everywhere = {n: c for n, c in consts.items() if c.const}

    def value(n: c_ast.Node, table: dict[str, ConstantLocal]) -> c_ast.Node | None:
        if isinstance(n, c_ast.ID) and n.name in table:
            return _literal(table[n.name], n.coord)
        if isinstance(n, c_ast.StructRef):   # the member of ``s.B`` is no name
            new = value(n.name, table)
            if new is not None:
                n.name = new
            else:
                replace_top_down(n.name, lambda m: value(m, table))
            return n
        return None

    for loop in [n for n in walk_nodes(nest) if isinstance(n, c_ast.For)]:
        header = c_ast.ExprList([x for x in (loop.init, loop.cond, loop.next) if x is not None])
        replace_top_down(header, lambda n: value(n, consts))
        items = iter(header.exprs)
        loop.init = next(items) if loop.init is not None else None
        loop.cond = next(items) if loop.cond is not None else None
        loop.next = next(items) if loop.next is not None else None
    if everywhere:
        replace_top_down(nest, lambda n: value(n, everywhere))


def _literal(c: ConstantLocal, coord: object) -> c_ast.Node:
    """``c``'s value in its type: ``32``, ``(long) 32``, ``-(1)``."""
    lit: c_ast.Node = c_ast.Constant("int", str(abs(c.value)), coord=coord)
    if c.value < 0:
        lit = c_ast.UnaryOp("-", lit, coord=coord)
    if c.c_type != "int":
        to = c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(c.c_type.split())))
        lit = c_ast.Cast(to, lit, coord=coord)
    return lit
