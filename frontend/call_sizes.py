"""Sizes from the translation unit: a function's size parameters -> the constants its callers pass.

Kernels usually take their sizes as parameters (``kernel_gemm(ni, nj, nk, ...)``) and ``main``
calls them with constants or with locals initialised from constants (``int ni = NI;``). When
every call of the function in the file passes the same constant for a parameter, that value is
the size the nest is tuned for. The generated code stays size-generic (tiles handle any
extent), so a call with another size elsewhere is still correct; the values only steer tuning.
Also a local of the nest's own function initialised from a constant and never assigned again.
"""

from __future__ import annotations

from collections.abc import Iterable

from pycparser import c_ast

from mdpoly.frontend.symbols import FUNC_DECLS, symbols_for


class CallSites(c_ast.NodeVisitor):
    """Every call of ``name`` (with the function it is in), and whether ``name`` escapes otherwise."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: list[tuple[c_ast.FuncCall, c_ast.FuncDef]] = []
        self.escapes = False
        self.current: c_ast.FuncDef | None = None

    def visit_FuncDef(self, node: c_ast.FuncDef) -> None:
        self.current = node
        self.visit(node.body)

    def visit_FuncCall(self, node: c_ast.FuncCall) -> None:
        if isinstance(node.name, c_ast.ID) and node.name.name == self.name and self.current is not None:
            self.calls.append((node, self.current))
        elif node.name is not None:
            self.visit(node.name)
        if node.args is not None:
            self.visit(node.args)

    def visit_ID(self, node: c_ast.ID) -> None:
        if node.name == self.name:
            self.escapes = True  # its address is taken: calls through pointers are unknown


class AssignedNames(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()
        self.inits: dict[str, c_ast.Node | None] = {}

    def visit_Assignment(self, node: c_ast.Assignment) -> None:
        if isinstance(node.lvalue, c_ast.ID):
            self.names.add(node.lvalue.name)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op in ("++", "--", "p++", "p--", "&") and isinstance(node.expr, c_ast.ID):
            self.names.add(node.expr.name)
        self.generic_visit(node)

    def visit_Decl(self, node: c_ast.Decl) -> None:
        if node.name:
            if node.name in self.inits:
                self.names.add(node.name)  # declared twice (shadowing): do not guess
            self.inits[node.name] = node.init
        self.generic_visit(node)


def int_value(node: c_ast.Node | None, enums: dict[str, int], locals_: AssignedNames, depth: int = 0) -> int | None:
    if node is None or depth > 8:
        return None
    if isinstance(node, c_ast.Constant) and "int" in node.type:
        text = node.value.rstrip("uUlL")
        try:
            return int(text, 16) if text[:2].lower() == "0x" else int(text, 8) if len(text) > 1 and text[0] == "0" \
                else int(text)
        except ValueError:
            return None
    if isinstance(node, c_ast.ID):
        if node.name in enums:
            return enums[node.name]
        if node.name in locals_.inits and node.name not in locals_.names:
            return int_value(locals_.inits[node.name], enums, locals_, depth + 1)
        return None
    if isinstance(node, c_ast.Cast):
        return int_value(node.expr, enums, locals_, depth + 1)
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        v = int_value(node.expr, enums, locals_, depth + 1)
        return None if v is None else (-v if node.op == "-" else v)
    if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*", "/"):
        a = int_value(node.left, enums, locals_, depth + 1)
        b = int_value(node.right, enums, locals_, depth + 1)
        if a is None or b is None or (node.op == "/" and b == 0):
            return None
        if node.op == "/":
            return abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)
        return a + b if node.op == "+" else a - b if node.op == "-" else a * b
    return None


def call_site_sizes(ast: c_ast.FileAST, func: c_ast.FuncDef, names: Iterable[str]) -> dict[str, int]:
    """The value of each of ``names`` (parameters or locals of ``func``) that is the same constant
    wherever it comes from: every call of ``func`` in the file for a parameter, the initialiser of
    a never-reassigned local."""
    wanted = list(names)
    out: dict[str, int] = {}
    fdecl = func.decl.type
    params = [p.name for p in fdecl.args.params] if isinstance(fdecl, FUNC_DECLS) and fdecl.args else []
    own = AssignedNames()
    own.visit(func.body)
    enums = symbols_for(ast, func, func.body).enum_values
    rest = []
    for name in wanted:
        if name in params:
            rest.append(name)
            continue
        v = int_value(c_ast.ID(name), enums, own)
        if v is not None:
            out[name] = v
    if not rest:
        return out
    finder = CallSites(str(func.decl.name))
    finder.visit(ast)
    if finder.escapes or not finder.calls:
        return out
    assigned = {id(caller): assigned_names(caller) for _, caller in finder.calls}
    for name in rest:
        if name in own.names:
            continue  # the function changes its own parameter before the nest may run
        k = params.index(name)
        values = set()
        for call, caller in finder.calls:
            args = call.args.exprs if call.args is not None else []
            v = int_value(args[k], enums, assigned[id(caller)]) if k < len(args) else None
            values.add(v)
        if len(values) == 1 and None not in values:
            out[name] = values.pop()  # type: ignore[assignment]
    return out


def assigned_names(func: c_ast.FuncDef) -> AssignedNames:
    a = AssignedNames()
    a.visit(func.body)
    return a
