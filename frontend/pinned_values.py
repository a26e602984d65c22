"""Values the file pins: a scalar a generated region reads -> the constant it holds at every call.

A sequential build inlines a kernel into its caller and sees the sizes it is called with
(``km.dim = 4; km.k = 16;``): it unrolls a 4-long inner loop completely and vectorizes across it.
An OpenMP region is outlined into a function of its own that reads those values from memory and
runs the same loops generically (k-means' assignment step ran 1.9x slower per thread on gcc 12).
The generated code gets the values back as a specialised copy under a run-time test
(``if (dim == 4) { const int dim = 4; ... } else { ... }``), so this analysis only has to guess
well: a wrong guess runs the generic copy. The cost model also takes a pinned size as the size it
weighs (``analyze._known_sizes``), so a nest of 4 x 16 iterations is kept at generation time.

Where a value comes from:
  * a parameter of the nest's function: every call of the function in the file passes the same
    constant (directly, through a never-reassigned local, through a member every store sets, or
    through the caller's own pinned parameter);
  * a never-reassigned local of the function initialised with a constant;
  * a struct member ``p->f`` / ``s.f``: every assignment to a member named ``f`` in the file (and
    every designated initializer ``.f = ...``) stores the same constant, and none is compound,
    incremented or has its address taken.

Only integers of magnitude 1..64 are pinned: trip counts and strides a compiler unrolls or
vectorizes without remainder. Floating constants were tried (``soft2 = 0.01f``, for the value range
of ``sqrtf``'s argument) and gained nothing measurable on the 16-core host (n-body 2.83x vs 2.80x
at 2 threads), so they are left alone: a second copy of the code costs compile time and size.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pycparser import c_ast

from mdpoly.frontend.call_sizes import AssignedNames, CallSites, assigned_names, int_value
from mdpoly.frontend.symbols import FUNC_DECLS, symbols_for

#: The largest integer magnitude pinned: trip counts and strides a compiler unrolls or vectorizes whole.
MAX_PINNED_INT = 64

#: How many callers deep a parameter's value is followed (``main`` -> ``step`` -> ``kernel``).
_MAX_DEPTH = 3

_IDENT = re.compile(r"[A-Za-z_]\w*")
_MEMBER = re.compile(r"(?:[A-Za-z_]\w*)\s*(?:->|\.)\s*([A-Za-z_]\w*)")


def pinned_values(ast: c_ast.FileAST, func: c_ast.FuncDef, sources: Mapping[str, str]) -> dict[str, str]:
    """For each model name of ``sources`` (-> the C expression it stands for: ``soft2``,
    ``km->dim``), the C literal the file pins it to, where it pins one worth specialising."""
    values = _Values(ast)
    out: dict[str, str] = {}
    for name, expr in sources.items():
        expr = expr.strip()
        literal: str | None = None
        if _IDENT.fullmatch(expr):
            literal = values.of_name(func, expr, 0)
        else:
            member = _MEMBER.fullmatch(expr)
            if member is not None:
                literal = values.of_field(member.group(1))
        if literal is not None and _worth_pinning(literal):
            out[name] = literal
    return out


def _worth_pinning(literal: str) -> bool:
    try:
        value = int(literal)
    except ValueError:
        return False   # a floating constant
    return 0 < abs(value) <= MAX_PINNED_INT


def _params(func: c_ast.FuncDef) -> list[str]:
    fdecl = func.decl.type
    if isinstance(fdecl, FUNC_DECLS) and fdecl.args:
        return [p.name for p in fdecl.args.params if isinstance(p, c_ast.Decl)]
    return []


class _Values:
    """The literals of one file's expressions, with what it learns per function kept."""

    def __init__(self, ast: c_ast.FileAST) -> None:
        self.ast = ast
        self.enums: dict[int, dict[str, int]] = {}
        self.assigned: dict[int, AssignedNames] = {}
        self.fields: _FieldStores | None = None
        self.collecting = False

    def locals_of(self, func: c_ast.FuncDef) -> AssignedNames:
        if id(func) not in self.assigned:
            self.assigned[id(func)] = assigned_names(func)
        return self.assigned[id(func)]

    def literal(self, node: c_ast.Node | None, func: c_ast.FuncDef, depth: int) -> str | None:
        """The C literal ``node`` (an expression in ``func``) always has: an integer constant
        expression, a floating constant (signed), a never-reassigned local initialised with
        one, or a parameter of ``func`` that its callers pin."""
        if node is None:
            return None
        if id(func) not in self.enums:
            self.enums[id(func)] = symbols_for(self.ast, func, func.body).enum_values
        locals_ = self.locals_of(func)
        whole = int_value(node, self.enums[id(func)], locals_)
        if whole is not None:
            return str(whole)
        if isinstance(node, c_ast.Constant) and node.type in ("float", "double", "long double"):
            return node.value
        if isinstance(node, c_ast.UnaryOp) and node.op == "-":
            inner = self.literal(node.expr, func, depth)
            return None if inner is None or inner.startswith("-") else f"-{inner}"
        if isinstance(node, c_ast.ID):
            return self.of_name(func, node.name, depth + 1)
        if isinstance(node, c_ast.StructRef) and isinstance(node.field, c_ast.ID):
            return self.of_field(node.field.name)
        return None

    def of_name(self, func: c_ast.FuncDef, name: str, depth: int) -> str | None:
        """The literal a local or parameter ``name`` of ``func`` holds wherever the nest may run."""
        own = self.locals_of(func)
        if depth > _MAX_DEPTH or name in own.names:
            return None   # too deep, or assigned (or its address taken) in the function
        params = _params(func)
        if name not in params:
            return self.literal(own.inits.get(name), func, depth) if name in own.inits else None
        if name in own.inits:
            return None   # shadowed by a local of the same name: do not guess
        finder = CallSites(str(func.decl.name))
        finder.visit(self.ast)
        if finder.escapes or not finder.calls:
            return None
        k = params.index(name)
        values: set[str | None] = set()
        for call, caller in finder.calls:
            args = call.args.exprs if call.args is not None else []
            values.add(self.literal(args[k], caller, depth) if k < len(args) else None)
        if len(values) != 1 or None in values:
            return None
        return values.pop()

    def of_field(self, field: str) -> str | None:
        if self.collecting:
            return None   # a member's value stored into a member: not followed
        if self.fields is None:
            self.collecting = True
            try:
                self.fields = _FieldStores(self)
            finally:
                self.collecting = False
        return self.fields.value(field)


