"""The cost model's run-time guard: C with run-time sizes -> out.c whose guard picks the original
nest for small calls, the generated code on one thread (its ``if`` clause false) for medium ones
and on all threads for large ones, with the original program's output.

Which side ran is counted by a preloaded library that wraps libgomp's ``GOMP_parallel`` (every
``omp parallel`` gcc emits goes through it; an ``if`` clause that is false asks for one
thread), so each test can fail every way: a guard that never or always takes a side changes
the counts. The programs are built with ``MDP_LOADAVG`` naming no file, so that the run-time
team size (``mdp_team()``) is OpenMP's, whatever the load of the machine; at one thread every
team asks for one thread.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from e2e_harness import StepFailed, build_c, c_compiler, child_env, mdpoly_command, run_step

COUNTER = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
static long calls, single;
void GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags) {
  static void (*real)(void (*)(void *), void *, unsigned, unsigned);
  if (!real) real = (void (*)(void (*)(void *), void *, unsigned, unsigned))dlsym(RTLD_NEXT, "GOMP_parallel");
  if (n == 1) single++; else calls++;
  real(fn, data, n, flags);
}
__attribute__((destructor)) static void report(void) { fprintf(stderr, "parallel-regions %ld single %ld\n", calls, single); }
"""

#: An update whose size is an argument of the program (unknown when mdpoly runs).
AXPY = r"""
#include <stdio.h>
#include <stdlib.h>
void axpy(int n, double a, double *restrict x, double *restrict y) {
  int i;
#pragma scop
  for (i = 0; i < n; i++)
    y[i] = y[i] + a * x[i] * x[i];
#pragma endscop
}
int main(int argc, char **argv) {
  int n = atoi(argv[1]), i, r;
  double *x = malloc(sizeof(double) * (n + 1)), *y = malloc(sizeof(double) * (n + 1)), s = 0;
  for (i = 0; i < n; i++) { x[i] = (i % 13) * 0.25; y[i] = (i % 7) - 3.0; }
  for (r = 0; r < 3; r++) axpy(n, 0.5 + r, x, y);
  for (i = 0; i < n; i++) s += y[i] * (i % 5 + 1);
  printf("%.17g\n", s);
  return 0;
}
"""

