"""Conditions on values the nest computes, in a loop run in parallel around its body as written
(``mdpoly.frontend.privatize``, plain): a Monte-Carlo barrier option sets a per-path flag
(``if (s >= barrier) hit = 1;``), a row search keeps the first column above a threshold. The
model of the nest's own text reads such a condition as a predicate (``x = c ? e : x``), so the
path and row loops run in parallel; a condition on a value carried from the previous iteration
(a running sum reset at a limit) still keeps its loop sequential. Outputs must match the
original at every team size."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double barrier_call(int npaths, int nsteps, const float *z, float s0, float barrier, float strike)
{
    double payoff = 0.0;
    for (int p = 0; p < npaths; p++) {
        float s = s0;
        int hit = 0;
        for (int t = 0; t < nsteps; t++) {
            s *= expf(0.0001f + 0.02f * z[(long)p * nsteps + t]);
            if (s >= barrier)
                hit = 1;
        }
        if (!hit && s > strike)
            payoff += s - strike;
    }
    return payoff / npaths;
}

static void first_above(int n, int m, const float *a, float limit, int *first, float *total)
{
    for (int i = 0; i < n; i++) {
        int found = -1;
        float sum = 0.0f;
        for (int j = 0; j < m; j++) {
            sum += a[i * m + j];
            if (found < 0 && sum > limit)
                found = j;
        }
        first[i] = found;
        total[i] = sum;
    }
}

static void reset_sums(int n, const float *x, float *y, float limit)
{
    float acc = 0.0f;
    for (int i = 0; i < n; i++) {
        if (acc > limit)
            acc = 0.0f;
        acc += x[i];
        y[i] = acc;
    }
}

int main(int argc, char **argv)
{
    int np = atoi(argv[1]), ns = atoi(argv[2]);
    float *z = malloc(sizeof(float) * np * ns), *t = malloc(sizeof(float) * np * ns);
    int *first = malloc(sizeof(int) * np);
    unsigned r = 99u;
    for (long k = 0; k < (long)np * ns; k++) {
        r = r * 1664525u + 1013904223u;
        z[k] = (float)(r >> 8) / 8388608.0f - 1.0f;
    }
    double price = barrier_call(np, ns, z, 100.0f, 104.0f, 100.5f);
    first_above(np, ns, z, 2.0f, first, t);
    reset_sums(np * ns, z, t, 3.0f);
    long fs = 0;
    double ts = 0.0;
    for (int i = 0; i < np; i++) fs += (long)first[i] * (i % 5 + 1);
    for (long k = 0; k < (long)np * ns; k++) ts += t[k] * (double)(k % 3 + 1);
    printf("price %.6e\nfirst %ld\ntotal %.6e\n", price, fs, ts);
    return 0;
}
"""

QUIET = {"MDP_LOADAVG": '"/nonexistent/loadavg"'}


def _run(exe: Path, args: list[str], threads: int) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    return subprocess.run([str(exe), *args], check=True, capture_output=True, text=True, env=env).stdout


def test_loops_with_data_conditions_run_in_parallel_and_agree(tmp_path: Path) -> None:
    src = tmp_path / "cond.c"
    src.write_text(PROGRAM)
    out = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out), "--no-tune"], env=child_env())
    assert re.search(r"cond\.c:9:5: remark: loop nest scheduled: \[p:\+\+ private-body\]", proc.stderr), proc.stderr
    assert re.search(r"cond\.c:25:5: remark: loop nest scheduled: \[i:\+\+ private-body\]", proc.stderr), proc.stderr
    assert re.search(r"cond\.c:4[12]:\d+: note: loop nest kept sequential", proc.stderr), proc.stderr
    reference = build_c(src, tmp_path / "seq", {}, openmp=False, opt="-O2")
    parallel = build_c(out, tmp_path / "par", QUIET, openmp=True, opt="-O2")
    for args in (["4000", "60"], ["7", "3"], ["1", "1"]):
        want = _run(reference, args, 1)
        for threads in (1, 2, 3):
            mismatch = compare_outputs(want, _run(parallel, args, threads), rtol=1e-6, atol=1e-9)
            assert mismatch is None, f"{args}, {threads} threads: {mismatch}"
