"""The rank-slice model for ``--mpi``: ``split_for_ranks(mdh) -> RankSplit | RankRefusal``.

Every MPI rank runs the user's ``main`` on replicated data. A transformed MDH computation is
made SPMD by splitting one of its dimensions into contiguous blocks, one per rank:

* a concatenation dimension (preferred: the outermost one with enough points): each rank
  computes the output points of its block, then the outputs are gathered so that every rank
  holds the whole result -- in place, as whole rows of the output's outermost subscript when
  the split iterator indexes that subscript with unit coefficient and nothing else does
  (``Gather.rows``), else packed point by point into a contiguous buffer and unpacked again;
* else a reduction dimension: each rank computes the reduction over its block alone (its
  outputs get the plain value ``R_r``, no start value, no finishing expression), the partial
  results are combined over all ranks with the dimension's combine operator, and only then the
  sequential program's start value (the output's old value, or the accumulator's ``init``)
  and finishing expression are applied -- once, not once per rank.

The dimension's lower bound and extent become two parameters of the generated function
(``LO``, ``EXTENT``), so the target's ordinary lowering and rendering produce the per-rank code
(``RankSplit.sliced``); at the call site they hold the whole range (``Buffer.c_value``), which
the MPI wrapper (``mdpoly.backends.mpi``) cuts into the rank's block. Nothing here renders C
statements.
"""

from __future__ import annotations

from dataclasses import replace

from mdpoly.backends.mpi import MPI_OPS, mpi_type
from mdpoly.ir.fields import view_member
from mdpoly.ir.mdh import NULL_TEST_PREFIX, Affine, Buffer, Combine, MdhExpr
from mdpoly.ir.ranks import EXTENT, LO, Gather, RankRefusal, RankSplit
from mdpoly.lower.lower import function_params

#: A dimension with fewer points (known at compile time) is not worth splitting over ranks.
MIN_SPLIT_EXTENT = 8


def _big_enough(extent: int | None) -> bool:
    return extent is None or extent >= MIN_SPLIT_EXTENT


def _c_of(a: Affine, values: dict[str, str]) -> str:
    """``a`` as C text at the call site, every name widened (``values``: names the call site
    prints as expressions)."""
    parts = [f"{c} * (long long)({values.get(n, n)})" for n, c in a.terms]
    parts.append(str(a.constant))
    return "(" + " + ".join(parts) + ")"


def split_for_ranks(mdh: MdhExpr) -> RankSplit | RankRefusal:
    """Choose the dimension to split over MPI ranks and build the per-rank computation.

    Never raises: what cannot be split correctly is a ``RankRefusal`` with a reason code.
    """
    iters = {d.iterator for d in mdh.dims}
    if iters & {LO, EXTENT}:
        return RankRefusal("mpi-reserved-name", f"an iterator is named '{LO}' or '{EXTENT}'")
    concat = [k for k, d in enumerate(mdh.dims) if d.combine is Combine.CONCAT]
    reds = [k for k, d in enumerate(mdh.dims) if d.combine.is_reduction]
    if len(concat) + len(reds) != len(mdh.dims):
        return RankRefusal("mpi-nothing-to-split", "the computation has sequential dimensions")
    bufs = {b.name: b for b in mdh.buffers}
    tested = sorted(n for n in bufs if f"{NULL_TEST_PREFIX}{n}" in bufs)
    if tested:   # (``frontend.normalize.pointer_tests``): the ranks would copy a null pointer's elements
        return RankRefusal("mpi-null-tested-input", f"'{tested[0]}' is read only where it is not null")
    out_bufs = [o.access.buffer for o in mdh.outputs]
    if len(set(out_bufs)) != len(out_bufs):
        return RankRefusal("mpi-shared-output", "two outputs write the same variable")
    if any(bufs[n].kind == "indirect" for n in out_bufs):
        return RankRefusal("mpi-indirect-output", "an output is reached through row pointers")
    if any(view_member(n) for n in out_bufs):  # a gather would move whole elements of the member's type
        return RankRefusal("mpi-struct-field-output", "an output is an array-of-structs field")
    red_its = {mdh.dims[k].iterator for k in reds}
    if any(o.access.index and any(e.names() & red_its for e in o.access.index) for o in mdh.outputs):
        return RankRefusal("mpi-nothing-to-split", "an output subscript names a reduction iterator")
    pick = next((k for k in concat if _big_enough(mdh.dims[k].static_extent)), None)
    if pick is not None:
        return _concat_split(mdh, pick)
    pick = next((k for k in reds if _big_enough(mdh.dims[k].static_extent)), None)
    if pick is not None:
        return _reduction_split(mdh, pick)
    return RankRefusal("mpi-too-little-work",
                       f"every dimension has fewer than {MIN_SPLIT_EXTENT} points, too little work per rank")


