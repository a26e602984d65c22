"""Guarded reads: the condition of a select around a read -> the iterator bounds under which it is evaluated.

After the select rewrite (``mdpoly.frontend.normalize.selects``) a clamped neighbour reads
``x == 0 ? in[c] : in[c - 1]``. On a flat array with a run-time row length the read ``in[c - 1]``
is ``in[y][x - 1]`` in the view (``mdpoly.frontend.delinearize``), whose column is -1 at ``x == 0``:
over the whole box the view is not exact, and the range check refuses the nest at compile time.
But C's ``?:`` evaluates only the operand its condition picks, and the generated code keeps the
select as written (the user's expression with the reads substituted in place), so ``in[y][x - 1]``
is evaluated only where ``x != 0``: the same flat address the original reads, in row ``y``.

Soundness. For each read under selects, this module turns the selects' conditions (taken or not)
into bounds of single iterators (``x != 0`` with ``x >= 0``: ``x >= 1``; ``x < w - 1``: ``x <= w - 2``;
``&&`` of taken conditions, ``||`` of untaken ones, ``!``); anything else adds no bound. The range
check of the view (``Delinearizer.preconditions``) then takes that read's extremes over the box
narrowed by those bounds, a superset of the points where it is evaluated, so every evaluated
read has its subscripts inside their dimensions -- the view computes the original's address --
while reads that are never evaluated do not matter. This applies only to arrays the nest does not
write (no dependence involves them; the dependence analysis sees the read at every point of the
box, a superset). The arrays it applied to are marked ``Variable.lazy``: a stage that reads
inputs ahead of their evaluation (the micro-kernel's packed panels, GPU ``__local`` caches) could
touch the never-evaluated, out-of-array addresses, so packing skips them and GPU targets keep
the nest (``gpu-guarded-read``). The alias ranges (``mdpoly.frontend.alias``) of such an array
cover whole rows between the lowest and highest first view subscript over the narrowed boxes of
all its reads (``Variable.lazy_rows``), a superset of every evaluated address: the clamped halo
rows ``in[z - 1]`` at ``z == 0`` are never read, so a buffer that ends just before ``in`` (the
next ``malloc``'s block, a swapped time-step buffer) does not fail the no-overlap check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace

from pycparser import c_ast

from mdpoly.frontend.box import BoxBounds
from mdpoly.ir.mdh import Affine
from mdpoly.ir.scop import Scop

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


@dataclass(frozen=True, slots=True)
class Bound:
    """``iterator >= value`` (``ge``), ``<= value`` (``le``) or ``!= value`` (``ne``), in parameters;
    or (``affine``, no iterator) ``value >= 0`` over several iterators (``x + t >= 0`` of a clamped
    tap ``x + t < 0 ? row[0] : row[x + t]``), which bounds subscripts that differ from ``value``
    by parameters only (``within_domain``)."""

    iterator: str
    op: str
    value: Affine


def _plus(a: Affine, k: int) -> Affine:
    return Affine(a.terms, a.constant + k)


def _minus(a: Affine, b: Affine) -> Affine:
    d = dict(a.terms)
    for n, c in b.terms:
        d[n] = d.get(n, 0) - c
    return Affine.of(d, a.constant - b.constant)


def bounds_of(cond: c_ast.Node, taken: bool, iterators: set[str],
              affine: Callable[[c_ast.Node], Affine | None]) -> tuple[Bound, ...]:
    """What ``cond`` (``taken``: true, else false) says about single iterators; ``affine`` gives a
    side's value in size parameters (None: not known)."""
    if isinstance(cond, c_ast.UnaryOp) and cond.op == "!":
        return bounds_of(cond.expr, not taken, iterators, affine)
    if not isinstance(cond, c_ast.BinaryOp):
        return ()
    if (cond.op == "&&" and taken) or (cond.op == "||" and not taken):
        return bounds_of(cond.left, taken, iterators, affine) + bounds_of(cond.right, taken, iterators, affine)
    if cond.op not in _FLIP:
        return ()
    left, right = affine(cond.left), affine(cond.right)
    if left is None or right is None:
        return ()
    diff = _minus(left, right)  # cond: diff op 0
    its = [(n, c) for n, c in diff.terms if n in iterators]
    if len(its) != 1 or its[0][1] not in (1, -1):
        return _affine_bounds(diff, cond.op if taken else _NEGATE[cond.op]) if its else ()
    name, c = its[0]
    op = cond.op if c == 1 else _FLIP[cond.op]
    value = _minus(Affine.of({name: 1}), Affine(diff.terms, diff.constant) if c == 1 else
                   Affine.of({n: -k for n, k in diff.terms}, -diff.constant))  # name op value
    op = op if taken else _NEGATE[op]
    return {"<": (Bound(name, "le", _plus(value, -1)),), "<=": (Bound(name, "le", value),),
            ">": (Bound(name, "ge", _plus(value, 1)),), ">=": (Bound(name, "ge", value),),
            "==": (Bound(name, "ge", value), Bound(name, "le", value)), "!=": (Bound(name, "ne", value),)}[op]


