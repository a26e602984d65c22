"""Packed panels through the command line: ``benchmarks/kernels/sgemm.c`` at sizes where the
heuristic defaults pack the B panel (``pack_b``), built as written and through
``mdpoly --no-tune``, run at ``OMP_NUM_THREADS`` 1, 2 and 3, checksums compared.

Sizes are not multiples of the row tile, the register block or the panel, so the remainder nests
(which read the user's arrays) and the packed micro-kernel both run.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from e2e_harness import REPO, THREAD_COUNTS, build_c, mdpoly_available, run_mdpoly, run_program

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

KERNELS = REPO / "benchmarks" / "kernels"


def _values(out: str) -> dict[str, float]:
    pairs = (line.split() for line in out.splitlines() if line.strip())
    return {k: float(v) for k, v in pairs}


# (130, 300, 600): the reduction tile (512) and the SIMD tile (128) leave partial tiles, the rows two
# tiles of 66 and 64 (a partial register block)
@pytest.mark.parametrize("m,n,k", [(257, 263, 269), (400, 263, 311), (130, 300, 600)])
def test_packed_sgemm_matches_original(tmp_path: Path, m: int, n: int, k: int) -> None:
    defines = {"M": m, "N": n, "K": k, "REPS": 1}
    shutil.copy(KERNELS / "bench_common.h", tmp_path / "bench_common.h")
    src = tmp_path / "sgemm.c"
    shutil.copy(KERNELS / "sgemm.c", src)
    expected = _values(run_program(build_c(src, tmp_path / "orig", defines, openmp=False)))

    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, defines)
    text = out_c.read_text()
    assert "aligned_alloc" in text and "omp_get_thread_num()" in text, "the default did not pack the panels"
    exe = build_c(out_c, tmp_path / "mdpoly", defines, openmp=True)
    for threads in THREAD_COUNTS:
        got = _values(run_program(exe, threads=threads))
        tol = 1e-4 * max(expected["magnitude"], 1.0)
        assert math.isclose(got["checksum"], expected["checksum"], abs_tol=tol), (threads, got, expected)
        assert math.isclose(got["magnitude"], expected["magnitude"], rel_tol=1e-4), (threads, got, expected)
