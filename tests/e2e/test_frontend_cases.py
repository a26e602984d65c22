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


def test_clamped_taps_need_no_precondition_on_the_radius(tmp_path: Path) -> None:
    """``row[clampi(x + t, 0, w - 1)]`` and ``x - t < 0 ? 0.0f : src[y*w + x - t]``: each read of
    the unclamped tap is evaluated only where its two-iterator index lies in the row, so the
    nests run in parallel without a run-time condition on the radius (before, ``-r >= 0``: never
    true for a real blur, the generated code never ran)."""
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    run_mdpoly(CASES_DIR / "clamped_taps.c", out_c, {}, extra=["-q", "--no-tune", "--report", str(report)])
    nests = {n["line"]: n for n in json.loads(report.read_text())["nests"]}
    for line in (11, 25):
        assert nests[line]["status"] == "transformed", nests[line]
        text = json.dumps(nests[line])
        assert "-(long long)r" not in text and "(long long)r" not in text, text


def test_csr_row_loops_run_in_parallel_around_their_rows(tmp_path: Path) -> None:
    """The row loops of a CSR product and a Jacobi sweep, whose inner loops take their bounds from
    the row pointers, run in parallel around their bodies as written, behind an inspection of the
    gathered reads (``x[ci[p]]``) and the checks of its ranges against the written vector."""
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    run_mdpoly(CASES_DIR / "csr_rows.c", out_c, {}, extra=["-q", "--no-tune", "--report", str(report)])
    nests = {n["line"]: n for n in json.loads(report.read_text())["nests"]}
    for line in (10, 20):
        assert nests[line]["status"] == "transformed", nests[line]
        loop = nests[line]["schedule"][0]
        assert loop["kind"] == "private-loop" and loop["parallel"] == ["r"], loop
    text = out_c.read_text()
    assert "mdp_ins_lo_x" in text and "mdp_ins_hi_mdp_m_A_ci" in text, text


def test_temporaries_assigned_after_their_declaration_keep_their_nests_parallel(tmp_path: Path) -> None:
    """``double dl, dr; dl = ...; dr = ...;``: a scalar declared without a value whose first use in
    its block is ``x = e;`` is the temporary ``T x = e;`` there, so the flux nest, the clamp, the
    row sums (an index temporary and a running sum assigned before the inner loop), the loop
    with an unused declaration and the C89 transpose (``int j; for (j = 0; ...)``) are all
    transformed."""
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    run_mdpoly(CASES_DIR / "assigned_later_temps.c", out_c, {},
               extra=["-q", "--no-tune", "--report", str(report)])
    nests = {n["line"]: n for n in json.loads(report.read_text())["nests"]}
    assert all(nests[line]["status"] == "transformed" for line in (13, 24, 35, 50, 58)), nests
    assert nests[13]["mdh"] is not None and nests[35]["mdh"] is not None, nests


def test_size_t_products_in_bounds_are_transformed(tmp_path: Path) -> None:
    """``t < (size_t)nq * n`` and ``i < (size_t)w * h * 3``: the product of int sizes is a size
    parameter, and the generated code runs only where the size_t product (modulo 2^64) equals it
    and the bound fits ``long long``; the differential run covers negative pairs whose size_t
    product is small."""
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    run_mdpoly(CASES_DIR / "size_products.c", out_c, {}, extra=["-q", "--no-tune", "--report", str(report)])
    nests = {n["line"]: n for n in json.loads(report.read_text())["nests"]}
    assert all(nests[line]["status"] == "transformed" for line in (15, 22, 29)), nests
    assert nests[15]["loops"][0]["extent"] == "mdp_p_n_nq" and nests[22]["loops"][0]["extent"] == "3 * mdp_p_h_w"
    text = out_c.read_text()
    assert "(__int128)(((size_t) nq) * n) ==" in text and "<= ((__int128) 9223372036854775807LL)" in text


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


def test_row_aliases_of_row_pointer_grids_keep_their_nests_parallel(tmp_path: Path) -> None:
    """``const double *ur = u[j]; double *fr = f[j];`` are rows of ``double **`` grids: the alias
    reads and writes are the grid's (``u[j][i]``, ``f[j][i]``), so the row loop stays parallel
    (before: ``j:seq`` around the inner loop)."""
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    run_mdpoly(CASES_DIR / "row_aliases.c", out_c, {}, extra=["-q", "--no-tune", "--report", str(report)])
    nests = {n["line"]: n for n in json.loads(report.read_text())["nests"]}
    for line in (10, 20):
        assert nests[line]["status"] == "transformed" and nests[line]["mdh"] is not None, nests[line]
        assert [lp["combine"] for lp in nests[line]["loops"]][:1] == ["++"], nests[line]["loops"]


def test_csr_inner_loops_writing_the_rows_own_element(tmp_path: Path) -> None:
    """An inner loop with bounds read from memory that writes the row's own element (``y[r] +=``,
    ``d[r] = v[p]`` where ``ci[p] == r``) no longer keeps the row loop sequential: the element is
    the same however often the loop runs, and the surrogate writes it too."""
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    run_mdpoly(CASES_DIR / "csr_row_elements.c", out_c, {}, extra=["-q", "--no-tune", "--report", str(report)])
    nests = {n["line"]: n for n in json.loads(report.read_text())["nests"]}
    for line in (13, 22):
        assert nests[line]["status"] == "transformed", nests[line]
