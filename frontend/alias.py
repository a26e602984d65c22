"""Run-time alias preconditions: ``Scop`` -> ``tuple[AliasCheck, ...]`` for one accepted nest.

The dependence analysis treats every buffer name as its own memory. That holds for distinct
named objects (globals, locals declared as arrays, scalars whose address is never taken), not for
pointers: a pointer parameter may point into any other buffer the nest touches. For every pair
of buffers that may overlap, at least one of them written, this module computes the memory the
nest touches in each (``AddressRange``: the first subscript's minimum and maximum over the
rectangular domain, whole rows of a multi-dimensional buffer); the generated call runs only when
no pair overlaps, else the original nest runs. ``restrict`` pointers need no check: the C rules
already forbid them to overlap anything that is modified; nor do buffers of incompatible
arithmetic element types (``float`` and ``double``, ``int`` and ``float``;
``mdpoly.ir.scop.distinct_types``): a store through one cannot change the other's objects. A gathered pointer
(``Scop.inspected``) spans the elements a run-time inspection of the nest's subscripts found
(``mdpoly.frontend.inspector``).

Writes through the row pointers of an indirect buffer (``double **A``, ``A[i][j] = ...``) need
its rows disjoint: the model treats ``A[i]`` and ``A[i+1]`` as different memory. Such a buffer
gets the check ``AliasCheck(r, r)`` of its one range ``r``: at run time its rows must lie in
address order (up or down), each ending before the next starts, and apart from its own array
of row pointers; checks against the other buffers then take its rows' envelope. Rows allocated
one by one in order, or row pointers into one block, pass; rows in any other order, or a
buffer whose rows the nest reaches through ranges of different shapes (kept, ``indirect-write``),
do not.
"""

from __future__ import annotations

from itertools import combinations

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.box import bounding_box
from mdpoly.frontend.struct_fields import same_struct_array
from mdpoly.ir.mdh import INSPECT_HI, INSPECT_LO, Access, AddressRange, Affine, AliasCheck, with_c_values
from mdpoly.ir.scop import Scop, Statement, Variable, distinct_types


def alias_checks(scop: Scop) -> tuple[AliasCheck, ...]:
    """The no-overlap checks the generated code of ``scop`` needs (empty when none).

    Expects a single-chain nest (``mdpoly.frontend.to_mdh.check_loops`` passed); ranges are taken over
    the domain's bounding box (``mdpoly.frontend.box``).
    :raises UnsupportedInput: a write through an indirect buffer, or an indirect buffer of more
        than two levels that needs a check.
    """
    written = {s.write.buffer for s in scop.statements}
    vars_ = [v for v in scop.variables if v.kind != "local"]
    ranges = _ranges(scop)
    checks: list[AliasCheck] = []
    for s in scop.statements:
        if scop.variable(s.write.buffer).kind != "indirect":
            continue
        rows = ranges.get(s.write.buffer, [])
        if len(rows) != 1 or rows[0].row_lo is None:
            raise UnsupportedInput(f"'{s.write.to_c()}' writes through row pointers of '{s.write.buffer}', whose "
                                   "rows the nest reaches in ranges of different shapes: their overlap cannot be "
                                   "checked at run time", s.loc, "indirect-write")
        if AliasCheck(rows[0], rows[0]) not in checks:
            checks.append(AliasCheck(rows[0], rows[0]))
    for x, y in combinations(vars_, 2):
        if not _may_overlap(x, y) or (x.name not in written and y.name not in written) or same_struct_array(x, y):
            continue
        for a in ranges.get(x.name, [AddressRange(x.name)]):
            for b in ranges.get(y.name, [AddressRange(y.name)]):
                checks.append(AliasCheck(a, b))
    return tuple(checks)


def first_extents(scop: Scop) -> dict[str, str]:
    """For each pointer whose first dimension has no declared size, how many elements the nest
    reaches from its start (the largest first subscript plus one, over the domain's bounding box;
    times the row length for a flat pointer viewed as rows), as C over the user's names -- where its accesses' ranges merge into one that starts at a non-negative
    constant: what a device copy of it must hold. Opaque, inspected, scattered and offset arrays
    have no such extent."""
    values = {v.name: v.c_value for v in scop.variables if v.c_value}
    out: dict[str, str] = {}
    for name, rs in _ranges(scop).items():
        var = scop.variable(name)
        if var.kind == "indirect" or var.base_offset or (var.shape and var.shape[0].strip()) or len(rs) != 1:
            continue
        r = rs[0]
        if r.lo is None or r.hi is None or r.lo.terms or r.lo.constant < 0:
            continue
        end = with_c_values(_plus(r.hi, Affine.of(constant=1)).to_c(), values)
        out[name] = f"({end}) * ({r.rows_of})" if r.rows_of else end   # viewed as rows: their elements
    return out


