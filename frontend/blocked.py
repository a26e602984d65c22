"""Blocking a parallel loop around sequential inner loops: ``PrivateLoop`` -> the same loop, its
iterations taken in blocks and each block's iterations interleaved inside the inner loops.

ADI's column sweep ``for j { ...; for i p[i][j] = f(p[i-1][j]); ... }`` runs a recurrence down
each column: the parallel loop ``j`` is the contiguous dimension of the arrays, the sequential
inner loop ``i`` strides over rows. Taking ``j`` in blocks of ``BLOCK`` and moving the block's
``j`` loop inside every inner loop (strip-mining and interchange) makes the innermost loop run
along rows -- contiguous accesses the compiler vectorizes -- while each block still runs its
recurrences in order::

    for (mdp_jb = lo; mdp_jb < hi; mdp_jb += BLOCK) {
      for (j = mdp_jb; j < min(mdp_jb + BLOCK, hi); j++) S1;
      for (i = 1; i < n; i++) for (j = mdp_jb; j < min(...); j++) S2;
    }

Legal because the loop carries no dependence (``mdpoly.frontend.privatize`` checked it with isl,
and it privatizes nothing): every dependence joins two instances of the same ``j``, whose order
-- the body's items in textual order, each inner loop's iterations in order -- is unchanged.
``blocked`` applies it only to a single parallel loop without copies of temporaries whose body
items are assignments and ``for`` loops of assignments that do not name the parallel iterator in
their headers, declare nothing and are not under a pragma, and only where it pays: more of the
inner loops' array accesses run along the parallel iterator (it is in their last subscript)
than along the inner loop's.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from pycparser import c_ast

from mdpoly.frontend.c_text import SourceGenerator
from mdpoly.ir.nest import PrivateLoop

#: Iterations of the parallel loop interleaved inside each inner loop.
BLOCK = 32
_BLOCK_ITERATOR = "mdp_blk"


def blocked(loop: PrivateLoop, node: c_ast.For) -> PrivateLoop:
    """``loop`` (the parallel loop ``node``) with its iterations blocked inside its inner loops,
    or ``loop`` unchanged where that does not apply or would not pay (see the module docstring)."""
    if len(loop.iterators) != 1 or loop.copies:
        return loop
    it = loop.iterators[0]
    bounds = _unit_loop(node, it)
    items = _items(node.stmt)
    if bounds is None or items is None or not items:
        return loop
    inner = [x for x in items if isinstance(x, c_ast.For)]
    if not inner or _score(inner, it) <= 0:
        return loop
    lo, hi = bounds
    blk = c_ast.ID(_BLOCK_ITERATOR)
    end = c_ast.TernaryOp(c_ast.BinaryOp("<", c_ast.BinaryOp("+", blk, c_ast.Constant("int", str(BLOCK))),
                                         copy.deepcopy(hi)),
                          c_ast.BinaryOp("+", c_ast.ID(_BLOCK_ITERATOR), c_ast.Constant("int", str(BLOCK))),
                          copy.deepcopy(hi))

    def block_loop(stmts: list[c_ast.Node]) -> c_ast.For:
        return c_ast.For(c_ast.Assignment("=", c_ast.ID(it), c_ast.ID(_BLOCK_ITERATOR)),
                         c_ast.BinaryOp("<", c_ast.ID(it), copy.deepcopy(end)), c_ast.UnaryOp("p++", c_ast.ID(it)),
                         c_ast.Compound([copy.deepcopy(s) for s in stmts]))

    body: list[c_ast.Node] = []
    plain: list[c_ast.Node] = []  # consecutive assignments: one block loop around them
    for x in items:
        if isinstance(x, c_ast.For):
            if plain:
                body.append(block_loop(plain))
                plain = []
            stmts = _items(x.stmt)
            assert stmts is not None
            body.append(c_ast.For(copy.deepcopy(x.init), copy.deepcopy(x.cond), copy.deepcopy(x.next),
                                  c_ast.Compound([block_loop(stmts)])))
        else:
            plain.append(x)
    if plain:
        body.append(block_loop(plain))
    decl = c_ast.Decl(_BLOCK_ITERATOR, [], [], [], [], c_ast.TypeDecl(_BLOCK_ITERATOR, [], None,
                                                                     c_ast.IdentifierType(["long"])),
                      copy.deepcopy(lo), None)
    outer = c_ast.For(c_ast.DeclList([decl]), c_ast.BinaryOp("<", c_ast.ID(_BLOCK_ITERATOR), copy.deepcopy(hi)),
                      c_ast.Assignment("+=", c_ast.ID(_BLOCK_ITERATOR), c_ast.Constant("int", str(BLOCK))),
                      c_ast.Compound(body))
    text = str(SourceGenerator()._generate_stmt(outer, add_indent=False))
    return replace(loop, text=text, private=tuple(sorted({*loop.private, it})), blocked=BLOCK)


def _unit_loop(node: c_ast.For, it: str) -> tuple[c_ast.Node, c_ast.Node] | None:
    """``(lo, hi)`` of ``for (it = lo; it < hi; it++)`` (bounds that do not name ``it``)."""
    init, cond, nxt = node.init, node.cond, node.next
    if not (isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID)
            and init.lvalue.name == it):
        return None
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op == "<" and isinstance(cond.left, c_ast.ID)
            and cond.left.name == it):
        return None
    step = (isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("p++", "++") and isinstance(nxt.expr, c_ast.ID)
            and nxt.expr.name == it)
    if not step or it in _names(init.rvalue) or it in _names(cond.right):
        return None
    return init.rvalue, cond.right


def _items(stmt: c_ast.Node) -> list[c_ast.Node] | None:
    """The body's items when each is an assignment or a ``for`` loop of assignments, else ``None``."""
    items = list(stmt.block_items or []) if isinstance(stmt, c_ast.Compound) else [stmt]
    for x in items:
        if isinstance(x, c_ast.For):
            inner = list(x.stmt.block_items or []) if isinstance(x.stmt, c_ast.Compound) else [x.stmt]
            if not inner or not all(isinstance(s, c_ast.Assignment) for s in inner):
                return None
            if isinstance(x.init, c_ast.DeclList) or not isinstance(x.init, c_ast.Assignment):
                return None
        elif not isinstance(x, c_ast.Assignment):
            return None
    # a scalar written in the body (an iterator, say) would be shared by the block's iterations
    if any(isinstance(s.lvalue, c_ast.ID) for s in _assignments(items)):
        return None
    return items


