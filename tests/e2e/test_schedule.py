"""Whole nests become host loops around MDH computations (``mdpoly.frontend.schedule``).

Kernels written from their textbook definitions, the way such codes are usually written
(iterators declared at the top, sizes as parameters, ``#pragma scop``). Each test asserts the
schedule the front end builds (its shape: ``t:seq{ [i:++] [i:++] }``) and runs the program as
written and through mdpoly at 1, 2 and 3 threads: outputs must be identical (inputs are chosen
so that every sum is exact in any order).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available, run_mdpoly, run_program

from mdpoly.frontend import analyze_file
from mdpoly.ir.nest import Computation, HostLoop, PrivateLoop, ScheduleItem
from mdpoly.options import Options

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PRELUDE = """#include <stdio.h>
static void dump(const char *name, const double *v, int n) {
  double s = 0, w = 0;
  for (int k = 0; k < n; k++) { s += v[k]; w += v[k] * (k % 7 + 1); }
  printf("%s %.6f %.6f\\n", name, s, w);
}
"""

JACOBI_1D = PRELUDE + """#define N 1003
#define TSTEPS 20
void kernel_jacobi_1d(int tsteps, int n, double A[N], double B[N]) {
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = 0.25 * (A[i - 1] + 2.0 * A[i] + A[i + 1]);
    for (i = 1; i < n - 1; i++)
      A[i] = 0.25 * (B[i - 1] + 2.0 * B[i] + B[i + 1]);
  }
#pragma endscop
}
int main(void) {
  static double A[N], B[N];
  for (int i = 0; i < N; i++) { A[i] = (i % 11) * 8.0; B[i] = 0; }
  kernel_jacobi_1d(TSTEPS, N, A, B);
  dump("A", A, N); dump("B", B, N);
  return 0;
}
"""

JACOBI_2D = PRELUDE + """#define N 97
void kernel_jacobi_2d(int tsteps, int n, double A[N][N], double B[N][N]) {
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = 0.125 * (4 * A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = 0.125 * (4 * B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
  }
#pragma endscop
}
int main(void) {
  static double A[N][N], B[N][N];
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { A[i][j] = ((i * j) % 13) * 64.0; B[i][j] = 0; }
  kernel_jacobi_2d(6, N, A, B);
  dump("A", &A[0][0], N * N); dump("B", &B[0][0], N * N);
  return 0;
}
"""

GEMM = PRELUDE + """#define NI 67
#define NJ 71
#define NK 59
void kernel_gemm(int ni, int nj, int nk, double alpha, double beta,
                 double C[NI][NJ], double A[NI][NK], double B[NK][NJ]) {
  int i, j, k;
#pragma scop
  for (i = 0; i < ni; i++) {
    for (j = 0; j < nj; j++)
      C[i][j] *= beta;
    for (k = 0; k < nk; k++)
      for (j = 0; j < nj; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
#pragma endscop
}
int main(void) {
  static double A[NI][NK], B[NK][NJ], C[NI][NJ];
  for (int i = 0; i < NI; i++) for (int k = 0; k < NK; k++) A[i][k] = (i * k + 1) % 7;
  for (int k = 0; k < NK; k++) for (int j = 0; j < NJ; j++) B[k][j] = (k + 2 * j) % 5;
  for (int i = 0; i < NI; i++) for (int j = 0; j < NJ; j++) C[i][j] = (i + j) % 3;
  kernel_gemm(NI, NJ, NK, 2.0, 3.0, C, A, B);
  dump("C", &C[0][0], NI * NJ);
  return 0;
}
"""

ATAX = PRELUDE + """#define M 83
#define N 91
void kernel_atax(int m, int n, double A[M][N], double x[N], double y[N], double tmp[M]) {
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    y[i] = 0;
  for (i = 0; i < m; i++) {
    tmp[i] = 0.0;
    for (j = 0; j < n; j++)
      tmp[i] = tmp[i] + A[i][j] * x[j];
    for (j = 0; j < n; j++)
      y[j] = y[j] + A[i][j] * tmp[i];
  }
#pragma endscop
}
int main(void) {
  static double A[M][N], x[N], y[N], tmp[M];
  for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) A[i][j] = (i + j) % 4;
  for (int j = 0; j < N; j++) x[j] = j % 3;
  kernel_atax(M, N, A, x, y, tmp);
  dump("y", y, N); dump("tmp", tmp, M);
  return 0;
}
"""

MEAN_STD = PRELUDE + """#define M 61
#define N 64
void kernel_mean(int m, int n, double float_n, double data[N][M], double mean[M]) {
  int i, j;
#pragma scop
  for (j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }
#pragma endscop
}
int main(void) {
  static double data[N][M], mean[M];
  for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) data[i][j] = (i * j) % 9;
  kernel_mean(M, N, 64.0, data, mean);
  dump("mean", mean, M);
  return 0;
}
"""

# a backward dependence: the statements cannot be distributed, the loop stays as written
RECURRENCE = PRELUDE + """#define N 500
void kernel_rec(int n, double a[N], double b[N]) {
  int i;
#pragma scop
  for (i = 1; i < n; i++) {
    a[i] = b[i - 1] + 1.0;
    b[i] = a[i] * 0.5;
  }
#pragma endscop
}
int main(void) {
  static double a[N], b[N];
  for (int i = 0; i < N; i++) { a[i] = 0; b[i] = i % 3; }
  kernel_rec(N, a, b);
  dump("a", a, N); dump("b", b, N);
  return 0;
}
"""

# a host statement between two bands reads what the first wrote
HOST_STATEMENT = PRELUDE + """#define N 301
void kernel_mix(int tsteps, int n, double a[N], double b[N]) {
  int t, i;
  double edge;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 0; i < n; i++)
      b[i] = a[i] * 0.5 + t;
    edge = b[n - 1] + b[0];
    for (i = 0; i < n; i++)
      a[i] = b[i] + edge;
  }
