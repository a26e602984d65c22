"""Reassociated float reductions on a cancelling sum (lbm_d2q9's moments): exact under ``--strict-fp``.

``reassoc_cases/moments.c`` is the collision of lbm_d2q9: the moment sums over the 9 populations
of a cell become a ``q:+`` reduction and the relaxation a ``q:++`` map, each nest on its own (the
cell loop reads its neighbours through a wrapped, non-affine subscript). The transverse velocity
is a sum that cancels to ~1e-4 of its terms, so reassociating it (the default, as OpenMP's
``reduction`` does) moves it by ~1e-3 relative, ~1e-7 absolute: what lbm_d2q9's ``uy`` checksum
showed. With ``--strict-fp`` the sums stay in order and every printed value equals the original's
at 1 to 4 threads: the maps, the streaming and the privatized cell array are exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available, run_mdpoly, run_program

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

CASES_DIR = Path(__file__).resolve().parent / "reassoc_cases"
THREADS = (1, 2, 3, 4)
#: populations are below 0.5 (float ulp 6e-8): a reordered 9-term sum over 4 steps stays far
#: below this, one wrong term or iteration moves a population by 1e-3 or more
REASSOC_ABS = 2e-6


def _values(output: str) -> dict[tuple[str, int], float]:
    rows = (line.split() for line in output.splitlines())
    return {(name, int(index)): float(value) for name, index, value in rows}


@pytest.mark.parametrize("strict", [True, False], ids=["strict-fp", "reassociated"])
def test_moments_match_original(strict: bool, tmp_path: Path) -> None:
    src = CASES_DIR / "moments.c"
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    proc = run_mdpoly(src, out_c, {}, extra=["--strict-fp"] if strict else [])
    assert "moments.c:45:13: remark: loop nest parallelized: q:++" in proc.stderr
    if strict:
        assert ("moments.c:36:13: note: loop nest kept sequential: loop 'q' carries a floating-point '+' "
                "reduction into 'ux', which --strict-fp forbids reassociating") in proc.stderr
    else:
        assert "moments.c:36:13: remark: loop nest parallelized: q:+" in proc.stderr
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    want = _values(reference)
    for threads in THREADS:
        output = run_program(parallel, threads=threads)
        if strict:
            assert output == reference, f"--strict-fp at {threads} threads ({out_c})"
            continue
        got = _values(output)
        assert got.keys() == want.keys()
        worst = max(want, key=lambda k: abs(got[k] - want[k]))
        assert abs(got[worst] - want[worst]) <= REASSOC_ABS, f"{worst} at {threads} threads ({out_c})"
