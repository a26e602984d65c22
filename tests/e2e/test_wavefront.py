"""Tiled wavefronts for nests with constant dependence distances (``mdpoly.frontend.wavefront``).

Kernels from their textbook definitions: Gauss--Seidel relaxation in place (5-point, and 9-point,
whose distance ``(1, -1)`` needs the skew ``j + i`` before rectangular tiles are legal) under a
time loop, the longest common subsequence and the edit distance (integer dynamic programming
over ``D[i-1][j]``, ``D[i][j-1]``, ``D[i-1][j-1]``), and an in-place 1-D smoother under a time
loop (the time loop joins the band). Every point computes the same expression from the same
values as in the original order, so outputs must be identical at 1, 2 and 3 threads, floating
point included. Sizes: not multiples of the tile, smaller than one tile, and known only at run
time. Refused: distances that are not constant, and a 1-D in-place sweep (no second loop).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_harness import REPO, build_c, campaign_except, mdpoly_available, run_mdpoly, run_program, run_step

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PRELUDE = """#include <stdio.h>
#include <stdlib.h>
/* sums in a fixed order (a while loop: no candidate for mdpoly), printed exactly */
static void dump(const char *name, const double *v, long n) {
  double s = 0, w = 0;
  long k = 0;
  while (k < n) { s += v[k]; w += v[k] * (k % 7 + 1); k++; }
  printf("%s %.17g %.17g\\n", name, s, w);
}
static void idump(const char *name, const int *v, long n) {
  long s = 0, w = 0;
  long k = 0;
  while (k < n) { s += v[k]; w += (long)v[k] * (k % 7 + 1); k++; }
  printf("%s %ld %ld\\n", name, s, w);
}
"""

SEIDEL_5 = PRELUDE + """#ifndef N
#define N 150
#endif
void kernel_seidel(int tsteps, int n, double A[N][N]) {
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++)
    for (i = 1; i <= n - 2; i++)
      for (j = 1; j <= n - 2; j++)
        A[i][j] = 0.2 * (A[i - 1][j] + A[i][j - 1] + A[i][j] + A[i][j + 1] + A[i + 1][j]);
#pragma endscop
}
int main(void) {
  static double A[N][N];
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = (i * (j + 2)) % 37 + 2.0;
  kernel_seidel(5, N, A);
  dump("A", &A[0][0], (long)N * N);
  return 0;
}
"""

# a source term on the boundary after each sweep: the time loop stays a host loop (one parallel
# region), the sweep a 2-D wavefront in it
SEIDEL_SOURCE = PRELUDE + """#define N 141
void kernel_seidel_source(int tsteps, int n, double A[N][N]) {
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i <= n - 2; i++)
      for (j = 1; j <= n - 2; j++)
        A[i][j] = 0.2 * (A[i - 1][j] + A[i][j - 1] + A[i][j] + A[i][j + 1] + A[i + 1][j]);
    A[0][t + 1] += 1.0;
  }
