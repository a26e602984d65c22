"""Gathers in nests that write only the scalars they fold into (``mdpoly.frontend.opaque_reads``):
a k-means error ``s += (p[i*d+k] - c[labels[i]*d+k])^2``, a cross-entropy loss
``l -= log(p[b*C + target[b]])``. Their reads can take part in no dependence, so the loops run
in parallel with reductions; gathers in nests that write an array, fold into a global, or whose
subscript reads the accumulator stay as written (with the subscript's reason). Outputs equal the
original's at several sizes and 1 and 3 threads; the GPU target keeps the gathers on the host
with a reason (the arrays' sizes are not declared)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from e2e_harness import assert_same_outputs, build_c, c_compiler, mdpoly_available, mdpoly_command, run_mdpoly, run_step
from test_opencl_examples import needs_opencl

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not available")

SOURCE = Path(__file__).parent / "gather_cases" / "gathers.c"
SIZES = (("1000", "5"), ("7", "3"), ("1", "1"), ("40000", "3"))


def test_gathers_into_reductions_run_in_parallel(tmp_path: Path) -> None:
    out = tmp_path / "out.c"
    err = run_mdpoly(SOURCE, out, {}).stderr
    assert "gathers.c:10:5: remark: loop nest scheduled: [i:++ k:++ private-body]" in err, err
    assert "gathers.c:20:5: remark: loop nest scheduled: [b:++ private-body]" in err, err
    for line in (40, 45, 51):   # an array written, a global accumulator, the accumulator in the subscript
        assert f"gathers.c:{line}:" in err and "[non-affine-subscript]" in err, err
    assert "reduction(+:s)" in out.read_text()
    seq = build_c(SOURCE, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, SIZES, (1, 3))


@needs_opencl
def test_gpu_target_keeps_gathers_on_the_host(tmp_path: Path) -> None:
    out = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(SOURCE), "-o", str(out), "--target", "opencl", "--all-nests", "--no-tune"],
                    env={**os.environ, "MDPOLY_COST_CALIBRATION": "gpu_min_speedup=0"})
    assert "gathers.c:10:5: note: loop nest kept sequential" in proc.stderr, proc.stderr
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out), "-o", str(exe), "-lOpenCL", "-lm"])
    seq = build_c(SOURCE, tmp_path / "seq", {}, openmp=False)
    for args in SIZES[:2]:
        assert run_step([str(exe), *args]).stdout == run_step([str(seq), *args]).stdout, args


def test_gathers_of_declared_arrays_beside_written_arrays(tmp_path: Path) -> None:
    """``gy[i] = gx[idx[i]]`` on globals, and ``out[i] = gx[idx[i]]`` through a pointer that one
    call points at ``gx`` itself: checked against the whole of ``gx``, that call runs as written."""
    src = SOURCE.parent / "global_gathers.c"
    out = tmp_path / "out.c"
    err = run_mdpoly(src, out, {}).stderr
    assert "global_gathers.c:11:5: remark: loop nest scheduled: [i:++ private-body]" in err, err
    assert "global_gathers.c:16:5: remark: loop nest scheduled: [i:++ private-body]" in err, err
    assert "(&gx) + 1" in out.read_text()
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("5000", "0"), ("5000", "1"), ("100", "1"), ("1", "0")), (1, 3))


def test_gathers_beside_a_restrict_pointer_run_in_parallel(tmp_path: Path) -> None:
    """``dst[i] = sum_k src[idx[i*m + k]]``: with ``float *restrict dst`` the row loop is parallel;
    without ``restrict`` (and called with ``dst == src``) the row loop runs as written."""
    src = SOURCE.parent / "restrict_gathers.c"
    out = tmp_path / "out.c"
    err = run_mdpoly(src, out, {}).stderr
    assert "restrict_gathers.c:9:5: remark: loop nest scheduled: [i:++ private-body]" in err, err
    assert "restrict_gathers.c:19:5: remark: loop nest scheduled: [i:++ private-body]" not in err, err
    assert "restrict_gathers.c:19:5: remark: loop nest scheduled: i:seq{" in err, err   # --all-nests: k alone
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("20000", "8"), ("20000", "3"), ("7", "2"), ("1", "1")), (1, 3))
    # the report says what would let the row loop run in parallel
    report = tmp_path / "plain.json"
    subprocess.run([*mdpoly_command(), str(src), "-o", str(tmp_path / "plain.c"), "--no-tune", "--report", str(report)],
                   capture_output=True, text=True, check=True)
    (nest,) = [n for n in json.loads(report.read_text())["nests"] if n["line"] == 19]
    assert "'dst', which the nest writes, may overlap what it reads there ('restrict' on that pointer would rule it " \
           "out)" in nest["schedule"][0]["reason"], nest
