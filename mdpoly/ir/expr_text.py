"""C expression text printed by the front end (``mdpoly.ir.scop.render_expr``) parsed back into a
pycparser tree: the scalar function's results, which the backends render and the front end's
analyses of them (``mdpoly.frontend.sqrt_domains``) read."""

from __future__ import annotations

import re

from pycparser import c_ast, c_parser

_C_WORDS = frozenset({
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool", "const",
    "volatile", "restrict", "struct", "union", "enum", "sizeof", "_Alignof",
})
#: ``(name)`` or ``(name *)`` directly followed by the start of an operand: in text printed from
#: the front end's expression tree (``mdpoly.ir.scop.render_expr``) a parenthesized lone name is
#: always a cast, so ``name`` is a type (a typedef name pycparser must be told about).
_CAST_NAME = re.compile(r"(?<![\w)\]])\(\s*(?:(?:const|volatile)\s+)*([A-Za-z_]\w*)\s*(?:\*\s*(?:const\s*)?)*\)"
                        r"(?=\s*[\w(\-+*&!~.'\"])")


def typedef_names(text: str) -> frozenset[str]:
    """The type names ``text`` casts to that are not C keywords (typedef names)."""
    return frozenset(n for n in _CAST_NAME.findall(text) if n not in _C_WORDS)


def parse_expr(text: str, rendered: bool = True) -> c_ast.Node | None:
    """The C expression ``text`` as a c_ast tree, or ``None`` when pycparser cannot parse it.

    ``rendered``: ``text`` was printed by the front end (``render_expr``), so the typedef names
    it casts to are known (``typedef_names``) and declared first: without them pycparser reads
    ``(base)(x)`` as a call of ``base`` and prints it back as ``base(x)``.
    """
    types = "".join(f"typedef int {n};" for n in sorted(typedef_names(text))) if rendered else ""
    try:
        ast = c_parser.CParser().parse(f"{types} void mdp_f(void) {{ mdp_x = ({text}); }}")
    except c_parser.ParseError:  # text pycparser cannot parse alone: printed verbatim
        return None
    func = ast.ext[-1]
    return func.body.block_items[0].rvalue
