"""Clamped neighbours in flat arrays: ``planes[row + (x + 1 >= w ? w - 1 : x + 1)]`` reads the
last column of the row (``row + w - 1``), which the delinearized view must see as column
``w - 1`` of row ``y``, not column ``-1`` of row ``y + 1`` (``frontend.delinearize._borrow_rows``).

Before, the view failed its range check and the image row loop stayed a sequential host loop;
now the whole blur pass is one parallel computation, and prints what the original prints for
sizes given at run time (1, 2, 3 threads).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import assert_same_outputs, build_c, mdpoly_available, run_mdpoly

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not available")

BLUR = r"""
#include <stdio.h>
#include <stdlib.h>
static void hpass(int w, int h, int nc, const float *planes, float *tmp, float k0, float k1, float k2)
{
    int x, y, c;
    for (y = 0; y < h; y++)
        for (c = 0; c < nc; c++)
            for (x = 0; x < w; x++) {
                int row = (c * h + y) * w;
                int xm2 = x < 2 ? 0 : x - 2;
                int xm1 = x < 1 ? 0 : x - 1;
                int xp1 = x + 1 >= w ? w - 1 : x + 1;
                int xp2 = x + 2 >= w ? w - 1 : x + 2;
                tmp[row + x] = k0 * planes[row + xm2] + k1 * planes[row + xm1] + k2 * planes[row + x]
                             + k1 * planes[row + xp1] + k0 * planes[row + xp2];
            }
}
int main(int argc, char **argv)
{
    int w = atoi(argv[1]), h = atoi(argv[2]), nc = 3;
    float *p = malloc(sizeof(float) * w * h * nc), *t = malloc(sizeof(float) * w * h * nc);
    for (int i = 0; i < w * h * nc; i++) p[i] = (float)((i * 29) % 64) / 8.0f;
    hpass(w, h, nc, p, t, 0.125f, 0.25f, 0.25f);
    double s = 0;
    for (int i = 0; i < w * h * nc; i++) s += t[i] * (i % 7 + 1);
    printf("%.6f %.6f %.6f\n", s, t[0], t[w * h * nc - 1]);
    return 0;
}
"""


def test_clamped_last_column_keeps_the_row_loop_parallel(tmp_path: Path) -> None:
    src = tmp_path / "blur.c"
    src.write_text(BLUR)
    out = tmp_path / "out.c"
    proc = run_mdpoly(src, out, {})
    assert "loop nest parallelized: y:++ c:++ x:++" in proc.stderr, proc.stderr
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("1", "1"), ("2", "5"), ("37", "11")), (1, 2, 3))


UNPACK = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    int w, h, nc, x, y, c;
    w = atoi(argv[1]);
    h = atoi(argv[2]);
    nc = 3;   /* a local assigned before the nest: the row size of the interleaved view */
    unsigned char *data = malloc((size_t)w * h * nc);
    float *planes = malloc(sizeof(float) * w * h * nc);
    for (int i = 0; i < w * h * nc; i++) data[i] = (unsigned char)(i * 7);
    for (c = 0; c < nc; c++)
        for (y = 0; y < h; y++)
            for (x = 0; x < w; x++)
                planes[(c * h + y) * w + x] = data[(y * w + x) * nc + c] / 255.0f;
    double s = 0;
    for (int i = 0; i < w * h * nc; i++) s += planes[i] * (i % 5 + 1);
    printf("%.6f\n", s);
    return 0;
}
"""


def test_interleaved_view_sized_by_a_local_assigned_before_the_nest(tmp_path: Path) -> None:
    src = tmp_path / "unpack.c"
    src.write_text(UNPACK)
    out = tmp_path / "out.c"
    proc = run_mdpoly(src, out, {})
    assert "loop nest parallelized: c:++ y:++ x:++" in proc.stderr, proc.stderr
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("1", "1"), ("13", "7")), (1, 3))
