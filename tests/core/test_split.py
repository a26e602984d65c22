"""``split_for_ranks``: which dimension ``--mpi`` splits over the ranks, how outputs are gathered,
and what it refuses (hand-built MdhExprs of ``mdh_examples``)."""

from __future__ import annotations

from dataclasses import replace

from mdh_examples import colmax, dot, matmul, matmul_symbolic, mcc

from mdpoly.ir.mdh import Access, Affine
from mdpoly.ir.ranks import EXTENT, LO, RankRefusal, RankSplit
from mdpoly.lower.split import split_for_ranks


def test_outermost_concat_dim_is_split_and_gathered_as_rows() -> None:
    s = split_for_ranks(matmul(40, 50, 60))
    assert isinstance(s, RankSplit) and s.kind == "concat" and s.dim == 0
    assert s.sliced.dims[0].lower == Affine.of({LO: 1}) and s.sliced.dims[0].extent == Affine.of({EXTENT: 1})
    assert s.sliced.dims[1:] == s.original.dims[1:] and s.sliced.name == "mdp_matmul_rank"
    assert [b.name for b in s.params if b.name in (LO, EXTENT)] == [LO, EXTENT]
    assert s.gathers[0].rows and "50" in s.gathers[0].row_elems


def test_sizes_known_only_at_run_time_are_split() -> None:
    s = split_for_ranks(matmul_symbolic())
    assert isinstance(s, RankSplit) and s.kind == "concat" and s.dim == 0


def test_transposed_output_is_packed() -> None:
    m = matmul(40, 50, 60)
    m = replace(m, outputs=(replace(m.outputs[0], access=Access("C", (Affine.of({"j": 1}), Affine.of({"i": 1})))),))
    s = split_for_ranks(m)
    assert isinstance(s, RankSplit) and s.kind == "concat" and not s.gathers[0].rows


def test_short_concat_dims_are_skipped_for_a_longer_one() -> None:
    s = split_for_ranks(mcc(2, 5, 7, 13, 11, 3, 3))
    assert isinstance(s, RankSplit) and s.original.dims[s.dim].iterator == "k" and s.kind == "concat"


def test_a_reduction_is_split_when_no_concat_dim_is_long_enough() -> None:
    s = split_for_ranks(dot(1000))
    assert isinstance(s, RankSplit) and s.kind == "reduction" and s.op is not None
    s = split_for_ranks(matmul(3, 4, 1000, update="assign", init="1.0f"))
    assert isinstance(s, RankSplit) and s.kind == "reduction" and s.original.dims[s.dim].iterator == "k"
    # the start value is applied once, after the ranks' results are combined
    assert s.original.outputs[0].init == "1.0f" and s.sliced.outputs[0].init is None
    assert s.sliced.outputs[0].update == "assign"


def test_max_reduction_keeps_its_concat_split() -> None:
    s = split_for_ranks(colmax(100, 64))
    assert isinstance(s, RankSplit) and s.kind == "concat" and s.original.dims[s.dim].iterator == "j"


def test_too_little_work_and_typedef_outputs_are_refused() -> None:
    r = split_for_ranks(matmul(3, 5, 3))
    assert isinstance(r, RankRefusal) and r.code == "mpi-too-little-work" and "[mpi-too-little-work]" in r.note
    m = dot(1000)
    m = replace(m, outputs=(replace(m.outputs[0], elem_type="real_t"),))
    r = split_for_ranks(m)
    assert isinstance(r, RankRefusal) and r.code == "mpi-no-datatype"
