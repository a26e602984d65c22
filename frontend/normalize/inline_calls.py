"""Pure helper calls: nest copy + the file's functions -> the nest with ``g(a)`` replaced by ``g``'s expression.

Real programs factor a formula into a small function (``static float cnd(float d) { return 0.5f *
erfcf(-d * 0.70710678f); }``, a limiter with an early return, a clamp, a hash of a few shifts)
and call it in the hot loop; the extractor refuses any call it does not know to be pure
(``side-effect-call``). A ``static`` function of the file whose body ``helper_bodies.body_of``
turns into one expression -- straight-line code over scalar locals, early returns, reads of its
parameters, of its pointer parameters' elements and of globals, calls of pure library functions
or of other such helpers (not recursively) -- has no side effect, and its call is that
expression with each parameter replaced by its argument converted to the parameter's type, all
converted to the return type -- ``((float) (0.5f * erfcf(-((float) (d1)) * 0.70710678f)))`` --
exactly what the call computes (C converts each argument as if by assignment to the parameter,
and the returned value to the return type). A pointer parameter's element ``p[k]`` is the
argument's element: ``&a[e]`` gives ``a[e + k]``, ``a + e`` gives ``a[e + k]``, ``a`` gives
``a[k]``.

C evaluates each argument once, before the call; the expansion evaluates it where the helper
uses its value, possibly several times or, behind a condition, not at all. That is the same
value every time because the extractor accepts only arguments without side effects (no
assignment, ``++``, volatile read or impure call): each use reads the same memory, which the
helper never writes. A read the helper's ``if`` guards stays behind the condition (``c ? p[k] :
0``), so nothing is read that the call does not read. ``static`` matters: another definition
cannot replace the function at link time. Anything else is left as written, for the extractor to
refuse, and ``inline_pure_calls`` says why each helper left in the nest is none.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import declared_names, replace_top_down
from mdpoly.frontend.normalize.helper_bodies import (
    MAX_NODES,
    HelperBody,
    NotAHelper,
    body_of,
    converted,
    node_count,
)
from mdpoly.frontend.symbols import FUNC_DECLS, c_text

MAX_DEPTH = 4

NOT_STATIC = "it is not static, so another definition may replace it at link time"


@dataclass(frozen=True, slots=True)
class Helpers:
    """The file's functions: the ``bodies`` of its helpers, and why each other one is none."""

    bodies: dict[str, HelperBody]
    refused: dict[str, str]
    #: helper -> the globals it reads, through the helpers it calls too
    reads: dict[str, frozenset[str]]


@dataclass(frozen=True, slots=True)
class InlinedCalls:
    """What ``inline_pure_calls`` did: how many calls it expanded, and for each function of the
    file still called in the nest the reason it is no helper (name, reason)."""

    count: int
    refused: tuple[tuple[str, str], ...]


def _file_objects(ast: c_ast.FileAST) -> tuple[frozenset[str], frozenset[str]]:
    """The names of the file's objects and enumeration constants, and those that are volatile."""
    names: set[str] = set()
    volatile: set[str] = set()
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef):
            continue
        stack: list[c_ast.Node] = [ext]
        while stack:
            n = stack.pop()
            if isinstance(n, c_ast.Enumerator):
                names.add(n.name)
            stack.extend(child for _name, child in n.children())
        if isinstance(ext, c_ast.Decl) and ext.name and not isinstance(ext.type, FUNC_DECLS):
            names.add(ext.name)
            if "volatile" in (ext.quals or []) or "volatile" in c_text(ext.type).split():
                volatile.add(ext.name)
    return frozenset(names), frozenset(volatile)


def helpers_of(ast: c_ast.FileAST) -> Helpers:
    """The file's ``static`` functions whose value is one expression (``helper_bodies``), with
    the reason for each function defined in the file that is none: its body's (``it writes
    through pointer 'p'``), ``it is not static``, ``it calls 'g' (...)``, ``it is recursive``."""
    from mdpoly.frontend.scop import PURE_FUNCTIONS  # the extractor's list (imports this package)
    objects, volatile = _file_objects(ast)
    defs = {ext.decl.name: ext for ext in ast.ext if isinstance(ext, c_ast.FuncDef)}
    statics = frozenset(n for n, fd in defs.items() if "static" in fd.decl.storage)
    bodies: dict[str, HelperBody] = {}
    refused: dict[str, str] = {n: NOT_STATIC for n in defs if n not in statics}
    for name in statics:
        try:
            bodies[name] = body_of(defs[name], objects, volatile, PURE_FUNCTIONS, statics)
        except NotAHelper as e:
            refused[name] = e.reason
    changed = True
    while changed:  # a helper that calls a function that is none is none
        changed = False
        for name, body in list(bodies.items()):
            bad = sorted(c for c in body.calls if c not in bodies)
            if bad:
                refused[name] = f"it calls '{bad[0]}' ({refused[bad[0]]})"
                del bodies[name]
                changed = True
            elif name in _reachable(name, bodies):
                refused[name] = "it is recursive"
                del bodies[name]
                changed = True
    reads = {n: frozenset().union(*(bodies[m].globals for m in _reachable(n, bodies) | {n})) for n in bodies}
    return Helpers(bodies, refused, reads)


