"""Helpers with loops called in hot loops (``frontend/normalize/loop_helpers.py``): a dot product
``y[i] = dot(&A[i*n], x, n)``, a squared distance in a k-means argmin
``float d = dist2(&pts[i*dim], &cent[c*dim], dim); if (d < best) ...``, a norm in an ``if``
condition, a helper counting its scalar parameter down (``while (n-- > 0)``), and one calling a
pure expression helper. Each call is expanded in place (parameters as locals set to the
arguments, the body's names prefixed, ``return e;`` as a local), so the nests are modelled:
the matvec is one computation ``i:++ k:+``, the argmin a parallel loop around its body (the
count-down's ``n--`` in a ``while`` condition still keeps its loop as written). The
program must print what the original prints, at 1 and 3 threads, and for sizes down to one.
Helpers that write through a pointer or to a global, or return early, stay calls (the nest as
written, ``side-effect-call``).
"""

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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
int calls;
static inline float sq(float v) { return v * v; }
static inline float dot(const float *a, const float *b, int n)
{
    float s = 0.0f;
    for (int k = 0; k < n; k++)
        s += a[k] * b[k];
    return s;
}
static float dist2(const float *p, const float *q, int d)
{
    float s = 0.0f;
    for (int k = 0; k < d; k++)
        s += sq(p[k] - q[k]);
    return s;
}
static double norm_down(const double *v, int n)
{
    double s = 0.0;
    while (n-- > 0)
        s += v[n] * v[n];
    return sqrt(s);
}
static float dot_counted(const float *a, const float *b, int n)
{
    float s = 0.0f;
    calls++;
    for (int k = 0; k < n; k++)
        s += a[k] * b[k];
    return s;
}
static void normalize(float *v, int n)
{
    float s = 0.0f;
    for (int k = 0; k < n; k++)
        s += v[k] * v[k];
    for (int k = 0; k < n; k++)
        v[k] /= s > 0.0f ? sqrtf(s) : 1.0f;
}
int main(int argc, char **argv)
{
    int m = atoi(argv[1]), n = atoi(argv[2]), k = 5, dim = 3;
    float *A = malloc(sizeof(float) * m * n), *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * m);
    float *pts = malloc(sizeof(float) * m * dim), *cent = malloc(sizeof(float) * k * dim), *z = malloc(sizeof(float) * m);
    double *rows = malloc(sizeof(double) * m * n);
    int *label = malloc(sizeof(int) * m), *big = malloc(sizeof(int) * m);
    for (int i = 0; i < m * n; i++) { A[i] = (float)(i % 7) * 0.5f; rows[i] = (double)(i % 5) - 2.0; }
    for (int i = 0; i < n; i++) x[i] = (float)(i % 3) * 0.25f;
    for (int i = 0; i < m * dim; i++) pts[i] = (float)((i * 37) % 101) / 10.0f;
    for (int i = 0; i < k * dim; i++) cent[i] = (float)((i * 13) % 97) / 10.0f;
    for (int i = 0; i < m; i++)
        y[i] = dot(&A[(size_t)i * n], x, n);
    for (int i = 0; i < m; i++) {
        int bestc = 0;
        float best = dist2(&pts[i * dim], cent, dim);
        for (int c = 1; c < k; c++) {
            float d = dist2(&pts[i * dim], &cent[c * dim], dim);
            if (d < best) { best = d; bestc = c; }
        }
        label[i] = bestc;
    }
    for (int i = 0; i < m; i++) {
        if (norm_down(&rows[(size_t)i * n], n) > 1.5 * sqrt((double)n))
            big[i] = 1;
        else
            big[i] = 0;
    }
    for (int i = 0; i < m; i++)
        z[i] = dot_counted(&A[(size_t)i * n], x, n);
    normalize(x, n);
    double sy = 0.0, sz = 0.0;
    long sl = 0, sb = 0;
    for (int i = 0; i < m; i++) { sy += y[i] * (i % 7 + 1); sz += z[i]; sl += label[i] * (i % 5 + 1); sb += big[i]; }
    printf("%.9e %.9e %ld %ld %d %.6f\n", sy, sz, sl, sb, calls, x[n - 1]);
    return 0;
}
"""


def test_loop_helpers_are_expanded_and_agree(tmp_path: Path) -> None:
    src = tmp_path / "helpers.c"
    src.write_text(PROGRAM)
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    err = proc.stderr
    assert re.search(r"helpers\.c:55:5: remark: loop nest parallelized: i:\+\+ k:\+", err), err
    assert re.search(r"helpers\.c:57:5: remark: loop nest scheduled: \[i:\+\+ private-body\]", err), err
    assert "helpers.c:73:16: note: loop nest kept sequential: call to 'dot_counted': it writes the global 'calls'" in err, err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    for m, n in (("3000", "200"), ("1", "1"), ("2", "3"), ("7", "1")):
        want = _run(orig, [m, n], None)[0]
        for threads in (1, 3):
            got, regions = _run(par, [m, n], threads, lib)
            mismatch = compare_outputs(want, got, rtol=1e-5, atol=0.0)   # sums in another order
            assert mismatch is None, f"{m}x{n}, {threads} threads: {mismatch}"
            if threads == 3 and m == "3000":
                assert regions >= 3, f"{regions} parallel regions"
