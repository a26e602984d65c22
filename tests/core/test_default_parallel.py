"""``default_params`` on nests whose extents are known only at run time: MdhExpr -> parallel dims
and split chunks that feed a team when any one extent is short; the lowered code compiled and
compared with a reference loop at 1-3 threads (``harness.run_differential``)."""

from __future__ import annotations

from pathlib import Path

import mdh_examples as E
import pytest
from harness import run_differential

from mdpoly.backends.openmp import OpenMPBackend
from mdpoly.lower import check_plan, default_params, lower

BACKEND = OpenMPBackend()


def test_every_tiled_dim_of_run_time_extent_is_parallel() -> None:
    p = default_params(E.stencil3d_symbolic(), BACKEND.caps)
    assert p.vector_dim == 2
    assert p.parallel_dims == (0, 1)  # z alone: one chunk when nz is under its tile


def test_a_split_over_a_run_time_extent_with_loops_inside_takes_one_point_per_chunk() -> None:
    p = default_params(E.sum3d_symbolic(), BACKEND.caps)
    assert p.split_dim == 0 and p.tiles[0] == (1,)


@pytest.mark.parametrize("nz,ny,nx", [(3, 70, 33), (1, 1, 2), (130, 2, 5)])
def test_stencil3d_symbolic_runs_right(tmp_path: Path, nz: int, ny: int, nx: int) -> None:
    mdh = E.stencil3d_symbolic()
    plan = lower(mdh, default_params(mdh, BACKEND.caps))
    check_plan(plan)
    ref = ("for (long z = 0; z < nz; z++) for (long y = 0; y < ny; y++) for (long x = 0; x < nx - 1; x++)"
           " B[z][y][x] = A[z][y][x] + 2 * A[z][y][x + 1];")
    run_differential(tmp_path, plan, BACKEND.render(plan), ref, {"A": (nz, ny, nx), "B": (nz, ny, nx)},
                     {"nz": str(nz), "ny": str(ny), "nx": str(nx)})


@pytest.mark.parametrize("nz,ny,nx", [(3, 70, 33), (1, 1, 1), (300, 2, 3)])
def test_sum3d_symbolic_runs_right(tmp_path: Path, nz: int, ny: int, nx: int) -> None:
    mdh = E.sum3d_symbolic()
    plan = lower(mdh, default_params(mdh, BACKEND.caps))
    check_plan(plan)
    ref = ("S[0] = 0.0; for (long z = 0; z < nz; z++) for (long y = 0; y < ny; y++) for (long x = 0; x < nx; x++)"
           " S[0] += A[z][y][x];")
    run_differential(tmp_path, plan, BACKEND.render(plan), ref, {"A": (nz, ny, nx), "S": (1,)},
                     {"nz": str(nz), "ny": str(ny), "nx": str(nx)})
