"""Quotients of size parameters in loop bounds (``frontend/scop_exprs.NestExprs._quotient_parameter``):
a quantizer's ``for (g = 0; g < n / gs; g++)`` over groups of a run-time size runs its groups in
parallel (it was refused as a non-affine bound); two quotients spelled alike (``(n - 1) / 2`` and
``(n + 1) / 2``) stay two parameters; an inner bound ``k / d`` whose divisor is zero where the
outer loop runs no iteration does not trap. Outputs equal the original's at 1 and 3 threads."""

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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void quantize(int n, int gs, const float *x, signed char *q, float *s)
{
    for (int g = 0; g < n / gs; g++) {                              /* MARK quantize */
        float wmax = 0.0f;
        for (int i = 0; i < gs; i++) {
            float v = fabsf(x[g * gs + i]);
            if (v > wmax) wmax = v;
        }
        float scale = wmax / 127.0f;
        s[g] = scale;
        for (int i = 0; i < gs; i++)
            q[g * gs + i] = (signed char) roundf(x[g * gs + i] / scale);
    }
}

static void halves(int n, float *a, float *b)
{
    for (int i = 0; i < (n - 1) / 2; i++) {                         /* MARK halves */
        a[i] += 1.0f;
        for (int j = 0; j < (n + 1) / 2; j++)
            b[i * n + j] += (float) j;
    }
}

static void inner(int m, int k, int d, float *c)
{
    for (int i = 0; i < m; i++)                                     /* MARK inner */
        for (int j = 0; j < k / d; j++)
            c[i * k + j] = 0.5f * c[i * k + j] + (float) i;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]), gs = atoi(argv[2]), m = atoi(argv[3]), d = atoi(argv[4]);
    float *x = malloc(sizeof(float) * (n + 1)), *s = malloc(sizeof(float) * (n + 1));
    signed char *q = calloc(n + 1, 1);
    float *a = calloc(n + 1, sizeof(float)), *b = calloc((size_t) n * n + 1, sizeof(float));
    float *c = calloc((size_t) (m + 1) * (n + 1), sizeof(float));
    for (int i = 0; i < n; i++) x[i] = sinf(0.37f * i) * (1.0f + i % 5);
    quantize(n, gs, x, q, s);
    halves(n, a, b);
    inner(m, n, d, c);
    double t = 0.0;
    for (int i = 0; i < n; i++) t += q[i] * (i % 7 + 1) + a[i];
    for (int g = 0; g < n / gs; g++) t += s[g];
    for (long i = 0; i < (long) n * n; i++) t += b[i] * (i % 3);
    for (long i = 0; i < (long) m * n; i++) t += c[i];
    printf("%.9e\n", t);
    return 0;
}
"""


def test_parameter_quotients(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "quot.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t)
            for k in ("quantize", "halves", "inner")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    assert re.search(rf"quot\.c:{line['quantize']}:5: remark: loop nest scheduled: \[g:\+\+ private-body\]", err), err
    assert re.search(rf"quot\.c:{line['halves']}:5: remark: loop nest scheduled: \[i:\+\+ private-body\]", err), err
    assert re.search(rf"quot\.c:{line['inner']}:5: remark: loop nest parallelized: i:\+\+ j:\+\+", err), err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for args in (["4096", "64", "300", "3"], ["1000", "7", "5", "-4"], ["9", "32", "0", "0"], ["33", "1", "2", "1"]):
        want = _run(orig, args, None)[0]
        for threads in (1, 3):
            mismatch = compare_outputs(want, _run(par, args, threads)[0], rtol=1e-6, atol=1e-6)
            assert mismatch is None, (args, threads, mismatch)