#: Cholesky with the size from the command line: each step's trailing update shrinks with k, so
#: one run takes the parallel side for the first steps and the original nest for the last ones.
CHOLESKY = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#define N 1420
static double A[N][N];
void kernel_cholesky(int n, double A[N][N]) {
  int i, j, k;
#pragma scop
  for (k = 0; k < n; k++) {
    A[k][k] = sqrt(A[k][k]);
    for (i = k + 1; i < n; i++)
      A[i][k] = A[i][k] / A[k][k];
    for (j = k + 1; j < n; j++)
      for (i = j; i < n; i++)
        A[i][j] = A[i][j] - A[i][k] * A[j][k];
  }
#pragma endscop
}
int main(int argc, char **argv) {
  int n = atoi(argv[1]), i, j;
  double s = 0;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = i == j ? n + 1.0 : 1.0 / (1.0 + i + j);
  kernel_cholesky(n, A);
  for (i = 0; i < n; i++)
    for (j = 0; j <= i; j++)
      s += A[i][j] * (j % 3 + 1);
  printf("%.17g\n", s);
  return 0;
}
"""


def _counter(tmp_path: Path) -> Path:
    src = tmp_path / "counter.c"
    src.write_text(COUNTER)
    lib = tmp_path / "libcounter.so"
    run_step([c_compiler(), "-O2", "-shared", "-fPIC", str(src), "-o", str(lib), "-ldl"])
    return lib


def _mdpoly(src: Path, out: Path) -> tuple[str, dict[str, object]]:
    report = out.with_suffix(".json")
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out), "--target", "openmp", "--no-tune",
                     "--report", str(report)], env=child_env())
    return proc.stderr, json.loads(report.read_text())


#: the run-time team size without a load reading: omp_get_max_threads()
NO_LOADAVG = {"MDP_LOADAVG": '"/nonexistent/loadavg"'}


def _expect(threads: int, regions: int, single: int) -> tuple[int, int]:
    """The counts at ``threads`` threads: at one, every team asks for one thread."""
    return (regions, single) if threads > 1 else (0, regions + single)


def _run(exe: Path, n: int, threads: int | None, lib: Path | None = None) -> tuple[str, int, int]:
    """stdout, the number of parallel regions that asked for more than one thread and for one."""
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    if lib is not None:
        env["LD_PRELOAD"] = str(lib)
    proc = run_step([str(exe), str(n)], env=env)
    found = re.search(r"parallel-regions (\d+) single (\d+)", proc.stderr)
    return proc.stdout, int(found.group(1)) if found else -1, int(found.group(2)) if found else -1


def _costs(report: dict[str, object]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []

    def walk(items: list[dict[str, object]]) -> None:
        for it in items:
            if it.get("kind") == "host-loop":
                walk(it["body"])  # type: ignore[arg-type]
            elif "cost" in it:
                out.append(it["cost"])  # type: ignore[arg-type]

    for nest in report["nests"]:  # type: ignore[attr-defined]
        walk(nest.get("schedule", [nest]))
    return out


def test_small_calls_run_the_original_large_ones_in_parallel(tmp_path: Path) -> None:
    src = tmp_path / "axpy.c"
    src.write_text(AXPY)
    out_c = tmp_path / "out.c"
    stderr, report = _mdpoly(src, out_c)
    # an update in source order gains nothing on one thread: the nest as written below the threshold
    assert re.search(r"axpy\.c:7:3: remark: loop nest parallelized: i:\+\+; cost: run-time guard, parallel when "
                     r"a call has >= 85622 operations", stderr), stderr
    (cost,) = _costs(report)   # 3 operations a point
    assert cost["choice"] == "guarded" and cost["guard"] == "((double)(n)) >= 28541.0"
    assert cost["parallel_if"] is None
    text = out_c.read_text()
    assert "((double) n) >= 28541.0" in text and "if(" not in text
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    for n, parallel in ((0, 0), (1000, 0), (28540, 0), (28541, 3), (1000001, 3)):
        want = _run(orig, n, None)[0]
        for threads in (1, 2, 3, 4):
            got, regions, one = _run(par, n, threads, lib)
            assert got == want, f"n={n}, {threads} threads"
            # on one thread the axpy (no gains on one thread) runs as written: no team at all
            expected = _expect(threads, parallel, 0) if threads > 1 else (0, 0)
            assert (regions, one) == expected, f"n={n}: {regions} parallel regions, {one} on one"


def test_a_shrinking_step_loop_decides_per_step_and_is_no_region(tmp_path: Path) -> None:
    src = tmp_path / "cholesky.c"
    src.write_text(CHOLESKY)
    out_c = tmp_path / "out.c"
    stderr, report = _mdpoly(src, out_c)
    assert "k:seq{ [i:++ MDH at line 12] [j:++ i:++ MDH at line 14] }" in stderr
    # the parallel threshold (85622) lies below the generated code's call margin (100000): no
    # one-thread band, the call's guard is the parallel one
    assert re.search(r"cholesky\.c:14:5: remark: computation j:\+\+ i:\+\+; cost: run-time guard, parallel when "
                     r"a call has >= 85622 operations", stderr), stderr
    loop = report["nests"][0]["schedule"][0]  # type: ignore[index]
    assert loop["parallel_region"] is False and "known only at run time" in loop["no_region_reason"]
    assert [c["choice"] for c in _costs(report)] == ["guarded", "guarded"]
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    # the update has half of an (n - k - 1)^2 box (a triangle) of 2 operations a point: parallel
    # while (n - k - 1)^2 / 2 >= 42811, n - k - 1 >= 293, i.e. in the first n - 293 steps, the
    # nest as written in the others
    for n, regions, single in ((40, 0, 0), (293, 0, 0), (294, 1, 0), (300, 7, 0)):
        want = _run(orig, n, None)[0]
        for threads in (1, 2, 4):
            got, count, one = _run(par, n, threads, lib)
            assert got == want, f"n={n}, {threads} threads"
            assert (count, one) == _expect(threads, regions, single), f"n={n}: {count} regions, {one} on one thread"


def test_forced_nests_have_no_guard(tmp_path: Path) -> None:
    src = tmp_path / "axpy.c"
    src.write_text(AXPY)
    out_c = tmp_path / "out.c"
    report = out_c.with_suffix(".json")
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--target", "openmp", "--no-tune", "--all-nests",
                     "--report", str(report)], env=child_env())
    assert "cost:" not in proc.stderr
    costs = _costs(json.loads(report.read_text()))   # --all-nests: main's loops too
    assert [c["choice"] for c in costs] == ["forced"] * 3 and all(c["guard"] is None for c in costs)
    assert ">= 28541.0" not in out_c.read_text() and "if(" not in out_c.read_text()
    try:
        par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    except StepFailed as exc:  # pragma: no cover - a build failure is the test's failure
        pytest.fail(str(exc))
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    # every call in parallel however small: the 3 calls of axpy, main's first and last loop
    assert _run(par, 1000, 2, _counter(tmp_path)) == (_run(orig, 1000, None)[0], 5, 0)


#: A matrix product with the size from the command line: the device repays its launch and copies
#: from n = 47 on (n^3 >= 100000 points, and 0.092 ns per point over 0.2 ns per copied byte).
MATMUL = r"""
#include <stdio.h>
#include <stdlib.h>
void mm(int n, double a[n][n], double b[n][n], double c[n][n]) {
  int i, j, k;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      for (k = 0; k < n; k++)
        c[i][j] += a[i][k] * b[k][j];
}
int main(int argc, char **argv) {
  int n = atoi(argv[1]), i, j;
  double (*a)[n] = malloc(sizeof(double) * n * n), (*b)[n] = malloc(sizeof(double) * n * n);
  double (*c)[n] = calloc((size_t)n * n, sizeof(double)), s = 0;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) { a[i][j] = (i * 3 + j) % 7 - 3; b[i][j] = (i + 2 * j) % 5; }
  mm(n, a, b, c);
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) s += c[i][j] * ((i + j) % 3 + 1);
  printf("%.17g\n", s);
  return 0;
}
"""


def test_opencl_small_calls_stay_on_the_host(tmp_path: Path) -> None:
    """GPU small-call fallback: a call whose run-time size cannot repay a launch and its copies
    runs on the host (the OpenMP target's code, whose own guard may run the original nest); a
    large one runs on the device; the output is the original's."""
    from test_opencl_examples import build_opencl, opencl_unavailable
    why = opencl_unavailable(str(tmp_path))
    if why is not None:
        pytest.skip(why)
    src = tmp_path / "mm.c"
    src.write_text(MATMUL)
    out_c = tmp_path / "out.c"
    report = out_c.with_suffix(".json")
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--target", "opencl", "--no-tune",
                     "--report", str(report)], env=child_env())
    assert "cost: run-time guard, parallel when a call has >= 200000 operations" in proc.stderr
    cost = next(c for c in _costs(json.loads(report.read_text())) if c["inputs"]["ops_per_point"] == 2)
    n3 = "((double)(n)) * ((double)(n)) * ((double)(n))"
    assert cost["choice"] == "guarded" and cost["guard"].startswith(f"{n3} >= 100000.0 && 0.092")
    assert "* (8.0 * ((double)(n)) * ((double)(n))" in cost["guard"]
    # the host fallback is the OpenMP target's code (hybrid output), under its own guard
    assert cost["host"]["choice"] == "guarded"
    assert "otherwise on the host (OpenMP, cost: run-time guard" in proc.stderr
    text = out_c.read_text()
    # the device once the host has spent the set-up's time on such calls (ski rental): the host
    # branch times the calls its guard deferred
    assert re.search(r">= 100000\.0 && 0\.092[^\n]*mdp_gpu_rent\(0\.2, [^\n]*\)\s*\{\s*mdpoly_mm_\w+\(.*\}\s*else"
                     r"\s*\{\s*\{\s*const int mdp_rented = mdp_gpu_rent_take\(\);.*if \(", text, re.S)
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    dev = build_opencl(out_c, tmp_path / "dev", {})
    for n in (10, 46, 47, 60):
        assert _run(dev, n, None)[0] == _run(orig, n, None)[0], f"n={n}"
    # without a set-up to rent (gpu_setup_ns=0) the per-call guard alone decides: n = 47 and 60 on the device
    out0 = tmp_path / "out0.c"
    run_step([*mdpoly_command(), str(src), "-o", str(out0), "--target", "opencl", "--no-tune"],
             env=child_env(MDPOLY_COST_CALIBRATION="gpu_setup_ns=0"))
    assert "mdp_gpu_rent(" not in out0.read_text().split("int main")[-1]
    dev0 = build_opencl(out0, tmp_path / "dev0", {})
    for n in (10, 47, 60):
        assert _run(dev0, n, None)[0] == _run(orig, n, None)[0], f"n={n}"


