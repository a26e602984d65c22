"""Reads whose subscript is no affine function (a gather): ``A[idx[i]]`` -> a read of ``A`` whose
element the model does not know, where no write of the nest may reach ``A``.

``sse += diff(points[i*d + k], centroids[labels[i]*d + k])`` or ``loss -= log(p[b*C + target[b]])``
read an array at an index the program computes. Where the nest writes no array at all, only
scalars its iterations fold into (reductions) or declare for themselves, such a read can take part
in no dependence (nothing in the nest writes what it reads, nor anything it may overlap), so its
element does not matter to the analysis that makes a loop around the nest's own text parallel
(``mdpoly.frontend.privatize``, ``plain``). Only that analysis asks for opaque reads: an MDH
computation needs its inputs' exact elements, so every other model still refuses the subscript.

An opaque read is ``A[0]...[0]`` in the model, recorded with the reason the subscript was
refused. ``check_opaque`` then refuses the model (with that reason) when the nest writes a variable another
pointer may overlap (a global scalar, a local whose address is taken), or an array while some
opaque read is of a pointer (whose extent nobody knows), or when an array read opaquely also got a
delinearized view. An opaque read of a declared array (``static double x[N]``) may stand beside
written arrays: distinct objects never overlap, and a written pointer is checked at run time
against the whole object (``Scop.opaque``). So may an opaque read of a pointer beside arrays
written only through ``restrict`` pointers (``float *restrict out``): C forbids reaching what such
a pointer modifies through any other pointer in its block, so no read can overlap those writes.
Beside other written pointers, the gathered pointers are *inspected* (``Scop.inspected``): the
generated code first runs the nest's index computations alone (``mdpoly.frontend.inspector``)
and checks the elements they read against what the nest writes, like any other range. The
subscript itself must read no variable the nest writes other than the iterators and the nest's
own temporaries: declared inside it (each iteration computes them afresh), or declared before it,
dead after it and never addressed (C89's ``int j; ... j = perm[i]; y[i] = x[j];``,
``scop.privatizable_scalars``), which the privatizer then proves every iteration writes before
it reads them (no value flows in), else it refuses the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc, UnsupportedInput
from mdpoly.ir.mdh import Access, Affine
from mdpoly.ir.scop import Expr, Statement, Variable, distinct_types, expr_names, expr_refs


@dataclass(frozen=True, slots=True)
class OpaqueRead:
    """One read the model does not locate: of ``array``, refused for ``reason`` at ``loc``."""

    array: str
    loc: SourceLoc
    reason: str


def opaque_access(node: c_ast.ArrayRef, var: Variable | None, subscripts: list[Expr] | None,
                  written: set[str], iterators: set[str], own: frozenset[str] = frozenset()) -> Access | None:
    """``node`` as an opaque read of its base array, or ``None`` when it cannot be one: its base is
    no array or pointer variable, the nest writes it, or a subscript reads a scalar the nest writes
    (other than ``iterators`` and ``own``: the nest's temporaries). Arrays the nest
    writes may be read there (``written_in_subscripts``)."""
    if var is None or var.kind not in ("array", "pointer") or var.name in written or subscripts is None:
        return None
    allowed = iterators | own
    arrays = {a.buffer for e in subscripts for a in expr_refs(e)}
    for e in subscripts:
        if (expr_names(e) & written) - allowed - arrays:
            return None
    return Access(var.name, tuple(Affine() for _ in var.shape))


def written_in_subscripts(subscripts: list[Expr], written: set[str], own: frozenset[str]) -> frozenset[str]:
    """The arrays the nest writes that ``subscripts`` read (``px`` in ``lut[px[i]]`` of
    ``px[i] = lut[px[i]]``): allowed in a gather's subscript only where no read of them takes its
    value from a write of the nest (``Scop.index_arrays_written``, checked against the
    dependences by the model's user), so that an inspection before the nest reads the values
    the nest's subscripts read."""
    return frozenset(a.buffer for e in subscripts for a in expr_refs(e) if a.buffer in written) - own


def check_opaque(opaque: list[OpaqueRead], statements: list[Statement], variables: dict[str, Variable],
                 viewed: set[str]) -> tuple[UnsupportedInput | None, frozenset[str]]:
    """Why the model with ``opaque`` reads cannot stand (the first read's own refusal), or ``None``
    with the pointers whose reads must be inspected at run time (``Scop.inspected``)."""
    if not opaque:
        return None, frozenset()
    first = opaque[0]
    refused = UnsupportedInput(first.reason, first.loc, "non-affine-subscript")
    # a declared array (no parameter) is one object: the run-time checks compare the arrays the
    # nest writes through pointers with all of it, and other objects never overlap it
    pointers = frozenset(r.array for r in opaque if not _whole_object(variables.get(r.array)))
    objects = not pointers
    inspected: frozenset[str] = frozenset()
    for st in statements:
        var = variables.get(st.write.buffer)
        if var is None or var.kind == "local" or (var.kind == "scalar" and var.alias == "private"):
            continue
        if var.kind == "scalar":
            return refused, frozenset()
        if not (objects or var.alias == "restrict"):   # restrict: C lets no other pointer reach what it modifies
            # nor can a store of one arithmetic type change objects of another (C's aliasing rule)
            reachable = frozenset(a for a in pointers if (v := variables.get(a)) is None or not distinct_types(v, var))
            if not reachable:
                continue
            if any((v := variables.get(a)) is None or len(v.shape) != 1 for a in reachable):
                return UnsupportedInput(f"{first.reason}, and '{var.c_value or var.name}', which the nest writes, may overlap "
                                        "what it reads there ('restrict' on that pointer would rule it out)", first.loc,
                                        "non-affine-subscript"), frozenset()
            inspected = pointers   # their elements are found at run time and checked like any range
    if {r.array for r in opaque} & viewed:
        return refused, frozenset()
    return None, inspected


def _whole_object(var: Variable | None) -> bool:
    """``var`` is a declared array of known extents (no parameter): one object, all of it checked."""
    return var is not None and var.kind == "array" and var.alias == "object" and all(d.strip() for d in var.shape)
