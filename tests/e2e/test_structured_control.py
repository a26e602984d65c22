"""Control flow as real loops write it (issue 21): an early ``continue`` and conditions that read
data the nest does not write.

* ``early_continue.c``: ``if (border) { mag = 0; continue; }`` and ``if (mask[i] == 0) continue;``
  are read as ``if``/``else`` (``mdpoly.frontend.continues``); both nests are transformed, the
  Sobel filter's rows and columns both parallel: where the border test fails, its neighbour reads
  stay inside the image (``mdpoly.frontend.implied_bounds``).
* ``data_conditions.c``: ``if (counts[c] > 0)``, ``if (a[i] > 0.25) s += a[i]`` and a clip with an
  ``else``: the condition is the statements' predicate, as it reads nothing the nest writes.
* ``in_place.c``: ``if (a[i] > hi) a[i] = hi; else if (a[i] < lo) a[i] = lo;`` and its kin read,
  of what the nest writes, only the element they overwrite: one conditional statement, parallel.
  A condition on the neighbour the loop wrote, or on another array the nest writes, stays
  sequential (``data-dependent-condition``).

Each program is built as written and from mdpoly's output, and both print the same at several
run-time sizes and thread counts (OpenMP), and on PoCL for the OpenCL target.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from e2e_harness import assert_same_outputs, build_c, c_compiler, mdpoly_available, mdpoly_command, run_mdpoly, run_step
from test_opencl_examples import needs_opencl

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not available")

CASES = Path(__file__).parent / "control_cases"
SIZES = (("7", "5"), ("300", "33"), ("1", "1"), ("2", "9"))


@pytest.mark.parametrize(("case", "transformed"), [
    # the Sobel rows too: its reads one row and column off stay in the image where the
    # border test fails (frontend.implied_bounds), so both loops are parallel
    ("early_continue", ("early_continue.c:8:5: remark: loop nest scheduled: [y:++ x:++",
                        "early_continue.c:23:5: remark: loop nest")),
    ("data_conditions", ("data_conditions.c:7:5: remark: loop nest parallelized", "data_conditions.c:15:5: remark: loop nest parallelized",
                         "data_conditions.c:22:5: remark: loop nest parallelized")),
])
def test_openmp_output_matches_original(case: str, transformed: tuple[str, ...], tmp_path: Path) -> None:
    src = CASES / f"{case}.c"
    out = tmp_path / "out.c"
    proc = run_mdpoly(src, out, {}, extra=[])
    for remark in transformed:
        assert remark in proc.stderr, proc.stderr
    assert "'continue'" not in proc.stderr and "data-dependent-condition" not in proc.stderr, proc.stderr
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, SIZES, (1, 3))


def test_in_place_conditions(tmp_path: Path) -> None:
    src = CASES / "in_place.c"
    out = tmp_path / "out.c"
    proc = run_mdpoly(src, out, {}, extra=[])
    for line in (8, 17, 22):
        assert f"in_place.c:{line}:5: remark: loop nest parallelized" in proc.stderr, proc.stderr
    assert "in_place.c:43:5: remark: loop nest scheduled: [i:++ private-body]" in proc.stderr, proc.stderr
    for line, cond in ((32, "a[i - 1] > a[i]"), (38, "b[(n - 1) - i] > 10.0f")):
        assert (f"in_place.c:{line}:9: note: loop nest kept sequential: condition '{cond}' depends on data the nest "
                "computes [data-dependent-condition]") in proc.stderr, proc.stderr
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, SIZES, (1, 3))


def test_kept_nest_keeps_its_continue(tmp_path: Path) -> None:
    """A nest mdpoly keeps is copied as written: its ``continue`` stays in the output."""
    src = tmp_path / "kept.c"
    src.write_text("#include <stdio.h>\nint main(void) {\n  unsigned s = 1;\n  for (int i = 0; i < 10; i++) {\n"
                   "    if (i % 3 == 0) { s = s * 7 + 1; continue; }\n    s ^= s << 3;\n  }\n"
                   "  printf(\"%u\\n\", s);\n  return 0;\n}\n")
    out = tmp_path / "out.c"
    run_mdpoly(src, out, {})
    assert "continue;" in out.read_text()
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, ((),), (2,))


@needs_opencl
@pytest.mark.parametrize("case", ["data_conditions", "in_place"])
def test_opencl_output_matches_original(case: str, tmp_path: Path) -> None:
    src = CASES / f"{case}.c"
    out = tmp_path / "out.c"
    run_step([*mdpoly_command(), str(src), "-o", str(out), "--target", "opencl", "--all-nests", "--no-tune", "-q"],
             env={**os.environ, "MDPOLY_COST_CALIBRATION": "gpu_min_speedup=0"})
    assert out.read_text().count("__kernel void") >= 3
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out), "-o", str(exe), "-lOpenCL", "-lm"])
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    for args in SIZES:   # PoCL needs the environment (its kernel cache lives under HOME)
        assert run_step([str(exe), *args]).stdout == run_step([str(seq), *args]).stdout, args
