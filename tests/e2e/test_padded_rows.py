"""Grids padded with halo cells, indexed ``u[j * (nx + 2) + i]`` (written out or through a macro
``IDX(i, j)``), and in 3-D ``u[(k * (ny + 2) + j) * (nx + 2) + i]``: the row length is a sum of a
size and a constant, a size parameter of its own in the model (``mdp_sum_nxp2``). Expanded, the
subscript read as element ``[j][2*j + i]`` of rows of ``nx``, and the generated code's run-time
precondition held only for grids of no rows: it never ran, although the remark said
"parallelized". Now each sweep must run in parallel (a team per call, counted by a preloaded
``GOMP_parallel`` counter) and print what the original prints. A diagonal read ``a[i * (n + 1)]``
beside ``a[i * n + j]`` fits no view with rows of ``n + 1``: it is modelled as before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step
from test_cost_guard import NO_LOADAVG, _counter
from test_row_pointer_writes import _run

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#define IDX(i, j) ((j) * (nx + 2) + (i))

static void sweep2(int nx, int ny, const double *u, double *un)
{
    for (int j = 1; j <= ny; j++)
        for (int i = 1; i <= nx; i++)
            un[j * (nx + 2) + i] = 0.25 * (u[j * (nx + 2) + i - 1] + u[j * (nx + 2) + i + 1]
                                          + u[(j - 1) * (nx + 2) + i] + u[(j + 1) * (nx + 2) + i]);
}

static void sweep2m(int nx, int ny, const double *u, double *un)
{
    for (int j = 1; j <= ny; j++)
        for (int i = 1; i <= nx; i++)
            un[IDX(i, j)] = 0.5 * u[IDX(i, j)] + 0.125 * (u[IDX(i - 1, j)] + u[IDX(i + 1, j)] + u[IDX(i, j - 1)] + u[IDX(i, j + 1)]);
}

static void sweep3(int nx, int ny, int nz, const float *u, float *un)
{
    for (int k = 1; k <= nz; k++)
        for (int j = 1; j <= ny; j++)
            for (int i = 1; i <= nx; i++)
                un[(k * (ny + 2) + j) * (nx + 2) + i] = (u[(k * (ny + 2) + j) * (nx + 2) + i - 1] + u[(k * (ny + 2) + j) * (nx + 2) + i + 1]
                    + u[(k * (ny + 2) + j - 1) * (nx + 2) + i] + u[(k * (ny + 2) + j + 1) * (nx + 2) + i]
                    + u[((k - 1) * (ny + 2) + j) * (nx + 2) + i] + u[((k + 1) * (ny + 2) + j) * (nx + 2) + i]) / 6.0f;
}

static void even_rows(int nx, int ny, const double *u, double *w)
{
    for (int j = 0; j < ny / 2; j++)   /* rows of 2 * (nx + 2): a parameter made of a made one */
        for (int i = 0; i < nx + 2; i++)
            w[j * (nx + 2) + i] = u[(2 * j) * (nx + 2) + i] - u[(2 * j + 1) * (nx + 2) + i];
}

static void scale_by_diagonal(int n, double *a, const double *b)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            a[i * n + j] = b[i * n + j] * a[i * (n + 1)];
}

int main(int argc, char **argv)
{
    int nx = atoi(argv[1]), ny = atoi(argv[2]), nz = atoi(argv[3]);
    size_t n2 = (size_t)(nx + 2) * (ny + 2), n3 = n2 * (nz + 2);
    double *u = malloc(n2 * sizeof *u), *v = malloc(n2 * sizeof *v);
    float *f = malloc(n3 * sizeof *f), *g = malloc(n3 * sizeof *g);
    for (size_t p = 0; p < n2; p++) { u[p] = (double)((p * 7919) % 1000) / 100.0; v[p] = 0.0; }
    for (size_t p = 0; p < n3; p++) { f[p] = (float)((p * 104729) % 997) / 97.0f; g[p] = 0.0f; }
    for (int s = 0; s < 4; s++) {
        sweep2(nx, ny, u, v);
        sweep2m(nx, ny, v, u);
        sweep3(nx, ny, nz, s % 2 ? g : f, s % 2 ? f : g);
    }
    even_rows(nx, ny, u, v);
    int n = nx < ny ? nx : ny;
    scale_by_diagonal(n, v, u);
    double su = 0.0, sv = 0.0, sf = 0.0;
    for (size_t p = 0; p < n2; p++) { su += u[p] * (double)(p % 13 + 1); sv += v[p] * (double)(p % 7 + 1); }
    for (size_t p = 0; p < n3; p++) sf += f[p] * (double)(p % 11 + 1);
    printf("%.15e %.15e %.9e\n", su, sv, sf);
    return 0;
}
"""


def test_padded_grids_run_in_parallel_and_agree(tmp_path: Path) -> None:
    src = tmp_path / "halo.c"
    src.write_text(PROGRAM)
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    for line in (8, 16, 23):
        assert re.search(rf"halo\.c:{line}:\d+: remark: loop nest parallelized", proc.stderr), proc.stderr
    orig = build_c(src, tmp_path / "orig", {}, openmp=False, opt="-O3")
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True, opt="-O3")
    lib = _counter(tmp_path)
    for dims in (("300", "200", "40"), ("5", "3", "2"), ("1", "1", "1")):
        want = _run(orig, list(dims), None)[0]
        for threads in (1, 3):
            got, regions = _run(par, list(dims), threads, lib)
            mismatch = compare_outputs(want, got, rtol=1e-9, atol=0.0)   # the checksums are reductions too
            assert mismatch is None, f"{dims}, {threads} threads: {mismatch}"
            if threads == 3 and dims[0] == "300":
                assert regions >= 12, f"{regions} parallel regions: the sweeps ran as written"
