"""Wavefronts along a hyperplane for bands with non-uniform dependences
(``mdpoly.frontend.wavefront.hyperplane_band``).

Kernels from their textbook definitions, integer data (exact at any number of threads):

* Nussinov's RNA folding: ``T[i][j]`` (the most nested base pairs of ``s[i..j]``) is the best of
  ``T[i+1][j]``, ``T[i][j-1]``, ``T[i+1][j-1]`` plus a pair of ``s[i]`` and ``s[j]``, and every
  split ``T[i][k] + T[k+1][j]``; rows from the last upwards. Every dependence comes from a cell
  of a shorter interval: the anti-diagonals ``j - i`` are a legal sequential order and the cells
  of one are independent.
* The optimal matrix-chain order (Cormen et al., 15.2): ``M[i][j] = min_k M[i][k] + M[k+1][j] +
  p[i-1] p[k] p[j]``, in the row-wise form (``i`` downwards) and in the textbook's form by chain
  length (``for len, for i, for k`` over ``M[i][i+len]``: there the loop over ``i`` is parallel already).
* Three loops with dependences along each, one over a range (``h = j + l``).

Refused: a scalar whose value flows into the band, dependences no hyperplane with small
coefficients orders, and Floyd--Warshall, whose points run no loop (too little work per point for
a barrier per hyperplane); the reason is reported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_harness import REPO, build_c, campaign_except, mdpoly_available, run_mdpoly, run_step

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PRELUDE = """#include <stdio.h>
#include <stdlib.h>
static void ldump(const char *name, const long *v, long n) {
  long s = 0, w = 0;
  long k = 0;
  while (k < n) { s += v[k]; w += v[k] * (k % 7 + 1); k++; }
  printf("%s %ld %ld\\n", name, s, w);
}
"""

NUSSINOV = PRELUDE + """#define CAP 300
static int pairs(int a, int b) { return a + b == 3; }
int kernel_nussinov(int n, int s[CAP], long T[CAP][CAP]) {
  int i, j = -7, k;
  long best, split;
#pragma scop
  for (i = n - 2; i >= 0; i--)
    for (j = i + 1; j < n; j++) {
      best = T[i + 1][j] > T[i][j - 1] ? T[i + 1][j] : T[i][j - 1];
      split = T[i + 1][j - 1] + (s[i] + s[j] == 3 ? 1 : 0);
      best = split > best ? split : best;
      for (k = i + 1; k < j; k++) {
        split = T[i][k] + T[k + 1][j];
        best = split > best ? split : best;
      }
      T[i][j] = best;
    }
#pragma endscop
  return i * 1000 + j;
}
int main(int argc, char **argv) {
  static int s[CAP];
  static long T[CAP][CAP];
  int n = argc > 1 ? atoi(argv[1]) : 157 + argc;
  for (int i = 0; i < CAP; i++) s[i] = (i * 7 + i / 3) % 4;
  int it = kernel_nussinov(n, s, T);
  ldump("T", &T[0][0], (long)CAP * CAP);
  printf("best %ld exit %d pairs %d\\n", n > 0 ? T[0][n - 1] : -1L, it, pairs(s[0], s[1]));
  return 0;
}
"""

# the matrix chain, rows from the last upwards (no loop parallel as written)
CHAIN_ROWS = PRELUDE + """#define CAP 200
void kernel_chain(int n, long p[CAP + 1], long M[CAP + 1][CAP + 1]) {
  int i, j, k;
  long best, cost;
#pragma scop
  for (i = n - 1; i >= 1; i--)
    for (j = i + 1; j <= n; j++) {
      best = 1L << 60;
      for (k = i; k < j; k++) {
        cost = M[i][k] + M[k + 1][j] + p[i - 1] * p[k] * p[j];
        best = cost < best ? cost : best;
      }
      M[i][j] = best;
    }
#pragma endscop
}
int main(int argc, char **argv) {
  static long p[CAP + 1], M[CAP + 1][CAP + 1];
  int n = argc > 1 ? atoi(argv[1]) : 131;
  for (int i = 0; i <= CAP; i++) p[i] = (i * 13) % 17 + 2;
  kernel_chain(n, p, M);
  ldump("M", &M[0][0], (long)(CAP + 1) * (CAP + 1));
  return 0;
}
"""

# the matrix chain by chain length, as in the textbook: the loop over i is parallel as written
CHAIN_LENGTHS = PRELUDE + """#define CAP 200
void kernel_chain(int n, long p[CAP + 1], long M[CAP + 1][CAP + 1]) {
  int len, i, k;
  long best, cost;
#pragma scop
  for (len = 1; len < n; len++)
    for (i = 1; i + len <= n; i++) {
      best = 1L << 60;
      for (k = i; k < i + len; k++) {
        cost = M[i][k] + M[k + 1][i + len] + p[i - 1] * p[k] * p[i + len];
        best = cost < best ? cost : best;
      }
      M[i][i + len] = best;
    }
#pragma endscop
}
int main(int argc, char **argv) {
  static long p[CAP + 1], M[CAP + 1][CAP + 1];
  int n = argc > 1 ? atoi(argv[1]) : 131;
  for (int i = 0; i <= CAP; i++) p[i] = (i * 13) % 17 + 2;
  kernel_chain(n, p, M);
  ldump("M", &M[0][0], (long)(CAP + 1) * (CAP + 1));
  return 0;
}
"""

# Nussinov under a repetition loop whose body also changes the table: the repetition loop is one
# parallel region, the folding a wavefront run by its threads
REPEATED = NUSSINOV.replace("""#pragma scop
  for (i = n - 2; i >= 0; i--)""", """  int r;
