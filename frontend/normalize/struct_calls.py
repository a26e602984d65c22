"""Struct-valued helpers: ``f(args).m`` -> a call of a scalar helper that computes member ``m``.

Code over small structs calls helpers that take and return them by value
(``static cpx cmul(cpx a, cpx b) { cpx r; r.re = ...; r.im = ...; return r; }``,
``static vec3 add(vec3 a, vec3 b) { return (vec3){a.x + b.x, ...}; }``). Once ``struct_values``
has split ``z[i] = cadd(cmul(a[i], w), a[i])`` member by member, each member of a call's value
is asked for on its own: ``cadd(...).re``. This pass writes, for each (helper, member path), a
``static`` function of scalars (``mdp_c_cmul__re(a_re, a_im, b_re, b_im)``) whose body is the
helper's with every ``return E`` returning ``E``'s member, its struct parameters and locals split
into scalars (``struct_values``), and its own struct-valued calls rewritten the same way; the call
becomes that function's call with every struct argument passed member by member
(``mdp_c_cmul__re(a[i].re, a[i].im, w.re, w.im)``). A helper returning a scalar from struct
parameters (``double dot(vec3 a, vec3 b)``) becomes one such function (``mdp_c_dot``). C passes a struct by value, so the helper
sees a copy: the member-wise arguments are the same values. ``inline_calls`` then expands the
scalar functions as it does any pure helper (or says why one is none). A helper whose struct
values cannot be split this way is left as called, and the extractor refuses the call.
"""

from __future__ import annotations

import copy
import re

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import declared_names, replace_top_down, walk_nodes
from mdpoly.frontend.normalize.struct_types import MemberTypes
from mdpoly.frontend.normalize.struct_values import _init_values, _leaves, _member, _pure, scalarize_struct_values
from mdpoly.frontend.symbols import FUNC_DECLS

PREFIX = "mdp_c_"
#: rounds of call rewriting and splitting (``StructCalls.scalarize``)
MAX_ROUNDS = 8
_MEMBER_CALL = re.compile(r"\bmdp_c_(\w+?)((?:__\w+?)*)\b")


def spelled_member_calls(text: str) -> str:
    """``text`` (a message) with each member function's name spelled as what it computes:
    ``mdp_c_cmul__re`` as ``cmul(...).re``, ``mdp_c_dot`` as ``dot``."""
    def spell(m: re.Match[str]) -> str:
        path = m.group(2).replace("__", ".")
        return f"{m.group(1)}(...){path}" if path else m.group(1)
    return _MEMBER_CALL.sub(spell, text)


def struct_helpers(ast: c_ast.FileAST, types: MemberTypes) -> dict[str, c_ast.FuncDef]:
    """The file's ``static`` functions that return a struct of arithmetic members by value or
    take one (``static double dot(vec3 a, vec3 b)``)."""
    out: dict[str, c_ast.FuncDef] = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef) and "static" in ext.decl.storage and isinstance(ext.decl.type, FUNC_DECLS):
            aggs = [types.aggregate(t) for t in [ext.decl.type.type, *(p.type for p in _param_decls(ext))]]
            if any(a is not None for a in aggs) and all(a is None or _leaves(a, types) for a in aggs):
                out[ext.decl.name] = ext
    return out


def _call_path(n: c_ast.Node) -> tuple[c_ast.FuncCall, tuple[str, ...]] | None:
    """``f(args).a.b`` -> (the call, (a, b))."""
    fields: list[str] = []
    while isinstance(n, c_ast.StructRef) and n.type == "." and isinstance(n.field, c_ast.ID):
        fields.append(n.field.name)
        n = n.name
    if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and fields:
        return n, tuple(fields[::-1])
    return None


