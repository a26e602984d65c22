"""``switch`` statements in loop bodies (``frontend/switches.py``): groups that each end with a
``break`` become an ``if``/``else if`` chain (labels without statements join the next group,
``default`` is the final ``else`` wherever it stands, a group's final ``break`` may end its
block), and the nest runs in parallel; a group that falls into the next, a controlling
expression with a side effect and a name declared in one group and used in another keep the
``switch`` as written, with a reason. Outputs equal the original's at 1 and 3 threads."""

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

static void modes(float *out, const float *in, const int *mode, int n)
{
    for (int i = 0; i < n; i++) {                                   /* MARK modes */
        switch (mode[i]) {
        case 0:
            out[i] = in[i];
            break;
        default:
            out[i] = -in[i];
            break;
        case 1:
        case 2: {
            float s = 0.0f;
            for (int k = 0; k < 4; k++)
                if (k <= mode[i])
                    s += in[i] * (float)k;
            out[i] = s;
            break;
        }
        case 5:
            out[i] = 2.0f * in[i] + 1.0f;
        }
    }
}

static void falls(float *out, const float *in, const int *mode, int n)
{
    for (int i = 0; i < n; i++) {                                   /* MARK falls */
        out[i] = 0.0f;
        switch (mode[i]) {
        case 0:
            out[i] += in[i];
        case 1:
            out[i] += 1.0f;
            break;
        default:
            out[i] -= 1.0f;
        }
    }
}

static int counter;
static int next_mode(void) { return counter++ % 3; }

static void effects(float *out, const float *in, int n)
{
    for (int i = 0; i < n; i++) {                                   /* MARK effects */
        switch (next_mode()) {
        case 0: out[i] = in[i]; break;
        default: out[i] = 0.0f; break;
        }
    }
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    float *in = malloc(sizeof(float) * n), *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n),
          *c = malloc(sizeof(float) * n);
    int *mode = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) { in[i] = (float)(i % 17) - 8.0f; mode[i] = (i * 7) % 7; }
    modes(a, in, mode, n);
    falls(b, in, mode, n);
    effects(c, in, n);
    double s = 0.0;
    for (int i = 0; i < n; i++) s += a[i] * (i % 5 + 1) + 2.0 * b[i] + 3.0 * c[i];
    printf("%.10e\n", s);
    return 0;
}
"""


def test_switch_chains_run_in_parallel_and_agree(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "switches.c"
    src.write_text(text)
    line = {m: next(k + 1 for k, t in enumerate(text.splitlines()) if f"MARK {m} " in t)
            for m in ("modes", "falls", "effects")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    assert re.search(rf"switches\.c:{line['modes']}:5: remark: loop nest scheduled: \[i:\+\+ private-body\]", err), err
    assert re.search(rf"switches\.c:{line['falls'] + 2}:\d+: note: loop nest kept sequential: .*'Switch'", err), err
    assert not re.search(rf"switches\.c:{line['effects']}:5: remark", err), err
    assert "switch (mode[i])" in out_c.read_text()   # the kept nest stays as written
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for n in ("300000", "9", "1"):
        want = _run(orig, [n], None)[0]
        for threads in (1, 3):
            assert compare_outputs(want, _run(par, [n], threads)[0], rtol=1e-12, atol=0.0) is None, (n, threads)
