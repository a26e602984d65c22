"""Bounding boxes of non-rectangular nests: ``Scop`` -> per-loop bounds in size parameters only.

A triangular nest (``for i < n: for j <= i``) has bounds that depend on outer iterators; the MDH
needs a rectangular index set. ``bounding_box`` replaces every iterator in a loop's bounds by
its own box bound (lower for a positive coefficient of a lower bound, ...), outermost loop
first, which gives the smallest box of that shape containing the domain (exact for the usual
triangles and bands). ``domain_constraints`` lists what a point of the box must satisfy to be
in the domain: the original bounds, as affine expressions ``>= 0``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mdpoly.ir.mdh import Affine
from mdpoly.ir.scop import Scop


@dataclass(frozen=True, slots=True)
class BoxBounds:
    """``lower <= iterator < upper`` with both in size parameters only."""

    lower: Affine
    upper: Affine

    @property
    def extent(self) -> Affine:
        return _add(self.upper, _scale(self.lower, -1))


def _scale(a: Affine, k: int) -> Affine:
    return Affine.of({n: c * k for n, c in a.terms}, a.constant * k)


def _add(a: Affine, b: Affine) -> Affine:
    d = dict(a.terms)
    for n, c in b.terms:
        d[n] = d.get(n, 0) + c
    return Affine.of(d, a.constant + b.constant)


def _extreme(e: Affine, box: dict[str, BoxBounds], smallest: bool) -> Affine:
    """The smallest (or largest) value of ``e`` when each iterator ranges over its box."""
    out = Affine.of(constant=e.constant)
    for name, c in e.terms:
        b = box.get(name)
        if b is None:
            out = _add(out, Affine.of({name: c}))
            continue
        last = _add(b.upper, Affine.of(constant=-1))
        pick = (b.lower if c > 0 else last) if smallest else (last if c > 0 else b.lower)
        out = _add(out, _scale(pick, c))
    return out


def box_extremes(e: Affine, box: dict[str, BoxBounds]) -> tuple[Affine, Affine]:
    """The smallest and largest value of ``e`` over ``box`` (iterator -> bounds), in parameters."""
    return _extreme(e, box, smallest=True), _extreme(e, box, smallest=False)


def bounding_box(scop: Scop) -> tuple[BoxBounds, ...]:
    """One ``BoxBounds`` per loop of ``scop`` (same order), in size parameters only."""
    box: dict[str, BoxBounds] = {}
    out: list[BoxBounds] = []
    for lp in scop.loops:  # parents come before their children
        lower = _extreme(lp.lower, box, smallest=True)
        upper = _add(_extreme(_add(lp.upper, Affine.of(constant=-1)), box, smallest=False), Affine.of(constant=1))
        b = BoxBounds(lower, upper)
        box[lp.iterator] = b
        out.append(b)
    return tuple(out)


def is_rectangular(scop: Scop) -> bool:
    its = {lp.iterator for lp in scop.loops}
    return not any((lp.lower.names() | lp.upper.names()) & its for lp in scop.loops)


def domain_constraints(scop: Scop) -> tuple[Affine, ...]:
    """The loop bounds that involve outer iterators and the statements' ``if`` guards, as
    ``expr >= 0`` (empty for a box). The guards are an innermost statement's, which hold those of
    every other statement (``mdpoly.frontend.to_mdh`` checks)."""
    its = {lp.iterator for lp in scop.loops}
    deepest = max(scop.statements, key=lambda s: len(s.loops), default=None)
    out: list[Affine] = list(deepest.guards) if deepest is not None else []
    for lp in scop.loops:
        if lp.lower.names() & its:
            out.append(_add(Affine.of({lp.iterator: 1}), _scale(lp.lower, -1)))
        if lp.upper.names() & its:
            out.append(_add(_add(lp.upper, Affine.of(constant=-1)), Affine.of({lp.iterator: -1})))
    return tuple(dict.fromkeys(out))
