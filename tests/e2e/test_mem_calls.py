"""``memset``/``memcpy`` of whole elements in loop bodies (``frontend/normalize/mem_calls.py``):
a row copy, a per-row accumulator cleared through a local pointer (``memset(acc, 0, m * sizeof
*acc)``) and a cleared slice (``&a[i * m]``) become element loops and run in parallel; a fill
with another byte value and a copy between different element types stay calls, the nest as
written with the reason. Outputs equal the original's at 1 and 3 threads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step
from test_cost_guard import NO_LOADAVG
from test_row_pointer_writes import _run

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void rows_copy(float *dst, const float *src, int h, int w)
{
    for (int y = 0; y < h; y++)                                     /* MARK copy */
        memcpy(dst + (size_t)y * w, src + (size_t)y * w, sizeof(float) * w);
}

static void row_sums(double *out, const float *in, int h, int w, int m)
{
    for (int y = 0; y < h; y++) {                                   /* MARK sums */
        double *acc = out + y * m;
        memset(acc, 0, m * sizeof *acc);
        for (int k = 0; k < m; k++)
            for (int x = 0; x < w; x++)
                acc[k] += in[y * w + x] * (double)(k + 1);
    }
}

static void clear_slices(int *a, int n, int m)
{
    for (int i = 0; i < n; i += 2)                                  /* MARK slices */
        memset(&a[i * m], 0, sizeof(int) * m);
}

static void fill_ones(unsigned char *a, int n, int m)
{
    for (int i = 0; i < n; i++)                                     /* MARK fill */
        memset(a + i * m, 1, m);
}

int main(int argc, char **argv)
{
    int h = atoi(argv[1]), w = 37, m = 5;
    float *a = malloc(sizeof(float) * h * w), *b = malloc(sizeof(float) * h * w);
    double *s = malloc(sizeof(double) * h * m);
    int *t = malloc(sizeof(int) * h * m);
    unsigned char *u = malloc((size_t)h * m);
    for (int i = 0; i < h * w; i++) a[i] = (float)(i % 11) - 5.0f;
    for (int i = 0; i < h * m; i++) { t[i] = i; s[i] = -1.0; }
    rows_copy(b, a, h, w);
    row_sums(s, b, h, w, m);
    clear_slices(t, h, m);
    fill_ones(u, h, m);
    double z = 0.0;
    for (int i = 0; i < h * w; i++) z += b[i] * (i % 3 + 1);
    for (int i = 0; i < h * m; i++) z += s[i] + 2.0 * t[i] + 3.0 * u[i];
    printf("%.12e\n", z);
    return 0;
}
"""


def test_mem_calls_become_loops(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "mem.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t)
            for k in ("copy", "sums", "slices", "fill")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    assert re.search(rf"mem\.c:{line['copy']}:5: remark: loop nest parallelized: y:\+\+ k:\+\+", err), err
    assert re.search(rf"mem\.c:{line['sums']}:5: remark: loop nest (parallelized|scheduled)", err), err
    assert re.search(rf"mem\.c:{line['fill'] + 1}:9: note: loop nest kept sequential: call to 'memset'", err), err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for n in ("20000", "3", "1"):
        want = _run(orig, [n], None)[0]
        for threads in (1, 3):
            assert compare_outputs(want, _run(par, [n], threads)[0], rtol=1e-12, atol=0.0) is None, (n, threads)