class StructCalls:
    """The member functions written so far, for one nest."""

    def __init__(self, helpers: dict[str, c_ast.FuncDef], types: MemberTypes) -> None:
        self.helpers = helpers
        self.types = types
        self.returns = {name: fd.decl.type.type for name, fd in helpers.items()
                        if types.aggregate(fd.decl.type.type) is not None}
        self.made: dict[tuple[str, tuple[str, ...]], c_ast.FuncDef | None] = {}
        self._busy: set[str] = set()

    def rewrite(self, node: c_ast.Node) -> None:
        """Replace, under ``node`` (in place), every ``f(args).path`` of a struct-valued helper."""
        def swap(n: c_ast.Node) -> c_ast.Node | None:
            found = _call_path(n)
            if found is None and isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) \
                    and n.name.name in self.helpers and n.name.name not in self.returns:
                found = n, ()   # a scalar helper taking structs
            if found is None or not isinstance(found[0].name, c_ast.ID) or found[0].name.name not in self.helpers:
                return None
            call, path = found
            new = self._member_call(call, path)
            if new is None:
                return None
            replace_top_down(new.args, swap)
            return new
        replace_top_down(c_ast.Compound([node]), swap)

    def _member_call(self, call: c_ast.FuncCall, path: tuple[str, ...]) -> c_ast.FuncCall | None:
        assert isinstance(call.name, c_ast.ID)
        fd = self._member_function(call.name.name, path)
        if fd is None:
            return None
        params = _param_decls(self.helpers[call.name.name])
        args = list(call.args.exprs) if call.args is not None else []
        if len(args) != len(params):
            return None
        flat: list[c_ast.Node] = []
        for p, a in zip(params, args):
            agg = self.types.aggregate(p.type)
            if agg is None:
                flat.append(copy.deepcopy(a))
                continue
            if not (_pure(a) or _call_path(c_ast.StructRef(a, ".", c_ast.ID("x"))) is not None):
                return None
            for leaf, _t in _leaves(agg, self.types) or []:
                if isinstance(a, c_ast.CompoundLiteral):
                    given = _init_values(a.init, agg, self.types)
                    if given is None:
                        return None
                    flat.append(copy.deepcopy(given.get(leaf, c_ast.Constant("int", "0"))))
                else:
                    flat.append(_member(a, leaf))
        return c_ast.FuncCall(c_ast.ID(fd.decl.name, coord=call.coord), c_ast.ExprList(flat), coord=call.coord)

    def _member_function(self, name: str, path: tuple[str, ...]) -> c_ast.FuncDef | None:
        key = (name, path)
        if key in self.made:
            return self.made[key]
        if name in self._busy:   # recursion
            return None
        self._busy.add(name)
        try:
            self.made[key] = self._write(name, path)
        finally:
            self._busy.discard(name)
        return self.made[key]

    def _write(self, name: str, path: tuple[str, ...]) -> c_ast.FuncDef | None:
        fd = self.helpers[name]
        agg = self.types.aggregate(fd.decl.type.type)
        leaf_t = next((t for leaf, t in (_leaves(agg, self.types) or []) if leaf == path), None) if agg else \
            fd.decl.type.type if not path else None
        if leaf_t is None:
            return None
        params = _param_decls(fd)
        struct_params = [p for p in params if self.types.aggregate(p.type) is not None]
        body = copy.deepcopy(fd.body)
        for r in [n for n in walk_nodes(body) if isinstance(n, c_ast.Return)] if path else []:
            if r.expr is None or not self._at_path(r, path):
                return None
        body.block_items = [copy.deepcopy(p) for p in struct_params] + list(body.block_items or [])
        taken = declared_names(body) | set(self.types.symbols.decls) | {p.name for p in params}
        scalars = self.scalarize(body, taken)
        split_params: list[c_ast.Decl] = []
        for p in struct_params:
            leaves = _leaves(self.types.aggregate(p.type), self.types) or []
            head = body.block_items[:len(leaves)]
            if len(head) != len(leaves) or not all(isinstance(d, c_ast.Decl) and d.name in scalars for d in head):
                return None   # the parameter is used as a whole somewhere
            split_params.extend(head)
            body.block_items = body.block_items[len(leaves):]
        if any(isinstance(n, c_ast.StructRef | c_ast.CompoundLiteral) and self._struct_valued(n)
               for n in walk_nodes(body)):
            return None
        out_params: list[c_ast.Node] = []
        for p in params:
            if self.types.aggregate(p.type) is None:
                out_params.append(copy.deepcopy(p))
            else:
                out_params.extend(split_params[:len(_leaves(self.types.aggregate(p.type), self.types) or [])])
                split_params = split_params[len(_leaves(self.types.aggregate(p.type), self.types) or []):]
        fname = PREFIX + name + "".join("__" + p for p in path)
        ret = copy.deepcopy(leaf_t)
        inner = ret
        while not isinstance(inner, c_ast.TypeDecl):
            inner = inner.type
        inner.declname = fname
        ftype = c_ast.FuncDecl(c_ast.ParamList(out_params), ret)
        return c_ast.FuncDef(c_ast.Decl(fname, [], [], ["static"], [], ftype, None, None, coord=fd.decl.coord),
                             None, body, coord=fd.coord)

    def scalarize(self, node: c_ast.Node, taken: set[str]) -> dict[str, c_ast.Node]:
        """Members of calls and struct values as scalars under ``node``: rewrite the calls, split
        (which expands ``t = f(x)`` into ``t_re = f(x).re; ...``), and again while something
        splits, since a struct passed whole to a call splits only once the call takes its members
        (``p = g(...)`` then ``f(p)``: a round for each link of such a chain)."""
        scalars: dict[str, c_ast.Node] = {}
        for _round in range(MAX_ROUNDS):
            self.rewrite(node)
            new = scalarize_struct_values(node, self.types, taken | set(scalars), self.returns)
            if not new:
                break
            scalars.update(new)
        self.rewrite(node)
        return scalars

    def _at_path(self, r: c_ast.Return, path: tuple[str, ...]) -> bool:
        """Make ``return E`` return ``E``'s member ``path`` (in place); False for a form it cannot."""
        e = r.expr
        if isinstance(e, c_ast.CompoundLiteral):
            agg = self.types.aggregate(e.type.type)
            given = _init_values(e.init, agg, self.types) if agg is not None else None
            if given is None:
                return False
            r.expr = copy.deepcopy(given.get(path, c_ast.Constant("int", "0")))
            return True
        if isinstance(e, c_ast.ID | c_ast.StructRef | c_ast.ArrayRef | c_ast.FuncCall) or \
                (isinstance(e, c_ast.UnaryOp) and e.op == "*"):
            r.expr = _member(e, path)
            return True
        return False

    def _struct_valued(self, n: c_ast.Node) -> bool:
        return isinstance(n, c_ast.CompoundLiteral) or (isinstance(n, c_ast.StructRef) and _call_path(n) is not None)


def _param_decls(fd: c_ast.FuncDef) -> list[c_ast.Decl]:
    plist = fd.decl.type.args.params if fd.decl.type.args is not None else []
    return [p for p in plist if isinstance(p, c_ast.Decl)]


def scalarize_with_calls(nest: c_ast.Node, ast: c_ast.FileAST, types: MemberTypes,
                         taken: set[str]) -> tuple[dict[str, c_ast.Node], list[c_ast.FuncDef]]:
    """Struct values and struct-valued helper calls in ``nest`` (in place) as scalars; returns the
    new scalars (name -> declared type) and the scalar functions the nest now calls."""
    helpers = struct_helpers(ast, types)
    if not helpers:
        return scalarize_struct_values(nest, types, taken), []
    calls = StructCalls(helpers, types)
    scalars = calls.scalarize(nest, taken)
    return scalars, [fd for fd in calls.made.values() if fd is not None]
