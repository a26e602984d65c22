"""Data kept on the GPU over sequential host loops (``mdpoly.backends.residency``, issue 11 item 3).

Each kernel in ``resident_cases/`` is written from its textbook definition with a sequential outer
loop around parallel bands (Jacobi 1-D/2-D, a heat-3D-like stencil, Floyd-Warshall's k loop, an
LU k loop, a pointer-swapping stencil) or with something that must keep data on the host (a host
statement reading or writing an array in the loop, which copies it at that point; arrays that
overlap, so that the run-time checks fail).
Every case asserts the report's note on the loop, runs the original and ``--target opencl`` on
PoCL and compares outputs exactly (integer data, or floats whose every value is exact), and with
``MDPOLY_PROFILE=1`` counts the transfers: one copy in per resident array, one copy back per
resident array written in the loop, and none in the loop's own calls. ``--target cuda`` output is
compiled (host code with ``cc -fsyntax-only`` against the toolkit headers, kernels with NVRTC)
and, where a GPU is present (``-m gpu``), run with the same checks.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from cuda_harness import compile_for_sm90, kernel_sources, nvrtc_unavailable, toolkit_unavailable
from e2e_harness import build_c, c_compiler, campaign_except, mdpoly_available, run_mdpoly, run_program, run_step
from test_cuda_examples import build_cuda
from test_opencl_examples import needs_opencl

from mdpoly.cuda_toolkit import find_cuda

CASES_DIR = Path(__file__).parent / "resident_cases"

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

#: case -> (function whose loop is the region, copies in and copies back that MDPOLY_PROFILE
#: counts for the region, the note's expected text)
CASES: dict[str, tuple[str, int, int, str]] = {
    "jacobi1d": ("kernel_jacobi_1d", 2, 2, "A, B stay on the device over loop 't'"),
    "jacobi2d_int": ("kernel_jacobi_2d", 2, 2, "A, B stay on the device over loop 't'"),
    "heat3d_int": ("kernel_heat_3d", 2, 2, "A, B stay on the device over loop 't'"),
    "floyd_warshall_2buf": ("kernel_floyd_warshall", 2, 2, "D, E stay on the device over loop 'k'"),
    "lu": ("kernel_lu", 1, 1, "A stay on the device over loop 'k'"),
    "swap": ("kernel_swap", 2, 2, "A, B stay on the device over loop 't'"),
    # the host statement reads B in every one of the 20 steps: B is copied back before it
    "host_reads": ("kernel_probe", 3, 2 + 20,
                   "A, C, B stay on the device over loop 't' (copied in once before it: A, C, B; copied back once "
                   "after it: A, B); copied back for the statement at line 10: B (the elements it touches)"),
    # the statement writing A[0] in every one of the 16 steps runs on the device (one thread,
    # mdpoly.backends.device_schedule): A is no longer copied around it
    "host_writes": ("kernel_boundary", 2, 2,
                    "A, B stay on the device over loop 't' (copied in once before it: A, B; copied back once "
                    "after it: A, B); the statement at line 13 runs on the device (one thread) on the resident arrays"),
}

_PROFILE = re.compile(r"mdpoly-profile: (\S+) calls=(\d+) kernel_ms=\S+ transfer_ms=(\S+)")
_RESIDENT = re.compile(r"mdpoly-profile: resident uploads=(\d+) downloads=(\d+)")


def _generate(case: str, target: str, tmp_path: Path) -> tuple[Path, str]:
    out_c = tmp_path / f"{case}_{target}.c"
    proc = run_mdpoly(CASES_DIR / f"{case}.c", out_c, {}, extra=["--target", target])
    return out_c, proc.stderr


def _run_profiled(exe: Path) -> tuple[str, str]:
    proc = run_step([str(exe)], env=dict(os.environ, MDPOLY_PROFILE="1"))
    return proc.stdout, proc.stderr


def _check_transfers(profile: str, function: str, uploads: int, downloads: int) -> None:
    counts = _RESIDENT.findall(profile)
    assert counts == [(str(uploads), str(downloads))], profile
    loop_nests = [m for m in _PROFILE.findall(profile) if m[0].startswith(f"mdpoly_{function}_")]
    assert loop_nests, profile
    for name, calls, transfer_ms in loop_nests:
        assert int(calls) > 1, profile
        # no copy at all in the loop's own calls: no transfer event was recorded
        assert float(transfer_ms) == 0.0, f"{name} copied data in the loop:\n{profile}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_report_says_what_stays_on_the_device(case: str, tmp_path: Path) -> None:
    _, _, _, note = CASES[case]
    _, stderr = _generate(case, "opencl", tmp_path)
    assert note in stderr, stderr


@needs_opencl
@pytest.mark.parametrize("case", campaign_except(sorted(CASES), "heat3d_int", "host_writes", "swap"))
def test_resident_loop_matches_original_on_opencl(case: str, tmp_path: Path) -> None:
    function, uploads, downloads, _ = CASES[case]
    reference = run_program(build_c(CASES_DIR / f"{case}.c", tmp_path / "orig", {}, openmp=False))
    out_c, _ = _generate(case, "opencl", tmp_path)
    text = out_c.read_text()
    assert 'mdp_cl_resident_enter_named("' in text
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    got, profile = _run_profiled(exe)
    assert got == reference, f"out.c kept in {tmp_path}"
    _check_transfers(profile, function, uploads, downloads)


@needs_opencl
def test_failed_run_time_check_runs_the_loop_as_written(tmp_path: Path) -> None:
    """Overlapping arrays: the checks fail before the loop, nothing is made resident, and every
    step runs the original C (no computation of the loop reaches the device)."""
    reference = run_program(build_c(CASES_DIR / "overlap.c", tmp_path / "orig", {}, openmp=False))
    out_c, stderr = _generate("overlap", "opencl", tmp_path)
    assert "A, B stay on the device over loop 't'" in stderr
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    got, profile = _run_profiled(exe)
    assert got == reference
    assert "resident" not in profile, profile
    assert not [m for m in _PROFILE.findall(profile) if m[0].startswith("mdpoly_kernel_jacobi_1d_")], profile


def test_kept_floyd_warshall_and_refusals(tmp_path: Path) -> None:
    """In-place Floyd-Warshall is kept whole (its k loop's steps depend on each other through
    path[i][k]); with --devices no data region is made (each device holds its own copies)."""
    _, stderr = _generate("floyd_warshall", "opencl", tmp_path)
    assert "stay on the device" not in stderr
    out_c = tmp_path / "dev.c"
    proc = run_mdpoly(CASES_DIR / "jacobi1d.c", out_c, {}, extra=["--target", "opencl", "--devices", "2"])
    assert "no data stays on the device over loop 't': --devices" in proc.stderr, proc.stderr
    assert 'mdp_cl_resident_enter_named("' not in out_c.read_text()


@pytest.mark.skipif(toolkit_unavailable() is not None, reason=str(toolkit_unavailable()))
@pytest.mark.parametrize("case", sorted(CASES))
def test_resident_cuda_output_compiles(case: str, tmp_path: Path) -> None:
    kit = find_cuda()
    assert kit is not None
    out_c, stderr = _generate(case, "cuda", tmp_path)
    assert CASES[case][3] in stderr
    text = out_c.read_text()
    assert 'mdp_cu_resident_enter_named("' in text and "mdp_cu_resident_find((" in text
    run_step([c_compiler(), "-fsyntax-only", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-Wno-unused-variable",
              *kit.compile_flags(), str(out_c)])
    if nvrtc_unavailable() is None:
        for name, source in kernel_sources(text).items():
            compile_for_sm90(source, name, tmp_path)


@pytest.mark.gpu
@pytest.mark.skipif(toolkit_unavailable() is not None, reason=str(toolkit_unavailable()))
@pytest.mark.parametrize("case", sorted(CASES))
def test_resident_loop_matches_original_on_cuda_gpu(case: str, tmp_path: Path) -> None:
    from cuda_harness import cuda_device_unavailable
    if cuda_device_unavailable() is not None:
        pytest.skip(str(cuda_device_unavailable()))
    _, uploads, downloads, _ = CASES[case]
    reference = run_program(build_c(CASES_DIR / f"{case}.c", tmp_path / "orig", {}, openmp=False))
    out_c, _ = _generate(case, "cuda", tmp_path)
    exe = tmp_path / "cuda"
    assert not build_cuda(out_c, exe, {}, tmp_path)
    got, profile = _run_profiled(exe)
    assert got == reference
    assert _RESIDENT.findall(profile) == [(str(uploads), str(downloads))], profile


def test_no_region_for_openmp(tmp_path: Path) -> None:
    out_c = tmp_path / "omp.c"
    proc = run_mdpoly(CASES_DIR / "jacobi1d.c", out_c, {})
    assert "stay on the device" not in proc.stderr
    assert "_resident_" not in out_c.read_text()
    subprocess.run([c_compiler(), "-fopenmp", "-fsyntax-only", str(out_c)], check=True)


@needs_opencl
def test_loops_that_keep_their_copies(tmp_path: Path) -> None:
    """A loop that calls a function of the program, and one that may return from inside: no
    region (the report says why), and the program still matches the original."""
    reference = run_program(build_c(CASES_DIR / "refusals.c", tmp_path / "orig", {}, openmp=False))
    out_c, stderr = _generate("refusals", "opencl", tmp_path)
    assert "no data stays on the device over loop 't': the loop calls a function" in stderr, stderr
    assert "no data stays on the device over loop 't': a statement in the loop jumps" in stderr, stderr
    assert 'mdp_cl_resident_enter_named("' not in out_c.read_text()
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    got, profile = _run_profiled(exe)
    assert got == reference
    assert "resident" not in profile


def test_json_report_lists_the_region(tmp_path: Path) -> None:
    import json
    report = tmp_path / "report.json"
    run_mdpoly(CASES_DIR / "host_reads.c", tmp_path / "out.c", {},
               extra=["--target", "opencl", "--report", str(report)])
    nests = [n for n in json.loads(report.read_text())["nests"] if "device_data" in n]
    assert len(nests) == 1 and nests[0]["line"] == 7
    (region,) = nests[0]["device_data"]
    assert region["line"] == 7 and region["note"].startswith("A, C, B stay on the device over loop 't'")
    assert "copied back for the statement at line 10: B (the elements it touches)" in region["note"]


@needs_opencl
def test_pointer_reassigned_in_the_loop_keeps_copies(tmp_path: Path) -> None:
    """A check the loop changes through a pointer it reassigns cannot be decided before the loop
    (an earlier version kept D on the device and lost the host fallback's updates)."""
    reference = run_program(build_c(CASES_DIR / "pointer_reassigned.c", tmp_path / "orig", {}, openmp=False))
    out_c, stderr = _generate("pointer_reassigned", "opencl", tmp_path)
    assert "no data stays on the device over loop 't': the run-time check" in stderr, stderr
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    assert run_program(exe) == reference


@needs_opencl
def test_scalar_declared_in_the_loop_keeps_copies(tmp_path: Path) -> None:
    """A scalar declared in the loop's body that a device computation writes: the checks before
    the loop cannot name it, so there is no region, and the output builds and matches."""
    case = CASES_DIR / "local_scalar.c"
    reference = run_program(build_c(case, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "local_scalar_opencl.c"
    proc = run_mdpoly(case, out_c, {}, extra=["--target", "opencl", "--no-tune", "--all-nests"])
    assert "t:seq{ [j:++ MDH at line 14] }" in proc.stderr, proc.stderr
    assert ("no data stays on the device over loop 't': 's' is declared inside the loop" in proc.stderr), proc.stderr
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    assert run_program(exe) == reference


@needs_opencl
def test_struct_member_declared_in_the_loop_keeps_copies(tmp_path: Path) -> None:
    """A struct accumulator declared in the loop's body whose members a device computation writes
    (passed as ``&(acc.re)``): no region, named by the struct; one declared before the loop is
    checked at its member's address. The output builds and matches."""
    case = CASES_DIR / "local_member.c"
    reference = run_program(build_c(case, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "local_member_opencl.c"
    proc = run_mdpoly(case, out_c, {}, extra=["--target", "opencl", "--no-tune", "--all-nests"])
    assert "no data stays on the device over loop 'i': 'acc' is declared inside the loop" in proc.stderr, proc.stderr
    assert "A, B stay on the device over loop 'i'" in proc.stderr and "(&(tot.re))" in out_c.read_text()
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    assert run_program(exe) == reference