def _sliced(mdh: MdhExpr, k: int) -> tuple[MdhExpr, tuple[Buffer, ...]]:
    """``mdh`` with dim ``k`` over ``[LO, LO + EXTENT)`` and those two among its buffers."""
    d = mdh.dims[k]
    values = {b.name: b.c_value for b in mdh.buffers if b.c_value}
    extra = (Buffer(LO, "long", (), "scalar", c_value=_c_of(d.lower, values)),
             Buffer(EXTENT, "long", (), "scalar", c_value=_c_of(d.extent, values)))
    dims = list(mdh.dims)
    dims[k] = replace(d, lower=Affine.of({LO: 1}), extent=Affine.of({EXTENT: 1}))
    # the whole range, where it is known: the tuner measures the per-rank code on all of it
    params = (*mdh.params, (LO, d.lower.constant if d.lower.is_constant else None),
              (EXTENT, d.extent.constant if d.extent.is_constant else None))
    sliced = replace(mdh, name=f"{mdh.name}_rank", dims=tuple(dims), buffers=(*mdh.buffers, *extra), params=params)
    return sliced, function_params(sliced)


def row_elems(buf: Buffer, nsubs: int) -> str | None:
    """Elements per row of the outermost subscript, as C text; ``None`` when unknown."""
    if buf.rows_of:
        return f"(long long)({buf.rows_of})" if nsubs == len(buf.shape) else None
    if buf.kind == "pointer":
        return "1" if nsubs == 1 else None
    if buf.kind != "array" or len(buf.shape) != nsubs or any(not s.strip() for s in buf.shape[1:]):
        return None
    return " * ".join(["1", *(f"(long long)({s})" for s in buf.shape[1:])])


def _concat_split(mdh: MdhExpr, k: int) -> RankSplit:
    it = mdh.dims[k].iterator
    others = {d.iterator for d in mdh.dims} - {it}
    gathers: list[Gather] = []
    for o, out in enumerate(mdh.outputs):
        idx = out.access.index
        buf = mdh.buffer(out.access.buffer)
        elems = row_elems(buf, len(idx)) if idx else None
        if (elems is not None and idx[0].coeff(it) == 1 and not (idx[0].names() & others)
                and not any(e.coeff(it) for e in idx[1:])):
            rest = {n: c for n, c in idx[0].terms if n != it}
            gathers.append(Gather(o, True, Affine.of(rest, idx[0].constant), elems))
        else:
            gathers.append(Gather(o, False))
    sliced, params = _sliced(mdh, k)
    return RankSplit(mdh, sliced, k, "concat", params, tuple(gathers))


def _reduction_split(mdh: MdhExpr, k: int) -> RankSplit | RankRefusal:
    op = mdh.reduction_op
    if op is None or op not in MPI_OPS:
        return RankRefusal("mpi-unsupported-reduction", "no MPI operation combines these reductions")
    if mdh.domain:
        return RankRefusal("mpi-non-rectangular", "a non-rectangular reduction is not split over ranks")
    out_names = {o.access.buffer for o in mdh.outputs}
    for out in mdh.outputs:
        if mpi_type(out.elem_type) is None:
            return RankRefusal("mpi-no-datatype", f"no MPI datatype for the output type '{out.elem_type}'")
        if out.finish is not None and any(a.buffer in out_names for a in out.finish.inputs):
            return RankRefusal("mpi-unsupported-reduction", "the stored value reads an output")
    sliced, params = _sliced(mdh, k)
    plain = tuple(replace(o, update="assign", init=None, finish=None) for o in mdh.outputs)
    return RankSplit(mdh, replace(sliced, outputs=plain), k, "reduction", params, op=op)
