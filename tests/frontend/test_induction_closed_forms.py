"""The closed forms of ``mdpoly.frontend.normalize.inductions`` compute what the steps compute.

Each kernel's outermost loops are rewritten by the pass alone (no model, no generated code), the
rewritten file is printed, and it runs beside the original -- under UBSan, so a closed form that
overflows where the steps did not fails too -- for sizes that include empty and negative trip
counts. Imperfect nests (a use after an inner loop, sibling loops) are covered here although the
extractor refuses them, since the pass must be exact wherever it rewrites; so are steps among a
loop header's increments (``for (...; ...; j++, k += 2)``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from pycparser import c_ast, c_generator, c_parser

from mdpoly.diagnostics import SourceLoc
from mdpoly.frontend.normalize.inductions import close_inductions
from mdpoly.frontend.symbols import symbols_for

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc to run the kernels")

KERNELS = r"""
void after_rows(int n, int m, const float *a, float *out) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < m; j++)
      out[k++] = a[i * 7 + j];
    out[k++] = -1.0f;
  }
}
void siblings(int n, int m, const float *a, float *out) {
  long k = -3;
  for (int i = 1; i <= n; i++) {
    for (int j = 2; j <= m; j++) { out[k + 3] = a[j]; k += 2; }
    k--;
    for (int j = -1; j < m; j++) { out[++k + 3] = (float) j; }
  }
}
void deep(int n, int m, int p, float *out) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    k += 3;
    for (int j = 0; j < m; j++) {
      out[k] = (float) j;
      for (int l = 0; l < p; l++)
        out[k++ + 1] += 1.0f;
      k -= 1;
      if (j % 2) out[k + 2] = 5.0f;
    }
  }
}
void reverse(int n, int m, const float *a, float *out) {
  float *o = out + 2 * n * (m > 0 ? m : 0) + 2 * n;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < m; j++) *--o = a[i * 7 + j];
    o -= 2;
    *o = (float) i;
  }
}
void ids(int n, int m, unsigned long first, unsigned long *out) {
  unsigned long id = first;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i * 8 + j] = id++ * 3ul;
}
void headers(int n, int m, const float *a, float *out) {
  float *o = out;
  int k = 1;
  for (int i = 0; i < n; i++, o += 3) {
    for (int j = 1; j <= m; j++, k += 2)
      o[k % 5] += a[j] + (float) k;
    *o = (float) k;
  }
}
void rows(int n, int m, const float *a, float *out) {
  for (int i = 0; i < n; i++) {
    float *row = out + i * 9;
    const float *src = a + i;
    for (int j = 0; j < m; j++) {
      *row++ = *src;
      src += 2;
    }
    *row = -2.0f;
  }
}
"""

MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
void after_rows(int, int, const float *, float *);
void siblings(int, int, const float *, float *);
void deep(int, int, int, float *);
void reverse(int, int, const float *, float *);
void ids(int, int, unsigned long, unsigned long *);
void rows(int, int, const float *, float *);
void headers(int, int, const float *, float *);
static void show(const char *name, const float *x, int len)
{
    double t = 0.0;
    for (int i = 0; i < len; i++) t += x[i] * (i % 11 + 1);
    printf("%s %.9e\n", name, t);
}
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), m = atoi(argv[2]), p = atoi(argv[3]);
    int len = 4096;
    float *a = malloc(sizeof(float) * len), *out = calloc(len, sizeof(float));
    unsigned long *u = calloc(len, sizeof(unsigned long));
    for (int i = 0; i < len; i++) a[i] = (float) (i % 13) - 6.0f;
    after_rows(n, m, a, out); show("after_rows", out, len);
    siblings(n, m, a, out); show("siblings", out, len);
    deep(n, m, p, out); show("deep", out, len);
    reverse(n, m, a, out); show("reverse", out, len);
    rows(n, m, a, out); show("rows", out, len);
    headers(n, m, a, out); show("headers", out, len);
    ids(n, m, (unsigned long) -5, u);
    unsigned long s = 0;
    for (int i = 0; i < len; i++) s += u[i] * (i % 7 + 1);
    printf("ids %lu\n", s);
    return 0;
}
"""

CLOSED = {"after_rows": {"k"}, "siblings": {"k"}, "deep": {"k"}, "reverse": {"o"}, "ids": {"id"},
          "rows": {"row", "src"}, "headers": {"k", "o"}}


def _rewritten(text: str) -> tuple[str, dict[str, set[str]]]:
    ast = c_parser.CParser().parse(text)
    closed: dict[str, set[str]] = {}
    for func in ast.ext:
        if not isinstance(func, c_ast.FuncDef):
            continue
        for nest in [x for x in func.body.block_items or [] if isinstance(x, c_ast.For)]:
            found = close_inductions(nest, func.body, symbols_for(ast, func, nest), SourceLoc("k.c", 1, 1))
            closed.setdefault(func.decl.name, set()).update(found.closed)
    return c_generator.CGenerator().visit(ast), closed


def _build(tmp: Path, name: str, kernels: str) -> Path:
    (tmp / f"{name}.c").write_text(kernels)
    exe = tmp / name
    subprocess.run(["gcc", "-O1", "-fsanitize=undefined", "-fno-sanitize-recover=all", "-o", str(exe),
                    str(tmp / "main.c"), str(tmp / f"{name}.c")], check=True, capture_output=True)
    return exe


def test_closed_forms_compute_what_the_steps_compute(tmp_path: Path) -> None:
    text, closed = _rewritten(KERNELS)
    assert closed == CLOSED, closed
    assert "++" not in text.split("ids(")[1].split("}")[0].replace("j++", "").replace("i++", ""), text
    (tmp_path / "main.c").write_text(MAIN)
    orig, new = _build(tmp_path, "orig", KERNELS), _build(tmp_path, "closed", text)
    for args in (["5", "4", "3"], ["1", "1", "1"], ["0", "3", "2"], ["3", "0", "2"], ["4", "-2", "0"],
                 ["2", "6", "-1"], ["7", "1", "5"]):
        want = subprocess.run([str(orig), *args], check=True, capture_output=True, text=True).stdout
        got = subprocess.run([str(new), *args], check=True, capture_output=True, text=True).stdout
        assert got == want, (args, want, got, text)


def test_a_bool_is_no_counter() -> None:
    """``b--`` of a ``_Bool`` toggles it: no closed form of the iterators."""
    ast = c_parser.CParser().parse("void f(int n, float *out) {\n  _Bool b = 0;\n  for (int i = 0; i < n; i++) {\n"
                                   "    out[i] = (float) b;\n    b--;\n  }\n}\n")
    func = ast.ext[0]
    nest = func.body.block_items[1]
    found = close_inductions(nest, func.body, symbols_for(ast, func, nest), SourceLoc("k.c", 1, 1))
    assert not found.closed and [r.name for r in found.refused] == ["b"], found
    assert "_Bool" in found.refused[0].reason and "b--" in c_generator.CGenerator().visit(nest)