#pragma endscop
}
int main(void) {
  static double a[N], b[N];
  for (int i = 0; i < N; i++) { a[i] = i % 5; b[i] = 0; }
  kernel_mix(7, N, a, b);
  dump("a", a, N); dump("b", b, N);
  return 0;
}
"""

BICG = PRELUDE + """#define M 53
#define N 61
void kernel_bicg(int m, int n, double A[N][M], double s[M], double q[N], double p[M], double r[N]) {
  int i, j;
#pragma scop
  for (i = 0; i < m; i++)
    s[i] = 0;
  for (i = 0; i < n; i++) {
    q[i] = 0.0;
    for (j = 0; j < m; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
#pragma endscop
}
int main(void) {
  static double A[N][M], s[M], q[N], p[M], r[N];
  for (int i = 0; i < N; i++) { r[i] = i % 4; for (int j = 0; j < M; j++) A[i][j] = (i * j) % 5; }
  for (int j = 0; j < M; j++) p[j] = j % 3;
  kernel_bicg(M, N, A, s, q, p, r);
  dump("s", s, M); dump("q", q, N);
  return 0;
}
"""

# scalars declared at the top (C89) and recomputed in every iteration are private to it; the
# one in the k loop is also read by the statements around its bands, so the k loop's columns run
# in parallel with a copy of nrm each (its last value copied back)
PRIVATE = PRELUDE + """#define N 203
double A[N][N], B[N], C[N], D[N][N], R[N];
void kernel_private(int n) {
  int i, j, k;
  double t, s, u, nrm;
#pragma scop
  for (i = 0; i < n; i++) { t = A[i][0] * 2; B[i] = t * t + 1; }
  for (i = 0; i < n; i++) { s = 0; for (j = 0; j < n; j++) s += A[i][j]; C[i] = s * 0.5; }
  for (i = 0; i < n; i++) { u = B[i]; for (j = 0; j < n; j++) D[i][j] = u + j; }
  for (k = 0; k < 5; k++) {
    nrm = 0.0;
    for (i = 0; i < n; i++)
      nrm += D[i][k] * D[i][k];
    R[k] = nrm;
    for (i = 0; i < n; i++)
      D[i][k] = D[i][k] / (nrm + 1.0);
  }
#pragma endscop
}
int main(void) {
  static double t0[N * N];
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = (i * j) % 7 * 0.5;
  kernel_private(N);
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) t0[i * N + j] = D[i][j];
  dump("B", B, N); dump("C", C, N); dump("D", t0, N * N); dump("R", R, 5);
  return 0;
}
"""

CASES = {
    # the k loop's columns are independent once nrm is private to each iteration (frontend/privatize.py)
    "private": (PRIVATE, "[i:++] | [i:++ j:+] | [i:++ j:++] | [k:++ private nrm]"),
    "jacobi_1d": (JACOBI_1D, "t:seq{ [i:++] [i:++] }"),
    "jacobi_2d": (JACOBI_2D, "t:seq{ [i:++ j:++] [i:++ j:++] }"),
    "gemm": (GEMM, "[i:++ j:++] [i:++ k:+ j:++]"),
    "atax": (ATAX, "[i:++] | [i:++ j:+] [i:+ j:++]"),
    "mean": (MEAN_STD, "[j:++ i:+] [j:++]"),
    "recurrence": (RECURRENCE, "kept"),
    "host_statement": (HOST_STATEMENT, "t:seq{ [i:++] [i:++] }"),
    # two reductions in one loop body reduce over different loops: distributed at statement level
    "bicg": (BICG, "[i:++] | [i:++] [i:+ j:++] [i:++ j:+]"),
}


def _shape(items: tuple[ScheduleItem, ...]) -> str:
    out: list[str] = []
    for it in items:
        if isinstance(it, HostLoop):
            out.append(f"{it.iterator}:seq{{ {_shape(it.body)} }}")
        elif isinstance(it, PrivateLoop):
            out.append(f"[{' '.join(f'{v}:++' for v in it.iterators)} private {', '.join(c.name for c in it.copies)}]")
        elif isinstance(it, Computation):
            nest = it.nest
            if nest.mdh is None:
                out.append(f"[kept:{nest.kept.code if nest.kept else '?'}]")
            else:
                out.append("[" + " ".join(f"{d.iterator}:{d.combine.value}" for d in nest.mdh.dims) + "]")
    return " ".join(out)


def _nest_shape(nest) -> str:  # type: ignore[no-untyped-def]
    if nest.mdh is not None:
        return "[" + " ".join(f"{d.iterator}:{d.combine.value}" for d in nest.mdh.dims) + "]"
    return _shape(nest.schedule) if nest.schedule is not None else "kept"


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_shape(name: str, tmp_path: Path) -> None:
    text, expected = CASES[name]
    (tmp_path / "in.c").write_text(text)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        analysis = analyze_file("in.c", Options())
    finally:
        os.chdir(cwd)
    assert " | ".join(_nest_shape(n) for n in analysis.nests) == expected


@pytest.mark.parametrize("name", sorted(CASES))
def test_scheduled_program_matches_original(name: str, tmp_path: Path) -> None:
    text, _ = CASES[name]
    src = tmp_path / "in.c"
    src.write_text(text)
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, {}, extra=["-q"])
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 2, 3):
        assert run_program(parallel, threads=threads) == reference, f"{name} at {threads} threads ({out_c})"

