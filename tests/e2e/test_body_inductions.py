"""Body induction variables (``frontend/normalize/inductions.py``): a packing counter
``out[idx++]``, per-row pointer bumps ``src += stride; dst += m;``, a counter stepped by a run-time
row length after its row, a pre-increment ``t[++k]``, a row pointer declared in the outer body and
bumped in the inner loop, pointers bumped among a loop header's increments and a counter read as
a value, and a counter read after the nest (its exit value assigned after the call,
``test_counter_exits.py``) run with every loop parallel; a triangular inner loop runs row by
row, each row's loop parallel with the counter's exit value set after it; a step under an
``if`` stays as written, with its reason. Outputs equal the original's at 1
and 3 threads, also for empty and one-row sizes."""

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

/* column-major copy of a row-major n x m matrix by a running counter */
static void pack(int n, int m, const float *a, float *out)
{
    int idx = 0;
    for (int i = 0; i < m; i++)                                     /* MARK pack */
        for (int j = 0; j < n; j++)
            out[idx++] = a[j * m + i];
}

/* rows of a strided source into a dense destination, by bumped read and write pointers */
static void rows(int n, int m, int stride, const float *a, float *b)
{
    const float *src = a;
    float *dst = b;
    for (int i = 0; i < n; i++) {                                   /* MARK rows */
        for (int j = 0; j < m; j++)
            dst[j] = src[j] * 2.0f + 1.0f;
        src += stride;
        dst += m;
    }
}

/* a row offset stepped by the run-time row length after each row */
static void centre(int n, int m, const float *a, float *c)
{
    int base = 0;
    for (int i = 0; i < n; i++) {                                   /* MARK centre */
        for (int j = 0; j < m; j++)
            c[base + j] = a[base + j] - 0.25f * (float) i;
        base += m;
    }
}

/* squares into slots 1..n of a table indexed from one */
static void onebased(int n, const float *a, float *t)
{
    int k = 0;
    for (int i = 0; i < n; i++)                                     /* MARK onebased */
        t[++k] = a[i] * a[i];
}

/* each row scaled through a row pointer bumped element by element */
static void scale_rows(int n, int m, float *x, const float *s)
{
    for (int i = 0; i < n; i++) {                                   /* MARK scale */
        float *row = x + i * m;
        for (int j = 0; j < m; j++)
            *row++ *= s[i];
    }
}

/* consecutive ids from a first one, the counter read as a value */
static void number(int n, int m, int first, int *ids)
{
    int id = first;
    for (int i = 0; i < n; i++)                                     /* MARK number */
        for (int j = 0; j < m; j++)
            ids[i * m + j] = id++;
}

/* rows copied by pointers bumped in the loop header */
static void header_rows(int n, int m, int stride, const float *a, float *b)
{
    const float *p = a;
    float *q = b;
    for (int i = 0; i < n; i++, p += stride, q += m)                /* MARK header */
        for (int j = 0; j < m; j++)
            q[j] = p[j] - 1.0f;
}

/* the count written is returned: read after the nest */
static int counted(int n, int m, const float *a, float *out)
{
    int w = 0;
    for (int i = 0; i < n; i++)                                     /* MARK counted */
        for (int j = 0; j < m; j++)
            out[w++] = a[i * m + j] + 0.5f;
    return w;
}

/* the positive values packed to the front: a step under an if */
static void compact(int n, const float *a, float *out)
{
    int k = 0;
    for (int i = 0; i < n; i++)                                     /* MARK compact */
        if (a[i] > 0.0f)
            out[k++] = a[i];
}

/* the lower triangle packed row by row: its rows grow */
static void lower(int n, const float *a, float *packed)
{
    int k = 0;
    for (int i = 0; i < n; i++)                                     /* MARK lower */
        for (int j = 0; j <= i; j++)
            packed[k++] = a[i * n + j];
}

