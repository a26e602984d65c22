"""Parallel loops whose bodies are sequential programs (``PrivateLoop`` items of a schedule).

ADI solves one tridiagonal system per row and then per column in every time step: the row and
column loops carry no dependence, but each body is a Thomas solve (two sequential loops), so no
MDH band describes it. The scheduler makes such a loop a parallel loop around its body as
written -- inside the time loop's OpenMP region an orphaned ``omp for`` -- and so it does for a
plain row-wise Thomas solve and for a row loop whose scalar temporary is private to each thread
(its last value read after the nest). A row loop that carries a flow dependence is kept. Each
program must print what the original prints at 1, 2 and 3 threads. A loop of three iterations
whose inner loops are computations stays a host loop around them. ADI's column sweep (the
parallel loop is the arrays' contiguous dimension) takes its columns in blocks inside the row
recurrences.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e_harness import build_c, campaign_except, mdpoly_available, run_mdpoly, run_program

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

CASES_DIR = Path(__file__).resolve().parent / "region_loops_cases"

#: case -> (the schedule remark's shape or "" when kept, words the OpenMP output must contain)
CASES = {
    "adi": ("t:seq-in-region{ [i:++ private-body] [i:++ private-body] }",
            ("#pragma omp parallel num_threads(mdp_region1_nt) private(t)",
             "#pragma omp for schedule(static) private(j)")),
    "thomas_rows": ("[i:++ private-body]", ("#pragma omp parallel for schedule(static) private(j)",)),
    "row_scalar": ("t:seq-in-region{ [i:++ with private s] [i:++ j:++ MDH at line 26] }",
                   ("#pragma omp for schedule(static) private(j) firstprivate(mdp_priv_s) lastprivate(mdp_priv_s)",)),
    "carried": ("", ()),
    "channels": ("c:seq{ [i:++ j:++ MDH at line 17] [i:++ j:++ MDH at line 20] }", ()),
    "iterator_read": ("j:seq-in-region{ [i:++ MDH at line 19] }", ()),
    "adi_columns": ("t:seq-in-region{ [i:++ private-body] [j:++ private-body in blocks of 32] }",
                    ("#pragma omp for schedule(static) private(i, j)\n          for (long mdp_blk = 1;",)),
}


def _check(src: Path, tmp_path: Path, name: str) -> tuple[str, dict[str, Any]]:
    """Transform ``src``; compare the output at 1, 2 and 3 threads with the original's; return
    mdpoly's stderr and the report's first nest."""
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = run_mdpoly(src, out_c, {}, extra=["--report", str(report)])
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 2, 3):
        assert run_program(parallel, threads=threads) == reference, f"{name} at {threads} threads ({out_c})"
    nest: dict[str, Any] = json.loads(report.read_text())["nests"][0]
    return proc.stderr, nest


@pytest.mark.parametrize("name", campaign_except(sorted(CASES), *(c for c in CASES if c != "adi_columns")))
def test_parallel_loop_program_matches_original(name: str, tmp_path: Path) -> None:
    src = CASES_DIR / f"{name}.c"
    stderr, nest = _check(src, tmp_path, name)
    shape, words = CASES[name]
    text = (tmp_path / "out.c").read_text()
    for word in words:
        assert word in text, word
    if not shape:   # a real flow dependence: kept as written, with the reason
        assert nest["status"] == "kept" and nest["code"] == "sequential-dependence"
        assert "loop 'i' carries a flow dependence" in nest["reason"]
        kernel = text[text.index("static void carried("):text.index("static double c[N]")]
        assert "#pragma omp" not in kernel and "for (i = 1; i < n; i++)" in kernel
        assert "[sequential-dependence]" in stderr
        return
    assert f"loop nest scheduled: {shape}" in stderr
    assert nest["status"] == "transformed"


def test_adi_schedule_in_report(tmp_path: Path) -> None:
    """The report's schedule: one host loop run as a region around two parallel loops whose inner
    iterators are private."""
    src = CASES_DIR / "adi.c"
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    run_mdpoly(src, out_c, {}, extra=["--report", str(report)])
    (host,) = json.loads(report.read_text())["nests"][0]["schedule"]
    assert host["kind"] == "host-loop" and host["iterator"] == "t" and host["parallel_region"] is True
    assert [(it["kind"], it["parallel"], it["private"], it["line"]) for it in host["body"]] == [
        ("private-loop", ["i"], [], 23), ("private-loop", ["i"], [], 35)]


def test_aliased_arrays_run_the_original(tmp_path: Path) -> None:
    """``B`` passed as ``A`` itself: the run-time checks (evaluated once before the region) select
    the loops as written, inside the region, on one thread."""
    text = (CASES_DIR / "row_scalar.c").read_text().replace("s = run(TSTEPS, N, A, B);", "s = run(TSTEPS, N, A, A);")
    assert "run(TSTEPS, N, A, A)" in text
    src = tmp_path / "in.c"
    src.write_text(text)
    _check(src, tmp_path, "row_scalar aliased")
    out = (tmp_path / "out.c").read_text()
    assert "mdp_private_ok" in out and "lastprivate(mdp_priv_s)" in out


@pytest.mark.parametrize("target", ["opencl", "cuda"])
def test_gpu_targets_run_the_parallel_loops_on_the_device(target: str, tmp_path: Path) -> None:
    """A parallel loop around a sequential body runs on a GPU target as a kernel of one device
    thread per iteration (``backends/device_schedule.py``): the ADI nest is transformed, and the
    remark says so."""
    src = CASES_DIR / "adi.c"
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = run_mdpoly(src, out_c, {}, extra=["--report", str(report), "--target", target])
    nest = json.loads(report.read_text())["nests"][0]
    assert nest["status"] == "transformed", nest
    assert "runs on the device, one thread per iteration" in proc.stderr, proc.stderr


def test_iterators_read_after_the_nest(tmp_path: Path) -> None:
    """ADI printing its iterators after the time loop: the inner iterator ``j`` leaves the last
    row's value (``lastprivate``: every row assigns it), ``i`` its exit value (the band's header
    once more, on one thread), ``t`` the region's exit value."""
    text = (CASES_DIR / "adi.c").read_text().replace(
        "#pragma endscop\n", '#pragma endscop\n  printf("t=%d i=%d j=%d\\n", t, i, j);\n')
    assert "t=%d" in text
    src = tmp_path / "in.c"
    src.write_text(text)
    stderr, _ = _check(src, tmp_path, "adi with its iterators read")
    assert "t:seq-in-region{ [i:++ private-body] [i:++ private-body] }" in stderr
    out = (tmp_path / "out.c").read_text()
    assert "#pragma omp for schedule(static) lastprivate(j)" in out