#pragma scop
  for (r = 0; r < 3; r++) {
  T[0][n - 1] = T[0][n - 1] + 5;
  for (i = n - 2; i >= 0; i--)""").replace("""      T[i][j] = best;
    }
#pragma endscop""", """      T[i][j] = best + r;
    }
  }
#pragma endscop""")

# a running total carried from one point to the next: no copy per thread removes that dependence
CARRIED = NUSSINOV.replace("best = T[i + 1][j] > T[i][j - 1]", "best = total + (T[i + 1][j] > T[i][j - 1]").replace(
    "? T[i + 1][j] : T[i][j - 1];", "? T[i + 1][j] : T[i][j - 1]);").replace(
    "      T[i][j] = best;", "      T[i][j] = best;\n      total = best % 5;").replace(
    "long best, split;", "long best, split, total = 0;").replace(
    # (the k loop reads the total too: no maximum the loop could reduce in parallel on its own)
    "        best = split > best ? split : best;\n", "        best = split > best ? split : best + total % 2;\n")

# the row above read mirrored: sources all along the previous row, no hyperplane orders them
MIRRORED = PRELUDE + """#define CAP 120
void kernel_mirror(int n, long A[CAP][CAP]) {
  int i, j, k;
  long acc;
#pragma scop
  for (i = 1; i < n; i++)
    for (j = 1; j < n; j++) {
      acc = A[i - 1][n - 1 - j] + A[i][j - 1];
      for (k = 0; k < 3; k++)
        acc = (acc * 3 + A[i][k]) % 1000;
      A[i][j] = acc % 1000;
    }
#pragma endscop
}
int main(int argc, char **argv) {
  static long A[CAP][CAP];
  int n = argc > 1 ? atoi(argv[1]) : 100;
  for (int i = 0; i < CAP; i++) for (int j = 0; j < CAP; j++) A[i][j] = (i + 2 * j) % 9;
  kernel_mirror(n, A);
  ldump("A", &A[0][0], (long)CAP * CAP);
  return 0;
}
"""

# three loops, dependences along each (the previous i plane read over a range of l): l's loop
# computed from h = j + l, the points of one h shared along i
THREE = PRELUDE + """#define CAP 40
void kernel_three(int n, long X[CAP][CAP][CAP]) {
  int i, j, l, k;
  long acc;
#pragma scop
  for (i = 1; i < n; i++)
    for (j = 1; j < n; j++)
      for (l = 1; l < n; l++) {
        acc = X[i][j][l - 1] + X[i][j - 1][l];
        for (k = 0; k < l; k++)
          acc = (acc * 3 + X[i - 1][j][k]) % 10007;
        X[i][j][l] = acc;
      }
#pragma endscop
}
int main(int argc, char **argv) {
  static long X[CAP][CAP][CAP];
  int n = argc > 1 ? atoi(argv[1]) : 37;
  for (int a = 0; a < CAP; a++) for (int b = 0; b < CAP; b++) for (int c = 0; c < CAP; c++)
    X[a][b][c] = (a * 3 + b * 5 + c) % 11;
  kernel_three(n, X);
  ldump("X", &X[0][0][0], (long)CAP * CAP * CAP);
  return 0;
}
"""

