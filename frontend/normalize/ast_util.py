"""Helpers the normalization passes share: pycparser nodes -> names read, assigned and declared.

All of them only read the tree, except ``replace_top_down``, the in-place edit for the passes
that rewrite their own copy of a nest.
"""

from __future__ import annotations

from collections.abc import Callable

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc

_STEP_OPS = frozenset({"++", "--", "p++", "p--"})


def loc_of(node: c_ast.Node, fallback: SourceLoc) -> SourceLoc:
    """``node``'s position, or ``fallback`` when it has none."""
    c = node.coord
    if c is None or c.line is None:
        return fallback
    return SourceLoc(c.file, c.line, c.column or 1)


def ids_in(node: c_ast.Node | None) -> list[c_ast.ID]:
    """Every ``ID`` node under ``node`` (members of ``a.b`` not counted: they are no names)."""
    out: list[c_ast.ID] = []

    def walk(n: c_ast.Node | None) -> None:
        if n is None:
            return
        if isinstance(n, c_ast.ID):
            out.append(n)
            return
        if isinstance(n, c_ast.StructRef):
            walk(n.name)
            return
        for _name, child in n.children():
            walk(child)

    walk(node)
    return out


def walk_nodes(node: c_ast.Node | None) -> list[c_ast.Node]:
    """Every node under ``node`` (itself included), in no particular order."""
    out: list[c_ast.Node] = []
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(child for _name, child in n.children())
    return out


def names_in(node: c_ast.Node | None) -> set[str]:
    return {i.name for i in ids_in(node)}


def lvalue_root(node: c_ast.Node) -> c_ast.Node:
    """The object an lvalue expression starts from: ``a`` of ``a[i][j]``, ``p->x`` of ``p->x[i]``."""
    while isinstance(node, c_ast.ArrayRef):
        node = node.name
    if isinstance(node, c_ast.UnaryOp) and node.op == "*":
        return lvalue_root(node.expr)
    return node


def written_roots(node: c_ast.Node | None) -> list[tuple[c_ast.Node, c_ast.Node]]:
    """``(statement node, lvalue root)`` of every assignment, ``++``/``--`` and ``&x`` under ``node``
    (an address taken counts as a possible write)."""
    out: list[tuple[c_ast.Node, c_ast.Node]] = []

    def walk(n: c_ast.Node | None) -> None:
        if n is None:
            return
        if isinstance(n, c_ast.Assignment):
            out.append((n, lvalue_root(n.lvalue)))
        elif isinstance(n, c_ast.UnaryOp) and (n.op in _STEP_OPS or n.op == "&"):
            out.append((n, lvalue_root(n.expr)))
        for _name, child in n.children():
            walk(child)

    walk(node)
    return out


def declared_names(node: c_ast.Node | None) -> set[str]:
    """Names declared under ``node``."""
    out: set[str] = set()

    def walk(n: c_ast.Node | None) -> None:
        if n is None:
            return
        if isinstance(n, c_ast.Decl) and n.name:
            out.add(n.name)
        for _name, child in n.children():
            walk(child)

    walk(node)
    return out


def child_slots(node: c_ast.Node) -> list[tuple[str, int | None, c_ast.Node]]:
    """``node``'s child nodes, each with its slot: the attribute and, for a list, the index."""
    out: list[tuple[str, int | None, c_ast.Node]] = []
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        value = getattr(node, attr, None)
        if isinstance(value, c_ast.Node):
            out.append((attr, None, value))
        elif isinstance(value, list):
            out.extend((attr, k, item) for k, item in enumerate(value) if isinstance(item, c_ast.Node))
    return out


def put_child(node: c_ast.Node, attr: str, index: int | None, new: c_ast.Node) -> None:
    """Put ``new`` into the slot of ``node`` that ``child_slots`` named."""
    if index is None:
        setattr(node, attr, new)
    else:
        getattr(node, attr)[index] = new


def replace_top_down(node: c_ast.Node, rewrite: Callable[[c_ast.Node], c_ast.Node | None]) -> None:
    """Top-down in place: a child ``c`` becomes ``rewrite(c)`` when that is not None (and is not
    looked into further), else ``c``'s own children are visited."""
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        value = getattr(node, attr, None)
        if isinstance(value, c_ast.Node):
            new = rewrite(value)
            if new is not None:
                setattr(node, attr, new)
            else:
                replace_top_down(value, rewrite)
        elif isinstance(value, list):
            for k, item in enumerate(value):
                if isinstance(item, c_ast.Node):
                    new = rewrite(item)
                    if new is not None:
                        value[k] = new
                    else:
                        replace_top_down(item, rewrite)


def assigned_names(node: c_ast.Node | None, address: bool = True) -> set[str]:
    """Names whose own value changes under ``node``: ``x = ...``, ``x op= ...``, ``x++``, and
    with ``address`` ``&x`` (element writes ``x[i] = ...`` do not change ``x``)."""
    out: set[str] = set()

    def walk(n: c_ast.Node | None) -> None:
        if n is None:
            return
        target: c_ast.Node | None = None
        if isinstance(n, c_ast.Assignment):
            target = n.lvalue
        elif isinstance(n, c_ast.UnaryOp) and (n.op in _STEP_OPS or (address and n.op == "&")):
            target = n.expr
        if isinstance(target, c_ast.ID):
            out.add(target.name)
        for _name, child in n.children():
            walk(child)

    walk(node)
    return out


def assignment_of(node: c_ast.Node | None, name: str) -> c_ast.Node | None:
    """The first assignment, ``++``/``--`` or ``&`` of ``name`` itself under ``node``, else None."""
    if node is None:
        return None
    target = node.lvalue if isinstance(node, c_ast.Assignment) else \
        node.expr if isinstance(node, c_ast.UnaryOp) and (node.op in _STEP_OPS or node.op == "&") else None
    if isinstance(target, c_ast.ID) and target.name == name:
        return node
    for _name, child in node.children():
        found = assignment_of(child, name)
        if found is not None:
            return found
    return None
