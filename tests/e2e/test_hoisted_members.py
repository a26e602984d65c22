"""Struct members a parallel loop reads are read once before its region (``__auto_type const
mdp_m_s_n = s->n;``), so the struct's address stays out of the outlined body (issue 22: a k-means
program ran 1.7x slower at one thread because its struct escaped into the region).

The members hold one value throughout only because the run-time alias checks keep the written
array off them: here ``s->out`` points at the struct itself in one run, the check fails, and the
loop runs as written, re-reading ``s->n`` after every store (the outputs must still agree)."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import assert_same_outputs, build_c, mdpoly_available, run_mdpoly

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not available")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
typedef struct { int n; int pad[63]; int *out; const int *in; } S;
static int scale(S *s)
{
    int changed = 0;
    for (int i = 0; i < s->n; i++) {
        int v = s->in[i] * 2 + s->n;
        changed += s->out[i] != v;
        s->out[i] = v;
    }
    return changed;
}
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), aliased = atoi(argv[2]);
    S *s = calloc(1, sizeof(S));
    int *in = malloc(sizeof(int) * (n + 64)), *out = calloc(n + 64, sizeof(int));
    for (int i = 0; i < n + 64; i++) in[i] = aliased ? 1 : i % 13;
    s->n = n;
    s->in = in;
    s->out = aliased ? &s->n : out;   /* out[0] is n itself: every store may change the bound */
    int c = scale(s);
    long t = 0;
    for (int i = 0; i < n + 64; i++) t += (long)out[i] * (i % 7 + 1);
    for (int i = 0; i < 63; i++) t += (long)s->pad[i] * (i + 1);
    printf("%d %d %ld\n", c, s->n, t);
    return 0;
}
"""


def test_members_are_read_once_and_aliasing_runs_the_original(tmp_path: Path) -> None:
    src = tmp_path / "members.c"
    src.write_text(PROGRAM)
    out = tmp_path / "out.c"
    run_mdpoly(src, out, {})
    text = out.read_text()
    assert "__auto_type const mdp_m_s_n = s->n;" in text, text
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("1000", "0"), ("10", "1"), ("40", "1"), ("1", "0")), (1, 2, 3))
