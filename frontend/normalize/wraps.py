"""Periodic neighbours: nest copy -> the nest with ``(i + 1) % n`` and ``(i + n - 1) % n`` as selects.

Grids with periodic boundaries (a torus: the game of life, lattice models, spectral and
shallow-water codes) find the neighbours of ``i`` in ``0 <= i < n`` with a remainder::

    int ym = (y + h - 1) % h, yp = (y + 1) % h;
    ... cur[ym*w + xm] + cur[yp*w + xp] ...

A remainder is no affine subscript, but for the iterator of an enclosing loop
``for (i = 0; i < n; i++)`` (``i`` and ``n`` not assigned in its body) it is one of two affine
values, and this pass writes it as the select of them, which the select pass then splits into
reads (``mdpoly.frontend.normalize.selects``, ``mdpoly.frontend.guarded_reads``):

- ``(i + 1) % n`` (also ``(i + n + 1) % n``, ``(1 + i) % n``) -> ``(i + 1 == n ? 0 : i + 1)``;
- ``(i + n - 1) % n`` (also ``(i - 1 + n) % n``, ``(n + i - 1) % n``) -> ``(i == 0 ? n - 1 : i - 1)``;
- ``i % n`` and ``(i + n) % n`` -> ``i``.

Exact: in the loop's body ``0 <= i < n``, so the dividend is ``i + 1`` in ``[1, n]`` or
``i + n - 1`` in ``[n - 1, 2n - 2]`` (``n >= 1`` there), and C's remainder of a non-negative value
by a positive one is what the select computes. The operands keep their types (the select's
arms have the usual arithmetic conversions of ``i`` and ``n``, as the remainder has). Offsets
other than -1, 0 and +1 would need ``n`` at least their size, which the body does not imply, so
they stay remainders (and the nest's subscript stays non-affine). ``n`` is matched by its text
(a name or a member expression such as ``g->nx``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.frontend.c_text import SourceGenerator, loop_iterator
from mdpoly.frontend.normalize.ast_util import assigned_names, names_in

_GEN = SourceGenerator()


@dataclass(frozen=True, slots=True)
class _Range:
    """An enclosing loop ``for (iterator = 0; iterator < bound; iterator++)``."""

    iterator: str
    bound: c_ast.Node
    bound_text: str


def _text(node: c_ast.Node) -> str:
    return "".join(_GEN.visit(node).split())


def _is_int(node: c_ast.Node, value: int) -> bool:
    if not isinstance(node, c_ast.Constant) or node.type != "int":
        return False
    try:
        return int(node.value.rstrip("uUlL"), 0) == value
    except ValueError:
        return False


def _unit_range(loop: c_ast.For) -> _Range | None:
    """The loop's iterator and bound when it counts ``0, 1, .., bound - 1`` and its body assigns
    neither the iterator nor a name of the bound."""
    it = loop_iterator(loop)
    init = loop.init
    start = (init.decls[0].init if isinstance(init, c_ast.DeclList) and len(init.decls) == 1
             else init.rvalue if isinstance(init, c_ast.Assignment) and init.op == "=" else None)
    cond, step = loop.cond, loop.next
    if it == "?" or start is None or not _is_int(start, 0):
        return None
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op == "<" and isinstance(cond.left, c_ast.ID)
            and cond.left.name == it):
        return None
    unit = ((isinstance(step, c_ast.UnaryOp) and step.op in ("++", "p++") and isinstance(step.expr, c_ast.ID)
             and step.expr.name == it)
            or (isinstance(step, c_ast.Assignment) and step.op == "+=" and isinstance(step.lvalue, c_ast.ID)
                and step.lvalue.name == it and _is_int(step.rvalue, 1)))
    if not unit:
        return None
    changed = assigned_names(loop.stmt)
    if it in changed or names_in(cond.right) & changed:
        return None
    return _Range(it, cond.right, _text(cond.right))


def _terms(node: c_ast.Node, sign: int, out: list[tuple[int, c_ast.Node]]) -> None:
    """``node`` as signed terms of a sum (``a + b - c`` -> ``[(1, a), (1, b), (-1, c)]``)."""
    if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-"):
        _terms(node.left, sign, out)
        _terms(node.right, sign if node.op == "+" else -sign, out)
    else:
        out.append((sign, node))


def _wrapped(node: c_ast.BinaryOp, ranges: list[_Range]) -> c_ast.Node | None:
    """The select equal to ``node`` (a ``%``), or None."""
    bound = _text(node.right)
    for r in reversed(ranges):   # the innermost loop of that bound first
        if r.bound_text != bound:
            continue
        terms: list[tuple[int, c_ast.Node]] = []
        _terms(node.left, 1, terms)
        its = bounds = offset = 0
        for sign, t in terms:
            if isinstance(t, c_ast.ID) and t.name == r.iterator:
                its += sign
            elif _text(t) == bound:
                bounds += sign
            elif _is_int(t, 1):
                offset += sign
            else:
                break
        else:
            if its != 1 or bounds not in (0, 1) or offset not in (-1, 0, 1) or (offset == -1 and bounds != 1):
                continue
            return _select(r, offset, node.coord)
    return None


def _select(r: _Range, offset: int, coord: object) -> c_ast.Node:
    it = c_ast.ID(r.iterator, coord=coord)
    one = c_ast.Constant("int", "1", coord=coord)
    if offset == 0:
        return it
    if offset == 1:
        nxt = c_ast.BinaryOp("+", it, one, coord=coord)
        return c_ast.TernaryOp(c_ast.BinaryOp("==", copy.deepcopy(nxt), copy.deepcopy(r.bound), coord=coord),
                               c_ast.Constant("int", "0", coord=coord), nxt, coord=coord)
    return c_ast.TernaryOp(c_ast.BinaryOp("==", copy.deepcopy(it), c_ast.Constant("int", "0", coord=coord), coord=coord),
                           c_ast.BinaryOp("-", copy.deepcopy(r.bound), copy.deepcopy(one), coord=coord),
                           c_ast.BinaryOp("-", it, one, coord=coord), coord=coord)


def _rewrite(node: c_ast.Node, ranges: list[_Range]) -> None:
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        value = getattr(node, attr, None)
        items = value if isinstance(value, list) else [value]
        for k, child in enumerate(items):
            if not isinstance(child, c_ast.Node):
                continue
            if isinstance(child, c_ast.For):
                _rewrite_loop(child, ranges)
                continue
            _rewrite(child, ranges)
            if isinstance(child, c_ast.BinaryOp) and child.op == "%" and ranges:
                new = _wrapped(child, ranges)
                if new is not None:
                    if isinstance(value, list):
                        value[k] = new
                    else:
                        setattr(node, attr, new)


def _rewrite_loop(loop: c_ast.For, ranges: list[_Range]) -> None:
    """The loop's body, with the loop's own range added to those around it (its header is left
    as written: a bound with a remainder is no affine bound either way)."""
    own = _unit_range(loop)
    if loop.stmt is not None:
        holder = c_ast.Compound([loop.stmt])
        _rewrite(holder, [*ranges, own] if own is not None else ranges)
        loop.stmt = holder.block_items[0]


def rewrite_periodic_wraps(nest: c_ast.For) -> None:
    """Rewrite, in ``nest`` (a copy, edited in place), every remainder that wraps an enclosing
    loop's iterator around its bound by at most one."""
    _rewrite_loop(nest, [])