def _may_overlap(x: Variable, y: Variable) -> bool:
    kinds = {x.alias, y.alias}
    if "restrict" in kinds or "private" in kinds or distinct_types(x, y):
        return False
    return "pointer" in kinds


def _ranges(scop: Scop) -> dict[str, list[AddressRange]]:
    out: dict[str, list[AddressRange]] = {}
    for s in scop.statements:
        for acc in (s.write, *s.reads):
            var = scop.variable(acc.buffer)
            if acc.buffer in scop.inspected:   # the elements found by the nest's inspector
                out[acc.buffer] = [AddressRange(acc.buffer, Affine.of({INSPECT_LO + acc.buffer: 1}),
                                                Affine.of({INSPECT_HI + acc.buffer: 1}))]
                continue
            if var.kind in ("scalar", "local") or not acc.index or acc.buffer in scop.opaque | scop.scattered:
                continue   # an opaque read's (a scattered declared array's) range is its whole object (the default)
            r = _range(scop, s, var, acc)
            rs = out.setdefault(acc.buffer, [])
            for k, old in enumerate(rs):
                merged = _merge(old, r)
                if merged is not None:
                    rs[k] = merged
                    break
            else:
                rs.append(r)
    return out


def _range(scop: Scop, s: Statement, var: Variable, acc: Access) -> AddressRange:
    lo, hi = _extremes(scop, s, acc.index[0])
    if var.lazy_rows is not None and acc is not s.write and not _written(scop, var.name):
        lo, hi = var.lazy_rows  # its reads' rows where evaluated (``mdpoly.frontend.guarded_reads``)
    if var.kind != "indirect":
        # at the call site a size parameter of the front end's (``mdp_q_kv_by_hs``) is its C expression
        values = {v.name: v.c_value for v in scop.variables if v.c_value}
        rows_of = with_c_values(var.rows_of, values)
        return AddressRange(acc.buffer, lo, hi, rows_of=rows_of, offset=var.base_offset)
    if len(acc.index) != 2:
        raise UnsupportedInput(f"'{acc.to_c()}' goes through {len(acc.index) - 1} levels of row pointers; only "
                               "'T **A' / 'T *A[N]' can be checked for overlap", s.loc, "may-alias")
    row_lo, row_hi = _extremes(scop, s, acc.index[1])
    return AddressRange(acc.buffer, lo, hi, row_lo, row_hi)


def _written(scop: Scop, name: str) -> bool:
    return any(s.write.buffer == name for s in scop.statements)


def _extremes(scop: Scop, s: Statement, e: Affine) -> tuple[Affine, Affine]:
    """Minimum and maximum of ``e`` over the statement's domain's bounding box, in size parameters."""
    lo, hi = Affine.of(constant=e.constant), Affine.of(constant=e.constant)
    box = bounding_box(scop)
    bounds = {scop.loops[k].iterator: box[k] for k in s.loops}
    for name, c in e.terms:
        lp = bounds.get(name)
        if lp is None:
            lo = _plus(lo, Affine.of({name: c}))
            hi = _plus(hi, Affine.of({name: c}))
            continue
        first, last = lp.lower, _plus(lp.upper, Affine.of(constant=-1))
        lo = _plus(lo, _times(first if c > 0 else last, c))
        hi = _plus(hi, _times(last if c > 0 else first, c))
    return lo, hi


def _merge(a: AddressRange, b: AddressRange) -> AddressRange | None:
    """One range covering both when their bounds differ by constants, else None."""
    pairs = [(a.lo, b.lo, min), (a.hi, b.hi, max), (a.row_lo, b.row_lo, min), (a.row_hi, b.row_hi, max)]
    out: list[Affine | None] = []
    for x, y, pick in pairs:
        if x is None or y is None:
            if x is not y:
                return None
            out.append(None)
            continue
        if x.terms != y.terms:
            return None
        out.append(Affine(x.terms, pick(x.constant, y.constant)))
    lo, hi, row_lo, row_hi = out
    return AddressRange(a.buffer, lo, hi, row_lo, row_hi, rows_of=a.rows_of, offset=a.offset)


def _plus(a: Affine, b: Affine) -> Affine:
    d = dict(a.terms)
    for n, c in b.terms:
        d[n] = d.get(n, 0) + c
    return Affine.of(d, a.constant + b.constant)


def _times(a: Affine, k: int) -> Affine:
    return Affine.of({n: c * k for n, c in a.terms}, a.constant * k)
