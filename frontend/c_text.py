"""C text of front-end AST nodes: ``SourceGenerator``, pycparserext's GNU C generator made whole.

pycparserext's ``GnuCGenerator`` prints GNU extensions (attributes, ``asm`` labels), but its
``_generate_type`` predates pycparser 3's ``emit_base_type`` argument, which pycparser's own
``visit_DeclList`` passes for the second and later declarators of ``int i = 0, j = 0``. This
subclass accepts it and leaves such declarators to pycparser's generator (they carry no
attributes of their own to print), so every statement the front end can parse can be printed.
"""

from __future__ import annotations

from pycparser import c_ast, c_generator
from pycparserext.ext_c_generator import GnuCGenerator


class SourceGenerator(GnuCGenerator):
    """``GnuCGenerator`` that also prints declarator lists (``for (int i = 0, j = 0; ...)``)."""

    def _generate_type(self, n: c_ast.Node, modifiers: list[c_ast.Node] | None = None,
                       emit_declname: bool = True, emit_base_type: bool = True) -> str:
        if not emit_base_type:
            return c_generator.CGenerator._generate_type(self, n, modifiers, emit_declname,
                                                         emit_base_type=False)
        return str(super()._generate_type(n, modifiers, emit_declname))


def loop_iterator(node: c_ast.For) -> str:
    """The name a ``for`` header initialises (``int i = 0`` or ``i = 0``), ``"?"`` for anything else."""
    init = node.init
    if isinstance(init, c_ast.DeclList) and init.decls:
        return str(init.decls[0].name)
    if isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID):
        return str(init.lvalue.name)
    return "?"
