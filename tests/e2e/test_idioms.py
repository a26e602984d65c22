"""Everyday C idioms (issue "non-rectangular domains, linearized arrays and other idioms").

Flat arrays indexed ``A[i*m + j]`` (delinearized, with the run-time check that columns stay in a
row), dereferenced pointers to arrays (``(*B)[r][s]``), ``if (e > m) m = e;`` reductions. Each
program is built as written and through mdpoly; both run (at 1, 2 and 3 threads, and on the
OpenCL device when there is one) and must print exactly the same text. Beside that, each case
asserts the front end's decision per nest, so a case cannot pass by keeping everything.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available, run_mdpoly, run_program

from mdpoly.frontend import analyze_file
from mdpoly.options import Options

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

HEAD = "#include <stdio.h>\n#include <stdlib.h>\n"

FLAT = HEAD + """void mm(int n, int m, int p, const float *A, const float *B, float *C) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < p; j++) {
      float s = 0;
      for (int k = 0; k < m; k++)
        s += A[i * m + k] * B[k * p + j];
      C[i * p + j] = s;
    }
}
void shift(int n, int m, float *X) {
  for (int i = 1; i < n; i++)
    for (int j = 0; j < m; j++)
      X[i * m + j] = X[(i - 1) * m + j] + 1;
}
void cp(int n, int m, float *X, const float *Y) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      X[i * m + j] = Y[i * m + j] * 2;
}
void cols(int n, int m, int w, float *X, const float *Y) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < w; j++)
      X[i * m + j] = Y[j * n + i] + 0.5f;
}
static double sum(const float *v, int n) { double s = 0; for (int i = 0; i < n; i++) s += v[i] * (i % 5 + 1); return s; }
int main(void) {
  int n = 37, m = 41, p = 29;
  float *A = malloc(sizeof(float) * n * m), *B = malloc(sizeof(float) * m * p), *C = malloc(sizeof(float) * n * p);
  float *D = malloc(sizeof(float) * n * m);
  for (int i = 0; i < n * m; i++) A[i] = (i % 7) * 0.5f;
  for (int i = 0; i < m * p; i++) B[i] = (i % 5) * 0.25f;
  mm(n, m, p, A, B, C);
  mm(n, 1, p, A, B, C + 3);            /* rows of one element, overlapping output */
  shift(n, m, A);
  cp(n, m, D, A);
  cp(n - 1, m, A + m, A);              /* overlapping source and target: the original runs */
  cols(n, m, m, D, A);                 /* columns within a row: checked at run time, holds */
  cols(n, 5, 9, D, A);                 /* columns 0..8 in rows of 5: check fails, original runs */
  printf("%.4f %.4f %.4f\\n", sum(C, n * p), sum(A, n * m), sum(D, n * m));
  return 0;
}
"""

COMPUTED_BASE = HEAD + """#define N 50
#define M 60
void scale(double (*B)[N][M], double a) {
  int r, s;
  for (r = 0; r < N; r++)
    for (s = 0; s < M; s++)
      (*B)[r][s] = (*B)[r][s] * a + r;
}
int main(void) {
  double (*A)[N][M] = malloc(sizeof *A);
  for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) (*A)[i][j] = (i * j) % 7;
  scale(A, 2.0);
  double t = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) t += (*A)[i][j] * (j + 1);
  printf("%f\\n", t);
  free(A);
  return 0;
}
"""

IF_MAX = HEAD + """#define N 1000
double v[N]; int w[N];
int main(void) {
  double m = -1e30; int lo = 1 << 30; int hi = -(1 << 30);
  for (int i = 0; i < N; i++) { v[i] = (i * 37) % 101 - 50; w[i] = (i * 53) % 97 - 40; }
  for (int i = 0; i < N; i++)
    if (v[i] > m) m = v[i];
  for (int i = 0; i < N; i++) {
    if (w[i] < lo) lo = w[i];
  }
  for (int i = 0; i < N; i++)
    if (hi <= w[i]) hi = w[i];
  printf("%f %d %d\\n", m, lo, hi);
  return 0;
}
"""

SMALL_STATEMENTS = HEAD + """enum { ROWS = 40, COLS = ROWS + 3, LAST };
double A[ROWS][COLS], B[ROWS][COLS], z[64]; int c[LAST]; float f[ROWS];
int main(void) {
  for (int i = 0; i < ROWS; i++) for (int j = 0; j < COLS; j++) A[i][j] = B[i][j] = i + j * 0.5;
  for (unsigned k = 0; k < sizeof(z) / sizeof(z[0]); k++) z[k] = k * 0.5;
  for (int k = 0; k < LAST; k++) c[k] = k;
  for (int i = 0; i < ROWS; i++) z[i] = f[i] = i / 3.0;
  double s = 0;
  for (int i = 0; i < ROWS; i++) for (int j = 0; j < COLS; j++) s += A[i][j] + B[i][j];
  printf("%f %.17g %d %.17g\\n", s, z[63], c[LAST - 1], z[7]);
  return 0;
}
"""

BITWISE = HEAD + """#define N 5003
unsigned A[N]; int B[N][64]; unsigned char C[N];
int main(void) {
  for (int i = 0; i < N; i++) { A[i] = (i * 2654435761u) ^ (i << 7); C[i] = (unsigned char)(i * 37); for (int j = 0; j < 64; j++) B[i][j] = (i * 31 + j * 17) % 1000 - 300; }
  unsigned a = ~0u, o = 0, x = 0; int rb[64]; unsigned char cx = 5;
  for (int i = 0; i < N; i++) a &= A[i] | 0x10101010u;
  for (int i = 0; i < N; i++) o = o | (A[i] & 0xff00u);
  for (int i = 0; i < N; i++) x ^= A[i];
  for (int j = 0; j < 64; j++) { rb[j] = 0; for (int i = 0; i < N; i++) rb[j] ^= B[i][j]; }
  for (int i = 0; i < N; i++) cx ^= C[i];
  int h = 0; for (int j = 0; j < 64; j++) h = h * 31 + rb[j];
  printf("%u %u %u %d %u\\n", a, o, x, h, cx);
  return 0;
}
"""

BAND = HEAD + """#define max(a, b) ((a) > (b) ? (a) : (b))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define N 301
double A[N][N], x[N], y[N], z[N];
void band(int n, int w) {
  int i, j;
  for (i = 0; i < n; i++) {
    y[i] = 0;
    for (j = max(0, i - w); j < min(n, i + w + 1); j++)
      y[i] += A[i][j] * x[j];
  }
}
void down(int n) {
  int i, j;
  for (i = n - 1; i >= 0; i--)
    for (j = min(n - 1, i + 2); j >= max(0, i - 2); j--)
      z[i] += A[j][i];
}
int main(void) {
  for (int i = 0; i < N; i++) { x[i] = i % 7; for (int j = 0; j < N; j++) A[i][j] = (i * j) % 5; }
  band(N, 3); band(N - 10, 0); band(1, 5); down(N); down(2);
  double s = 0, t = 0;
  for (int i = 0; i < N; i++) { s += y[i] * (i + 1); t += z[i] * (i + 2); }
  printf("%f %f\\n", s, t);
  return 0;
}
"""

STRIDED = HEAD + """#define N 1001
float a[N], b[N]; double s; long c[N];
void even(int n, int lo) {
  int i;
  for (i = lo; i < n; i += 2) a[i] = b[i] * 2 + i;
}
void odd(unsigned n) { for (unsigned i = 1; i <= n; i += 3) { s += b[i] * (i % 5); } }
void rows(int n) { for (int i = 0; i < n; i += 4) for (int j = i; j < n; j += 7) c[j] += i; }
void flat(int n, unsigned *f) {  /* a step inside a delinearized subscript */
  for (int i = 2; i < n + 2; i += 2)
    for (int j = 0; j < 3; j++)
      f[j * (n + 4) + i + 2] = i + 10 * j;
}
void square(int n, float *g) {  /* (n - 1 - j) * (n + 2) + 2 has an n*n term: n rows of n + 2 */
  for (long j = 0; j < 2; j++)
    g[(n - 1 - j) * (n + 2) + 2] = 1 + j;
}
static unsigned F[4 * 40];
static float G[64];
int main(void) {
  for (int i = 0; i < N; i++) b[i] = i * 0.25f;
  even(N, 0); even(N - 7, 3); even(5, 9); odd(N - 5); odd(0); rows(N); flat(30, F); flat(1, F); square(4, G); square(6, G);
  for (int i = 0; i < 64; i++) s += G[i] * (i + 1);
  for (int i = 0; i < 4 * 40; i++) s += F[i] * (i % 3 + 1);
  double t = s;
  for (int i = 0; i < N; i++) t += a[i] * (i % 7) + c[i];
  printf("%f\\n", t);
  return 0;
}
"""

CASES = {
    "strided": (STRIDED, {7: "parallel", 9: "guarded", 10: "kept:non-unit-stride"}),
    "band_min_max": (BAND, {9: "parallel", 17: "parallel"}),
    "bitwise": (BITWISE, {8: "parallel", 9: "parallel", 10: "parallel", 11: "parallel", 12: "parallel",
                          13: "kept:sequential-dependence"}),
    "small_statements": (SMALL_STATEMENTS, {6: "parallel", 7: "parallel", 8: "parallel", 9: "parallel"}),
    # line -> decision
    "flat": (FLAT, {4: "parallel", 13: "kept:sequential-dependence", 18: "parallel", 23: "guarded"}),
    "computed_base": (COMPUTED_BASE, {7: "parallel"}),
    "if_max": (IF_MAX, {8: "parallel", 10: "parallel", 13: "parallel"}),
}


def _verdict(nest) -> str:  # type: ignore[no-untyped-def]
    if nest.kept is not None:
        return f"kept:{nest.kept.code}"
    return "guarded" if nest.mdh.preconditions else "parallel"


@pytest.mark.parametrize("name", sorted(CASES))
def test_front_end_decision(name: str, tmp_path: Path) -> None:
    text, expected = CASES[name]
    (tmp_path / "in.c").write_text(text)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        nests = analyze_file("in.c", Options()).nests
    finally:
        os.chdir(cwd)
    assert {n.loc.line: _verdict(n) for n in nests if n.loc.line in expected} == expected


def _opencl_available() -> bool:
    try:
        import pyopencl as cl
        return bool(cl.get_platforms())
    except Exception:  # noqa: BLE001 - no OpenCL platform, whatever the error
        return False


@pytest.mark.parametrize(("name", "target"), [
    pytest.param(name, target, id=f"{name}-{target}",
                 marks=pytest.mark.campaign if target == "opencl" and name != "flat" else ())   # README "Run the tests"
    for name in sorted(CASES) for target in ("openmp", "opencl")])
def test_output_matches_original(name: str, target: str, tmp_path: Path) -> None:
    if target == "opencl" and not _opencl_available():
        pytest.skip("no OpenCL device through pyopencl (pip install 'mdpoly[opencl]'; apt-get install pocl-opencl-icd)")
    text, _ = CASES[name]
    src = tmp_path / "in.c"
    src.write_text(text)
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, {}, extra=["-q", "--target", target])
    if target == "openmp":
        parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
        for threads in (1, 2, 3):
            assert run_program(parallel, threads=threads) == reference, f"{name} at {threads} threads ({out_c})"
    else:
        from e2e_harness import c_compiler, run_step
        exe = tmp_path / "ocl"
        run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
        assert run_program(exe) == reference, f"{name} on OpenCL ({out_c})"
