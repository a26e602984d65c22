"""Non-rectangular domains (issue 12, item 1): triangles, bands and guards, on every target.

Each program is built as written and through ``mdpoly --all-nests --no-tune``: OpenMP at 1, 2 and
3 threads (and once under AddressSanitizer, where an input read outside the domain would be a
heap overflow), OpenCL on this machine's device (PoCL), CUDA kernels compiled with NVRTC (or
``nvcc``) for sm_90. Outputs are compared exactly: the data are small multiples of 1/8, so every
sum is exact in any order. The kernels take their sizes at run time and ``main`` calls them for
1, 2, primes and sizes that are not multiples of any tile (symbolic sizes), besides one static
size; sentinels in the parts of the outputs outside the domain must survive.

Shapes covered: the reduction loop constrained (``y[i] = 0; for j >= i``, an ``init`` output whose
last rows reduce over nothing), the concat loop constrained (syrk: ``for k, for j <= i``), upper
and lower triangles, a triangle with an empty last row (``j = i + 1 .. n``), a band from ``if``
guards, a concat-only copy, a scalar reduction over a triangle, a Cholesky-style row update, and
an input read at ``x[j - i]`` from an exactly-sized ``malloc``, which the box would overrun.
"""

from __future__ import annotations

import json
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

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not available")

PRELUDE = r"""
#include <stdio.h>
#include <stdlib.h>
#define MAXN 70
static double A[MAXN][MAXN], B[MAXN][MAXN], C[MAXN][MAXN], y[MAXN], x[MAXN];
static void fill(int n) {
  for (int i = 0; i < MAXN; i++) {
    x[i] = (i % 5) / 4.0; y[i] = -7;
    for (int j = 0; j < MAXN; j++) { A[i][j] = ((i * 3 + j * 5) % 9) / 8.0; B[i][j] = -3; C[i][j] = (i + 2 * j) % 4; }
  }
}
static void dump(const char *tag, int n) {
  double s = 0, w = 0;
  for (int i = 0; i < MAXN; i++) {
    s += y[i] * (i % 7 + 1);
    for (int j = 0; j < MAXN; j++) w += (B[i][j] + 3 * C[i][j]) * ((i * 7 + j) % 11 + 1);
  }
  printf("%s n=%d %.6f %.6f\n", tag, n, s, w);
}
"""

#: sizes every program runs at (symbolic sizes: the generated code is size-generic)
SIZES = "int sizes[] = {1, 2, 3, 7, 13, 37, 61, 67}; for (int q = 0; q < 8; q++)"

