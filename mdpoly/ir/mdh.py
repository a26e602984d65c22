"""The MDH expression IR: ``out_view o md_hom(f, (op_1..op_D)) o inp_view`` for one loop nest.

Produced by ``mdpoly.frontend.to_mdh.build_mdh`` from a SCoP and its dependence classification, consumed
by ``mdpoly.lower``. All types are frozen; edits go through ``dataclasses.replace``.
Index functions are affine (``Affine``) in the nest's iterators and the symbolic size parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from mdpoly.diagnostics import SourceLoc


class Combine(StrEnum):
    """Combine operator of one MDH dimension; ``SEQ`` only appears in reports of kept nests."""

    CONCAT = "++"
    ADD = "+"
    MUL = "*"
    MAX = "max"
    MIN = "min"
    BAND = "&"
    BOR = "|"
    BXOR = "^"
    #: argmax/argmin: a reduction over (value, index) pairs -- outputs 0 (the value) and 1 (the
    #: index) of the nest. ``ARGMAX`` keeps the first index among equal values (``if (e > m)``),
    #: ``ARGMAX_LAST`` the last one (``if (e >= m)``); likewise for ``ARGMIN``.
    ARGMAX = "argmax"
    ARGMAX_LAST = "argmax_last"
    ARGMIN = "argmin"
    ARGMIN_LAST = "argmin_last"
    SEQ = "seq"

    @property
    def is_reduction(self) -> bool:
        return self not in (Combine.CONCAT, Combine.SEQ)

    @property
    def is_arg(self) -> bool:
        """An argmax/argmin over (value, index) pairs."""
        return self in (Combine.ARGMAX, Combine.ARGMAX_LAST, Combine.ARGMIN, Combine.ARGMIN_LAST)

    @property
    def value_op(self) -> Combine:
        """What an argmax/argmin does to the values (``MAX``/``MIN``); the operator itself otherwise."""
        if self in (Combine.ARGMAX, Combine.ARGMAX_LAST):
            return Combine.MAX
        if self in (Combine.ARGMIN, Combine.ARGMIN_LAST):
            return Combine.MIN
        return self

    @property
    def keeps_last(self) -> bool:
        """An argmax/argmin whose sequential loop keeps the last of equal values (``>=``/``<=``)."""
        return self in (Combine.ARGMAX_LAST, Combine.ARGMIN_LAST)

    @property
    def is_bitwise(self) -> bool:
        """``&``, ``|``, ``^``: integer-only, exact in any order."""
        return self in (Combine.BAND, Combine.BOR, Combine.BXOR)


@dataclass(frozen=True, slots=True)
class Affine:
    """``constant + sum(coeff * name)``; names are loop iterators or size parameters.

    ``terms`` is sorted by name and holds no zero coefficient, so equal expressions compare equal.
    """

    terms: tuple[tuple[str, int], ...] = ()
    constant: int = 0

    @staticmethod
    def of(terms: dict[str, int] | None = None, constant: int = 0) -> Affine:
        items = tuple(sorted((n, c) for n, c in (terms or {}).items() if c != 0))
        return Affine(items, constant)

    def coeff(self, name: str) -> int:
        return dict(self.terms).get(name, 0)

    def names(self) -> frozenset[str]:
        return frozenset(n for n, _ in self.terms)

    @property
    def is_constant(self) -> bool:
        return not self.terms

    def to_c(self) -> str:
        parts: list[str] = []
        for name, c in self.terms:
            term = name if abs(c) == 1 else f"{abs(c)} * {name}"
            if not parts:
                parts.append(term if c > 0 else f"-{term}")
            else:
                parts.append(f"+ {term}" if c > 0 else f"- {term}")
        if self.constant or not parts:
            if not parts:
                parts.append(str(self.constant))
            else:
                parts.append(f"+ {self.constant}" if self.constant > 0 else f"- {-self.constant}")
        return " ".join(parts)

    def __str__(self) -> str:
        return self.to_c()


@dataclass(frozen=True, slots=True)
class Dim:
    """One loop of the nest = one MDH dimension: ``for (it = lower; it < lower + extent; ++it)``.

    ``lower`` and ``extent`` depend on size parameters only (MDH index sets are rectangular).
    ``iterator_type`` is the C type the user declared the iterator with (``int``, ``unsigned int``,
    ``long``...): wherever the user's expressions see the iterator, it has this type; index
    arithmetic of the generated code is done in a wide signed type instead.
    """

    iterator: str
    lower: Affine
    extent: Affine
    combine: Combine
    loc: SourceLoc
    iterator_type: str = "int"
    #: -1: the user's loop counts downwards over the same values (only ``++``/reduction loops,
    #: where order does not matter; it decides the iterator's exit value)
    step: int = 1

    @property
    def static_extent(self) -> int | None:
        return self.extent.constant if self.extent.is_constant else None


BufferKind = Literal["array", "pointer", "scalar", "indirect"]


@dataclass(frozen=True, slots=True)
class Buffer:
    """A variable the nest touches, as the generated function must receive it.

    ``shape`` holds the C extents of the declared dimensions (macros expanded), ``""`` for an
    unsized first dimension or a pointer; ``()`` for a scalar. ``kind`` says how it is passed:
    arrays and pointers as pointers, scalars by value when only read, by pointer when written.
    ``indirect``: rows reached through pointers (``float **A``, ``float *rows[N]``): ``A[i][j]``
    is valid C but the rows are not one dense block, so such a buffer cannot be allocated as one
    array (the tuner skips nests that have one).

    ``c_decl`` is the parameter declaration as the user declared the variable (``float **A``,
    ``float (*A)[64]``, ``const real_t *restrict x``, ``float A[n][m]``), which backends print
    verbatim when set; ``None`` derives the parameter from ``elem_type``, ``shape`` and ``kind``.
    """

    name: str
    elem_type: str
    shape: tuple[str, ...]
    kind: BufferKind
    written: bool = False
    c_decl: str | None = None
    #: the user's variable is a flat pointer that the nest indexes as rows of this many elements
    #: (C text over the names of ``shape[1:]``; ``A[i*m + j]``: ``m``, ``A[x + y*nx + z*nx*ny]``:
    #: ``(long long)(ny) * (long long)(nx)``): the generated code takes it as ``T A[][ny][nx]``
    #: (``shape``), so the call site converts it (``frontend.delinearize``)
    rows_of: str = ""
    #: not a variable of the user's: the call site passes this C expression (a strided loop's
    #: trip count ``(U - L + s - 1) / s``)
    c_value: str = ""
    #: a flat pointer viewed from an invariant offset (``A[loff + t*kv + i]``): the call site passes
    #: ``A + base_offset`` (C text over the user's names)
    base_offset: str = ""
    #: some read of it is evaluated only under a select's condition (``frontend.guarded_reads``):
    #: never read it ahead (packed panels, ``__local`` caches), the addresses may lie outside it
    lazy: bool = False


def with_c_values(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each name in ``values`` (a front end's size parameter, ``Buffer.c_value``)
    replaced by its parenthesized C expression: the name as the call site, or the user, reads it."""
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: f"({values[m.group()]})" if m.group() in values else m.group(), text)


