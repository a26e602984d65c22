"""``continue`` as structured control flow: ``if (c) { S; continue; } T`` -> ``if (c) { S } else { T }``.

A loop body that skips the rest of an iteration with an early ``continue`` (the border test of an
image filter, ``if (mask[i] == 0) continue;``) has the same meaning as the ``if``/``else`` that
puts the rest of the body in the ``else`` branch. Written that way, the statements after the
test carry the negated condition in their domain (or as a predicate), which the polyhedral model
represents; a ``continue`` it cannot. The rewrite runs once on the parsed file, before any nest
is analysed, so every later stage (the model, the scheduler, the text of a generated nest and of
its fallback) sees the same structured body; nests mdpoly keeps stay as the user wrote them in
the output (the splicer copies their source text).

Only a ``continue`` that ends the ``then`` branch of an ``if`` without ``else`` standing
directly in a loop's body block (so it belongs to that loop), with no other ``continue`` in that
branch outside inner loops, is rewritten; any other stays and is refused later with its reason.
"""

from __future__ import annotations

from pycparser import c_ast

_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


def structure_continues(ast: c_ast.Node) -> int:
    """Rewrite, in place, every early ``continue`` of the form above in ``ast``; returns how many."""
    count = 0
    stack: list[c_ast.Node] = [ast]
    while stack:
        node = stack.pop()
        if isinstance(node, _LOOPS) and isinstance(node.stmt, c_ast.Compound):
            count += _rewrite_block(node.stmt)
        stack.extend(child for _name, child in node.children())
    return count


def _rewrite_block(block: c_ast.Compound) -> int:
    """Rewrite the first early-``continue`` ``if`` of a loop body block, and then the block it
    leaves in its ``else`` (the rest of the body), recursively."""
    items = block.block_items or []
    for k, item in enumerate(items):
        then = _early_continue_branch(item)
        if then is None:
            continue
        assert isinstance(item, c_ast.If)
        rest = c_ast.Compound(list(items[k + 1:]), item.coord)
        if not then.block_items and rest.block_items:     # if (c) continue; T  ->  if (!(c)) { T }
            item.cond = c_ast.UnaryOp("!", item.cond, item.cond.coord)
            item.iftrue, item.iffalse = rest, None
        else:
            item.iftrue, item.iffalse = then, (rest if rest.block_items else None)
        block.block_items = [*items[:k], item]
        return 1 + _rewrite_block(rest)
    return 0


def _early_continue_branch(item: c_ast.Node) -> c_ast.Compound | None:
    """For ``if (c) { S; continue; }`` (no ``else``): ``{ S }``; else ``None``."""
    if not isinstance(item, c_ast.If) or item.iffalse is not None:
        return None
    branch = item.iftrue
    body = list(branch.block_items or []) if isinstance(branch, c_ast.Compound) else [branch]
    if not body or not isinstance(body[-1], c_ast.Continue):
        return None
    body = body[:-1]
    if any(_has_own_continue(s) for s in body):
        return None
    return c_ast.Compound(body, branch.coord)


def _has_own_continue(node: c_ast.Node) -> bool:
    """Whether ``node`` holds a ``continue`` (or a ``break``, a ``goto`` or a label) that is not
    inside a loop of its own: one that would leave or jump within the enclosing loop's body."""
    if isinstance(node, c_ast.Continue | c_ast.Goto | c_ast.Label):
        return True
    if isinstance(node, c_ast.Break):
        return True
    if isinstance(node, (*_LOOPS, c_ast.Switch)):
        return False
    return any(_has_own_continue(child) for _name, child in node.children())
