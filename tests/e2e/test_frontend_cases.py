"""Differential tests over C the way people write it (``frontend_cases/*.c``).

Each program is built as written and through ``mdpoly --all-nests --no-tune``; both run (the
parallel one with 1 and 3 threads) and must print the same values. ``alias_shift.c`` calls the
transformed functions with overlapping pointer arguments: the run-time alias guard must fall back
to the original nest there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available, run_mdpoly, run_program

from mdpoly.differential import compare_outputs

CASES_DIR = Path(__file__).resolve().parent / "frontend_cases"
CASES = sorted(p.name for p in CASES_DIR.glob("*.c"))

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")


@pytest.mark.parametrize("name", CASES)
def test_case_matches_original(name: str, tmp_path: Path) -> None:
    source = CASES_DIR / name
    reference = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    run_mdpoly(source, out_c, {}, extra=["-q", "--no-tune"])
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 3):
        mismatch = compare_outputs(reference, run_program(parallel, threads=threads), rtol=1e-4, atol=1e-4)
        assert mismatch is None, f"{name}, OMP_NUM_THREADS={threads} (out.c in {tmp_path}): {mismatch}"


def test_alias_guard_falls_back(tmp_path: Path) -> None:
    out_c = tmp_path / "out.c"
    run_mdpoly(CASES_DIR / "alias_shift.c", out_c, {}, extra=["-q", "--no-tune"])
    text = out_c.read_text()
    assert text.count("mdpoly_scale_") >= 2 and "mdp_alias_ok" in text, text
    assert "      y[i] += A[i][j] * x[j];" in text  # the original nest, verbatim, in the fallback branch


def test_rebound_temporaries_keep_their_nests_parallel(tmp_path: Path) -> None:
    """A temporary reassigned by later statements of its block (``dx -= box * rint(dx / box);``,
    ``d = d < m ? d : m;``, ``k++;``) is a new value to inline, not data the nest computes: the
    conditions that test it stay predicates, and the pair loop keeps its reduction. A temporary
    read after the nest overwrote its input (a filter's ``out`` and state ``z``) is a local of
    each iteration instead, and the channel loop stays parallel."""
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    run_mdpoly(CASES_DIR / "rebound_temps.c", out_c, {}, extra=["-q", "--no-tune", "--report", str(report)])
    nests = {n["line"]: n for n in json.loads(report.read_text())["nests"]}
    assert all(nests[line]["status"] == "transformed" for line in (16, 36, 48, 63)), nests
    assert nests[16]["mdh"] is not None and "+" in str(nests[16]["loops"]), nests[16]


def test_helpers_of_several_statements_keep_their_nests_parallel(tmp_path: Path) -> None:
    """Calls of static helpers with locals, compound assignments and early returns (a minmod
    limiter, an int clamp in a gather, a xorshift hash, a squared distance through pointer
    parameters) are their expressions: every nest that calls one is transformed, the distance
    sum keeps its reduction, and no call is left in the generated code or the functions that
    call it."""
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    run_mdpoly(CASES_DIR / "helper_bodies.c", out_c, {}, extra=["-q", "--no-tune", "--report", str(report)])
    nests = {n["line"]: n for n in json.loads(report.read_text())["nests"]}
    assert all(nests[line]["status"] == "transformed" for line in (43, 48, 53, 58, 63, 70, 78)), nests
    assert nests[78]["loops"][0]["combine"] == "+", nests[78]
    after_helpers = out_c.read_text().split('#line 1 "<mdpoly generated>"', 1)[1]
    for helper in ("minmod(", "clampi(", "xorshift64(", "sq_dist(", "mix(", "shrink(", "weight(", "near_origin("):
        assert helper not in after_helpers, helper