@dataclass(frozen=True, slots=True)
class Access:
    """``buffer[index_0][index_1]...``; a scalar access has ``index == ()``."""

    buffer: str
    index: tuple[Affine, ...]

    def depends_on(self, iterator: str) -> bool:
        return any(e.coeff(iterator) != 0 for e in self.index)

    def to_c(self) -> str:
        return self.buffer + "".join(f"[{e.to_c()}]" for e in self.index)


UpdateKind = Literal["assign", "accumulate"]


@dataclass(frozen=True, slots=True)
class Finish:
    """A C expression stored instead of the reduced value: ``out = expr``.

    ``result`` names the reduced value (``init (+) R``) in ``expr``; ``params[k]`` names the
    element ``inputs[k]`` (read when the result is stored, e.g. ``alpha * R + beta * C[i][j]``).
    """

    expr: str
    result: str
    params: tuple[str, ...] = ()
    inputs: tuple[Access, ...] = ()


@dataclass(frozen=True, slots=True)
class OutputWrite:
    """How the md_hom result ``R`` of one output reaches its buffer.

    ``assign``: ``out = R`` (or ``out = init (+) R`` when ``init`` is a C expression the nest
    wrote into the accumulator before reducing). ``accumulate``: ``out = out (+) R`` -- the
    ``x += e`` form without initialisation in the nest, where the old value is kept.
    ``finish``, when set, is stored instead of that value (the local-accumulator pattern
    ``s = init; for k: s += e; out = g(s)``).
    """

    access: Access
    elem_type: str
    update: UpdateKind = "assign"
    init: str | None = None
    finish: Finish | None = None
    #: ``init`` over the elements it reads, where it reads arrays (``bias[o]``): ``expr`` names
    #: ``inputs[k]`` as ``params[k]`` (``result`` is unused), for the targets that combine the
    #: start value with ``R`` after reducing instead of reducing into it (GPU kernels)
    init_reads: Finish | None = None


