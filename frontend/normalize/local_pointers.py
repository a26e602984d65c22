"""Local pointers of a nest: nest copy + ``SymbolTable`` -> the nest with subscripts of their bases.

``float *q = s->q + h*hs;`` (after ``members``: ``mdp_m_s_q + h*hs``), declared in the nest and
never re-assigned, is the base ``mdp_m_s_q`` plus the offset ``h*hs``: ``q[i]`` becomes
``mdp_m_s_q[h*hs + i]`` and ``*q`` ``mdp_m_s_q[h*hs]``, and the declaration goes. Recognised
initialisers: ``B``, ``B + e``, ``e + B``, ``B - e``, ``&B[e]``, ``&A[i][e]`` and ``A[i]`` (a row
of a multi-dimensional array, or of a row-pointer grid ``double **A``: ``const double *ur = u[j];``
makes ``ur[i]`` ``u[j][i]``), where ``B`` is a one-dimensional pointer or array visible at the
nest, or another such local pointer. The rewrite is exact when the offset means the same at
every use: neither the base nor any name of the offset is assigned after the declaration in its
block (nor re-declared there), and ``q`` itself is never assigned. A pointer used in any other
way (passed on, compared, stepped) is refused, located.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc, UnsupportedInput
from mdpoly.frontend.normalize.ast_util import assigned_names, assignment_of, declared_names, loc_of, names_in
from mdpoly.frontend.symbols import SymbolTable, c_text


@dataclass(frozen=True, slots=True)
class _Resolved:
    """``base[prefix...][offset + e]`` is what ``q[e]`` reads (``offset`` None: 0)."""

    base: str
    prefix: tuple[c_ast.Node, ...]
    offset: c_ast.Node | None

    def element(self, e: c_ast.Node | None, coord: object) -> c_ast.Node:
        node: c_ast.Node = c_ast.ID(self.base, coord=coord)
        for p in self.prefix:
            node = c_ast.ArrayRef(node, copy.deepcopy(p), coord=coord)
        if self.offset is None:
            last = e if e is not None else c_ast.Constant("int", "0")
        elif e is None:
            last = copy.deepcopy(self.offset)
        else:
            last = c_ast.BinaryOp("+", copy.deepcopy(self.offset), e, coord=coord)
        return c_ast.ArrayRef(node, last, coord=coord)

    def shifted(self, e: c_ast.Node, sign: str) -> _Resolved:
        if self.offset is None:
            off: c_ast.Node = e if sign == "+" else c_ast.UnaryOp("-", e)
        else:
            off = c_ast.BinaryOp(sign, self.offset, e)
        return _Resolved(self.base, self.prefix, off)


def _is_local_pointer(item: c_ast.Node) -> bool:
    return (isinstance(item, c_ast.Decl) and isinstance(item.type, c_ast.PtrDecl)
            and isinstance(item.type.type, c_ast.TypeDecl) and item.init is not None and bool(item.name))


class _Resolver:
    def __init__(self, nest: c_ast.Node, symbols: SymbolTable, fallback: SourceLoc) -> None:
        self.symbols = symbols
        self.fallback = fallback
        self.nest = nest
        self.assigned = assigned_names(nest)

    def _dims(self, name: str) -> int | None:
        var = self.symbols.variable(name)
        if var is None or var.kind not in ("array", "pointer", "indirect"):
            return None
        return len(var.shape)

    def resolve(self, e: c_ast.Node, env: dict[str, _Resolved]) -> _Resolved | None:
        """What pointer expression ``e`` points to, or None when it is no recognised form."""
        if isinstance(e, c_ast.ID):
            if e.name in env:
                return env[e.name]
            return _Resolved(e.name, (), None) if self._dims(e.name) == 1 else None
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            left = self.resolve(e.left, env)
            if left is not None and not self._pointer_names(e.right, env):
                return left.shifted(e.right, e.op)
            right = self.resolve(e.right, env) if e.op == "+" else None
            if right is not None and not self._pointer_names(e.left, env):
                return right.shifted(e.left, "+")
            return None
        subs: list[c_ast.Node] = []
        target = e.expr if isinstance(e, c_ast.UnaryOp) and e.op == "&" else e
        while isinstance(target, c_ast.ArrayRef):
            subs.append(target.subscript)
            target = target.name
        subs.reverse()
        if not isinstance(target, c_ast.ID) or not subs or target.name in env:
            return None
        dims = self._dims(target.name)
        if dims is None or any(self._pointer_names(s, env) for s in subs):
            return None
        if isinstance(e, c_ast.UnaryOp) and len(subs) == dims:  # &A[i][e]
            return _Resolved(target.name, tuple(subs[:-1]), subs[-1])
        if not isinstance(e, c_ast.UnaryOp) and len(subs) == dims - 1:  # A[i]: a row
            return _Resolved(target.name, tuple(subs), None)
        return None

    def _pointer_names(self, e: c_ast.Node, env: dict[str, _Resolved]) -> bool:
        return any(n in env or self._dims(n) is not None for n in names_in(e))

    def block(self, block: c_ast.Compound, env: dict[str, _Resolved]) -> None:
        env = dict(env)
        items = block.block_items or []
        kept: list[c_ast.Node] = []
        for k, item in enumerate(items):
            if _is_local_pointer(item):
                r = self.resolve(item.init, env)
                if r is not None:
                    self._check(item, r, items[k + 1:])
                    env[item.name] = r
                    continue
            kept.append(self.rewrite(item, env))
            if isinstance(item, c_ast.Decl) and item.name in env:
                del env[item.name]  # shadowed by a declaration this pass does not resolve
        block.block_items = kept

    def _check(self, decl: c_ast.Decl, r: _Resolved, rest: list[c_ast.Node]) -> None:
        where = loc_of(decl, self.fallback)
        if decl.name in self.assigned:
            where = loc_of(assignment_of(self.nest, decl.name) or decl, where)
            raise UnsupportedInput(f"local pointer '{decl.name}' is re-assigned in the nest; only a pointer set once, "
                                   "where it is declared, is resolved to its base and offset", where,
                                   "pointer-arithmetic")
        if r.base in self.assigned:
            raise UnsupportedInput(f"local pointer '{decl.name}' points into '{r.base}', which the nest re-assigns",
                                   loc_of(assignment_of(self.nest, r.base) or decl, where), "pointer-arithmetic")
        after = set().union(*(assigned_names(x) | declared_names(x) for x in rest)) if rest else set()
        used = names_in(decl.init) & after
        if used:
            raise UnsupportedInput(f"local pointer '{decl.name}' = '{c_text(decl.init)}' depends on "
                                   f"'{sorted(used)[0]}', which changes after its declaration", where,
                                   "pointer-arithmetic")

    def rewrite(self, node: c_ast.Node, env: dict[str, _Resolved]) -> c_ast.Node:
        """``node`` with the local pointers of ``env`` replaced by their bases (in place where it can)."""
        if isinstance(node, c_ast.Compound):
            self.block(node, env)
            return node
        if isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.ID) and node.name.name in env:
            return env[node.name.name].element(self.rewrite(node.subscript, env), node.coord)
        if isinstance(node, c_ast.UnaryOp) and node.op == "*" and isinstance(node.expr, c_ast.ID) \
                and node.expr.name in env:
            return env[node.expr.name].element(None, node.coord)
        if isinstance(node, c_ast.ID) and node.name in env:
            raise UnsupportedInput(f"local pointer '{node.name}' is used other than as '{node.name}[i]' or "
                                   f"'*{node.name}' (passed on, compared or offset)",
                                   loc_of(node, self.fallback), "pointer-arithmetic")
        for attr in node.__slots__:
            if attr in ("coord", "__weakref__"):
                continue
            value = getattr(node, attr, None)
            if isinstance(value, c_ast.Node):
                setattr(node, attr, self.rewrite(value, env))
            elif isinstance(value, list):
                value[:] = [self.rewrite(x, env) if isinstance(x, c_ast.Node) else x for x in value]
        return node


def resolve_local_pointers(nest: c_ast.Node, symbols: SymbolTable, fallback: SourceLoc) -> None:
    """Rewrite, in ``nest`` (a copy, edited in place), the uses of its local pointers.

    :raises UnsupportedInput: a local pointer re-assigned, its base re-assigned, its offset's
        names changed after it, or the pointer used other than by subscript or ``*``.
    """
    r = _Resolver(nest, symbols, fallback)
    r.rewrite(nest, {})
