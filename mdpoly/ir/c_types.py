"""C's arithmetic types and conversion rules: type text -> ``CType``, expression types.

One table for the whole project (LP64, as gcc and clang use on Linux x86-64 and aarch64):
sizes, signedness, integer conversion ranks and value ranges, plus the rules of C11 6.3.1
(integer promotions, usual arithmetic conversions) that decide in which type an operator
computes. The front end uses them to tell whether a reduction update is exact
(``int s; s += 1.5f`` truncates after every step, so it is not) and whether a loop condition
compares in the type its model assumes (``i < 40u`` compares ``i`` as unsigned).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CType:
    """An arithmetic C type: ``name`` (canonical spelling), ``size`` in bytes, ``rank`` (integer
    conversion rank; floating types rank above every integer type), ``signed``, ``is_float``."""

    name: str
    size: int
    rank: int
    signed: bool
    is_float: bool = False

    @property
    def is_integer(self) -> bool:
        return not self.is_float

    @property
    def is_bool(self) -> bool:
        return self.name == "_Bool"

    @property
    def min_value(self) -> int:
        return -(1 << (8 * self.size - 1)) if self.signed else 0

    @property
    def max_value(self) -> int:
        return (1 << (8 * self.size - 1)) - 1 if self.signed else (1 << (8 * self.size)) - 1

    def holds_all_of(self, other: CType) -> bool:
        """Every value of ``other`` is exactly representable in this type."""
        if self.is_float or other.is_float:
            if not (self.is_float and other.is_float):
                return False
            return self.size >= other.size
        if other.is_bool:
            return True
        return self.min_value <= other.min_value and other.max_value <= self.max_value


def _t(name: str, size: int, rank: int, signed: bool, is_float: bool = False) -> CType:
    return CType(name, size, rank, signed, is_float)


BOOL = _t("_Bool", 1, 0, False)
CHAR = _t("char", 1, 1, True)  # plain char is signed on x86-64 (gcc's default)
SCHAR = _t("signed char", 1, 1, True)
UCHAR = _t("unsigned char", 1, 1, False)
SHORT = _t("short", 2, 2, True)
USHORT = _t("unsigned short", 2, 2, False)
INT = _t("int", 4, 3, True)
UINT = _t("unsigned int", 4, 3, False)
LONG = _t("long", 8, 4, True)
ULONG = _t("unsigned long", 8, 4, False)
LLONG = _t("long long", 8, 5, True)
ULLONG = _t("unsigned long long", 8, 5, False)
FLOAT = _t("float", 4, 10, True, True)
DOUBLE = _t("double", 8, 11, True, True)
LDOUBLE = _t("long double", 16, 12, True, True)

_UNSIGNED_OF = {CHAR: UCHAR, SCHAR: UCHAR, SHORT: USHORT, INT: UINT, LONG: ULONG, LLONG: ULLONG}

# Spellings after typedef resolution; ``signed``/``int`` words are normalised by ``parse_type``.
_BY_WORDS: dict[tuple[str, ...], CType] = {
    ("_Bool",): BOOL, ("bool",): BOOL,
    ("char",): CHAR, ("char", "signed"): SCHAR, ("char", "unsigned"): UCHAR,
    ("short",): SHORT, ("short", "unsigned"): USHORT,
    ("int",): INT, ("unsigned",): UINT,
    ("long",): LONG, ("long", "unsigned"): ULONG,
    ("long", "long"): LLONG, ("long", "long", "unsigned"): ULLONG,
    ("float",): FLOAT, ("_Float32",): FLOAT, ("double",): DOUBLE, ("_Float64",): DOUBLE,
    ("double", "long"): LDOUBLE, ("_Float64x",): LDOUBLE, ("_Float128",): LDOUBLE,
}
# Typedef names of the C library that reach us unresolved (e.g. through a prelude).
_LIBRARY_TYPEDEFS = {
    "size_t": ULONG, "ssize_t": LONG, "ptrdiff_t": LONG, "intptr_t": LONG, "uintptr_t": ULONG,
    "int8_t": SCHAR, "uint8_t": UCHAR, "int16_t": SHORT, "uint16_t": USHORT, "int32_t": INT,
    "uint32_t": UINT, "int64_t": LONG, "uint64_t": ULONG, "intmax_t": LONG, "uintmax_t": ULONG,
}
_QUALIFIERS = frozenset({"const", "volatile", "restrict", "__restrict", "__restrict__", "_Atomic", "register",
                         "static", "extern", "auto", "__extension__", "__const"})


def parse_type(text: str) -> CType | None:
    """The arithmetic type a (typedef-resolved) type text names, or ``None`` (struct, pointer...)."""
    if "*" in text or "[" in text:
        return None
    words = [w for w in text.replace("__signed__", "signed").split() if w not in _QUALIFIERS]
    if len(words) == 1 and words[0] in _LIBRARY_TYPEDEFS:
        return _LIBRARY_TYPEDEFS[words[0]]
    if "signed" in words and "unsigned" not in words:
        words = [w for w in words if w != "signed"] or ["int"]
        if words == ["char"]:
            return SCHAR
    if "int" in words and len(words) > 1:
        words = [w for w in words if w != "int"]
    return _BY_WORDS.get(tuple(sorted(words)))


def promote(t: CType) -> CType:
    """Integer promotion (C11 6.3.1.1): types of rank below ``int`` become ``int``."""
    if t.is_float or t.rank >= INT.rank:
        return t
    return INT  # int holds every value of _Bool, char, short and their unsigned forms (LP64)


def usual_conversions(a: CType, b: CType) -> CType:
    """The common type of a binary arithmetic operator (C11 6.3.1.8)."""
    if a.is_float or b.is_float:
        return a if a.rank >= b.rank else b
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.rank >= b.rank else b
    uns, sig = (a, b) if not a.signed else (b, a)
    if uns.rank >= sig.rank:
        return uns
    if sig.size > uns.size:
        return sig
    return _UNSIGNED_OF[sig]


def constant_type(text: str) -> CType:
    """The type of a C constant token (C11 6.4.4): suffixes, then the first type that holds it."""
    t = text.strip()
    low = t.lower()
    if t.startswith("'") or low.startswith(("l'", "u'", "u8'")):
        return INT
    is_hex = low.startswith("0x")
    if ("." in low or ("e" in low and not is_hex) or ("p" in low and is_hex)):
        if low.endswith("f"):
            return FLOAT
        return LDOUBLE if low.endswith("l") else DOUBLE
    digits = low.rstrip("ul")
    suffix = low[len(digits):]
    try:
        value = int(digits, 16) if is_hex else (int(digits, 8) if len(digits) > 1 and digits.startswith("0")
                                                else int(digits))
    except ValueError:
        return INT
    unsigned_ok = "u" in suffix
    decimal = not is_hex and not (len(digits) > 1 and digits.startswith("0"))
    longs = suffix.count("l")
    order = [INT, UINT, LONG, ULONG, LLONG, ULLONG] if not decimal else [INT, LONG, LLONG]
    if unsigned_ok:
        order = [UINT, ULONG, ULLONG]
    order = [c for c in order if (c.rank >= LONG.rank if longs == 1 else c.rank >= LLONG.rank if longs == 2 else True)]
    for c in order:
        if (c.signed or not decimal or unsigned_ok) and c.min_value <= value <= c.max_value:
            return c
    return ULLONG


def convert_value(value: int, to: CType) -> int | None:
    """``value`` converted to integer type ``to`` as gcc does (modulo for every integer type);
    ``None`` for a floating type."""
    if to.is_float:
        return None
    if to.is_bool:
        return int(value != 0)
    bits = 8 * to.size
    v = value % (1 << bits)
    return v - (1 << bits) if to.signed and v >= 1 << (bits - 1) else v


# The C type of each math function's result (``<math.h>`` and ``<stdlib.h>``).
def call_result_type(func: str) -> CType | None:
    name = func.removeprefix("__builtin_")
    if name in ("abs",):
        return INT
    if name == "labs":
        return LONG
    if name == "llabs":
        return LLONG
    if name in _INTEGER_ROUNDING:
        return _INTEGER_ROUNDING[name][0]
    if name in ("inff", "huge_valf", "nanf"):
        return FLOAT
    if name in ("inf", "huge_val", "nan"):
        return DOUBLE
    if name in ("infl", "huge_vall", "nanl"):
        return LDOUBLE
    if name.endswith("f") and name not in ("erf",) and name[:-1] in _MATH_BASE:
        return FLOAT
    if name.endswith("l") and name[:-1] in _MATH_BASE:
        return LDOUBLE
    if name in _MATH_BASE:
        return DOUBLE
    return None


def rounding_argument_type(func: str) -> CType | None:
    """The floating type ``lrintf``/``lround``/``llrint``... take (their result is an integer)."""
    found = _INTEGER_ROUNDING.get(func.removeprefix("__builtin_"))
    return found[1] if found is not None else None


_MATH_BASE = frozenset({
    "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "fabs", "pow", "sin", "cos", "tan", "asin",
    "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fmax", "fmin", "floor", "ceil",
    "round", "trunc", "fmod", "cbrt", "hypot", "erf", "erfc", "fma", "copysign", "rint", "nearbyint", "fdim",
})


#: ``<math.h>``'s rounding to integers: name -> (result type, argument type)
_INTEGER_ROUNDING: dict[str, tuple[CType, CType]] = {
    f"{base}{suffix}": (result, arg)
    for base, result in (("lrint", LONG), ("lround", LONG), ("llrint", LLONG), ("llround", LLONG))
    for suffix, arg in (("", DOUBLE), ("f", FLOAT), ("l", LDOUBLE))
}
