"""Loops with a run-time step (``frontend/normalize/runtime_steps.py``): an FFT's butterfly stage
``for (i = 0; i < n; i += len) for (k = 0; k < len / 2; k++)`` over complex structs runs with both
loops parallel inside the sequential stage loop, a strided scale ``i += s`` and an inclusive bound
``i <= n`` run in parallel; a step the body changes stays as written. Outputs equal the original's
at 1 and 3 threads, also for steps that do not divide the extent."""

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
typedef struct { double re, im; } cpx;

static void stages(cpx *a, int n)
{
    for (int len = 2; len <= n; len <<= 1) {                        /* MARK fft */
        double ang = -2.0 * 3.14159265358979 / len;
        for (int i = 0; i < n; i += len)
            for (int k = 0; k < len / 2; k++) {
                cpx w = {cos(ang * k), sin(ang * k)};
                cpx u = a[i + k];
                cpx v;
                v.re = a[i + k + len / 2].re * w.re - a[i + k + len / 2].im * w.im;
                v.im = a[i + k + len / 2].re * w.im + a[i + k + len / 2].im * w.re;
                a[i + k].re = u.re + v.re;
                a[i + k].im = u.im + v.im;
                a[i + k + len / 2].re = u.re - v.re;
                a[i + k + len / 2].im = u.im - v.im;
            }
    }
}

static void strided(float *x, int n, int s)
{
    for (int i = 0; i < n; i += s)                                  /* MARK strided */
        x[i] = 2.0f * x[i] + 1.0f;
}

static void inclusive(float *x, int lo, int hi, int s)
{
    for (int i = lo; i <= hi; i += s)                               /* MARK inclusive */
        x[i] -= 0.5f;
}

static void changing(float *x, int n, int s)
{
    for (int i = 0; i < n; i += s) {                                /* MARK changing */
        x[i] += 1.0f;
        s = s % 3 + 1;
    }
}

int main(int argc, char **argv)
{
    int logn = atoi(argv[1]), n = 1 << logn, s = atoi(argv[2]);
    cpx *a = malloc(sizeof(cpx) * n);
    float *x = malloc(sizeof(float) * (n + 1));
    for (int i = 0; i < n; i++) { a[i].re = sin(0.01 * i); a[i].im = cos(0.003 * i); x[i] = (float)(i % 9); }
    x[n] = 1.0f;
    stages(a, n);
    strided(x, n, s);
    inclusive(x, 1, n, s + 1);
    changing(x, n, s);
    double t = 0.0;
    for (int i = 0; i < n; i++) t += fabs(a[i].re) + 2.0 * fabs(a[i].im) + x[i] * (i % 4 + 1);
    printf("%.9e\n", t + x[n]);
    return 0;
}
"""


def test_runtime_steps(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "steps.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t)
            for k in ("fft", "strided", "inclusive", "changing")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    assert re.search(rf"steps\.c:{line['fft']}:5: remark: loop nest scheduled: len:seq\{{ \[i:\+\+ k:\+\+ private-body\] \}}",
                     err), err
    for k in ("strided", "inclusive"):
        assert re.search(rf"steps\.c:{line[k]}:5: remark: loop nest parallelized: i:\+\+", err), (k, err)
    assert not re.search(rf"steps\.c:{line['changing']}:5: remark", err), err
    assert "mdp_step" not in err.split("remark")[0], err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for args in (["16", "3"], ["10", "1"], ["3", "5"], ["0", "2"]):
        want = _run(orig, args, None)[0]
        for threads in (1, 3):
            mismatch = compare_outputs(want, _run(par, args, threads)[0], rtol=1e-9, atol=1e-9)
            assert mismatch is None, (args, threads, mismatch)
