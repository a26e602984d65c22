"""Assertions in loops (``frontend/assertions.py``, ``scop_statements._check``): ``assert(e)`` as
glibc expands it, and the older ``e ? (void) 0 : __assert_fail(...)`` and musl's
``(void) (e || (__assert_fail(...), 0))`` spelled out, run inside a parallel loop around the body as
written where ``e`` reads nothing the nest writes. Where an assertion holds, outputs equal the
original's at 1 and 3 threads; where one fails, the parallel program aborts with the original's
message (the same function name, also from code mdpoly moved). An assertion that reads what the
nest writes keeps the nest as written, with the reason."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step
from test_cost_guard import NO_LOADAVG
from test_row_pointer_writes import _run

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

static void gather(int n, int m, const int *idx, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {                                   /* MARK gather */
        int j = idx[i];
        assert(j >= 0 && j < m);
        y[i] = 2.0 * x[j];
    }
}

static void row_sums(int n, int m, const double *a, double *s)
{
    for (int i = 0; i < n; i++) {                                   /* MARK rows */
        double t = 0.0;
        for (int j = 0; j < m; j++) {
            ((a[i * m + j] >= 0.0) ? (void) (0) : __assert_fail("a[i * m + j] >= 0.0", "asserts.c", 20, __func__));
            t += a[i * m + j];
        }
        s[i] = t;
    }
}

static void scale(int n, const double *a, double *b, double f)
{
    for (int i = 0; i < n; i++) {                                   /* MARK scale */
        (void) ((f > 0.0) || (__assert_fail("f > 0.0", "asserts.c", 30, __func__), 0));
        b[i] = f * a[i];
    }
}

static void halve(int n, double *a)
{
    for (int i = 1; i < n; i++) {                                   /* MARK halve */
        assert(a[i - 1] >= 0.0);
        a[i] = 0.5 * a[i];
    }
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]), m = atoi(argv[2]), bad = atoi(argv[3]);
    double f = atof(argv[4]);
    int *idx = malloc(sizeof(int) * (n + 1));
    double *x = malloc(sizeof(double) * (m + 1)), *y = calloc(n + 1, sizeof(double));
    double *a = malloc(sizeof(double) * (4 * n + 1)), *s = calloc(n + 1, sizeof(double));
    double *b = calloc(4 * n + 1, sizeof(double));
    for (int i = 0; i < n; i++) idx[i] = (i * 7) % m;
    if (bad >= 0 && bad < n) idx[bad] = m + 3;
    for (int i = 0; i < m; i++) x[i] = i * 0.5;
    for (int i = 0; i < 4 * n; i++) a[i] = (i % 11) * 0.25;
    gather(n, m, idx, x, y);
    row_sums(n, 4, a, s);
    scale(4 * n, a, b, f);
    halve(n, a);
    double t = 0.0;
    for (int i = 0; i < n; i++) t += y[i] + s[i] + a[i] + b[i];
    printf("%.9e\n", t);
    return 0;
}
"""


def _abort(exe: Path, args: list[str], threads: int | None) -> tuple[int, str]:
    env = dict(os.environ, **({"OMP_NUM_THREADS": str(threads)} if threads else {}))
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=120)
    message = re.sub(r"^\S+: ", "", proc.stderr.strip().splitlines()[-1]) if proc.stderr.strip() else ""
    return proc.returncode, message


def test_assertions(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "asserts.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t)
            for k in ("gather", "rows", "scale", "halve")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    for k in ("gather", "rows", "scale"):
        assert re.search(rf"asserts\.c:{line[k]}:5: remark: loop nest scheduled: \[i:\+\+ private-body\]", err), (k, err)
    assert re.search(rf"asserts\.c:{line['halve'] + 1}:\d+: note: loop nest kept sequential: the assertion "
                     r"'a\[i - 1\] >= 0\.0'", err), err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for args in (["200000", "1000", "-1", "1.5"], ["1", "3", "-1", "2.0"], ["0", "5", "-1", "1.0"]):
        want = _run(orig, args, None)[0]
        for threads in (1, 3):
            assert _run(par, args, threads)[0] == want, (args, threads)
    for args in (["200000", "1000", "150000", "1.5"], ["200000", "1000", "-1", "-1.0"]):
        rc, message = _abort(orig, args, None)
        assert rc != 0 and "Assertion" in message, (args, rc, message)
        for threads in (1, 3):
            assert _abort(par, args, threads) == (rc, message), (args, threads)
