"""An ``if``'s affine condition + the loops around it -> the affine bounds it implies there.

An ``if`` whose condition is a union of affine pieces (``y == 0 || y == h - 1 || x == 0 || x ==
w - 1``, or its complement in the ``else``) makes its statements predicated rather than guarded
(``mdpoly.frontend.scop_statements``): their domain stays the loops' box. Within the loops'
bounds, though, the pieces often share simple bounds: the complement of a Sobel filter's border
test is ``1 <= y <= h - 2 and 1 <= x <= w - 2``. Those bounds (isl's simple hull of the
condition's set, built from its comparisons with union, intersection and complement, within the
loops) are where a read inside the branch is ever evaluated, which is what
the range checks of a delinearized read (``mdpoly.frontend.delinearize``) may assume.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import islpy as isl
from pycparser import c_ast

from mdpoly.ir.mdh import Affine
from mdpoly.ir.scop import Loop

#: the most comparisons of a condition handed to isl
MAX_PIECES = 64


#: an affine side of a comparison, ``None`` where it is not affine
Side = Callable[[c_ast.Node], Affine | None]
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def implied_by_condition(cond: c_ast.Node, negated: bool, side: Side, loops: Sequence[Loop],
                         guards: Sequence[Affine] = ()) -> tuple[Affine, ...]:
    """Constraints ``g >= 0`` that hold wherever ``cond`` (or, ``negated``, its negation) holds
    inside ``loops`` (outermost first, each ``lower <= it < upper``) and ``guards``; ``()`` when
    there are none, the condition is not built from affine comparisons with ``&&``, ``||``,
    ``!``, or isl cannot tell."""
    if not loops:
        return ()
    comparisons: list[tuple[Affine, str, Affine]] = []
    shape = _shape(cond, side, comparisons)
    if shape is None or len(comparisons) > MAX_PIECES:
        return ()
    its = [lp.iterator for lp in loops]
    names = {n for a, _, b in comparisons for n in a.names() | b.names()} | {n for g in guards for n in g.names()}
    names |= {n for lp in loops for e in (lp.lower, lp.upper) for n in e.names()}
    params = sorted(names - set(its))
    prefix = f"[{', '.join(params)}] -> " if params else ""
    head = f"{prefix}{{ [{', '.join(its)}]"
    bounds = [f"{lp.lower.to_c()} <= {lp.iterator} < {lp.upper.to_c()}" for lp in loops]
    bounds += [f"{g.to_c()} >= 0" for g in guards]
    try:
        box = isl.Set(f"{head} : {' and '.join(bounds)} }}")
        sets = [isl.Set(f"{head} : {a.to_c()} {'=' if op == '==' else op} {b.to_c()} }}") if op != "!=" else
                isl.Set(f"{head} : {a.to_c()} < {b.to_c()} or {a.to_c()} > {b.to_c()} }}")
                for a, op, b in comparisons]
        region = _evaluate(shape, sets, box)
        if negated:
            region = box.subtract(region)
        region = region.intersect(box).coalesce()
        if region.is_empty():
            return ()
        hull = region.simple_hull()
    except isl.Error:
        return ()
    return _constraints(hull, its)


#: a condition's shape over its comparisons: an index into them, or (op, operands)
Shape = int | tuple[str, tuple["Shape", ...]]


def _shape(cond: c_ast.Node, side: Side, out: list[tuple[Affine, str, Affine]]) -> Shape | None:
    if isinstance(cond, c_ast.UnaryOp) and cond.op == "!":
        inner = _shape(cond.expr, side, out)
        return None if inner is None else ("!", (inner,))
    if isinstance(cond, c_ast.BinaryOp) and cond.op in ("&&", "||"):
        a, b = _shape(cond.left, side, out), _shape(cond.right, side, out)
        return None if a is None or b is None else (cond.op, (a, b))
    if isinstance(cond, c_ast.BinaryOp) and cond.op in _FLIP:
        left, right = side(cond.left), side(cond.right)
        if left is None or right is None:
            return None
        out.append((left, cond.op, right))
        return len(out) - 1
    return None


def _evaluate(shape: Shape, sets: list[isl.Set], box: isl.Set) -> isl.Set:
    if isinstance(shape, int):
        return sets[shape]
    op, parts = shape
    if op == "!":
        return box.subtract(_evaluate(parts[0], sets, box))
    a, b = (_evaluate(p, sets, box) for p in parts)
    return a.intersect(b) if op == "&&" else a.union(b)


def _constraints(hull: isl.BasicSet, its: list[str]) -> tuple[Affine, ...]:
    out: list[Affine] = []

    def add(c: isl.Constraint) -> None:
        terms: dict[str, int] = {}
        for kind in (isl.dim_type.set, isl.dim_type.param):
            for k in range(c.get_space().dim(kind)):
                v = c.get_coefficient_val(kind, k)
                label = c.get_space().get_dim_name(kind, k) if kind == isl.dim_type.param else its[k]
                if label is None:
                    raise ValueError("an unnamed parameter")
                if not v.is_zero():
                    terms[label] = int(v.to_python())
        const = int(c.get_constant_val().to_python())
        e = Affine.of(terms, const)
        out.append(e)
        if c.is_equality():
            out.append(Affine.of({n: -k for n, k in e.terms}, -e.constant))

    try:
        hull.foreach_constraint(add)
    except (isl.Error, ValueError, TypeError):
        return ()
    return tuple(g for g in out if g.terms)
