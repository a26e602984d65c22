"""Neutral elements of the reduction operators per C element type: ``neutral(op, elem_type)``."""

from __future__ import annotations

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.ir.mdh import Combine

_QUALIFIERS = {"const", "volatile", "restrict", "__restrict", "__restrict__"}

_FLOATS = {"float", "double", "long double"}

#: (lowest, highest) per integer type, spelled with <limits.h> names.
_INT_LIMITS: dict[str, tuple[str, str]] = {
    "char": ("CHAR_MIN", "CHAR_MAX"),
    "signed char": ("SCHAR_MIN", "SCHAR_MAX"),
    "unsigned char": ("0", "UCHAR_MAX"),
    "short": ("SHRT_MIN", "SHRT_MAX"),
    "short int": ("SHRT_MIN", "SHRT_MAX"),
    "signed short": ("SHRT_MIN", "SHRT_MAX"),
    "unsigned short": ("0", "USHRT_MAX"),
    "unsigned short int": ("0", "USHRT_MAX"),
    "int": ("INT_MIN", "INT_MAX"),
    "signed": ("INT_MIN", "INT_MAX"),
    "signed int": ("INT_MIN", "INT_MAX"),
    "unsigned": ("0", "UINT_MAX"),
    "unsigned int": ("0", "UINT_MAX"),
    "long": ("LONG_MIN", "LONG_MAX"),
    "long int": ("LONG_MIN", "LONG_MAX"),
    "signed long": ("LONG_MIN", "LONG_MAX"),
    "unsigned long": ("0", "ULONG_MAX"),
    "unsigned long int": ("0", "ULONG_MAX"),
    "long long": ("LLONG_MIN", "LLONG_MAX"),
    "long long int": ("LLONG_MIN", "LLONG_MAX"),
    "unsigned long long": ("0", "ULLONG_MAX"),
    "unsigned long long int": ("0", "ULLONG_MAX"),
}


def base_type(elem_type: str) -> str:
    """``elem_type`` without qualifiers, words single-spaced."""
    return " ".join(w for w in elem_type.split() if w not in _QUALIFIERS)


def is_float_type(elem_type: str) -> bool:
    return base_type(elem_type) in _FLOATS


def neutral(op: Combine, elem_type: str) -> tuple[str, str | None]:
    """The neutral element of ``op`` for ``elem_type`` as C text, and the header it needs.

    :raises UnsupportedInput: for ``max``/``min`` over a type whose limits are unknown (a typedef).
    """
    t = base_type(elem_type)
    if op is Combine.ADD:
        return "0", None
    if op is Combine.MUL:
        return "1", None
    if op is Combine.BAND:
        return "-1", None  # all bits set in every integer type (two's complement, modulo conversion)
    if op in (Combine.BOR, Combine.BXOR):
        return "0", None
    if op not in (Combine.MAX, Combine.MIN):
        raise ValueError(f"no neutral element for {op.value!r}")
    if t in _FLOATS:
        return ("-INFINITY" if op is Combine.MAX else "INFINITY"), "math.h"
    if t in _INT_LIMITS:
        lo, hi = _INT_LIMITS[t]
        return (lo if op is Combine.MAX else hi), "limits.h"
    raise UnsupportedInput(f"no known neutral element of '{op.value}' for type '{elem_type}'",
                           code="unknown-neutral-element")
