"""``do { S } while (0)`` as the block ``{ S }``.

Macros that expand to several statements are wrapped in ``do { ... } while (0)`` so that they
read as one statement (``C_MUL(t, a, b);``, ``SWAP(x, y);``). The body runs exactly once, so the
loop is the block itself when no ``break`` or ``continue`` in it belongs to the ``do`` (one inside
an inner loop, or a ``break`` inside a ``switch``, belongs there). In a block, a body that declares
nothing at its top joins the enclosing block's statements (no scope changes). The rewrite runs once on the
parsed file, like ``continues.structure_continues``: every later stage sees the block, and nests
mdpoly keeps stay as written in the output (the splicer copies their source text).
"""

from __future__ import annotations

from pycparser import c_ast

_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


def _is_zero(cond: c_ast.Node | None) -> bool:
    return isinstance(cond, c_ast.Constant) and cond.type == "int" and cond.value.rstrip("uUlL") in ("0", "00", "0x0")


def _leaves_early(n: c_ast.Node, in_switch: bool = False) -> bool:
    """Whether a ``break`` or ``continue`` under ``n`` belongs to the loop ``n`` is the body of."""
    if isinstance(n, c_ast.Continue):
        return True
    if isinstance(n, c_ast.Break):
        return not in_switch
    if isinstance(n, _LOOPS):
        return False
    return any(_leaves_early(child, in_switch or isinstance(n, c_ast.Switch)) for _name, child in n.children())


def _unwrapped(n: c_ast.Node) -> c_ast.Compound | None:
    """The block ``n`` stands for when it is a ``do ... while (0)`` of the form above, else None."""
    if not (isinstance(n, c_ast.DoWhile) and _is_zero(n.cond) and not _leaves_early(n.stmt)):
        return None
    return n.stmt if isinstance(n.stmt, c_ast.Compound) else c_ast.Compound([n.stmt], coord=n.coord)


def unwrap_do_once(ast: c_ast.Node) -> int:
    """Replace, in place, every ``do S while (0)`` of the form above in ``ast`` by ``S`` (as a
    block); returns how many."""
    count = 0
    stack: list[c_ast.Node] = [ast]
    while stack:
        node = stack.pop()
        for attr in node.__slots__:
            if attr in ("coord", "__weakref__"):
                continue
            value = getattr(node, attr, None)
            if isinstance(value, list):
                new: list[c_ast.Node] = []
                for child in value:
                    block = _unwrapped(child)
                    if block is None:
                        new.append(child)
                        continue
                    count += 1
                    flat = attr == "block_items" and not any(isinstance(s, c_ast.Decl) for s in block.block_items or [])
                    new.extend(block.block_items or [] if flat else [block])
                value[:] = new
                stack.extend(c for c in value if isinstance(c, c_ast.Node))
            elif isinstance(value, c_ast.Node):
                block = _unwrapped(value)
                if block is not None:
                    setattr(node, attr, block)
                    count += 1
                stack.append(block or value)
    return count
