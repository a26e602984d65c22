"""Argmax/argmin through its own index: nest copy -> the loop over a value temporary.

``for (int i = 1; i < n; i++) if (a[i] > a[best]) best = i;`` compares with the element at the
index it keeps, which the nest itself computes: no reduction the model knows. The form with a
value variable, ``if (a[i] > m) { m = a[i]; best = i; }``, is an argmax (``deps.arg_pairs``). So
the loop becomes, in the copy the model is built from::

    for (int i = 1; i < n; i++) if (a[i] > mdp_argv_best) { mdp_argv_best = a[i]; best = i; }

with ``mdp_argv_best`` a new scalar of ``a``'s element type that the call site sets to
``(1 < n) ? a[best] : 0`` (``Normalized.values``; passed as the address of a compound literal,
since the nest writes it and nothing reads it after the nest).

Exact because ``mdp_argv_best`` equals ``a[best]`` at every comparison: the loop writes nothing
but ``best`` (its body is that one ``if``), ``best`` is a local scalar whose address is never
taken (so no store through a pointer reaches it, and storing to it changes no element of
``a``), and the element expression reads no memory but ``a`` and nothing that changes in the
loop besides ``i``; the temporary starts as ``a[best]`` and takes ``a[i]`` exactly when ``best``
takes ``i``. The comparisons are the same, ties included (``>``/``<`` keep the first extreme,
``>=``/``<=`` the last). The original reads ``a[best]`` only when the loop runs at least once
(``best`` may be out of range otherwise, as ``n`` may be 0): so does the call site, under the
loop's own test of its first iteration, whose bounds read no memory and nothing the loop changes.
Only the loop that is the whole nest is rewritten, and only in models of an MDH computation:
a model of the nest's own text must keep its statements.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import names_in
from mdpoly.frontend.normalize.index_temps import pure_index
from mdpoly.frontend.symbols import SymbolTable, c_text

PREFIX = "mdp_argv_"

_ARITHMETIC = {"char", "short", "int", "long", "signed", "unsigned", "float", "double"}


@dataclass(frozen=True, slots=True)
class ArgValue:
    """The value temporary ``name`` of an argmax/argmin, which the call site sets to ``text``."""

    name: str
    text: str
    decl: c_ast.Decl


def own_index_args(nest: c_ast.Node, symbols: SymbolTable, taken: set[str]) -> list[ArgValue]:
    """Rewrite ``nest`` (a copy, edited in place) when it is an argmax/argmin through its own
    index (see the module docstring); ``taken``: names the new temporary must not be. Returns
    the temporary introduced (none when the nest is no such loop)."""
    if not isinstance(nest, c_ast.For):
        return []
    head = _header(nest)
    if head is None:
        return []
    it, first, test, end = head
    found = _update(nest.stmt, it)
    if found is None:
        return []
    branch, best = found
    cond = branch.cond
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=")):
        return []
    if not _own_index(best, it, symbols) or best in names_in(end) or not pure_index(first, symbols) \
            or not pure_index(end, symbols):
        return []
    sides = _sides(cond, it, best, symbols)
    if sides is None:
        return []
    mine, other, side, elem = sides
    name = PREFIX + best
    while name in taken:
        name += "_"
    decl = c_ast.Decl(name, [], [], [], [], c_ast.TypeDecl(name, [], None, c_ast.IdentifierType(elem.split())),
                      None, None, coord=nest.coord)
    text = f"({elem}){{({c_text(first)}) {test} ({c_text(end)}) ? {c_text(other)} : 0}}"
    setattr(cond, side, c_ast.ID(name, coord=other.coord))
    update = c_ast.Assignment("=", c_ast.ID(name, coord=branch.coord), copy.deepcopy(mine), coord=branch.coord)
    keep = branch.iftrue.block_items[0] if isinstance(branch.iftrue, c_ast.Compound) else branch.iftrue
    branch.iftrue = c_ast.Compound([update, keep], coord=branch.iftrue.coord)
    return [ArgValue(name, text, decl)]


def _header(loop: c_ast.For) -> tuple[str, c_ast.Node, str, c_ast.Node] | None:
    """``(i, L, op, U)`` of ``for (i = L; i op U; i++)`` with ``op`` ``<`` or ``<=``, else None."""
    init, cond, step = loop.init, loop.cond, loop.next
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
        it, first = str(init.decls[0].name), init.decls[0].init
    elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        it, first = str(init.lvalue.name), init.rvalue
    else:
        return None
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=") and isinstance(cond.left, c_ast.ID)
            and cond.left.name == it):
        return None
    unit = (isinstance(step, c_ast.UnaryOp) and step.op in ("++", "p++") and isinstance(step.expr, c_ast.ID)
            and step.expr.name == it) or (isinstance(step, c_ast.Assignment) and step.op == "+="
                                          and isinstance(step.lvalue, c_ast.ID) and step.lvalue.name == it
                                          and isinstance(step.rvalue, c_ast.Constant) and step.rvalue.value == "1")
    return (it, first, cond.op, cond.right) if unit else None


def _only(node: c_ast.Node | None) -> c_ast.Node | None:
    """``node``, or the one statement of a block that holds only it."""
    if isinstance(node, c_ast.Compound):
        items = node.block_items or []
        return items[0] if len(items) == 1 else None
    return node


def _update(body: c_ast.Node | None, it: str) -> tuple[c_ast.If, str] | None:
    """The loop's body ``if (cond) best = it;`` (no ``else``) and ``best``, else None."""
    branch = _only(body)
    if not isinstance(branch, c_ast.If) or branch.iffalse is not None:
        return None
    keep = _only(branch.iftrue)
    if not (isinstance(keep, c_ast.Assignment) and keep.op == "=" and isinstance(keep.lvalue, c_ast.ID)
            and isinstance(keep.rvalue, c_ast.ID) and keep.rvalue.name == it and keep.lvalue.name != it):
        return None
    return branch, str(keep.lvalue.name)