#pragma endscop
}
int main(void) {
  static double A[N][N];
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = (i * (j + 3)) % 29 + 1.0;
  kernel_seidel_source(7, N, A);
  dump("A", &A[0][0], (long)N * N);
  return 0;
}
"""

# the classic 9-point Gauss--Seidel: A[i-1][j+1] gives the distance (1, -1)
SEIDEL_9 = PRELUDE + """#define N 133
#define M 171
void kernel_seidel9(int tsteps, int n, int m, double A[N][M]) {
  int t, i, j;
#pragma scop
  for (t = 0; t <= tsteps - 1; t++)
    for (i = 1; i <= n - 2; i++)
      for (j = 1; j <= m - 2; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] + A[i][j - 1] + A[i][j] + A[i][j + 1]
                   + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
#pragma endscop
}
int main(void) {
  static double A[N][M];
  for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) A[i][j] = ((i * 7 + j * 3) % 23) * 0.5;
  kernel_seidel9(4, N, M, A);
  dump("A", &A[0][0], (long)N * M);
  return 0;
}
"""

# longest common subsequence: no host loop, the whole nest is the band
LCS = PRELUDE + """#define N 301
#define M 250
void kernel_lcs(int n, int m, const int *x, const int *y, int D[N + 1][M + 1]) {
  int i, j;
#pragma scop
  for (i = 1; i <= n; i++)
    for (j = 1; j <= m; j++)
      D[i][j] = x[i - 1] == y[j - 1] ? D[i - 1][j - 1] + 1 : (D[i - 1][j] >= D[i][j - 1] ? D[i - 1][j] : D[i][j - 1]);
#pragma endscop
}
int main(void) {
  static int x[N], y[M], D[N + 1][M + 1];
  for (int i = 0; i < N; i++) x[i] = (i * 7 + 3) % 5;
  for (int j = 0; j < M; j++) y[j] = (j * 11 + 1) % 5;
  for (int i = 0; i <= N; i++) D[i][0] = 0;
  for (int j = 0; j <= M; j++) D[0][j] = 0;
  kernel_lcs(N, M, x, y, D);
  idump("D", &D[0][0], (long)(N + 1) * (M + 1));
  printf("lcs %d i %d\\n", D[N][M], 0);
  return 0;
}
"""

# edit distance, sizes known only at run time (from the command line), iterators read afterwards
EDIT = PRELUDE + """#define CAP 400
int kernel_edit(int n, int m, int a[CAP], int b[CAP], int D[CAP + 1][CAP + 1]) {
  int i = -1, j = -1;
#pragma scop
  for (i = 1; i <= n; i++)
    for (j = 1; j <= m; j++) {
      int del = D[i - 1][j] + 1, ins = D[i][j - 1] + 1;
      int sub = D[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      D[i][j] = del < ins ? (del < sub ? del : sub) : (ins < sub ? ins : sub);
    }
#pragma endscop
  return i * 1000 + j;
}
int main(int argc, char **argv) {
  static int a[CAP], b[CAP], D[CAP + 1][CAP + 1];
  int n = argc > 1 ? atoi(argv[1]) : 97 + argc, m = argc > 2 ? atoi(argv[2]) : 203 - argc;
  for (int i = 0; i < CAP; i++) { a[i] = (i * 5 + 2) % 4; b[i] = (i * 3 + 1) % 4; }
  for (int i = 0; i <= CAP; i++) D[i][0] = i;
  for (int j = 0; j <= CAP; j++) D[0][j] = j;
  int it = kernel_edit(n, m, a, b, D);
  idump("D", &D[0][0], (long)(CAP + 1) * (CAP + 1));
  printf("dist %d exit %d\\n", D[n][m], it);
  return 0;
}
"""

# the LCS of suffixes, filled from the bottom right (both loops count downwards), and a table whose
# rows are filled upwards and columns left to right (integer data: exact)
SUFFIX_LCS = PRELUDE + """#define N 203
#define M 150
void kernel_suffix(int n, int m, int x[N], int y[M], int S[N + 1][M + 1], int D[N][M]) {
  int i, j;
#pragma scop
  for (i = n - 1; i >= 0; i--)
    for (j = m - 1; j >= 0; j--)
      S[i][j] = x[i] == y[j] ? S[i + 1][j + 1] + 1 : (S[i + 1][j] >= S[i][j + 1] ? S[i + 1][j] : S[i][j + 1]);
  for (i = n - 2; i >= 0; i--)
    for (j = 1; j < m; j++)
      D[i][j] = (D[i + 1][j - 1] + 3 * D[i][j - 1] + D[i + 1][j] + x[i]) % 1000;
#pragma endscop
}
int main(void) {
  static int x[N], y[M], S[N + 1][M + 1], D[N][M];
  for (int i = 0; i < N; i++) x[i] = (i * 7 + 3) % 4;
  for (int j = 0; j < M; j++) y[j] = (j * 5 + 1) % 4;
  for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) D[i][j] = (i + 2 * j) % 9;
  kernel_suffix(N, M, x, y, S, D);
  idump("S", &S[0][0], (long)(N + 1) * (M + 1));
  idump("D", &D[0][0], (long)N * M);
  return 0;
}
"""

# a 1-D in-place smoother: no wavefront along i alone, but the time loop joins the band
SMOOTH_1D = PRELUDE + """#define N 1000
void kernel_smooth(int tsteps, int n, double A[N]) {
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++)
    for (i = 1; i < n - 1; i++)
      A[i] = (A[i - 1] + A[i] + A[i + 1]) / 3.0;
