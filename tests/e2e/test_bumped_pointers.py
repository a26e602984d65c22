"""``while`` loops that bump pointers (``frontend/bumped_pointers.py``): ``while (x < xe) *y++ +=
s * *x++;`` with ``xe = x + n``, and ``while (n-- > 0) *dst++ = ...``, are counted loops and run
in parallel, also one bumping in an ``if``'s condition; one whose pointer is read after it and one
that bumps behind a condition stay as written. Outputs equal the original's at 1 and 3 threads, also for
counts of zero and below."""

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

static void axpy(float *y, const float *x, long n, float s)
{
    const float *xe = x + n;
    while (x < xe)                                                  /* MARK axpy */
        *y++ += s * *x++;
}

static void gain(short *dst, const short *src, int n, int g)
{
    while (n-- > 0)                                                 /* MARK gain */
        *dst++ = (short)((*src++ * g) >> 4);
}

static float *fill_to(float *p, float *e, float v)
{
    while (p < e)                                                   /* MARK live */
        *p++ = v;
    return p;
}

static int count_big(const float *p, int n)
{
    int c = 0;
    const float *e = p + n;
    while (p < e)                                                   /* MARK counted */
        if (*p++ > 1.0f)
            c++;
    return c;
}

static void keep_big(float *d, const float *p, int n)
{
    const float *e = p + n;
    while (p < e) {                                                 /* MARK guarded */
        if (*p > 3.0f)
            *d++ = *p;
        p++;
    }
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    float *a = malloc(sizeof(float) * (n + 1)), *b = malloc(sizeof(float) * (n + 1));
    short *s = malloc(sizeof(short) * (n + 1)), *t = malloc(sizeof(short) * (n + 1));
    for (int i = 0; i <= n; i++) { a[i] = (float)(i % 7); b[i] = (float)(i % 5); s[i] = (short)(i % 100); t[i] = 0; }
    axpy(b, a, n, 2.0f);
    axpy(b, a, -3, 1.0f);
    gain(t, s, n, 3);
    gain(t, s, -2, 5);
    float *end = fill_to(a, a + n / 2, 0.25f);
    int c = count_big(b, n);
    keep_big(b, a, n / 2 + 1);
    double z = 0.0;
    for (int i = 0; i < n; i++) z += b[i] * (i % 3 + 1) + t[i] + a[i];
    printf("%.10e %d %ld\n", z, c, (long)(end - a));
    return 0;
}
"""


def test_bumped_pointer_loops(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "bump.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t)
            for k in ("axpy", "gain", "counted", "live", "guarded")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    for k in ("axpy", "gain"):
        assert re.search(rf"bump\.c:{line[k]}:5: remark: loop nest parallelized: k:\+\+", err), (k, err)
    # the bump in an if's condition runs every trip: a count over k (a reduction)
    assert re.search(rf"bump\.c:{line['counted']}:5: remark: loop nest parallelized: k:\+", err), err
    for k in ("live", "guarded"):
        assert not re.search(rf"bump\.c:{line[k]}:5: remark", err), (k, err)
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for n in ("300000", "5", "1", "0"):
        want = _run(orig, [n], None)[0]
        for threads in (1, 3):
            assert compare_outputs(want, _run(par, [n], threads)[0], rtol=1e-12, atol=0.0) is None, (n, threads)