def _reachable(name: str, bodies: dict[str, HelperBody]) -> set[str]:
    """The helpers ``name``'s body calls, directly or not."""
    seen: set[str] = set()
    todo = list(bodies[name].calls)
    while todo:
        n = todo.pop()
        if n in seen or n not in bodies:
            continue
        seen.add(n)
        todo.extend(bodies[n].calls)
    return seen


def _element(arg: c_ast.Node, k: c_ast.Node) -> c_ast.Node:
    """``(arg)[k]``, spelled as a subscript of the array ``arg`` points into where it can be:
    ``(&a[e])[k]`` is ``a[e + k]``, ``(a + e)[k]`` is ``a[e + k]`` and ``(a - e)[k]`` is
    ``a[k - e]`` (the same address: ``x[y]`` is ``*(x + y)``)."""
    if isinstance(arg, c_ast.UnaryOp) and arg.op == "&" and isinstance(arg.expr, c_ast.ArrayRef):
        return c_ast.ArrayRef(arg.expr.name, c_ast.BinaryOp("+", arg.expr.subscript, k))
    if isinstance(arg, c_ast.BinaryOp) and arg.op == "+":
        return _element(arg.left, c_ast.BinaryOp("+", arg.right, k))
    if isinstance(arg, c_ast.BinaryOp) and arg.op == "-":
        return _element(arg.left, c_ast.BinaryOp("-", k, arg.right))
    return c_ast.ArrayRef(arg, k)


def _expanded(call: c_ast.FuncCall, helpers: dict[str, HelperBody], depth: int) -> c_ast.Node | None:
    assert isinstance(call.name, c_ast.ID)
    h = helpers[call.name.name]
    args = call.args.exprs if call.args is not None else []
    if len(args) != len(h.params) or depth > MAX_DEPTH:
        return None
    binds = {p.name: converted(p.type, copy.deepcopy(a)) for p, a in zip(h.params, args) if not p.pointer}
    pointers = {p.name: a for p, a in zip(h.params, args) if p.pointer}

    def bind(n: c_ast.Node) -> c_ast.Node | None:
        """The parameters, in one pass: an argument is never looked into (its names are the caller's)."""
        if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and n.name.name in pointers:
            sub = c_ast.Return(n.subscript)
            replace_top_down(sub, bind)
            return _element(copy.deepcopy(pointers[n.name.name]), sub.expr)
        if isinstance(n, c_ast.ID) and n.name in binds:
            return copy.deepcopy(binds[n.name])
        if isinstance(n, c_ast.ID) and n.name in pointers:  # passed on to a helper
            return copy.deepcopy(pointers[n.name])
        return None

    holder = c_ast.Return(copy.deepcopy(h.expr))
    replace_top_down(holder, bind)  # the parameters first: a nested helper's arguments hold them
    failed = False

    def rewrite(n: c_ast.Node) -> c_ast.Node | None:
        nonlocal failed
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in helpers:
            inner = _expanded(n, helpers, depth + 1)
            failed = failed or inner is None
            return inner if inner is not None else n
        return None

    replace_top_down(holder, rewrite)
    if failed or node_count(holder.expr) > MAX_NODES:
        return None
    return converted(h.ret, holder.expr)


def _set_coord(n: c_ast.Node, coord: object) -> None:
    """Every node of an inlined body is located at the call (diagnostics point there)."""
    n.coord = coord
    for _name, child in n.children():
        _set_coord(child, coord)


def inline_pure_calls(nest: c_ast.Node, ast: c_ast.FileAST, shadowed: set[str]) -> InlinedCalls:
    """Replace, in ``nest`` (a copy, edited in place), each call of a pure helper.
    ``shadowed``: names the enclosing function declares (a local ``cnd`` hides the helper, a
    local ``g`` the global a helper reads)."""
    calls = [n for n in _calls(nest) if isinstance(n.name, c_ast.ID)]
    if not calls:
        return InlinedCalls(0, ())
    found = helpers_of(ast)
    hidden = shadowed | declared_names(nest)
    refused = {n: r for n, r in found.refused.items() if n not in hidden}
    helpers: dict[str, HelperBody] = {}
    for n, h in found.bodies.items():
        covered = sorted(found.reads[n] & hidden)
        if covered:
            refused[n] = f"it reads the global '{covered[0]}', which a local of that name hides here"
        elif n not in hidden:
            helpers[n] = h
    count = 0

    def rewrite(n: c_ast.Node) -> c_ast.Node | None:
        nonlocal count
        if not (isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in helpers):
            return None
        given, wanted = len(n.args.exprs) if n.args is not None else 0, len(helpers[n.name.name].params)
        new = _expanded(n, helpers, 1) if given == wanted else None
        if new is None:
            refused.setdefault(n.name.name, f"the call passes {given} arguments for {wanted} parameters"
                               if given != wanted else "its expansion nests helpers too deeply or grows too large")
            return None
        replace_top_down(new, rewrite)  # helper calls in the arguments
        _set_coord(new, n.coord)
        count += 1
        return new

    replace_top_down(nest, rewrite)
    left = {n.name.name for n in _calls(nest) if isinstance(n.name, c_ast.ID)}
    return InlinedCalls(count, tuple(sorted((n, r) for n, r in refused.items() if n in left)))


def _calls(n: c_ast.Node) -> list[c_ast.FuncCall]:
    out: list[c_ast.FuncCall] = []
    stack = [n]
    while stack:
        x = stack.pop()
        if isinstance(x, c_ast.FuncCall):
            out.append(x)
        stack.extend(child for _name, child in x.children())
    return out
