"""The 9-iteration loops inside a lattice sweep get no run-time check on every cell (issue 22:
such checks made a lattice-Boltzmann program 7 % slower than sequential at 2 and 16 threads):
the sweep itself is one parallel loop behind the inspection of its wrapped gathers
(``mdpoly.frontend.inspector``), and the small loops run as written inside each cell."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import mdpoly_available
from usability_harness import assert_same_as_sequential, mdpoly, statuses

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <stdio.h>
#define Q 9
static const int cx[Q] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
static const int opp[Q] = {0, 3, 4, 1, 2, 7, 8, 5, 6};
static void collide(int nx, int ny, const unsigned char *solid, const float *fin, float *fout)
{
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            int c = y * nx + x;
            float f[Q];
            for (int q = 0; q < Q; q++) {
                int xs = x - cx[q];
                xs = xs < 0 ? xs + nx : (xs >= nx ? xs - nx : xs);
                f[q] = fin[(y * nx + xs) * Q + q];
            }
            if (solid[c]) {
                for (int q = 0; q < Q; q++)
                    fout[c * Q + q] = f[opp[q]];
            } else {
                for (int q = 0; q < Q; q++)
                    fout[c * Q + q] = 0.5f * f[q];
            }
        }
}
int main(void)
{
    enum { NX = 40, NY = 30 };
    static float fin[NX * NY * Q], fout[NX * NY * Q];
    static unsigned char solid[NX * NY];
    for (int i = 0; i < NX * NY * Q; i++) fin[i] = (float)(i % 17) * 0.25f;
    for (int i = 0; i < NX * NY; i++) solid[i] = i % 5 == 0;
    collide(NX, NY, solid, fin, fout);
    double s = 0.0;
    for (int i = 0; i < NX * NY * Q; i++) s += fout[i] * (double)(i % 7 + 1);
    printf("%.6f\n", s);
    return 0;
}
"""


def test_small_loops_inside_a_parallel_sweep_have_no_run_time_check(tmp_path: Path) -> None:
    src = tmp_path / "lattice.c"
    src.write_text(PROGRAM)
    out = tmp_path / "out.c"
    done = mdpoly(src, out)
    assert done.returncode == 0, done.stderr
    got = statuses(out)
    assert got[8] == ("transformed", None) and 18 not in got and 21 not in got, got
    collide = out.read_text().split("static void collide")[1].split("int main")[0]
    # one region inspects the gathers, one runs the sweep: nothing inside a cell
    assert collide.count("#pragma omp parallel for") == 2, collide
    assert collide.count("long mdp_ins_lo_fin ") == 1, collide
    assert_same_as_sequential(src, out, tmp_path, threads=(1, 2))
