"""The benchmark suite's kernels (``benchmarks/kernels/suite/*.c``) at ``-DSMALL``, differentially.

Each kernel is built as written (``cc -O2``) and through mdpoly (``--all-nests --no-tune``, the
harness's settings, so every nest mdpoly can transform is transformed even at these small sizes),
run at ``OMP_NUM_THREADS`` 1 and 3, and every checksum line compared with the original's by the
suite runner's own comparator (``benchmarks/suite.py``: each sum within 1e-6 of the outputs' sum
of absolute values, since reassociated reductions move the last bits and checksums cancel). The
kernel list is the suite's table, so a kernel added there is tested here.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
from e2e_harness import REPO, build_c, mdpoly_available, run_mdpoly, run_program

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

SUITE_PY = REPO / "benchmarks" / "suite.py"
KERNEL_DIR = REPO / "benchmarks" / "kernels" / "suite"
THREADS = (1, 3)
RTOL = 1e-6
#: one kernel of each kind in the README's quick test command (a BLAS product, a stencil under a time
#: loop, a wavefront, a hyperplane, a reduction in a host loop's region, privatization, a kept
#: nest); the others are marked ``campaign`` (README.md "Run the tests")
QUICK = {"gemm", "jacobi_2d", "seidel_2d", "nussinov", "trisolv", "durbin", "doitgen", "floyd_warshall"}
# Known compiler bugs, each an xfail(strict) so that the fix shows up as XPASS and drops the entry.
KNOWN_BUGS: dict[str, str] = {}


def _load_suite() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchmark_suite", SUITE_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module     # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


suite = _load_suite()


def test_every_kernel_file_is_in_the_table() -> None:
    files = {p.stem for p in KERNEL_DIR.glob("*.c")}
    assert files == {k.name for k in suite.KERNELS}


@pytest.mark.parametrize("kernel", [
    pytest.param(k.name, marks=[*([pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[k.name])] if k.name in KNOWN_BUGS
                                  else []), *([] if k.name in QUICK else [pytest.mark.campaign])])
    for k in suite.KERNELS])
def test_suite_kernel_matches_original(kernel: str, tmp_path: Path) -> None:
    src = KERNEL_DIR / f"{kernel}.c"
    defines = {"SMALL": 1}
    expected = suite.parse_output(run_program(build_c(src, tmp_path / "orig", defines, openmp=False)))

    out_c = tmp_path / f"{kernel}.c"
    run_mdpoly(src, out_c, defines)
    shutil.copy(KERNEL_DIR / "suite.h", tmp_path / "suite.h")   # out.c includes it from its own folder
    exe = build_c(out_c, tmp_path / "mdpoly", defines, openmp=True)
    for threads in THREADS:
        got = suite.parse_output(run_program(exe, threads=threads))
        ok, _deviation, detail = suite.compare(got, expected, RTOL)
        assert ok, f"{kernel} at OMP_NUM_THREADS={threads}: {detail} (mdpoly output: {out_c})"
