"""Subscripts divided by a constant where the division is exact (``NestExprs._exact_quotient``):
a quantized matrix-vector product reads its group scales at ``(i*n + j) / GS`` with ``j`` a
multiple of ``GS`` -- affine once ``n / GS`` is a size parameter of its own, under the run-time
precondition ``n % GS == 0``. The row loop, a sequential scan of groups per row, becomes a
parallel loop; when ``n`` is no multiple of ``GS`` the loop runs as written. Outputs equal the
original's at 1 and 3 threads for both kinds of size.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import assert_same_outputs, build_c, mdpoly_available, run_mdpoly

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not available")

QMATVEC = r"""
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#define GS 8
typedef struct { int8_t *q; float *s; } QT;
static void matmul_q(float *out, const QT *x, const QT *w, int n, int d)
{
    for (int i = 0; i < d; i++) {
        float val = 0.0f;
        int in = i * n;
        for (int j = 0; j <= n - GS; j += GS) {
            int32_t acc = 0;
            for (int k = 0; k < GS; k++)
                acc += ((int32_t)x->q[j + k]) * ((int32_t)w->q[in + j + k]);
            val += ((float)acc) * w->s[(in + j) / GS] * x->s[j / GS];
        }
        out[i] = val;
    }
}
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), d = atoi(argv[2]);
    QT x, w;
    x.q = malloc(n); x.s = malloc(sizeof(float) * (n / GS + 1));
    w.q = malloc((size_t)n * d); w.s = malloc(sizeof(float) * ((size_t)n * d / GS + 1));
    for (int i = 0; i < n; i++) x.q[i] = (int8_t)((i * 13) % 31 - 15);
    for (int i = 0; i <= n / GS; i++) x.s[i] = 0.5f + (float)(i % 4) / 8.0f;
    for (long i = 0; i < (long)n * d; i++) w.q[i] = (int8_t)((i * 7) % 29 - 14);
    for (long i = 0; i <= (long)n * d / GS; i++) w.s[i] = 0.25f + (float)(i % 8) / 16.0f;
    float *out = malloc(sizeof(float) * d);
    matmul_q(out, &x, &w, n, d);
    double s = 0;
    for (int i = 0; i < d; i++) s += out[i] * (i % 3 + 1);
    printf("%.6f %.6f\n", s, out[d - 1]);
    return 0;
}
"""


def test_exact_division_makes_the_row_loop_parallel(tmp_path: Path) -> None:
    src = tmp_path / "qmv.c"
    src.write_text(QMATVEC)
    out = tmp_path / "out.c"
    proc = run_mdpoly(src, out, {})
    assert "loop nest scheduled: [i:++ private-body]" in proc.stderr, proc.stderr
    assert "n % 8 == 0" in out.read_text()
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("64", "37"), ("60", "5"), ("8", "1")), (1, 3))   # 60: no multiple of GS, the original runs


HALVES = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    float *a = malloc(sizeof(float) * (n + 1)), *b = malloc(sizeof(float) * (n + 1));
    for (int i = 0; i <= n; i++) a[i] = (float)(i % 9) / 4.0f;
    for (int i = 0; i < n / 2; i++)          /* a quotient of sizes: C's value, no precondition */
        b[i] = a[i + n / 2] + a[2 * i];
    double s = 0;
    for (int i = 0; i < n / 2; i++) s += b[i] * (i % 5 + 1);
    printf("%.6f\n", s);
    return 0;
}
"""


def test_quotient_of_sizes_is_a_size(tmp_path: Path) -> None:
    src = tmp_path / "halves.c"
    src.write_text(HALVES)
    out = tmp_path / "out.c"
    proc = run_mdpoly(src, out, {})
    assert "halves.c:9:5: remark: loop nest parallelized: i:++" in proc.stderr, proc.stderr
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("7",), ("1000",), ("1",)), (3,))


POOLED = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    int h = atoi(argv[1]), w = atoi(argv[2]), k = 5;
    long cells = (long)(h / 2) * (w / 2);
    unsigned *pooled = malloc(sizeof(unsigned) * (cells * k + 1)), *gap = malloc(sizeof(unsigned) * k);
    for (long i = 0; i < cells * k; i++) pooled[i] = (unsigned)(i * 2654435761u);
    for (int c = 0; c < k; c++) {            /* a product of two quotients bounds the inner loop */
        unsigned sum = 0;
        for (int p = 0; p < (h / 2) * (w / 2); p++)
            sum += pooled[p * k + c];
        gap[c] = sum;
    }
    for (int c = 0; c < k; c++) printf("%u\n", gap[c]);
    return 0;
}
"""


def test_product_of_quotients_is_computed_at_the_call(tmp_path: Path) -> None:
    """``(h / 2) * (w / 2)``: the product's parameter is computed from the quotients' C values at
    the call (it once named the model's own parameters, which the caller does not declare)."""
    src = tmp_path / "pooled.c"
    src.write_text(POOLED)
    out = tmp_path / "out.c"
    proc = run_mdpoly(src, out, {}, extra=["--all-nests"])
    assert "pooled.c:10:5: remark: loop nest parallelized" in proc.stderr, proc.stderr
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("9", "14"), ("400", "301"), ("1", "7")), (1, 3))
