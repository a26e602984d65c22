"""Parallel loops around bodies that run ``while`` loops (``NestStatements._while_once``).

An escape-time loop per pixel (Mandelbrot), an insertion sort of a local 3x3 window filled by
``v[k++] = ...`` (a median filter), a Newton iteration per element as ``do { ... if (..) break;
} while (...)``, and a ``while`` loop counting into a global (a reduction): each outer loop is a
parallel loop around its body as written, handed out in chunks as threads finish (the trips
differ per iteration: ``schedule(dynamic``), and prints what the sequential original prints at
1 and 3 threads. A ``while`` loop that writes an array at a subscript it changes (``a[j] += 1;
j++``, overlapping windows of neighbouring iterations) keeps its loop sequential, with the reason.
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
#include <stdio.h>
#include <stdlib.h>
int steps_taken;
static void mandel(int w, int h, int maxit, float x0, float y0, float dx, unsigned short *img)
{
    for (int py = 0; py < h; py++)
        for (int px = 0; px < w; px++) {
            float cr = x0 + px * dx, ci = y0 + py * dx, zr = 0.0f, zi = 0.0f;
            int it = 0;
            while (zr * zr + zi * zi < 4.0f && it < maxit) {
                float t = zr * zr - zi * zi + cr;
                zi = 2.0f * zr * zi + ci;
                zr = t;
                it++;
            }
            img[py * w + px] = (unsigned short)it;
        }
}
static void median3x3(const unsigned char *in, unsigned char *out, int w, int h)
{
    for (int y = 1; y < h - 1; y++)
        for (int x = 1; x < w - 1; x++) {
            unsigned char v[9];
            int k = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    v[k++] = in[(y + dy) * w + x + dx];
            for (int i = 1; i < 9; i++) {
                unsigned char t = v[i];
                int j = i - 1;
                while (j >= 0 && v[j] > t) {
                    v[j + 1] = v[j];
                    j--;
                }
                v[j + 1] = t;
            }
            out[y * w + x] = v[4];
        }
}
static void newton_sqrt(int n, const double *a, double *r, int *iters)
{
    for (int i = 0; i < n; i++) {
        double x = a[i] > 1.0 ? a[i] : 1.0;
        int it = 0;
        do {
            double nx = 0.5 * (x + a[i] / x);
            if (nx == x)
                break;
            x = nx;
            it++;
        } while (it < 60);
        r[i] = x;
        iters[i] = it;
    }
}
static void halvings(int n, const double *a)
{
    for (int i = 0; i < n; i++) {
        double v = a[i];
        while (v > 1.0) {
            v *= 0.5;
            steps_taken++;
        }
    }
}
static void spread(int n, float *a)
{
    for (int i = 0; i < n; i++) {
        int j = i;
        while (j < n && j < i + 3) {
            a[j] += 1.0f + 0.001f * i;
            j++;
        }
    }
}
int main(int argc, char **argv)
{
    int w = atoi(argv[1]), h = w * 3 / 4 + 1, n = w * 40;
    unsigned short *img = malloc(sizeof *img * w * h);
    unsigned char *in = malloc(w * h), *out = calloc(w * h, 1);
    double *a = malloc(n * sizeof *a), *r = malloc(n * sizeof *r);
    float *f = calloc(n, sizeof *f);
    int *it = malloc(n * sizeof *it);
    unsigned s = 1;
    for (int i = 0; i < w * h; i++) { s = s * 1103515245u + 12345u; in[i] = s >> 24; }
    for (int i = 0; i < n; i++) a[i] = 1.0 + i * 0.37;
    mandel(w, h, 200, -2.2f, -1.2f, 3.2f / w, img);
    median3x3(in, out, w, h);
    newton_sqrt(n, a, r, it);
    halvings(n, a);
    spread(n, f);
    long ci = 0, cm = 0, is = 0;
    double rs = 0.0, fs = 0.0;
    for (int i = 0; i < w * h; i++) { ci += img[i] * (i % 7 + 1); cm += out[i] * (i % 11 + 1); }
    for (int i = 0; i < n; i++) { rs += r[i] * (i % 5 + 1); is += it[i]; fs += f[i] * (i % 3 + 1); }
    printf("%ld %ld %.15e %ld %d %.9e\n", ci, cm, rs, is, steps_taken, fs);
    return 0;
}
"""


def test_loops_around_while_loops_run_in_parallel_and_agree(tmp_path: Path) -> None:
    src = tmp_path / "whiles.c"
    src.write_text(PROGRAM)
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    for line, band in ((7, r"py:\+\+ px:\+\+"), (22, r"y:\+\+ x:\+\+"), (43, r"i:\+\+"), (59, r"i:\+\+")):
        assert re.search(rf"whiles\.c:{line}:5: remark: loop nest scheduled: \[{band} private-body", proc.stderr), \
            (line, proc.stderr)
    assert re.search(r"whiles\.c:71:9: note: loop nest kept sequential: .*\[while-loop\]", proc.stderr), proc.stderr
    assert not re.search(r"whiles\.c:69:5: remark", proc.stderr), proc.stderr
    text = out_c.read_text()
    assert "collapse(2) schedule(dynamic, (int) (" in text and "reduction(+:steps_taken)" in text
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    for w in ("300", "3", "1", "2"):
        want = _run(orig, [w], None)[0]
        for threads in (1, 3):
            got, regions = _run(par, [w], threads, lib)
            mismatch = compare_outputs(want, got, rtol=1e-12, atol=0.0)   # the final sums are reductions too
            assert mismatch is None, f"w={w}, {threads} threads: {mismatch}"
            if threads == 3 and w == "300":
                assert regions >= 4, f"{regions} parallel regions"
