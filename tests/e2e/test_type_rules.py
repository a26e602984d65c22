"""C's type rules decide what a nest computes (issue "never wrong code", items 1, 3, 4).

Each program is built as written and through ``mdpoly --all-nests --no-tune``; both run (the
parallel one at 2 and 3 threads) and must print exactly the same text. Beside the differential
check, each case asserts what the front end decided (kept with a reason, parallel, or guarded by a
run-time precondition), so a case cannot pass by accident.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available, run_mdpoly, run_program

from mdpoly.frontend import analyze_file
from mdpoly.ir.nest import FileAnalysis
from mdpoly.options import Options

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

HEAD = "#include <stdio.h>\n#include <math.h>\n"

# name -> (program, expected per nest line: "kept:<code>" | "parallel" | "guarded")
CASES: dict[str, tuple[str, dict[int, str]]] = {
    # item 1: an int accumulator with float addends truncates after every step
    "int_acc_float_addends": (HEAD + """float A[999];
int main(void) {
  for (int k = 0; k < 999; k++) A[k] = k == 0 ? 1.5f : -0.5f;
  int s = 0;
  for (int k = 0; k < 999; k++) s += A[k];
  printf("%d\\n", s);
  return 0;
}
""", {7: "kept:sequential-dependence"}),
    "int_product_by_float": (HEAD + """int main(void) {
  int p = 2;
  for (int k = 0; k < 40; k++) p *= 1.5f;
  printf("%d\\n", p);
  return 0;
}
""", {5: "kept:sequential-dependence"}),
    "int_array_acc_float_terms": (HEAD + """float A[64][333]; int out[64];
int main(void) {
  for (int i = 0; i < 64; i++) for (int k = 0; k < 333; k++) A[i][k] = (k % 3 == 0) ? 1.5f : -0.5f + i * 0.25f;
  for (int i = 0; i < 64; i++) out[i] = 0;
  for (int i = 0; i < 64; i++)
    for (int k = 0; k < 333; k++)
      out[i] += A[i][k];
  for (int i = 0; i < 64; i++) printf("%d ", out[i]);
  printf("\\n");
  return 0;
}
""", {7: "kept:sequential-dependence"}),
    # integer reductions computed in integer arithmetic stay parallel (modulo 2^n is exact)
    "uchar_sum_wraps": (HEAD + """int A[5000];
int main(void) {
  for (int k = 0; k < 5000; k++) A[k] = (k * 37) % 251;
  unsigned char s = 3;
  for (int k = 0; k < 5000; k++) s += A[k];
  printf("%d\\n", s);
  return 0;
}
""", {7: "parallel"}),
    "int_max_of_uchar": (HEAD + """unsigned char A[4097];
int main(void) {
  for (int k = 0; k < 4097; k++) A[k] = (unsigned char)((k * 91) % 256);
  int m = -7;
  for (int k = 0; k < 4097; k++) m = A[k] > m ? A[k] : m;
  printf("%d\\n", m);
  return 0;
}
""", {7: "parallel"}),
    # max of unsigned values into an int: the comparison is unsigned and the values do not fit
    "int_max_of_unsigned": (HEAD + """unsigned A[1000];
int main(void) {
  for (int k = 0; k < 1000; k++) A[k] = k == 500 ? 4000000000u : (unsigned)k;
  int m = 0;
  for (int k = 0; k < 1000; k++) m = A[k] > m ? A[k] : m;
  printf("%d\\n", m);
  return 0;
}
""", {7: "kept:sequential-dependence"}),
    # item 3: comparisons follow C's conversions
    "signed_iterator_unsigned_bound": (HEAD + """int a[64];
int main(void) {
  for (int i = -5; i < 40u; i++) a[i + 5] = 7;
  for (int i = 0; i < 64; i++) printf("%d ", a[i]);
  printf("\\n");
  return 0;
}
""", {5: "kept:c-conversion"}),
    "signed_lower_param_unsigned_n": (HEAD + """int a[64];
void f(int lo, unsigned n) { for (int i = lo; i < n; i++) a[i + 5] += 1; }
int main(void) {
  f(-5, 10); f(2, 20); f(0, 7);
  for (int i = 0; i < 64; i++) printf("%d ", a[i]);
  printf("\\n");
  return 0;
}
""", {4: "guarded"}),
    "unsigned_inclusive_bound": (HEAD + """int a[64];