def _assignments(items: list[c_ast.Node]) -> list[c_ast.Assignment]:
    out: list[c_ast.Assignment] = []
    for x in items:
        if isinstance(x, c_ast.For):
            inner = list(x.stmt.block_items or []) if isinstance(x.stmt, c_ast.Compound) else [x.stmt]
            out += [s for s in inner if isinstance(s, c_ast.Assignment)]
        elif isinstance(x, c_ast.Assignment):
            out.append(x)
    return out


def _score(inner: list[c_ast.For], it: str) -> int:
    """Accesses of the inner loops along ``it`` (in the last subscript) minus those along the
    inner loop's own iterator; ``-1`` when an inner loop's header names ``it``."""
    score = 0
    for x in inner:
        own = x.init.lvalue.name if isinstance(x.init, c_ast.Assignment) and isinstance(x.init.lvalue, c_ast.ID) else ""
        if not own or own == it or it in _names(x.init) | _names(x.cond) | _names(x.next):
            return -1
        for ref in _array_refs(x.stmt):
            last = _names(ref.subscript)
            score += 1 if it in last else -1 if own in last else 0
    return score


class _Refs(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.refs: list[c_ast.ArrayRef] = []

    def visit_ArrayRef(self, node: c_ast.ArrayRef) -> None:
        self.refs.append(node)  # the outermost reference: its subscript is the last one
        name = node.name
        while isinstance(name, c_ast.ArrayRef):  # inner subscripts may hold references too
            self.visit(name.subscript)
            name = name.name
        self.visit(node.subscript)


def _array_refs(node: c_ast.Node) -> list[c_ast.ArrayRef]:
    v = _Refs()
    v.visit(node)
    return v.refs


class _Names(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_ID(self, node: c_ast.ID) -> None:
        self.names.add(str(node.name))


def _names(node: c_ast.Node | None) -> set[str]:
    if node is None:
        return set()
    v = _Names()
    v.visit(node)
    return v.names