RENTED = MATMUL.replace("  mm(n, a, b, c);\n", "  for (int r = 0; r < 400; r++)\n    mm(n, a, b, c);\n")


def test_opencl_device_after_the_host_paid_the_set_up(tmp_path: Path) -> None:
    """Ski rental: calls whose guard sends them to the device run on the host until their host
    time reaches the set-up's (here calibrated to 2 ms), then on the device; the output is the
    original's. The profile counts the device's calls: some, and fewer than all."""
    from test_opencl_examples import build_opencl, opencl_unavailable
    why = opencl_unavailable(str(tmp_path))
    if why is not None:
        pytest.skip(why)
    src = tmp_path / "mm.c"
    src.write_text(RENTED)
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--target", "opencl", "--no-tune"],
                    env=child_env(MDPOLY_COST_CALIBRATION="gpu_setup_ns=2e6"))
    assert "the device once the host has spent 2 ms (the runtime's set-up)" in proc.stderr, proc.stderr
    assert "mdp_gpu_rent(0.002, " in out_c.read_text()
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    dev = build_opencl(out_c, tmp_path / "dev", {})
    env = dict(child_env(MDPOLY_PROFILE="1", OMP_NUM_THREADS="1"))
    got = run_step([str(dev), "60"], env=env)
    assert got.stdout == run_step([str(orig), "60"]).stdout
    calls = re.search(r"mdpoly_mm_\w+ calls=(\d+)", got.stderr)
    assert calls is not None and 0 < int(calls.group(1)) < 400, got.stderr[-2000:]


