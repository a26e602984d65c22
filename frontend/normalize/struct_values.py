"""Struct values as scalars: nest copy + ``MemberTypes`` -> the nest with no struct-valued expression.

Real code computes with small structs by value: ``cpx acc = {0, 0}; acc.re += ...; out[k] = acc;``,
``vec3 v = p[i].vel; e += v.x * v.x;``. The extractor models scalars and arrays of scalars, so this
pass rewrites what is exactly the same computation over scalars:

- a whole-struct assignment ``L = R`` (both sides of one struct type whose members are all of
  arithmetic type, nested structs included), in a nest that also accesses members or where a
  side is a struct local split below, becomes one assignment per member path,
  ``L.re = R.re; L.im = R.im;``. C requires the two objects to be the same or disjoint, so the
  member-wise copy stores the same values; a value that is no object is computed member by
  member into temporaries before the first store (``z = cmul(z, w)`` reads ``z.re`` after it
  would have changed); ``R`` may be a brace list (``{c, s}``, in a declaration), a compound literal (``(cpx){c, s}``), a call of a struct-valued helper
  (``struct_calls``) or a conditional of such values (``c ? (cpx){0, 0} : z``);
- a struct local of the nest (declared in it) whose every use is a member path (``acc.re``) or
  one side of such an assignment becomes one scalar per member path (``acc_re``, a fresh name),
  and each path its scalar.

Left as written (the extractor then refuses it, located): a struct whose members include
arrays, pointers, unions or bit-fields; a local whose address is taken, which is passed to a
call, or used any other way as a whole; an assignment whose sides have side effects or whose
types differ.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import declared_names, replace_top_down, walk_nodes
from mdpoly.frontend.normalize.struct_types import Aggregate, MemberTypes

#: a member path and its declared type
Leaf = tuple[tuple[str, ...], c_ast.Node]


def _leaves(agg: Aggregate, types: MemberTypes, prefix: tuple[str, ...] = ()) -> list[Leaf] | None:
    """Every member path of ``agg`` down to arithmetic members, in declaration order; None when
    some member is an array, pointer, union, bit-field or of unknown type."""
    if isinstance(agg, c_ast.Union) or agg.decls is None:
        return None
    out: list[Leaf] = []
    for d in agg.decls:
        if not isinstance(d, c_ast.Decl) or not d.name or d.bitsize is not None:
            return None
        t = types.unalias(d.type)
        inner = types.aggregate(t)
        if inner is not None:
            below = _leaves(inner, types, (*prefix, d.name))
            if below is None:
                return None
            out.extend(below)
        elif isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) \
                and "volatile" not in (t.quals or []) and "_Atomic" not in (t.quals or []):
            out.append(((*prefix, d.name), d.type))
        else:
            return None
    return out


class _Types:
    """Types of the expressions a whole-struct assignment may have on either side."""

    def __init__(self, types: MemberTypes, local_decls: dict[str, c_ast.Node],
                 returns: dict[str, c_ast.Node] | None = None) -> None:
        self.types = types
        self.local_decls = local_decls
        #: struct-valued helpers of the file (``struct_calls``): name -> return type
        self.returns = returns or {}

    def of(self, n: c_ast.Node) -> c_ast.Node | None:
        u = self.types.unalias
        if isinstance(n, c_ast.ID):
            return self.local_decls.get(n.name, self.types.symbols.decls.get(n.name))
        if isinstance(n, c_ast.ArrayRef) or (isinstance(n, c_ast.UnaryOp) and n.op == "*"):
            t = u(self.of(n.name if isinstance(n, c_ast.ArrayRef) else n.expr))
            return t.type if isinstance(t, c_ast.PtrDecl | c_ast.ArrayDecl) else None
        if isinstance(n, c_ast.StructRef) and isinstance(n.field, c_ast.ID):
            t = u(self.of(n.name))
            if n.type == "->":
                t = u(t.type) if isinstance(t, c_ast.PtrDecl | c_ast.ArrayDecl) else None
            agg = self.types.aggregate(t)
            for d in (agg.decls or []) if agg is not None else []:
                if isinstance(d, c_ast.Decl) and d.name == n.field.name:
                    return d.type
            return None
        if isinstance(n, c_ast.CompoundLiteral):
            return n.type.type
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID):
            return self.returns.get(n.name.name)
        return None

    def pure(self, n: c_ast.Node) -> bool:
        """Whether ``n`` may be evaluated once per member: no side effect, or a call of a
        struct-valued helper (whose arguments ``struct_calls`` checks) over such arguments."""
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in self.returns:
            return all(self.pure(a) for a in (n.args.exprs if n.args is not None else []))
        return _pure(n)

    def struct_of(self, n: c_ast.Node) -> Aggregate | None:
        return self.types.aggregate(self.of(n))


def _same(a: Aggregate, b: Aggregate) -> bool:
    return a is b or (bool(a.name) and a.name == b.name and type(a) is type(b))


def _pure(n: c_ast.Node) -> bool:
    """Whether evaluating ``n`` twice is the same as once (no call, assignment or step)."""
    return not any(isinstance(m, c_ast.FuncCall | c_ast.Assignment)
                   or (isinstance(m, c_ast.UnaryOp) and m.op in ("++", "--", "p++", "p--"))
                   for m in walk_nodes(n))


def _is_lvalue(n: c_ast.Node) -> bool:
    """Whether ``n`` denotes an object (``a[i]``, ``p->v``, ``*q``, ``s.pos``, a name)."""
    while isinstance(n, c_ast.StructRef | c_ast.ArrayRef):
        n = n.name
    return isinstance(n, c_ast.ID) or (isinstance(n, c_ast.UnaryOp) and n.op == "*")


def _member(n: c_ast.Node, path: tuple[str, ...]) -> c_ast.Node:
    out = copy.deepcopy(n)
    for field in path:
        out = c_ast.StructRef(out, ".", c_ast.ID(field), coord=n.coord)
    return out


def _init_values(init: c_ast.InitList, agg: Aggregate, types: MemberTypes) -> dict[tuple[str, ...], c_ast.Node] | None:
    """The value of each member path that a brace list gives (missing members are zero), with
    nested braces or elided ones; None for designators, excess values or an unknown form."""
    out: dict[tuple[str, ...], c_ast.Node] = {}
    items = list(init.exprs)

    def fill(a: Aggregate, prefix: tuple[str, ...], braced: bool) -> bool:
        for d in a.decls or []:
            if not items:
                return True
            inner = types.aggregate(types.unalias(d.type))
            item = items[0]
            if isinstance(item, c_ast.NamedInitializer):
                return False
            if inner is not None:
                if isinstance(item, c_ast.InitList):
                    items.pop(0)
                    saved = list(items)
                    items[:] = list(item.exprs)
                    if not fill(inner, (*prefix, d.name), True) or items:
                        return False
                    items[:] = saved
                elif not fill(inner, (*prefix, d.name), False):
                    return False
            elif isinstance(item, c_ast.InitList):
                return False
            else:
                out[(*prefix, d.name)] = items.pop(0)
        return True

    if not fill(agg, (), True) or items:
        return None
    return out


def _zero(_path: tuple[str, ...]) -> c_ast.Node:
    return c_ast.Constant("int", "0")


class _Rewrite:
    def __init__(self, nest: c_ast.Node, types: MemberTypes, taken: set[str],
                 returns: dict[str, c_ast.Node] | None = None) -> None:
        self.nest = nest
        self.types = types
        self.local_decls = {d.name: d.type for d in walk_nodes(nest) if isinstance(d, c_ast.Decl) and d.name}
        self.t = _Types(types, self.local_decls, returns)
        self.taken = taken
        #: struct locals to split, with their member paths
        self.split: dict[str, list[Leaf]] = {}
        self.scalars: dict[tuple[str, tuple[str, ...]], str] = {}
        self.changed = False
        #: values staged in temporaries so far (``_temporary``)
        self.staged = 0
        #: the nest accesses some member (so whole-struct stores are split to keep members apart)
        self.members = any(isinstance(n, c_ast.StructRef) for n in walk_nodes(nest))

    # {{{ which locals split

    def candidates(self) -> None:
        for d in walk_nodes(self.nest):
            if isinstance(d, c_ast.Decl) and d.name and isinstance(d.type, c_ast.TypeDecl) \
                    and not d.storage and not any(q in (d.type.quals or []) for q in ("volatile", "_Atomic")):
                agg = self.types.aggregate(d.type)
                leaves = _leaves(agg, self.types) if agg is not None else None
                if leaves:
                    self.split[d.name] = leaves
        changed = True
        while changed and self.split:
            changed = False
            for name in [n for n in self.split if not self._uses_fit(n)]:
                del self.split[name]
                changed = True

    def _uses_fit(self, name: str) -> bool:
        """Whether every use of local ``name`` is a member path to a scalar or a side of an
        assignment that ``expand`` rewrites."""
        ok: set[int] = set()
        nodes = walk_nodes(self.nest)
        fields = {id(n.field) for n in nodes if isinstance(n, c_ast.StructRef)}
        for n in nodes:
            whole = self._whole_sides(n)
            if whole is not None:
                for side in whole:
                    ok.update(id(m) for m in self._chain_ids(side, name))
            if isinstance(n, c_ast.StructRef) and n.type == "." and self._scalar_path(n, name) is not None:
                ok.update(id(m) for m in self._chain_ids(n, name))
        return all(id(i) in ok for i in nodes
                   if isinstance(i, c_ast.ID) and i.name == name and id(i) not in fields)

    def _chain_ids(self, n: c_ast.Node, name: str) -> Iterator[c_ast.ID]:
        while isinstance(n, c_ast.StructRef) and n.type == ".":
            n = n.name
        if isinstance(n, c_ast.ID) and n.name == name:
            yield n

    def _path(self, n: c_ast.Node) -> tuple[str, tuple[str, ...]] | None:
        """``v.a.b`` -> (``v``, (a, b)) for a local ``v``; ``v`` -> (``v``, ())."""
        fields: list[str] = []
        while isinstance(n, c_ast.StructRef) and n.type == "." and isinstance(n.field, c_ast.ID):
            fields.append(n.field.name)
            n = n.name
        return (n.name, tuple(fields[::-1])) if isinstance(n, c_ast.ID) else None

    def _scalar_path(self, n: c_ast.Node, name: str) -> tuple[str, ...] | None:
        p = self._path(n)
        if p is None or p[0] != name or name not in self.split:
            return None
        return p[1] if any(path == p[1] for path, _t in self.split[name]) else None

    def _whole_sides(self, n: c_ast.Node) -> tuple[c_ast.Node, ...] | None:
        """The two sides of a whole-struct assignment ``_assignments`` expands (a statement
        ``L = R`` or a declaration ``T v = R``), else None."""
        if isinstance(n, c_ast.Assignment) and n.op == "=":
            lhs, rhs = n.lvalue, n.rvalue
        elif isinstance(n, c_ast.Decl) and n.name and n.init is not None and n.name in self.local_decls:
            lhs, rhs = c_ast.ID(n.name), n.init
        else:
            return None
        a = self.t.struct_of(lhs)
        if a is None or _leaves(a, self.types) is None or not _pure(lhs):
            return None
        if isinstance(n, c_ast.Decl) and isinstance(rhs, c_ast.FuncCall) and n.name not in self.split:
            return None
        if isinstance(rhs, c_ast.InitList):
            return (lhs,) if isinstance(n, c_ast.Decl) and _init_values(rhs, a, self.types) is not None else None
        return (lhs, rhs) if self._struct_value(rhs, a) else None

    def _struct_value(self, rhs: c_ast.Node, a: Aggregate) -> bool:
        """Whether ``rhs`` is a value of struct ``a`` that ``place`` takes apart: an lvalue or a
        struct helper's call without side effects, a compound literal, or ``c ? s : t`` of them."""
        if isinstance(rhs, c_ast.TernaryOp):
            return _pure(rhs.cond) and self._struct_value(rhs.iftrue, a) and self._struct_value(rhs.iffalse, a)
        b = self.t.struct_of(rhs)
        if b is None or not _same(a, b):
            return False
        if isinstance(rhs, c_ast.CompoundLiteral):
            return _init_values(rhs.init, a, self.types) is not None
        return self.t.pure(rhs)

    # }}}

    # {{{ rewriting

    def scalar(self, name: str, path: tuple[str, ...]) -> str:
        key = (name, path)
        if key not in self.scalars:
            base = "_".join((name, *path))
            fresh, k = base, 2
            while fresh in self.taken:
                fresh, k = f"{base}_{k}", k + 1
            self.taken.add(fresh)
            self.scalars[key] = fresh
        return self.scalars[key]

    def place(self, n: c_ast.Node, path: tuple[str, ...]) -> c_ast.Node:
        """Member ``path`` of the struct expression ``n``: a scalar of a split local, else ``n.path``."""
        p = self._path(n)
        if p is not None and p[0] in self.split:
            return c_ast.ID(self.scalar(p[0], p[1] + path), coord=n.coord)
        if isinstance(n, c_ast.TernaryOp):   # c ? s : t  ->  c ? s.m : t.m
            return c_ast.TernaryOp(copy.deepcopy(n.cond), self.place(n.iftrue, path), self.place(n.iffalse, path),
                                   coord=n.coord)
        if isinstance(n, c_ast.CompoundLiteral):
            agg = self.t.struct_of(n)
            given = _init_values(n.init, agg, self.types) if agg is not None else None
            assert given is not None   # checked by _whole_sides
            return copy.deepcopy(given.get(path) or _zero(path))
        return _member(n, path)

    def expand(self, n: c_ast.Node) -> list[c_ast.Node] | None:
        """The statements that replace ``n`` (a whole-struct assignment or a split local's
        declaration), else None."""
        sides = self._whole_sides(n)
        if isinstance(n, c_ast.Decl):
            if n.name not in self.split:
                return None
            if n.init is None:
                self.changed = True
                return [self._decl(n, path, t, None) for path, t in self.split[n.name]]
            if sides is None:
                return None
        elif sides is None or not (self.members or any(self._touches_split(side) for side in sides)
                                   or isinstance(n.rvalue, c_ast.FuncCall | c_ast.TernaryOp | c_ast.CompoundLiteral)):
            return None   # a copy of whole elements next to no member access stays one copy
        self.changed = True
        lhs = c_ast.ID(n.name) if isinstance(n, c_ast.Decl) else n.lvalue
        rhs = n.init if isinstance(n, c_ast.Decl) else n.rvalue
        agg = self.t.struct_of(lhs)
        assert agg is not None
        leaves = _leaves(agg, self.types) or []
        given: dict[tuple[str, ...], c_ast.Node] | None = None
        if isinstance(rhs, c_ast.InitList):
            given = _init_values(rhs, agg, self.types)
        out: list[c_ast.Node] = []
        # C evaluates the whole right-hand side before it stores: a value that is no object
        # (a call, a conditional, a compound literal) may read the members stored first
        # (``z = cmul(z, w)``), so its members go to temporaries before any store
        staged = isinstance(n, c_ast.Assignment) and not _is_lvalue(rhs)
        stores: list[c_ast.Node] = []
        for path, t in leaves:
            value = (given.get(path) or _zero(path)) if given is not None else self.place(rhs, path)
            value = self.rewrite_expr(copy.deepcopy(value))
            if isinstance(n, c_ast.Decl):
                out.append(self._decl(n, path, t, value))
            elif staged:
                tmp = self._temporary(path, t, value, n.coord)
                out.append(tmp)
                stores.append(c_ast.Assignment("=", self.place(lhs, path), c_ast.ID(tmp.name), coord=n.coord))
            else:
                out.append(c_ast.Assignment("=", self.place(lhs, path), value, coord=n.coord))
        return out + stores

    def _temporary(self, path: tuple[str, ...], t: c_ast.Node, value: c_ast.Node, coord: object) -> c_ast.Decl:
        """``T mdp_sv<k>_<path> = value;``, a fresh scalar for one member of a staged value."""
        self.staged += 1
        name = self.scalar(f"mdp_sv{self.staged}", path)
        t = copy.deepcopy(t)
        inner = t
        while not isinstance(inner, c_ast.TypeDecl):
            inner = inner.type
        inner.declname = name
        return c_ast.Decl(name, [], [], [], [], t, value, None, coord=coord)

    def _touches_split(self, side: c_ast.Node) -> bool:
        p = self._path(side)
        return p is not None and p[0] in self.split

    def _decl(self, d: c_ast.Decl, path: tuple[str, ...], t: c_ast.Node, init: c_ast.Node | None) -> c_ast.Decl:
        name = self.scalar(d.name, path)
        t = copy.deepcopy(t)
        t.declname = name
        return c_ast.Decl(name, [], [], [], [], t, init, None, coord=d.coord)

    def rewrite_expr(self, n: c_ast.Node) -> c_ast.Node:
        """``n`` with every member path of a split local replaced by its scalar."""
        def swap(m: c_ast.Node) -> c_ast.Node | None:
            if isinstance(m, c_ast.StructRef) and m.type == ".":
                p = self._path(m)
                if p is not None and p[0] in self.split:
                    return c_ast.ID(self.scalar(*p), coord=m.coord)
            return None
        new = swap(n)
        if new is not None:
            return new
        replace_top_down(n, swap)
        return n

    def statements(self, node: c_ast.Node) -> None:
        """Expand, under ``node``, every statement ``expand`` rewrites (in place)."""
        for attr in node.__slots__:
            if attr in ("coord", "__weakref__"):
                continue
            value = getattr(node, attr, None)
            if isinstance(value, list):
                items: list[c_ast.Node] = []
                for item in value:
                    new = self.expand(item) if isinstance(item, c_ast.Node) and attr == "block_items" else None
                    if new is None:
                        if isinstance(item, c_ast.Node):
                            self.statements(item)
                        items.append(item)
                    else:
                        items.extend(new)
                value[:] = items
            elif isinstance(value, c_ast.Node):
                new = self.expand(value) if isinstance(node, c_ast.If | c_ast.For | c_ast.While | c_ast.DoWhile) \
                    and attr in ("iftrue", "iffalse", "stmt") else None
                if new is None:
                    self.statements(value)
                else:
                    setattr(node, attr, c_ast.Compound(new, coord=value.coord))

    # }}}


def scalarize_struct_values(nest: c_ast.Node, types: MemberTypes, taken: set[str],
                            returns: dict[str, c_ast.Node] | None = None) -> dict[str, c_ast.Node]:
    """Rewrite, in ``nest`` (a copy, edited in place), whole-struct assignments member by member
    and struct locals as scalars; ``taken``: names the new scalars must not shadow; ``returns``:
    the struct-valued helpers a right-hand side may call (``struct_calls``), by return type.
    Returns the new scalars' names and declared types."""
    if not any(isinstance(n, c_ast.Decl | c_ast.CompoundLiteral) or
               (isinstance(n, c_ast.Assignment) and n.op == "=") for n in walk_nodes(nest)):
        return {}
    rw = _Rewrite(nest, types, taken | declared_names(nest), returns)
    rw.candidates()
    rw.statements(nest)
    if rw.split:
        replace_top_down(nest, lambda m: rw.rewrite_expr(m) if isinstance(m, c_ast.StructRef) else None)
    return {d.name: d.type for d in walk_nodes(nest)
            if isinstance(d, c_ast.Decl) and d.name in set(rw.scalars.values())}
