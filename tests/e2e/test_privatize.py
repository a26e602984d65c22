"""Privatization of temporaries that carry only false dependences (``mdpoly.frontend.privatize``).

doitgen's row buffer ``sum[p]`` is written before it is read in every ``(r, q)`` iteration: with
a copy per thread, ``r`` and ``q`` run in parallel, and the copy of the last iteration is written
back (``main`` reads ``sum`` afterwards). Two kernels where privatization would be wrong must be
refused, with the reason in the report: a value of the temporary flows from one iteration into
the next, and the iterations write different elements (after the nest an element holds what an
earlier iteration wrote). Every program must print what the original prints at 1, 2 and 3 threads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available, run_mdpoly, run_program

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

CASES_DIR = Path(__file__).resolve().parent / "privatize_cases"

#: case -> (the schedule remark's shape, the words of the privatization refusal or "" when privatized)
CASES = {
    "doitgen": ("[r:++ q:++ with private sum]", ""),
    "scalar_temp": ("[r:++ with private s]", ""),
    "flows_in": ("r:seq-in-region{ [p:++ MDH at line 9] [p:++ MDH at line 11] }",
                 "'tmp' is read before the nest writes it"),
    "shrinking": ("r:seq-in-region{ [p:++ MDH at line 11] [p:++ MDH at line 13] }",
                  "the iterations of loop 'r' write different elements of 'tmp'"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_privatized_program_matches_original(name: str, tmp_path: Path) -> None:
    src = CASES_DIR / f"{name}.c"
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = run_mdpoly(src, out_c, {}, extra=["--report", str(report)])
    shape, refusal = CASES[name]
    assert f"loop nest scheduled: {shape}" in proc.stderr
    nest = json.loads(report.read_text())["nests"][0]
    if refusal:
        assert refusal in nest["privatization"]
        assert "mdp_priv_" not in out_c.read_text()
    else:
        assert "privatization" not in nest
        (loop,) = nest["schedule"]
        assert loop["kind"] == "private-loop" and (loop["line"], loop["column"]) == (nest["line"], nest["column"])
        assert f"[{' '.join(f'{v}:++' for v in loop['parallel'])} with private {', '.join(loop['private'])}]" == shape
        assert f"lastprivate(mdp_priv_{loop['private'][0]})" in out_c.read_text()
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 2, 3):
        assert run_program(parallel, threads=threads) == reference, f"{name} at {threads} threads ({out_c})"


def test_aliased_temporary_runs_the_original(tmp_path: Path) -> None:
    """``sum`` passed as a row of ``A`` itself: the run-time alias check selects the nest as written."""
    text = (CASES_DIR / "doitgen.c").read_text().replace(
        "kernel_doitgen(NR, NQ, NP, A, C4, sum);", "kernel_doitgen(NR, NQ, NP, A, C4, &A[3][2][0]);")
    src = tmp_path / "in.c"
    src.write_text(text)
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, {})
    assert "lastprivate(mdp_priv_sum)" in out_c.read_text()
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 3):
        assert run_program(parallel, threads=threads) == reference
