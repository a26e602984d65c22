"""What a GPU program copies (issues 22 item 4, 23 items 2-3), counted by ``MDPOLY_PROFILE``.

* **Footprints.** A host statement inside a data region's loop (``transfer_cases/``: a right-looking
  Cholesky whose diagonal element the host updates, a row scan the host runs over one row, a
  column scan over one column, the left-looking LU whose statement reads the rows above, Gram-Schmidt's
  structure whose column norm and scaling are computations kept on the host) gets
  only the elements it touches copied back before it and in again after it, not the whole array:
  one range, or a rectangle (rows x bytes within a row) where the box is not contiguous. Each case runs the original and
  ``--target opencl`` on PoCL, compares the outputs, and checks the per-array byte counts of the
  profile (``mdpoly-profile: array A uploads=.. upload_bytes=.. downloads=.. download_bytes=..``)
  against the footprint worked out by hand.
* **Residency across calls.** ``inference.c`` calls a matvec 20 times on the same weights: built
  with ``-DKEEP`` it keeps them on the device (``mdp_resident_keep``), and the weights are copied
  in once instead of 20 times; the output vector, which the nest overwrites whole, is never
  copied in. ``inference_pragma.c`` says the same with ``#pragma mdh resident(W)`` in matvec.
* ``--target cuda`` output of the same programs compiles (host code with the toolkit's headers,
  kernels with NVRTC) and, on a GPU (``-m gpu``), gives the same counts.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from cuda_harness import compile_for_sm90, kernel_sources, nvrtc_unavailable, toolkit_unavailable
from e2e_harness import build_c, c_compiler, mdpoly_available, mdpoly_command, run_program, run_step
from test_cuda_examples import build_cuda
from test_opencl_examples import needs_opencl

from mdpoly.cuda_toolkit import find_cuda

CASES_DIR = Path(__file__).parent / "transfer_cases"

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

_ARRAY = re.compile(r"mdpoly-profile: array (\S+) uploads=(\d+) upload_bytes=(\d+) downloads=(\d+) "
                    r"download_bytes=(\d+)")


def _rchol() -> tuple[int, int, int, int]:
    # A[40][40] doubles, in once and back once (12800 B each); in each of the 40 steps the host
    # updates A[k][k] (8 B back, 8 B in) and then reads it (8 B back)
    whole = 40 * 40 * 8
    return 1 + 40, whole + 40 * 8, 80 + 1, whole + 80 * 8


def _rowscan() -> tuple[int, int, int, int]:
    # A[48][48]; each step k: the row scan reads A[k][0..n-1] (384 B back) and writes A[k][1..n-1]
    # (376 B in); then A[k][k] += 1 (8 B back, 8 B in)
    whole = 48 * 48 * 8
    return 1 + 2 * 48, whole + 48 * (376 + 8), 2 * 48 + 1, whole + 48 * (384 + 8)


def _lu_rows() -> tuple[int, int, int, int]:
    # A[40][40]; step i's statement reads rows 0..i and columns 0..i-1 of them (a rectangle of
    # (i + 1) x i elements); it writes A[i][0..i-1] (i elements); step 0 touches nothing
    whole = 40 * 40 * 8
    return 1 + 39, whole + sum(8 * i for i in range(1, 40)), 39 + 1, whole + sum(8 * i * (i + 1) for i in range(1, 40))


def _colscan() -> tuple[int, int, int, int]:
    # A[48][48]; each step k: the column scan reads A[0..n-1][k] (a rectangle of 48 rows of one
    # element) and writes A[1..n-1][k] (47 rows); then A[k][k] += 1 (8 B back, 8 B in)
    whole = 48 * 48 * 8
    return 1 + 2 * 48, whole + 48 * (47 * 8 + 8), 2 * 48 + 1, whole + 48 * (48 * 8 + 8)


def _gs_int() -> dict[str, tuple[int, int, int, int]]:
    # A[60][50], Q[60][50], R[50][50] longs. Each step k: the kept norm reads column k of A (60 x 8 B,
    # a rectangle), R[k][k] = ... (8 B back, 8 B in), the kept scaling reads R[k][k] and column k of
    # A again and writes column k of Q (in after it; Q is never written on the device, so never
    # copied back). After the loop, R and A come back whole.
    a, q, r = 60 * 50 * 8, 60 * 50 * 8, 50 * 50 * 8
    return {"A": (1, a, 2 * 50 + 1, a + 2 * 50 * 60 * 8), "Q": (1 + 50, q + 50 * 60 * 8, 0, 0),
            "R": (1 + 50, r + 50 * 8, 2 * 50 + 1, r + 2 * 50 * 8)}


#: case -> (the note's text about the host statements, the profile's expected counts of each
#: array: uploads, upload bytes, downloads, download bytes)
FOOTPRINTS: dict[str, tuple[str, dict[str, tuple[int, int, int, int]]]] = {
    "rchol": ("copied back for the statement at line 9: A (the elements it touches), and in again after it: "
              "A (the elements it writes); copied back for the statement at line 10: A (the elements it touches)",
              {"A": _rchol()}),
    "rowscan": ("copied back for the statement at line 7: A (the elements it touches), and in again after it: "
                "A (the elements it writes)", {"A": _rowscan()}),
    "colscan": ("copied back for the statement at line 7: A (the elements it touches), and in again after it: "
                "A (the elements it writes)", {"A": _colscan()}),
    "lu_rows": ("copied back for the statement at line 7: A (the elements it touches), and in again after it: "
                "A (the elements it writes)", {"A": _lu_rows()}),
    "gs_int": ("copied back for the statement at line 13: A (the elements it touches); copied back for the "
               "statement at line 15: R (the elements it touches), and in again after it: R (the elements it writes); "
               "copied back for the statement at line 16: R (the elements it touches), A (the elements it touches), "
               "and in again after it: Q (the elements it writes)", _gs_int()),
}


def _generate(case: str, target: str, tmp_path: Path) -> tuple[Path, str]:
    out_c = tmp_path / f"{case}_{target}.c"
    # the programs are far too small to repay a GPU context: the hybrid model is told the device
    # always pays (``gpu_min_speedup=0``), as the transfers are what is tested
    proc = run_step([*mdpoly_command(), str(CASES_DIR / f"{case}.c"), "-o", str(out_c), "--target", target,
                     "--no-tune"], env={**os.environ, "MDPOLY_COST_CALIBRATION": "gpu_min_speedup=0"})
    return out_c, proc.stderr


def _profiled(exe: Path) -> tuple[str, dict[str, tuple[int, ...]]]:
    proc = run_step([str(exe)], env=dict(os.environ, MDPOLY_PROFILE="1"))
    counts = {m[0]: tuple(int(x) for x in m[1:]) for m in _ARRAY.findall(proc.stderr)}
    return proc.stdout, counts


def _reference(case: str, tmp_path: Path, defines: dict[str, int | str] | None = None) -> str:
    return run_program(build_c(CASES_DIR / f"{case}.c", tmp_path / f"{case}_orig", defines or {}, openmp=False))


@needs_opencl
@pytest.mark.parametrize("case", sorted(FOOTPRINTS))
def test_host_statement_moves_only_its_footprint(case: str, tmp_path: Path) -> None:
    """``expected``: the copies when every host statement of the loop runs on the host with its
    footprint. Statements the device can run itself (``mdpoly.backends.device_schedule``: one
    thread on the resident buffers) move nothing, so the counts may only be lower; whatever stays
    on the host moves its footprint, never a whole array per step."""
    note, expected = FOOTPRINTS[case]
    out_c, stderr = _generate(case, "opencl", tmp_path)
    assert "stay on the device over loop" in stderr, stderr
    host_notes = [part for part in note.split("; ") if part.startswith("copied back for the statement")]
    for part in host_notes:   # each statement: its footprint on the host, or the statement on the device
        line = part.split("line ")[1].split(":")[0]
        assert part in stderr or f"the statement at line {line} runs on the device" in stderr or \
            f"computation at line {line} kept as written runs on the device" in stderr, (part, stderr)
    assert "copied back for the statement" not in stderr or "_span_add(" in out_c.read_text()
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    got, counts = _profiled(exe)
    assert got == _reference(case, tmp_path), f"out.c kept in {tmp_path}"
    for name, (_ups, up_bytes, _downs, down_bytes) in expected.items():
        got_counts = counts.get(name, (0, 0, 0, 0))
        # (an array only the device now writes comes back once, after the loop)
        assert got_counts[1] <= up_bytes and (got_counts[3] <= down_bytes or got_counts[2] == 1), \
            (name, got_counts, expected[name])


@needs_opencl
def test_kept_weights_move_once(tmp_path: Path) -> None:
    out_c, stderr = _generate("inference", "opencl", tmp_path)
    assert "loop nest parallelized" in stderr, stderr
    weights = 96 * 80 * 8
    for keep, uploads in ((False, 20), (True, 1)):
        exe = tmp_path / f"cl_{int(keep)}"
        run_step([c_compiler(), "-O2", *(["-DKEEP"] if keep else []), str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
        got, counts = _profiled(exe)
        assert got == _reference("inference", tmp_path, {"KEEP": 1} if keep else {}), f"out.c kept in {tmp_path}"
        assert counts["W"] == (uploads, uploads * weights, 0, 0), counts
        # y is written whole by every call (n == N at run time): never copied in, copied back each call
        assert counts["y"] == (0, 0, 20, 20 * 96 * 8), counts
        assert counts["x"][:2] == (20, 20 * 80 * 8), counts


@needs_opencl
def test_invalidate_copies_again(tmp_path: Path) -> None:
    """A kept array the program changes, with mdp_resident_invalidate after the change: the next
    call copies it in again and computes with the new values."""
    source = (CASES_DIR / "inference.c").read_text().replace(
        "    s += y[t % N];\n",
        "    s += y[t % N];\n    if (t == 9) {\n      W[1][2] += 1.0;\n"
        "#if defined(KEEP) && defined(MDP_RESIDENT_API)\n      mdp_resident_invalidate(W);\n#endif\n    }\n")
    assert "mdp_resident_invalidate(W)" in source
    case = tmp_path / "changed.c"
    case.write_text(source)
    reference = run_program(build_c(case, tmp_path / "orig", {"KEEP": 1}, openmp=False))
    out_c = tmp_path / "changed_cl.c"
    run_step([*mdpoly_command(), str(case), "-o", str(out_c), "--target", "opencl", "--no-tune"])
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", "-DKEEP", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    got, counts = _profiled(exe)
    assert got == reference
    assert counts["W"][:2] == (2, 2 * 96 * 80 * 8), counts


@pytest.mark.skipif(toolkit_unavailable() is not None, reason=str(toolkit_unavailable()))
@pytest.mark.parametrize("case", [*sorted(FOOTPRINTS), "inference", "inference_pragma"])
def test_cuda_output_compiles(case: str, tmp_path: Path) -> None:
    kit = find_cuda()
    assert kit is not None
    out_c, _ = _generate(case, "cuda", tmp_path)
    text = out_c.read_text()
    assert "mdp_cu_kept_find(" in text
    if case != "inference":
        assert "mdp_cu_span_add(" in text
    for keep in ([], ["-DKEEP"]):
        run_step([c_compiler(), "-fsyntax-only", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-Wno-unused-variable",
                  *keep, *kit.compile_flags(), str(out_c)])
    if nvrtc_unavailable() is None:
        for name, source in kernel_sources(text).items():
            compile_for_sm90(source, name, tmp_path)


@pytest.mark.gpu
@pytest.mark.skipif(toolkit_unavailable() is not None, reason=str(toolkit_unavailable()))
@pytest.mark.parametrize("case", [*sorted(FOOTPRINTS), "inference"])
def test_cuda_counts_on_gpu(case: str, tmp_path: Path) -> None:
    from cuda_harness import cuda_device_unavailable
    if cuda_device_unavailable() is not None:
        pytest.skip(str(cuda_device_unavailable()))
    out_c, _ = _generate(case, "cuda", tmp_path)
    exe = tmp_path / "cuda"
    keep = {"KEEP": 1} if case == "inference" else {}
    assert not build_cuda(out_c, exe, keep, tmp_path)
    got, counts = _profiled(exe)
    assert got == _reference(case, tmp_path, dict(keep))
    if case == "inference":
        assert counts["W"] == (1, 96 * 80 * 8, 0, 0), counts
        return
    for name, (_ups, up_bytes, _downs, down_bytes) in FOOTPRINTS[case][1].items():
        # as on OpenCL: statements the device runs itself move nothing, so the counts may only be lower
        got_counts = counts.get(name, (0, 0, 0, 0))
        assert got_counts[1] <= up_bytes and (got_counts[3] <= down_bytes or got_counts[2] == 1), \
            (name, got_counts, FOOTPRINTS[case][1][name])


def test_openmp_output_ignores_the_api(tmp_path: Path) -> None:
    """The OpenMP output of a program using the API under its guard builds and runs as before."""
    out_c = tmp_path / "omp.c"
    run_step([*mdpoly_command(), str(CASES_DIR / "inference.c"), "-o", str(out_c), "--no-tune"])
    assert "mdp_resident_keep(W" in out_c.read_text()
    exe = tmp_path / "omp"
    subprocess.run([c_compiler(), "-O2", "-fopenmp", "-DKEEP", str(out_c), "-o", str(exe), "-lm"], check=True)
    assert run_program(exe) == _reference("inference", tmp_path, {"KEEP": 1})


@needs_opencl
def test_devices_say_where_kept_arrays_are_copied(tmp_path: Path) -> None:
    """``--devices``: the remark says that a split call copies kept arrays; on the one PoCL device
    the call runs unsplit and the weights still move once."""
    out_c = tmp_path / "dev.c"
    proc = run_step([*mdpoly_command(), str(CASES_DIR / "inference.c"), "-o", str(out_c), "--target", "opencl",
                     "--no-tune", "--devices", "all"])
    assert "inference.c:11:3: remark:" in proc.stderr
    assert "arrays kept with mdp_resident_keep or #pragma mdh resident stay on the device when the call runs on one " \
           "device" in proc.stderr
    exe = tmp_path / "dev"
    run_step([c_compiler(), "-O2", "-DKEEP", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    got, counts = _profiled(exe)
    assert got == _reference("inference", tmp_path, {"KEEP": 1})
    assert counts["W"] == (1, 96 * 80 * 8, 0, 0), counts


@needs_opencl
def test_output_written_whole_is_not_copied_in(tmp_path: Path) -> None:
    """``y[i + 1]`` for ``i`` in ``[lo, n - 1)``: with ``lo == -1`` and ``n == N`` it covers y, which
    is then not copied in; another range copies it in (its other elements must come back as they
    were)."""
    out_c, _ = _generate("shifted", "opencl", tmp_path)
    assert "(long long)(lo) + 1LL == 0LL" in out_c.read_text()
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    got, counts = _profiled(exe)
    assert got == _reference("shifted", tmp_path)
    assert counts["y"] == (1, 300 * 8, 2, 2 * 300 * 8), counts


@needs_opencl
def test_resident_pragma_keeps_the_weights(tmp_path: Path) -> None:
    out_c, stderr = _generate("inference_pragma", "opencl", tmp_path)
    assert "inference_pragma.c:10:3: remark: loop nest parallelized: i:++ j:+; W kept on the device between calls " \
           "(#pragma mdh resident)" in stderr, stderr
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    got, counts = _profiled(exe)
    assert got == _reference("inference_pragma", tmp_path)
    assert counts["W"] == (1, 96 * 80 * 8, 0, 0), counts


def test_resident_pragma_on_a_written_array_says_why_not(tmp_path: Path) -> None:
    source = tmp_path / "written.c"
    source.write_text((CASES_DIR / "inference_pragma.c").read_text().replace("resident(W)", "resident(W, y)"))
    proc = run_step([*mdpoly_command(), str(source), "-o", str(tmp_path / "out.c"), "--target", "opencl", "--no-tune"])
    assert "W kept on the device between calls (#pragma mdh resident); 'y' not kept: the computation writes it" \
        in proc.stderr, proc.stderr


@needs_opencl
def test_a_nest_writing_a_kept_array_makes_it_stale(tmp_path: Path) -> None:
    """A GPU nest that writes the kept weights (one ``scale`` call in step 9) copies them as usual;
    the next matvec copies them in again and computes with the new values."""
    source = (CASES_DIR / "inference.c").read_text().replace(
        "int main(void) {",
        "void scale(int n, int m, double W[N][M]) {\n  int i, j;\n#pragma mdh(W[i][j] : ++, ++)\n"
        "  for (i = 0; i < n; i++)\n    for (j = 0; j < m; j++)\n      W[i][j] = W[i][j] * 2.0 - 1.0;\n}\n"
        "int main(void) {").replace("    s += y[t % N];\n", "    s += y[t % N];\n    if (t == 9)\n      scale(N, M, W);\n")
    case = tmp_path / "scaled.c"
    case.write_text(source)
    reference = run_program(build_c(case, tmp_path / "orig", {"KEEP": 1}, openmp=False))
    out_c = tmp_path / "scaled_cl.c"
    proc = run_step([*mdpoly_command(), str(case), "-o", str(out_c), "--target", "opencl", "--no-tune"])
    assert proc.stderr.count("loop nest parallelized") == 2, proc.stderr
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", "-DKEEP", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    got, counts = _profiled(exe)
    assert got == reference
    # kept once, scale's own copy in and back, kept again after it
    assert counts["W"] == (3, 3 * 96 * 80 * 8, 1, 96 * 80 * 8), counts


@needs_opencl
def test_data_region_exit_makes_a_kept_array_stale(tmp_path: Path) -> None:
    """smooth()'s time loop keeps W on the device (a data region) and writes it back at its end:
    the matvec after it copies W in again (the kept copy went stale) and sees the new values."""
    out_c = tmp_path / "rtk_cl.c"
    proc = run_step([*mdpoly_command(), str(CASES_DIR / "region_then_kept.c"), "-o", str(out_c), "--target", "opencl",
                     "--no-tune", "--all-nests"])
    assert "W, V stay on the device over loop 't'" in proc.stderr, proc.stderr
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    got, counts = _profiled(exe)
    assert got == _reference("region_then_kept", tmp_path)
    # kept at the first matvec, into the region, kept again after it; back from main's init nest and the region
    assert counts["W"] == (3, 3 * 256 * 256 * 8, 2, 2 * 256 * 256 * 8), counts


@needs_opencl
def test_partial_writes_keep_the_rest_of_the_array(tmp_path: Path) -> None:
    """A diagonal ``L[i][i] = 1``, a triangle and every other row, each on the device: the elements
    a nest does not write keep their values (the diagonal was once taken for the whole square, so
    the square came back from an uninitialised buffer)."""
    out_c = tmp_path / "partial_writes_opencl.c"
    run_step([*mdpoly_command(), str(CASES_DIR / "partial_writes.c"), "-o", str(out_c), "--target", "opencl",
              "--no-tune", "--all-nests", "-q"], env={**os.environ, "MDPOLY_COST_CALIBRATION": "gpu_min_speedup=0"})
    assert out_c.read_text().count("__kernel void") >= 4
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    assert run_program(exe) == _reference("partial_writes", tmp_path)
