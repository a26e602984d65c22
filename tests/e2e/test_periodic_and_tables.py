"""Periodic grids and dynamic programming over flat tables, as programs write them.

- A torus: neighbours ``(y + h - 1) % h``, ``(x + 1) % w`` (``mdpoly.frontend.normalize.wraps``
  makes each a select, the select pass two reads, and a row borrowed for ``(y - 1)*w + (w - 1)``
  keeps the view exact, ``frontend.delinearize._borrow_rows``): the generation is one parallel
  computation over ``y, x``, for any grid from 1 x 1 up.
- An alignment score table ``H[i*(m + 1) + j]`` (a padded row length, ``mdp_sum_mp1``) scored
  through a substitution table ``subst[a[i-1]][b[j-1]]`` (a gather from a table the band never
  writes): a tiled wavefront, whose code declares the row length it was modelled with
  (``Wavefront.derived``) and runs as written on a team of one (each point writes its own cell).

Each must print what the sequential original prints, at 1 and 3 threads, and run in parallel
(counted by a preloaded ``GOMP_parallel`` counter) where the work is large enough.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step
from test_cost_guard import NO_LOADAVG, _counter
from test_row_pointer_writes import _run

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

TORUS = r"""
#include <stdio.h>
#include <stdlib.h>
static void generation(const unsigned char *cur, unsigned char *next, int w, int h)
{
    for (int y = 0; y < h; y++) {
        int ym = (y + h - 1) % h, yp = (y + 1) % h;
        for (int x = 0; x < w; x++) {
            int xm = (x - 1 + w) % w, xp = (x + 1) % w;
            int n = cur[ym * w + xm] + cur[ym * w + x] + cur[ym * w + xp] + cur[y * w + xm] + cur[y * w + xp]
                  + cur[yp * w + xm] + cur[yp * w + x] + cur[yp * w + xp];
            next[y * w + x] = n == 3 || (cur[y * w + x] && n == 2);
        }
    }
}
static void diffuse(int n, const double *u, double *v)   /* 1-D ring; the +2 neighbour stays a remainder */
{
    for (int i = 0; i < n; i++)
        v[i] = 0.5 * u[i] + 0.2 * (u[(i + 1) % n] + u[(i + n - 1) % n]) + 0.1 * u[(i + 2) % n];
}
int main(int argc, char **argv)
{
    int w = atoi(argv[1]), h = atoi(argv[2]), gens = 6;
    unsigned char *a = malloc((size_t)w * h), *b = malloc((size_t)w * h);
    double *u = malloc(sizeof(double) * w), *v = malloc(sizeof(double) * w);
    unsigned s = 99;
    for (long i = 0; i < (long)w * h; i++) { s = s * 1103515245u + 12345u; a[i] = (s >> 16) % 3 == 0; }
    for (int i = 0; i < w; i++) u[i] = (double)((i * 37) % 11);
    for (int g = 0; g < gens; g++) {
        generation(a, b, w, h);
        unsigned char *t = a; a = b; b = t;
        diffuse(w, u, v);
        double *q = u; u = v; v = q;
    }
    long alive = 0, weighted = 0;
    for (long i = 0; i < (long)w * h; i++) { alive += a[i]; weighted += a[i] * (i % 13 + 1); }
    double su = 0.0;
    for (int i = 0; i < w; i++) su += u[i] * (i % 7 + 1);
    printf("%ld %ld %.12e\n", alive, weighted, su);
    return 0;
}
"""

ALIGN = r"""
#include <stdio.h>
#include <stdlib.h>
static const int subst[4][4] = {{3, -1, -2, -1}, {-1, 3, -1, -2}, {-2, -1, 3, -1}, {-1, -2, -1, 3}};
static void score(const unsigned char *a, int n, const unsigned char *b, int m, int gap, int *H)
{
    for (int i = 0; i <= n; i++) H[i * (m + 1)] = i * gap;
    for (int j = 0; j <= m; j++) H[j] = j * gap;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= m; j++) {
            int diag = H[(i - 1) * (m + 1) + j - 1] + subst[a[i - 1]][b[j - 1]];
            int up = H[(i - 1) * (m + 1) + j] + gap, left = H[i * (m + 1) + j - 1] + gap;
            int best = diag > up ? diag : up;
            H[i * (m + 1) + j] = best > left ? best : left;
        }
}
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), m = atoi(argv[2]);
    unsigned char *a = malloc(n + 1), *b = malloc(m + 1);
    int *H = malloc(sizeof(int) * (size_t)(n + 1) * (m + 1));
    unsigned s = 5;
    for (int i = 0; i < n; i++) { s = s * 1664525u + 1013904223u; a[i] = (s >> 24) & 3; }
    for (int j = 0; j < m; j++) { s = s * 1664525u + 1013904223u; b[j] = (s >> 24) & 3; }
    score(a, n, b, m, -2, H);
    long sum = 0;
    for (long k = 0; k < (long)(n + 1) * (m + 1); k++) sum += H[k] * (k % 11 + 1);
    printf("%d %ld\n", H[(long)n * (m + 1) + m], sum);
    return 0;
}
"""


def _generate(tmp_path: Path, name: str, text: str) -> tuple[Path, Path, str]:
    src = tmp_path / f"{name}.c"
    src.write_text(text)
    out_c = tmp_path / f"{name}_out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    orig = build_c(src, tmp_path / f"{name}_orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / f"{name}_par", NO_LOADAVG, openmp=True)
    return orig, par, proc.stderr


def test_torus_neighbours_run_in_parallel_and_agree(tmp_path: Path) -> None:
    orig, par, remarks = _generate(tmp_path, "torus", TORUS)
    assert re.search(r"torus\.c:6:5: remark: loop nest parallelized: y:\+\+ x:\+\+", remarks), remarks
    lib = _counter(tmp_path)
    for w, h in ((400, 300), (1, 1), (2, 3), (3, 2), (17, 1)):
        want = _run(orig, [str(w), str(h)], None)[0]
        for threads in (1, 3):
            got, regions = _run(par, [str(w), str(h)], threads, lib)
            assert got == want, f"{w}x{h}, {threads} threads"
            if threads == 3 and w == 400:
                assert regions >= 6, f"{regions} parallel regions: the generations ran as written"


def test_alignment_table_runs_as_a_wavefront_and_agrees(tmp_path: Path) -> None:
    orig, par, remarks = _generate(tmp_path, "align", ALIGN)
    assert re.search(r"align\.c:9:5: remark: loop nest scheduled: \[wavefront i,j tiles \d+x\d+\]; the nest as written "
                     r"runs when the team has one thread", remarks), remarks
    lib = _counter(tmp_path)
    for n, m in ((700, 650), (1, 1), (0, 5), (2, 130), (129, 3)):
        want = _run(orig, [str(n), str(m)], None)[0]
        for threads in (1, 3):
            got, regions = _run(par, [str(n), str(m)], threads, lib)
            assert got == want, f"{n}x{m}, {threads} threads"
            if n == 700:   # a team of one runs the band as written
                assert (regions >= 1) if threads == 3 else (regions == 0), f"{regions} parallel regions, {threads} threads"
