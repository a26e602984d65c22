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
value: both stay non-affine.
"""

from __future__ import annotations

from mdpoly.frontend.expr_types import NameTypes, expr_type
from mdpoly.ir.c_types import parse_type
from mdpoly.ir.scop import Binary, Cast, Const, Expr, Ref, Unary, Var


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
