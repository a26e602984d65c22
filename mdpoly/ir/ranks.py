"""The rank-split IR of ``--mpi``: ``RankSplit`` (one computation split over MPI ranks) or ``RankRefusal``.

Produced by ``mdpoly.lower.split.split_for_ranks(mdh)``, rendered around the target's ordinary
generated code by ``mdpoly.backends.mpi.wrap_for_ranks``. Frozen, like every IR type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from mdpoly.ir.mdh import Affine, Buffer, Combine, MdhExpr

#: Names of the two parameters that carry the split dimension's range into the generated code.
LO = "mdp_mpi_lo"
EXTENT = "mdp_mpi_n"


@dataclass(frozen=True, slots=True)
class Gather:
    """How output ``output`` of a concat split reaches every rank.

    ``rows``: the rank's points are the rows ``row0 + [lo_r, lo_r + n_r)`` of the buffer's
    outermost subscript (``row0``: that subscript with the split iterator taken out), each of
    ``row_elems`` elements (C text), gathered in place. Otherwise packed point by point into a
    contiguous buffer, gathered there and unpacked."""

    output: int
    rows: bool
    row0: Affine = field(default_factory=Affine)
    row_elems: str = "1"


@dataclass(frozen=True, slots=True)
class RankSplit:
    """One computation split over MPI ranks along ``original.dims[dim]``.

    ``original`` is the computation as the call site names it; ``sliced`` is the per-rank
    computation (named ``<name>_rank``), whose ``dim`` runs over ``[LO, LO + EXTENT)`` and, for a
    reduction split, whose outputs are the plain partial results (no start value, no finishing
    expression: those are applied once, after the ranks' results are combined). ``params`` are
    the generated function's parameters (``LO``/``EXTENT`` among them); ``gathers`` one per
    output (concat splits); ``op`` the combine operator (reduction splits).
    """

    original: MdhExpr
    sliced: MdhExpr
    dim: int
    kind: Literal["concat", "reduction"]
    params: tuple[Buffer, ...]
    gathers: tuple[Gather, ...] = ()
    op: Combine | None = None

    @property
    def note(self) -> str:
        d = self.original.dims[self.dim]
        how = ("outputs gathered on every rank (MPI_Allgatherv)" if self.kind == "concat"
               else f"partial results combined with '{self.op.value if self.op else '?'}' (MPI_Allreduce)")
        return f"dimension '{d.iterator}' ({d.combine.value}) split over MPI ranks; {how}"


@dataclass(frozen=True, slots=True)
class RankRefusal:
    """Why a computation is not split: every rank computes all of it (correct, not faster)."""

    code: str
    message: str

    @property
    def note(self) -> str:
        return f"not split over MPI ranks: {self.message} [{self.code}]"
