"""Nest spans in the original text, candidate selection and function start lines."""

from __future__ import annotations

from mdpoly.diagnostics import SourceLoc
from mdpoly.frontend.nest_span import nest_span


def test_span_skips_comments_strings_and_unbraced_bodies():
    src = ("void f(void) {\n"
           "  for (int i = 0; i < 4; i++) /* } */\n"
           "    for (int j = 0; j < 4; j++)\n"
           "      if (j) a[i] = ')'; else b[j] = \"}\"; // }\n"
           "  x = 1;\n}\n")
    sp = nest_span(src, SourceLoc("f.c", 2, 3))
    assert (sp.start.line, sp.start.column, sp.end_line, sp.end_column, sp.first_line) == (2, 3, 4, 41, 2)


def test_scop_markers_and_mdh_pragma(analyze):
    fa = analyze("""
void f(int n, float *a, float *b) {
  for (int i = 0; i < n; i++) a[i] = 0;      /* not marked: ignored */
#pragma scop
  for (int i = 0; i < n; i++) a[i] = b[i];
  for (int i = 0; i < n; i++) b[i] += a[i];
#pragma endscop
  for (int i = 0; i < n; i++) {
#pragma mdh(b[i] : ++)
    for (int j = 0; j < 1; j++) b[i] = 1;
  }
}
""")
    assert [n.loc.line for n in fa.nests] == [5, 6, 10]
    assert all(n.marked for n in fa.nests)


def test_all_nests_and_span_with_pragma(analyze):
    src = """
void f(int n, float *a) {
  for (int i = 0; i < n; i++) a[i] = 0;
#pragma mdh(a[i] : ++)
  for (int i = 0; i < n; i++) {
    a[i] = 1;
  }
}
"""
    fa = analyze(src)
    (n,) = fa.nests
    assert n.span.first_line == 4 and n.span.start.line == 5 and (n.span.end_line, n.span.end_column) == (7, 3)
    assert len(analyze(src, all_nests=True).nests) == 2