void h(unsigned n) { for (unsigned i = 0; i <= n; i++) a[i] += 3; }
int main(void) {
  h(3); h(0); h(40);
  for (int i = 0; i < 64; i++) printf("%d ", a[i]);
  printf("\\n");
  return 0;
}
""", {4: "guarded"}),
    "unsigned_bound_minus_one": (HEAD + """int a[64];
void g(unsigned n) { for (unsigned i = 0; i < n - 1; i++) a[i] += 2; }
int main(void) {
  g(1); g(10); g(33);
  for (int i = 0; i < 64; i++) printf("%d ", a[i]);
  printf("\\n");
  return 0;
}
""", {4: "guarded"}),
    "uchar_iterator_fits": (HEAD + """int a[300];
int main(void) {
  for (unsigned char c = 0; c < 200; c++) a[c] = c * 3;
  for (int i = 0; i < 300; i++) printf("%d ", a[i]);
  printf("\\n");
  return 0;
}
""", {5: "parallel"}),
    # item 4: volatile accesses are observable
    "volatile_read": (HEAD + """volatile int flag = 3; int a[100];
int main(void) {
  for (int i = 0; i < 100; i++) a[i] = flag + i;
  printf("%d %d\\n", a[0], a[99]);
  return 0;
}
""", {5: "kept:volatile-access"}),
    "volatile_written_array": (HEAD + """volatile float v[100]; float a[100];
int main(void) {
  for (int i = 0; i < 100; i++) a[i] = i;
  for (int i = 0; i < 100; i++) v[i] = a[i] * 2;
  printf("%f\\n", v[99]);
  return 0;
}
""", {5: "parallel", 6: "kept:volatile-access"}),
    # loops counting downwards, '!=' conditions, and iterators declared before the loop (C89):
    # the iterators' exit values after the generated code are those of the original loops
    "downward_and_c89_exit_values": (HEAD + """#define N 1000
double a[N], b[N], s2;
int main(void) {
  int i, j; unsigned u;
  for (i = 0; i < N; i++) { a[i] = i % 9; b[i] = 0; }
  for (i = N - 1; i >= 0; i--) b[i] = a[i] * 2;
  printf("%d ", i);
  for (i = N - 1; i > 3; --i) b[i] += a[N - 1 - i];
  printf("%d ", i);
  for (u = N; u != 0; u--) b[u - 1] += 1;
  for (j = 0; j != N; j++) s2 += b[j];
  for (i = N - 1; i >= 1; i--) a[i] = a[i - 1] + 1;
  printf("%d %u %d %f %f\\n", i, u, j, s2, a[N - 1]);
  return 0;
}
""", {8: "parallel", 10: "parallel", 12: "parallel", 13: "parallel", 14: "kept:sequential-dependence"}),
    "unsigned_downward_to_zero_never_ends": (HEAD + """unsigned a[100];
void f(unsigned n) { for (unsigned i = n; i >= 1; i--) a[i - 1] = i; }
void g(unsigned n) { for (unsigned i = n - 1; i != 0u - 1u; i--) a[i] += 1; }
int main(void) {
  f(100); g(100);
  printf("%u %u\\n", a[0], a[99]);
  return 0;
}
""", {4: "parallel", 5: "kept:c-conversion"}),
    # a nest right after a label is analysed like any other
    "labelled_nest": (HEAD + """float a[1000];
int main(void) {
  int n = 1000;
  goto out;
out: for (int i = 0; i < n; i++) a[i] = i * 0.5f;
  printf("%f %f\\n", a[1], a[999]);
  return 0;
}
""", {7: "parallel"}),
}


def _analyse(path: Path) -> FileAnalysis:
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        return analyze_file(path.name, Options(all_nests=True))
    finally:
        os.chdir(cwd)


def _verdict(nest) -> str:  # type: ignore[no-untyped-def]
    if nest.kept is not None:
        return f"kept:{nest.kept.code}"
    assert nest.mdh is not None
    return "guarded" if nest.mdh.preconditions else "parallel"


@pytest.mark.parametrize("name", sorted(CASES))
def test_front_end_decision(name: str, tmp_path: Path) -> None:
    text, expected = CASES[name]
    src = tmp_path / "in.c"
    src.write_text(text)
    got = {n.loc.line: _verdict(n) for n in _analyse(src).nests if n.loc.line in expected}
    assert got == expected


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_matches_original(name: str, tmp_path: Path) -> None:
    text, _ = CASES[name]
    src = tmp_path / "in.c"
    src.write_text(text)
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False, opt="-O0"))
    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, {}, extra=["-q"])
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (2, 3):
        assert run_program(parallel, threads=threads) == reference, f"{name} at {threads} threads ({out_c})"
