"""C types of model expressions: ``Expr`` + the types of its names -> ``CType`` (or a constant's value).

The front end keeps statement right-hand sides and loop bounds as ``mdpoly.ir.scop.Expr``
trees. This module applies C's rules (``mdpoly.ir.c_types``) to them: in which type each
operator computes, and, for integer constant expressions, the value C gives (with modular
conversions), so the model can be compared with what the program really does.
"""

from __future__ import annotations

from collections.abc import Callable

from mdpoly.ir.c_types import (
    DOUBLE,
    FLOAT,
    INT,
    LDOUBLE,
    ULONG,
    CType,
    call_result_type,
    constant_type,
    convert_value,
    parse_type,
    promote,
    rounding_argument_type,
    usual_conversions,
)
from mdpoly.ir.scop import Binary, Call, Cast, Cond, Const, Expr, Ref, Unary, Var

NameTypes = Callable[[str], "CType | None"]

_ARITH = frozenset({"+", "-", "*", "/", "%", "&", "|", "^"})
_BOOLEAN = frozenset({"<", "<=", ">", ">=", "==", "!=", "&&", "||"})


def _const_type(text: str) -> CType | None:
    if text.startswith("sizeof"):
        return ULONG
    if text[:1].isalpha() or text[:1] == "_":
        return INT  # an enumeration constant
    return constant_type(text)


def expr_type(e: Expr, name_type: NameTypes) -> CType | None:
    """The C type of ``e``, or ``None`` when some part is not arithmetic or not known."""
    if isinstance(e, Const):
        return _const_type(e.text)
    if isinstance(e, Var):
        return name_type(e.name)
    if isinstance(e, Ref):
        return name_type(e.access.buffer)
    if isinstance(e, Cast):
        return parse_type(e.resolved or e.type)
    if isinstance(e, Unary):
        if e.op == "!":
            return INT
        t = expr_type(e.operand, name_type)
        return promote(t) if t is not None else None
    if isinstance(e, Binary):
        if e.op in _BOOLEAN:
            return INT
        a, b = expr_type(e.left, name_type), expr_type(e.right, name_type)
        if a is None or b is None:
            return None
        if e.op in ("<<", ">>"):
            return promote(a)
        return usual_conversions(a, b)
    if isinstance(e, Call):
        return call_result_type(e.func)
    if isinstance(e, Cond):
        a, b = expr_type(e.then, name_type), expr_type(e.other, name_type)
        return usual_conversions(a, b) if a is not None and b is not None else None
    return None


def call_argument_type(func: str) -> CType | None:
    """The floating type a ``<math.h>`` function converts its arguments to (``fmaxf``: float)."""
    t = call_result_type(func)
    return t if t in (FLOAT, DOUBLE, LDOUBLE) else rounding_argument_type(func)


def involves_unsigned(e: Expr, name_type: NameTypes) -> bool:
    """Whether C computes some operator of ``e`` in an unsigned (wrapping) type or converts a value
    by a cast, i.e. whether its C value can differ from its mathematical value without undefined
    behaviour. A lone name or constant has its own value. Unknown types count as unsigned."""
    if isinstance(e, Var | Ref | Const):
        return False
    if isinstance(e, Cast):
        return True
    t = expr_type(e, name_type)
    if t is None or (t.is_integer and not t.signed):
        return True
    if isinstance(e, Unary):
        return involves_unsigned(e.operand, name_type)
    if isinstance(e, Binary):
        return involves_unsigned(e.left, name_type) or involves_unsigned(e.right, name_type)
    return True


def eval_int(e: Expr, name_type: NameTypes, values: dict[str, int] | None = None) -> tuple[int, CType] | None:
    """The value and type C gives an integer constant expression (names from ``values``), or
    ``None`` when ``e`` is not one. Arithmetic wraps as gcc's does for unsigned types; signed
    overflow (undefined in C) is reported as ``None``."""
    if isinstance(e, Const):
        t = _const_type(e.text)
        if t is None or t.is_float or not (e.text[:1].isdigit()):
            return None
        digits = e.text.lower().rstrip("ul")
        try:
            v = int(digits, 16) if digits.startswith("0x") else (
                int(digits, 8) if len(digits) > 1 and digits.startswith("0") else int(digits))
        except ValueError:
            return None
        return v, t
    if isinstance(e, Var):
        t = name_type(e.name)
        if values is None or e.name not in values or t is None or t.is_float:
            return None
        return values[e.name], t
    if isinstance(e, Cast):
        t = parse_type(e.resolved or e.type)
        inner = eval_int(e.operand, name_type, values)
        if t is None or t.is_float or inner is None:
            return None
        converted = convert_value(inner[0], t)
        return (converted, t) if converted is not None else None
    if isinstance(e, Unary) and e.op in ("-", "+", "~"):
        inner = eval_int(e.operand, name_type, values)
        if inner is None:
            return None
        t = promote(inner[1])
        v = inner[0]
        v = -v if e.op == "-" else (~v if e.op == "~" else v)
        return _fit(v, t)
    if isinstance(e, Binary) and e.op in ("+", "-", "*"):
        a, b = eval_int(e.left, name_type, values), eval_int(e.right, name_type, values)
        if a is None or b is None:
            return None
        t = usual_conversions(a[1], b[1])
        x, y = convert_value(a[0], t), convert_value(b[0], t)
        assert x is not None and y is not None
        v = x + y if e.op == "+" else (x - y if e.op == "-" else x * y)
        return _fit(v, t)
    return None


def _fit(v: int, t: CType) -> tuple[int, CType] | None:
    if t.signed:
        return (v, t) if t.min_value <= v <= t.max_value else None
    w = convert_value(v, t)
    return (w, t) if w is not None else None
