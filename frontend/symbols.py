"""Declarations visible at a loop nest: pycparser ``FileAST`` + ``FuncDef`` -> ``SymbolTable``.

Used by ``mdpoly.frontend.scop`` to find each touched variable's element type and declared shape
(globals, function parameters, locals; ``float A[N][M]``, ``float *p``, ``double (*A)[64]``,
VLA parameters ``float A[n][m]``). Typedefs are resolved for classification.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pycparser import c_ast
from pycparserext.ext_c_parser import FuncDeclExt

from mdpoly.frontend.c_text import SourceGenerator
from mdpoly.ir.scop import Variable

FUNC_DECLS = (c_ast.FuncDecl, FuncDeclExt)

_QUALS = frozenset({"const", "volatile", "restrict", "__restrict", "__restrict__", "_Atomic"})
_RESTRICT = frozenset({"restrict", "__restrict", "__restrict__"})


def c_text(node: c_ast.Node) -> str:
    """C text of an expression or type node (macros appear expanded)."""
    return SourceGenerator().visit(node)


@dataclass
class SymbolTable:
    """Names -> declarations, innermost scope last; built once per function, read-only after."""

    decls: dict[str, c_ast.Node] = field(default_factory=dict)
    typedefs: dict[str, c_ast.Node] = field(default_factory=dict)
    enums: dict[str, str] = field(default_factory=dict)
    enum_values: dict[str, int] = field(default_factory=dict)  # enumerators whose value is known
    params: set[str] = field(default_factory=set)  # names that denote the function's parameters
    locals: set[str] = field(default_factory=set)  # names declared in the function's body
    addressed: set[str] = field(default_factory=set)  # names whose address ``&x`` the function takes

    def variable(self, name: str) -> Variable | None:
        node = self.decls.get(name)
        if node is None:
            return None
        var = self._variable(name, node, name in self.params)
        if (var is not None and var.kind == "scalar" and (name in self.params or name in self.locals)
                and name not in self.addressed):
            var = replace(var, alias="private")
        return var

    def is_volatile(self, name: str) -> bool:
        """Whether ``name`` is declared ``volatile`` at some level (or through a typedef)."""
        node = self.decls.get(name)
        return node is not None and self.type_is_volatile(node)

    def type_is_volatile(self, typ: c_ast.Node) -> bool:
        t: c_ast.Node | None = typ
        seen: set[str] = set()
        while t is not None:
            if "volatile" in (getattr(t, "quals", None) or []) or "volatile" in (getattr(t, "dim_quals", None) or []):
                return True
            if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
                names = t.type.names
                alias = next((n for n in names if n in self.typedefs and n not in seen), None)
                if alias is None:
                    return False
                seen.add(alias)
                t = self.typedefs[alias]
                continue
            t = getattr(t, "type", None)
        return False

    def _variable(self, name: str, typ: c_ast.Node, is_param: bool = False) -> Variable | None:
        """``kind``: ``array`` (dense, first level an array), ``pointer`` (dense behind one
        pointer, e.g. ``float (*A)[64]``), ``indirect`` (a pointer at a deeper level: ``float **A``,
        ``float *rows[N]``); ``alias`` as in ``mdpoly.ir.scop.AliasClass``."""
        shape: list[str] = []
        kind = "scalar"
        restrict: list[bool] = []  # one entry per level that is a pointer at run time
        t = typ
        while True:
            if isinstance(t, c_ast.ArrayDecl):
                if kind == "scalar":
                    kind = "array"
                    if is_param:  # an array parameter is a pointer
                        restrict.append(bool(_RESTRICT & set(t.dim_quals or [])))
                shape.append(c_text(t.dim) if t.dim is not None else "")
                t = t.type
            elif isinstance(t, c_ast.PtrDecl):
                kind = "pointer" if kind == "scalar" else "indirect"
                restrict.append(bool(_RESTRICT & set(t.quals or [])))
                shape.append("")
                t = t.type
            else:
                break
        if not isinstance(t, c_ast.TypeDecl):
            return None
        base = t.type
        if isinstance(base, c_ast.IdentifierType):
            names = [n for n in base.names if n not in _QUALS]
            elem = " ".join(names)
        elif isinstance(base, c_ast.Struct | c_ast.Union | c_ast.Enum):
            elem = f"{type(base).__name__.lower()} {base.name or ''}".strip()
        else:
            return None
        alias = "object"
        if restrict:
            alias = "restrict" if all(restrict) else "pointer"
        return Variable(name, elem, tuple(shape), kind, self.resolve(elem),  # type: ignore[arg-type]
                        SourceGenerator()._generate_type(typ), alias)  # type: ignore[arg-type]

    def resolve(self, elem: str) -> str:
        """The builtin type a typedef name stands for (``real`` -> ``double``)."""
        seen = set()
        while elem in self.typedefs and elem not in seen:
            seen.add(elem)
            t = self.typedefs[elem]
            if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
                elem = " ".join(n for n in t.type.names if n not in _QUALS)
            else:
                break
        return elem


def _add_decl(table: SymbolTable, node: c_ast.Node) -> None:
    if isinstance(node, c_ast.Typedef):
        table.typedefs[node.name] = node.type
    elif isinstance(node, c_ast.Decl):
        if node.name and not isinstance(node.type, FUNC_DECLS):
            table.decls[node.name] = node.type
            table.params.discard(node.name)
        _add_enums(table, node.type)


def _add_enums(table: SymbolTable, typ: c_ast.Node) -> None:
    t = typ
    while isinstance(t, c_ast.TypeDecl | c_ast.ArrayDecl | c_ast.PtrDecl):
        t = t.type
    if isinstance(t, c_ast.Enum) and t.values is not None:
        nxt: int | None = 0
        for v in t.values.enumerators:
            table.enums[v.name] = v.name
            value = _enum_value(v.value, table.enum_values) if v.value is not None else nxt
            if value is not None:
                table.enum_values[v.name] = value
            nxt = value + 1 if value is not None else None


def _enum_value(node: c_ast.Node, known: dict[str, int]) -> int | None:
    """An enumerator's integer constant expression (literals, earlier enumerators, + - * << ()),
    or ``None`` when it is something else."""
    if isinstance(node, c_ast.Constant) and "int" in node.type:
        text = node.value.rstrip("uUlL")
        try:
            return int(text, 16) if text[:2].lower() == "0x" else int(text, 8) if len(text) > 1 and text[0] == "0" \
                else int(text)
        except ValueError:
            return None
    if isinstance(node, c_ast.ID):
        return known.get(node.name)
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        v = _enum_value(node.expr, known)
        return None if v is None else (-v if node.op == "-" else v)
    if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*", "<<"):
        a, b = _enum_value(node.left, known), _enum_value(node.right, known)
        if a is None or b is None:
            return None
        return a + b if node.op == "+" else a - b if node.op == "-" else a * b if node.op == "*" else a << b
    return None


class _LocalCollector(c_ast.NodeVisitor):
    """Every declaration in a function body, except those inside ``skip`` (the nest itself)."""

    def __init__(self, table: SymbolTable, skip: c_ast.Node) -> None:
        self.table = table
        self.skip = skip

    def visit_Decl(self, node: c_ast.Decl) -> None:
        _add_decl(self.table, node)
        if node.name:
            self.table.locals.add(node.name)
        self.generic_visit(node)

    def visit_Typedef(self, node: c_ast.Typedef) -> None:
        _add_decl(self.table, node)

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op == "&":
            inner = node.expr
            while isinstance(inner, c_ast.ArrayRef | c_ast.StructRef):
                inner = inner.name
            if isinstance(inner, c_ast.ID):
                self.table.addressed.add(inner.name)
        self.generic_visit(node)

    def generic_visit(self, node: c_ast.Node) -> None:
        if node is self.skip:
            return
        for child in node:
            self.visit(child)


def add_local_decl(table: SymbolTable, node: c_ast.Decl) -> None:
    """Add a declaration of the function body (a local) to ``table``."""
    _add_decl(table, node)
    if node.name:
        table.locals.add(node.name)


def symbols_for(ast: c_ast.FileAST, func: c_ast.FuncDef, nest: c_ast.Node) -> SymbolTable:
    """Globals, then ``func``'s parameters, then its locals outside ``nest`` (later names win)."""
    table = SymbolTable()
    for ext in ast.ext:
        if isinstance(ext, c_ast.Decl | c_ast.Typedef):
            _add_decl(table, ext)
    fdecl = func.decl.type
    if isinstance(fdecl, FUNC_DECLS) and fdecl.args is not None:
        for p in fdecl.args.params:
            if isinstance(p, c_ast.Decl) and p.name:
                table.decls[p.name] = p.type
                table.params.add(p.name)
    _LocalCollector(table, nest).visit(func.body)
    return table
