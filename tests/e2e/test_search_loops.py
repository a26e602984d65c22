"""Searches inside loop bodies: an inner ``for`` loop that ``break``s (``frontend/normalize/
break_loops.py``) is modelled as the ``while`` loop it is, in the model of the nest's own text,
so the loop around it runs in parallel with the body as written: a lookup over read-only keys
(``restrict`` output, or an output of another type), a first-negative scan whose counter is read
after the loop. One that writes an array at the index it advances stays as written, as does a
lookup whose output may overlap the keys (with the reason). Outputs equal the original's at 1 and
3 threads."""

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

static void lookup(int *restrict pos, const int *q, const int *keys, int n, int m)
{
    for (int i = 0; i < n; i++) {                                   /* MARK lookup */
        int p = -1;
        for (int k = 0; k < m; k++)
            if (keys[k] == q[i]) {
                p = k;
                break;
            }
        pos[i] = p;
    }
}

static void lookup_shared(int *pos, const int *q, const int *keys, int n, int m)
{
    for (int i = 0; i < n; i++) {                                   /* MARK shared */
        int p = -1;
        for (int k = 0; k < m; k++)
            if (keys[k] == q[i]) {
                p = k;
                break;
            }
        pos[i] = p;
    }
}

static void first_neg(int *first, const float *a, int n, int m)
{
    for (int i = 0; i < n; i++) {                                   /* MARK first */
        int k;
        for (k = 0; k < m; k++)
            if (a[i * m + k] < 0.0f)
                break;
        first[i] = k;
    }
}

static void clip_prefix(float *a, int n, int m)
{
    for (int i = 0; i < n; i++)                                     /* MARK prefix */
        for (int k = 0; k < m; k++) {
            if (a[i * m + k] < 0.0f)
                break;
            a[i * m + k] = 0.5f * a[i * m + k];
        }
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]), m = 97;
    int *q = malloc(sizeof(int) * n), *keys = malloc(sizeof(int) * m), *pos = malloc(sizeof(int) * n);
    int *pos2 = malloc(sizeof(int) * n), *first = malloc(sizeof(int) * n);
    float *a = malloc(sizeof(float) * n * m);
    for (int k = 0; k < m; k++) keys[k] = (k * 7919) % 300;
    for (int i = 0; i < n; i++) q[i] = (i * 31) % 300;
    for (long i = 0; i < (long)n * m; i++) a[i] = (float)((i * 13) % 1001) - 3.0f;
    lookup(pos, q, keys, n, m);
    lookup_shared(pos2, q, keys, n, m);
    first_neg(first, a, n, m);
    clip_prefix(a, n, m);
    double s = 0.0;
    for (int i = 0; i < n; i++) s += pos[i] * 3.0 + pos2[i] + first[i] * 7.0;
    for (long i = 0; i < (long)n * m; i++) s += a[i];
    printf("%.10e\n", s);
    return 0;
}
"""


def test_search_loops(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "search.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t)
            for k in ("lookup", "shared", "first", "prefix")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    for k in ("lookup", "first"):
        assert re.search(rf"search\.c:{line[k]}:5: remark: loop nest scheduled: \[i:\+\+ private-body\]", err), (k, err)
    assert re.search(rf"search\.c:{line['shared']}:5: note: its temporaries .*'keys' is read inside a loop that may stop early", err), err
    assert not re.search(rf"search\.c:{line['prefix']}:5: remark", err), err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for n in ("30000", "5", "1"):
        want = _run(orig, [n], None)[0]
        for threads in (1, 3):
            assert compare_outputs(want, _run(par, [n], threads)[0], rtol=1e-12, atol=0.0) is None, (n, threads)