#pragma endscop
}
int main(void) {
  static double A[N];
  for (int i = 0; i < N; i++) A[i] = (i * 13) % 17;
  kernel_smooth(300, N, A);
  dump("A", A, N);
  return 0;
}
"""

# refused: the distance (1, 2j - n + 1) of A[i - 1][n - 1 - j] depends on j
NON_CONSTANT = PRELUDE + """#define N 120
void kernel_flip(int n, double A[N][N]) {
  int i, j;
#pragma scop
  for (i = 1; i < n; i++)
    for (j = 1; j < n; j++)
      A[i][j] = 0.5 * (A[i - 1][n - 1 - j] + A[i][j - 1]);
#pragma endscop
}
int main(void) {
  static double A[N][N];
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = (i + 2 * j) % 9;
  kernel_flip(N, A);
  dump("A", &A[0][0], (long)N * N);
  return 0;
}
"""

# refused: one loop, no second dimension to run a wavefront over
INPLACE_1D = PRELUDE + """#define N 1000
void kernel_sweep(int n, double A[N]) {
  int i;
#pragma scop
  for (i = 1; i < n - 1; i++)
    A[i] = (A[i - 1] + A[i] + A[i + 1]) / 3.0;
#pragma endscop
}
int main(void) {
  static double A[N];
  for (int i = 0; i < N; i++) A[i] = (i * 13) % 17;
  kernel_sweep(N, A);
  dump("A", A, N);
  return 0;
}
"""

# a parallel computation and a wavefront under one time loop: on a GPU target the computation runs
# on the device and the wavefront on the host, so the arrays it names must not stay on the device
MIXED = PRELUDE + """#define N 70
void kernel_mixed(int tsteps, int n, double A[N][N], double B[N][N]) {
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        B[i][j] = A[i][j] * 0.5 + t;
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = 0.25 * (A[i - 1][j] + A[i][j - 1] + B[i][j] + A[i + 1][j]);
  }
