"""``<math.h>``'s rounding to integers (``lrintf``, ``lround``, ``llrint``) are pure functions of
their argument: an int16 audio gain with saturation, ``(int) lrintf(in[i] * g)`` clamped to the
sample range, runs in parallel (it was refused: 'call to lrintf may have side effects'), and a
``lround`` of doubles into ``long`` indexes a histogram-free map. Outputs equal the original's
bit for bit at 1 and 3 threads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step
from test_cost_guard import NO_LOADAVG
from test_row_pointer_writes import _run

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void gain(int n, const int16_t *in, int16_t *out, float g)
{
    for (int i = 0; i < n; i++) {                                   /* MARK gain */
        int v = (int) lrintf(in[i] * g);
        if (v > 32767) v = 32767;
        if (v < -32768) v = -32768;
        out[i] = (int16_t) v;
    }
}

static void cents(int n, const double *price, long *c, long long *m)
{
    for (int i = 0; i < n; i++) {                                   /* MARK cents */
        c[i] = lround(price[i] * 100.0);
        m[i] = llrint(price[i] * 1000.0) + llround(-price[i]);
    }
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    float g = (float) atof(argv[2]);
    int16_t *in = malloc(sizeof(int16_t) * (n + 1)), *out = calloc(n + 1, sizeof(int16_t));
    double *p = malloc(sizeof(double) * (n + 1));
    long *c = calloc(n + 1, sizeof(long));
    long long *m = calloc(n + 1, sizeof(long long));
    for (int i = 0; i < n; i++) {
        in[i] = (int16_t) ((i * 7919) % 65536 - 32768);
        p[i] = (i % 1000) * 0.0125 - 3.0;
    }
    gain(n, in, out, g);
    cents(n, p, c, m);
    long long t = 0;
    for (int i = 0; i < n; i++) t += (long long) out[i] * (i % 5 + 1) + c[i] * (i % 3) + m[i];
    printf("%lld\n", t);
    return 0;
}
"""


def test_integer_rounding(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "round.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t) for k in ("gain", "cents")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    for k in ("gain", "cents"):
        assert re.search(rf"round\.c:{line[k]}:5: remark: loop nest (parallelized: i:\+\+|scheduled: \[i:\+\+ private-body\])",
                         err), (k, err)
    assert "side-effect-call" not in err, err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for args in (["200000", "1.7"], ["1", "-3.1"], ["0", "1.0"]):
        want = _run(orig, args, None)[0]
        for threads in (1, 3):
            assert _run(par, args, threads)[0] == want, (args, threads)
