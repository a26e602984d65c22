"""Inner ``for`` loops that ``break`` as ``while`` loops, for models of the nest's own text.

A search inside a loop body (``for (k = 0; k < m; k++) if (keys[k] == q[i]) { pos = k; break; }``)
has a data-dependent trip count, which no polyhedral domain holds. Written as the ``while`` loop it
is -- ``{ k = 0; while (k < m) { body; k++; } }`` -- the model of the nest's own text takes one trip
of it under its condition as a predicate (``scop_statements.NestStatements._while_once``): the
dependences of the loops around it, exact under that model's conditions, which it checks. Only
for such models (the nest then runs as written, so this copy never becomes code), and only for a
loop whose step is an expression and no ``continue`` of which would skip the step.
"""

from __future__ import annotations

import copy

from pycparser import c_ast

_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


def _owned(n: c_ast.Node, kind: type[c_ast.Node]) -> bool:
    """Whether a ``kind`` statement (``Break``/``Continue``) under ``n`` belongs to the loop ``n``
    is the body of (not to an inner loop, nor a ``break`` to a ``switch``)."""
    if isinstance(n, kind):
        return True
    if isinstance(n, _LOOPS) or (kind is c_ast.Break and isinstance(n, c_ast.Switch)):
        return False
    return any(_owned(child, kind) for _name, child in n.children())


def _as_while(loop: c_ast.For) -> c_ast.Compound | None:
    if loop.stmt is None or not _owned(loop.stmt, c_ast.Break) or _owned(loop.stmt, c_ast.Continue):
        return None
    items: list[c_ast.Node] = []
    if isinstance(loop.init, c_ast.DeclList):
        items.extend(loop.init.decls)
    elif loop.init is not None:
        items.append(loop.init)
    body: list[c_ast.Node] = [copy.copy(loop.stmt)]
    if loop.next is not None:
        body.append(loop.next)
    cond = loop.cond if loop.cond is not None else c_ast.Constant("int", "1")
    items.append(c_ast.While(cond, c_ast.Compound(body, coord=loop.coord), coord=loop.coord))
    return c_ast.Compound(items, coord=loop.coord)


def breaking_loops_as_whiles(nest: c_ast.For) -> int:
    """Rewrite, in ``nest`` (a copy; its own header stays), every inner ``for`` loop of the form
    above (innermost first); returns how many."""
    count = 0

    def walk(node: c_ast.Node) -> None:
        nonlocal count
        for attr in node.__slots__:
            if attr in ("coord", "__weakref__"):
                continue
            value = getattr(node, attr, None)
            if isinstance(value, list):
                out: list[c_ast.Node] = []
                for child in value:
                    if isinstance(child, c_ast.Node):
                        walk(child)
                    new = _as_while(child) if isinstance(child, c_ast.For) else None
                    if new is None:
                        out.append(child)
                        continue
                    count += 1
                    # 'k = 0; while (...)' joins the block (no declaration: the scopes stay)
                    flat = attr == "block_items" and not isinstance(child.init, c_ast.DeclList)
                    out.extend(new.block_items or [] if flat else [new])
                value[:] = out
            elif isinstance(value, c_ast.Node):
                walk(value)
                new = _as_while(value) if isinstance(value, c_ast.For) else None
                if new is not None:
                    count += 1
                    setattr(node, attr, new)

    walk(nest.stmt)
    return count