#pragma endscop
}
int main(void) {
  static double A[N][N], B[N][N];
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = (i * 3 + j) % 8;
  kernel_mixed(5, N, A, B);
  dump("A", &A[0][0], (long)N * N);
  dump("B", &B[0][0], (long)N * N);
  return 0;
}
"""

#: case -> (program, -D defines, the schedule remark's text)
CASES = {
    # the time loop joins the band (Pluto's hyperplanes t, t+i, t+j): tiles over time too
    "seidel_5": (SEIDEL_5, {}, "[wavefront t,i,j skew i+t,j+t tiles 16x16x16]"),
    "seidel_5_one_tile": (SEIDEL_5, {"N": 13}, "[wavefront t,i,j skew i+t,j+t tiles 16x16x16]"),
    "seidel_5_source": (SEIDEL_SOURCE, {}, "t:seq-in-region{ [wavefront i,j tiles 64x64] }"),
    # the distance (1, -1) of A[i - 1][j + 1]: t, t+i, 2t+i+j
    "seidel_9": (SEIDEL_9, {}, "[wavefront t,i,j skew i+t,j+2*t+i tiles 16x16x16]"),
    "mixed": (MIXED, {}, "t:seq-in-region{ [i:++ j:++ MDH at line 21] [wavefront i,j tiles 64x64] }"),
    "lcs": (LCS, {}, "[wavefront i,j tiles 64x64]"),
    "edit_distance": (EDIT, {}, "[wavefront i,j tiles 64x64]"),
    "suffix_lcs": (SUFFIX_LCS, {}, "[wavefront i,j skew -i,-j tiles 64x64]"),
    "smooth_1d": (SMOOTH_1D, {}, "[wavefront t,i skew i+t tiles 64x64]"),
}

#: case -> (program, the words of the refusal note)
REFUSED = {
    "non_constant": (NON_CONSTANT, "dependence distances of the loops 'i', 'j' are not constant"),
    "inplace_1d": (INPLACE_1D, "a wavefront needs two or more perfectly nested loops"),
}


@pytest.mark.parametrize("name", campaign_except(sorted(CASES), "edit_distance", "mixed", "seidel_5", "seidel_9"))
def test_wavefront_matches_original(name: str, tmp_path: Path) -> None:
    text, defines, shape = CASES[name]
    src = tmp_path / "in.c"
    src.write_text(text)
    reference = run_program(build_c(src, tmp_path / "orig", defines, openmp=False))
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = run_mdpoly(src, out_c, defines, extra=["--report", str(report)])
    assert f"loop nest scheduled: {shape}" in proc.stderr
    nest = next(n for n in json.loads(report.read_text())["nests"] if "schedule" in n)
    waves = [e for e in _entries(nest["schedule"]) if e["kind"] == "wavefront"]
    assert len(waves) == 1 and f"tiles {'x'.join(str(t) for t in waves[0]['tiles'])}]" in shape
    assert "#pragma omp for schedule(static)" in out_c.read_text()
    parallel = build_c(out_c, tmp_path / "par", defines, openmp=True)
    for threads in (1, 2, 3):
        assert run_program(parallel, threads=threads) == reference, f"{name} at {threads} threads ({out_c})"


def _entries(items: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    out = []
    for e in items:
        out.append(e)
        out += _entries(e.get("body", []))
    return out


@pytest.mark.parametrize("sizes", campaign_except([("1", "1"), ("0", "5"), ("3", "0"), ("64", "64"), ("65", "129"), ("400", "3")],
                                                  ("0", "5"), ("65", "129")))
def test_run_time_sizes(sizes: tuple[str, str], tmp_path: Path) -> None:
    """The edit distance at sizes known only when it runs: empty, one point, whole tiles, a tile
    and one more, a long thin table."""
    src = tmp_path / "in.c"
    src.write_text(EDIT)
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    reference = run_step([str(orig), *sizes]).stdout
    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, {}, extra=["-q"])
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (2, 3):
        got = run_step([str(parallel), *sizes], env={**os.environ, "OMP_NUM_THREADS": str(threads)}).stdout
        assert got == reference, f"sizes {sizes} at {threads} threads ({out_c})"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_reason(name: str, tmp_path: Path) -> None:
    text, words = REFUSED[name]
    src = tmp_path / "in.c"
    src.write_text(text)
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = run_mdpoly(src, out_c, {}, extra=["--report", str(report)])
    line = next(k for k, ln in enumerate(text.splitlines(), 1) if ln.startswith("  for (i = 1;"))
    assert f"{src}:{line}:3: note: its loops cannot run as a tiled wavefront: " in proc.stderr
    assert words in proc.stderr and "[no-wavefront]" in proc.stderr
    nest = next(n for n in json.loads(report.read_text())["nests"] if "wavefront" in n)
    assert nest["status"] == "kept" and words in nest["wavefront"]
    assert "long mdp_w =" not in out_c.read_text()
    assert run_program(build_c(out_c, tmp_path / "par", {}, openmp=True), threads=2) == reference


def test_aliased_arrays_run_the_original(tmp_path: Path) -> None:
    """``x`` passed as a row of ``D`` itself: the run-time alias check selects the nest as written."""
    text = LCS.replace("kernel_lcs(N, M, x, y, D);", "kernel_lcs(N, M, &D[3][0], y, D);")
    src = tmp_path / "in.c"
    src.write_text(text)
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, {}, extra=["-q"])
    assert "long mdp_w =" in out_c.read_text()
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 3):
        assert run_program(parallel, threads=threads) == reference


def test_gpu_target_runs_it_on_the_device(tmp_path: Path) -> None:
    """``--target opencl``: a launch per wavefront (``tests/e2e/test_gpu_wavefront.py`` runs it)."""
    src = tmp_path / "in.c"
    src.write_text(SEIDEL_5)
    out_c = tmp_path / "out.c"
    cmd = [sys.executable, "-m", "mdpoly", str(src), "-o", str(out_c), "--target", "opencl", "--all-nests",
           "--no-tune"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    line = next(k for k, ln in enumerate(SEIDEL_5.splitlines(), 1) if ln.startswith("  for (t = 0;"))
    said = next(ln for ln in proc.stderr.splitlines() if ln.startswith(f"{src}:{line}:3: "))
    assert f"the tiled wavefront at line {line} runs on the device: one launch per wavefront" in said, said
    # a work-group per 16x16x16 tile (the cost model's choice over a thread per tile)
    assert "one work-group per tile" in said, said
    assert "long mdp_w =" in out_c.read_text() and "get_group_id(0)" in out_c.read_text()


def test_gpu_target_keeps_with_reason(tmp_path: Path) -> None:
    """The LCS reads ``x`` and ``y`` through pointers without declared sizes: no device form, the
    nest is kept (``--all-nests`` asks for it) with the device translation's reason, located."""
    src = tmp_path / "in.c"
    src.write_text(LCS)
    out_c = tmp_path / "out.c"
    cmd = [sys.executable, "-m", "mdpoly", str(src), "-o", str(out_c), "--target", "opencl", "--all-nests",
           "--no-tune"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    line = next(k for k, ln in enumerate(LCS.splitlines(), 1) if ln.startswith("  for (i = 1;"))
    said = next(ln for ln in proc.stderr.splitlines() if ln.startswith(f"{src}:{line}:3: "))
    assert "[wavefront-openmp-only]" in said and "(on the device: 'x' has no declared size" in said, said
    assert "long mdp_w =" not in out_c.read_text()


def test_unsigned_sizes(tmp_path: Path) -> None:
    """Sizes of unsigned types (``unsigned``, ``size_t``): the generated bounds compute over the
    integers (an empty table, one row, one column, whole and partial tiles)."""
    text = EDIT.replace("int kernel_edit(int n, int m,", "int kernel_edit(unsigned n, size_t m,").replace(
        "int n = argc", "unsigned n = argc").replace(", m = argc > 2", "; size_t m = argc > 2")
    assert "size_t m = argc" in text
    src = tmp_path / "in.c"
    src.write_text(text)
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, {}, extra=["-q"])
    assert "long mdp_w =" in out_c.read_text()
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for sizes in (("0", "7"), ("1", "0"), ("2", "1"), ("130", "64")):
        reference = run_step([str(orig), *sizes]).stdout
        got = run_step([str(parallel), *sizes], env={**os.environ, "OMP_NUM_THREADS": "2"}).stdout
        assert got == reference, f"sizes {sizes} ({out_c})"


