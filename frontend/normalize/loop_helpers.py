"""Helpers with loops: nest copy + the file's functions -> the nest with ``y[i] = dot(&A[i*n], x, n)``
as the helper's statements in place, followed by ``y[i] = <its result>``.

Real programs factor a reduction into a function and call it in the hot loop::

    static float dot(const float *a, const float *b, int n)
    { float s = 0.0f; for (int k = 0; k < n; k++) s += a[k] * b[k]; return s; }
    ...
    for (int i = 0; i < m; i++) y[i] = dot(&A[(size_t)i * n], x, n);

``inline_calls`` expands only helpers whose body is one expression; a loop makes none. Here a
``static`` function whose body is declarations and statements ending in its only ``return e;``
-- loops included -- that writes nothing but its own locals and scalar parameters (no write
through a pointer parameter, to a global or through any other pointer; no ``goto``, label,
``static`` local or address taken; no call but of pure library functions or the file's other
functions, which later passes judge) is expanded where a statement calls it: the statement's
block gets, before the statement, each scalar parameter as a local set to its argument
(converted to the parameter's type, as C passes it), each pointer parameter as a local pointer
set to its argument (``local_pointers`` then reads ``a[k]`` as ``A[i*n + k]``), the body with its
names given a prefix of their own (``mdp_h1_s``) and its ``return e;`` as ``T mdp_h1_ret = e;``
(converted to the return type), and the call becomes ``mdp_h1_ret``.

Exact: C evaluates the arguments, then runs the body on copies of them, then uses the value; the
expansion does the same in the same order, and the function writes no memory the statement
reads, so running it before the rest of the statement changes nothing. Only calls evaluated
unconditionally are expanded (not behind ``&&``, ``||`` or ``?:``), in a statement that is an
assignment, a declaration's initialiser or an ``if``'s condition and has no other side effect
than its own assignment; each argument must have no side effect.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import replace_top_down, walk_nodes
from mdpoly.frontend.symbols import FUNC_DECLS, c_text

#: the largest body (in AST nodes) expanded at one call
MAX_NODES = 600
_PREFIX = "mdp_h"


@dataclass(frozen=True, slots=True)
class LoopHelper:
    """A function expanded at its calls: its definition and its parameters' declarations;
    ``procedure``: a ``void`` function called as a statement (``procedure``'s rules)."""

    definition: c_ast.FuncDef
    params: tuple[c_ast.Decl, ...]
    procedure: bool = False


def _is_pointer(decl: c_ast.Decl) -> bool:
    return isinstance(decl.type, c_ast.PtrDecl) and isinstance(decl.type.type, c_ast.TypeDecl)


def _scalar(decl: c_ast.Decl) -> bool:
    return isinstance(decl.type, c_ast.TypeDecl) and isinstance(decl.type.type, c_ast.IdentifierType)


def _parameters(decl: c_ast.Decl) -> list[c_ast.Decl] | None:
    """A function's parameters (``(void)`` is none), or None where one is not a named scalar or
    pointer to a scalar."""
    params: list[c_ast.Decl] = []
    for p in (decl.type.args.params if decl.type.args is not None else []):
        if isinstance(p, c_ast.Typename) and c_text(p).strip() == "void":
            continue
        if not isinstance(p, c_ast.Decl) or not p.name or not (_scalar(p) or _is_pointer(p)):
            return None
        params.append(p)
    return params


def loop_helper(fd: c_ast.FuncDef) -> LoopHelper | None:
    """``fd`` as a loop helper, or None (the cases ``inline_calls`` handles, and any other)."""
    decl = fd.decl
    if "static" not in (decl.storage or []) or not isinstance(decl.type, FUNC_DECLS):
        return None
    ret = decl.type.type
    if not (isinstance(ret, c_ast.TypeDecl) and isinstance(ret.type, c_ast.IdentifierType)) \
            or ret.type.names == ["void"]:
        return None
    params = _parameters(decl)
    if params is None:
        return None
    items = fd.body.block_items or []
    if not items or not isinstance(items[-1], c_ast.Return) or items[-1].expr is None:
        return None
    nodes = walk_nodes(fd.body)
    if not any(isinstance(n, c_ast.For | c_ast.While | c_ast.DoWhile) for n in nodes) or len(nodes) > MAX_NODES:
        return None   # no loop: one expression, ``inline_calls``'s case
    if sum(isinstance(n, c_ast.Return) for n in nodes) != 1:
        return None
    pointers = {p.name for p in params if _is_pointer(p)}
    locals_ = {n.name for n in nodes if isinstance(n, c_ast.Decl) and n.name} | {p.name for p in params}
    for n in nodes:
        if isinstance(n, c_ast.Goto | c_ast.Label | c_ast.Switch | c_ast.FuncDef):
            return None
        if isinstance(n, c_ast.Decl) and ("static" in (n.storage or []) or not isinstance(n.type, c_ast.TypeDecl)):
            return None   # a static local, or a local array or pointer
        if isinstance(n, c_ast.UnaryOp) and n.op == "&":
            return None
        target: c_ast.Node | None = None
        if isinstance(n, c_ast.Assignment):
            target = n.lvalue
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
            target = n.expr
        if target is not None and not (isinstance(target, c_ast.ID) and target.name in locals_
                                       and target.name not in pointers):
            return None   # a write through a pointer, to a global, or a pointer parameter moved
    return LoopHelper(fd, tuple(params))


#: element types of a procedure's pointer parameters (``float *row``): arithmetic, so the pointer
#: becomes a local pointer into an array (a struct's is a struct pointer, which stays a call)
_ARITHMETIC = frozenset({"char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
                         "size_t", "ptrdiff_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
                         "uint32_t", "uint64_t"})


def _arithmetic(decl: c_ast.Decl) -> bool:
    """A scalar or a pointer to one of an arithmetic type."""
    t = decl.type.type if isinstance(decl.type, c_ast.PtrDecl) else decl.type
    return (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)
            and set(t.type.names) <= _ARITHMETIC)


