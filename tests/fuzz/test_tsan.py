"""ThreadSanitizer over mdpoly's OpenMP output: the examples (and a few fuzz programs) race-free.

gcc's libgomp is not instrumented, so TSan alone reports false races across its barriers and
thread-pool handoffs (``TSAN_OPTIONS=ignore_noninstrumented_modules=1`` does not help: the
missing edges are synchronization, not accesses). ``tsan_gomp.c`` wraps the GOMP entry points
with ``-Wl,--wrap`` and marks their happens-before edges; the first tests prove the setup: a
deliberately racy OpenMP program IS reported (two kinds of race), a correct one (barriers,
reductions, repeated parallel regions) is NOT. An object that calls a GOMP entry point the
wrapper does not model fails the test rather than risking a false report or a missed race.

The README's quick test command runs the setup's proofs (one racy program), one example and one
OpenMP region; the other programs are marked ``campaign`` (``pytest -m campaign``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .cast import render
from .generator import generate
from .known import known_for
from .runner import REPO, c_compiler, child_env, mdpoly_command

HERE = Path(__file__).resolve().parent
WRAPPER = HERE / "tsan_gomp.c"
WRAPPED = ("GOMP_parallel", "GOMP_barrier", "GOMP_loop_end", "GOMP_sections_end", "GOMP_critical_start",
           "GOMP_critical_end", "GOMP_atomic_start", "GOMP_atomic_end")
#: GOMP entry points that need no happens-before edge (work sharing without synchronization).
UNSYNCHRONIZED = re.compile(r"GOMP_(loop_\w+_(start|next)|loop_end_nowait|single_start|sections_next|"
                            r"sections_start|sections_end_nowait)$")
EXAMPLE_SIZES: dict[str, dict[str, int]] = {
    "matvec": {"I": 37, "K": 101}, "matmul": {"M": 37, "N": 53, "K": 41},
    "mcc": {"N": 2, "P": 5, "Q": 7, "K": 13, "C": 11, "R": 3, "S": 2}, "jacobi2d": {"N": 37, "M": 53},
    "dot": {"N": 1001}, "colmax": {"N": 37, "M": 53}, "prefix_sum": {"N": 101},
    "tensor_contraction": {"NA": 5, "NB": 7, "NC": 11, "ND": 13, "NE": 3}, "intsum": {"N": 37, "M": 101},
    "saxpy_scalar": {"N": 1001},
}
FUZZ_SEEDS = (3, 5, 7, 11)
#: the quick set's cases (README.md "Run the tests"); the others of each list are a campaign
QUICK = {"unprotected-sum", "matmul", "region_cases/jacobi_2d", "gather_cases/inspected_gathers"}
TSAN_ENV = {"TSAN_OPTIONS": "halt_on_error=1 exitcode=66 report_signal_unsafe=0"}


def _tsan_unavailable() -> str | None:
    if shutil.which(c_compiler()) is None:
        return f"no C compiler {c_compiler()!r}"
    probe = subprocess.run([c_compiler(), "-fsanitize=thread", "-fopenmp", "-x", "c", "-", "-o", os.devnull],
                           input="int main(void){return 0;}", capture_output=True, text=True)
    if probe.returncode != 0:
        return f"{c_compiler()} cannot link -fsanitize=thread -fopenmp: {probe.stderr[-300:]}"
    return None


pytestmark = pytest.mark.skipif(_tsan_unavailable() is not None, reason=str(_tsan_unavailable()))


def tsan_build(source: Path, exe: Path, defines: dict[str, int] | None = None) -> None:
    """Build ``source`` with TSan and the GOMP wrapper; refuse unmodelled GOMP entry points."""
    flags = [f"-D{k}={v}" for k, v in (defines or {}).items()]
    obj = exe.with_suffix(".o")
    subprocess.run([c_compiler(), "-O1", "-g", "-fsanitize=thread", "-fopenmp", *flags, "-c", str(source),
                    "-o", str(obj)], check=True, capture_output=True, text=True)
    nm = subprocess.run(["nm", "-u", str(obj)], check=True, capture_output=True, text=True).stdout
    used = set(re.findall(r"\b(GOMP_\w+)", nm))
    unmodelled = sorted(u for u in used if u not in WRAPPED and not UNSYNCHRONIZED.match(u))
    assert not unmodelled, f"{source}: tsan_gomp.c does not model {unmodelled}; add them there"
    wrap = "-Wl," + ",".join(f"--wrap={w}" for w in WRAPPED)
    subprocess.run([c_compiler(), "-g", "-fsanitize=thread", "-fopenmp", str(obj), str(WRAPPER), wrap,
                    "-o", str(exe), "-lm"], check=True, capture_output=True, text=True)


def tsan_run(exe: Path, threads: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **TSAN_ENV, "OMP_NUM_THREADS": str(threads)}
    return subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=300)


def assert_race_free(exe: Path) -> None:
    for threads in (2, 3):
        r = tsan_run(exe, threads)
        assert "ThreadSanitizer" not in r.stderr and r.returncode == 0, \
            f"{exe} at OMP_NUM_THREADS={threads} (exit {r.returncode}):\n{r.stderr[-4000:]}"


# {{{ the setup itself

CORRECT = r"""
#include <stdio.h>
static float a[1000], b[1000];
int main(void) {
    float s = 0;
    for (int i = 0; i < 1000; i++) a[i] = i * 0.5f;
    #pragma omp parallel
    {
        #pragma omp for
        for (int i = 0; i < 1000; i++) b[i] = a[i] * 2;
        #pragma omp for reduction(+:s)
        for (int i = 0; i < 1000; i++) s += b[999 - i];
        #pragma omp critical
        a[0] += 1;
    }
    for (int r = 0; r < 3; r++) {
        #pragma omp parallel for schedule(static)
        for (int i = 0; i < 1000; i++) a[i] = b[i] + r;
    }
    printf("%g %g\n", s, a[5]);
    return 0;
}
"""
RACY_SUM = r"""
#include <stdio.h>
static float a[1000];
int main(void) {
    float s = 0;
    #pragma omp parallel for
    for (int i = 0; i < 1000; i++) { a[i] = i; s += a[i]; }
    printf("%g\n", s);
    return 0;
}
"""
RACY_NOWAIT = r"""
#include <stdio.h>
static float a[1000], b[1000];
int main(void) {
    #pragma omp parallel
    {
        #pragma omp for schedule(static) nowait
        for (int i = 0; i < 1000; i++) a[i] = i;
        #pragma omp for schedule(static)
        for (int i = 0; i < 1000; i++) b[i] = a[999 - i];
    }
    printf("%g\n", b[3]);
    return 0;
}
"""


def test_correct_openmp_program_is_not_reported(tmp_path: Path) -> None:
    (tmp_path / "ok.c").write_text(CORRECT)
    tsan_build(tmp_path / "ok.c", tmp_path / "ok")
    assert_race_free(tmp_path / "ok")


def _cases(values: list, ids: list[str] | None = None) -> list:
    """``values`` as parameters, those whose id is not in :data:`QUICK` marked ``campaign``."""
    ids = ids or [str(v) for v in values]
    return [pytest.param(v, id=i, marks=() if i in QUICK else pytest.mark.campaign) for v, i in zip(values, ids)]


@pytest.mark.parametrize("source", _cases([RACY_SUM, RACY_NOWAIT], ["unprotected-sum", "missing-barrier"]))
def test_racy_openmp_program_is_reported(source: str, tmp_path: Path) -> None:
    (tmp_path / "racy.c").write_text(source)
    tsan_build(tmp_path / "racy.c", tmp_path / "racy")
    r = tsan_run(tmp_path / "racy", 3)
    assert "ThreadSanitizer: data race" in r.stderr and r.returncode == 66, r.stderr[-2000:]

# }}}


def _mdpoly(source: Path, out: Path, defines: dict[str, int]) -> None:
    cmd = [*mdpoly_command(), str(source), "-o", str(out), "--target", "openmp", "--no-tune", "--all-nests", "-q"]
    for k, v in defines.items():
        cmd += ["-D", f"{k}={v}"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


def test_every_example_has_sizes() -> None:
    assert {p.stem for p in (REPO / "c_examples").glob("*.c")} == set(EXAMPLE_SIZES)


@pytest.mark.parametrize("name", _cases(sorted(EXAMPLE_SIZES)))
def test_example_output_is_race_free(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.c"
    _mdpoly(REPO / "c_examples" / f"{name}.c", out, EXAMPLE_SIZES[name])
    tsan_build(out, tmp_path / name, EXAMPLE_SIZES[name])
    assert_race_free(tmp_path / name)


@pytest.mark.campaign
@pytest.mark.parametrize("seed", FUZZ_SEEDS)
def test_fuzz_program_output_is_race_free(seed: int, tmp_path: Path) -> None:
    (tmp_path / "prog.c").write_text(render(generate(seed)).text)
    _mdpoly(tmp_path / "prog.c", tmp_path / "out.c", {})
    tsan_build(tmp_path / "out.c", tmp_path / "par")
    assert_race_free(tmp_path / "par")


#: OpenMP regions around sequential host loops (``tests/e2e/region_cases``), privatized
#: temporaries (``tests/e2e/privatize_cases``) and inspected gathers (``tests/e2e/gather_cases``): the sizes they run at, and a word of the output
#: that shows the transformation happened
REGION_CASES = {"region_cases/jacobi_2d": ({"N": 40, "TSTEPS": 3}, "_team("),
                "region_cases/host_statements": ({"N": 301}, "_team("),
                "region_cases/power_int": ({"N": 41}, "_team("),
                "region_cases/nested": ({"N": 301}, "_team("),
                "privatize_cases/doitgen": ({}, "lastprivate(mdp_priv_sum)"),
                "region_loops_cases/adi": ({"N": 40, "TSTEPS": 2}, "#pragma omp for schedule(static) private(j)"),
                "region_loops_cases/row_scalar": ({"N": 32, "TSTEPS": 2}, "lastprivate(mdp_priv_s)"),
                "region_loops_cases/adi_columns": ({"N": 45, "TSTEPS": 2}, "mdp_blk"),
                # gathers inspected at run time: the min/max inspection, then the loop
                "gather_cases/inspected_gathers": ({}, "reduction(min:mdp_ins_lo_fin)"),
                "gather_cases/region_gather": ({}, "reduction(min:mdp_ins_lo_src)")}


@pytest.mark.parametrize("name", _cases(sorted(REGION_CASES)))
def test_region_output_is_race_free(name: str, tmp_path: Path) -> None:
    sizes, word = REGION_CASES[name]
    out = tmp_path / "out.c"
    _mdpoly(REPO / "tests" / "e2e" / f"{name}.c", out, sizes)
    assert word in out.read_text()
    tsan_build(out, tmp_path / "prog", sizes)
    assert_race_free(tmp_path / "prog")


def _real_c_seeds_with_user_openmp(count: int) -> list[int]:
    """The first seeds (from 9600) whose real-C program has the user's own ``#pragma omp``, known
    bugs' forms left out."""
    seeds = []
    for seed in range(9600, 9800):
        prog = generate(seed, real_c=1.0, avoid=known_for("openmp"))
        if any("user-omp" in k.tags for k in prog.kernels):
            seeds.append(seed)
        if len(seeds) == count:
            break
    return seeds


@pytest.mark.campaign
@pytest.mark.parametrize("seed", _real_c_seeds_with_user_openmp(3))
def test_real_c_user_openmp_is_race_free(seed: int, tmp_path: Path) -> None:
    """The generator's own ``#pragma omp parallel for`` lines are race-free (the original is a
    valid reference), and so is mdpoly's output next to them."""
    (tmp_path / "prog.c").write_text(render(generate(seed, real_c=1.0, avoid=known_for("openmp"))).text)
    tsan_build(tmp_path / "prog.c", tmp_path / "orig")
    assert_race_free(tmp_path / "orig")
    _mdpoly(tmp_path / "prog.c", tmp_path / "out.c", {})
    tsan_build(tmp_path / "out.c", tmp_path / "par")
    assert_race_free(tmp_path / "par")