static double sum(const float *x, long len)
{
    double t = 0.0;
    for (long i = 0; i < len; i++) t += x[i] * (double) (i % 13 + 1);
    return t;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]), m = atoi(argv[2]), stride = m + atoi(argv[3]);
    long nm = (long) n * m, big = (long) n * stride + nm + (long) n * n + 16;
    float *a = malloc(sizeof(float) * big), *out = calloc(big, sizeof(float));
    float *b = calloc(big, sizeof(float)), *c = calloc(big, sizeof(float)), *t = calloc(big, sizeof(float));
    int *ids = calloc(big, sizeof(int));
    for (long i = 0; i < big; i++) a[i] = (float) ((i * 7919) % 23) - 11.0f;
    pack(n, m, a, out);
    printf("pack %.6e\n", sum(out, nm));
    rows(n, m, stride, a, b);
    printf("rows %.6e\n", sum(b, nm));
    centre(n, m, a, c);
    printf("centre %.6e\n", sum(c, nm));
    onebased(n, a, t);
    printf("onebased %.6e\n", sum(t, n + 1));
    scale_rows(n, m, c, a);
    printf("scale %.6e\n", sum(c, nm));
    number(n, m, 1000, ids);
    long idsum = 0;
    for (long i = 0; i < nm; i++) idsum += ids[i] * (i % 5 + 1);
    printf("number %ld\n", idsum);
    header_rows(n, m, stride, a, b);
    printf("header %.6e\n", sum(b, nm));
    int w = counted(n, m, a, out);
    printf("counted %d %.6e\n", w, sum(out, nm));
    compact(n, a, t);
    printf("compact %.6e\n", sum(t, n));
    lower(n, a, out);
    printf("lower %.6e\n", sum(out, (long) n * (n + 1) / 2));
    return 0;
}
"""

PARALLEL = {"pack": "i:\\+\\+ j:\\+\\+", "rows": "i:\\+\\+ j:\\+\\+", "centre": "i:\\+\\+ j:\\+\\+",
            "onebased": "i:\\+\\+", "scale": "i:\\+\\+ j:\\+\\+", "number": "i:\\+\\+ j:\\+\\+",
            "header": "i:\\+\\+ j:\\+\\+", "counted": "i:\\+\\+ j:\\+\\+"}

KEPT = {"compact": "'k' is stepped under an 'if'"}


def test_body_inductions(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "inductions.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t)
            for k in (*PARALLEL, *KEPT, "lower")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    for k, loops in PARALLEL.items():
        assert re.search(rf"inductions\.c:{line[k]}:5: remark: loop nest parallelized: {loops}(;|$)", err, re.M), (k, err)
    # the triangle's 2-D closed form is refused (its rows grow); each row is a computation of its own
    assert re.search(rf"inductions\.c:{line['lower']}:5: remark: loop nest scheduled: i:seq\{{ \[j:\+\+ MDH at line "
                     rf"{line['lower'] + 1}\] \}}", err), err
    for k, why in KEPT.items():   # the reason follows the subscript the model could not read
        found = re.search(rf"inductions\.c:{line[k] + 1}:\d+: note: loop nest kept sequential: subscript '[^']+' is not "
                          rf"affine; .*{why}", err)
        found = found or re.search(rf"inductions\.c:{line[k] + 2}:\d+: note: loop nest kept sequential: subscript "
                                   rf"'[^']+' is not affine; .*{why}", err)
        assert found, (k, err)
    assert "((long long) " not in err, err   # messages show the reads as written, not the closed forms
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for args in (["400", "300", "5"], ["37", "23", "0"], ["1", "1", "2"], ["1", "9", "1"], ["9", "1", "0"],
                 ["0", "4", "1"], ["5", "0", "3"], ["0", "0", "0"]):
        want = _run(orig, args, None)[0]
        for threads in (1, 3):
            mismatch = compare_outputs(want, _run(par, args, threads)[0], rtol=1e-9, atol=1e-9)
            assert mismatch is None, (args, threads, mismatch)
