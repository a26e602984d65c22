"""Member types of C structs: ``SymbolTable`` + struct definitions + ``a->b.c`` -> the member's type node.

Resolves typedef names (``typedef struct {...} Config;``, ``typedef struct node *Link;``), struct
and union tags defined anywhere at file scope (``struct s *p`` with ``struct s { ... }`` elsewhere)
and anonymous definitions inside a typedef. ``->`` needs a pointer (or array) to a struct, ``.``
a struct. Anything it cannot resolve is ``None``: the caller then leaves the expression alone.
"""

from __future__ import annotations

from typing import TypeAlias

from pycparser import c_ast

from mdpoly.frontend.symbols import SymbolTable

Aggregate: TypeAlias = c_ast.Struct | c_ast.Union


def struct_definitions(ast: c_ast.FileAST) -> dict[str, Aggregate]:
    """``"struct tag"``/``"union tag"`` -> its first definition with members, at any depth of ``ast``."""
    out: dict[str, Aggregate] = {}

    def walk(n: c_ast.Node) -> None:
        if isinstance(n, c_ast.Struct | c_ast.Union) and n.name and n.decls is not None:
            out.setdefault(f"{type(n).__name__.lower()} {n.name}", n)
        for _name, child in n.children():
            walk(child)

    walk(ast)
    return out


class MemberTypes:
    """Types of variables and member chains visible at one nest."""

    def __init__(self, symbols: SymbolTable, ast: c_ast.FileAST) -> None:
        self.symbols = symbols
        self.ast = ast
        self._structs: dict[str, Aggregate] | None = None

    @property
    def structs(self) -> dict[str, Aggregate]:
        """The file's struct and union definitions (looked for on first need)."""
        if self._structs is None:
            self._structs = struct_definitions(self.ast)
        return self._structs

    def unalias(self, t: c_ast.Node | None) -> c_ast.Node | None:
        """``t`` with typedef names at its top replaced by what they stand for."""
        seen: set[str] = set()
        while isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
            name = next((n for n in t.type.names if n in self.symbols.typedefs), None)
            if name is None or name in seen:
                return t
            seen.add(name)
            t = self.symbols.typedefs[name]
        return t

    def aggregate(self, t: c_ast.Node | None) -> Aggregate | None:
        """The struct or union (with its members) that type ``t`` names, else None."""
        t = self.unalias(t)
        if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.Struct | c_ast.Union):
            return None
        agg = t.type
        if agg.decls is None and agg.name:
            return self.structs.get(f"{type(agg).__name__.lower()} {agg.name}")
        return agg

    def type_of(self, node: c_ast.Node) -> c_ast.Node | None:
        """The declared type node of a variable or member chain (``p``, ``p->a``, ``c.d.e``)."""
        if isinstance(node, c_ast.ID):
            return self.symbols.decls.get(node.name)
        if not isinstance(node, c_ast.StructRef) or not isinstance(node.field, c_ast.ID):
            return None
        base = self.unalias(self.type_of(node.name))
        if node.type == "->":
            if not isinstance(base, c_ast.PtrDecl | c_ast.ArrayDecl):
                return None
            base = base.type
        agg = self.aggregate(base)
        if agg is None:
            return None
        for d in agg.decls or []:
            if isinstance(d, c_ast.Decl) and d.name == node.field.name:
                return d.type
        return None

    def is_aggregate(self, t: c_ast.Node | None) -> bool:
        return self.aggregate(t) is not None
