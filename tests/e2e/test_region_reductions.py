"""Reductions inside sequential host loops, run by the threads of the host loop's OpenMP region.

A computation parallel only along its reduction loops (a row's dot product in a triangular
solve, Levinson-Durbin's ``sum``, a maximum or its position per time step) runs once per iteration of a
sequential loop. Inside one parallel region around that loop each thread reduces its static
share into its own slot of shared partials; after a barrier one thread combines the partials in
thread order with the output's old value. The kernels in ``region_reduction_cases/`` are
written from their textbook definitions; mdpoly's output must print what the original prints at
1 to 4 threads (integers exactly, floats within a relative tolerance), the report must show the
reduction inside ``seq-in-region``, and the output must be free of data races (TSan). Where the
reduction cannot run in a region (``--strict-fp``, a host loop that is no region, too little
work) it stays as written, with its reason; a GPU target launches it as a device reduction on the
host loop's resident arrays.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest
from e2e_harness import (
    build_c,
    c_compiler,
    child_env,
    mdpoly_available,
    mdpoly_command,
    run_mdpoly,
    run_program,
    run_step,
)
from test_opencl_examples import needs_opencl

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

CASES_DIR = Path(__file__).resolve().parent / "region_reduction_cases"

#: case -> (the schedule remark's shape, whether its outputs are floats, the sizes of the TSan run:
#: some calls above the threshold from which the threads share the reduction, some below)
CASES: dict[str, tuple[str, bool, dict[str, int]]] = {
    "trisolv_int": ("[i:++ MDH at line 10] i:seq-in-region{ [j:+ MDH at line 12] }", False, {"N": 2200}),
    "durbin": ("k:seq-in-region{ [i:+ MDH at line 18] [i:++ MDH at line 21] [i:++ MDH at line 23] }", True,
               {"N": 2200}),
    "max_in_time_loop": ("[t:++ MDH at line 9] t:seq-in-region{ [i:max MDH at line 11] [i:++ MDH at line 13] }",
                         False, {"N": 3001}),
    "argmax_in_time_loop": ("[t:++ MDH at line 10] t:seq-in-region{ [i:argmax MDH at line 13] [i:++ MDH at line 18] }",
                            False, {"N": 3001}),
    "dot_feeds_statement": ("i:seq-in-region{ [j:+ MDH at line 16] }", False, {"N": 40, "M": 2500}),
}

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)")


def _close(expected: str, actual: str, rtol: float = 1e-9) -> bool:
    """The two outputs agree word for word, numbers within ``rtol`` of each other."""
    ew, aw = expected.split(), actual.split()
    if len(ew) != len(aw):
        return False
    for e, a in zip(ew, aw, strict=True):
        if e == a:
            continue
        if not (_NUMBER.fullmatch(e) and _NUMBER.fullmatch(a)):
            return False
        x, y = float(e), float(a)
        if not math.isclose(x, y, rel_tol=rtol, abs_tol=rtol):
            return False
    return True


def _kernel(out_c: str) -> str:
    m = re.search(r"^void kernel_\w+\(.*?^}", out_c, re.S | re.M)
    assert m is not None
    return m.group(0)


def _computations(items: list[dict[str, object]]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for it in items:
        if it.get("kind") == "host-loop":
            out += _computations(it["body"])  # type: ignore[arg-type]
        elif it.get("kind") == "computation":
            out.append(it)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_reduction_in_region_matches_original(name: str, tmp_path: Path) -> None:
    src = CASES_DIR / f"{name}.c"
    shape, floats, _ = CASES[name]
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = run_mdpoly(src, out_c, {}, extra=["--report", str(report)])
    assert f"loop nest scheduled: {shape}" in proc.stderr
    nest = json.loads(report.read_text())["nests"][0]
    loops = [it for it in nest["schedule"] if it["kind"] == "host-loop"]
    assert [lp["parallel_region"] for lp in loops] == [True]
    kernel = _kernel(out_c.read_text())
    # one thread team for the whole host loop; the reduction shares out its loop inside it and
    # one thread combines the partials
    assert kernel.count("#pragma omp parallel") == 1
    assert "_team(" in kernel and "_finish(" in kernel
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 2, 3, 4):
        got = run_program(parallel, threads=threads)
        if floats:
            assert _close(reference, got), f"{name} at {threads} threads: {got!r} vs {reference!r} ({out_c})"
        else:
            assert got == reference, f"{name} at {threads} threads ({out_c})"


def test_partials_are_combined_in_thread_order(tmp_path: Path) -> None:
    """The team's partials are combined by one thread, in thread order, with the output's old
    value (``x[i] -= ...``: the start value is the ``x[i]`` before the row's sum)."""
    out_c = tmp_path / "out.c"
    run_mdpoly(CASES_DIR / "trisolv_int.c", out_c, {})
    text = out_c.read_text()
    finish = re.search(r"static void (\w+)_finish\(.*?\n}\n", text, re.S)
    assert finish is not None
    body = finish.group(0)
    assert re.search(r"mdp_r0 = x\[\(long\) i\];", body)
    assert re.search(r"for \(long mdp_t = 0; mdp_t < mdp_nthreads; mdp_t\+\+\)", body)
    team = re.search(r"static void \w+_team\(.*?\n}\n", text, re.S)
    assert team is not None
    assert "#pragma omp for schedule(static) nowait" in team.group(0)
    assert "#pragma omp barrier" in team.group(0)
    # a short row is not shared: the threads skip the shared part, the combining thread reduces it
    assert re.search(r"if \(\(\(long\) i\) - \d+ >= 0\)\s*\{", team.group(0))
    assert re.search(r"\}\s*else\s*\{.*for \(long mdp_j_t1 = 0; mdp_j_t1 < \(\(long\) i\);", body, re.S)
    # the run-time checks' fallback (the row as written) runs in the combining thread's single
    kernel = _kernel(text)
    assert re.search(r"if \(mdp_region1_ok0\) \{\s*\w+_finish\(.*\} else \{\s*for \(j = 0; j < i; j\+\+\)", kernel, re.S)


def _mdpoly(src: Path, out: Path, *extra: str) -> tuple[str, dict[str, object]]:
    """Run mdpoly without ``--all-nests`` (so that too little work keeps a nest); stderr, report."""
    report = out.with_suffix(".json")
    cmd = [*mdpoly_command(), str(src), "-o", str(out), "--no-tune", "--report", str(report), *extra]
    gpu = any(t in extra for t in ("opencl", "cuda"))   # GPU tests: the device always pays (hybrid model)
    proc = run_step(cmd, env=child_env(**({"MDPOLY_COST_CALIBRATION": "gpu_min_speedup=0"} if gpu else {})))
    return proc.stderr, json.loads(report.read_text())


def _kept_codes(report: dict[str, object]) -> list[str | None]:
    nests = report["nests"]
    assert isinstance(nests, list)
    return [c.get("code") for c in _computations(nests[0]["schedule"])]


@pytest.mark.parametrize("target", ["opencl", "cuda"])
def test_gpu_targets_launch_the_reduction_on_resident_data(target: str, tmp_path: Path) -> None:
    """On a GPU the dot product per step is a device reduction on the step loop's resident
    arrays (its scalar result comes back each step); the update bands around it are kernels."""
    stderr, report = _mdpoly(CASES_DIR / "durbin.c", tmp_path / "out.c", "--target", target)
    assert "k:seq{ [i:+ MDH at line 18] [i:++ MDH at line 21] [i:++ MDH at line 23] }" in stderr, stderr
    assert "r, y, z stay on the device over loop 'k'" in stderr, stderr
    assert _kept_codes(report) == [None, None, None]


@needs_opencl
def test_opencl_reduction_in_a_host_loop_matches_original(tmp_path: Path) -> None:
    src = CASES_DIR / "durbin.c"
    out = tmp_path / "out.c"
    stderr, _ = _mdpoly(src, out, "--target", "opencl", "-D", "N=300")
    assert "[i:+ MDH at line 18]" in stderr, stderr
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", "-DN=300", str(out), "-o", str(exe), "-lOpenCL", "-lm"])
    reference = run_program(build_c(src, tmp_path / "seq", {"N": 300}, openmp=False))
    got = run_step([str(exe)], env=child_env(MDPOLY_PROFILE="1"))
    want = [float(v) for v in reference.split()]
    values = [float(v) for v in got.stdout.split()]
    assert len(values) == len(want) and all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(values, want)), got.stdout
    assert "resident uploads=3 downloads=2" in got.stderr, got.stderr   # r, y, z in once; y, z back once