def procedure(fd: c_ast.FuncDef) -> LoopHelper | None:
    """``fd`` as a procedure (a ``static void`` function with a loop, called as a statement), or
    None: scalar and pointer parameters of arithmetic types, no ``return`` but a last ``return;``,
    no ``goto``, label, ``switch``, ``static`` local, local array or address taken."""
    decl = fd.decl
    if "static" not in (decl.storage or []) or not isinstance(decl.type, FUNC_DECLS):
        return None
    ret = decl.type.type
    if not (isinstance(ret, c_ast.TypeDecl) and isinstance(ret.type, c_ast.IdentifierType)
            and ret.type.names == ["void"] and not ret.quals):
        return None
    params = _parameters(decl)
    if params is None or not all(_arithmetic(p) for p in params):
        return None
    items = list(fd.body.block_items or [])
    if items and isinstance(items[-1], c_ast.Return) and items[-1].expr is None:
        items.pop()
    nodes = [n for item in items for n in walk_nodes(item)]
    if not any(isinstance(n, c_ast.For | c_ast.While | c_ast.DoWhile) for n in nodes) or len(nodes) > MAX_NODES:
        return None   # no loop: its statements are no nest of their own
    for n in nodes:
        if isinstance(n, c_ast.Return | c_ast.Goto | c_ast.Label | c_ast.Switch | c_ast.FuncDef):
            return None
        if isinstance(n, c_ast.Decl) and ("static" in (n.storage or [])
                                          or not isinstance(n.type, c_ast.TypeDecl | c_ast.PtrDecl)):
            return None   # a static local or a local array
        if isinstance(n, c_ast.UnaryOp) and n.op == "&":
            return None
    return LoopHelper(fd, tuple(params), procedure=True)


def _functions_of(ast: c_ast.FileAST, kind: Callable[[c_ast.FuncDef], LoopHelper | None]) -> dict[str, LoopHelper]:
    """The file's functions that ``kind`` accepts, by name."""
    found = ((ext.decl.name, kind(ext)) for ext in ast.ext if isinstance(ext, c_ast.FuncDef))
    return {name: h for name, h in found if h is not None}


def procedures_of(ast: c_ast.FileAST) -> dict[str, LoopHelper]:
    """The file's procedures by name."""
    return _functions_of(ast, procedure)