#: name -> (kernels, body of main's per-size loop, line numbers of the nests that must be transformed)
PROGRAMS: dict[str, tuple[str, str]] = {
    # reduction loop constrained: upper-triangular matrix-vector product, y[i] = 0 first
    "trmv_upper": (r"""
void trmv(int n, double A[MAXN][MAXN], double x[MAXN], double y[MAXN]) {
  for (int i = 0; i < n; i++) {
    y[i] = 0;
    for (int j = i; j < n; j++)
      y[i] += A[i][j] * x[j];
  }
}
""", "trmv(n, A, x, y);"),
    # empty last row, a non-neutral init: y[i] = 1 + sum_{j > i}
    "strict_upper_init": (r"""
void su(int n, double A[MAXN][MAXN], double x[MAXN], double y[MAXN]) {
  for (int i = 0; i < n; i++) {
    y[i] = 1;
    for (int j = i + 1; j < n; j++)
      y[i] += A[i][j] * x[j];
  }
}
""", "su(n, A, x, y);"),
    # concat loop constrained (syrk-like, lower triangle of C), accumulate into C
    "syrk_lower": (r"""
void syrk(int n, int m, double alpha, double A[MAXN][MAXN], double C[MAXN][MAXN]) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
}
""", "syrk(n, n / 2 + 1, 1.5, A, C);"),
    # upper triangle, both loops concat (trmm-like: B = triu(A) * C over k >= i)
    "trmm_upper": (r"""
void trmm(int n, double A[MAXN][MAXN], double C[MAXN][MAXN], double B[MAXN][MAXN]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      B[i][j] = 0;
      for (int k = i; k < n; k++)
        B[i][j] += A[i][k] * C[k][j];
    }
}
""", "trmm(n, A, C, B);"),
    # concat-only lower-triangular copy; the upper part of B keeps its sentinel
    "lower_copy": (r"""
void lcopy(int n, double A[MAXN][MAXN], double B[MAXN][MAXN]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++)
      B[i][j] = A[i][j] + 1;
}
""", "lcopy(n, A, B);"),
    # a band from if guards (concat-only)
    "band_guard": (r"""
void band(int n, double A[MAXN][MAXN], double B[MAXN][MAXN]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (j >= i - 2 && j <= i + 1)
        B[i][j] = 2 * A[i][j];
}
""", "band(n, A, B);"),
    # a scalar reduction over the strict upper triangle
    "triangle_sum": (r"""
double tsum(int n, double A[MAXN][MAXN]) {
  double s = 0.5;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      s += A[i][j] * (i % 3 + 1);
  return s;
}
""", "y[0] = tsum(n, A);"),
    # Cholesky-style row update: y[i] = A[i][i] - sum_{k < i} A[i][k]^2 (k range empty on row 0)
    "chol_row": (r"""
void chol(int n, double A[MAXN][MAXN], double y[MAXN]) {
  for (int i = 0; i < n; i++) {
    y[i] = A[i][i];
    for (int k = 0; k < i; k++)
      y[i] -= A[i][k] * A[i][k];
  }
}
""", "chol(n, A, y);"),
    # x[j - i] from an exactly-sized heap array: outside the domain (j < i) it would underflow
    "shifted_read": (r"""
void shifted(int n, const double *v, double A[MAXN][MAXN], double y[MAXN]) {
  for (int i = 0; i < n; i++) {
    y[i] = 0;
    for (int j = i; j < n; j++)
      y[i] += A[i][j] * v[j - i];
  }
}
""", "{ double *v = malloc(sizeof(double) * n); for (int k = 0; k < n; k++) v[k] = (k % 3) / 2.0;"
     " shifted(n, v, A, y); free(v); }"),
    # max over a lower triangle (max's neutral element outside the domain)
    "row_max_lower": (r"""
void rmax(int n, double A[MAXN][MAXN], double y[MAXN]) {
  for (int i = 0; i < n; i++) {
    y[i] = -100;
    for (int j = 0; j <= i; j++)
      y[i] = y[i] > A[i][j] - j ? y[i] : A[i][j] - j;
  }
}
""", "rmax(n, A, y);"),
}

#: one static size (constant extents, the default tiles differ)
STATIC_SYRK = PRELUDE + r"""
#define N 53
#define M 29
void syrk_static(double A[MAXN][MAXN], double C[MAXN][MAXN]) {
  for (int i = 0; i < N; i++)
    for (int k = 0; k < M; k++)
      for (int j = 0; j <= i; j++)
        C[i][j] += A[i][k] * A[j][k];
}
int main(void) {
  fill(N);
  syrk_static(A, C);
  dump("static", N);
  return 0;
}
"""


def program(name: str) -> str:
    kernels, call = PROGRAMS[name]
    return (PRELUDE + kernels + "int main(void) {\n  " + SIZES + " {\n    int n = sizes[q];\n    fill(n);\n    "
            + call + "\n    dump(\"" + name + "\", n);\n  }\n  return 0;\n}\n")


def all_programs() -> dict[str, str]:
    out = {name: program(name) for name in PROGRAMS}
    out["syrk_static"] = STATIC_SYRK
    return out


SOURCES = all_programs()


#: programs whose kernel the work-group targets cannot run, and why (not a domain matter): the
#: OpenMP target's code runs it on the host in their output (``mdpoly.hybrid.refused_by_device``).
#: None now: chol_row's ``y[i] = A[i][i]; y[i] -= ...`` (a start value read from an array) runs on
#: the device with the start value added after reducing (``mdpoly.lower.start_values``)
GPU_KEPT: dict[str, str] = {}


