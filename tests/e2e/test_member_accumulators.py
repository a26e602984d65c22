"""Reductions into struct members (``s->sum += v[i]``, ``st.count++``, ``if (v[i] > s->maxv)
s->maxv = v[i];``): the member is a scalar object of its own (``frontend/normalize/members.py``,
``Hoisted.written``), passed to the generated function by its address (``&(s->sum)``) and checked
at run time against the arrays the nest reads and writes, as a global scalar is. The statistics
must equal the sequential original's at 1 and 3 threads, also when the array read lies inside
the struct (the checks then run the nest as written). A parallel loop around the nest's own text
cannot give each thread a copy of a member, so a nest that needs one stays as written.
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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct { double sum, sumsq, maxv; long count; double tail[4]; } Stats;
typedef struct { int n; double *data; long hits; } Acc;
static void stats_of(const double *v, int n, Stats *s)
{
    s->sum = 0; s->sumsq = 0; s->maxv = -INFINITY; s->count = 0;
    for (int i = 0; i < n; i++) {
        s->sum += v[i];
        s->sumsq += v[i] * v[i];
        if (v[i] > s->maxv)
            s->maxv = v[i];
        if (v[i] > 0.5)
            s->count++;
    }
}
static void fill(Acc *a, const double *x)
{
    for (int i = 0; i < a->n; i++) {
        a->data[i] = x[i] + 1.0;
        a->hits++;
    }
}
static void halvings(Acc *a, const double *x)
{
    for (int i = 0; i < a->n; i++) {
        double v = x[i];
        while (v > 1.0) {
            v *= 0.5;
            a->hits++;
        }
    }
}
int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    double *v = malloc((n + 1) * sizeof *v);
    for (int i = 0; i < n; i++) v[i] = (double)((i * 37) % 1000) / 1000.0;
    Stats s;
    stats_of(v, n, &s);
    Stats t = s;
    for (int k = 0; k < 4; k++) t.tail[k] = 0.25 * (k + 1);
    stats_of(t.tail, 4, &t);   /* the array read lies inside the struct written */
    Acc a = {n, malloc((n + 1) * sizeof(double)), 0};
    fill(&a, v);
    halvings(&a, a.data);
    printf("%.17g %.17g %.17g %ld %.17g %ld %ld %.17g\n", s.sum, s.sumsq, s.maxv, s.count, t.sum, t.count, a.hits,
           a.data[n / 2]);
    return 0;
}
"""


def test_member_accumulators_agree_with_the_original(tmp_path: Path) -> None:
    src = tmp_path / "members.c"
    src.write_text(PROGRAM)
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    assert re.search(r"members\.c:10:5: remark: loop nest scheduled: \[i:\+ MDH", proc.stderr), proc.stderr
    assert re.search(r"members\.c:21:5: remark: loop nest scheduled: \[i:\+\+ MDH at line 21\] \[i:\+ MDH", proc.stderr), \
        proc.stderr
    assert not re.search(r"members\.c:28:5: remark", proc.stderr), proc.stderr   # a copy per thread of a->hits
    assert "&(s->sum)" in out_c.read_text()
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    for n in ("400000", "1", "7"):
        want = _run(orig, [n], None)[0]
        for threads in (1, 3):
            got, regions = _run(par, [n], threads, lib)
            mismatch = compare_outputs(want, got, rtol=1e-12, atol=0.0)   # sums in another order
            assert mismatch is None, f"n={n}, {threads} threads: {mismatch}"
            if threads == 3 and n == "400000":
                assert regions >= 3, f"{regions} parallel regions"