#: A flag standing for a null test of a pointer the nest only reads (``mdp_nz_bias`` for
#: ``bias != NULL``, ``mdpoly.frontend.normalize.pointer_tests``)
NULL_TEST_PREFIX = "mdp_nz_"

#: ``mdp_ins_lo_A``/``mdp_ins_hi_A``: the smallest and largest element of ``A`` a nest's gathers
#: read, found at run time (``mdpoly.frontend.inspector``); the bounds of ``A``'s ``AddressRange``
INSPECT_LO = "mdp_ins_lo_"
INSPECT_HI = "mdp_ins_hi_"


@dataclass(frozen=True, slots=True)
class AddressRange:
    """The memory a nest may touch in one buffer, from its subscripts over the rectangular domain.

    Scalar (``lo is None``): the object itself. Otherwise from ``buffer + lo`` to
    ``buffer + hi + 1`` along the first subscript (whole rows of a multi-dimensional buffer).
    ``row_lo``/``row_hi`` (indirect buffers): also ``buffer[r] + row_lo`` to
    ``buffer[r] + row_hi + 1`` for every row ``r`` in ``[lo, hi]``.
    """

    buffer: str
    lo: Affine | None = None
    hi: Affine | None = None
    row_lo: Affine | None = None
    row_hi: Affine | None = None
    #: a flat pointer viewed as rows (``Buffer.rows_of``): ``lo``/``hi`` count rows of this many
    #: elements (C text in the call site's names)
    rows_of: str = ""
    #: the view starts at ``buffer + offset`` (``Buffer.base_offset``)
    offset: str = ""


@dataclass(frozen=True, slots=True)
class AliasCheck:
    """A run-time precondition of the generated code: ``a`` and ``b`` do not overlap.

    Emitted for pointers that might point into the same memory (pointer parameters without
    ``restrict``); when the check fails at run time, the original nest runs instead.
    ``a == b`` (an indirect buffer the nest writes through its row pointers): its rows lie in
    address order, each ending before the next starts, apart from its array of row pointers; in
    the other checks of the nest its rows then count as their envelope.
    """

    a: AddressRange
    b: AddressRange


@dataclass(frozen=True, slots=True)
class Precondition:
    """A run-time condition on the size parameters under which the model of the nest is exact.

    ``c_expr`` is a C expression over the nest's parameters (no iterators), true when the
    generated code may run; when it is false the original nest runs instead (as for a failed
    ``AliasCheck``). Used where C's conversions could make the written loop differ from its
    mathematical model: unsigned comparisons and wrap-around in loop bounds.
    ``reason`` says what it protects, for ``--emit mdh`` and the report.
    """

    c_expr: str
    reason: str


@dataclass(frozen=True, slots=True)
class ExitValue:
    """A variable the nest steps (a counter, a bumped pointer) that the program reads after the
    nest: the generated code leaves it unchanged, and the call site assigns it ``c_expr`` after
    the computation ran (``name = c_expr;``). ``c_expr`` is a C expression over the variable's
    value on entry and names the nest does not change (``(int) ((long long) w + (n > 0 ? (long
    long) n : 0) * (m > 0 ? (long long) m : 0))``); a run that falls back to the original nest
    (a failed ``AliasCheck`` or ``Precondition``) steps the variable itself, so it is not assigned
    there.
    """

    name: str
    c_expr: str


@dataclass(frozen=True, slots=True)
class ScalarFunction:
    """The md_hom scalar function ``f``.

    ``params`` names one formal per input access (``inputs[k]`` binds ``params[k]``);
    ``results[o]`` is a C expression computing output ``o``'s contribution from the params, the
    iterators (when ``uses_indices``) and read-only scalar buffers. ``body`` is the C statement
    text the user wrote, for display.
    """

    params: tuple[str, ...]
    results: tuple[str, ...]
    uses_indices: bool = False
    body: str = ""


