"""The polyhedral model of one candidate loop nest: ``Scop`` (loops, statements, accesses).

Produced by ``mdpoly.frontend.scop.extract_scops`` from the pycparser AST, consumed by
``mdpoly.frontend.deps`` (dependence analysis) and ``mdpoly.frontend.to_mdh`` (MDH construction). Everything
is plain frozen data; isl objects are built from the string forms given here (``domain_str``,
``access_str``, ``schedule_str``), so a ``Scop`` pickles.

Statement right-hand sides are kept as a small expression tree (``Expr``) whose leaves are
constants, names (iterators, size parameters, read-only scalars) and ``Ref`` (a read access).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mdpoly.diagnostics import SourceLoc
from mdpoly.ir.mdh import Access, Affine, ExitValue, Precondition

#: ``local``: a scalar declared inside the nest and written there (a per-iteration accumulator);
#: it is modelled as expanded over the loops around its declaration and never becomes a buffer.
VariableKind = Literal["array", "pointer", "scalar", "indirect", "local"]
#: ``object``: a named object (a scalar, a non-parameter array) -- distinct objects never overlap;
#: ``pointer``: may point anywhere (pointer or array parameter, pointer variable, rows of an
#: indirect buffer); ``restrict``: a ``restrict`` pointer, which the C rules keep from aliasing;
#: ``private``: a scalar parameter or local whose address the function never takes.
AliasClass = Literal["object", "pointer", "restrict", "private"]

# {{{ expressions


@dataclass(frozen=True, slots=True)
class Const:
    text: str


@dataclass(frozen=True, slots=True)
class Var:
    """An iterator, a size parameter or a read-only scalar variable."""

    name: str


@dataclass(frozen=True, slots=True)
class Ref:
    """A read of an array element or of a scalar written somewhere in the nest."""

    access: Access


@dataclass(frozen=True, slots=True)
class Unary:
    op: str
    operand: Expr


@dataclass(frozen=True, slots=True)
class Binary:
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Call:
    func: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Cast:
    """``(type)operand``; ``resolved`` is ``type`` with typedefs resolved (``""``: same as ``type``)."""

    type: str
    operand: Expr
    resolved: str = ""


@dataclass(frozen=True, slots=True)
class Cond:
    cond: Expr
    then: Expr
    other: Expr


Expr = Const | Var | Ref | Unary | Binary | Call | Cast | Cond

# C precedence (higher binds tighter), used to print with minimal parentheses.
_PREC = {
    "*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11,
    "<": 10, "<=": 10, ">": 10, ">=": 10, "==": 9, "!=": 9, "&": 8, "^": 7, "|": 6,
    "&&": 5, "||": 4,
}


def expr_refs(e: Expr) -> list[Access]:
    """Every ``Ref`` access in ``e``, in evaluation (left-to-right) order."""
    if isinstance(e, Ref):
        return [e.access]
    if isinstance(e, Unary | Cast):
        return expr_refs(e.operand)
    if isinstance(e, Binary):
        return expr_refs(e.left) + expr_refs(e.right)
    if isinstance(e, Call):
        return [a for x in e.args for a in expr_refs(x)]
    if isinstance(e, Cond):
        return expr_refs(e.cond) + expr_refs(e.then) + expr_refs(e.other)
    return []


def expr_names(e: Expr) -> set[str]:
    """Every ``Var`` name in ``e`` (not counting names inside subscripts)."""
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, Unary | Cast):
        return expr_names(e.operand)
    if isinstance(e, Binary):
        return expr_names(e.left) | expr_names(e.right)
    if isinstance(e, Call):
        return {n for x in e.args for n in expr_names(x)}
    if isinstance(e, Cond):
        return expr_names(e.cond) | expr_names(e.then) | expr_names(e.other)
    return set()


def render_expr(e: Expr, refs: dict[Access, str] | None = None, prec: int = 0) -> str:
    """C text of ``e``; a ``Ref`` prints as ``refs[access]`` when given, else as ``A[i][j]``."""
    if isinstance(e, Const):
        return e.text
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Ref):
        return refs[e.access] if refs is not None and e.access in refs else e.access.to_c()
    if isinstance(e, Unary):
        inner = render_expr(e.operand, refs, 14)
        text = f"{e.op}{inner}" if not inner.startswith(e.op[-1]) else f"{e.op}({inner})"
        return text if prec <= 14 else f"({text})"
    if isinstance(e, Cast):  # the resolved type: generated kernels do not see the user's typedefs
        text = f"({e.resolved or e.type}){render_expr(e.operand, refs, 14)}"
        return text if prec <= 14 else f"({text})"
    if isinstance(e, Binary):
        p = _PREC[e.op]
        text = f"{render_expr(e.left, refs, p)} {e.op} {render_expr(e.right, refs, p + 1)}"
        return text if prec <= p else f"({text})"
    if isinstance(e, Call):
        return f"{e.func}({', '.join(render_expr(a, refs) for a in e.args)})"
    text = f"{render_expr(e.cond, refs, 4)} ? {render_expr(e.then, refs)} : {render_expr(e.other, refs, 3)}"
    return text if prec <= 3 else f"({text})"


# }}}

# {{{ model


@dataclass(frozen=True, slots=True)
class Variable:
    """A variable the nest touches, with its declared type. ``scalar_type`` resolves typedefs.

    ``c_decl`` is its declaration as a parameter (``float **A``), ``""`` for a local.
    """

    name: str
    elem_type: str
    shape: tuple[str, ...]
    kind: VariableKind
    scalar_type: str = ""
    c_decl: str = ""
    alias: AliasClass = "object"
    #: a flat array (``float *A``) the nest indexes as ``A[i*m + j]`` or ``A[x + y*nx + z*nx*ny]``:
    #: viewed as rows of this many elements (C text, ``m``; ``shape == ("", m)`` or ``("", ny, nx)``),
    #: while the user's code passes the flat pointer (``mdpoly.frontend.delinearize``)
    rows_of: str = ""
    #: the view of such a flat array starts at ``name + base_offset`` (``A[loff + t*kv + i]``)
    base_offset: str = ""
    #: a size parameter the front end introduced (a strided loop's trip count): the C expression
    #: the call site passes for it, over the user's variables
    c_value: str = ""
    #: read only under conditions the model's box does not show (``mdpoly.frontend.guarded_reads``):
    #: no stage may read it ahead of the user's expression
    lazy: bool = False
    #: of a ``lazy`` array the nest does not write: the smallest and largest first view subscript of
    #: its evaluated reads (each read over the box narrowed by its selects' conditions), in size
    #: parameters; the alias ranges use it (``mdpoly.frontend.alias``). None: the whole box's.
    lazy_rows: tuple[Affine, Affine] | None = None

    @property
    def is_float(self) -> bool:
        return any(w in self.scalar_type.split() for w in ("float", "double", "_Float32", "_Float64", "_Float128"))

    @property
    def is_integer(self) -> bool:
        words = self.scalar_type.split()
        return not self.is_float and (any(w in _INT_WORDS for w in words) or self.scalar_type.endswith("_t"))


_INT_WORDS = frozenset({"int", "long", "short", "char", "unsigned", "signed", "_Bool"})
_NOT_IN_TYPE = frozenset({"const", "volatile", "restrict", "signed", "unsigned", "__restrict", "__restrict__"})


def distinct_types(x: Variable, y: Variable) -> bool:
    """Whether C's aliasing rule keeps stores through ``x``'s elements from changing ``y``'s and
    back: both of arithmetic types that are not compatible (``float`` and ``double``, ``int`` and
    ``float``), none of them a character type (which may reach any object), signedness and
    qualifiers aside. An object accessed through both would make the program undefined."""
    def core(v: Variable) -> tuple[str, ...] | None:
        words = v.scalar_type.replace("*", " * ").split()
        if not words or "*" in words or any(w in ("char", "enum", "struct", "union", "_Complex", "complex")
                                              for w in words):
            return None
        if not (v.is_float or v.is_integer) or v.scalar_type.endswith("_t"):
            return None
        kept = tuple(sorted(w for w in words if w not in _NOT_IN_TYPE))
        return kept or ("int",)
    a, b = core(x), core(y)
    return a is not None and b is not None and a != b


@dataclass(frozen=True, slots=True)
class Loop:
    """``for (iterator = lower; iterator < upper; ++iterator)``; ``parent`` indexes ``Scop.loops``.

    ``c_type`` is the iterator's declared C type (typedefs resolved, e.g. ``unsigned int``): the
    user's expressions that name the iterator must see it in that type. ``step`` is +1, or -1 for
    a loop that visits the same values downwards (its schedule dimension is ``-iterator``).
    """

    iterator: str
    lower: Affine
    upper: Affine
    loc: SourceLoc
    parent: int | None
    depth: int
    c_type: str = "int"
    step: int = 1

    @property
    def extent(self) -> Affine:
        up = dict(self.upper.terms)
        for n, c in self.lower.terms:
            up[n] = up.get(n, 0) - c
        return Affine.of(up, self.upper.constant - self.lower.constant)


@dataclass(frozen=True, slots=True)
class Statement:
    """One assignment ``write op rhs`` executed for every point of its loops' domain.

    ``loops`` lists the enclosing loops outermost first (indices into ``Scop.loops``);
    ``position`` holds the textual order inside each of them (the 2d+1 schedule's constants,
    ``len(loops) + 1`` entries). ``op`` is the C assignment operator as written (``=``, ``+=``...);
    ``reads`` lists every read access, including the implicit one of ``x op= e``.
    """

    name: str
    loc: SourceLoc
    loops: tuple[int, ...]
    position: tuple[int, ...]
    write: Access
    op: str
    rhs: Expr
    reads: tuple[Access, ...]
    text: str
    #: affine conditions of enclosing ``if``s, each ``expr >= 0``: the statement runs only where
    #: they hold (part of its domain)
    guards: tuple[Affine, ...] = ()


@dataclass(frozen=True, slots=True)
class Scop:
    """A candidate nest: loops, statements, size parameters and the variables it touches."""

    loc: SourceLoc
    function: str
    loops: tuple[Loop, ...]
    statements: tuple[Statement, ...]
    params: tuple[str, ...]
    variables: tuple[Variable, ...]
    marked: bool = False
    pragma_text: str | None = None
    pragma_loc: SourceLoc | None = None
    #: run-time conditions on the size parameters under which the loops' model is exact
    preconditions: tuple[Precondition, ...] = ()
    #: arrays some statement reads at an index the model does not know (``A[idx[i]]``,
    #: ``mdpoly.frontend.opaque_reads``; their accesses say ``A[0]``): never written in the nest,
    #: their alias ranges are the whole object
    opaque: frozenset[str] = frozenset()
    #: the opaque reads of pointers beside written pointers that may overlap them: their alias
    #: ranges are the elements a run-time inspection of the nest's subscripts finds
    #: (``mdpoly.frontend.inspector``)
    inspected: frozenset[str] = frozenset()
    #: arrays the nest only updates at indices the model does not know (``h[px[i]]++``,
    #: ``mdpoly.frontend.scatter``): every access says ``A[0]``, every statement touching them is
    #: a reduction update with one operator whose term never reads them; a pointer among them is
    #: also ``inspected`` (its range: the elements the nest updates)
    scattered: frozenset[str] = frozenset()
    #: arrays the nest writes that the subscript of an opaque read reads (``px`` in
    #: ``px[i] = lut[px[i]]``): a model with them stands only where no read of them takes its
    #: value from a write of the nest (no flow dependence ends at them), so that an inspection run
    #: before the nest reads the values the nest's subscripts read
    index_arrays_written: frozenset[str] = frozenset()
    #: size parameters that stand for the product of two others, ``(P, a, b)`` for ``P = a * b``
    #: (``mdp_p_ny_nz``): the dependence analysis knows the signs and bounds exact products have
    #: (``mdpoly.frontend.deps.product_context``)
    products: tuple[tuple[str, str, str], ...] = ()
    #: counters and bumped pointers the nest's closed forms replaced that the program reads after
    #: it: the call site assigns their exit values (``mdpoly.frontend.normalize.inductions``)
    exits: tuple[ExitValue, ...] = ()

    def variable(self, name: str) -> Variable:
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(name)

    def iterators(self, stmt: Statement) -> tuple[str, ...]:
        return tuple(self.loops[k].iterator for k in stmt.loops)

    def _prefix(self) -> str:
        return f"[{', '.join(self.params)}] -> " if self.params else ""

    def domain_str(self, stmt: Statement, tag: str | None = None) -> str:
        its = self.iterators(stmt)
        cons = [f"{self.loops[k].lower.to_c()} <= {self.loops[k].iterator} < {self.loops[k].upper.to_c()}"
                for k in stmt.loops] + [f"{g.to_c()} >= 0" for g in stmt.guards]
        body = f"{tag or stmt.name}[{', '.join(its)}]"
        return f"{self._prefix()}{{ {body}{' : ' + ' and '.join(cons) if cons else ''} }}"

    def access_str(self, stmt: Statement, acc: Access, tag: str | None = None) -> str:
        its = ", ".join(self.iterators(stmt))
        idx = ", ".join(e.to_c() for e in acc.index)
        return f"{self._prefix()}{{ {tag or stmt.name}[{its}] -> {acc.buffer}[{idx}] }}"

    def schedule_str(self, stmt: Statement, tag: str | None = None, sub: int = 0) -> str:
        """The 2d+1 schedule padded to the nest's depth, plus one sub-statement dimension."""
        depth = max((lp.depth for lp in self.loops), default=0)
        its = self.iterators(stmt)
        times: list[str] = []
        for d in range(depth):
            times.append(str(stmt.position[d]) if d < len(stmt.position) else "0")
            if d < len(its):
                times.append(its[d] if self.loops[stmt.loops[d]].step > 0 else f"-{its[d]}")
            else:
                times.append("0")
        times.append(str(stmt.position[depth]) if depth < len(stmt.position) else "0")
        times.append(str(sub))
        return f"{self._prefix()}{{ {tag or stmt.name}[{', '.join(its)}] -> [{', '.join(times)}] }}"


# }}}
