"""Null tests of pointers the nest does not change (``frontend/normalize/pointer_tests.py``): a
matmul with an optional bias, ``float val = (bias != NULL) ? bias[o] : 0.0f;`` (it was refused:
'array bias is used as a pointer value'), optional weights ``w ? w[i] : 1.0f`` and a mask
``if (mask != NULL && !mask[i])`` run in parallel, called with null pointers and with arrays (a
read of a null pointer where the original makes none would crash the run). A store under such a
test (``if (out != NULL) out[i] = ...``) stays as written, with the reason. Outputs equal the
original's at 1 and 3 threads."""

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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static void matmul_forward(float *out, const float *inp, const float *weight, const float *bias,
                           int B, int T, int C, int OC)
{
    for (int b = 0; b < B; b++) {                                   /* MARK matmul */
        for (int t = 0; t < T; t++) {
            int bt = b * T + t;
            for (int o = 0; o < OC; o++) {
                float val = (bias != NULL) ? bias[o] : 0.0f;
                for (int i = 0; i < C; i++)
                    val += inp[bt * C + i] * weight[o * C + i];
                out[bt * OC + o] = val;
            }
        }
    }
}

static void weighted(int n, const float *x, const float *w, const unsigned char *mask, float *y)
{
    for (int i = 0; i < n; i++) {                                   /* MARK weighted */
        float v = (w ? w[i] : 1.0f) * x[i];
        if (mask != NULL && !mask[i])
            v = 0.0f;
        y[i] = v;
    }
}

static void optional_out(int n, const float *x, float *out)
{
    for (int i = 0; i < n; i++)                                     /* MARK store */
        if (out != NULL)
            out[i] = 2.0f * x[i];
}

int main(int argc, char **argv)
{
    int B = atoi(argv[1]), T = atoi(argv[2]), C = atoi(argv[3]), OC = atoi(argv[4]), with = atoi(argv[5]);
    int n = B * T * C;
    float *inp = malloc(sizeof(float) * (n + 1)), *weight = malloc(sizeof(float) * (OC * C + 1));
    float *bias = malloc(sizeof(float) * (OC + 1)), *out = calloc(B * T * OC + 1, sizeof(float));
    float *w = malloc(sizeof(float) * (n + 1)), *y = calloc(n + 1, sizeof(float));
    unsigned char *mask = malloc(n + 1);
    for (int i = 0; i < n; i++) { inp[i] = (float) (i % 13) * 0.125f - 0.5f; w[i] = (float) (i % 3); mask[i] = i % 5 != 0; }
    for (int i = 0; i < OC * C; i++) weight[i] = (float) (i % 7) * 0.25f - 0.75f;
    for (int o = 0; o < OC; o++) bias[o] = 0.5f * o;
    matmul_forward(out, inp, weight, with ? bias : NULL, B, T, C, OC);
    weighted(n, inp, with & 1 ? w : NULL, with & 2 ? mask : NULL, y);
    optional_out(n, inp, with & 1 ? w : NULL);
    double s = 0.0;
    for (int i = 0; i < B * T * OC; i++) s += out[i] * (i % 11 + 1);
    for (int i = 0; i < n; i++) s += y[i] * (i % 7 + 1) + w[i];
    printf("%.9e\n", s);
    return 0;
}
"""


def test_pointer_null_tests(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "nulls.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t) for k in ("matmul", "weighted", "store")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    assert re.search(rf"nulls\.c:{line['matmul']}:5: remark: loop nest parallelized: b:\+\+ t:\+\+ o:\+\+ i:\+", err), err
    assert re.search(rf"nulls\.c:{line['weighted']}:5: remark: loop nest (parallelized: i:\+\+|scheduled: \[i:\+\+ "
                     r"private-body\])", err), err
    # a store under the test stays as written: modelled, it would store through a null pointer
    assert re.search(rf"nulls\.c:{line['store'] + 1}:9: note: loop nest kept sequential: condition 'out != "
                     r"\(\(void \*\) 0\)' tests a pointer the nest stores through", err), err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for args in (["4", "64", "96", "160", "0"], ["4", "64", "96", "160", "3"], ["4", "64", "96", "160", "1"],
                 ["4", "64", "96", "160", "2"], ["1", "1", "1", "1", "0"], ["0", "3", "3", "3", "3"]):
        want = _run(orig, args, None)[0]
        for threads in (1, 3):
            mismatch = compare_outputs(want, _run(par, args, threads)[0], rtol=1e-5, atol=1e-5)
            assert mismatch is None, (args, threads, mismatch)
