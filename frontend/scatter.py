"""Scatter updates (histograms): ``A[e] op= v`` whose subscript is no affine function -> an
update of the whole object ``A`` in the plain model, kept only where ``A`` is an accumulator.

``h[px[i]]++``, ``cnt[lab[i]]++; sum[lab[i]*d + j] += x[i*d + j]`` or ``rho[cell[p]] += q[p]``
accumulate into an array at an element the program reads from memory. In the model of a loop
around its body as written (``mdpoly.frontend.privatize`` with ``plain``: the model that allows
opaque reads, ``mdpoly.frontend.opaque_reads``), such an update writes and reads ``A[0]...[0]``,
the whole object: every two updates depend on each other, as the updates of a scalar
accumulator do. ``check_scatter`` keeps that model only where ``A`` then is such an accumulator:

- every statement that touches ``A`` is one of these updates, all with one operator
  (``mdpoly.frontend.deps.reduction_of``: ``+= -= *= &= |= ^=``, ``++``/``--``, ``A[e] = A[e] op
  v`` with the same subscript written alike, ``A[e] = fmax(A[e], v)``), and no term reads ``A``;
- the subscript reads no memory the nest writes and no scalar it writes other than the
  iterators and the nest's own temporaries (the rule of opaque reads), so each update's element
  is the one the subscript names wherever it is evaluated;
- ``A`` is a declared array of constant extents (one object, reduced whole) or a pointer of one
  dimension, whose updated elements a run-time inspection finds (``Scop.inspected``,
  ``mdpoly.frontend.inspector``).

The privatizer then reduces ``A`` in the parallel loop like a folded scalar (``scatter_reductions``):
a copy per thread of the section the loop updates, combined at the end. Anything else keeps the
subscript's own refusal, with what failed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from mdpoly.diagnostics import SourceLoc, UnsupportedInput
from mdpoly.frontend.deps import inexact_reduction, reduction_of
from mdpoly.ir.c_types import parse_type
from mdpoly.ir.mdh import INSPECT_HI, INSPECT_LO, Access, Affine, Combine, Precondition
from mdpoly.ir.nest import ScatterReduction
from mdpoly.ir.scop import Expr, Scop, Statement, Variable, expr_names, expr_refs

#: The largest section (bytes) reduced with a copy per thread: gcc puts each thread's copy of a
#: reduced array section on the thread's stack.
MAX_SCATTER_BYTES = 256 * 1024

_SUFFIX = re.compile(r"\b(\d+)[uUlL]+\b")


@dataclass(frozen=True, slots=True)
class ScatterUpdate:
    """An access of ``array`` at ``element`` (C text) whose subscript the model refused for
    ``reason`` at ``loc``: an update by statement ``statement``, or (``""``) a read."""

    array: str
    loc: SourceLoc
    reason: str
    element: str
    statement: str = ""


def scatter_access(var: Variable | None, subscripts: list[Expr] | None, written: set[str], iterators: set[str],
                   own: frozenset[str] = frozenset()) -> Access | None:
    """The whole-object access of an update of ``var`` at ``subscripts``, or ``None`` when it
    cannot be one: ``var`` is no declared array of constant extents nor a one-dimensional
    pointer, or a subscript reads what the nest writes (other than ``iterators`` and ``own``)."""
    if var is None or subscripts is None or not _scatterable(var):
        return None
    allowed = iterators | own
    for e in subscripts:
        if ({a.buffer for a in expr_refs(e)} & written) - own or (expr_names(e) & written) - allowed:
            return None
    return Access(var.name, tuple(Affine() for _ in var.shape))


def _scatterable(var: Variable) -> bool:
    if var.kind == "pointer":
        return len(var.shape) == 1
    return var.kind == "array" and var.alias == "object" and all(extent(d) is not None for d in var.shape)


def extent(text: str) -> int | None:
    """A declared array's extent written as an integer constant expression (``256``, ``1 << 16``,
    ``4 * 64``), else ``None``."""
    try:
        tree = ast.parse(_SUFFIX.sub(r"\1", text.strip()), mode="eval")
    except SyntaxError:
        return None

    def value(n: ast.AST) -> int | None:
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return n.value
        if not isinstance(n, ast.BinOp):
            return None
        a, b = value(n.left), value(n.right)
        if a is None or b is None:
            return None
        if isinstance(n.op, ast.Add):
            return a + b
        if isinstance(n.op, ast.Sub):
            return a - b
        if isinstance(n.op, ast.Mult):
            return a * b
        return a << b if isinstance(n.op, ast.LShift) and 0 <= b < 63 else None

    v = value(tree.body)
    return v if v is not None and v > 0 else None


def check_scatter(updates: list[ScatterUpdate], statements: list[Statement]) -> UnsupportedInput | None:
    """Why the model with the scatter ``updates`` (and reads) cannot stand, located at the array's
    first update (code ``SCATTER_REFUSED``); ``None`` when every scattered array is an accumulator
    (see the module docstring)."""
    first: dict[str, ScatterUpdate] = {}
    for u in updates:
        if u.statement:
            first.setdefault(u.array, u)
    for u in updates:
        if u.statement:
            continue
        if u.array not in first:   # a gather of an array the nest writes at affine subscripts: the read's own refusal
            return UnsupportedInput(u.reason, u.loc, "non-affine-subscript")
        return _refused(first[u.array], f"'{u.array}' is also read ('{u.element}', line {u.loc.line}) where it is "
                                        "not the accumulator of its own update")
    for name, where in first.items():
        mine = {u.statement for u in updates if u.array == name}
        ops: set[Combine] = set()
        for st in statements:
            if st.write.buffer != name and all(a.buffer != name for a in st.reads):
                continue
            if st.name not in mine:
                return _refused(where, f"'{name}' is also accessed by '{st.text}' (line {st.loc.line}), which is no "
                                       "update at an index read from memory")
            red = reduction_of(st)
            if red is None or red.op.is_arg or red.partner or red.accumulator.buffer != name:
                return _refused(where, f"'{st.text}' (line {st.loc.line}) is no reduction update of '{name}'")
            if any(a.buffer == name for a in expr_refs(red.term)):
                return _refused(where, f"the term of '{st.text}' (line {st.loc.line}) reads '{name}'")
            ops.add(red.op)
        if len(ops) > 1:
            return _refused(where, f"'{name}' is updated with different operators "
                                   f"({', '.join(sorted(op.value for op in ops))})")
    return None


#: The code of ``check_scatter``'s refusals: the privatizer says them beside the nest's own reason
#: (the subscript's, ``non-affine-subscript``), which stays the nest's code.
SCATTER_REFUSED = "scatter-update"


def _refused(u: ScatterUpdate, why: str) -> UnsupportedInput:
    return UnsupportedInput(f"its updates of '{u.array}' at indices read from memory are no reduction: {why}", u.loc,
                            SCATTER_REFUSED)


def scatter_reductions(scop: Scop, omp: dict[Combine, str], strict_fp: bool) -> tuple[ScatterReduction, ...] | str:
    """Each scattered array of ``scop`` as an OpenMP array reduction of a parallel loop around
    the nest (``omp``: the reduction identifiers of the operators allowed), or why one cannot be
    (a sentence). A pointer's section is the elements the inspection finds (``mdp_ins_lo_A`` ..
    ``mdp_ins_hi_A``); a declared array is reduced whole and must fit ``MAX_SCATTER_BYTES``."""
    out: list[ScatterReduction] = []
    for name in sorted(scop.scattered):
        var = scop.variable(name)
        if var.c_value:
            return f"'{var.c_value}', updated at indices read from memory, is no variable an OpenMP reduction can name"
        reds = [r for st in scop.statements if st.write.buffer == name for r in (reduction_of(st),) if r is not None]
        ops = {r.op for r in reds}
        if len(ops) != 1 or next(iter(ops)) not in omp:
            return f"'{name}' is updated at indices read from memory with no operator an OpenMP reduction has"
        op = next(iter(ops))
        inexact = next((why for r in reds if (why := inexact_reduction(scop, r))), None)
        if inexact:
            return f"the updates of '{name}' at indices read from memory cannot be reordered: {inexact}"
        if strict_fp and var.is_float and op in (Combine.ADD, Combine.MUL):
            return f"'{name}' is a floating-point sum at indices read from memory, which --strict-fp keeps in order"
        if var.kind == "array" and (var.alias != "object" or any(extent(d) is None for d in var.shape)):
            # a pointer the nest also indexes as a multi-dimensional view: no section of it to name
            return (f"'{name}', updated at indices read from memory, is a pointer the nest also views as a "
                    "multi-dimensional array")
        if var.kind == "array":
            elem = parse_type(var.scalar_type or var.elem_type)
            count = 1
            for d in var.shape:
                count *= extent(d) or 0
            if elem is None or count * elem.size > MAX_SCATTER_BYTES:
                size = f"{count * elem.size} bytes" if elem is not None else "an unknown size"
                return (f"'{name}', updated at indices read from memory, has {size}: too large for a copy on every "
                        f"thread's stack (at most {MAX_SCATTER_BYTES} bytes)")
            out.append(ScatterReduction(name, omp[op], "0", str(count), whole=True))
        else:
            lo, hi = INSPECT_LO + name, INSPECT_HI + name
            out.append(ScatterReduction(name, omp[op], lo, f"{hi} - {lo} + 1"))
    return tuple(out)


def scatter_preconditions(scattered: tuple[ScatterReduction, ...]) -> tuple[Precondition, ...]:
    """The run-time conditions of the sections the inspection finds: the loop updates at least
    one element of each, and each fits ``MAX_SCATTER_BYTES`` (a thread's copy lives on its stack)."""
    out = []
    for s in scattered:
        if s.whole:
            continue
        lo, hi = INSPECT_LO + s.name, INSPECT_HI + s.name
        out.append(Precondition(f"{lo} <= {hi} && (double)({s.length}) * sizeof({s.name}[0]) <= {MAX_SCATTER_BYTES}.0",
                                f"the elements of '{s.name}' it updates (found at run time) fit a copy on every thread's "
                                f"stack (at most {MAX_SCATTER_BYTES // 1024} KiB)"))
    return tuple(out)