def _sides(cond: c_ast.BinaryOp, it: str, best: str,
           symbols: SymbolTable) -> tuple[c_ast.Node, c_ast.Node, str, str] | None:
    """``(a[i], a[best], the attribute of cond that holds a[best], a's element type)`` when one
    side of ``cond`` is an element at ``it`` and the other the same element at ``best``."""
    for mine, other, side in ((cond.left, cond.right, "right"), (cond.right, cond.left, "left")):
        elem = _element(mine, it, best, symbols)
        if elem is not None and c_text(_renamed(mine, it, best)) == c_text(other):
            return mine, other, side, elem
    return None


def _own_index(best: str, it: str, symbols: SymbolTable) -> bool:
    """``best`` is an integer scalar of the function's own, never addressed nor volatile."""
    var = symbols.variable(best)
    return (var is not None and var.kind == "scalar" and var.alias == "private" and not symbols.is_volatile(best)
            and set(var.scalar_type.split()) <= _ARITHMETIC - {"float", "double"} and best != it)


def _element(e: c_ast.Node, it: str, best: str, symbols: SymbolTable) -> str | None:
    """The arithmetic element type of ``e`` when it is an element ``a[..][..]`` of an array or
    pointer variable, all its subscripts read no memory, name ``it`` and not ``best``; else None."""
    subs: list[c_ast.Node] = []
    base = e
    while isinstance(base, c_ast.ArrayRef):
        subs.append(base.subscript)
        base = base.name
    if not isinstance(base, c_ast.ID) or base.name in (it, best):
        return None
    var = symbols.variable(base.name)
    if var is None or var.kind not in ("array", "pointer") or len(var.shape) != len(subs) \
            or symbols.is_volatile(base.name) or not set(var.scalar_type.split()) <= _ARITHMETIC:
        return None
    names = set().union(*(names_in(s) for s in subs))
    if it not in names or best in names or not all(pure_index(s, symbols) for s in subs):
        return None
    return var.scalar_type


def _renamed(e: c_ast.Node, old: str, new: str) -> c_ast.Node:
    """A copy of ``e`` with every ``old`` named ``new``."""
    out = copy.deepcopy(e)
    stack: list[c_ast.Node] = [out]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.ID) and n.name == old:
            n.name = new
        stack.extend(child for _name, child in n.children())
    return out
