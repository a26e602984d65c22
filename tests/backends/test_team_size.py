"""``mdp_team()`` (``backends/c/mdp_team.h``): the team size of generated OpenMP code, chosen at run time.

The helper is compiled with ``MDP_LOADAVG`` naming a file of the test's own, whose ``R/T`` field
the test program rewrites between calls: the team is ``min(omp_get_max_threads(), cores - (R - 1))``,
at least 1, re-read at most every 5 ms, and ``omp_get_max_threads()`` where the file cannot be read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mdpoly.backends.c_files import c_file
from mdpoly.backends.openmp import preamble

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")

_PROGRAM = r"""
#include <stdio.h>
#include <time.h>
static void set(const char *path, int r) {
  FILE *f = fopen(path, "w");
  fprintf(f, "0.50 0.40 0.30 %d/321 4242\n", r);
  fclose(f);
}
static void pause_ms(double ms) {   /* sleeping: our own threads run nothing meanwhile */
  struct timespec ts = {0, (long)(ms * 1e6)};
  nanosleep(&ts, NULL);
}
int main(int argc, char **argv) {
  const char *path = argv[1];
  printf("procs %d max %d\n", omp_get_num_procs(), omp_get_max_threads());
  for (int k = 2; k < argc; k++) {
    int r = atoi(argv[k]);
    set(path, r);
    pause_ms(12);
    int first = mdp_team();
    set(path, 1000);            /* within 5 ms: the cached reading still holds */
    int cached = mdp_team();
    printf("R %d team %d cached %d upto1 %d\n", r, first, cached, mdp_team_upto(1));
  }
  return 0;
}
"""


def _build(tmp_path: Path, loadavg: Path) -> Path:
    src = tmp_path / "team.c"
    src.write_text("#include <stdlib.h>\n" + preamble(("omp.h",)) + _PROGRAM)
    exe = tmp_path / "team"
    proc = subprocess.run(["cc", "-std=gnu99", "-O2", "-Wall", "-Werror", "-fopenmp", f'-DMDP_LOADAVG="{loadavg}"',
                           str(src), "-o", str(exe)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return exe


def _run(exe: Path, loadavg: Path, threads: int, *rs: int) -> tuple[int, list[tuple[int, int, int, int]]]:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    out = subprocess.run([str(exe), str(loadavg), *map(str, rs)], capture_output=True, text=True, env=env,
                         check=True).stdout.splitlines()
    procs = int(out[0].split()[1])
    rows = [tuple(int(w) for w in line.split()[1::2]) for line in out[1:]]
    return procs, rows  # type: ignore[return-value]


def test_the_team_leaves_out_cores_taken_by_other_runnable_tasks(tmp_path: Path) -> None:
    loadavg = tmp_path / "loadavg"
    exe = _build(tmp_path, loadavg)
    procs, rows = _run(exe, loadavg, 4, 1, 2, 3, 1, 50)
    for r, team, cached, upto1 in rows:
        free = max(1, procs - (r - 1))   # R counts the caller itself
        assert team == min(4, free), (r, team, procs)
        assert cached == team and upto1 == 1
    assert rows[-1][1] == 1 and rows[0][1] == min(4, procs)


_SPINNING = r"""
#include <stdio.h>
#include <time.h>
static void set(const char *path, int r) {
  FILE *f = fopen(path, "w");
  fprintf(f, "0.50 0.40 0.30 %d/321 4242\n", r);
  fclose(f);
}
static void pause_ms(double ms) {
  struct timespec ts = {0, (long)(ms * 1e6)};
  nanosleep(&ts, NULL);
}
int main(int argc, char **argv) {
  const char *path = argv[1];
  set(path, 3);                  /* the caller, a spinning worker of ours, one other process */
  int loaded = mdp_team();       /* first read: nothing measured yet, the worker counts as other */
  pause_ms(12);
  set(path, 2);                  /* the other process has gone; our worker still spins */
  int after = mdp_team();
  printf("loaded %d after %d\n", loaded, after);
  return 0;
}
"""

#: the process's CPU time as if two threads ran all the time (the caller and a spinning worker)
_TWO_RUNNING = "#include <omp.h>\nstatic double two_running(void) { return 2.0 * omp_get_wtime(); }\n"


@pytest.mark.skipif(shutil.which("taskset") is None or len(os.sched_getaffinity(0)) < 2,
                    reason="needs taskset and two cores")
def test_spinning_workers_of_earlier_regions_are_not_other_processes(tmp_path: Path) -> None:
    """After a team of 1 (another process took a core), the workers of earlier regions may still
    spin (OMP_WAIT_POLICY=active: for ever). The process's CPU time shows them as its own, so once
    the other process leaves, the team grows again. (The share of our workers used to be capped
    at the team returned last: a team of 1 stuck while they spun, 2,751 of 2,752 calls of a
    matmul with a team of 1, slower than sequential.) The CPU clock is the test's own: two
    threads running throughout."""
    loadavg = tmp_path / "loadavg"
    src = tmp_path / "spin.c"
    src.write_text(_TWO_RUNNING + "#include <stdlib.h>\n" + preamble(("omp.h",)) + _SPINNING)
    exe = tmp_path / "spin"
    subprocess.run(["cc", "-std=gnu99", "-O2", "-Wall", "-Werror", "-fopenmp", f'-DMDP_LOADAVG="{loadavg}"',
                    "-DMDP_TEAM_CPU_NOW=two_running", str(src), "-o", str(exe)], check=True)
    env = {**os.environ, "OMP_NUM_THREADS": "2"}
    cpus = ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:2])
    out = subprocess.run(["taskset", "-c", cpus, str(exe), str(loadavg)], capture_output=True, text=True, env=env,
                         check=True).stdout.split()
    loaded, after = int(out[1]), int(out[3])
    assert loaded == 1, out      # caller + worker + other on two cores
    assert after == 2, out       # one thread of ours besides the caller: not another process


def test_without_the_file_the_team_is_openmps(tmp_path: Path) -> None:
    exe = _build(tmp_path, tmp_path / "missing")
    _, rows = _run(exe, tmp_path / "written", 3, 1, 50)   # the program writes another file
    assert [row[1] for row in rows] == [3, 3]


def test_the_helper_is_include_guarded_and_builds_without_openmp(tmp_path: Path) -> None:
    src = tmp_path / "twice.c"
    src.write_text(preamble(("omp.h",)) + preamble(("omp.h", "math.h")) +
                   "int main(void) { return mdp_team() + mdp_team_upto(2) == 2 ? 0 : 1; }\n")
    for flags in (["-fopenmp"], []):
        exe = tmp_path / f"twice{len(flags)}"
        proc = subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", *flags, str(src), "-o", str(exe)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        if not flags:
            assert subprocess.run([str(exe)]).returncode == 0
    assert "MDP_TEAM_H" in c_file("mdp_team.h")


#: A host loop of two stencils (a parallel region), an integer reduction.
_KERNEL = r"""
#include <stdio.h>
#define N 300000
double A[N], B[N];
long H[N];
int main(void) {
  for (int i = 0; i < N; i++) { A[i] = i % 7; B[i] = 0; H[i] = (i * 7919L) % 1013; }
  for (int t = 0; t < 20; t++) {
    for (int i = 1; i < N - 1; i++) B[i] = 0.33333 * (A[i-1] + A[i] + A[i+1]);
    for (int i = 1; i < N - 1; i++) A[i] = 0.33333 * (B[i-1] + B[i] + B[i+1]);
  }
  long h = 0;
  for (int i = 0; i < N; i++) h += H[i] * (i % 5);
  printf("%.10e %.10e %ld\n", A[N / 2], B[N / 3], h);
  return 0;
}
"""


@pytest.mark.parametrize("runnable", [None, 1, 1000], ids=["no-file", "quiet", "loaded"])
def test_generated_code_is_right_for_any_team_size(tmp_path: Path, runnable: int | None) -> None:
    """mdpoly's region, parallel loops and reduction give the sequential output whether the
    helper picks OpenMP's team (no file), the free cores (R = 1) or one thread (R = 1000)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
    from e2e_harness import child_env, mdpoly_command, run_step
    src, out = tmp_path / "k.c", tmp_path / "out.c"
    src.write_text(_KERNEL)
    run_step([*mdpoly_command(), str(src), "-o", str(out), "--no-tune"], env=child_env())
    text = out.read_text()
    assert "num_threads(mdp_region1_nt)" in text and "num_threads(mdp_team())" in text
    loadavg = tmp_path / "loadavg"
    if runnable is not None:
        loadavg.write_text(f"9.00 9.00 9.00 {runnable}/500 77\n")
    seq, par = tmp_path / "seq", tmp_path / "par"
    subprocess.run(["cc", "-O2", str(src), "-o", str(seq)], check=True)
    subprocess.run(["cc", "-O2", "-fopenmp", f'-DMDP_LOADAVG="{loadavg}"', str(out), "-o", str(par), "-lm"], check=True)
    want = subprocess.run([str(seq)], capture_output=True, text=True, check=True).stdout
    for threads in (1, 2, 3, 4):
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        got = subprocess.run([str(par)], capture_output=True, text=True, check=True, env=env).stdout
        assert got == want, f"{threads} threads"
