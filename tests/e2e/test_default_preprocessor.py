"""mdpoly preprocesses like the user's compiler (issue 21, item 1): ``$MDPOLY_CC -E`` in the
compiler's default (GNU) mode with the target's ``-fopenmp``, not ``cpp -std=c99``.

A program that includes ``<stdint.h>``, ``<stdlib.h>``, ``<math.h>``, ``<string.h>``,
``<stdio.h>`` and ``<omp.h>`` and uses ``int8_t``/``uint8_t``/``size_t`` and GNU extensions is
transformed, builds with ``-fopenmp`` and prints what the sequential original prints at 1-4
threads. A parse error that the other language mode avoids says so, located, with the
``--preprocessor`` that works.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import mdpoly_available
from usability_harness import assert_same_as_sequential, mdpoly, statuses

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

HEADERS = """\
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <stdio.h>
#include <omp.h>
typedef __int128 wide_t;
static __inline__ __attribute__((always_inline)) int twice(int v) { return __extension__ (v * 2); }
static void note_sum(long s) { __asm__ __volatile__("" ::: "memory"); printf("%ld\\n", s); }

void add8(size_t n, int8_t *restrict a, const uint8_t *restrict b) {
  for (size_t i = 0; i < n; i++)
    a[i] = (int8_t)(a[i] + b[i]);
}

void scale(int n, double *restrict y, const double *restrict x) {
  for (int i = 0; i < n; i++)
    y[i] = sqrt(x[i]) * 0.5 + fabs(x[i]);
}

int main(void) {
  size_t n = 1u << 20;
  int8_t *a = malloc(n); uint8_t *b = malloc(n);
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  memset(a, 1, n);
  for (size_t i = 0; i < n; i++) { b[i] = (uint8_t)(i * 7); x[i] = (double)(i % 97); }
  add8(n, a, b);
  scale((int)n, y, x);
  long s = 0; double t = 0;
  for (size_t i = 0; i < n; i++) { s += a[i]; t += y[i]; }
  wide_t w = (wide_t)s * twice(3);
  note_sum((long)w);
  printf("%.6e\\n", t);
  free(a); free(b); free(x); free(y);
  return 0;
}
"""


def test_real_headers_parse_and_the_program_runs_the_same(tmp_path: Path) -> None:
    src = tmp_path / "prog.c"
    src.write_text(HEADERS)
    out = tmp_path / "out.c"
    proc = mdpoly(src, out)
    assert proc.returncode == 0, proc.stderr
    got = statuses(out)
    assert got[12] == ("transformed", None) and got[17] == ("transformed", None), proc.stderr
    assert_same_as_sequential(src, out, tmp_path)


STDLIB_ONLY = """\
#include <stdlib.h>
#include <stdio.h>
void add8(int n, int8_t *a) {
  for (int i = 0; i < n; i++)
    a[i] = (int8_t)(a[i] + 1);
}
int main(void) { int8_t a[4] = {1, 2, 3, 4}; add8(4, a); printf("%d\\n", a[3]); return 0; }
"""


def test_int8_t_through_stdlib_parses_by_default(tmp_path: Path) -> None:
    src = tmp_path / "s.c"
    src.write_text(STDLIB_ONLY)
    out = tmp_path / "out.c"
    proc = mdpoly(src, out)
    assert proc.returncode == 0, proc.stderr
    assert_same_as_sequential(src, out, tmp_path, threads=(1, 2))


def test_strict_mode_error_hints_at_gnu_mode(tmp_path: Path) -> None:
    src = tmp_path / "s.c"
    src.write_text(STDLIB_ONLY)
    out = tmp_path / "out.c"
    proc = mdpoly(src, out, "--preprocessor", "cpp -std=c99")
    assert proc.returncode == 1 and not out.exists()
    assert (f"{src}:3:18: error: Invalid declaration before 'int8_t'; it parses when preprocessed in GNU C "
            "(-std=gnu99) mode: use --preprocessor 'cpp -std=gnu99'") in proc.stderr, proc.stderr
    assert proc.stderr.splitlines()[0].endswith("[bad-input]")


def test_gnu_mode_error_hints_at_strict_mode(tmp_path: Path) -> None:
    src = tmp_path / "l.c"
    src.write_text("#include <stdio.h>\nint linux = 3;\nint main(void) { printf(\"%d\\n\", linux); return 0; }\n")
    out = tmp_path / "out.c"
    proc = mdpoly(src, out, env={"MDPOLY_CC": "cc"})
    assert proc.returncode == 1
    assert (f"{src}:2:1: error: Invalid declaration; it parses when preprocessed in strict ISO C (-std=c17) mode: "
            "use --preprocessor 'cc -E -fopenmp -std=c17'") in proc.stderr, proc.stderr


def test_error_without_a_better_mode_has_no_hint(tmp_path: Path) -> None:
    src = tmp_path / "b.c"
    src.write_text("int main(void) { return 0 }\n")
    proc = mdpoly(src, tmp_path / "out.c")
    assert proc.returncode == 1 and "[bad-input]" in proc.stderr and "parses when" not in proc.stderr


def test_openmp_target_preprocesses_with_fopenmp(tmp_path: Path) -> None:
    src = tmp_path / "o.c"
    src.write_text("#ifndef _OPENMP\n#error \"preprocessed without the target's -fopenmp\"\n#endif\n"
                   "float a[100];\nvoid f(void) { for (int i = 0; i < 100; i++) a[i] = 1; }\n")
    proc = mdpoly(src, tmp_path / "out.c")
    assert proc.returncode == 0, proc.stderr


def test_mdpoly_cc_names_the_compiler(tmp_path: Path) -> None:
    """``$MDPOLY_CC`` is the compiler that preprocesses: a flag in it reaches the preprocessor."""
    src = tmp_path / "m.c"
    src.write_text("#ifndef FROM_CC\n#error \"not preprocessed by $MDPOLY_CC\"\n#endif\n"
                   "float a[100];\nvoid f(void) { for (int i = 0; i < 100; i++) a[i] = 1; }\n")
    proc = mdpoly(src, tmp_path / "out.c", env={"MDPOLY_CC": "cc -DFROM_CC=1"})
    assert proc.returncode == 0, proc.stderr
