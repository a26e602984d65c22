"""Gathers whose subscript reads an array the loop writes: a look-up table applied in place
(``px[i] = lut[px[i]]``, histogram equalisation's last step). The subscript reads each element
before the loop writes it, so an inspection run before the loop finds the table's elements the
loop reads, and the loop runs in parallel when they miss what it writes. A subscript that reads
an element written earlier in the same iteration, or by another iteration, keeps the loop as
written; so does a table that overlaps the pixels. Outputs must match the original at every
team size."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>

typedef struct { int w, h; unsigned char *px; } Gray;

static void apply_lut(Gray *g, const unsigned char *lut)
{
    for (int i = 0; i < g->w * g->h; i++)
        g->px[i] = lut[g->px[i]];
}

static void remap(int n, int *a, const int *b, const int *table, int *y)
{
    for (int i = 0; i < n; i++) {
        a[i] = b[i] & 255;
        y[i] = table[a[i]];
    }
}

static void shift_map(int n, int *a, const int *table)
{
    for (int i = 0; i < n - 1; i++)
        a[i] = table[a[i + 1] & 255];
}

int main(int argc, char **argv)
{
    int w = atoi(argv[1]), h = atoi(argv[2]), n = w * h;
    unsigned char *buf = malloc((size_t)n + 256), lut[256];
    int *a = malloc(sizeof(int) * (n + 1)), *b = malloc(sizeof(int) * (n + 1)), *y = malloc(sizeof(int) * (n + 1));
    int table[256];
    for (int k = 0; k < 256; k++) { lut[k] = (unsigned char)((k * 7 + 3) & 255); table[k] = k * k - 300; }
    for (int i = 0; i < n + 256; i++) buf[i] = (unsigned char)((i * 31 + (i >> 3)) & 255);
    for (int i = 0; i <= n; i++) { b[i] = i * 2654435761u >> 7; a[i] = (i * 13) & 1023; }
    Gray g = {w, h, buf + 256};
    apply_lut(&g, lut);                 /* a separate table */
    Gray over = {w, h, buf};
    apply_lut(&over, buf + 128);       /* a table inside the pixels: as written */
    remap(n, a, b, table, y);
    shift_map(n, b, table);
    long s = 0;
    for (int i = 0; i < n + 256; i++) s = s * 31 + buf[i];
    for (int i = 0; i < n; i++) s = s * 17 + a[i] + 3 * y[i] + 5 * b[i];
    printf("%ld\n", s);
    return 0;
}
"""

QUIET = {"MDP_LOADAVG": '"/nonexistent/loadavg"'}


def _run(exe: Path, args: list[str], threads: int) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    return subprocess.run([str(exe), *args], check=True, capture_output=True, text=True, env=env).stdout


def test_tables_applied_in_place(tmp_path: Path) -> None:
    src = tmp_path / "lut.c"
    src.write_text(PROGRAM)
    out = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out), "--no-tune"], env=child_env())
    assert re.search(r"lut\.c:9:5: remark: loop nest scheduled: \[i:\+\+ private-body\]", proc.stderr), proc.stderr
    assert re.search(r"lut\.c:\d+:\d+: note: loop nest kept sequential: subscript 'table\[a\[i\]\]'", proc.stderr)
    assert re.search(r"lut\.c:\d+:\d+: note: loop nest kept sequential: subscript 'table\[a\[i \+ 1\] & 255\]'",
                     proc.stderr), proc.stderr   # a[i + 1] is written by the next iteration: as written
    reference = build_c(src, tmp_path / "seq", {}, openmp=False)
    parallel = build_c(out, tmp_path / "par", QUIET, openmp=True)
    for args in (["640", "480"], ["3", "2"], ["1", "1"]):
        want = _run(reference, args, 1)
        for threads in (1, 2, 3):
            assert _run(parallel, args, threads) == want, (args, threads)
