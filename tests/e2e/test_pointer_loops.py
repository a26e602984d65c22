"""Loops over pointers (``frontend/normalize/pointer_loops.py``): ``for (T *p = a; p < a + n;
p++)``, ``p != a + n``, ``p <= end`` through an end pointer declared before the loop, a step of 2,
a pointer loop inside an integer loop (``for (q = row; q < row + w; q++)`` over a row pointer),
become integer loops and run in parallel; a pointer the body moves, a bound the body changes and
one stepped by a run-time amount stay as written. Outputs equal the original's
at 1 and 3 threads."""

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

static void scale(float *a, int n, float s)
{
    for (float *p = a; p < a + n; p++)                              /* MARK scale */
        *p *= s;
}

static void shift(double *dst, const double *src, int n)
{
    const double *end = src + n - 1;
    for (const double *q = src; q <= end; ++q)                      /* MARK shift */
        dst[q - src] = 0.5 * (q[0] + q[1]);
}

static void evens(int *a, int n)
{
    for (int *p = a; p < a + n; p += 2)                             /* MARK evens */
        *p = -*p;
}

static void rows(float *img, int h, int w)
{
    for (int y = 0; y < h; y++) {                                   /* MARK rows */
        float *row = img + y * w;
        for (float *q = row; q != row + w; q++)
            *q = 2.0f * *q + 1.0f;
    }
}

static void moved(float *a, int n)
{
    for (float *p = a; p < a + n; p++) {                            /* MARK moved */
        *p += 1.0f;
        if (*p > 100.0f)
            p++;
    }
}

static void shrinking(float *a, int n)
{
    for (float *p = a; p < a + n; p++) {                            /* MARK shrinking */
        *p += 2.0f;
        n--;
    }
}

static void strided(float *a, int n, int s)
{
    for (float *p = a; p < a + n; p += s)                           /* MARK strided */
        *p *= 3.0f;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
    double *x = malloc(sizeof(double) * (n + 1)), *y = malloc(sizeof(double) * (n + 1));
    int *c = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) { a[i] = (float)(i % 13); b[i] = (float)(i % 7) * 30.0f; c[i] = i % 9; }
    for (int i = 0; i <= n; i++) { x[i] = (double)(i % 11); y[i] = 0.0; }
    scale(a, n, 0.5f);
    shift(y, x, n);
    evens(c, n);
    rows(a, n / 8, 8);
    moved(b, n);
    shrinking(b, n);
    strided(b, n, 3);
    double s = 0.0;
    for (int i = 0; i < n; i++) s += a[i] * (i % 3 + 1) + b[i] + y[i] + c[i];
    printf("%.10e\n", s);
    return 0;
}
"""


def test_pointer_loops(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "ptr.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t)
            for k in ("scale", "shift", "evens", "rows", "moved", "shrinking", "strided")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    assert re.search(rf"ptr\.c:{line['scale']}:5: remark: loop nest parallelized: p:\+\+", err), err
    assert re.search(rf"ptr\.c:{line['shift']}:5: remark: loop nest parallelized: q:\+\+", err), err
    assert re.search(rf"ptr\.c:{line['evens']}:5: remark: loop nest parallelized: p:\+\+", err), err
    assert re.search(rf"ptr\.c:{line['rows']}:5: remark: loop nest parallelized: y:\+\+ q:\+\+", err), err
    for k in ("moved", "shrinking", "strided"):
        assert not re.search(rf"ptr\.c:{line[k]}:5: remark", err), (k, err)
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for n in ("400000", "9", "1"):
        want = _run(orig, [n], None)[0]
        for threads in (1, 3):
            assert compare_outputs(want, _run(par, [n], threads)[0], rtol=1e-12, atol=0.0) is None, (n, threads)
