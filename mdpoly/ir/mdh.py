"""The MDH expression IR: ``out_view o md_hom(f, (op_1..op_D)) o inp_view`` for one loop nest.

Produced by ``frontend.to_mdh.build_mdh`` from a SCoP and its dependence classification, consumed
by ``mdpoly.lower``. All types are frozen; edits go through ``dataclasses.replace``.
Index functions are affine (``Affine``) in the nest's iterators and the symbolic size parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

from mdpoly.diagnostics import SourceLoc


class Combine(str, Enum):
    """Combine operator of one MDH dimension; ``SEQ`` only appears in reports of kept nests."""

    CONCAT = "++"
    ADD = "+"
    MUL = "*"
    MAX = "max"
    MIN = "min"
    SEQ = "seq"

    @property
    def is_reduction(self) -> bool:
        return self in (Combine.ADD, Combine.MUL, Combine.MAX, Combine.MIN)


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
    """

    iterator: str
    lower: Affine
    extent: Affine
    combine: Combine
    loc: SourceLoc

    @property
    def static_extent(self) -> int | None:
        return self.extent.constant if self.extent.is_constant else None


BufferKind = Literal["array", "pointer", "scalar"]


@dataclass(frozen=True, slots=True)
class Buffer:
    """A variable the nest touches, as the generated function must receive it.

    ``shape`` holds the C extents of the declared dimensions (macros expanded), ``""`` for an
    unsized first dimension or a pointer; ``()`` for a scalar. ``kind`` says how it is passed:
    arrays and pointers as pointers, scalars by value when only read, by pointer when written.
    """

    name: str
    elem_type: str
    shape: tuple[str, ...]
    kind: BufferKind
    written: bool = False


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
class OutputWrite:
    """How the md_hom result ``R`` of one output reaches its buffer.

    ``assign``: ``out = R`` (or ``out = init (+) R`` when ``init`` is a C expression the nest
    wrote into the accumulator before reducing). ``accumulate``: ``out = out (+) R`` -- the
    ``x += e`` form without initialisation in the nest, where the old value is kept.
    """

    access: Access
    elem_type: str
    update: UpdateKind = "assign"
    init: str | None = None


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
        return "\n".join(lines)

    def _op_c(self) -> str:
        op = self.reduction_op
        return {None: "(+)", Combine.ADD: "+", Combine.MUL: "*", Combine.MAX: "max", Combine.MIN: "min"}.get(
            op, "(+)"
        )