def test_strict_fp_keeps_a_float_reduction(tmp_path: Path) -> None:
    """``--strict-fp`` never reassociates a float sum: the dot product runs as written. The
    updates' work per step is known only at run time, so the cost model makes the step loop no
    region (a barrier per step would stall under load) and guards each update's call."""
    out_c = tmp_path / "out.c"
    stderr, report = _mdpoly(CASES_DIR / "durbin.c", out_c, "--target", "openmp", "--strict-fp")
    assert "k:seq{ [i:++ MDH at line 21] [i:++ MDH at line 23] }" in stderr
    assert "durbin.c:21:5: remark: computation i:++; cost: run-time guard" in stderr
    loop = report["nests"][0]["schedule"][0]   # type: ignore[index]
    assert not loop["parallel_region"] and "known only at run time" in loop["no_region_reason"]
    assert "_finish(" not in out_c.read_text()
    assert re.search(r"for \(i = 0; i < k; i\+\+\)\s*sum \+= r\[", _kernel(out_c.read_text()))


SMALL_ROWS = r"""
/* A maximum over 64 values per step: too little work to share among threads. */
#include <stdio.h>
void kernel_small(int a[1000000], int mx[64]) {
  int t, i;
#pragma scop
  for (t = 0; t < 64; t++) {
    mx[t] = 0;
    for (i = 0; i < 64; i++)
      mx[t] = mx[t] > a[i + t] ? mx[t] : a[i + t];
    for (i = 0; i < 1000000; i++)
      a[i] = (a[i] * 5 + mx[t]) % 977;
  }
#pragma endscop
}
int main(void) {
  static int a[1000000], mx[64];
  int i;
  long s = 0;
  for (i = 0; i < 1000000; i++) a[i] = i % 999;
  kernel_small(a, mx);
  for (i = 0; i < 1000000; i++) s += a[i] * (i % 3);
  printf("%ld %d\n", s, mx[63]);
  return 0;
}
"""