def loop_helpers_of(ast: c_ast.FileAST) -> dict[str, LoopHelper]:
    """The file's loop helpers by name."""
    return _functions_of(ast, loop_helper)


def _free_names(h: LoopHelper) -> set[str]:
    """The names ``h``'s body reads that are not its own (globals, functions, enumeration
    constants): a local of the caller's with one of those names would capture it."""
    nodes = walk_nodes(h.definition.body)
    own = {n.name for n in nodes if isinstance(n, c_ast.Decl) and n.name} | {p.name for p in h.params}
    return {n.name for n in nodes if isinstance(n, c_ast.ID)} - own


def _pure_argument(arg: c_ast.Node) -> bool:
    return not any(isinstance(n, c_ast.Assignment | c_ast.FuncCall)
                   or (isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--")) for n in walk_nodes(arg))


def _address_of_object(arg: c_ast.Node) -> bool:
    """``&x`` or ``&s.f``: a pointer to an object, not into an array (``&a[i]``)."""
    return isinstance(arg, c_ast.UnaryOp) and arg.op == "&" and isinstance(arg.expr, c_ast.ID | c_ast.StructRef)


def _unconditional_calls(node: c_ast.Node, names: dict[str, LoopHelper]) -> list[c_ast.FuncCall] | None:
    """The loop-helper calls ``node`` always evaluates, or None where one is conditional (behind
    ``&&``, ``||``, ``?:``) or the expression has another side effect."""
    found: list[c_ast.FuncCall] = []

    def visit(n: c_ast.Node, conditional: bool) -> bool:
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in names:
            if conditional or not all(_pure_argument(a) for a in (n.args.exprs if n.args else [])):
                return False
            found.append(n)
            return True
        if isinstance(n, c_ast.Assignment) or (isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--")):
            return False
        if isinstance(n, c_ast.BinaryOp) and n.op in ("&&", "||"):
            return visit(n.left, conditional) and visit(n.right, True)
        if isinstance(n, c_ast.TernaryOp):
            return visit(n.cond, conditional) and visit(n.iftrue, True) and visit(n.iffalse, True)
        return all(visit(child, conditional) for _name, child in n.children())

    return found if visit(node, False) else None


class _Expander:
    def __init__(self, helpers: dict[str, LoopHelper], taken: set[str]) -> None:
        self.helpers = helpers
        self.taken = taken
        self.count = 0

    def prefix(self) -> str:
        k = 1
        while f"{_PREFIX}{k}_" in self.taken:
            k += 1
        p = f"{_PREFIX}{k}_"
        self.taken.add(p)
        return p

    def expansion(self, call: c_ast.FuncCall) -> tuple[list[c_ast.Node], c_ast.ID] | None:
        """The statements that compute ``call`` and the name that holds its value."""
        assert isinstance(call.name, c_ast.ID)
        h = self.helpers[call.name.name]
        args = call.args.exprs if call.args is not None else []
        if len(args) != len(h.params):
            return None
        pre = self.prefix()
        fd = copy.deepcopy(h.definition)
        names = {n.name for n in walk_nodes(fd.body) if isinstance(n, c_ast.Decl) and n.name} | {p.name for p in h.params}

        def rename(n: c_ast.Node) -> c_ast.Node | None:
            if isinstance(n, c_ast.ID) and n.name in names:
                return c_ast.ID(pre + n.name, coord=call.coord)
            if isinstance(n, c_ast.Decl) and n.name in names:
                n.name = pre + n.name
                t = n.type
                while not isinstance(t, c_ast.TypeDecl):
                    t = t.type
                t.declname = n.name
            return None

        replace_top_down(fd.body, rename)
        items: list[c_ast.Node] = []
        for p, a in zip(h.params, args):
            d = copy.deepcopy(p)
            d.name = pre + p.name
            t = d.type
            while not isinstance(t, c_ast.TypeDecl):
                t = t.type
            t.declname = d.name
            d.init = copy.deepcopy(a)
            d.storage, d.funcspec = [], []
            d.coord = call.coord   # a later refusal of the parameter points at the call
            items.append(d)
        body = list(fd.body.block_items or [])
        if h.procedure:
            if body and isinstance(body[-1], c_ast.Return):
                body.pop()
            self.count += 1
            return items + body, c_ast.ID(pre + "ret", coord=call.coord)   # no value: the call is a statement
        ret = body.pop()
        assert isinstance(ret, c_ast.Return)
        items += body   # its names are the expansion's own (the prefix): no block needed around them
        result = pre + "ret"
        rtype = copy.deepcopy(fd.decl.type.type)
        rtype.declname = result
        items.append(c_ast.Decl(result, list(rtype.quals or []), [], [], [], rtype, ret.expr, None, coord=call.coord))
        self.count += 1
        return items, c_ast.ID(result, coord=call.coord)

    def statement(self, stmt: c_ast.Node) -> list[c_ast.Node] | None:
        """``stmt`` preceded by the expansions of the loop-helper calls it makes, or None."""
        if isinstance(stmt, c_ast.FuncCall) and isinstance(stmt.name, c_ast.ID):
            h = self.helpers.get(stmt.name.name)
            args = stmt.args.exprs if stmt.args else []
            if h is None or not h.procedure or not all(_pure_argument(a) and not _address_of_object(a) for a in args):
                return None
            got = self.expansion(stmt)
            return None if got is None else [c_ast.Compound(got[0], coord=stmt.coord)]
        if isinstance(stmt, c_ast.Assignment):
            expr: c_ast.Node | None = stmt.rvalue
            if _unconditional_calls(stmt.lvalue, self.helpers) != []:
                return None
        elif isinstance(stmt, c_ast.Decl) and stmt.init is not None and not isinstance(stmt.init, c_ast.InitList):
            expr = stmt.init
        elif isinstance(stmt, c_ast.If):
            expr = stmt.cond
        else:
            return None
        calls = _unconditional_calls(expr, self.helpers)
        if not calls:
            return None
        before: list[c_ast.Node] = []
        values: dict[int, c_ast.ID] = {}
        for call in calls:
            got = self.expansion(call)
            if got is None:
                return None
            items, value = got
            before += items
            values[id(call)] = value
        holder = c_ast.Compound([stmt])
        replace_top_down(holder, lambda n: values.get(id(n)))
        return [*before, holder.block_items[0]]

    def block(self, node: c_ast.Node) -> None:
        """Expand the calls of every statement in the blocks under ``node``."""
        for n in walk_nodes(node):
            if isinstance(n, c_ast.Compound) and n.block_items:
                out: list[c_ast.Node] = []
                for item in n.block_items:
                    new = self.statement(item)
                    out += new if new is not None else [item]
                n.block_items = out
            for attr in ("stmt", "iftrue", "iffalse"):
                child = getattr(n, attr, None) if isinstance(n, c_ast.For | c_ast.While | c_ast.DoWhile
                                                                | c_ast.If) else None
                if child is not None and not isinstance(child, c_ast.Compound):
                    new = self.statement(child)
                    if new is not None:
                        setattr(n, attr, c_ast.Compound(new, coord=child.coord))


def inline_loop_helpers(nest: c_ast.Node, ast: c_ast.FileAST, taken: set[str]) -> int:
    """Expand, in ``nest`` (a copy, edited in place), each call of a loop helper (see the module's
    text); ``taken``: names the enclosing function declares (a helper they hide, or whose globals
    they hide, stays a call). Returns how many calls it expanded."""
    helpers = {n: h for n, h in loop_helpers_of(ast).items() if n not in taken and not _free_names(h) & taken}
    if not helpers:
        return 0
    expander = _Expander(helpers, set(taken))
    expander.block(nest)
    return expander.count


def inline_procedures(nest: c_ast.Node, ast: c_ast.FileAST, taken: set[str]) -> int:
    """Expand, in ``nest`` (a copy, edited in place), each statement ``f(args);`` calling a
    procedure (``procedure``) into a block of its parameters as locals set to the arguments and
    its body, names prefixed; ``taken`` as for ``inline_loop_helpers``. Returns how many calls it
    expanded."""
    helpers = {n: h for n, h in procedures_of(ast).items() if n not in taken and not _free_names(h) & taken}
    if not helpers:
        return 0
    expander = _Expander(helpers, set(taken))
    expander.block(nest)
    return expander.count
