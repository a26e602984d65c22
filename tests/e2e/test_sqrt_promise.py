"""Square roots whose argument is non-negative when a scalar parameter is (issue 22: an n-body
force loop ran 5x slower per thread than the program on gcc 13, which proves
``dx*dx + dy*dy + dz*dz + soft2 >= 0`` only where the caller's literal ``soft2`` is inlined, and
otherwise keeps a library call for errno in the loop).

The generated function runs a copy promising ``soft2 >= 0`` to the compiler when it is, and the
generic copy otherwise. Both copies run here: a softening of 0.01 and one of -0.02, which makes
some arguments negative (NaN forces, counted). Outputs must match the original program at every
team size."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available
from usability_harness import mdpoly, statuses

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void forces(int n, const float *x, const float *y, float *fx, float soft2)
{
    for (int i = 0; i < n; i++) {
        float f = 0.0f;
        for (int j = 0; j < n; j++) {
            float dx = x[j] - x[i], dy = y[j] - y[i];
            float inv = 1.0f / sqrtf(dx * dx + dy * dy + soft2);
            f += dx * inv * inv * inv;
        }
        fx[i] = f;
    }
}

static double energy(int n, const float *x, const float *y, double eps)
{
    double e = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            e += 1.0 / sqrt((double)(x[i] - x[j]) * (x[i] - x[j]) + (double)(y[i] - y[j]) * (y[i] - y[j]) + eps);
    return e;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    float soft2 = (float)atof(argv[2]);
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n), *fx = malloc(sizeof(float) * n);
    unsigned s = 7u;
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u; x[i] = (float)(s >> 8) / 16777216.0f;
        s = s * 1664525u + 1013904223u; y[i] = (float)(s >> 8) / 16777216.0f;
    }
    forces(n, x, y, fx, soft2);
    double sum = 0.0, weighted = 0.0;
    int nans = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(fx[i])) { nans++; continue; }
        sum += fx[i];
        weighted += fabs(fx[i]) * (i % 7 + 1);
    }
    double e = energy(n, x, y, soft2);
    printf("forces %d %.6e %.6e\n", nans, sum, weighted);
    printf("energy %d %.6e\n", isnan(e) ? 1 : 0, isnan(e) ? 0.0 : e);
    return 0;
}
"""

QUIET = {"MDP_LOADAVG": '"/nonexistent/loadavg"'}   # the run-time team: OMP_NUM_THREADS, whatever the load


def _run(exe: Path, args: tuple[str, ...], threads: int) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    return subprocess.run([str(exe), *args], check=True, capture_output=True, text=True, env=env).stdout


def test_promised_and_generic_copies_agree_with_the_original(tmp_path: Path) -> None:
    src = tmp_path / "soft.c"
    src.write_text(PROGRAM)
    out = tmp_path / "out.c"
    done = mdpoly(src, out)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("a copy for soft2 >= 0") == 1 and "a copy for eps >= 0" in done.stderr, done.stderr
    got = statuses(out)
    assert got[8] == ("transformed", None) and got[22] == ("transformed", None), got
    text = out.read_text()
    assert text.count("if (soft2 >= 0)") == 1 and text.count("if (eps >= 0)") == 1, text
    assert text.count("__builtin_unreachable") >= 4, text   # at each copy's start and in its parallel loops
    reference_exe = build_c(src, tmp_path / "seq", {}, openmp=False, opt="-O3")
    parallel = build_c(out, tmp_path / "par", QUIET, openmp=True, opt="-O3")
    for args in (("700", "0.01"), ("700", "-0.02"), ("5", "0.5")):
        reference = _run(reference_exe, args, 1)
        assert ("forces 0 " in reference) == (args[1] != "-0.02"), reference   # the negative softening makes NaNs
        for threads in (1, 2, 3):
            mismatch = compare_outputs(reference, _run(parallel, args, threads), rtol=1e-5, atol=1e-6)
            assert mismatch is None, f"{args} OMP_NUM_THREADS={threads}: {mismatch}"
