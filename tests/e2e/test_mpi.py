"""Differential tests of ``--mpi``: programs built with ``mpicc``, run with ``mpirun -np 1..4``.

Every rank runs ``main`` on replicated data and prints; every rank's output must equal the
sequential program's (exactly for the programs of ``mpi_cases/``, whose data are integers or
exactly representable floats, and for integer/``++``/max examples; within the float tolerance of
``test_examples`` for the float reductions of ``c_examples/``, which ``--mpi`` reassociates like
the threads do). The report must say which dimension was split over the ranks, or why none
was. Skipped, with the reason, where ``mpicc``/``mpirun`` are missing (``.ci/run`` installs
OpenMPI).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from e2e_harness import (
    EXAMPLES_DIR,
    build_c,
    campaign_except,
    child_env,
    mdpoly_available,
    run_mdpoly,
    run_step,
    write_cc_shim,
)

from mdpoly.differential import compare_outputs

CASES_DIR = Path(__file__).resolve().parent / "mpi_cases"
FLOAT_SUM = {"rtol": 1e-4, "atol": 1e-5}
DOUBLE_SUM = {"rtol": 1e-10, "atol": 1e-12}


def _mpi_missing() -> str | None:
    for tool in ("mpicc", "mpirun"):
        if shutil.which(tool) is None:
            return f"'{tool}' not found (install openmpi-bin and libopenmpi-dev, as .ci/run does)"
    if not mdpoly_available():
        return "mdpoly code generation is not available"
    return None


pytestmark = pytest.mark.skipif(_mpi_missing() is not None, reason=str(_mpi_missing()))


def _mpi_env() -> dict[str, str]:
    env = dict(os.environ)
    # CI runs as root; one OpenMP thread per rank (the machine has 2 cores for up to 4 ranks)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
    return env


def build_mpi(source: Path, exe: Path, defines: dict[str, int], libs: tuple[str, ...] = ()) -> Path:
    run_step(["mpicc", "-O2", "-fopenmp", *(f"-D{k}={v}" for k, v in defines.items()), str(source),
              "-o", str(exe), "-lm", *libs], env=_mpi_env())
    return exe


def run_ranks(exe: Path, ranks: int, tmp: Path) -> list[str]:
    """Run ``exe`` on ``ranks`` MPI ranks; return each rank's stdout, by rank."""
    out_dir = tmp / f"out_{exe.name}_{ranks}"
    run_step(["mpirun", "--oversubscribe", "-np", str(ranks), "--output-filename", str(out_dir), str(exe)],
             env=_mpi_env())
    files = {int(p.parent.name.split(".")[-1]): p for p in out_dir.rglob("stdout") if p.parent.name.startswith("rank.")}
    assert sorted(files) == list(range(ranks)), f"rank outputs found: {sorted(files)}"
    return [files[r].read_text() for r in range(ranks)]


def transform(source: Path, tmp: Path, defines: dict[str, int], target: str = "openmp") -> tuple[Path, dict]:  # type: ignore[type-arg]
    out, report = tmp / f"{source.stem}_{target}_mpi.c", tmp / f"{source.stem}_{target}.json"
    run_mdpoly(source, out, defines, extra=["--mpi", "--target", target, "--report", str(report)])
    return out, json.loads(report.read_text())


def mpi_notes(report: dict) -> list[str]:  # type: ignore[type-arg]
    """The ``mpi`` note of every computation of the report (parts of scheduled nests included)."""
    notes: list[str] = []

    def walk(entries: list[dict]) -> None:  # type: ignore[type-arg]
        for e in entries:
            if e.get("mpi"):
                notes.append(e["mpi"])
            walk(e.get("schedule", []) + e.get("body", []))
    walk(report["nests"])
    return notes


def check(source: Path, tmp: Path, defines: dict[str, int], ranks: tuple[int, ...], *, rtol: float = 0.0,
          atol: float = 0.0, target: str = "openmp", libs: tuple[str, ...] = ()) -> list[str]:
    """Build the original and its ``--mpi`` version; compare every rank's output for each rank
    count; return the report's MPI notes."""
    expected = run_step([str(build_c(source, tmp / f"{source.stem}_seq", defines, openmp=False))]).stdout
    out_c, report = transform(source, tmp, defines, target)
    exe = build_mpi(out_c, tmp / f"{source.stem}_{target}_mpi", defines, libs)
    for p in ranks:
        for rank, actual in enumerate(run_ranks(exe, p, tmp)):
            bad = compare_outputs(expected, actual, rtol=rtol, atol=atol)
            assert bad is None and len(actual.splitlines()) == len(expected.splitlines()), (
                f"{source.name} -np {p}, rank {rank}: {bad or 'different number of lines'}")
    return mpi_notes(report)


@pytest.mark.parametrize("case", campaign_except(["reductions", "gathers", "stencil", "triangular"], "stencil"))
def test_mpi_cases_match_sequential_on_1_to_4_ranks(case: str, tmp_path: Path) -> None:
    notes = check(CASES_DIR / f"{case}.c", tmp_path, {}, (1, 2, 3, 4))
    assert any("split over MPI ranks" in n for n in notes), notes