@dataclass(frozen=True, slots=True)
class MdhExpr:
    """One loop nest as an MDH expression."""

    name: str
    loc: SourceLoc
    dims: tuple[Dim, ...]
    buffers: tuple[Buffer, ...]
    inputs: tuple[Access, ...]
    outputs: tuple[OutputWrite, ...]
    f: ScalarFunction
    params: tuple[tuple[str, int | None], ...] = ()
    reassociates_fp: bool = False
    alias_checks: tuple[AliasCheck, ...] = ()
    preconditions: tuple[Precondition, ...] = ()
    #: a non-rectangular nest: ``dims`` span its bounding box and a point of the box belongs to
    #: the domain when every ``domain[k] >= 0`` (affine in iterators and parameters). Outside it,
    #: ``f`` is not evaluated (no input is read): a reduction gets the neutral element, a
    #: concatenation writes nothing; an output point whose concat coordinates satisfy the
    #: constraints naming only concat iterators is stored, no other.
    domain: tuple[Affine, ...] = ()
    #: counters and bumped pointers the program reads after the nest (``ExitValue``)
    exits: tuple[ExitValue, ...] = ()

    @property
    def reduction_op(self) -> Combine | None:
        ops = {d.combine for d in self.dims if d.combine.is_reduction}
        return next(iter(ops)) if len(ops) == 1 else None

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    def to_dsl(self) -> str:
        """Print in the thesis's DSL form (cf. thesis Listing 38) plus the scalar function."""
        its = ",".join(d.iterator for d in self.dims)

        def view(acc: Access) -> str:
            idx = ",".join(e.to_c().replace(" ", "") for e in acc.index)
            return f"{acc.buffer}:({its})->({idx})"

        out_types = ",".join(o.elem_type for o in self.outputs)
        in_types = ",".join(self.buffer(a.buffer).elem_type for a in self.inputs)
        sizes = ",".join(f"{d.iterator.upper()}={d.extent.to_c()}" for d in self.dims)
        ops = ",".join(d.combine.value for d in self.dims)
        lines = [
            f"out_view<{out_types}>( {', '.join(view(o.access) for o in self.outputs)} ) o",
            f"md_hom<{sizes}>( f, ({ops}) ) o",
            f"inp_view<{in_types}>( {', '.join(view(a) for a in self.inputs)} )",
        ]
        args = ", ".join(
            f"{self.buffer(a.buffer).elem_type} {p}" for a, p in zip(self.inputs, self.f.params)
        )
        rets = "; ".join(f"return {r}" for r in self.f.results)
        lines.append(f"f({args}) {{ {rets}; }}")
        for o in self.outputs:
            if o.update == "accumulate":
                lines.append(f"  {o.access.to_c()} = {o.access.to_c()} {self._op_c()} R")
            elif o.init is not None:
                lines.append(f"  {o.access.to_c()} = {o.init} {self._op_c()} R")
            if o.finish is not None:
                binds = ", ".join(f"{p}={a.to_c()}" for p, a in zip(o.finish.params, o.finish.inputs))
                lines.append(f"  finally {o.access.to_c()} = {o.finish.expr} [{o.finish.result}=R{'; ' + binds if binds else ''}]")
        for c in self.alias_checks:
            if c.a == c.b:
                lines.append(f"  requires rows in address order, apart: {_range_text(c.a)}")
            else:
                lines.append(f"  requires no overlap: {_range_text(c.a)} / {_range_text(c.b)}")
        for p in self.preconditions:
            lines.append(f"  requires {p.c_expr} ({p.reason})")
        for x in self.exits:
            lines.append(f"  then {x.name} = {x.c_expr}")
        if self.domain:
            lines.append("  where " + " and ".join(f"{c.to_c()} >= 0" for c in self.domain))
        return "\n".join(lines)

    def _op_c(self) -> str:
        op = self.reduction_op
        return {None: "(+)", Combine.ADD: "+", Combine.MUL: "*", Combine.MAX: "max", Combine.MIN: "min",
                Combine.BAND: "&", Combine.BOR: "|", Combine.BXOR: "^"}.get(op, op.value if op else "(+)")


def _range_text(r: AddressRange) -> str:
    if r.lo is None or r.hi is None:
        return f"&{r.buffer}"
    text = f"{r.buffer}[{r.lo.to_c()}..{r.hi.to_c()}]"
    if r.row_lo is not None and r.row_hi is not None:
        text += f"[{r.row_lo.to_c()}..{r.row_hi.to_c()}]"
    return text
