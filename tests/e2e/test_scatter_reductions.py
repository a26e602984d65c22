"""Scatter reductions (``mdpoly.frontend.scatter``): loops that accumulate into an array at an index
read from memory run as OpenMP parallel loops with the array as a reduction, and as written
where a run-time condition fails.

``scatter_cases/scatter.c`` holds an 8-bit image histogram into a declared ``int hist[256]``
and into an ``int *``, a k-means centroid update (``float *sum``, ``int *cnt``, labels read from
memory), particle-in-cell charge deposition into ``double *rho`` at the cell of each position,
a bincount whose counts are too large for a copy on every thread's stack (as written) next to
one small enough, a scatter whose accumulator is one of its inputs or covers the indices it
reads (as written), and the other update forms (``A[e] = A[e] + v``, ``|=``, ``fmaxf``, ``--``).
Each case runs on its own at 1, 2 and 3 threads and must print what the sequential program
prints; which loops ran in parallel is counted by a preloaded library that wraps libgomp's
``GOMP_parallel`` (a pointer's section is found by an inspection, itself a parallel loop, so a
parallel scatter on a pointer counts two teams and one that runs as written after its inspection
counts one)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from e2e_harness import build_c, c_compiler, child_env, mdpoly_available, mdpoly_command, run_step
from usability_harness import mdpoly, report

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

SOURCE = Path(__file__).parent / "scatter_cases" / "scatter.c"

COUNTER = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
static long teams, single;
void GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags) {
  static void (*real)(void (*)(void *), void *, unsigned, unsigned);
  if (!real) real = (void (*)(void (*)(void *), void *, unsigned, unsigned))dlsym(RTLD_NEXT, "GOMP_parallel");
  if (n == 1) single++; else teams++;
  real(fn, data, n, flags);
}
__attribute__((destructor)) static void report(void) { fprintf(stderr, "teams %ld single %ld\n", teams, single); }
"""

QUIET = {"MDP_LOADAVG": '"/nonexistent/loadavg"'}   # the run-time team: OMP_NUM_THREADS, whatever the load

#: case -> teams of more than one thread at 2 and 3 threads (none at one: every loop runs as written)
TEAMS = {
    "hist": 5,      # the declared array (no inspection), then two calls on the pointer (inspection + loop)
    "kmeans": 2,
    "pic": 2,
    "overlap": 2,   # two calls, each only its inspection: the section overlaps an input
    "large": 3,     # 1.6 MB of counts: the inspection only; then 8 KB: inspection + loop
    "forms": 2,
}

#: line of each scatter loop -> the arrays it reduces
LOOPS = {18: ["hist"], 26: ["h"], 33: ["cnt", "sum"], 44: ["rho"], 54: ["counts"], 61: ["acc"],
         68: ["d", "m", "mx", "s"]}


def _run(exe: Path, case: str, threads: int, lib: Path | None = None) -> tuple[str, int]:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    if lib is not None:
        env["LD_PRELOAD"] = str(lib)
    proc = run_step([str(exe), case], env=env)
    found = re.search(r"teams (\d+) single", proc.stderr)
    return proc.stdout, int(found.group(1)) if found else 0


def test_scatter_loops_run_in_parallel_and_agree_with_the_original(tmp_path: Path) -> None:
    out = tmp_path / "out.c"
    done = mdpoly(SOURCE, out)
    assert done.returncode == 0, done.stderr
    for line, names in LOOPS.items():
        remark = next((ln for ln in done.stderr.splitlines() if f"scatter.c:{line}:5: remark:" in ln), "")
        assert all(f":{name})" in remark for name in names), (line, remark)
        assert f"the loop at line {line} runs in parallel with '{names[0]}'" in remark, remark
    text = out.read_text()
    assert "reduction(+:hist)" in text
    assert "reduction(+:h[mdp_ins_lo_h:mdp_ins_hi_h - mdp_ins_lo_h + 1])" in text
    assert "reduction(max:mx[mdp_ins_lo_mx:" in text and "reduction(|:m[mdp_ins_lo_m:" in text
    loops = {e["line"]: e for n in report(out) for e in n.get("schedule") or [] if e.get("kind") == "private-loop"}
    assert {ln: [r["name"] for r in loops[ln]["scatter_reductions"]] for ln in LOOPS} == LOOPS

    lib_src = tmp_path / "counter.c"
    lib_src.write_text(COUNTER)
    lib = tmp_path / "libcounter.so"
    run_step([c_compiler(), "-O2", "-shared", "-fPIC", str(lib_src), "-o", str(lib), "-ldl"])
    seq = build_c(SOURCE, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", QUIET, openmp=True)
    for case, teams in TEAMS.items():
        reference, _ = _run(seq, case, 1)
        assert reference.startswith(case), reference
        for threads in (1, 2, 3):
            got, count = _run(par, case, threads, lib)
            mismatch = compare_outputs(reference, got, rtol=1e-6, atol=1e-9)
            assert mismatch is None, f"{case} at {threads} threads: {mismatch}"
            assert count == (teams if threads > 1 else 0), (case, threads, count)


def test_gpu_targets_keep_scatter_loops_off_the_device(tmp_path: Path) -> None:
    """``--target opencl``/``cuda``: a thread per iteration would race on the updates; the remark says so."""
    for target in ("opencl", "cuda"):
        out = tmp_path / f"{target}.c"
        proc = run_step([*mdpoly_command(), str(SOURCE), "-o", str(out), "--target", target, "--all-nests",
                         "--no-tune"], env=child_env(MDPOLY_COST_CALIBRATION="gpu_min_speedup=0"))
        for line, names in LOOPS.items():
            note = next((ln for ln in proc.stderr.splitlines() if f"scatter.c:{line}:5: note:" in ln), "")
            updated = ", ".join(f"'{name}'" for name in names)
            assert "[sequential-body]" in note and f"it updates {updated} at indices read from memory" in note, note