EXAMPLES = {
    # name: (sizes, tolerances, the kind of split expected)
    "matmul": ({"M": 37, "N": 53, "K": 101}, FLOAT_SUM, "MPI_Allgatherv"),
    "matvec": ({"I": 37, "K": 101}, FLOAT_SUM, "MPI_Allgatherv"),
    "dot": ({"N": 1009}, DOUBLE_SUM, "MPI_Allreduce"),
    "colmax": ({"N": 37, "M": 53}, {}, "MPI_Allgatherv"),
    "mcc": ({"N": 2, "P": 5, "Q": 7, "K": 13, "C": 11, "R": 3, "S": 2}, FLOAT_SUM, "MPI_Allgatherv"),
}


@pytest.mark.parametrize("name", campaign_except(sorted(EXAMPLES), "matvec"))
def test_examples_match_sequential_on_2_and_3_ranks(name: str, tmp_path: Path) -> None:
    sizes, tol, how = EXAMPLES[name]
    notes = check(EXAMPLES_DIR / f"{name}.c", tmp_path, sizes, (2, 3), **tol)
    assert any("split over MPI ranks" in n and how in n for n in notes), notes


def test_too_little_work_is_not_split_and_still_right(tmp_path: Path) -> None:
    notes = check(EXAMPLES_DIR / "matmul.c", tmp_path, {"M": 3, "N": 5, "K": 3}, (2,), **FLOAT_SUM)
    assert notes and all("not split over MPI ranks" in n and "[mpi-too-little-work]" in n for n in notes), notes


def test_program_that_initialises_mpi_itself(tmp_path: Path) -> None:
    """A computation before the program's own ``MPI_Init`` runs whole (no collectives before
    MPI exists); the later ones are split; the program's ``MPI_Finalize`` ends MPI."""
    src = CASES_DIR / "user_init.c"
    inc = run_step(["mpicc", "--showme:incdirs"]).stdout.split()
    ref = tmp_path / "user_init_ref"
    run_step(["mpicc", "-O2", str(src), "-o", str(ref)], env=_mpi_env())
    expected = run_step([str(ref)], env=_mpi_env()).stdout
    out_c, report = tmp_path / "user_init_mpi.c", tmp_path / "user_init.json"
    run_mdpoly(src, out_c, {}, extra=["--mpi", "--report", str(report), *(f"-I{d}" for d in inc)])
    assert len([n for n in mpi_notes(json.loads(report.read_text())) if "split over MPI ranks;" in n]) == 3
    exe = build_mpi(out_c, tmp_path / "user_init_mpi", {})
    for p in (1, 3):
        for rank, actual in enumerate(run_ranks(exe, p, tmp_path)):
            assert actual == expected, f"-np {p}, rank {rank}: {actual!r} != {expected!r}"


def test_profile_build_prints_phase_times_per_rank(tmp_path: Path) -> None:
    src = CASES_DIR / "reductions.c"
    out_c, _ = transform(src, tmp_path, {})
    exe = tmp_path / "reductions_profile"
    run_step(["mpicc", "-O2", "-fopenmp", "-DMDPOLY_MPI_PROFILE", str(out_c), "-o", str(exe), "-lm"], env=_mpi_env())
    run_ranks(exe, 2, tmp_path)
    errs = {p.parent.name: p.read_text() for p in tmp_path.rglob("stderr") if p.parent.name.startswith("rank.")}
    for rank in ("rank.0", "rank.1"):
        assert re.search(r"mdpoly-mpi \w+ rank \d/2: compute [0-9.]+ s \(cpu [0-9.]+ s\), allreduce [0-9.]+ s",
                         errs.get(rank, "")), errs


def test_mdpoly_cc_mpi_builds_with_the_mpi_compiler(tmp_path: Path) -> None:
    """``mdpoly-cc --mpi`` compiles with ``$MDPOLY_MPICC`` (here a script that records its call,
    then runs mpicc): the MPI program links without naming any MPI flag."""
    shim = write_cc_shim(tmp_path)
    log = tmp_path / "mpicc.log"
    mpicc = tmp_path / "my-mpicc"
    mpicc.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nexec mpicc \"$@\"\n")
    mpicc.chmod(0o755)
    src = CASES_DIR / "reductions.c"
    exe = tmp_path / "prog"
    env = child_env(**{k: v for k, v in _mpi_env().items() if k.startswith("OMP")}, MDPOLY_MPICC=str(mpicc))
    run_step([str(shim), "--mpi", "--", "-O2", "-fopenmp", str(src), "-o", str(exe)], env=env)
    assert log.is_file() and "reductions.c" in log.read_text()
    expected = run_step([str(build_c(src, tmp_path / "seq", {}, openmp=False))]).stdout
    assert run_ranks(exe, 2, tmp_path) == [expected, expected]


def _opencl_missing() -> str | None:
    from test_opencl_examples import opencl_unavailable
    return opencl_unavailable()


@pytest.mark.skipif(_opencl_missing() is not None, reason=str(_opencl_missing()))
def test_opencl_target_on_2_ranks(tmp_path: Path) -> None:
    notes = check(EXAMPLES_DIR / "matvec.c", tmp_path, {"I": 37, "K": 101}, (2,), target="opencl",
                  libs=("-lOpenCL",), **FLOAT_SUM)
    assert any("split over MPI ranks" in n for n in notes), notes