def _affine_bounds(diff: Affine, op: str) -> tuple[Bound, ...]:
    """``diff op 0`` over integers as ``affine`` bounds (each ``value >= 0``)."""
    neg = Affine.of({n: -c for n, c in diff.terms}, -diff.constant)
    ge = {"<": (_plus(neg, -1),), "<=": (neg,), ">": (_plus(diff, -1),), ">=": (diff,), "==": (diff, neg)}
    return tuple(Bound("", "affine", g) for g in ge.get(op, ()))


def affine_constraints(bounds: tuple[Bound, ...]) -> tuple[Affine, ...]:
    """The ``affine`` bounds of ``bounds`` as constraints ``g >= 0`` (``within_domain``'s form)."""
    return tuple(b.value for b in bounds if b.op == "affine")


@contextmanager
def guarded(stack: list[Bound], bounds: tuple[Bound, ...]) -> Iterator[None]:
    """Reads built inside see ``bounds`` on ``stack`` (``Delinearizer.guards``)."""
    stack.extend(bounds)
    try:
        yield
    finally:
        del stack[len(stack) - len(bounds):]


def narrowed(box: dict[str, BoxBounds], bounds: tuple[Bound, ...]) -> dict[str, BoxBounds]:
    """``box`` with each iterator's bounds tightened by ``bounds`` where the tighter one is known
    (the difference is a constant); the result still holds every point that satisfies them."""
    out = dict(box)
    for b in bounds:
        cur = out.get(b.iterator)
        if cur is None:
            continue
        last = _plus(cur.upper, -1)
        down, up = _minus(b.value, cur.lower), _minus(last, b.value)
        if b.op == "ge" and down.is_constant and down.constant > 0:
            cur = BoxBounds(b.value, cur.upper)
        elif b.op == "le" and up.is_constant and up.constant > 0:
            cur = BoxBounds(cur.lower, _plus(b.value, 1))
        elif b.op == "ne" and down.is_constant and down.constant == 0:
            cur = BoxBounds(_plus(cur.lower, 1), cur.upper)
        elif b.op == "ne" and up.is_constant and up.constant == 0:
            cur = BoxBounds(cur.lower, b.value)
        out[b.iterator] = cur
    return out


def within_domain(sub: Affine, lo: Affine, hi: Affine, domain: tuple[Affine, ...],
                  iterators: set[str]) -> tuple[Affine, Affine, bool]:
    """``lo``/``hi`` (``sub``'s extremes over the box) tightened by the read's ``if`` conditions
    (each ``g >= 0``): ``g = sub - d`` gives ``sub >= d``, ``g = d - sub`` gives ``sub <= d``, ``d``
    in parameters only (``iy = oy + r - pad`` under ``iy >= 0 && iy < H``: ``0 <= iy <= H - 1``).
    A bound replaces the box's where the box's is not already known to be at least as tight (the
    difference is not a constant of the right sign); the flag says whether any did."""
    tightened = False
    for g in domain:
        low = _minus(sub, g)  # sub >= low
        if not low.names() & iterators:
            gap = _minus(low, lo)
            if not (gap.is_constant and gap.constant <= 0):
                lo, tightened = low, True
        high = _minus(sub, Affine.of({n: -c for n, c in g.terms}, -g.constant))  # sub <= sub + g
        if not high.names() & iterators:
            gap = _minus(hi, high)
            if not (gap.is_constant and gap.constant <= 0):
                hi, tightened = high, True
    return lo, hi, tightened


def mark_lazy(scop: Scop, arrays: set[str], rows: Mapping[str, tuple[Affine, Affine] | None] | None = None) -> Scop:
    """``scop`` with the arrays whose reads were checked under their guards marked ``lazy``, with
    ``rows`` (array -> first view subscript's extremes over its evaluated reads) as ``lazy_rows``."""
    if not arrays:
        return scop
    rows = rows or {}
    return replace(scop, variables=tuple(replace(v, lazy=True, lazy_rows=rows.get(v.name)) if v.name in arrays else v
                                         for v in scop.variables))
