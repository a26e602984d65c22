"""Alias checks of clamped-neighbour reads (``mdpoly.frontend.alias`` with ``Variable.lazy_rows``):
C source with flat buffers carved from one block -> the generated call runs where the evaluated
reads cannot overlap the written buffer (adjacent buffers, as ``malloc`` places them), the
original where they do; output equal to the sequential build at 1-4 threads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.e2e_harness import build_c, mdpoly_available, run_mdpoly, run_program

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly not importable")

# OFFSET: where the first step's output starts relative to its input, in planes of nx * ny
_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
long par_calls;
static void step(const float *tIn, float *tOut, int nx, int ny, int nz)
{
    int x, y, z;
    for (z = 0; z < nz; z++)
        for (y = 0; y < ny; y++)
            for (x = 0; x < nx; x++) {
                int c = x + y * nx + z * nx * ny;
                int w = (x == 0) ? c : c - 1;
                int e = (x == nx - 1) ? c : c + 1;
                int b = (z == 0) ? c : c - nx * ny;
                int t = (z == nz - 1) ? c : c + nx * ny;
                tOut[c] = 0.5f * tIn[c] + 0.125f * (tIn[w] + tIn[e] + tIn[b] + tIn[t]);
            }
}
int main(void)
{
    int nx = 40, ny = 30, nz = 6, it;
    long plane = (long)nx * ny, size = plane * nz;
    float *blk = malloc((size_t)(4 * size + 4 * plane) * sizeof(float));
    float *a = blk + size + 2 * plane, *b = a + OFFSET * plane, *tmp;
    long i;
    for (i = 0; i < 4 * size + 4 * plane; i++) blk[i] = (float)(i % 17) * 0.25f;
    for (it = 0; it < 4; it++) {
        step(a, b, nx, ny, nz);
        tmp = a; a = b; b = tmp;
    }
    double s = 0.0;
    for (i = 0; i < 4 * size + 4 * plane; i++) s += blk[i] * (double)(i % 7 + 1);
    printf("sum %.9e calls %ld\n", s, par_calls);
    return 0;
}
"""


def _counted(path: Path) -> None:
    """Count the generated call's runs in ``par_calls`` (the parallel side of the guard)."""
    text = path.read_text()
    text, n = re.subn(r"^(\s*)(mdpoly_step_\w+\()", r"\1par_calls++; \2", text, flags=re.M)
    assert n == 1, text
    path.write_text(text)


@pytest.mark.parametrize("offset, parallel", [(6, True), (-6, True), (12, True), (5, False), (1, False), (0, False)])
def test_adjacent_buffers_run_the_call_overlapping_ones_the_original(tmp_path: Path, offset: int,
                                                                     parallel: bool) -> None:
    src = tmp_path / "stencil.c"
    src.write_text(_SOURCE.replace("OFFSET", f"({offset})"))
    seq = run_program(build_c(src, tmp_path / "seq", {}, openmp=False))
    out = tmp_path / "stencil_mdp.c"
    run_mdpoly(src, out, {})
    _counted(out)
    exe = build_c(out, tmp_path / "par", {}, openmp=True)
    want = seq.split(" calls")[0]
    for threads in (1, 2, 3, 4):
        got = run_program(exe, threads=threads)
        assert got.split(" calls")[0] == want, (threads, got, seq)
        assert got.strip().endswith("calls 4" if parallel else "calls 0"), (threads, got)
