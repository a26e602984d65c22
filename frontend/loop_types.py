"""Loop headers under C's conversions: one ``for`` header -> the conditions under which its model holds.

The polyhedral model reads ``for (T i = L; i < B; i++)`` as ``L <= i < B`` over mathematical
integers. C evaluates it in types: ``L`` is converted to ``T``; ``i < B`` compares in the usual
arithmetic conversion of ``T`` and ``B``'s type (``int i < 40u`` compares unsigned, so
``i = -5`` is never below it); unsigned arithmetic in ``L`` or ``B`` wraps (``n - 1`` with
``unsigned n == 0``); an unsigned iterator wraps instead of passing ``B``. This module finds
what must hold for the model to be exact: conditions it can decide now (a violation keeps the
nest, with a reason) and conditions on size parameters, returned as ``Precondition``s that the
generated code checks before it runs (else the original nest runs).
"""

from __future__ import annotations

from dataclasses import dataclass

from mdpoly.frontend.expr_types import NameTypes, eval_int, expr_type, involves_unsigned
from mdpoly.ir.c_types import CType, promote, usual_conversions
from mdpoly.ir.mdh import Affine, Precondition
from mdpoly.ir.scop import Binary, Const, Expr


class HeaderMismatch(Exception):
    """The loop as C runs it differs from its model for every value of the parameters (a reason)."""


@dataclass(frozen=True, slots=True)
class BoundSide:
    """One bound as written (``expr``, its C text ``text``) and as modelled (``value``)."""

    expr: Expr
    text: str
    value: Affine


def _wide(types: list[CType | None]) -> str:
    big_unsigned = any(t is not None and not t.is_float and not t.signed and t.size >= 8 for t in types)
    return "__int128" if big_unsigned else "long long"


def math_text(a: Affine, wide: str = "long long", values: dict[str, str] | None = None) -> str:
    """``a`` evaluated in ``wide`` (each name converted first), e.g. ``(long long)n - 1``; a name
    in ``values`` (a front-end parameter) is printed as its C expression."""
    text = ""
    for n, c in a.terms:
        name = f"({values[n]})" if values and n in values else n
        term = f"({wide}){name}" if abs(c) == 1 else f"{abs(c)} * ({wide}){name}"
        text = (f"-{term}" if c < 0 else term) if not text else f"{text} {'-' if c < 0 else '+'} {term}"
    k = a.constant
    lit = f"{abs(k)}LL" if abs(k) > 2**31 - 1 else str(abs(k))
    if not text:
        return f"({wide}){'-' if k < 0 else ''}{lit}"
    return f"{text} {'-' if k < 0 else '+'} {lit}" if k else text


def _fixed(a: Affine) -> int | None:
    return a.constant if a.is_constant else None


