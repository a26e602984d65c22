"""A cancelling float sum (lbm_d2q9's moments) stays exact where it runs in order.

``reassoc_cases/moments.c`` is the collision of lbm_d2q9: per cell, the moment sums over the 9
populations and the relaxation, after pulling the populations from periodic neighbours through a
wrapped, non-affine subscript. The transverse velocity is a sum that cancels to ~1e-4 of its
terms, so reassociating it (as OpenMP's ``reduction`` does) would move it by ~1e-3 relative. The
cell loop runs in parallel behind the inspection of its gathers (``mdpoly.frontend.inspector``),
each cell's sums as written, so with or without ``--strict-fp`` every printed value equals the
original's at 1 to 4 threads; the small 9-term reductions are not split off on their own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available, run_mdpoly, run_program

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

CASES_DIR = Path(__file__).resolve().parent / "reassoc_cases"
THREADS = (1, 2, 3, 4)


@pytest.mark.parametrize("strict", [True, False], ids=["strict-fp", "reassociated"])
def test_moments_match_original(strict: bool, tmp_path: Path) -> None:
    src = CASES_DIR / "moments.c"
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    proc = run_mdpoly(src, out_c, {}, extra=["--strict-fp"] if strict else [])
    assert "moments.c:23:5: remark: loop nest scheduled: [c:++ private-body]" in proc.stderr, proc.stderr
    assert "moments.c:36:13" not in proc.stderr and "moments.c:45:13" not in proc.stderr, proc.stderr
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in THREADS:
        assert run_program(parallel, threads=threads) == reference, f"at {threads} threads ({out_c})"