DECLARED_IN_LOOP = r"""
/* The time loop declares a temporary: no region around it (each thread would have its own
   copy), so the sum per step stays as written; the update loop is parallel on its own. */
#include <stdio.h>
#define N 1000000
void kernel_steps(int tsteps, int n, long a[N], long sum[N]) {
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    long c = t % 3 + 1;
    sum[t] = 0;
    for (i = 0; i < n; i++)
      sum[t] += a[i] * c;
    for (i = 0; i < n; i++)
      a[i] = (a[i] * 3 + sum[t] + i) % 1013;
  }
#pragma endscop
}
int main(void) {
  static long a[N], sum[N];
  int i;
  long s = 0;
  for (i = 0; i < N; i++) a[i] = i % 11;
  kernel_steps(5, N, a, sum);
  for (i = 0; i < N; i++) s += a[i] * (i % 3 + 1);
  printf("%ld %ld\n", s, sum[4]);
  return 0;
}
"""


@pytest.mark.parametrize(("source", "line", "code"), [
    (SMALL_ROWS, 9, "too-little-work"),
    (DECLARED_IN_LOOP, 12, "reduction-in-host-loop"),
], ids=["too-little-work", "no-region"])
def test_reduction_that_stays_as_written(source: str, line: int, code: str, tmp_path: Path) -> None:
    src = tmp_path / "prog.c"
    src.write_text(source)
    out_c = tmp_path / "out.c"
    stderr, report = _mdpoly(src, out_c, "--target", "openmp")
    assert f"[kept at line {line}: {code}]" in stderr
    assert code in _kept_codes(report)
    # no team function is called (the run-time team size ``mdp_team()`` may still be asked)
    assert "_team(" not in _kernel(out_c.read_text()).replace("mdp_team()", "") or code == "too-little-work"
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 3):
        assert run_program(parallel, threads=threads) == reference


@pytest.mark.parametrize("name", sorted(CASES))
def test_reduction_in_region_is_race_free(name: str, tmp_path: Path) -> None:
    tests = str(Path(__file__).resolve().parents[1])
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from fuzz.test_tsan import _tsan_unavailable, assert_race_free, tsan_build
    why = _tsan_unavailable()
    if why is not None:
        pytest.skip(why)
    sizes = CASES[name][2]
    out_c = tmp_path / "out.c"
    run_mdpoly(CASES_DIR / f"{name}.c", out_c, sizes)
    assert "_finish(" in out_c.read_text()
    tsan_build(out_c, tmp_path / "prog", sizes)
    assert_race_free(tmp_path / "prog")
