"""The user's ``parallel for`` loops mdpoly keeps get a team size chosen at run time (issue 22).

A kept ``#pragma omp parallel for`` gets ``num_threads(mdp_team())``: the program's answers do not
change, and when the load file says other processes hold the cores, the loop runs on a team of one
(the user's OpenMP no longer collapses when another process takes a core). Left alone: directives
that name their team, loops that ask for thread numbers, plain ``parallel`` regions, ``_Pragma``
and directives continued on the next line; ``--omp-as-written`` leaves every directive byte for byte.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available, run_program
from usability_harness import assert_same_as_sequential, mdpoly, statuses

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <stdio.h>
#ifdef _OPENMP
#include <omp.h>
#else
static int omp_get_num_threads(void) { return 1; }
static int omp_get_thread_num(void) { return 0; }
#endif
#define N 3000
static double a[N], b[N], c[N];
static int team_seen;
static void note_team(void) {
  #pragma omp atomic write
  team_seen = omp_get_num_threads();
}
void scale(int n, double *x, const double *y) {
  #pragma omp parallel for schedule(dynamic, 64) /* the user's comment */
  for (int i = 0; i < n; i++) {
    if (i == 0) note_team();
    x[i] = y[i] * 2.0 + (double)(i % 5);
  }
}
void fixed_team(int n) {
  #pragma omp parallel for num_threads(2)
  for (int i = 0; i < n; i++)
    c[i] = a[i] - b[i];
}
void by_thread(int n) {
  #pragma omp parallel for
  for (int i = 0; i < n; i++)
    c[i] += (double)(omp_get_thread_num() >= 0);
}
void region(int n) {
  #pragma omp parallel
  {
    #pragma omp for
    for (int i = 0; i < n; i++)
      b[i] = b[i] + 1.0;
  }
}
#define PFOR _Pragma("omp parallel for")
void macro_loop(int n) {
  PFOR for (int i = 0; i < n; i++) a[i] = a[i] * 0.5;
}
void continued(int n) {
  #pragma omp parallel \
    for
  for (int i = 0; i < n; i++) c[i] = c[i] * 0.25;
}
int main(int argc, char **argv) {
  int n = argc > 1 ? N : N / 2;
  for (int i = 0; i < N; i++) { a[i] = i % 7; b[i] = i % 3; }
  scale(n, a, b); fixed_team(n); by_thread(n); region(n); macro_loop(n); continued(n);
  double s = 0;
  for (int i = 0; i < N; i++) s += a[i] + 2.0 * b[i] + 3.0 * c[i];
  printf("%.6f\n", s);
  fprintf(stderr, "team %d\n", team_seen);
  return 0;
}
"""


def _generate(tmp: Path, *args: str) -> tuple[Path, Path, str]:
    src = tmp / "teams.c"
    src.write_text(PROGRAM)
    out = tmp / "out.c"
    proc = mdpoly(src, out, *args)
    assert proc.returncode == 0, proc.stderr
    return src, out, proc.stderr


def test_kept_parallel_for_gets_run_time_team_and_same_answers(tmp_path: Path) -> None:
    src, out, err = _generate(tmp_path)
    text = out.read_text()
    assert "#pragma omp parallel for num_threads(mdp_team()) schedule(dynamic, 64) /* the user's comment */" in text
    assert text.count("num_threads(mdp_team())") == 1, text   # only scale's loop among the user's
    for as_written in ("#pragma omp parallel for num_threads(2)\n", "  #pragma omp parallel\n  {",
                       '_Pragma("omp parallel for")', "#pragma omp parallel \\\n    for\n"):
        assert as_written in text, as_written
    assert f"{src}:17:1: remark: the user's '#pragma omp parallel for' gets a team size chosen at run time" in err, err
    assert "[run-time-team]" in err
    assert statuses(out)[18] == ("already-parallel", "already-parallel")
    assert_same_as_sequential(src, out, tmp_path)


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="mdp_team() reads a Linux load file")
def test_team_shrinks_to_the_free_cores(tmp_path: Path) -> None:
    """The load file says how many tasks are runnable: with far more than the cores, the user's
    loop runs on one thread; with only the program itself, on OMP_NUM_THREADS (at most the cores)."""
    _, out, _ = _generate(tmp_path)
    seen = {}
    for name, runnable in (("busy", 64), ("quiet", 1)):
        load = tmp_path / f"loadavg_{name}"
        load.write_text(f"0.00 0.00 0.00 {runnable}/200 12345\n")
        exe = build_c(out, tmp_path / f"teams_{name}", {"MDP_LOADAVG": f'"{load}"'}, openmp=True)
        proc = subprocess.run([str(exe), "full"], env={**os.environ, "OMP_NUM_THREADS": "2"}, capture_output=True,
                              text=True, timeout=60, check=True)
        seen[name] = int(proc.stderr.split()[-1])
    assert seen["busy"] == 1, seen
    assert seen["quiet"] == min(2, len(os.sched_getaffinity(0))), seen


def test_omp_as_written_leaves_every_directive(tmp_path: Path) -> None:
    src, out, err = _generate(tmp_path, "--omp-as-written")
    text = out.read_text()
    assert "mdp_team())" not in text.split("void scale", 1)[1].split("int main", 1)[0]
    for line in PROGRAM.splitlines():
        if "#pragma omp" in line:
            assert line in text, line
    assert "[run-time-team]" not in err
    assert run_program(build_c(out, tmp_path / "asis", {}, openmp=True), threads=2) == \
        run_program(build_c(src, tmp_path / "seq", {}, openmp=False))


def test_empty_blocks_are_no_directives(tmp_path: Path) -> None:
    """An empty block (``if (1) {}``, ``{}`` after a declaration) holds no directive: the finder
    looks at pairs of block items only (an empty block once crashed mdpoly on every file)."""
    src = tmp_path / "empty.c"
    src.write_text("#include <stdio.h>\nfloat a[64];\nint main(void) {\n  int t = 1;\n  if (t) {\n  }\n  {}\n"
                   "  #pragma omp parallel for\n  for (int i = 0; i < 64; i++) a[i] = i * 0.5f;\n"
                   "  printf(\"%f\\n\", a[63]);\n  return 0;\n}\n")
    out = tmp_path / "out.c"
    proc = mdpoly(src, out)
    assert proc.returncode == 0, proc.stderr
    assert "#pragma omp parallel for num_threads(mdp_team())" in out.read_text()
    assert_same_as_sequential(src, out, tmp_path, threads=(1, 2))