@pytest.mark.parametrize(("n", "parallel"), [(20, False), (460, True)])
def test_too_little_work_stays_as_written(n: int, parallel: bool, tmp_path: Path) -> None:
    """Without ``--all-nests``, a wavefront known (from the call site) to run fewer than the cost
    model's ``min_phase_ops()`` operations is kept as written: 5 sweeps of 18 x 18 points are, of
    458 x 458 not."""
    src = tmp_path / "in.c"
    src.write_text(SEIDEL_5)
    out_c = tmp_path / "out.c"
    cmd = [sys.executable, "-m", "mdpoly", str(src), "-o", str(out_c), "--target", "openmp", "--no-tune",
           "-D", f"N={n}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ("long mdp_w =" in out_c.read_text()) == parallel
    line = next(k for k, ln in enumerate(SEIDEL_5.splitlines(), 1) if ln.startswith("  for (t = 0;"))
    said = next(ln for ln in proc.stderr.splitlines() if ln.startswith(f"{src}:{line}:3: "))
    assert ("[too-little-work]" in said) != parallel and ("wavefront t,i,j" in said) == parallel


def test_opencl_runs_the_computation_and_the_wavefront_on_the_device(tmp_path: Path) -> None:
    """OpenCL: the computation and the wavefront (a launch per wavefront) on the device, both on
    the time loop's resident arrays, the program's output that of the original."""
    from test_opencl_examples import opencl_unavailable
    why = opencl_unavailable(str(tmp_path))
    if why is not None:
        pytest.skip(why)
    src = tmp_path / "in.c"
    src.write_text(MIXED)
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    cmd = [sys.executable, "-m", "mdpoly", str(src), "-o", str(out_c), "--target", "opencl", "--all-nests",
           "--no-tune"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "runs on the device: one launch per wavefront" in proc.stderr and "stay on the device over loop 't'" in proc.stderr
    assert "long mdp_w =" in out_c.read_text() and "#pragma omp" not in out_c.read_text()
    exe = tmp_path / "gpu"
    run_step(["cc", "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    assert run_program(exe) == reference


@pytest.mark.campaign   # ThreadSanitizer (README.md "Run the tests")
def test_race_free_under_tsan(tmp_path: Path) -> None:
    """ThreadSanitizer finds no race in the wavefronts inside a time loop's parallel region, nor
    in the time-tiled 9-point Seidel's (a parallel region of their own)."""
    if str(REPO / "tests") not in sys.path:
        sys.path.insert(0, str(REPO / "tests"))
    from fuzz.test_tsan import _tsan_unavailable, assert_race_free, tsan_build
    why = _tsan_unavailable()
    if why is not None:
        pytest.skip(why)
    for name, text in (("source", SEIDEL_SOURCE), ("seidel9", SEIDEL_9)):
        src = tmp_path / f"{name}.c"
        src.write_text(text.replace("#define N 141", "#define N 90").replace("#define N 133", "#define N 40"))
        out_c = tmp_path / f"{name}_out.c"
        run_mdpoly(src, out_c, {}, extra=["-q"])
        assert "#pragma omp for schedule(static)" in out_c.read_text()
        exe = tmp_path / name
        tsan_build(out_c, exe)
        assert_race_free(exe)


# fuzz seed 930073, reduced: inside the host loop 'j' the band's subscripts hold j * n1, a size the
# front end derives (mdp_p_j_n1) and only a computation's call passes; the wavefront printed in
# place named it undeclared, and the output did not compile
DERIVED_SIZE = """#include <stdio.h>
static int a1[3][40][40];
void k0(int n1, int n2, int *a0)
{
  for (int j = 0; j < 3; j++)
    for (int k = 0; k <= n1 - 1; k++)
      for (int l = 0; l < n2; l++)
        a0[j * (n1 + 2) + k + 1] = a1[j][2 * l + 2][k + 1] + a0[j * (n1 + 2) + k + 1] % 7;
}
int main(void) {
  static int a0[3 * 40];
  int i, j, k;
  long s = 0;
  for (i = 0; i < 3; i++) for (j = 0; j < 40; j++) for (k = 0; k < 40; k++) a1[i][j][k] = (i * 5 + j * 3 + k) % 11;
  for (i = 0; i < 3 * 40; i++) a0[i] = i % 9;
  k0(30, 17, a0);
  for (i = 0; i < 3 * 40; i++) s = s * 31 + a0[i];
  printf("%ld\\n", s);
  return 0;
}
"""


def test_derived_size_is_refused_and_the_output_builds(tmp_path: Path) -> None:
    src = tmp_path / "in.c"
    src.write_text(DERIVED_SIZE)
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    proc = run_mdpoly(src, out_c, {})
    # no wavefront over the size mdp_p_j_n1 (only a computation's call passes it); the k loop around
    # its body as written is parallel inside the j loop (the view's row size j*(n1+2) is read per call)
    assert "mdp_w" not in out_c.read_text()
    assert "loop nest scheduled: j:seq-in-region{ [k:++ private-body] }" in proc.stderr, proc.stderr
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 2, 3):
        assert run_program(parallel, threads=threads) == reference