# reads of the previous i plane along an anti-diagonal of (j, l) as long as l: no skew makes every
# distance (1, k, -k) non-negative (tiles are refused), the hyperplane i + j + l orders them all
DIAGONAL = PRELUDE + """#define CAP 40
void kernel_diagonal(int n, long X[CAP][2 * CAP][CAP]) {
  int i, j, l, k;
  long acc;
#pragma scop
  for (i = 1; i < n; i++)
    for (j = 1; j < n; j++)
      for (l = 1; l < n; l++) {
        acc = X[i][j - 1][l] + X[i][j][l - 1];
        for (k = 0; k <= l; k++)
          acc = (acc * 3 + X[i - 1][j + k][l - k]) % 10007;
        X[i][j][l] = acc;
      }
#pragma endscop
}
int main(int argc, char **argv) {
  static long X[CAP][2 * CAP][CAP];
  int n = argc > 1 ? atoi(argv[1]) : 37;
  for (int a = 0; a < CAP; a++) for (int b = 0; b < 2 * CAP; b++) for (int c = 0; c < CAP; c++)
    X[a][b][c] = (a * 3 + b * 5 + c) % 11;
  kernel_diagonal(n, X);
  ldump("X", &X[0][0][0], (long)CAP * 2 * CAP * CAP);
  return 0;
}
"""

#: case -> (program, the schedule's words, the sizes to run at)
CASES = {
    "nussinov": (NUSSINOV, "[wavefront i,j skew -i tiles 64x64]", ("0", "1", "2", "3", "64", "300")),
    "chain_rows": (CHAIN_ROWS, "[wavefront i,j skew -i tiles 64x64]", ("1", "2", "5", "200")),
    "three": (THREE, "[wavefront i,j,l tiles 16x16x16]", ("1", "2", "40")),
    "diagonal": (DIAGONAL, "[wavefront i,j,l hyperplane i+j+l]", ("1", "2", "3", "40")),
    "repeated": (REPEATED, "r:seq-in-region{ [wavefront i,j skew -i tiles 64x64] }", ("2", "90")),
}


def _mdpoly(src: Path, out_c: Path, report: Path) -> subprocess.CompletedProcess[str]:
    return run_mdpoly(src, out_c, {}, extra=["--report", str(report)])


def _run(exe: Path, size: str, threads: int | None = None) -> str:
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    return run_step([str(exe), size], env=env).stdout


@pytest.mark.parametrize("name", campaign_except(sorted(CASES), "nussinov", "three"))
def test_hyperplane_matches_original(name: str, tmp_path: Path) -> None:
    text, words, sizes = CASES[name]
    src = tmp_path / "in.c"
    src.write_text(text)
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = _mdpoly(src, out_c, report)
    assert words in proc.stderr, proc.stderr
    nest = next(n for n in json.loads(report.read_text())["nests"] if "schedule" in n)
    waves = [e for e in _entries(nest["schedule"]) if e["kind"] == "wavefront"]
    assert len(waves) == 1 and (f"hyperplane {waves[0].get('hyperplane')}]" in words) == ("hyperplane" in words)
    assert "#pragma omp for schedule(static)" in out_c.read_text()
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for size in sizes:
        reference = _run(orig, size)
        for threads in (1, 2, 3):
            assert _run(parallel, size, threads) == reference, f"{name} n={size} at {threads} threads ({out_c})"