class _FieldStores(c_ast.NodeVisitor):
    """Every store to a struct member, by member name: the literals stored, or None when one
    is not a constant (a compound assignment, ``++``, an address taken, any other value)."""

    def __init__(self, values: _Values) -> None:
        self.values = values
        self.stores: dict[str, set[str | None]] = {}
        self.func: c_ast.FuncDef | None = None
        self.visit(values.ast)

    def value(self, field: str) -> str | None:
        stored = self.stores.get(field, set())
        return next(iter(stored)) if len(stored) == 1 and None not in stored else None

    def _store(self, field: str, value: str | None) -> None:
        self.stores.setdefault(field, set()).add(value)

    def visit_FuncDef(self, node: c_ast.FuncDef) -> None:
        self.func = node
        self.visit(node.body)
        self.func = None

    def visit_Assignment(self, node: c_ast.Assignment) -> None:
        if isinstance(node.lvalue, c_ast.StructRef) and isinstance(node.lvalue.field, c_ast.ID):
            value = None
            if node.op == "=" and self.func is not None:
                value = self.values.literal(node.rvalue, self.func, 0)
            self._store(node.lvalue.field.name, value)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op in ("++", "--", "p++", "p--", "&") and isinstance(node.expr, c_ast.StructRef) \
                and isinstance(node.expr.field, c_ast.ID):
            self._store(node.expr.field.name, None)
        self.generic_visit(node)

    def visit_NamedInitializer(self, node: c_ast.NamedInitializer) -> None:
        if len(node.name) == 1 and isinstance(node.name[0], c_ast.ID):
            value = None
            if self.func is not None:
                value = self.values.literal(node.expr, self.func, 0)
            elif isinstance(node.expr, c_ast.Constant):
                value = node.expr.value.rstrip("uUlL") if "int" in node.expr.type else node.expr.value
            self._store(node.name[0].name, value)
        self.generic_visit(node)
