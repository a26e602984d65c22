"""``mdpoly.frontend.scatter``: which updates at indices read from memory become scatter
reductions of a parallel loop (``PrivateLoop.scattered``) and which keep the nest as written,
with the subscript's located reason (and why they are no reduction, where the model got that far)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mdpoly.frontend.scatter import extent
from mdpoly.ir.nest import FileAnalysis, NestAnalysis, PrivateLoop, ScatterReduction, schedule_items_of

Analyze = Callable[..., FileAnalysis]


def _nest(fa: FileAnalysis, line: int) -> NestAnalysis:
    return next(n for n in fa.nests if n.loc.line == line)


def _loop(fa: FileAnalysis, line: int) -> PrivateLoop:
    nest = _nest(fa, line)
    assert nest.schedule is not None, nest.kept
    (loop,) = schedule_items_of(nest.schedule, PrivateLoop)
    return loop


def _kept(fa: FileAnalysis, line: int) -> tuple[str, int, int, str]:
    nest = _nest(fa, line)
    assert nest.schedule is None and nest.kept is not None and nest.kept.loc is not None, nest.schedule
    return nest.kept.code, nest.kept.loc.line, nest.kept.loc.column, nest.kept.message


ACCEPTED = r"""
#include <math.h>
void local_hist(const unsigned char *px, int n, int *out) {
    int hist[256];
    for (int b = 0; b < 256; b++) hist[b] = 0;
    for (int i = 0; i < n; i++)
        hist[px[i]]++;
    for (int b = 0; b < 256; b++) out[b] = hist[b];
}
void hist(const unsigned char *px, int n, int *h) {
    for (int i = 0; i < n; i++)
        h[px[i]]++;
}
void kmeans(const float *x, const int *lab, int n, int d, float *sum, int *cnt) {
    for (int i = 0; i < n; i++) {
        int c = lab[i];
        cnt[c]++;
        for (int j = 0; j < d; j++)
            sum[c * d + j] += x[i * d + j];
    }
}
void forms(const int *a, const float *v, const unsigned *bits, int n, float *s, unsigned *m, float *mx, int *d) {
    for (int i = 0; i < n; i++) {
        s[a[i]] = s[a[i]] + v[i];
        m[a[i]] |= bits[i];
        mx[a[i]] = fmaxf(mx[a[i]], v[i]);
        d[a[i]]--;
    }
}
"""


def test_updates_at_indices_read_from_memory_are_scatter_reductions(analyze: Analyze) -> None:
    fa = analyze(ACCEPTED)
    local = _loop(fa, 6)
    assert local.scattered == (ScatterReduction("hist", "+", "0", "256", whole=True),)
    assert not local.inspector   # a declared array is reduced whole: nothing to find at run time
    ptr = _loop(fa, 11)
    assert ptr.scattered == (ScatterReduction("h", "+", "mdp_ins_lo_h", "mdp_ins_hi_h - mdp_ins_lo_h + 1"),)
    # the inspection records the elements the loop updates, and the section's conditions read them
    assert "mdp_ins_lo_h" in ptr.inspector and "(long)(px[i])" in ptr.inspector
    assert any("mdp_ins_lo_h <= mdp_ins_hi_h" in p.c_expr and "262144" in p.c_expr for p in ptr.preconditions)
    assert any(c.a.buffer == "h" or c.b.buffer == "h" for c in ptr.checks)   # against px
    km = _loop(fa, 15)
    assert [(r.name, r.op) for r in km.scattered] == [("cnt", "+"), ("sum", "+")]
    assert km.iterators == ("i",)
    assert [(r.name, r.op) for r in _loop(fa, 23).scattered] == [("d", "+"), ("m", "|"), ("mx", "max"), ("s", "+")]


REFUSED = r"""
static long big[1 << 16];
void reads_written(int *idx, const int *a, int n, int *h) {
    for (int i = 0; i < n; i++) {
        idx[i] = a[i] & 255;
        h[idx[i]]++;
    }
}
void mixed(const int *a, const int *b, int n, int *h) {
    for (int i = 0; i < n; i++) {
        h[a[i]] += 1;
        h[b[i]] *= 2;
    }
}
void also_read(const int *a, int n, int *h, int *out) {
    for (int i = 0; i < n; i++) {
        h[a[i]]++;
        out[i] = h[i];
    }
}
void rows(const int *a, const int *b, int n, int (*h)[16]) {
    for (int i = 0; i < n; i++)
        h[a[i]][b[i]]++;
}
void too_big(const int *a, int n) {
    for (int i = 0; i < n; i++)
        big[a[i]] += 1;
}
void term_reads(const int *a, int n, int *h) {
    for (int i = 0; i < n; i++)
        h[a[i]] += h[0];
}
void other_element(const int *a, const int *v, int n, int *h) {
    for (int i = 0; i < n; i++)
        h[a[i]] = h[0] + v[i];
}
void plain_store(const int *a, const int *v, int n, int *h) {
    for (int i = 0; i < n; i++)
        h[a[i]] = v[i];
}
"""


@pytest.mark.parametrize(("loop", "line", "column", "why"), [
    (3, 5, 9, "subscript 'h[idx[i]]' is not affine"),   # its subscript reads an array the loop writes
    (9, 10, 9, "'h' is updated with different operators (*, +)"),
    (15, 16, 9, "'h' is also accessed by 'out[i] = h[i];' (line 17)"),
    (21, 22, 9, "subscript 'h[a[i]][b[i]]' is not affine"),   # a pointer to rows: not one flat section
    (25, 26, 9, "'big', updated at indices read from memory, has 524288 bytes: too large"),
    (29, 30, 9, "subscript 'h[a[i]]' is not affine"),     # the term reads 'h'
    (33, 34, 9, "subscript 'h[a[i]]' is not affine"),     # 'h[a[i]] = h[0] + v' reads another element
    (37, 38, 9, "subscript 'h[a[i]]' is not affine"),     # a store, no update
])
def test_other_updates_keep_the_nest_with_a_located_reason(analyze: Analyze, loop: int, line: int, column: int,
                                                           why: str) -> None:
    code, at_line, at_column, message = _kept(analyze(REFUSED.lstrip("\n")), loop)
    assert (code, at_line, at_column) == ("non-affine-subscript", line, column), message
    assert why in message, message


def test_strict_fp_keeps_floating_sums_in_order(analyze: Analyze) -> None:
    text = r"""
