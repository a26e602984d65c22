"""Exact signed products: an ``Expr`` of a product of size parameters -> whether C computes it exactly.

``NestBuilder._parameter_product`` models ``n * m`` of size parameters as a fresh size parameter
(``mdp_p_m_n``) whose value the call site computes in ``long long``. That is the value the original
computes only when every operator of the product works in a signed type (an overflow there is
undefined behaviour, so a defined run computes the exact product) and every cast on the way keeps
the value of its operand. Real programs widen one factor to avoid an ``int`` overflow:
``i < (long)w * h * nc``, ``i < ((long) c.n_layers) * c.dim``. A cast keeps the value when its
target is a signed integer type at least as wide as a signed operand, or strictly wider than an
unsigned one (``(long) n`` of an ``int`` or ``unsigned`` ``n``). A cast to an unsigned type
(``(size_t) n * m``) makes the product wrap, and a narrowing cast (``(int) big``) may change the
value: in subscripts and conditions both stay non-affine.

A loop bound is different: ``mdpoly.frontend.loop_types.HeaderChecker.exact_value`` compares
its C value, computed as the user's code computes it, with the model's value (in ``__int128``
where a 64-bit unsigned type is involved) before the nest runs, and runs the nest as written
where they differ. There a product that may wrap (``t < (size_t) nq * n``,
``i < (size_t) w * h * 3``) is modelled all the same, provided the model itself computes
without overflow: ``long long`` holds the product of its factors for every value of their types
(``product_fits_long_long``: two ``int`` factors, not two ``size_t`` ones), and the whole bound
fits ``long long`` too, the type the generated loops compute in (``bound_magnitude`` says when
that needs a run-time check).
"""

from __future__ import annotations

from collections.abc import Iterable

from mdpoly.frontend.expr_types import NameTypes, expr_type
from mdpoly.ir.c_types import CType, parse_type
from mdpoly.ir.mdh import Affine
from mdpoly.ir.scop import Binary, Cast, Const, Expr, Ref, Unary, Var

#: the largest ``long long``, the type the generated code computes bounds in
LLONG_MAX = (1 << 63) - 1


def _value_keeping(e: Cast, name_type: NameTypes) -> bool:
    """Whether ``e`` converts its (integer) operand to a signed integer type that holds all its values."""
    to = parse_type(e.resolved or e.type)
    of = expr_type(e.operand, name_type)
    if to is None or of is None or not to.is_integer or not of.is_integer or to.is_bool or not to.signed:
        return False
    return to.size >= of.size if of.signed else to.size > of.size


def exact_signed(e: Expr, name_type: NameTypes) -> bool:
    """Whether every operator of ``e`` computes in a signed integer type and every cast keeps its
    operand's value, i.e. whether a defined run computes ``e``'s mathematical value.
    Unknown types count as not exact."""
    if isinstance(e, Var | Ref | Const):
        return True
    if isinstance(e, Cast):
        return _value_keeping(e, name_type) and exact_signed(e.operand, name_type)
    t = expr_type(e, name_type)
    if t is None or not t.is_integer or not t.signed:
        return False
    if isinstance(e, Unary):
        return e.op in ("-", "+") and exact_signed(e.operand, name_type)
    if isinstance(e, Binary):
        return e.op in ("+", "-", "*") and exact_signed(e.left, name_type) and exact_signed(e.right, name_type)
    return False


def _magnitude(t: CType | None) -> int | None:
    """The largest absolute value of an integer type (``None``: not an integer type)."""
    if t is None or not t.is_integer:
        return None
    return max(-t.min_value, t.max_value)


def product_fits_long_long(factors: Iterable[str], name_type: NameTypes) -> bool:
    """Whether ``long long`` holds the product of the size parameters ``factors`` for every value
    of their types (``int`` times ``int`` does, ``size_t`` times anything does not)."""
    bound = 1
    for f in factors:
        m = _magnitude(name_type(f))
        if m is None:
            return False
        bound *= m
    return bound <= LLONG_MAX


def bound_magnitude(value: Affine, products: dict[str, tuple[str, ...]], name_type: NameTypes) -> int | None:
    """The largest absolute value ``value`` takes for any values of its size parameters' types (a
    product parameter ranges over the products of its factors' values); ``None`` when a type is
    not known."""
    total = abs(value.constant)
    for name, c in value.terms:
        m = 1
        for f in products.get(name, (name,)):
            fm = _magnitude(name_type(f))
            if fm is None:
                return None
            m *= fm
        total += abs(c) * m
    return total
