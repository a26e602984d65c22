"""Gathers in nests that write only the scalars they fold into (``mdpoly.frontend.opaque_reads``):
a k-means error ``s += (p[i*d+k] - c[labels[i]*d+k])^2``, a cross-entropy loss
``l -= log(p[b*C + target[b]])``. Their reads can take part in no dependence, so the loops run
in parallel with reductions; gathers in nests that write an array, fold into a global, or whose
subscript reads the accumulator stay as written (with the subscript's reason); one that writes
an array through a pointer runs in parallel behind the inspection of its gathers. Outputs equal the
original's at several sizes and 1 and 3 threads; the GPU target keeps the gathers on the host
with a reason (the arrays' sizes are not declared)."""

from __future__ import annotations

import os
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
    # an array written through a pointer: parallel once the inspector found what it gathers
    assert "gathers.c:39:5: remark: loop nest scheduled: [i:++ private-body]" in err, err
    for line in (45, 51):   # a global accumulator, the accumulator in the subscript
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
    without ``restrict`` it is parallel after its inspector found the elements of ``src`` it
    gathers, and the call with ``dst == src`` runs as written."""
    src = SOURCE.parent / "restrict_gathers.c"
    out = tmp_path / "out.c"
    err = run_mdpoly(src, out, {}).stderr
    assert "restrict_gathers.c:9:5: remark: loop nest scheduled: [i:++ private-body]" in err, err
    assert "restrict_gathers.c:19:5: remark: loop nest scheduled: [i:++ private-body]" in err, err
    assert out.read_text().count("long mdp_ins_lo_src") == 1   # the restrict loop needs no inspection
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("20000", "8"), ("20000", "3"), ("7", "2"), ("1", "1")), (1, 3))


def test_inspected_gathers_run_in_parallel_and_as_written_where_they_overlap(tmp_path: Path) -> None:
    """Wrapped neighbours of a periodic grid read into a local array (``f[q] = fin[(ys*nx +
    xs)*Q + q]``), a clamped resample through struct members, an index array read where the
    model locates it: each loop is parallel behind its inspector; calls whose output lies inside
    what they gather (in place, shifted by one pixel) run as written; a gather of a gather is
    inspected too (the inner gather's elements recorded in its own range, which the checks keep
    off the writes)."""
    src = SOURCE.parent / "inspected_gathers.c"
    out = tmp_path / "out.c"
    err = run_mdpoly(src, out, {}).stderr
    for line, band in ((18, "y:++ x:++"), (45, "y:++"), (61, "i:++"), (72, "i:++")):
        assert f"inspected_gathers.c:{line}:5: remark: loop nest scheduled: [{band} private-body]" in err, err
    text = out.read_text()
    for name in ("fin", "src", "mdp_m_src_px", "idx"):
        assert f"long mdp_ins_lo_{name} " in text, name
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("64", "48"), ("3", "2"), ("1", "1"), ("200", "3")), (1, 3))


def test_inspected_gather_in_a_region_with_no_other_check(tmp_path: Path) -> None:
    """The only run-time check of a parallel loop inside a region is the inspected one: the check
    block is the inspection alone (it crashed the renderer: fuzz seed 950040 at --control 1.0)."""
    src = SOURCE.parent / "region_gather.c"
    out = tmp_path / "out.c"
    err = run_mdpoly(src, out, {}).stderr
    assert "region_gather.c:11:5: remark: loop nest scheduled: k:seq-in-region{ [i:++ private-body] }" in err, err
    assert "long mdp_ins_lo_src " in out.read_text()
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("5",), ("1",), ("0",)), (1, 3))


def test_gather_beside_a_write_of_another_type_needs_no_inspection(tmp_path: Path) -> None:
    """C's aliasing rule (``mdpoly.ir.scop.distinct_types``): an argmax-indexed gather from a
    ``double`` table beside a ``float`` output runs in parallel with no inspection and no check
    between the two; beside a ``double`` output (called overlapping it) the inspection finds the
    overlap at run time and the nest runs as written."""
    src = SOURCE.parent / "typed_gathers.c"
    out = tmp_path / "out.c"
    err = run_mdpoly(src, out, {}).stderr
    for line in (9, 23):
        assert f"typed_gathers.c:{line}:5: remark: loop nest scheduled: [i:++ private-body]" in err, err
    text = out.read_text()
    pick = text.split("static void pick(")[1].split("static void pick_same(")[0]
    same = text.split("static void pick_same(")[1].split("int main(")[0]
    assert "mdp_ins_lo_table" not in pick and "mdp_ins_lo_table" in same
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("20000", "8"), ("7", "3"), ("1", "1")), (1, 3))
