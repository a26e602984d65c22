"""Iterator liveness: function body + nest + iterator names -> those whose value after the nest is read.

An iterator declared before its loop (C89: ``int i, j;`` at the top of the function) keeps its
exit value after the nest; the generated code must then leave it there. Usually the program
never reads that value: the next loop assigns the iterator first (``for (i = 0; ...)``). This
module finds the names whose value after the nest may be read -- conservatively: a use in a loop
around the nest, or any use after it other than inside a ``for`` whose header assigns the
name first.
"""

from __future__ import annotations

from pycparser import c_ast


class _Uses(c_ast.NodeVisitor):
    """Uses of ``names`` outside ``nest``, except inside ``for`` loops that assign them first."""

    def __init__(self, nest: c_ast.Node, names: set[str], loop_depth: int = 0) -> None:
        self.nest = nest
        self.names = names
        self.uses: list[tuple[str, tuple[int, int]]] = []  # (name, (line, column))
        self.loop_depth = loop_depth
        self.nest_in_loop = False

    def visit_ID(self, node: c_ast.ID) -> None:
        if node.name in self.names:
            c = node.coord
            self.uses.append((node.name, (c.line or 0, c.column or 0) if c is not None else (1 << 30, 0)))

    def _loop(self, node: c_ast.Node) -> None:
        self.loop_depth += 1
        self.generic_visit(node)
        self.loop_depth -= 1

    visit_While = _loop
    visit_DoWhile = _loop

    def visit_For(self, node: c_ast.For) -> None:
        if node is self.nest:
            self.nest_in_loop = self.loop_depth > 0
            return
        init = node.init
        if (isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID)
                and init.lvalue.name in self.names):
            inner = _Uses(self.nest, self.names - {init.lvalue.name}, self.loop_depth + 1)
            for part in (init.rvalue, node.cond, node.next, node.stmt):
                if part is not None:
                    inner.visit(part)
            self.uses += inner.uses
            self.nest_in_loop = self.nest_in_loop or inner.nest_in_loop
            return
        self._loop(node)

    def visit_Decl(self, node: c_ast.Decl) -> None:
        if node.init is not None:
            self.visit(node.init)


def live_after(body: c_ast.Node, nest: c_ast.Node, names: set[str]) -> set[str]:
    """The ``names`` whose value after ``nest`` (a node of ``body``, or a new node standing for the
    part of ``body`` at its coordinates) the program may read."""
    if not names:
        return set()
    v = _Uses(nest, names)
    v.visit(body)
    c = nest.coord
    start = (c.line or 0, c.column or 0) if c is not None else (0, 0)
    return {n for n, at in v.uses if v.nest_in_loop or at > start}
