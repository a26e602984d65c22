"""Writes through row pointers (``double **v; v[i][j] = ...``): the nest runs in parallel where the
rows prove disjoint at run time, and as written otherwise.

The program lays its rows out as its first argument says -- one allocation per row, row pointers
into one block forwards or backwards, a shuffled block, rows that overlap, every row the same,
and the output rows the input's (an update in place) -- and runs a 5-point step through them.
Each layout's output must equal the original program's at 1 and 3 threads, and a preloaded
counter of libgomp's ``GOMP_parallel`` (the one in ``test_cost_guard``) tells which side ran:
parallel teams for the disjoint layouts, none for the others.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step
from test_cost_guard import NO_LOADAVG, _counter

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* one step of a 5-point smoother from the rows of u into the rows of v */
static void smooth(int n, int m, double **u, double **v, double w)
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < m - 1; j++)
            v[i][j] = (1.0 - w) * u[i][j] + 0.25 * w * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
}

static double **rows(const char *layout, int n, int m, double *block)
{
    double **g = malloc(n * sizeof *g);
    for (int i = 0; i < n; i++) {
        if (!strcmp(layout, "malloc"))
            g[i] = calloc(m, sizeof **g);
        else if (!strcmp(layout, "block"))
            g[i] = block + (long)i * m;
        else if (!strcmp(layout, "reverse"))
            g[i] = block + (long)(n - 1 - i) * m;
        else if (!strcmp(layout, "shuffled"))
            g[i] = block + (long)((i * 7) % n) * m;       /* n not a multiple of 7: a permutation */
        else if (!strcmp(layout, "overlap"))
            g[i] = block + (long)i * (m / 2);
        else
            g[i] = block;                                 /* "same": every row the same memory */
    }
    return g;
}

int main(int argc, char **argv)
{
    const char *layout = argv[1];
    int n = atoi(argv[2]), m = atoi(argv[3]), steps = 3;
    double *ublock = calloc((size_t)n * m + 1, sizeof *ublock), *vblock = calloc((size_t)n * m + 1, sizeof *vblock);
    double **u = rows(strcmp(layout, "malloc") ? "block" : "malloc", n, m, ublock);
    double **v = !strcmp(layout, "inplace") ? u : rows(layout, n, m, vblock);
    unsigned seed = 12345u;   /* the fill and the checksum are sequential: only the steps count */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            seed = seed * 1103515245u + 12345u;
            u[i][j] = (double)(seed >> 16 & 1023u) / 64.0 - 8.0;
        }
    for (int s = 0; s < steps; s++)
        smooth(n, m, u, v, 0.5 + 0.1 * s);
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            sum = 0.999 * sum + v[i][j] * ((i + 2 * j) % 5 + 1);
    printf("%.17g\n", sum);
    return 0;
}
"""

#: layout -> whether the parallel side may run (its rows are disjoint and in address order)
LAYOUTS = {"malloc": True, "block": True, "reverse": True, "shuffled": False, "overlap": False,
           "same": False, "inplace": False}


def _run(exe: Path, args: list[str], threads: int | None, lib: Path | None = None) -> tuple[str, int]:
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    if lib is not None:
        env["LD_PRELOAD"] = str(lib)
    proc = run_step([str(exe), *args], env=env)
    found = re.search(r"parallel-regions (\d+)", proc.stderr)
    return proc.stdout, int(found.group(1)) if found else -1


def test_row_pointer_writes_run_in_parallel_only_over_disjoint_rows(tmp_path: Path) -> None:
    src = tmp_path / "rows.c"
    src.write_text(PROGRAM)
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    assert re.search(r"rows\.c:\d+:\d+: remark: loop nest parallelized: i:\+\+ j:\+\+", proc.stderr), proc.stderr
    assert "indirect-write" not in proc.stderr, proc.stderr
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    for layout, disjoint in LAYOUTS.items():
        for n, m in ((400, 300), (3, 3), (2, 5)):
            args = [layout, str(n), str(m)]
            want = _run(orig, args, None)[0]
            for threads in (1, 3):
                got, regions = _run(par, args, threads, lib)
                assert got == want, f"{layout} {n}x{m}, {threads} threads"
                if threads == 3 and n == 400:
                    assert regions == (3 if disjoint else 0), f"{layout}: {regions} parallel regions"