def test_streaming_calls_never_go_to_the_device(tmp_path: Path) -> None:
    """An update of 3 operations per 24 copied bytes never repays its copies, whatever n: the
    OpenMP target's code (no OpenCL at all), its run-time guard as on the OpenMP target."""
    src = tmp_path / "axpy.c"
    src.write_text(AXPY)
    out_c = tmp_path / "out.c"
    report = out_c.with_suffix(".json")
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--target", "opencl", "--no-tune",
                     "--report", str(report)], env=child_env())
    assert "device: host: the device never repays the copies of a call (3 operations per point for 24 bytes" \
        in proc.stderr
    nests = json.loads(report.read_text())["nests"]
    axpy = next(n for n in nests if n["line"] == 7)
    assert axpy["target"] == "openmp" and axpy["cost"]["device"]["choice"] == "sequential"
    assert axpy["cost"]["choice"] == "guarded" and axpy["cost"]["guard"] == "((double)(n)) >= 28541.0"
    text = out_c.read_text()
    assert "mdp_cl_" not in text and "((double) n) >= 28541.0" in text
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for n in (10, 100000):
        assert _run(par, n, 2)[0] == _run(orig, n, None)[0], f"n={n}"


#: A reduction and an update fused in one loop, inside a sequential step loop: the schedule splits
#: them (the reduction stays as written, the update is a computation guarded by its size).
FUSED = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    double *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y), acc = 0.0;
    unsigned seed = 7u;
    for (int c = 0; c < n; c++) { seed = seed * 1103515245u + 12345u; x[c] = seed % 13; y[c] = seed % 7; }
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < n; c++) {
            acc += y[c] * x[c];
            x[c] = 0.5 * (x[c] + y[c]);
        }
    printf("%.6e %.6e\n", acc, n > 0 ? x[n / 2] : 0.0);
    free(x); free(y);
    return 0;
}
"""


def test_a_fused_loop_too_small_runs_as_written(tmp_path: Path) -> None:
    """A reduction and a map over the same loop inside a host loop run as one parallel loop around
    the body as written (one pass over the data; split into two computations, two passes, they
    were 1.3x slower than sequential below the threshold before the split learnt to run as
    written). Its guard tests the work of a call: below it no team forms, above it one per
    iteration of the host loop."""
    src = tmp_path / "fused.c"
    src.write_text(FUSED)
    out_c = tmp_path / "out.c"
    stderr, _ = _mdpoly(src, out_c)
    assert re.search(r"fused\.c:10:5: remark: loop nest scheduled: r:seq\{ \[c:\+\+ private-body\] \}", stderr), stderr
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    for n, teams in ((0, 0), (1000, 0), (200000, 3)):
        want = _run(orig, n, None)[0]
        for threads in (1, 2, 3):
            got, regions, one = _run(par, n, threads, lib)
            assert got == want, f"n={n}, {threads} threads"
            assert (regions, one) == ((teams, 0) if threads > 1 else (0, 0)), f"n={n}, {threads} threads"


TWO_GUARDS = FUSED.replace(
    "double *x = malloc((n + 1) * sizeof *x)",
    "double *z = malloc((8 * n + 1) * sizeof *z);\n    double *x = malloc((n + 1) * sizeof *x)").replace(
    "            acc += y[c] * x[c];\n",
    "            acc += y[c] * x[c];\n            for (int k = 0; k < 8; k++)\n"
    "                z[c * 8 + k] = x[c] * k + y[c];\n").replace(
    'printf("%.6e %.6e\\n", acc, n > 0 ? x[n / 2] : 0.0);',
    'printf("%.6e %.6e %.6e\\n", acc, n > 0 ? x[n / 2] : 0.0, n > 0 ? z[4 * n + 3] : 0.0);')


def test_a_split_nest_whose_computations_have_different_guards_tests_either(tmp_path: Path) -> None:
    """Two computations with guards of their own (8 points of 'z' per point of 'x'): the nest's
    condition is either guard, as one operand of the conditions' '&&', and the schedule's team
    forms from the smaller threshold up; below it the nest runs as written."""
    assert "z[c * 8 + k]" in TWO_GUARDS and "z[4 * n + 3]" in TWO_GUARDS
    src = tmp_path / "two.c"
    src.write_text(TWO_GUARDS)
    out_c = tmp_path / "out.c"
    stderr, _ = _mdpoly(src, out_c)
    assert "when no computation of it has the work to run in parallel" in stderr, stderr
    text = out_c.read_text()
    cond = re.search(r"if \(\(\(\(\(double\)\(n\)\) \* \(8\.0\) >= (\d+)\.0\) \|\| \(\(\(double\)\(n\)\) >= \d+\.0\)\)\)",
                     text)
    assert cond, text
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    small = -(-int(cond.group(1)) // 8)   # the least n the 8-point computation's guard lets through
    for n in (0, 1000, small - 1, small, 3 * small):
        want = _run(orig, n, None)[0]
        for threads in (1, 2):
            got, regions, _ = _run(par, n, threads, lib)
            assert got == want, f"n={n}, {threads} threads"
            if n < small:
                assert regions == 0, f"n={n}, {threads} threads: {regions} teams below both guards"


#: A vertical blur over interleaved channels, their count from the command line: the generated
#: code interchanges the taps outward and vectorizes the channel loop.
VBLUR = r"""
#include <stdio.h>
#include <stdlib.h>
static void vblur(const float *src, float *dst, int w, int h, int nc, const float *k, int r)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int ch = 0; ch < nc; ch++) {
                float acc = 0.0f;
                for (int t = -r; t <= r; t++) {
                    int yy = y + t < 0 ? 0 : (y + t > h - 1 ? h - 1 : y + t);
                    acc += k[t + r] * src[((size_t)yy * w + x) * nc + ch];
                }
                dst[((size_t)y * w + x) * nc + ch] = acc;
            }
}
int main(int argc, char **argv)
{
    int w = 160, h = 120, nc = atoi(argv[1]), r = 3;
    float *src = malloc(sizeof(float) * w * h * nc), *dst = malloc(sizeof(float) * w * h * nc), k[7];
    for (int i = 0; i < 7; i++) k[i] = 0.1f + 0.05f * (float)i;
    unsigned seed = 5u;   /* sequential: only the blur forms teams */
    for (int i = 0; i < w * h * nc; i++) { seed = seed * 1103515245u + 12345u; src[i] = (float)(seed >> 24); }
    vblur(src, dst, w, h, nc, k, r);
    unsigned long long s = 0;
    for (int i = 0; i < w * h * nc; i++) s = s * 31u + (unsigned long long)(dst[i] * 16.0f);
    printf("%llu\n", s);
    return 0;
}
"""


def test_one_thread_runs_a_short_vector_loop_as_written(tmp_path: Path) -> None:
    """The generated code gains only through its vector loop over the channels; with 3 channels
    (under 8 points) it runs only with a team of 4 or more (per thread it is 2-3.5x slower than
    the nest as written, whose taps gcc unrolls): with one or three threads the nest as written
    runs (no team asked for at all); with 16 channels the generated code runs on one thread (a
    team of one) and on three; with 4 threads both run it."""
    src = tmp_path / "vblur.c"
    src.write_text(VBLUR)
    out_c = tmp_path / "out.c"
    _mdpoly(src, out_c)
    assert re.search(r"\(mdp_team\(\) >= 4 \|\| \(\(long long\) nc\) >= 8\)", out_c.read_text()), out_c.read_text()
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    for nc, one_thread_teams in ((3, 0), (16, 1)):
        want = _run(orig, nc, None)[0]
        got, regions, single = _run(par, nc, 1, lib)
        assert got == want and (regions, single) == (0, one_thread_teams), f"nc={nc}: {regions} {single}"
        got, regions, single = _run(par, nc, 3, lib)
        assert got == want and (regions >= 1) == (nc >= 8), f"nc={nc}, 3 threads: {regions} {single}"
        got, regions, single = _run(par, nc, 4, lib)
        assert got == want and regions >= 1, f"nc={nc}, 4 threads: {regions} {single}"
