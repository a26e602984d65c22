"""Values the file pins reach the outlined parallel code (issue 22: k-means and n-body ran
slower at two threads than sequentially on gcc 13, because the sequential build sees
``km.dim = 4`` through inlining and an outlined OpenMP region does not).

The generated code runs a copy specialised to the pinned values when the run-time values match,
and the generic copy otherwise. Here both copies run: the pinned values come from member stores
(``a.dim = 4``, ``c1.taps = 5``) that the analysis sees, while a second object is set up by a
positional initializer that it does not see (``dim`` 3, ``taps`` 3), so the test fails there and
the generic copy runs. Outputs must match the sequential program at every team size."""

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
typedef struct { int n, dim, k; float *pts, *cen; int *lab; } KM;
typedef struct { int taps; float scale; } Cfg;

static int assign(KM *km)
{
    int changed = 0;
    for (int i = 0; i < km->n; i++) {
        double best = INFINITY;
        int best_c = 0;
        for (int c = 0; c < km->k; c++) {
            double d2 = 0.0;
            for (int d = 0; d < km->dim; d++) {
                double diff = (double)km->pts[i * km->dim + d] - km->cen[c * km->dim + d];
                d2 += diff * diff;
            }
            if (d2 < best) { best = d2; best_c = c; }
        }
        changed += km->lab[i] != best_c;
        km->lab[i] = best_c;
    }
    return changed;
}

static void smooth(int n, const float *x, const float *w, float *f, int taps)
{
    for (int i = 0; i < n; i++) {
        float s = 0.0f;
        for (int t = 0; t < taps; t++)
            s += w[t] * x[i + t];
        f[i] = s;
    }
}

static void step(int n, const float *x, const float *w, float *f, const Cfg *cfg)
{
    smooth(n, x, w, f, cfg->taps);
}

static KM make(int n, int dim, int k, KM *km)
{
    km->pts = malloc(sizeof(float) * n * dim);
    km->cen = malloc(sizeof(float) * k * dim);
    km->lab = malloc(sizeof(int) * n);
    for (int i = 0; i < n * dim; i++) km->pts[i] = (float)((i * 37 + 11) % 256);
    for (int i = 0; i < k * dim; i++) km->cen[i] = (float)((i * 91 + 3) % 256);
    for (int i = 0; i < n; i++) km->lab[i] = -1;
    return *km;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    KM a;
    a.n = n;
    a.dim = 4;
    a.k = 16;
    make(n, 4, 16, &a);
    KM b = {n, 3, 5, 0, 0, 0};
    make(n, 3, 5, &b);
    Cfg c1;
    c1.taps = 5;
    c1.scale = 1.0f;
    Cfg c2 = {3, 2.0f};
    float *x = malloc(sizeof(float) * (n + 8)), *m = malloc(sizeof(float) * 8), *f = malloc(sizeof(float) * n);
    for (int i = 0; i < n + 8; i++) x[i] = (float)((i * 7919) % 1000) * 0.001f;
    for (int t = 0; t < 8; t++) m[t] = 1.0f + (float)(t % 3);
    int ca = assign(&a), cb = assign(&b);
    long la = 0, lb = 0;
    for (int i = 0; i < n; i++) { la += (long)a.lab[i] * (i % 7 + 1); lb += (long)b.lab[i] * (i % 5 + 1); }
    printf("assign %d %d %ld %ld\n", ca, cb, la, lb);
    for (int r = 0; r < 2; r++) {
        step(n, x, m, f, r == 0 ? &c1 : &c2);
        double s = 0.0, w = 0.0;
        for (int i = 0; i < n; i++) { s += f[i]; w += fabs(f[i]) * (i % 5 + 1); }
        printf("smooth %d %.6e %.6e\n", r, s, w);
    }
    return 0;
}
"""

QUIET = {"MDP_LOADAVG": '"/nonexistent/loadavg"'}   # the run-time team: OMP_NUM_THREADS, whatever the load


def _run(exe: Path, n: str, threads: int) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    return subprocess.run([str(exe), n], check=True, capture_output=True, text=True, env=env).stdout


def test_specialised_and_generic_copies_agree_with_the_original(tmp_path: Path) -> None:
    src = tmp_path / "pinned.c"
    src.write_text(PROGRAM)
    out = tmp_path / "out.c"
    done = mdpoly(src, out)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    got = statuses(out)
    assert got[11] == ("transformed", None) and got[30] == ("transformed", None), got
    # the region's copy for the members every store sets, and the function's for the parameter
    assert "mdp_m_km_dim == (4) && mdp_m_km_k == (16)" in text, text
    assert "__typeof__(mdp_m_km_dim) const mdp_m_km_dim = (4);" in text
    assert "taps == (5)" in text and "const int taps = (5);" in text, text
    reference_exe = build_c(src, tmp_path / "seq", {}, openmp=False)
    parallel = build_c(out, tmp_path / "par", QUIET, openmp=True)
    for n in ("60000", "7"):   # 60000: every call is large enough for a thread team
        reference = _run(reference_exe, n, 1)
        for threads in (1, 2, 3):
            mismatch = compare_outputs(reference, _run(parallel, n, threads), rtol=1e-5, atol=1e-6)
            assert mismatch is None, f"n={n} OMP_NUM_THREADS={threads}: {mismatch}"
