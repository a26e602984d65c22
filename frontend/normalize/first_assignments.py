"""Declarations without a value: nest copy -> the nest with each such scalar declared at its first assignment.

``double dl, dr; dl = a[i] - a[i-1]; dr = a[i+1] - a[i]; f[i] = dl * dr;`` declares temporaries
that the next statements of the block give their values. Declared at those assignments instead
(``double dl = a[i] - a[i-1]; double dr = ...;``) they are the temporaries the extractor models
(``mdpoly.frontend.scop_statements``: inlined where they are read, reassigned by later
statements of their block, or expanded into one local per iteration).

The move is exact when nothing can read the variable between its declaration and that
assignment: the first item of the declaring block after the declaration that names the variable
at all is the plain statement ``x = e;``, and ``e`` does not read ``x``. A loop ``for (x = e; ...)``
that is the first use and the last (C89's iterator declared in the block around it) declares it
in its header, ``for (T x = e; ...)``; so does every such loop when the variable appears nowhere
else after its declaration (``int t, e;`` then two loops ``for (t = 0; ...)`` with loops
``for (e = 0; ...)`` inside: each loop starts by assigning it, and nothing reads it between
them), provided its address is never taken and no inner block declares the same name. A
variable the block never names again is dropped. Any other first use -- a read, ``x += e``, an assignment inside an
``if`` or a loop, ``y = x = e`` -- may read the variable before it holds a value: the nest is
refused at the declaration, with that reason. Only automatic scalars are moved (``static`` and
``extern`` ones keep their storage, ``volatile`` ones every access; arrays and pointers stay as
written).
"""

from __future__ import annotations

import copy

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc, UnsupportedInput
from mdpoly.frontend.normalize.ast_util import loc_of, names_in, walk_nodes
from mdpoly.frontend.symbols import SymbolTable, c_text


def _uninitialised_scalar(item: c_ast.Node, symbols: SymbolTable) -> bool:
    """``T x;``: an automatic, non-volatile scalar declared without a value."""
    return (isinstance(item, c_ast.Decl) and item.init is None and bool(item.name)
            and isinstance(item.type, c_ast.TypeDecl)
            and not {"static", "extern"} & set(item.storage or [])
            and "volatile" not in (item.quals or []) and not symbols.type_is_volatile(item.type))


def _plain_assignment(item: c_ast.Node, name: str) -> bool:
    """``name = e;`` with ``e`` neither reading ``name`` nor assigning anything (``a = b = e``)."""
    return (isinstance(item, c_ast.Assignment) and item.op == "=" and isinstance(item.lvalue, c_ast.ID)
            and item.lvalue.name == name and not isinstance(item.rvalue, c_ast.Assignment)
            and name not in names_in(item.rvalue))


def _counts_with_it(item: c_ast.Node, name: str) -> bool:
    """``for (name = e; ...)`` (C89's iterator declared in the block above), ``e`` not reading ``name``."""
    return isinstance(item, c_ast.For) and item.init is not None and _plain_assignment(item.init, name)


def _loops_only(items: list[c_ast.Node], name: str) -> list[c_ast.For] | None:
    """The outermost loops ``for (name = e; ...)`` under ``items`` when ``name`` appears nowhere
    outside them, its address is never taken and no declaration under ``items`` reuses the name;
    else None."""
    loops: list[c_ast.For] = []

    def visit(n: c_ast.Node | None) -> bool:
        if n is None:
            return True
        if isinstance(n, c_ast.Decl) and n.name == name:
            return False
        if isinstance(n, c_ast.UnaryOp) and n.op == "&" and name in names_in(n.expr):
            return False
        if isinstance(n, c_ast.For) and _counts_with_it(n, name):
            inside = walk_nodes(n)
            if any((isinstance(x, c_ast.Decl) and x.name == name)
                   or (isinstance(x, c_ast.UnaryOp) and x.op == "&" and name in names_in(x.expr)) for x in inside):
                return False
            loops.append(n)   # the loops inside it that assign it are inside the one declaring it
            return True
        if isinstance(n, c_ast.ID):
            return n.name != name
        if isinstance(n, c_ast.StructRef):
            return visit(n.name)
        return all(visit(child) for _k, child in n.children())

    return loops if all(visit(item) for item in items) else None


def _declared_at(decl: c_ast.Decl, assignment: c_ast.Assignment) -> c_ast.Decl:
    """``T x = e;`` at ``assignment``'s place (and position, for the statements located by it)."""
    new = copy.deepcopy(decl)
    new.init = assignment.rvalue
    new.coord = assignment.coord
    return new


def _described(item: c_ast.Node) -> str:
    """``item`` for a message: its text when it is one line (``'f[i] = t'``), else its kind."""
    text = c_text(item).strip()
    if "\n" not in text:
        return f"'{text}'"
    kind = {c_ast.If: "if", c_ast.For: "for", c_ast.While: "while", c_ast.DoWhile: "do",
            c_ast.Switch: "switch"}.get(type(item))
    return f"an '{kind}' statement" if kind else "a block"


def _first_use(items: list[c_ast.Node], start: int, name: str) -> int | None:
    """The index of the first item from ``start`` on that names ``name``, else None."""
    for k in range(start, len(items)):
        if name in names_in(items[k]):
            return k
    return None


def _place_block(block: c_ast.Compound, symbols: SymbolTable, fallback: SourceLoc) -> None:
    items = block.block_items or []
    k = 0
    while k < len(items):
        item = items[k]
        if not _uninitialised_scalar(item, symbols):
            k += 1
            continue
        assert isinstance(item, c_ast.Decl)
        use = _first_use(items, k + 1, item.name)
        if use is None:
            del items[k]   # never named again: nothing reads it
            continue
        first = items[use]
        if _counts_with_it(first, item.name) and not any(item.name in names_in(x) for x in items[use + 1:]):
            assert isinstance(first, c_ast.For)
            first.init = c_ast.DeclList([_declared_at(item, first.init)], coord=first.init.coord)
            del items[k]
            continue
        loops = None if _plain_assignment(first, item.name) else _loops_only(items[k + 1:], item.name)
        if loops:
            for loop in loops:
                assert isinstance(loop.init, c_ast.Assignment)
                loop.init = c_ast.DeclList([_declared_at(item, loop.init)], coord=loop.init.coord)
            del items[k]
            continue
        if not _plain_assignment(first, item.name):
            raise UnsupportedInput(
                f"local variable '{item.name}' is declared without an initialiser and may be read before it is "
                f"assigned: its first use ({_described(first)}, line {loc_of(first, fallback).line}) is not a "
                f"plain assignment '{item.name} = ...;' of its own block", loc_of(item, fallback),
                "unsupported-statement")
        assert isinstance(first, c_ast.Assignment)
        items[use] = _declared_at(item, first)
        del items[k]


def declare_at_first_assignments(nest: c_ast.Node, symbols: SymbolTable, fallback: SourceLoc) -> None:
    """Move, in ``nest`` (a copy, edited in place), each scalar declared without a value to its
    first assignment in its block (see the module docstring); drop those never used.

    :raises UnsupportedInput: such a scalar that may be read before it is assigned, located at
        its declaration.
    """
    stack = [nest]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.Compound):
            _place_block(n, symbols, fallback)
        stack.extend(child for _name, child in n.children())
