"""A loop header as written -> the same loop in OpenMP's canonical form, or why it has none.

A loop that runs in parallel around its body as written (``mdpoly.frontend.privatize``) keeps the
user's header under ``#pragma omp parallel for``, and OpenMP accepts only a test of the iterator
itself against a loop-invariant bound (``i < b``, ``b > i``, ``i != b``). Unrolled and paired
loops offset it by constants: ``t + 1 < n``, ``2 + i < n``, ``k - 1 >= 0``. Such a test moves its
offset to the bound, computed in ``long long`` so that it cannot overflow where the original's
did not: ``t < (long long) (n) - 1``. A test the rewrite cannot bring into that form (the
iterator twice, multiplied, under a call) is reported, and the loop is not made parallel.
"""

from __future__ import annotations

import copy

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import names_in
from mdpoly.frontend.symbols import c_text

_RELATIONS = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}


def _long_long(e: c_ast.Node) -> c_ast.Node:
    return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(
        ["long", "long"]))), e)


def _isolated(side: c_ast.Node, other: c_ast.Node, it: str) -> c_ast.Node | None:
    """``other`` rewritten so that ``side OP other`` is ``it OP result``: offsets added to ``it``
    in ``side`` move to ``other`` with the opposite sign; None when ``side`` is no such sum."""
    moved: c_ast.Node = other
    widened = False
    while not (isinstance(side, c_ast.ID) and side.name == it):
        if not (isinstance(side, c_ast.BinaryOp) and side.op in ("+", "-")):
            return None
        left_has, right_has = it in names_in(side.left), it in names_in(side.right)
        if left_has == right_has:
            return None
        if not widened:
            moved, widened = _long_long(moved), True
        if left_has:   # (x + c) op b  ->  x op b - c;  (x - c) op b  ->  x op b + c
            moved = c_ast.BinaryOp("-" if side.op == "+" else "+", moved, copy.deepcopy(side.right))
            side = side.left
        elif side.op == "+":   # (c + x) op b  ->  x op b - c
            moved = c_ast.BinaryOp("-", moved, copy.deepcopy(side.left))
            side = side.right
        else:   # c - x: the iterator negated
            return None
    return moved


def canonical_header(loop: c_ast.For, it: str) -> str | None:
    """Rewrite ``loop``'s condition in place into OpenMP's canonical form for the iterator ``it``;
    returns None when it is (now) canonical, else why it cannot be."""
    cond = loop.cond
    why = f"its loop condition '{c_text(cond) if cond is not None else ''}' has no form OpenMP's parallel loop takes"
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in _RELATIONS):
        return why
    left_has, right_has = it in names_in(cond.left), it in names_in(cond.right)
    if left_has == right_has:
        return why
    side, other, op = (cond.left, cond.right, cond.op) if left_has else (cond.right, cond.left, _RELATIONS[cond.op])
    if isinstance(side, c_ast.ID) and side.name == it:
        return None
    bound = _isolated(side, other, it)
    if bound is None:
        return why
    loop.cond = c_ast.BinaryOp(op, c_ast.ID(it, coord=side.coord), bound, coord=cond.coord)
    return None
