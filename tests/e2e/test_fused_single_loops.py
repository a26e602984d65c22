"""A single parallel loop whose body runs no loop stays one loop (``frontend/schedule.py``,
``_Scheduler.plan``): ``z[2*i] = re[i]; z[2*i+1] = im[i];`` was split into two computations, two
passes over ``z`` and two parallel regions, where the loop as written is parallel in one pass.
Headers offset by constants (``2 + i < n``, ``k - 1 >= 0``) take OpenMP's canonical form there
(``frontend/omp_headers.py``). Outputs equal the original's at 1 and 3 threads; the remarks say
one parallel loop."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step
from test_cost_guard import NO_LOADAVG
from test_row_pointer_writes import _run

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>

static void interleave(int n, const float *re, const float *im, float *z)
{
    for (int i = 0; i < n; i++) {                                   /* MARK interleave */
        z[2 * i] = re[i];
        z[2 * i + 1] = im[i];
    }
}

static void to_rgb(int n, const float *y, const float *u, const float *v, float *rgb)
{
    for (int i = 0; i < n; i++) {                                   /* MARK rgb */
        rgb[3 * i] = y[i] + 1.402f * v[i];
        rgb[3 * i + 1] = y[i] - 0.344f * u[i] - 0.714f * v[i];
        rgb[3 * i + 2] = y[i] + 1.772f * u[i];
    }
}

static void offsets(int n, const float *a, float *z, float *w)
{
    for (int i = 0; 2 + i < n; i++) {                               /* MARK ahead */
        z[2 * i] = a[i + 2] - a[i];
        z[2 * i + 1] = a[i + 1];
    }
    for (int k = n - 1; k - 1 >= 0; k--) {                          /* MARK down */
        w[2 * k] = a[k] + a[k - 1];
        w[2 * k + 1] = a[k - 1];
    }
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    float *a = malloc(sizeof(float) * (n + 1)), *b = malloc(sizeof(float) * (n + 1));
    float *c = malloc(sizeof(float) * (n + 1)), *z = calloc(2 * n + 1, sizeof(float));
    float *rgb = calloc(3 * n + 1, sizeof(float));
    for (int i = 0; i < n; i++) { a[i] = (float) (i % 17); b[i] = (float) (i % 5) - 2.0f; c[i] = 0.25f * (i % 9); }
    double t0 = 0.0;
    interleave(n, a, b, z);
    to_rgb(n, a, b, c, rgb);
    float *z2 = calloc(2 * n + 1, sizeof(float)), *w2 = calloc(2 * n + 1, sizeof(float));
    offsets(n, a, z2, w2);
    for (int i = 0; i < 2 * n; i++) t0 += z2[i] * (i % 5 + 1) + w2[i] * (i % 3 + 2);
    double t = t0;
    for (int i = 0; i < 2 * n; i++) t += z[i] * (i % 7 + 1);
    for (int i = 0; i < 3 * n; i++) t += rgb[i] * (i % 3 + 1);
    printf("%.9e\n", t);
    return 0;
}
"""


def test_single_loops_stay_fused(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "fused.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t) for k in ("interleave", "rgb", "ahead", "down")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    for k in ("interleave", "rgb", "ahead", "down"):
        assert re.search(rf"fused\.c:{line[k]}:5: remark: loop nest scheduled: \[\w+:\+\+ private-body\];", err), (k, err)
    assert "MDH at line" not in err, err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for args in (["300000"], ["1"], ["0"]):
        want = _run(orig, args, None)[0]
        for threads in (1, 3):
            assert _run(par, args, threads)[0] == want, (args, threads)