def _transform(src: str, tmp_path: Path, target: str, kept: str | None = None) -> tuple[Path, Path]:
    """``src`` as ``in.c`` and mdpoly's ``out_<target>.c``; the kernel's nest must be transformed
    (on the host where the device refuses it with the reason code ``kept``)."""
    source = tmp_path / "in.c"
    source.write_text(src.lstrip("\n"))
    out_c = tmp_path / f"out_{target}.c"
    report = tmp_path / f"report_{target}.json"
    run_mdpoly(source, out_c, {}, extra=["-q", "--target", target, "--report", str(report)])
    nests = json.loads(report.read_text())["nests"]
    lines = src.lstrip("\n").splitlines()
    kernel = 1 + next(k for k, line in enumerate(lines) if "for (int i = 0; i < n;" in line or "i < N;" in line)
    status = [(n["status"], n.get("code")) for n in nests if n["line"] == kernel]
    assert status == [("transformed", None)], nests
    if kept:
        device = next(n for n in nests if n["line"] == kernel)["cost"]["device"]
        assert device["choice"] == "refused" and f"[{kept}]" in device["reason"], device
    return source, out_c


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_openmp_matches_original(name: str, tmp_path: Path) -> None:
    source, out_c = _transform(SOURCES[name], tmp_path, "openmp")
    want = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    exe = build_c(out_c, tmp_path / "omp", {}, openmp=True)
    for threads in THREAD_COUNTS:
        assert run_program(exe, threads=threads) == want, out_c.read_text()


@pytest.mark.parametrize("name", ["shifted_read", "trmv_upper", "syrk_lower", "triangle_sum"])
def test_openmp_reads_only_the_domain(name: str, tmp_path: Path) -> None:
    """Under AddressSanitizer: no read or write outside the arrays (``shifted_read`` would underflow
    its heap array at every point of the box below the diagonal)."""
    source, out_c = _transform(SOURCES[name], tmp_path, "openmp")
    want = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    exe = tmp_path / "asan"
    run_step([c_compiler(), "-O1", "-g", "-fopenmp", "-fsanitize=address", "-fno-omit-frame-pointer",
              str(out_c), "-o", str(exe), "-lm"])
    assert run_program(exe, threads=2) == want


@pytest.mark.parametrize("name", campaign_except(sorted(SOURCES), "syrk_lower"))
def test_opencl_matches_original(name: str, tmp_path: Path) -> None:
    if opencl_unavailable() is not None:
        pytest.skip(str(opencl_unavailable()))
    source, out_c = _transform(SOURCES[name], tmp_path, "opencl", GPU_KEPT.get(name))
    want = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    exe = tmp_path / "ocl"
    run_step([c_compiler(), "-O1", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    assert run_program(exe) == want, out_c.read_text()


@pytest.mark.parametrize("name", campaign_except(sorted(SOURCES), "lower_copy"))
def test_cuda_kernels_compile(name: str, tmp_path: Path) -> None:
    if nvrtc_unavailable() is not None:
        pytest.skip(str(nvrtc_unavailable()))
    _, out_c = _transform(SOURCES[name], tmp_path, "cuda", GPU_KEPT.get(name))
    sources = kernel_sources(out_c.read_text())
    assert sources or name in GPU_KEPT
    for kname, kernel in sources.items():
        compile_for_sm90(kernel, kname, tmp_path)


def test_c89_iterators_dead_after_a_triangle_need_no_exit_value(tmp_path: Path) -> None:
    """PolyBench style: iterators declared at the top, reused by the next loop (so dead after the
    triangle): the nest is transformed; a function returning its iterators keeps its nest."""
    src = tmp_path / "in.c"
    src.write_text("""#include <stdio.h>
#define N 61
double A[N][N], C[N][N];
void syrk(int n, double alpha, double beta) {
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (k = 0; k < n; k++)
      for (j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++)
      C[i][j] = -1;
#pragma endscop
}
int last(int n) {
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j <= i; j++)
      C[i][j] += 1;
#pragma endscop
  return i * 1000 + j;
}
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { A[i][j] = (i + j) % 5; C[i][j] = 1; }
  syrk(N, 2.0, 3.0);
  int r = last(N);
  double s = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += C[i][j] * (j + 1);
  printf("%f %d\\n", s, r);
  return 0;
}
""")
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    proc = run_mdpoly(src, out_c, {}, extra=["--no-tune"])
    assert "7:3: remark: loop nest scheduled" in proc.stderr and "14:3: remark: loop nest parallelized" in proc.stderr
    # j is read after this one, and its exit value depends on the triangle: kept
    assert "22:3: note: loop nest kept sequential: iterator 'j' is declared before the nest" in proc.stderr
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 3):
        assert run_program(parallel, threads=threads) == reference