def test_host_loop_without_region_forks_per_step(tmp_path: Path) -> None:
    """A declaration in the time loop's body keeps it from being one region: each parallel loop
    inside it then starts its own team (``omp parallel for``) in every step."""
    text = (CASES_DIR / "adi.c").read_text().replace(
        "  for (t = 0; t < tsteps; t++) {\n    for (i = 1; i < n - 1; i++) {\n      v[0][i] = 1.0;",
        "  for (t = 0; t < tsteps; t++) {\n    double edge = 1.0 + t;\n    for (i = 1; i < n - 1; i++) {\n"
        "      v[0][i] = edge;", 1)
    assert "double edge" in text
    src = tmp_path / "in.c"
    src.write_text(text)
    stderr, nest = _check(src, tmp_path, "adi with a declaration in its time loop")
    assert "t:seq{ [i:++ private-body] [i:++ private-body] }" in stderr
    (host,) = nest["schedule"]
    assert host["no_region_reason"] == "the declaration at line 23 would be private to each thread"
    assert (tmp_path / "out.c").read_text().count("#pragma omp parallel for schedule(static) private(j)") == 2


def test_loop_under_a_user_pragma_stays_as_written(tmp_path: Path) -> None:
    """The user's ``#pragma omp parallel for`` before the row loop: that loop stays as written
    (already parallel), the time loop around it is kept (it holds the user's OpenMP) and the
    column loop next to it becomes a parallel loop of its own, a nest with its own entry (issue
    21 changed the report from ``t:seq{ [i:++ private-body] }`` to these three entries)."""
    text = (CASES_DIR / "adi.c").read_text().replace(
        "  for (t = 0; t < tsteps; t++) {\n    for (i = 1;",
        "  for (t = 0; t < tsteps; t++) {\n#pragma omp parallel for private(j)\n    for (i = 1;", 1)
    assert "#pragma omp parallel for private(j)\n    for (i = 1;" in text
    src = tmp_path / "in.c"
    src.write_text(text)
    stderr, _ = _check(src, tmp_path, "adi with a user pragma")
    assert "note: loop nest kept as written: it holds the user's '#pragma omp parallel for private(j)'" in stderr
    assert "note: loop nest already parallel (OpenMP): the loop is annotated" in stderr
    assert "remark: loop nest scheduled: [i:++ private-body]" in stderr
    nests = json.loads((tmp_path / "report.json").read_text())["nests"]
    assert [(n["status"], n["code"]) for n in nests[:3]] == [
        ("kept", "openmp-inside"), ("already-parallel", "already-parallel"), ("transformed", None)]
    out = (tmp_path / "out.c").read_text()
    assert "#pragma omp parallel for num_threads(mdp_team()) private(j)\n    for (i = 1;" in out   # test_user_teams.py
