"""Hand-blocked loops: ``Candidate`` -> ``Untiled``, a copy whose blocked bands run each point loop
over its whole range, or None when the nest has no such band.

C written for the cache tiles its loops by hand::

    for (int ii = 0; ii < n; ii += bs)               block loops
      for (int kk = 0; kk < n; kk += bs)
        for (int i = ii; i < MIN(ii + bs, n); i++)   point loops
          for (int k = kk; k < MIN(kk + bs, n); k++)
            body

With ``bs > 0`` the point loop ``i`` of block ``ii`` runs over ``[ii, min(ii + bs, n))`` and the
blocks cover ``[0, n)`` once each, so the band runs ``body`` once for every ``(i, k)`` of
``[0, n) x [0, n)`` -- only the order differs (tile by tile). ``untiled`` writes the band as
``for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) body``, in the point loops' order, and
``bs > 0`` as a run-time precondition (false: the nest runs as written). Whether the new order
gives the same result is the caller's question (``mdpoly.frontend.analyze``: the model of the
un-tiled nest must classify every point loop as ``++`` or a reduction; then every dependence
joins instances of the same point, or is a reduction's own, whose order only reassociates it).

A band is recognised where

- each block loop is ``for (T ii = L; ii < U; ii += s)`` (``ii = ii + s``; ``U > ii``), its step
  ``s`` a constant above 1 or an expression of names (no memory read, no call) and its body one
  loop: the next block loop, or after the last the first point loop;
- the point loops follow directly, one per block loop in any order, each ``for (T i = ii; C; i++)``
  with ``C`` one of ``i < MIN(ii + s, U)`` (``MIN`` the usual conditional, either operand first)
  or ``i < ii + s && i < U`` (either order): the block loop's own ``s`` and ``U``;
- each point loop but the last holds the next one among declarations ``T x = e;`` of scalars the
  nest never assigns, ``e`` calling nothing and reading nothing the nest writes (the blocked nest
  runs them once per tile of the block loops whose point loops they are outside of, and every
  run gives the same value);
- a block iterator is read nowhere else; ``L``, ``U`` and ``s`` read no iterator of the band and
  nothing the nest assigns; ``ii`` and ``i`` have the same signed integer type, and every name in
  ``L``, ``U``, ``s`` a signed integer type, so every comparison is one of mathematical values;
- an iterator declared before the nest is not read after it (its exit value changes).

A constant local step (``const int B = 32``, ``mdpoly.frontend.normalize.constant_locals``) is a
constant here: no precondition, and none of zero or below is un-tiled.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, replace

from pycparser import c_ast

from mdpoly.frontend.candidates import Candidate
from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.normalize.ast_util import assigned_names, names_in, replace_top_down, walk_nodes, written_roots
from mdpoly.frontend.normalize.constant_locals import constant_locals
from mdpoly.frontend.normalize.index_temps import pure_index
from mdpoly.frontend.symbols import SymbolTable, c_text
from mdpoly.ir.c_types import parse_type
from mdpoly.ir.mdh import Precondition


@dataclass(frozen=True, slots=True)
class Band:
    """One hand-blocked band: its block iterators and its point iterators, outermost first."""

    blocks: tuple[str, ...]
    points: tuple[str, ...]

    def describe(self) -> str:
        blocks = ", ".join(f"'{b}'" for b in self.blocks)
        points = ", ".join(f"'{p}'" for p in self.points)
        return f"block loop{'s' if len(self.blocks) > 1 else ''} {blocks} around point loop" \
               f"{'s' if len(self.points) > 1 else ''} {points}"


@dataclass(frozen=True, slots=True)
class Untiled:
    """``cand`` with its hand-blocked ``bands`` un-tiled (a copy of its function), exact under
    ``preconditions`` (each run-time block size positive)."""

    cand: Candidate
    bands: tuple[Band, ...]
    preconditions: tuple[Precondition, ...]

    @property
    def points(self) -> frozenset[str]:
        return frozenset(p for b in self.bands for p in b.points)

    @property
    def same_order(self) -> bool:
        """Whether the un-tiled nest runs the instances in the blocked nest's order: each band one
        block loop around its point loop (blocks upwards, each block's points upwards)."""
        return all(len(b.blocks) == 1 for b in self.bands)

    def describe(self) -> str:
        return "; ".join(b.describe() for b in self.bands)


@dataclass(frozen=True, slots=True)
class _Block:
    loop: c_ast.For
    it: str
    lower: c_ast.Node
    upper: c_ast.Node
    step: c_ast.Node


def untiled(cand: Candidate, symbols: SymbolTable) -> Untiled | None:
    """The nest of ``cand`` with every hand-blocked band (module docstring) un-tiled, or None
    when it has none. ``symbols``: the declarations visible at the nest."""
    memo: dict[int, object] = {}
    func = copy.deepcopy(cand.func, memo)
    found = memo.get(id(cand.node))
    node = found if isinstance(found, c_ast.For) else copy.deepcopy(cand.node, memo)
    consts = {name: c.value for name, c in constant_locals(cand.func, cand.node, symbols).items()}
    finder = _Finder(cand, node, symbols, consts)
    rewrites: dict[int, c_ast.For] = {}
    bands: list[Band] = []
    pre: list[Precondition] = []
    stack: list[c_ast.Node] = [node]
    while stack:
        n = stack.pop()
        got = finder.band(n) if isinstance(n, c_ast.For) else None
        if got is None:
            stack.extend(child for _name, child in reversed(n.children()))
            continue
        new, band, steps = got
        rewrites[id(n)] = new
        bands.append(band)
        for s in steps:
            check = f"{s} > 0" if re.fullmatch(r"\w+", s) else f"({s}) > 0"
            p = Precondition(check, f"the block size '{s}' of the hand-blocked loops is positive (else they run as "
                             "written)")
            if p not in pre:
                pre.append(p)
    if not bands:
        return None

    def swap(n: c_ast.Node) -> c_ast.Node | None:
        return rewrites.get(id(n))

    top = rewrites.get(id(node), node)
    replace_top_down(node, swap)
    replace_top_down(func, swap)
    scope = memo.get(id(cand.scope)) if cand.scope is not None else None
    host = tuple(d if not isinstance(m := memo.get(id(d)), c_ast.Decl) else m for d in cand.host_decls)
    new_cand = replace(cand, node=top, func=func, scope=scope if isinstance(scope, c_ast.Node) else cand.scope,
                       host_decls=host)
    return Untiled(new_cand, tuple(bands), tuple(pre))


class _Finder:
    def __init__(self, cand: Candidate, nest: c_ast.For, symbols: SymbolTable, consts: dict[str, int]) -> None:
        self.cand, self.nest, self.symbols, self.consts = cand, nest, symbols, consts
        self.assigned = assigned_names(nest) | {d.name for d in walk_nodes(nest) if isinstance(d, c_ast.Decl)}
        roots = [root for _stmt, root in written_roots(nest)]
        #: names whose value or elements the nest changes (None: something it writes has no name)
        self.written: set[str] | None = {r.name for r in roots if isinstance(r, c_ast.ID)} | assigned_names(nest)
        if any(not isinstance(r, c_ast.ID) for r in roots):
            self.written = None

    def band(self, loop: c_ast.For) -> tuple[c_ast.For, Band, list[str]] | None:
        """The un-tiled copy of the band at ``loop``, the band, and the run-time steps (C text)."""
        blocks: list[_Block] = []
        node: c_ast.Node | None = loop
        while isinstance(node, c_ast.For):
            b = self._block(node)
            if b is None:
                break
            blocks.append(b)
            node = _only_item(node.stmt)
        if not blocks or not isinstance(node, c_ast.For):
            return None
        iterators = {b.it for b in blocks}
        points: list[tuple[c_ast.For, _Block]] = []
        between: list[tuple[c_ast.Node, int]] = []   # items beside the next point loop, inside how many
        left = list(blocks)
        p: c_ast.Node | None = node
        while left:
            if not isinstance(p, c_ast.For):
                return None
            b = next((b for b in left if self._is_point(p, b)), None)
            if b is None:
                return None
            left.remove(b)
            points.append((p, b))
            if left:
                items = _items(p.stmt)
                fors = [x for x in items if isinstance(x, c_ast.For)]
                if len(fors) != 1:
                    return None
                between += [(x, len(points)) for x in items if x is not fors[0]]
                p = fors[0]
        point_its = [_iterator(pl) for pl, _b in points]
        band_names = iterators | {i for i in point_its if i is not None}
        if any(i is None for i in point_its) or len(band_names) != 2 * len(blocks):
            return None
        for b in blocks:
            if names_in(c_ast.ExprList([b.lower, b.upper, b.step])) & (band_names | self.assigned):
                return None
        # block iterators read nowhere but in their own headers and their point loops' headers
        inner = points[-1][0].stmt
        if names_in(inner) & iterators or any(names_in(x) & iterators for x, _k in between):
            return None
        if any(_iterator(pl) in assigned_names(pl.stmt) for pl, _b in points):
            return None
        if not all(self._replicable(x, {i for i in point_its[:k] if i is not None}) for x, k in between):
            return None
        outside = {n for n in band_names if not _declares(loop, n)}
        if outside & live_after(self.cand.func.body, self.cand.node, outside):
            return None
        steps: list[str] = []
        for b in blocks:
            value = self._constant(b.step)
            if value is not None and value <= 0:
                return None
            if value is None:
                steps.append(c_text(b.step))
        new = _untiled(points, loop)
        return new, Band(tuple(b.it for b in blocks), tuple(str(i) for i in point_its)), steps

    # -- recognising

    def _block(self, loop: c_ast.For) -> _Block | None:
        it, lower = _init(loop)
        if it is None or lower is None or _only_item(loop.stmt) is None:
            return None
        upper = _upper(loop.cond, it)
        step = _step(loop.next, it)
        if upper is None or step is None:
            return None
        value = self._constant(step)
        if value is not None and value <= 1:
            return None
        if not all(pure_index(x, self.symbols) and self._signed_names(x) for x in (lower, upper, step)):
            return None
        if not self._same_signed_type(it, loop):
            return None
        return _Block(loop, it, lower, upper, step)

    def _is_point(self, loop: c_ast.For, b: _Block) -> bool:
        it, lower = _init(loop)
        if it is None or not (isinstance(lower, c_ast.ID) and lower.name == b.it):
            return False
        if not _unit_step(loop.next, it) or self._type_text(it, loop) != self._type_text(b.it, b.loop):
            return False
        end = c_ast.BinaryOp("+", c_ast.ID(b.it), b.step)
        wanted = {_key(end), _key(b.upper)}
        c = loop.cond
        if isinstance(c, c_ast.BinaryOp) and c.op == "&&":
            found = [_upper(c.left, it), _upper(c.right, it)]
            return all(x is not None for x in found) and {_key(x) for x in found if x is not None} == wanted
        bound = _upper(c, it)
        if not isinstance(bound, c_ast.TernaryOp) or not _is_min(bound):
            return False
        return {_key(bound.iftrue), _key(bound.iffalse)} == wanted

    def _replicable(self, item: c_ast.Node, points: set[str]) -> bool:
        """Whether ``item`` (beside a point loop, inside the point loops of ``points``) gives the
        same value every time a tile runs it."""
        if not (isinstance(item, c_ast.Decl) and item.name and item.init is not None
                and isinstance(item.type, c_ast.TypeDecl)):
            return False
        if item.name in assigned_names(self.nest) or self.symbols.type_is_volatile(item.type):
            return False
        init = item.init
        if any(isinstance(n, c_ast.FuncCall | c_ast.Assignment) or (isinstance(n, c_ast.UnaryOp) and n.op in
               ("++", "--", "p++", "p--")) for n in walk_nodes(init)):
            return False
        if self.written is None:   # a write through an unnamed object: only reads of no memory
            return pure_index(init, self.symbols)
        return not (names_in(init) & (self.written - points))

    def _constant(self, e: c_ast.Node) -> int | None:
        if isinstance(e, c_ast.Constant) and e.type == "int":
            text = e.value.rstrip("uUlL")
            try:
                return int(text, 0) if not (len(text) > 1 and text[0] == "0" and text[1:].isdigit()) else int(text, 8)
            except ValueError:
                return None
        if isinstance(e, c_ast.ID) and e.name in self.consts:
            return self.consts[e.name]
        return None

    def _signed_names(self, e: c_ast.Node) -> bool:
        for name in names_in(e):
            if name in self.symbols.enum_values:
                continue
            var = self.symbols.variable(name)
            t = parse_type(var.scalar_type) if var is not None and var.kind == "scalar" else None
            if t is None or not t.is_integer or not t.signed:
                return False
        return not any(isinstance(n, c_ast.Constant) and n.value.lower().rstrip("l").endswith("u")
                       for n in walk_nodes(e))

    def _type_text(self, it: str, loop: c_ast.For) -> str | None:
        init = loop.init
        if isinstance(init, c_ast.DeclList) and init.decls[0].name == it:
            t = init.decls[0].type
        else:
            t = self.symbols.decls.get(it)
        if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
            return None
        return self.symbols.resolve(" ".join(t.type.names))

    def _same_signed_type(self, it: str, loop: c_ast.For) -> bool:
        text = self._type_text(it, loop)
        t = parse_type(text) if text is not None else None
        return t is not None and t.is_integer and t.signed and not t.is_bool

def _declares(loop: c_ast.For, name: str) -> bool:
    """Whether some loop header under ``loop`` declares ``name``."""
    return any(isinstance(n, c_ast.For) and isinstance(n.init, c_ast.DeclList)
               and any(d.name == name for d in n.init.decls) for n in walk_nodes(loop))


def _items(stmt: c_ast.Node | None) -> list[c_ast.Node]:
    if isinstance(stmt, c_ast.Compound):
        return list(stmt.block_items or [])
    return [stmt] if stmt is not None else []


def _only_item(stmt: c_ast.Node | None) -> c_ast.For | None:
    items = _items(stmt)
    return items[0] if len(items) == 1 and isinstance(items[0], c_ast.For) else None


def _init(loop: c_ast.For) -> tuple[str | None, c_ast.Node | None]:
    """``(i, L)`` of ``T i = L`` or ``i = L``."""
    init = loop.init
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and isinstance(init.decls[0], c_ast.Decl):
        d = init.decls[0]
        return (d.name, d.init) if d.init is not None else (None, None)
    if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        return init.lvalue.name, init.rvalue
    return None, None


def _iterator(loop: c_ast.For) -> str | None:
    return _init(loop)[0]


def _upper(c: c_ast.Node | None, it: str) -> c_ast.Node | None:
    """``U`` of ``it < U`` or ``U > it``."""
    if isinstance(c, c_ast.BinaryOp):
        if c.op == "<" and _is_id(c.left, it):
            return c.right
        if c.op == ">" and _is_id(c.right, it):
            return c.left
    return None


def _step(n: c_ast.Node | None, it: str) -> c_ast.Node | None:
    """``s`` of ``it += s``, ``it = it + s`` or ``it = s + it``."""
    if isinstance(n, c_ast.Assignment) and _is_id(n.lvalue, it):
        if n.op == "+=":
            return n.rvalue
        r = n.rvalue
        if n.op == "=" and isinstance(r, c_ast.BinaryOp) and r.op == "+":
            return r.right if _is_id(r.left, it) else r.left if _is_id(r.right, it) else None
    return None


def _unit_step(n: c_ast.Node | None, it: str) -> bool:
    if isinstance(n, c_ast.UnaryOp):
        return n.op in ("++", "p++") and _is_id(n.expr, it)
    s = _step(n, it)
    return isinstance(s, c_ast.Constant) and s.value == "1"


def _is_min(t: c_ast.TernaryOp) -> bool:
    """``a < b ? a : b`` and its other spellings of the minimum (``b > a ? a : b``...)."""
    c = t.cond
    if not (isinstance(c, c_ast.BinaryOp) and c.op in ("<", "<=", ">", ">=")):
        return False
    left, right, then, other = _key(c.left), _key(c.right), _key(t.iftrue), _key(t.iffalse)
    if {left, right} != {then, other} or left == right:
        return False
    picks_left_when_smaller = (then == left) == (c.op in ("<", "<="))
    return picks_left_when_smaller


def _key(e: c_ast.Node) -> str:
    """``e`` as text, a sum's operands in a fixed order (``ii + bs`` is ``bs + ii``)."""
    if isinstance(e, c_ast.BinaryOp) and e.op == "+":
        return "+".join(sorted((_key(e.left), _key(e.right))))
    return c_text(e)


def _is_id(node: c_ast.Node | None, name: str) -> bool:
    return isinstance(node, c_ast.ID) and node.name == name


def _untiled(points: list[tuple[c_ast.For, _Block]], outer: c_ast.For) -> c_ast.For:
    """The point loops over their blocks' whole ranges, each in its place; the first stands where
    the band's outermost block loop ``outer`` stood."""
    ids = {id(pl) for pl, _b in points}
    new_of: dict[int, c_ast.For] = {}
    for pl, b in points:
        it = _iterator(pl)
        assert it is not None
        init = pl.init
        if isinstance(init, c_ast.DeclList):
            d = init.decls[0]
            decl = c_ast.Decl(d.name, list(d.quals or []), list(d.align or []), list(d.storage or []),
                              list(d.funcspec or []), copy.deepcopy(d.type), copy.deepcopy(b.lower), None,
                              coord=d.coord)
            new_init: c_ast.Node = c_ast.DeclList([decl], coord=init.coord)
        else:
            new_init = c_ast.Assignment("=", c_ast.ID(it, coord=init.coord), copy.deepcopy(b.lower), coord=init.coord)
        cond = c_ast.BinaryOp("<", c_ast.ID(it, coord=pl.cond.coord), copy.deepcopy(b.upper), coord=pl.cond.coord)
        new_of[id(pl)] = c_ast.For(new_init, cond, pl.next, pl.stmt, coord=pl.coord)
    for pl, _b in points[:-1]:   # each point loop's body holds the next one
        replace_top_down(new_of[id(pl)], lambda n: new_of.get(id(n)) if id(n) in ids else None)
    first = new_of[id(points[0][0])]
    return c_ast.For(first.init, first.cond, first.next, first.stmt, coord=outer.coord)
