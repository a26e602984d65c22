"""Regression tests of issue 9 (never wrong code) for the code generators: C programs -> same output.

Each program is built as written and through ``mdpoly --all-nests --no-tune`` (OpenMP at 2 and 3
threads; OpenCL on this machine's device when there is one; CUDA kernels compiled with NVRTC or
``nvcc`` for sm_90 when a toolkit is installed), its output compared exactly (the data are
multiples of 1/8, so float sums are exact in any order), and the report checked for the nests
the test expects transformed. Every program failed before its fix: iterators seen as ``long``
(``(float)(i - 10u)``, ``sizeof(i)``), extents computed in ``unsigned``, C89-declared iterators
passed to the kernels, typedef casts printed C++-style, two nests on one line, user names and
macros colliding with the generated code, a scaled scalar accumulator.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cuda_harness import compile_for_sm90, kernel_sources, nvrtc_unavailable
from e2e_harness import build_c, c_compiler, campaign_except, mdpoly_available, run_mdpoly, run_program, run_step
from test_opencl_examples import opencl_unavailable

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not available")

# {{{ programs

#: item 2 and 8: the user's expressions see the iterators in their declared types; a typedef
#: cast stays a cast; size parameters declared unsigned do not wrap in the generated bounds.
ITERATOR_TYPES = r"""
#include <stdio.h>
typedef char base;
typedef unsigned int uint_t;
float A[40]; unsigned B[40]; long S[40]; base C[40]; double D[300];
void g(unsigned n, int lo, float *x) {
  for (int i = lo; i < n; i++) x[i] = (float)(i - 10u) + sizeof(i);
}
int main(void) {
  for (int i = 0; i < 40; i++) { A[i] = (float)(i - 10u); B[i] = (i - 10u) >> 4; S[i] = sizeof(i); C[i] = (base)((i + 1) % 4); }
  for (uint_t u = 0; u < 300; u++) D[u] = (double)(u - 400) + (double)sizeof(u) + (u - 7 > 100);
  for (unsigned char c = 0; c < 200; c++) D[c] += (double)(c * 2u - 300) + sizeof(c);
  float x[64];
  for (int i = 0; i < 64; i++) x[i] = -1;
  g(3u, 5, x); g(20u, 0, x);
  double t = 0;
  for (int i = 0; i < 40; i++) t += A[i] + B[i] + S[i] + C[i];
  double d = 0;
  for (int i = 0; i < 300; i++) d += D[i] * (i % 7);
  for (int i = 0; i < 64; i++) d += x[i] * i;
  printf("%f %u %ld %d %f\n", t, B[3], S[0], C[5], d);
  return 0;
}
"""

#: item 5: iterators declared at the top of the function (C89); K large enough for partials
#: and the combine kernel, whose iterator bindings sit in the kernel's outermost block.
C89_MATMUL = r"""
#include <stdio.h>
#define N 5
#define M 3
#define K 20000
float A[N][K], B[K][M], C[N][M];
static void mm(void) {
  int i, j, k;
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++) {
      C[i][j] = 0;
      for (k = 0; k < K; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
}
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < K; j++) A[i][j] = (float)((i * 3 + j) % 7) / 8;
  for (int i = 0; i < K; i++) for (int j = 0; j < M; j++) B[i][j] = (float)((i + 5 * j) % 5) / 8;
  mm();
  double s = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) s += C[i][j] * (i + 1) * (j + 2);
  printf("%.6f\n", s);
  return 0;
}
"""

#: item 6: two nests on one line, and two inside one ``while`` body on one line.
ONE_LINE = r"""
#include <stdio.h>
int a[100], b[100], c[100];
int main(void) {
  for (int i = 0; i < 100; i++) a[i] = i; for (int i = 0; i < 100; i++) b[i] = a[i] * 2;
  int n = 0;
  while (n < 2) { for (int i = 0; i < 100; i++) c[i] += b[i]; for (int i = 0; i < 100; i++) a[i] += c[i]; n++; }
  long s = 0; for (int i = 0; i < 100; i++) s += a[i] * (i % 5);
  printf("%ld\n", s);
  return 0;
}
"""

#: item 9: user macros named like the generated pragmas' words, user functions named like the
#: generated functions (``mdpoly_<function>_<line>``).
USER_NAMES = r"""
#include <stdio.h>
#define schedule(x) oops
#define reduction(x) oops
#define simd oops
#define collapse oops
float a[1000], b[1000], c[40][50];
static int mdpoly_main_13(int x) { return x + 1; }
static int mdpoly_main_15(void) { return 2; }
int main(void) {
  for (int i = 0; i < 1000; i++) a[i] = (float)(i % 17) / 8;
  for (int i = 0; i < 1000; i++) b[i] = a[i] * 3;
  float m = 0;
  for (int i = 0; i < 1000; i++) m = m + b[i];
  for (int i = 0; i < 1000; i++) b[i] = m > b[i] ? b[i] : m;
  for (int i = 0; i < 40; i++) for (int j = 0; j < 50; j++) c[i][j] = b[i * 7 + j] + i;
  printf("%f %f %f %d %d\n", m, b[7], c[3][4], mdpoly_main_13(1), mdpoly_main_15());
  return 0;
}
"""

#: item 10: a local accumulator whose final value is scaled before the store (an internal
#: plan-check error under register blocking), and a scalar declared outside the nest whose final
#: value is live after it.
SCALED_ACCUMULATOR = r"""
#include <stdio.h>
float A0[50], A1[50][30], A2[50];
float s;
int main(void) {
  for (int i = 0; i < 50; i++) for (int j = 0; j < 30; j++) A1[i][j] = (float)((i * 7 + j) % 9) / 8;
  for (int i = 0; i < 50; i++) { float t = 0; for (int j = 0; j < 30; j++) t = t + A1[i][j]; A0[i] = t * 2; }
  for (int i = 0; i < 50; i++) { s = 0; for (int j = 0; j < 30; j++) s = s + A1[i][j]; A2[i] = s * 2; }
  double t = 0;
  for (int i = 0; i < 50; i++) t += A0[i] * (i % 3) + A2[i];
  printf("%f %f\n", t, s);
  return 0;
}
"""

#: a host loop whose body holds a nest with two declarators in its header (``int i = 0, j = 0``):
#: printing the nest's text for the schedule crashed inside pycparserext's generator.
DECL_LIST_HEADER = r"""
#include <stdio.h>
#define N 100
float a[N], b[N], c[N];
int main(void) {
  for (int i = 0; i < N; i++) { b[i] = (float)(i % 8) / 8; c[i] = (float)(i % 5) / 4; }
  for (int t = 0; t < 10; t++) {
    for (int i = 0, j = 0; i < N; i++, j++)
      a[i] = b[j] + 1.0f;
    for (int i = 1; i < N; i++)
      b[i] = a[i - 1] * 0.5f + c[i];
  }
  printf("%f %f\n", a[5], b[7]);
  return 0;
}
"""

# }}}


def _report(path: Path) -> list[dict[str, object]]:
    return json.loads(path.read_text())["nests"]  # type: ignore[no-any-return]


def _transform(src: str, tmp_path: Path, target: str) -> tuple[Path, Path, list[dict[str, object]]]:
    """``src`` written to ``in.c``, built as written (its output in ``want``), and ``out.c``."""
    source = tmp_path / "in.c"
    source.write_text(src.lstrip("\n"))
    out_c = tmp_path / f"out_{target}.c"
    report = tmp_path / f"report_{target}.json"
    run_mdpoly(source, out_c, {}, extra=["-q", "--target", target, "--report", str(report)])
    return source, out_c, _report(report)


def _transformed_lines(nests: list[dict[str, object]]) -> set[int]:
    return {int(n["line"]) for n in nests if n["status"] == "transformed"}  # type: ignore[call-overload]


def check_openmp(src: str, tmp_path: Path, expect_lines: set[int]) -> str:
    """Build ``src`` as written and through mdpoly (OpenMP); same output at 2 and 3 threads."""
    source, out_c, nests = _transform(src, tmp_path, "openmp")
    assert expect_lines <= _transformed_lines(nests), nests
    want = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    exe = build_c(out_c, tmp_path / "omp", {}, openmp=True)
    for threads in (2, 3):
        assert run_program(exe, threads=threads) == want, out_c.read_text()
    return want


def check_opencl(src: str, tmp_path: Path, expect_lines: set[int]) -> None:
    if opencl_unavailable() is not None:
        pytest.skip(str(opencl_unavailable()))
    source, out_c, nests = _transform(src, tmp_path, "opencl")
    assert expect_lines <= _transformed_lines(nests), nests
    want = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    exe = tmp_path / "ocl"
    run_step([c_compiler(), "-O1", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    assert run_program(exe) == want


def check_cuda_kernels(src: str, tmp_path: Path, expect_lines: set[int]) -> None:
    if nvrtc_unavailable() is not None:
        pytest.skip(str(nvrtc_unavailable()))
    _, out_c, nests = _transform(src, tmp_path, "cuda")
    assert expect_lines <= _transformed_lines(nests), nests
    sources = kernel_sources(out_c.read_text())
    assert sources
    for name, kernel in sources.items():
        compile_for_sm90(kernel, name, tmp_path)


#: name -> (program, lines of the nests transformed for OpenMP, for OpenCL/CUDA (which keep
#: nests over typedef'd element types))
PROGRAMS: dict[str, tuple[str, set[int], set[int]]] = {
    "iterator_types": (ITERATOR_TYPES, {6, 9, 10, 11}, {6, 10, 11}),
    "c89_matmul": (C89_MATMUL, {8}, {8}),
    "one_line": (ONE_LINE, {4, 6}, {4, 6}),
    "user_names": (USER_NAMES, {10, 11, 13, 14, 15}, {10, 11, 13, 14, 15}),
    "scaled_accumulator": (SCALED_ACCUMULATOR, {6}, set()),
    "decl_list_header": (DECL_LIST_HEADER, {6}, {6}),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_openmp_matches_original(name: str, tmp_path: Path) -> None:
    src, lines, _ = PROGRAMS[name]
    check_openmp(src, tmp_path, lines)


@pytest.mark.parametrize("name", campaign_except(sorted(PROGRAMS), "c89_matmul"))
def test_opencl_matches_original(name: str, tmp_path: Path) -> None:
    src, _, lines = PROGRAMS[name]
    check_opencl(src, tmp_path, lines)


@pytest.mark.parametrize("name", campaign_except(sorted(PROGRAMS), "c89_matmul"))
def test_cuda_kernels_compile(name: str, tmp_path: Path) -> None:
    src, _, lines = PROGRAMS[name]
    check_cuda_kernels(src, tmp_path, lines)
