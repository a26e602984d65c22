"""More everyday C idioms (issue 12): non-convex guards, loop headers with several variables,
products of size parameters in bounds, argmax/argmin.

Each program is built as written and through ``mdpoly --all-nests --no-tune``: OpenMP at 1, 2 and
3 threads, OpenCL on this machine's device (PoCL), CUDA kernels compiled with NVRTC (or ``nvcc``)
for sm_90. Outputs are compared exactly (data are small multiples of 1/8, so sums are exact in
any order). The kernels take their sizes at run time and ``main`` calls them for 1, primes and
sizes that are no multiple of any tile. A comment on a nest's first line says what mdpoly must
decide for it: ``/*T*/`` transformed on every target, ``/*T gpu:CODE*/`` transformed for OpenMP
and, in the work-group targets' output, refused by the device with ``CODE`` and run by the OpenMP
target's code on the host, ``/*K CODE*/`` kept with ``CODE`` everywhere
-- so no case can pass by keeping its nest.

Shapes covered: ``if (i != j)`` around an assignment, a scalar and a row reduction (the Jacobi
sum), ``&&``/``||``/``!`` of affine comparisons and an ``if``/``else`` (a domain that is a union
of basic sets, exact at ``n = 1`` where ``i != j`` holds nowhere), ``%`` conditions (a predicate
also over a triangle), an ``if``/``else`` assigning one element, and what stays kept (a
condition on data, statements guarded differently); ``for (i = 0, j = n - 1; i < n;
i++, j--)``, several iterators declared in one header, ``i != n`` conditions, and the header
variables mdpoly must keep (read after the nest, written in the body); ``i < n * m`` with flat
arrays, ``m = 1``, an empty product and overlapping pointers; argmax/argmin with strict and
non-strict comparisons, in the ``if`` block and the ternary form, per row (also over a
triangle), with ties (the first
index wins for ``>``, the last for ``>=``), all-equal arrays, negative values, ``-INFINITY``
values and NaNs (which the sequential loop never takes).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cuda_harness import compile_for_sm90, kernel_sources, nvrtc_unavailable
from e2e_harness import (
    THREAD_COUNTS,
    build_c,
    c_compiler,
    campaign_except,
    mdpoly_available,
    run_mdpoly,
    run_program,
    run_step,
)
from test_opencl_examples import opencl_unavailable

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not available")

SIZES = "int sizes[] = {1, 2, 3, 7, 13, 37, 61, 67}; for (int q = 0; q < 8; q++)"

NOT_EQUAL = r"""
#include <stdio.h>
#define MAXN 70
static double A[MAXN][MAXN], B[MAXN][MAXN], C[MAXN][MAXN], y[MAXN], x[MAXN];
static long cnt;
void offdiag(int n) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j < n; j++)
      if (i != j) B[i][j] = A[i][j] * 2 + i;
}
void jacobi_sum(int n) {
  for (int i = 0; i < n; i++) { /*T*/
    y[i] = 0.5;
    for (int j = 0; j < n; j++)
      if (j != i) y[i] += A[i][j] * x[j];
  }
}
double off_both(int n) {
  double s = 0;
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j < n; j++)
      if (i != j && j != n - 1 - i) s += A[i][j];
  return s;
}
void outside_band(int n) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j < n; j++)
      if (j < i - 2 || j > i + 2) B[i][j] -= 1; else C[i][j] += 0.5;
}
void count(int n) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j < n; j++)
      if (!(i == j)) cnt++;
}
void parity(int n) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j < n; j++)
      if ((i + j) % 2 == 0) C[i][j] = 1;
}
void modulo(int n, int k) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j <= i; j++)
      if (j % k == 1) C[i][j] += 2; else B[i][j] = A[i][j] - j;
}
void select_(int n) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j < n; j++)
      if (i < j) B[i][j] = 1; else B[i][j] *= 2;
}
void data(int n) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j < n; j++)
      if (A[i][j] > 0.5) C[i][j] = 0;
}
void data_written(int n) {
  for (int i = 0; i < n; i++) /*T*/   /* its own text in parallel: the condition is a predicate */
    for (int j = 0; j < n; j++)
      if (C[i][j] > 0.5) { C[i][j] = 0; B[i][j] = C[i][j] + 1; }
}
void mixed(int n) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j < n; j++) {
      double t = A[i][j];
      if (j < i) y[i] += t;
      x[i] += t;
    }
}
int main(void) {
  SIZES {
    int n = sizes[q];
    for (int i = 0; i < MAXN; i++) {
      x[i] = (i % 5) / 4.0; y[i] = -7;
      for (int j = 0; j < MAXN; j++) { A[i][j] = ((i * 3 + j * 5) % 9) / 8.0; B[i][j] = -3; C[i][j] = (i + 2 * j) % 4; }
    }
    cnt = 0;
    offdiag(n); jacobi_sum(n); double s = off_both(n); outside_band(n); count(n); parity(n); modulo(n, 1 + q % 3); select_(n); data(n); data_written(n); mixed(n);
    double w = 0, t = 0;
    for (int i = 0; i < MAXN; i++) {
      t += y[i] * (i % 7 + 1);
      for (int j = 0; j < MAXN; j++) w += (B[i][j] + 3 * C[i][j]) * ((i * 7 + j) % 11 + 1);
    }
    printf("n=%d %.6f %.6f %.6f %ld\n", n, s, t, w, cnt);
  }
  return 0;
}
""".replace("SIZES", SIZES)

HEADERS = r"""
#include <stdio.h>
#define MAXN 70
static double x[MAXN], z[MAXN], C[MAXN][MAXN]; static long w[MAXN], v[MAXN];
void rev(int n) {
  for (int i = 0, j = n - 1; i < n; i++, j--) z[i] = x[j] * 2 + j; /*T*/
}
void c89(int n) {
  int i, k;
  for (i = 0, k = 3; i < n; i++, k += 2) w[i] = k + i; /*T*/
}
void not_equal(int n) {
  for (int i = 0, c = 7; i != n; ++i) v[i] = c * i - 1; /*T*/
}
void down(int n) {
  for (int i = n - 1, j = 0; i >= 0; i--, j++) C[i][j] += x[j]; /*T*/
}
void nested(int n) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0, k = n - 1; j < n; j++, k -= 1) C[i][k] += j;
}
void chained(int n) {
  int i, j;
  for (i = 0, j = i + 1; i < n; i++, j++) v[i] = j; /*K unsupported-statement*/
}
int live(int n) {
  int i, j;
  for (i = 0, j = n; i < n; i++, j--) w[i] = j; /*K unsupported-statement*/
  return j;
}
void body_writes(int n) {
  int i, j;
  for (i = 0, j = 0; i < n; i++) { w[i] = j; j += 2; } /*K unsupported-statement*/
}
int main(void) {
  SIZES {
    int n = sizes[q];
    for (int i = 0; i < MAXN; i++) { x[i] = (i % 9) / 8.0; z[i] = -1; w[i] = -2; v[i] = -3; for (int j = 0; j < MAXN; j++) C[i][j] = (i + j) % 3; }
    rev(n); c89(n); not_equal(n); down(n); nested(n); int e = live(n); body_writes(n / 2); chained(n / 3);
    double s = e;
    for (int i = 0; i < MAXN; i++) {
      s += z[i] * (i + 1) + w[i] * (i % 3 + 1) + v[i] * (i % 5 + 2);
      for (int j = 0; j < MAXN; j++) s += C[i][j] * ((i + 3 * j) % 7 + 1);
    }
    printf("n=%d %.6f\n", n, s);
  }
  return 0;
}
""".replace("SIZES", SIZES)

PRODUCTS = r"""
#include <stdio.h>
#include <stdlib.h>
void scale(int n, int m, float *X, const float *Y) {
  for (int i = 0; i < n * m; i++) X[i] = Y[i] * 2 + 1; /*T*/
}
void reverse(int n, int m, float *X, const float *Y) {
  for (int k = 0; k < n * m; k++) X[k] = Y[n * m - 1 - k] + k; /*T*/
}
double total(int n, int m, const float *Y) {
  double s = 0;
  for (int k = 0; k <= (n + 1) * m - 1; k++) s += Y[k] * (k % 3); /*T*/
  return s;
}
static float G[70][40];
void blocks(int n, int m, int b) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j < m * b; j++) G[i][j] += i - 2 * j;
}
void wraps(unsigned n, unsigned m, float *X) {
  for (unsigned i = 0; i < n * m; i++) X[i] = 3; /*K non-affine-bound*/
}
int main(void) {
  float *A = malloc(sizeof(float) * 5000), *B = malloc(sizeof(float) * 5000);
  int ms[] = {1, 3, 8, 13};
  SIZES {
    for (int r = 0; r < 4; r++) {
      int n = sizes[q], m = ms[r];
      for (int i = 0; i < 5000; i++) { B[i] = (i % 9) * 0.5f; A[i] = -1; }
      scale(n, m, A, B); reverse(n, m, A + n * m, B); double t = total(n, m, B);
      scale(n, 0, A, B);
      scale(n, m, A + 1, A);        /* overlapping: the original runs */
      wraps(n, m, B + 4000); blocks(n, m, 3);
      double s = t;
      for (int i = 0; i < 70; i++) for (int j = 0; j < 40; j++) s += G[i][j] * (j % 5 + 1);
      for (int i = 0; i < 5000; i++) s += A[i] * (i % 7 + 1) + B[i];
      printf("n=%d m=%d %.4f\n", n, m, s);
    }
  }
  free(A); free(B);
  return 0;
}
""".replace("SIZES", SIZES)

ARGMAX = r"""
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
void amax(int n, const double *a, double *pb, int *pi) {
  double best = *pb; int idx = *pi;
  for (int i = 0; i < n; i++) /*T*/
    if (a[i] > best) { best = a[i]; idx = i; }
  *pb = best; *pi = idx;
}
void amax_last(int n, const double *a, double *pb, int *pi) {
  double best = *pb; int idx = *pi;
  for (int i = 0; i < n; i++) /*T*/
    if (best <= a[i]) { idx = i; best = a[i]; }
  *pb = best; *pi = idx;
}
void amin_ternary(int n, const int *a, int *pb, long *pi) {
  int best = *pb; long idx = *pi;
  for (int i = 0; i < n; i++) { /*T*/
    idx = (a[i] < best) ? i : idx;
    best = (a[i] < best) ? a[i] : best;
  }
  *pb = best; *pi = idx;
}
void amin_last(int n, const float *a, float *pb, int *pi) {
  float best = *pb; int idx = *pi;
  for (int i = 0; i < n; i++) /*T*/
    if (a[i] <= best) { best = a[i]; idx = i; }
  *pb = best; *pi = idx;
}
void rows(int n, int m, double A[][67], double *bv, int *bi) {
  for (int i = 0; i < n; i++) { /*T gpu:gpu-array-init*/
    bv[i] = A[i][0]; bi[i] = 0;
    for (int j = 1; j < m; j++)
      if (A[i][j] > bv[i]) { bv[i] = A[i][j]; bi[i] = j; }
  }
}
void rows_acc(int n, int m, double A[][67], double *bv, int *bi) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j < m; j++)
      if (A[i][j] >= bv[i]) { bv[i] = A[i][j]; bi[i] = j; }
}
void tri_rows(int n, double A[][67], double *bv, int *bi) {
  for (int i = 0; i < n; i++) /*T*/
    for (int j = 0; j <= i; j++)
      if (A[i][j] > bv[i]) { bv[i] = A[i][j]; bi[i] = j; }
}
void narrowing(int n, const double *a, float *pb, int *pi) {
  float best = *pb; int idx = *pi;
  for (int i = 0; i < n; i++) /*K sequential-dependence*/
    if (a[i] > best) { best = a[i]; idx = i; }
  *pb = best; *pi = idx;
}
static double A[67][67], bv[67]; static int bi[67];
int main(void) {
  int sizes[] = {1, 2, 3, 7, 13, 37, 61, 67, 1000, 4099, 100003};  /* the largest: several work-groups */
  double *a = malloc(sizeof(double) * 100003); int *w = malloc(sizeof(int) * 100003);
  float *f = malloc(sizeof(float) * 100003);
  for (int mode = 0; mode < 6; mode++)
    for (int q = 0; q < 11; q++) {
      int n = sizes[q];
      for (int i = 0; i < n; i++) {
        switch (mode) {
        case 0: a[i] = (i * 37) % 101 - 50; break;                      /* ties of the maximum */
        case 1: a[i] = 3.0; break;                                      /* all equal */
        case 2: a[i] = -((i * 7) % 13) - 1.0; break;                    /* negative */
        case 3: a[i] = (i % 5 == 2) ? NAN : (i * 11) % 17; break;       /* NaNs */
        case 4: a[i] = -INFINITY; break;
        default: a[i] = (i == n - 1) ? NAN : -((i * 5) % 3); break;    /* a NaN last */
        }
        w[i] = mode == 1 ? 4 : (i * 53) % 97 - 40;
        f[i] = (float) a[i];
      }
      double b = -1e300, b2 = mode == 3 ? NAN : -1e300, b3 = -INFINITY, b4 = -INFINITY;
      int ix = -1, ix2 = -7, ix3 = -5, ix4 = -5, c = 1 << 30, fx = -9, nx = -4;
      long cx = -3;
      float fb = mode == 5 ? NAN : INFINITY, nb = -1e30f;
      amax(n, a, &b, &ix); amax_last(n, a, &b2, &ix2); amin_ternary(n, w, &c, &cx);
      amax(n, a, &b3, &ix3); amax_last(n, a, &b4, &ix4); amin_last(n, f, &fb, &fx);
      narrowing(n, a, &nb, &nx);
      printf("%d %d: %g %d %g %d %d %ld %g %d %g %d %g %d %g %d\n", mode, n, b, ix, b2, ix2, c, cx, b3, ix3,
             b4, ix4, fb, fx, nb, nx);
    }
  for (int i = 0; i < 67; i++) for (int j = 0; j < 67; j++) A[i][j] = (i * 3 + j * 7) % 5 - (j % 11 == 3 ? 9 : 0);
  rows(67, 67, A, bv, bi); rows(61, 1, A, bv, bi); rows(13, 2, A, bv, bi); rows(1, 67, A, bv, bi);
  long s = 0;
  for (int i = 0; i < 67; i++) s += bi[i] * (i + 1) + (long) bv[i] * (i % 3 + 1);
  for (int i = 0; i < 67; i++) { bv[i] = i % 4 - 2; bi[i] = -1; }
  rows_acc(67, 67, A, bv, bi); rows_acc(61, 1, A, bv, bi); rows_acc(13, 0, A, bv, bi); rows_acc(1, 67, A, bv, bi);
  for (int i = 0; i < 67; i++) s += bi[i] * (i + 5) + (long) bv[i] * (i % 5 + 1);
  for (int i = 0; i < 67; i++) { bv[i] = i % 3; bi[i] = -1; }
  tri_rows(67, A, bv, bi); tri_rows(1, A, bv, bi);
  for (int i = 0; i < 67; i++) s += bi[i] * (i + 3) + (long) bv[i] * (i % 4 + 1);
  printf("%ld\n", s);
  free(a); free(w); free(f);
  return 0;
}
"""

SOURCES = {"not_equal": NOT_EQUAL, "headers": HEADERS, "products": PRODUCTS, "argmax": ARGMAX}

_MARK = re.compile(r"/\*(T|K)(?: gpu:([\w-]+)| ([\w-]+))?\*/")


def _expected(src: str, gpu: bool) -> dict[int, tuple[str, str | None]]:
    """Line of each marked nest -> (status, reason code) the report must give."""
    lines = src.lstrip("\n").splitlines()
    out: dict[int, tuple[str, str | None]] = {}
    for k, line in enumerate(lines):
        m = _MARK.search(line)
        if m is None:
            continue
        at = k + 1 if line.lstrip().startswith("for") else k  # a mark after a one-line body: the for line
        while not lines[at - 1].lstrip().startswith("for"):
            at -= 1
        if m.group(1) == "K":
            out[at] = ("kept", m.group(3))
        elif gpu and m.group(2):
            out[at] = ("host", m.group(2))   # transformed by the OpenMP target, the device refusing it
        else:
            out[at] = ("transformed", None)
    return out


def _status(nest: dict, host: bool) -> tuple[str, str | None]:
    """A reported nest as ``_expected`` says it: ``("host", CODE)`` for one the OpenMP target runs
    because the device refused it with ``CODE`` (``mdpoly.hybrid.refused_by_device``)."""
    device = (nest.get("cost") or {}).get("device") or {}
    if host and nest["status"] == "transformed" and device.get("choice") == "refused":
        found = re.search(r"\[([\w-]+)\]$", device["reason"])
        return ("host", found.group(1) if found else device["reason"])
    return (nest["status"], nest.get("code"))


def _transform(name: str, tmp_path: Path, target: str) -> tuple[Path, Path]:
    src = SOURCES[name]
    source = tmp_path / "in.c"
    source.write_text(src.lstrip("\n"))
    out_c = tmp_path / f"out_{target}.c"
    report = tmp_path / f"report_{target}.json"
    run_mdpoly(source, out_c, {}, extra=["-q", "--target", target, "--report", str(report)])
    want = _expected(src, target != "openmp")
    got = {n["line"]: _status(n, want[n["line"]][0] == "host") for n in json.loads(report.read_text())["nests"]
           if n["line"] in want}
    assert got == want
    return source, out_c


def test_marks_are_found() -> None:
    """Every program marks the nests it is about (the harness itself cannot pass vacuously)."""
    for name, src in SOURCES.items():
        assert len(_expected(src, False)) >= 4, name


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_openmp_matches_original(name: str, tmp_path: Path) -> None:
    source, out_c = _transform(name, tmp_path, "openmp")
    want = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    exe = build_c(out_c, tmp_path / "omp", {}, openmp=True)
    for threads in THREAD_COUNTS:
        assert run_program(exe, threads=threads) == want, f"{name} at {threads} threads ({out_c})"


@pytest.mark.parametrize("name", campaign_except(sorted(SOURCES), "products"))
def test_opencl_matches_original(name: str, tmp_path: Path) -> None:
    if opencl_unavailable() is not None:
        pytest.skip(str(opencl_unavailable()))
    source, out_c = _transform(name, tmp_path, "opencl")
    want = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    exe = tmp_path / "ocl"
    run_step([c_compiler(), "-O1", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    # main's double sums inside its size loops are device reductions, summed in another order
    mismatch = compare_outputs(want, run_program(exe), rtol=1e-9, atol=0.0)
    assert mismatch is None, f"{name} on OpenCL ({out_c}): {mismatch}"


# nvcc takes 20-50 s on each of these (NVRTC much less): all a campaign; test_triangular.py and
# test_codegen_regressions.py keep one CUDA case each in the quick set
@pytest.mark.parametrize("name", campaign_except(sorted(SOURCES)))
def test_cuda_kernels_compile(name: str, tmp_path: Path) -> None:
    if nvrtc_unavailable() is not None:
        pytest.skip(str(nvrtc_unavailable()))
    _, out_c = _transform(name, tmp_path, "cuda")
    sources = kernel_sources(out_c.read_text())
    assert sources or any(status == "host" for status, _ in _expected(SOURCES[name], True).values())
    for kname, kernel in sources.items():
        compile_for_sm90(kernel, kname, tmp_path)