class HeaderChecker:
    """Collects the preconditions of one loop header; raises ``HeaderMismatch`` when the model is
    wrong whatever the parameters are."""

    def __init__(self, iterator: str, it_type: CType, name_type: NameTypes, iterators: frozenset[str]) -> None:
        self.iterator = iterator
        self.it_type = it_type
        self.name_type = name_type
        self.iterators = iterators
        self.found: list[Precondition] = []

    def _need(self, cond_affine: Affine, wide_types: list[CType | None], reason: str) -> None:
        """Require ``cond_affine >= 0`` (decided now when constant)."""
        k = _fixed(cond_affine)
        if k is not None:
            if k < 0:
                raise HeaderMismatch(reason)
            return
        if cond_affine.names() & self.iterators:
            raise HeaderMismatch(reason + " (the bound depends on an outer iterator, so it cannot be checked "
                                 "before the nest)")
        self.found.append(Precondition(f"{math_text(cond_affine, _wide(wide_types))} >= 0", reason))

    def exact_value(self, side: BoundSide, what: str) -> CType | None:
        """The C value of a bound equals its model (no wrap-around); returns the bound's type."""
        t = expr_type(side.expr, self.name_type)
        if t is not None and t.is_float:
            raise HeaderMismatch(f"the {what} '{side.text}' is a floating-point value")
        if not involves_unsigned(side.expr, self.name_type):
            return t
        fixed = _fixed(side.value)
        if fixed is not None:
            if _grows_only(side.expr) and fixed >= 0:
                return t  # constants combined by + * / %: no wrap-around below the type's maximum
            got = eval_int(side.expr, self.name_type)
            if got is None or got[0] != fixed:
                raise HeaderMismatch(f"the {what} '{side.text}' wraps around in C's unsigned arithmetic")
            return t
        if side.value.names() & self.iterators:
            raise HeaderMismatch(f"the {what} '{side.text}' may wrap around in C's unsigned arithmetic")
        wide = _wide([t])
        self.found.append(Precondition(f"({wide})({side.text}) == ({math_text(side.value, wide)})",
                                       f"'{side.text}' does not wrap around"))
        return t

    def start_fits(self, start: BoundSide) -> CType | None:
        """The start value is exact and fits the iterator's type; returns its C type."""
        it = self.it_type
        st_t = self.exact_value(start, "start value")
        k = _fixed(start.value)
        if k is not None:
            if not it.min_value <= k <= it.max_value:
                raise HeaderMismatch(f"the start value {k} does not fit the iterator's type '{it.name}'")
            return st_t
        if st_t is None or st_t.min_value < it.min_value:
            self._need(Affine(start.value.terms, start.value.constant - it.min_value), [st_t],
                       f"'{start.text}' fits '{it.name}'")
        if st_t is None or st_t.max_value > it.max_value:
            self._need(_neg(start.value, it.max_value), [st_t], f"'{start.text}' fits '{it.name}'")
        return st_t

    def bound_type(self, bound: BoundSide) -> CType:
        b_t = self.exact_value(bound, "loop bound")
        if b_t is None:
            raise HeaderMismatch(f"the type of the loop bound '{bound.text}' is not known")
        return b_t

    def check(self, lower: BoundSide, bound: BoundSide, inclusive: bool,
              until_equal: bool = False, overshoot: int = 0) -> tuple[Precondition, ...]:
        """``for (iterator = lower; iterator < bound (or <=, or != when until_equal); iterator++)``."""
        it = self.it_type
        lo_t = self.start_fits(lower)
        b_t = self.bound_type(bound)
        if until_equal:
            # i != B stops at B only when it starts at or below it
            self._need(_sub(bound.value, lower.value), [lo_t, b_t],
                       f"'{self.iterator}' starts at or below '{bound.text}'")
        cmp_t = usual_conversions(promote(it), promote(b_t))
        if cmp_t.is_integer and not cmp_t.signed and not until_equal:
            # i < B compares unsigned: exact when every iterator value and B are non-negative
            if it.signed:
                self._need(lower.value, [lo_t], f"'{self.iterator}' starts at a non-negative value (the "
                           f"comparison with '{bound.text}' is done in '{cmp_t.name}')")
            if b_t.signed:
                self._need(bound.value, [b_t], f"'{bound.text}' is non-negative (the comparison is done in "
                           f"'{cmp_t.name}')")
        if not it.signed:
            # an unsigned iterator wraps to 0 instead of passing the bound (a step > 1 can jump up
            # to ``overshoot`` past it)
            upper = Affine(bound.value.terms, bound.value.constant + (1 if inclusive else 0) + overshoot)
            if b_t.max_value + (1 if inclusive else 0) + overshoot > it.max_value:
                self._need(_neg(upper, it.max_value), [b_t],
                           f"'{self.iterator}' reaches its bound without wrapping around")
        return tuple(self.found)

    def check_down(self, start: BoundSide, bound: BoundSide, inclusive: bool,
                   until_equal: bool = False) -> tuple[Precondition, ...]:
        """``for (iterator = start; iterator >= bound (or >, or !=); iterator--)``: the last value
        tested is ``bound - 1`` (``>=``) or ``bound``; every tested value must compare as it
        reads, and an unsigned iterator must not wrap below zero."""
        it = self.it_type
        st_t = self.start_fits(start)
        b_t = self.bound_type(bound)
        last = Affine(bound.value.terms, bound.value.constant - (1 if inclusive else 0))
        if until_equal:
            self._need(_sub(start.value, bound.value), [st_t, b_t],
                       f"'{self.iterator}' starts at or above '{bound.text}'")
        cmp_t = usual_conversions(promote(it), promote(b_t))
        unsigned_cmp = cmp_t.is_integer and not cmp_t.signed and not until_equal
        if unsigned_cmp or not it.signed:
            why = (f"the comparison with '{bound.text}' is done in '{cmp_t.name}'" if unsigned_cmp
                   else f"'{self.iterator}' is unsigned")
            self._need(last, [b_t], f"'{self.iterator}' stops before going below zero ({why})")
            if st_t is None or st_t.signed:
                self._need(start.value, [st_t], f"'{self.iterator}' starts at a non-negative value ({why})")
        return tuple(self.found)


def _grows_only(e: Expr) -> bool:
    """``e`` combines non-negative constants (``sizeof`` included) with ``+ * / %`` only."""
    if isinstance(e, Const):
        return not e.text.startswith("-")
    if isinstance(e, Binary):
        return e.op in ("+", "*", "/", "%") and _grows_only(e.left) and _grows_only(e.right)
    return False


def _neg(a: Affine, plus: int) -> Affine:
    """``plus - a``."""
    return Affine(tuple((n, -c) for n, c in a.terms), plus - a.constant)


def _sub(a: Affine, b: Affine) -> Affine:
    """``a - b``."""
    d = dict(a.terms)
    for n, c in b.terms:
        d[n] = d.get(n, 0) - c
    return Affine.of(d, a.constant - b.constant)
