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

``own_index_rows`` rewrites the per-row form (a batch's classification) for the model a parallel
loop around the nest's own text is checked on (``mdpoly.frontend.privatize``)::

    for (int r = 0; r < rows; r++) {                   for (int r = 0; r < rows; r++) {
      int best = 0;                                      int best = 0;
      for (int c = 1; c < cols; c++)          ->         float mdp_argv_best = (1 < cols) ? l[r*cols + (0)] : 0;
        if (l[r*cols + c] > l[r*cols + best])            for (int c = 1; c < cols; c++)
          best = c;                                        if (l[r*cols + c] > mdp_argv_best) { mdp_argv_best = ...; best = c; }
      pred[r] = best;                                    pred[r] = best;
    }                                                  }

``best`` is declared in the block of the inner loop, before it, with a value that reads no memory
and that no statement between them changes (or, a local of the function's own whose address is
never taken, assigned such a value there: ``best = 0;``), and nothing between them names ``best``: so at the
loop's first comparison ``best`` is that value, which the temporary's element is read at. The
temporary is declared in the row's block, so it is new in every row. The same argument as for
the whole loop makes the comparisons those of the original, ties included; the code that runs is
the nest as written, each row on one thread, so the ties come out as the user's loop resolves them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import assigned_names, declared_names, names_in, replace_top_down, walk_nodes
from mdpoly.frontend.normalize.index_temps import pure_index
from mdpoly.frontend.symbols import SymbolTable, c_text
from mdpoly.ir.c_types import parse_type

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
            or not pure_index(end, symbols) or not _keeps_iterator(nest, it, best, symbols):
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


def own_index_rows(nest: c_ast.Node, symbols: SymbolTable, taken: set[str]) -> list[str]:
    """Rewrite, in ``nest`` (a copy, edited in place), every inner loop that is an argmax/argmin
    through its own index ``best`` declared in the loop's block (see the module docstring) into
    the loop over a value temporary declared before it. Returns the temporaries' names."""
    out: list[str] = []
    for block in [n for n in walk_nodes(nest) if isinstance(n, c_ast.Compound)]:
        items = list(block.block_items or [])
        k = 0
        while k < len(items):
            loop = items[k]
            temp = _row_temp(items, k, nest, symbols, taken | set(out)) if isinstance(loop, c_ast.For) else None
            if temp is not None:
                items.insert(k, temp)
                out.append(str(temp.name))
                k += 1
            k += 1
        block.block_items = items
    return out


def _row_temp(items: list[c_ast.Node], k: int, nest: c_ast.Node, symbols: SymbolTable,
              taken: set[str]) -> c_ast.Decl | None:
    """The value temporary's declaration for the loop ``items[k]`` of a block when it is an
    argmax through the own index of a local declared earlier in the block (the loop rewritten);
    else None and nothing changed."""
    loop = items[k]
    assert isinstance(loop, c_ast.For)
    head = _header(loop)
    found = _update(loop.stmt, head[0]) if head is not None else None
    if head is None or found is None:
        return None
    it, first, test, end = head
    branch, best = found
    cond = branch.cond
    found_start = _row_start(items[:k], best, symbols)
    if found_start is None or not isinstance(cond, c_ast.BinaryOp) or cond.op not in ("<", "<=", ">", ">="):
        return None
    at, start = found_start
    between = c_ast.Compound(items[at + 1:k])
    if not pure_index(start, symbols) or best in names_in(between) \
            or names_in(start) & (assigned_names(between) | declared_names(between)) or best in names_in(end) \
            or not pure_index(first, symbols) or not pure_index(end, symbols):
        return None
    if any(isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID) and n.expr.name == best
           for n in walk_nodes(nest)):
        return None
    sides = _sides(cond, it, best, symbols)
    if sides is None:
        return None
    mine, other, side, elem = sides
    name = PREFIX + best
    while name in taken:
        name += "_"
    at_start = _substituted(other, best, start)
    value = c_ast.TernaryOp(c_ast.BinaryOp(test, copy.deepcopy(first), copy.deepcopy(end)), at_start,
                            c_ast.Constant("int", "0"))
    temp = c_ast.Decl(name, [], [], [], [], c_ast.TypeDecl(name, [], None, c_ast.IdentifierType(elem.split())),
                      value, None, coord=loop.coord)
    setattr(cond, side, c_ast.ID(name, coord=other.coord))
    update = c_ast.Assignment("=", c_ast.ID(name, coord=branch.coord), copy.deepcopy(mine), coord=branch.coord)
    keep = branch.iftrue.block_items[0] if isinstance(branch.iftrue, c_ast.Compound) else branch.iftrue
    branch.iftrue = c_ast.Compound([update, keep], coord=branch.iftrue.coord)
    return temp


def _row_start(items: list[c_ast.Node], best: str, symbols: SymbolTable) -> tuple[int, c_ast.Node] | None:
    """``(position, value)`` of the last statement of ``items`` that sets ``best``: its declaration
    ``int best = v;`` or, for a local of the function's own, ``best = v;``; else None."""
    for at in range(len(items) - 1, -1, -1):
        item = items[at]
        if isinstance(item, c_ast.Decl) and item.name == best:
            return (at, item.init) if item.init is not None and _int_local(item) else None
        if isinstance(item, c_ast.Assignment) and item.op == "=" and isinstance(item.lvalue, c_ast.ID) \
                and item.lvalue.name == best:
            return (at, item.rvalue) if _own_index(best, "", symbols) and best not in names_in(item.rvalue) else None
    return None


def _int_local(decl: c_ast.Decl) -> bool:
    """``decl`` declares an integer scalar that is neither ``static``, ``extern`` nor ``volatile``."""
    t = decl.type
    return (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)
            and set(t.type.names) <= _ARITHMETIC - {"float", "double"} and "volatile" not in (t.quals or [])
            and "volatile" not in (decl.quals or []) and not set(decl.storage or []) & {"static", "extern"})


def _substituted(e: c_ast.Node, name: str, value: c_ast.Node) -> c_ast.Node:
    """A copy of ``e`` with every ``name`` replaced by ``value``."""
    holder = c_ast.Compound([copy.deepcopy(e)])
    replace_top_down(holder, lambda n: copy.deepcopy(value) if isinstance(n, c_ast.ID) and n.name == name else None)
    return holder.block_items[0]


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


def _keeps_iterator(loop: c_ast.For, it: str, best: str, symbols: SymbolTable) -> bool:
    """``best = it`` keeps every value of the iterator's type (``long i`` into ``int best`` does
    not): the dependence analysis refuses such an argmax (``deps.inexact_reduction``), and the
    rewritten loop would then be kept with a reason that names our temporary instead of the
    user's variables. A type this module cannot read is left to that analysis."""
    init = loop.init
    decl = init.decls[0] if isinstance(init, c_ast.DeclList) else None
    if decl is not None and isinstance(decl.type, c_ast.TypeDecl) and isinstance(decl.type.type, c_ast.IdentifierType):
        it_text = " ".join(decl.type.type.names)
    else:
        var = symbols.variable(it)
        it_text = var.scalar_type if var is not None else ""
    kept = symbols.variable(best)
    it_type, best_type = parse_type(it_text), parse_type(kept.scalar_type if kept is not None else "")
    return it_type is None or best_type is None or best_type.holds_all_of(it_type)


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
