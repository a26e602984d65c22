"""Conditional subscripts: nest copy -> the nest with ``A[c ? e1 : e2]`` read as ``c ? A[e1] : A[e2]``.

C's ``?:`` evaluates its condition and then exactly one operand, so both forms read one element,
the same one: the select of two reads is exact, and each read has an affine subscript (clamped
stencil neighbours, ``I[z][y == 0 ? y : y - 1][x]``). The conditional may sit under integer casts
and ``+``/``-``/``*`` of the subscript (``(int) (x == 0 ? c : c - 1) + 1``). Only reads are
rewritten: an assignment's target keeps its subscript (a write must stay one access). At most
``MAX_READS`` reads come out of one access.
"""

from __future__ import annotations

import copy

from pycparser import c_ast

MAX_READS = 16


def _lift(e: c_ast.Node) -> tuple[c_ast.Node, c_ast.Node, c_ast.Node] | None:
    """``(c, e1, e2)`` when ``e`` equals ``c ? e1 : e2`` by moving one conditional outwards."""
    if isinstance(e, c_ast.TernaryOp):
        return e.cond, e.iftrue, e.iffalse
    if isinstance(e, c_ast.Cast):
        inner = _lift(e.expr)
        if inner is None:
            return None
        c, a, b = inner
        return c, c_ast.Cast(e.to_type, a, coord=e.coord), c_ast.Cast(copy.deepcopy(e.to_type), b, coord=e.coord)
    if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+"):
        inner = _lift(e.expr)
        if inner is None:
            return None
        c, a, b = inner
        return c, c_ast.UnaryOp(e.op, a, coord=e.coord), c_ast.UnaryOp(e.op, b, coord=e.coord)
    if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-", "*"):
        for side in ("left", "right"):
            inner = _lift(getattr(e, side))
            if inner is None:
                continue
            c, a, b = inner
            other = e.right if side == "left" else e.left
            pair = [c_ast.BinaryOp(e.op, a, copy.deepcopy(other), coord=e.coord) if side == "left"
                    else c_ast.BinaryOp(e.op, copy.deepcopy(other), a, coord=e.coord),
                    c_ast.BinaryOp(e.op, b, copy.deepcopy(other), coord=e.coord) if side == "left"
                    else c_ast.BinaryOp(e.op, copy.deepcopy(other), b, coord=e.coord)]
            return c, pair[0], pair[1]
    return None


def _split(ref: c_ast.ArrayRef, budget: int) -> c_ast.Node:
    """``ref`` (a whole access ``A[..][..]``) as a select of reads, or ``ref`` unchanged."""
    chain: list[c_ast.ArrayRef] = []
    n: c_ast.Node = ref
    while isinstance(n, c_ast.ArrayRef):
        chain.append(n)
        n = n.name
    if budget < 2:
        return ref
    for k, part in enumerate(chain):
        lifted = _lift(part.subscript)
        if lifted is None:
            continue
        cond, a, b = lifted
        sides = []
        for sub in (a, b):
            other = copy.deepcopy(ref)
            m: c_ast.Node = other
            for _ in range(k):
                assert isinstance(m, c_ast.ArrayRef)
                m = m.name
            assert isinstance(m, c_ast.ArrayRef)
            m.subscript = sub
            sides.append(_split(other, budget // 2))
        return c_ast.TernaryOp(cond, sides[0], sides[1], coord=ref.coord)
    return ref


def _rewrite(node: c_ast.Node) -> c_ast.Node:
    if isinstance(node, c_ast.ArrayRef):
        for s in _subscripts(node):
            _rewrite_children(s)
        return _split(node, MAX_READS)
    if isinstance(node, c_ast.Assignment):
        target = node.lvalue
        if isinstance(target, c_ast.ArrayRef):
            for s in _subscripts(target):
                _rewrite_children(s)
        node.rvalue = _rewrite(node.rvalue)
        return node
    if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--", "&"):
        return node
    _rewrite_children(node)
    return node


def _subscripts(ref: c_ast.ArrayRef) -> list[c_ast.Node]:
    out: list[c_ast.Node] = []
    n: c_ast.Node = ref
    while isinstance(n, c_ast.ArrayRef):
        out.append(n)
        n = n.name
    return out


def _rewrite_children(node: c_ast.Node) -> None:
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        value = getattr(node, attr, None)
        if isinstance(value, c_ast.ArrayRef) and isinstance(node, c_ast.ArrayRef) and attr == "name":
            continue  # the inner part of an access: rewritten with the whole access
        if isinstance(value, c_ast.Node):
            setattr(node, attr, _rewrite(value))
        elif isinstance(value, list):
            value[:] = [_rewrite(x) if isinstance(x, c_ast.Node) else x for x in value]


def split_selects(nest: c_ast.Node) -> None:
    """Rewrite, in ``nest`` (a copy, edited in place), every read with a conditional subscript."""
    _rewrite_children(nest)