def _entries(items: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    out = []
    for e in items:
        out.append(e)
        out += _entries(e.get("body", []))
    return out


def test_chain_by_length_matches_original(tmp_path: Path) -> None:
    """The textbook's order by chain length: the loop over ``i`` runs in parallel (as a parallel
    loop around its body, inside the sequential loop over lengths), the result that of the original."""
    src = tmp_path / "in.c"
    src.write_text(CHAIN_LENGTHS)
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = _mdpoly(src, out_c, report)
    assert "loop nest scheduled:" in proc.stderr and "#pragma omp" in out_c.read_text(), proc.stderr
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for size in ("1", "2", "131"):
        reference = _run(orig, size)
        for threads in (1, 2, 3):
            assert _run(parallel, size, threads) == reference, f"n={size} at {threads} threads ({out_c})"


# Floyd--Warshall: i + j orders the dependences of one k step, but a point is one minimum only
FLOYD = PRELUDE + """#define CAP 100
void kernel_floyd(int n, long P[CAP][CAP]) {
  int k, i, j;
#pragma scop
  for (k = 0; k < n; k++)
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        P[i][j] = P[i][j] < P[i][k] + P[k][j] ? P[i][j] : P[i][k] + P[k][j];
#pragma endscop
}
int main(int argc, char **argv) {
  static long P[CAP][CAP];
  int n = argc > 1 ? atoi(argv[1]) : 90;
  for (int i = 0; i < CAP; i++) for (int j = 0; j < CAP; j++) P[i][j] = i == j ? 0 : (i * 7 + j * 3) % 23 + 1;
  kernel_floyd(n, P);
  ldump("P", &P[0][0], (long)CAP * CAP);
  return 0;
}
"""

#: case -> (program, the words of the refusal)
REFUSED = {
    "floyd": (FLOYD, "a point of the loops 'k', 'i', 'j' runs no loop, too little work to share the points"),
    "carried": (CARRIED, "nor along a hyperplane: 'total' is read before the nest writes it"),
    "mirrored": (MIRRORED, "no hyperplane of the loops 'i', 'j' with coefficients up to 2 orders every dependence"),
}


@pytest.mark.parametrize("name", campaign_except(sorted(REFUSED), "mirrored"))
def test_refused_with_reason(name: str, tmp_path: Path) -> None:
    text, words = REFUSED[name]
    src = tmp_path / "in.c"
    src.write_text(text)
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = _mdpoly(src, out_c, report)
    line = next(k for k, ln in enumerate(text.splitlines(), 1) if ln.startswith("  for ("))
    assert f"{src}:{line}:3: note: its loops cannot run as a tiled wavefront: " in proc.stderr, proc.stderr
    assert words in proc.stderr and "[no-wavefront]" in proc.stderr
    nest = next(n for n in json.loads(report.read_text())["nests"] if "wavefront" in n)
    assert nest["status"] == "kept" and words in nest["wavefront"]
    assert "long mdp_w =" not in out_c.read_text()
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    assert _run(parallel, "50", 2) == _run(orig, "50")


def test_gpu_target_runs_it_on_the_device(tmp_path: Path) -> None:
    """``--target opencl``: a launch per wavefront (``tests/e2e/test_gpu_wavefront.py`` runs it)."""
    src = tmp_path / "in.c"
    src.write_text(DIAGONAL)
    out_c = tmp_path / "out.c"
    cmd = [sys.executable, "-m", "mdpoly", str(src), "-o", str(out_c), "--target", "opencl", "--all-nests",
           "--no-tune"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    line = next(k for k, ln in enumerate(DIAGONAL.splitlines(), 1) if ln.startswith("  for (i = "))
    assert f"the wavefront along the hyperplane i+j+l at line {line} runs on the device" in proc.stderr, proc.stderr
    assert "long mdp_w =" in out_c.read_text()


def test_gpu_target_keeps_with_reason(tmp_path: Path) -> None:
    """A body the device translation refuses (a call of ``labs``): kept, with the reason, located."""
    text = DIAGONAL.replace("acc = X[i][j - 1][l] + X[i][j][l - 1];",
                            "acc = X[i][j - 1][l] + X[i][j][l - 1] + labs(X[i][j][l]);")
    src = tmp_path / "in.c"
    src.write_text(text)
    out_c = tmp_path / "out.c"
    cmd = [sys.executable, "-m", "mdpoly", str(src), "-o", str(out_c), "--target", "opencl", "--all-nests",
           "--no-tune"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    line = next(k for k, ln in enumerate(text.splitlines(), 1) if ln.startswith("  for (i = "))
    said = next(ln for ln in proc.stderr.splitlines() if ln.startswith(f"{src}:{line}:3: "))
    assert "[wavefront-openmp-only]" in said and "it calls 'labs'" in said, said
    assert "long mdp_w =" not in out_c.read_text()


@pytest.mark.campaign   # ThreadSanitizer (README.md "Run the tests")
def test_race_free_under_tsan(tmp_path: Path) -> None:
    """ThreadSanitizer finds no race in Nussinov's tiled wavefront, on its own and inside the
    repetition loop's parallel region, nor in the wavefronts along a hyperplane."""
    if str(REPO / "tests") not in sys.path:
        sys.path.insert(0, str(REPO / "tests"))
    from fuzz.test_tsan import _tsan_unavailable, assert_race_free, tsan_build
    why = _tsan_unavailable()
    if why is not None:
        pytest.skip(why)
    for name, text in (("nussinov", NUSSINOV), ("repeated", REPEATED), ("diagonal", DIAGONAL)):
        src = tmp_path / f"{name}.c"
        src.write_text(text.replace("157 + argc", "40 + argc").replace(": 90", ": 40").replace(": 37", ": 12"))
        out_c = tmp_path / f"{name}_out.c"
        run_mdpoly(src, out_c, {}, extra=["-q"])
        assert "#pragma omp for schedule(static)" in out_c.read_text()
        exe = tmp_path / name
        tsan_build(out_c, exe)
        assert_race_free(exe)
