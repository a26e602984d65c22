"""``switch`` as an ``if``/``else if`` chain.

A loop body that picks its work by a mode, an opcode or a class (``switch (mode[i]) { case 0:
...; break; case 1: ...; break; default: ...; }``) has the same meaning as the chain
``if (m == 0) {...} else if (m == 1) {...} else {...}`` when every group of statements ends
with a ``break`` of the switch and no other ``break`` in it belongs to the switch (no group
falls into the next), the controlling expression has no side effects (the chain evaluates it
once per test), and no group uses a name another group declares. Labels without statements
join the next group (``case 1: case 2: s; break;`` tests ``m == 1 || m == 2``); ``default``
becomes the final ``else`` wherever it stands. The polyhedral model represents the chain
(conditions as guards or predicates); a ``switch`` it does not. Like
``continues.structure_continues``, the rewrite runs once on the parsed file, and nests mdpoly
keeps stay as written in the output (the splicer copies their source text).
"""

from __future__ import annotations

import copy

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import replace_top_down

_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


def _breaks_switch(n: c_ast.Node) -> bool:
    """Whether a ``break`` under ``n`` (a group's statement) ends the enclosing switch."""
    if isinstance(n, c_ast.Break):
        return True
    if isinstance(n, (*_LOOPS, c_ast.Switch)):
        return False
    return any(_breaks_switch(child) for _name, child in n.children())


def _pure(n: c_ast.Node) -> bool:
    if isinstance(n, c_ast.FuncCall | c_ast.Assignment):
        return False
    if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
        return False
    return all(_pure(child) for _name, child in n.children())


def _names(n: c_ast.Node) -> set[str]:
    out: set[str] = set()
    stack = [n]
    while stack:
        x = stack.pop()
        if isinstance(x, c_ast.ID):
            out.add(x.name)
        stack.extend(child for _name, child in x.children())
    return out


def _without_final_break(stmts: list[c_ast.Node]) -> list[c_ast.Node] | None:
    """``stmts`` without the ``break`` that ends them (also the last statement of a final block,
    ``case 2: { ...; break; }``), or None when they do not end with one."""
    if not stmts:
        return None
    last = stmts[-1]
    if isinstance(last, c_ast.Break):
        return stmts[:-1]
    if isinstance(last, c_ast.Compound):
        inner = _without_final_break(list(last.block_items or []))
        if inner is not None:
            return [*stmts[:-1], c_ast.Compound(inner, coord=last.coord)]
    return None


def _groups(switch: c_ast.Switch) -> list[tuple[list[c_ast.Node] | None, list[c_ast.Node]]] | None:
    """``(case values, statements)`` per group (``None`` values: the default), or None when the
    body is not a sequence of labelled groups of the form above."""
    body = switch.stmt
    if not isinstance(body, c_ast.Compound):
        return None
    groups: list[tuple[list[c_ast.Node] | None, list[c_ast.Node]]] = []
    pending: list[c_ast.Node] = []
    for item in body.block_items or []:
        if isinstance(item, c_ast.Case):
            pending.append(item.expr)
            stmts = list(item.stmts or [])
        elif isinstance(item, c_ast.Default):
            if pending:   # 'case 1: default:' -- the default's group takes every value anyway
                pending = []
            stmts = list(item.stmts or [])
            if not stmts:
                return None
            groups.append((None, stmts))
            continue
        else:
            return None   # a statement before the first label
        if stmts:
            groups.append((pending, stmts))
            pending = []
    if pending:
        groups.append((pending, []))
    return groups


def _chain(switch: c_ast.Switch) -> c_ast.Node | None:
    """The ``if`` chain ``switch`` stands for, or None."""
    if not _pure(switch.cond):
        return None
    groups = _groups(switch)
    if groups is None or sum(values is None for values, _ in groups) > 1:
        return None
    bodies: list[tuple[list[c_ast.Node] | None, list[c_ast.Node]]] = []
    for k, (values, stmts) in enumerate(groups):
        ended = _without_final_break(stmts)
        if ended is not None:
            stmts = ended
        elif k + 1 < len(groups) and (stmts or values is None):
            return None   # falls into the next group
        if any(_breaks_switch(s) for s in stmts):
            return None
        bodies.append((values, stmts))
    declared = [{s.name for s in stmts if isinstance(s, c_ast.Decl) and s.name} for _, stmts in bodies]
    for k, (_, stmts) in enumerate(bodies):
        used = set().union(*(_names(s) for s in stmts)) if stmts else set()
        if any(used & d for j, d in enumerate(declared) if j != k):
            return None
    default = next((stmts for values, stmts in bodies if values is None), None)
    out: c_ast.Node | None = c_ast.Compound(list(default), coord=switch.coord) if default is not None else None
    for values, stmts in reversed([b for b in bodies if b[0] is not None]):
        assert values is not None
        test: c_ast.Node | None = None
        for v in values:
            eq = c_ast.BinaryOp("==", copy.deepcopy(switch.cond), copy.deepcopy(v), coord=switch.coord)
            test = eq if test is None else c_ast.BinaryOp("||", test, eq, coord=switch.coord)
        assert test is not None
        out = c_ast.If(test, c_ast.Compound(list(stmts), coord=switch.coord), out, coord=switch.coord)
    return out if out is not None else c_ast.Compound([], coord=switch.coord)


def structure_switches(ast: c_ast.Node) -> int:
    """Rewrite, in place, every ``switch`` of the form above in ``ast``; returns how many."""
    count = 0

    def swap(n: c_ast.Node) -> c_ast.Node | None:
        nonlocal count
        chain = _chain(n) if isinstance(n, c_ast.Switch) else None
        if chain is None:
            return None
        count += 1
        replace_top_down(chain, swap)   # switches inside the groups
        return chain

    replace_top_down(ast, swap)
    return count
