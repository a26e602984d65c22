"""Pure helper calls: nest copy + the file's functions -> the nest with ``g(a)`` replaced by ``g``'s expression.

Real programs factor a formula into a small function (``static float cnd(float d) { return 0.5f *
erfcf(-d * 0.70710678f); }``) and call it in the hot loop; the extractor refuses any call it does
not know to be pure (``side-effect-call``). A call of a ``static`` function of the file whose body
is one ``return e;``, whose parameters and result are arithmetic scalars, and whose ``e`` names
only its parameters, constants and pure library functions (or other such helpers, to a small
depth) has no side effect and reads no memory: its value is ``e`` with each parameter replaced by
its argument converted to the parameter's type, converted to the return type --
``((float) (0.5f * erfcf(-((float) (d1)) * 0.70710678f)))`` -- exactly what the call computes
(C converts each argument as if by assignment to the parameter, and the returned value to the
return type; an argument used twice is evaluated twice, the same value, because the extractor
accepts only side-effect-free arguments). ``static`` matters: another definition cannot replace
it at link time. Anything else is left as written, for the extractor to refuse.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import declared_names, replace_top_down
from mdpoly.frontend.symbols import FUNC_DECLS

MAX_DEPTH = 4


def _scalar(t: c_ast.Node) -> bool:
    return isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)


def _typename(t: c_ast.TypeDecl) -> c_ast.Typename:
    inner = c_ast.TypeDecl(None, [q for q in t.quals if q != "const"], None, copy.deepcopy(t.type))
    return c_ast.Typename(None, [], None, inner)


@dataclass(frozen=True, slots=True)
class _Helper:
    """One inlinable function: its parameters (name, type) and return type and expression."""

    params: tuple[tuple[str, c_ast.TypeDecl], ...]
    ret: c_ast.TypeDecl
    expr: c_ast.Node


def _pure_expression(e: c_ast.Node, params: set[str], helpers: set[str], pure: frozenset[str]) -> bool:
    if isinstance(e, c_ast.Constant):
        return True
    if isinstance(e, c_ast.ID):
        return e.name in params
    if isinstance(e, c_ast.UnaryOp):
        return e.op in ("-", "+", "!", "~") and _pure_expression(e.expr, params, helpers, pure)
    if isinstance(e, c_ast.BinaryOp):
        return all(_pure_expression(x, params, helpers, pure) for x in (e.left, e.right))
    if isinstance(e, c_ast.TernaryOp):
        return all(_pure_expression(x, params, helpers, pure) for x in (e.cond, e.iftrue, e.iffalse))
    if isinstance(e, c_ast.Cast):
        return _scalar(e.to_type.type) and _pure_expression(e.expr, params, helpers, pure)
    if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID):
        args = e.args.exprs if e.args is not None else []
        return (e.name.name in pure or e.name.name in helpers) and all(
            _pure_expression(a, params, helpers, pure) for a in args)
    return False


def helpers_of(ast: c_ast.FileAST) -> dict[str, _Helper]:
    """The file's ``static`` functions whose body is one pure ``return e;`` over scalar parameters."""
    from mdpoly.frontend.scop import PURE_FUNCTIONS  # the extractor's list (imports this package)
    defs: dict[str, c_ast.FuncDef] = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef) and "static" in ext.decl.storage:
            defs[ext.decl.name] = ext
    out: dict[str, _Helper] = {}
    for name, fd in defs.items():
        ftype = fd.decl.type
        body = fd.body.block_items or []
        if not isinstance(ftype, FUNC_DECLS) or not _scalar(ftype.type) or len(body) != 1 \
                or not isinstance(body[0], c_ast.Return) or body[0].expr is None or fd.param_decls:
            continue
        params: list[tuple[str, c_ast.TypeDecl]] = []
        ok = True
        for p in (ftype.args.params if ftype.args is not None else []):
            if isinstance(p, c_ast.Typename) and _scalar(p.type) and p.type.type.names == ["void"] \
                    and len(ftype.args.params) == 1:
                break  # (void)
            if not isinstance(p, c_ast.Decl) or not _scalar(p.type) or "volatile" in p.type.quals or not p.name:
                ok = False
                break
            params.append((p.name, p.type))
        if ok and ftype.type.type.names != ["void"]:
            out[name] = _Helper(tuple(params), ftype.type, body[0].expr)
    names = set(out)
    return {n: h for n, h in out.items()
            if _pure_expression(h.expr, {p for p, _ in h.params}, names, PURE_FUNCTIONS)}


def _expanded(call: c_ast.FuncCall, helpers: dict[str, _Helper], depth: int) -> c_ast.Node | None:
    assert isinstance(call.name, c_ast.ID)
    h = helpers[call.name.name]
    args = call.args.exprs if call.args is not None else []
    if len(args) != len(h.params) or depth > MAX_DEPTH:
        return None
    binds = {p: c_ast.Cast(_typename(t), copy.deepcopy(a), coord=call.coord) for (p, t), a in zip(h.params, args)}
    holder = c_ast.Return(copy.deepcopy(h.expr))
    replace_top_down(holder, lambda n: copy.deepcopy(binds[n.name]) if isinstance(n, c_ast.ID) and n.name in binds
                     else None)  # the parameters first: a nested helper's arguments hold them
    failed = False

    def rewrite(n: c_ast.Node) -> c_ast.Node | None:
        nonlocal failed
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in helpers:
            inner = _expanded(n, helpers, depth + 1)
            failed = failed or inner is None
            return inner if inner is not None else n
        return None

    replace_top_down(holder, rewrite)
    if failed:
        return None
    return c_ast.Cast(_typename(h.ret), holder.expr, coord=call.coord)


def _set_coord(n: c_ast.Node, coord: object) -> None:
    """Every node of an inlined body is located at the call (diagnostics point there)."""
    n.coord = coord
    for _name, child in n.children():
        _set_coord(child, coord)


def inline_pure_calls(nest: c_ast.Node, ast: c_ast.FileAST, shadowed: set[str]) -> int:
    """Replace, in ``nest`` (a copy, edited in place), each call of a pure helper; the count.
    ``shadowed``: names the enclosing function declares (a local ``cnd`` hides the helper)."""
    calls = [n for n in _calls(nest) if isinstance(n.name, c_ast.ID)]
    if not calls:
        return 0
    helpers = {n: h for n, h in helpers_of(ast).items() if n not in shadowed | declared_names(nest)}
    count = 0

    def rewrite(n: c_ast.Node) -> c_ast.Node | None:
        nonlocal count
        if not (isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in helpers):
            return None
        new = _expanded(n, helpers, 1)
        if new is None:
            return None
        replace_top_down(new, rewrite)  # helper calls in the arguments
        _set_coord(new, n.coord)
        count += 1
        return new

    replace_top_down(nest, rewrite)
    return count


def _calls(n: c_ast.Node) -> list[c_ast.FuncCall]:
    out: list[c_ast.FuncCall] = []
    stack = [n]
    while stack:
        x = stack.pop()
        if isinstance(x, c_ast.FuncCall):
            out.append(x)
        stack.extend(child for _name, child in x.children())
    return out
