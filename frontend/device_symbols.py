"""Declarations of what a scheduled nest mentions: ``ParsedFile`` + ``Candidate`` -> ``tuple[Variable, ...]``.

The GPU forms of a schedule's items (``mdpoly.backends.device_body``) translate an item's C text
to device code; they need every outside name's element type and declared extents, which the
item's text does not carry. ``nest_symbols`` lists, for every identifier of the nest that is
declared outside it (globals, parameters, the function's locals), its ``Variable`` as the front
end's symbol table describes it. Names declared inside the nest are the items' own.
"""

from __future__ import annotations

from pycparser import c_ast

from mdpoly.frontend.candidates import Candidate
from mdpoly.frontend.parse import ParsedFile
from mdpoly.frontend.symbols import symbols_for
from mdpoly.ir.scop import Variable


class _Names(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_ID(self, node: c_ast.ID) -> None:
        if node.name not in self.names:
            self.names.append(node.name)


def nest_symbols(parsed: ParsedFile, cand: Candidate) -> tuple[Variable, ...]:
    """The declarations (outside the nest) of every identifier the nest ``cand`` mentions, in
    order of first mention; names without a declaration the table knows are left out."""
    table = symbols_for(parsed.ast, cand.func, cand.scope or cand.node)
    seen = _Names()
    seen.visit(cand.node)
    out: list[Variable] = []
    for name in seen.names:
        var = table.variable(name)
        if var is not None:
            out.append(var)
    return tuple(out)