void fsum(const int *a, const float *v, int n, float *s) {
    for (int i = 0; i < n; i++)
        s[a[i]] -= v[i];
}
void isum(const int *a, const int *v, int n, int *s) {
    for (int i = 0; i < n; i++)
        s[a[i]] -= v[i];
}
"""
    fa = analyze(text.lstrip("\n"), strict_fp=True)
    code, line, column, message = _kept(fa, 2)
    assert (code, line, column) == ("non-affine-subscript", 3, 9)
    assert "--strict-fp keeps in order" in message, message
    assert _loop(fa, 6).scattered[0].name == "s"


def test_declared_extents() -> None:
    assert extent("256") == 256 and extent("1 << 16") == 65536 and extent("4 * 64u") == 256
    assert extent("n") is None and extent("") is None and extent("N / 2") is None


def test_a_pointer_viewed_as_a_grid_is_no_whole_array(analyze: Analyze) -> None:
    # fuzz seed 9158: the parameter 'a2' (shadowing a global 'char a2[2][3]') gets a 2-D view from
    # its subscript; it was reduced as a whole declared array ('reduction(+:a2)' on a pointer)
    fa = analyze(r"""
static char a2[2][3];
static void k0(int n0, int n1, char *a2)
{
    for (int i = 0; i < n0; i += 2)
        for (unsigned j = n1; j > 0; j--)
            a2[(i) * (n1 + 3) + j + 2] += 1;
}
""")
    nest = _nest(fa, 5)
    assert not any(loop.scattered for loop in schedule_items_of(nest.schedule or (), PrivateLoop)), nest.schedule
