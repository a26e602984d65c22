"""The user's OpenMP next to mdpoly's (issue 21, item 6).

``openmp_cases/user_omp.c`` has a loop under the user's ``omp parallel for``, an ``omp for`` and a
``single`` inside a user's ``parallel`` region, a time loop around a user's ``parallel for`` and a
plain sweep, an ``omp simd`` loop and an ``ordered`` loop that carries a dependence. By default the
user's parallel loops stay as written and are reported ``already-parallel`` (their combined
``parallel for`` directives get ``num_threads(mdp_team())``, ``test_user_teams.py``); nests in a region
are kept (``in-omp-region``); the time loop is kept (``openmp-inside``) and the nests inside it
are analysed on their own; the ``simd`` loop is mdpoly's. ``--replace-omp`` replaces a user's
``parallel for`` that mdpoly proves parallel (its pragma line goes with it) and keeps the
``ordered`` one. ``#pragma mdh`` with ``#pragma omp parallel for``, in either order, is mdpoly's
code. Every output builds with ``-fopenmp`` and prints what the sequential original prints at
1-4 threads.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import mdpoly_available
from usability_harness import assert_same_as_sequential, mdpoly, report, statuses

CASES = Path(__file__).resolve().parent / "openmp_cases"
USER_OMP = CASES / "user_omp.c"

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

DEFAULT = {
    9: ("already-parallel", "already-parallel"),     # omp parallel for
    18: ("already-parallel", "already-parallel"),    # omp for in a parallel region
    21: ("kept", "in-omp-region"),                   # under omp single in that region
    25: ("already-parallel", "already-parallel"),    # omp for (a reduction into y[i])
    35: ("kept", "openmp-inside"),                   # time loop around a user's parallel for
    37: ("already-parallel", "already-parallel"),    # ... that parallel for, on its own
    39: ("transformed", None),                       # ... the plain sweep next to it
    47: ("transformed", None),                       # omp simd: mdpoly's code replaces it
    54: ("already-parallel", "already-parallel"),    # omp parallel for ordered
}


def test_user_loops_stay_and_are_already_parallel(tmp_path: Path) -> None:
    out = tmp_path / "out.c"
    proc = mdpoly(USER_OMP, out)
    assert proc.returncode == 0, proc.stderr
    got = statuses(out)
    assert {line: got.get(line) for line in DEFAULT} == DEFAULT, got
    err = proc.stderr
    assert (f"{USER_OMP}:9:3: note: loop nest already parallel (OpenMP): the loop is annotated "
            "'#pragma omp parallel for'; --replace-omp lets mdpoly replace it") in err, err
    assert (f"{USER_OMP}:21:5: note: loop nest kept as written: it runs inside the user's '#pragma omp single' "
            "at line 20") in err, err
    assert (f"{USER_OMP}:35:3: note: loop nest kept as written: it holds the user's '#pragma omp parallel for' "
            "at line 36") in err, err
    assert "kept sequential: the loop is" not in err
    text = out.read_text()
    assert text.count("#pragma omp parallel for num_threads(mdp_team())\n") == 2, text
    assert "#pragma omp parallel for ordered num_threads(mdp_team())" in text
    assert "#pragma omp simd\n  for" not in text   # removed with the loop mdpoly replaced
    assert_same_as_sequential(USER_OMP, out, tmp_path)


def test_replace_omp_replaces_what_it_proves(tmp_path: Path) -> None:
    out = tmp_path / "out.c"
    proc = mdpoly(USER_OMP, out, "--replace-omp")
    assert proc.returncode == 0, proc.stderr
    got = statuses(out)
    assert got[9] == ("transformed", None)
    assert got[18] == ("already-parallel", "already-parallel")    # an omp for in a region: never replaced
    assert got[35] == ("kept", "openmp-inside")                    # the time loop carries a dependence
    assert got[54] == ("already-parallel", "already-parallel")    # mdpoly proves the ordered loop sequential
    assert (f"{USER_OMP}:54:3: note: loop nest already parallel (OpenMP): the user's "
            "'#pragma omp parallel for ordered' at line 53 stays: mdpoly's analysis does not prove the nest parallel "
            "(loop 'i' carries a flow dependence on 'x'") in proc.stderr, proc.stderr
    text = out.read_text()
    lines = text.splitlines()
    # the user's pragma line of the replaced loop went with it; the kept ones are still there
    assert "void user_loop(void) {" in text
    k = lines.index("void user_loop(void) {")
    body = lines[k + 1:lines.index("}", k)]   # the call, under its run-time checks, and the fallback
    assert not any("#pragma omp" in line for line in body) and any("mdpoly_user_loop" in line for line in body), body
    assert "#pragma omp parallel for ordered num_threads(mdp_team())" in text
    assert_same_as_sequential(USER_OMP, out, tmp_path)


MM = """\
#include <stdio.h>
#define N 256
float A[N][N], B[N][N], C[N][N], D[N][N];
void mm(void) {
  FIRST
  SECOND
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      float s = 0;
      for (int k = 0; k < N; k++) s += A[i][k] * B[k][j];
      C[i][j] = s;
    }
}
void other(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      D[i][j] = A[j][i] - B[i][j];
}
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { A[i][j] = (i * 3 + j) % 7; B[i][j] = (i + j) % 5; }
  mm(); other();
  printf("%f %f %f\\n", C[3][4], C[N - 1][N - 2], D[5][6]);
  return 0;
}
"""


@pytest.mark.parametrize("first,second", [
    ("#pragma omp parallel for", "#pragma mdh(C[i][j] : ++, ++, +)"),
    ("#pragma mdh(C[i][j] : ++, ++, +)", "#pragma omp parallel for"),
], ids=["omp-then-mdh", "mdh-then-omp"])
def test_mdh_with_user_parallel_for_in_either_order(tmp_path: Path, first: str, second: str) -> None:
    src = tmp_path / "mm.c"
    src.write_text(MM.replace("FIRST", first).replace("SECOND", second))
    out = tmp_path / "out.c"
    proc = mdpoly(src, out, "--all-nests")
    assert proc.returncode == 0, proc.stderr
    assert statuses(out) == {7: ("transformed", None), 15: ("transformed", None), 20: ("transformed", None)}, \
        proc.stderr
    text = out.read_text()
    assert "#pragma mdh" not in text and "#pragma omp parallel for\n" not in text
    assert_same_as_sequential(src, out, tmp_path)


def test_mdh_pragma_marks_only_its_nest_in_either_order(tmp_path: Path) -> None:
    src = tmp_path / "mm.c"
    src.write_text(MM.replace("FIRST", "#pragma mdh(C[i][j] : ++, ++, +)").replace("SECOND", "#pragma omp parallel for"))
    out = tmp_path / "out.c"
    proc = mdpoly(src, out)
    assert proc.returncode == 0 and [n["line"] for n in report(out)] == [7], proc.stderr


def test_stray_mdh_pragma_is_a_located_warning(tmp_path: Path) -> None:
    src = tmp_path / "s.c"
    src.write_text("float a[100];\nvoid f(void) {\n  #pragma mdh(a[i] : ++)\n  a[0] = 1;\n"
                   "  for (int i = 0; i < 100; i++) a[i] = 2;\n}\n")
    out = tmp_path / "out.c"
    proc = mdpoly(src, out)
    assert proc.returncode == 0
    assert f"{src}:3:9: warning: '#pragma mdh(a[i] : ++)' is not directly before a 'for' loop" in proc.stderr
    assert "[stray-pragma]" in proc.stderr


def test_gcc_loop_pragma_goes_with_the_replaced_loop(tmp_path: Path) -> None:
    src = tmp_path / "u.c"
    src.write_text(MM.replace("FIRST", "").replace("SECOND", "#pragma GCC ivdep"))
    out = tmp_path / "out.c"
    proc = mdpoly(src, out)
    assert proc.returncode == 0 and statuses(out)[7] == ("transformed", None), proc.stderr
    assert "#pragma GCC ivdep" not in out.read_text()
    assert_same_as_sequential(src, out, tmp_path, threads=(1, 3))


ALIAS = """\
#include <stdio.h>
void shift(int n, float *a, const float *b) {
  #pragma omp parallel for
  for (int i = 0; i < n; i++)
    a[i] = b[i] * 2.0f + 1.0f;
}
int main(void) {
  static float x[200000], y[200000];
  for (int i = 0; i < 200000; i++) { x[i] = i % 11; y[i] = i % 3; }
  shift(200000, y, x);
  shift(100000, x, x + 50000);
  double s = 0;
  for (int i = 0; i < 200000; i++) s += x[i] + y[i];
  printf("%f\\n", s);
  return 0;
}
"""


def test_replaced_loop_falls_back_to_sequential_on_overlap(tmp_path: Path) -> None:
    """The second call overlaps its arrays (the user's pragma races there): mdpoly's run-time
    check runs the loop as written, without the user's pragma."""
    src = tmp_path / "alias.c"
    src.write_text(ALIAS)
    out = tmp_path / "out.c"
    proc = mdpoly(src, out, "--replace-omp")
    assert proc.returncode == 0 and statuses(out)[4] == ("transformed", None), proc.stderr
    assert "#pragma omp parallel for\n" not in out.read_text()
    assert_same_as_sequential(src, out, tmp_path)


MACROS = """\
#include <stdio.h>
#define PFOR _Pragma("omp parallel for")
#define SIMD _Pragma("omp simd")
float a[100000], b[100000];
void f(void) {
  PFOR for (int i = 0; i < 100000; i++) a[i] = b[i] * 2.0f;
}
void g(void) {
  SIMD for (int i = 0; i < 100000; i++) b[i] = a[i] + 1.0f;
}
void h(void) {
  PFOR
  for (int i = 0; i < 100000; i++) a[i] += 1.0f;
}
int main(void) {
  for (int i = 0; i < 100000; i++) b[i] = i % 7;
  f(); g(); h();
  printf("%f %f\\n", a[99], b[99]);
  return 0;
}
"""


def test_pragma_from_a_macro_on_the_loop_line_keeps_the_loop(tmp_path: Path) -> None:
    """A pragma that a macro puts on the loop's own line cannot go with the loop: the loop stays
    (with its pragma); on a line of its own, it goes with the replaced loop."""
    src = tmp_path / "m.c"
    src.write_text(MACROS)
    out = tmp_path / "out.c"
    proc = mdpoly(src, out, "--replace-omp", "--all-nests")
    assert proc.returncode == 0, proc.stderr
    got = statuses(out)
    assert got[6] == ("already-parallel", "already-parallel") and got[9] == ("kept", "pragma-on-loop-line")
    assert got[13] == ("transformed", None), proc.stderr
    assert (f"{src}:9:8: note: loop nest kept sequential: '#pragma omp simd' comes from a macro or '_Pragma' on the "
            "loop's line") in proc.stderr
    text = out.read_text()
    assert "  PFOR for (int i" in text and "  SIMD for (int i" in text and "  PFOR\n" not in text
    assert_same_as_sequential(src, out, tmp_path)
