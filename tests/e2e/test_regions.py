"""One OpenMP parallel region around a sequential host loop (``mdpoly.backends.host_schedule``).

Each kernel in ``region_cases/`` is a time-iterated loop around parallel bands, written from its
textbook definition. mdpoly's output must print what the original prints at 1, 2 and 3 threads
(inputs keep every sum exact), and the report must say which host loops became one parallel
region (``parallel_region``) or why not; the generated code must start one thread team for the
whole host loop, not one per iteration.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available, run_mdpoly, run_program

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

CASES_DIR = Path(__file__).resolve().parent / "region_cases"

#: case -> (the schedule remark's shape, per outermost host loop: "" = one region, else a word of
#: the reason it is not one)
CASES = {
    "jacobi_2d": ("t:seq-in-region{ [i:++ j:++ MDH at line 13] [i:++ j:++ MDH at line 16] }", [""]),
    "host_statements": ("t:seq-in-region{ [i:++ MDH at line 12] [i:++ MDH at line 16] }", [""]),
    "power_int": ("t:seq-in-region{ [i:++ j:+ MDH at line 10] [i:++ MDH at line 15] }", [""]),
    "declared_in_loop": ("t:seq{ [i:++ MDH at line 12] [i:++ MDH at line 14] }", ["declaration"]),
    "nested": ("t:seq-in-region{ k:seq{ [i:++ MDH at line 12] [i:++ MDH at line 14] } "
               "[j:+ MDH at line 18] }", [""]),
}


def _kernel(out_c: str) -> str:
    """The text of the user's ``kernel_*`` function in mdpoly's output."""
    m = re.search(r"^void kernel_\w+\(.*?^}", out_c, re.S | re.M)
    assert m is not None
    return m.group(0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_region_program_matches_original(name: str, tmp_path: Path) -> None:
    src = CASES_DIR / f"{name}.c"
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = run_mdpoly(src, out_c, {}, extra=["--report", str(report)])
    shape, regions = CASES[name]
    assert f"loop nest scheduled: {shape}" in proc.stderr
    nest = json.loads(report.read_text())["nests"][0]
    loops = [item for item in nest["schedule"] if item["kind"] == "host-loop"]
    assert [lp["parallel_region"] for lp in loops] == [not r for r in regions]
    for lp, why in zip(loops, regions, strict=True):
        assert why in lp.get("no_region_reason", "")
    kernel = _kernel(out_c.read_text())
    teams = kernel.count("#pragma omp parallel")
    if all(not r for r in regions):
        # one team for the whole time loop, and the bands' functions share out their loops
        assert teams == 1 and "_team(" in kernel
        assert re.search(r"#pragma omp parallel( num_threads\(\w+\))?( private\([\w, ]*\))?\s*\{\s*for \((int )?t = 0;", kernel)
    else:
        assert teams == 0
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 2, 3):
        assert run_program(parallel, threads=threads) == reference, f"{name} at {threads} threads ({out_c})"


def test_iterators_keep_their_exit_values(tmp_path: Path) -> None:
    """The kernel prints its host loop's and its bands' iterators after the nest."""
    src = CASES_DIR / "host_statements.c"
    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, {})
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    out = run_program(parallel, threads=2)
    assert "t=9 i=3001 " in out
    assert out == run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
