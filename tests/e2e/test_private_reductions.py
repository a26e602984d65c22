"""Parallel loops around bodies as written that fold into scalars (``PrivateLoop.reductions``),
and their run-time guard when the sizes are known only at run time (``guard_private_loops``).

k-means' assignment step: for each point a sequential scan over the centroids (an argmin kept
in the body's own locals) and ``changed += label != best`` -- the loop is parallel with
``reduction(+:changed)``, through a struct's members and run-time sizes. A float maximum is a
reduction too; a float sum is one only without ``--strict-fp``. Every program prints what the
original prints at 1, 2 and 3 threads; with sizes given at run time, a small call runs the
loop as written (the guard), a large one in parallel.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from e2e_harness import (
    MDPOLY_TIMEOUT_S,
    build_c,
    child_env,
    mdpoly_available,
    mdpoly_command,
    run_program,
    run_step,
)

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not available")

KMEANS = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct { int n, k, dim; float *points, *centroids; int *labels; } KMeans;

static int assign(KMeans *km, float *worst)
{
    int changed = 0;
    float far = 0.0f;
    double total = 0.0;
    for (int i = 0; i < km->n; i++) {
        double best = INFINITY;
        int best_c = 0;
        for (int c = 0; c < km->k; c++) {
            double d2 = 0.0;
            for (int d = 0; d < km->dim; d++) {
                double diff = (double)km->points[i * km->dim + d] - km->centroids[c * km->dim + d];
                d2 += diff * diff;
            }
            if (d2 < best) { best = d2; best_c = c; }
        }
        changed += km->labels[i] != best_c;
        km->labels[i] = best_c;
        far = fmaxf(far, (float)best);
        total += best;
    }
    *worst = far + (float)(total * 0.0);
    return changed;
}

int main(int argc, char **argv)
{
    KMeans km;
    km.n = argc > 1 ? atoi(argv[1]) : 500;
    km.k = 7; km.dim = 5;
    km.points = malloc(sizeof(float) * km.n * km.dim);
    km.centroids = malloc(sizeof(float) * km.k * km.dim);
    km.labels = malloc(sizeof(int) * km.n);
    for (int i = 0; i < km.n * km.dim; i++) km.points[i] = (float)((i * 37) % 64) / 8.0f;
    for (int i = 0; i < km.k * km.dim; i++) km.centroids[i] = (float)((i * 11) % 64) / 8.0f;
    for (int i = 0; i < km.n; i++) km.labels[i] = i % 3;
    float worst;
    int changed = assign(&km, &worst);
    long sum = 0;
    for (int i = 0; i < km.n; i++) sum += (long)km.labels[i] * (i % 17 + 1);
    printf("%d %ld %.6f\n", changed, sum, worst);
    return 0;
}
"""


def _mdpoly(src: Path, out: Path, report: Path, *extra: str) -> str:
    cmd = [*mdpoly_command(), str(src), "-o", str(out), "--target", "openmp", "--no-tune", "--report", str(report),
           *extra]
    return run_step(cmd, env=child_env(), timeout=MDPOLY_TIMEOUT_S).stderr


def _assign_nest(report: Path) -> dict:
    nests = json.loads(report.read_text())["nests"]
    return next(n for n in nests if n["line"] == 12)   # the loop of assign()


@pytest.mark.parametrize("strict", [False, True])
def test_scalar_reductions_of_a_parallel_loop(tmp_path: Path, strict: bool) -> None:
    src = tmp_path / "kmeans.c"
    src.write_text(KMEANS)
    out, report = tmp_path / "out.c", tmp_path / "r.json"
    _mdpoly(src, out, report, "--all-nests", *(["--strict-fp"] if strict else []))
    code = out.read_text()
    if strict:   # the double sum may not be reassociated: the loop stays as written
        assert "reduction(+:changed)" not in code
    else:
        (loop,) = _assign_nest(report)["schedule"]
        assert loop["kind"] == "private-loop" and loop["reductions"] == {"changed": "+", "far": "max", "total": "+"}
        pragma = next(ln for ln in code.splitlines() if "reduction(+:changed)" in ln)
        assert "reduction(max:far)" in pragma and "reduction(+:total)" in pragma
    reference = run_program(build_c(src, tmp_path / "seq", {}, openmp=False))
    exe = build_c(out, tmp_path / "par", {}, openmp=True)
    for threads in (1, 2, 3):
        assert run_program(exe, threads=threads) == reference, f"{threads} threads"


def test_run_time_sizes_guard_the_parallel_loop(tmp_path: Path) -> None:
    src = tmp_path / "kmeans.c"
    src.write_text(KMEANS)
    out, report = tmp_path / "out.c", tmp_path / "r.json"
    stderr = _mdpoly(src, out, report)
    assert "the nest as written runs when the team has one thread" in stderr   # no gain on one thread
    assert _assign_nest(report)["one_thread"]
    code = out.read_text()
    guard = re.search(r"if \(2\.0 \* \((.*)\) >= (\d+)\.0 && mdp_team\(\) > 1", code)
    assert guard is not None and "km->n" in guard.group(1)
    assert any("cost: parallel when a call runs" in p["reason"] for p in _assign_nest(report)["schedule"][0]["preconditions"])
    exe = build_c(out, tmp_path / "par", {}, openmp=True)
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    for n in ("3", "40000"):   # below and above the threshold
        expected = subprocess.run([str(seq), n], check=True, capture_output=True, text=True).stdout
        for threads in ("1", "2"):
            got = subprocess.run([str(exe), n], check=True, capture_output=True, text=True,
                                 env={"OMP_NUM_THREADS": threads}).stdout
            assert got == expected, (n, threads)
