"""Wavefronts on the GPU (``mdpoly.backends.device_wavefront``, issue 23): one launch per wavefront,
one device thread per tile (or per point of a hyperplane), the arrays resident over the loop over
wavefronts.

The programs are those of ``test_wavefront.py`` and ``test_hyperplane.py``: a time-tiled
Gauss--Seidel (3-D band), the edit distance (2-D, sizes known only at run time, integer data),
Nussinov's dynamic program (2-D, non-uniform dependences), a band run along the hyperplane
``i+j+l``, and a sweep inside a time loop with a host statement (the host loop's data region keeps
the arrays). Each runs as written and through ``--target opencl`` on PoCL, outputs compared
exactly (every point computes what it computes in the original order, so floating point too);
the iterators' exit values are printed by the programs. Forced onto the device with
``MDPOLY_COST_CALIBRATION=gpu_min_speedup=0``; without it, the cost model keeps these small
programs on the host (the OpenMP wavefront) and says why. A run-time alias check that fails runs
the nest as written. ``--target cuda`` output is compiled (kernels with NVRTC, host code against
the toolkit's headers). A wavefront the device translation refuses keeps ``wavefront-openmp-only``
with the reason (``test_wavefront.py``, ``test_hyperplane.py``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cuda_harness import (
    compile_for_sm90,
    cuda_device_unavailable,
    kernel_sources,
    link_flags,
    nvrtc_unavailable,
    toolkit_unavailable,
)
from e2e_harness import build_c, c_compiler, child_env, mdpoly_available, mdpoly_command, run_step
from test_hyperplane import DIAGONAL, NUSSINOV
from test_opencl_examples import needs_opencl
from test_wavefront import EDIT, SEIDEL_5, SEIDEL_SOURCE

from mdpoly.cuda_toolkit import find_cuda

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

FORCED = "gpu_min_speedup=0"
#: forced onto the device, one thread per tile (a barrier priced out of reach)
ONE_THREAD = "gpu_min_speedup=0,gpu_barrier_ns=1e12"
#: calibration per form: the cost model picks a work-group per tile for these tiles (4096 points
#: against 31-127 inner wavefronts) unless its barriers are priced out of reach
FORMS = {"group": FORCED, "thread": ONE_THREAD}

#: case -> (program, the argument lists to run it with, the words of the device note)
CASES: dict[str, tuple[str, tuple[tuple[str, ...], ...], str]] = {
    # 3-D band: the time loop joins it; N small enough for PoCL, not a multiple of the tile
    "seidel": (SEIDEL_5.replace("#define N 150", "#define N 43"), ((),),
               "the tiled wavefront at line 22 runs on the device: one launch per wavefront (5 launches), one "
               "thread per tile"),
    # 2-D, sizes at run time: empty, one point, a tile and more, a long thin table
    "edit": (EDIT, (("0", "5"), ("1", "1"), ("65", "129"), ("300", "3")),
             "the tiled wavefront at line 20 runs on the device: one launch per wavefront, one thread per tile"),
    "nussinov": (NUSSINOV, (("1",), ("2",), ("64",), ("150",)),
                 "the tiled wavefront at line 15 runs on the device: one launch per wavefront, one thread per tile"),
    "diagonal": (DIAGONAL, (("1",), ("3",), ("23",)),
                 "the wavefront along the hyperplane i+j+l at line 14 runs on the device: one launch per wavefront, "
                 "one thread per row of points of the hyperplane"),
    # inside a time loop with a host statement: the loop's data region keeps A over every step
    "in_loop": (SEIDEL_SOURCE.replace("#define N 141", "#define N 70"), ((),),
                "the tiled wavefront at line 21 runs on the device: one launch per wavefront"),
}

#: the tiled cases' words under a work-group per tile: the tile's own wavefronts over its skewed
#: coordinates, and the threads sharing each
GROUP_NOTES = {
    "seidel": "one work-group per tile, its points along the tile's own wavefronts (31 of (i+t)+(j+t), up to 256 "
              "threads sharing each)",
    "edit": "one work-group per tile, its points along the tile's own wavefronts (127 of i+j, up to 64 threads sharing "
            "each)",
    "nussinov": "one work-group per tile, its points along the tile's own wavefronts (127 of (-i)+j, up to 64 threads "
                "sharing each)",
    "in_loop": "one work-group per tile, its points along the tile's own wavefronts (127 of i+j, up to 64 threads "
               "sharing each)",
}

#: the data each case's arrays keep on the device (the remark's words)
RESIDENT = {
    "seidel": "A stays on the device over the wavefronts (copied in once before them: A; copied back once after them: A)",
    "edit": "D, a, b stay on the device over the wavefronts (copied in once before them: D, a, b; copied back once "
            "after them: D)",
    "in_loop": "A stay on the device over loop 't' (copied in once before it: A; copied back once after it: A)",
}


def _mdpoly(text: str, tmp_path: Path, target: str, calibration: str | None = FORCED,
            extra: tuple[str, ...] = ()) -> tuple[Path, str, Path]:
    """The generated file, mdpoly's stderr and the report for ``text`` through ``target`` (under
    the cost model, with ``calibration`` when given)."""
    src = tmp_path / "in.c"
    src.write_text(text)
    out_c, report = tmp_path / f"out_{target}.c", tmp_path / f"report_{target}.json"
    cmd = [*mdpoly_command(), str(src), "-o", str(out_c), "--target", target, "--no-tune", "--report", str(report),
           *extra]
    env = child_env(MDPOLY_COST_CALIBRATION=calibration) if calibration is not None else child_env()
    return out_c, run_step(cmd, env=env).stderr, report


def _outputs(exe: Path, runs: tuple[tuple[str, ...], ...], env: dict[str, str] | None = None) -> list[str]:
    return [run_step([str(exe), *args], env=env).stdout for args in runs]


def _device_items(report: Path) -> list[dict[str, object]]:
    return [d for n in json.loads(report.read_text())["nests"] for d in n.get("device_items", [])]


def _note(case: str, form: str) -> str:
    """The remark's words for ``case`` in ``form`` (the hyperplane has no tiles: a thread per row)."""
    note = CASES[case][2]
    if form == "group" and case in GROUP_NOTES:
        return note.split(" one launch per wavefront")[0] + " one launch per wavefront"
    return note


@needs_opencl
@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_wavefront_on_the_device_matches_original(case: str, form: str, tmp_path: Path) -> None:
    """Each form (a work-group per tile sharing the tile's own wavefronts, or a thread per tile)
    computes what the original computes, exactly."""
    text, runs, _ = CASES[case]
    reference = _outputs(build_c(_write(tmp_path, text), tmp_path / "orig", {}, openmp=False), runs)
    out_c, stderr, report = _mdpoly(text, tmp_path, "opencl", FORMS[form])
    assert _note(case, form) in stderr, stderr
    group = form == "group" and case in GROUP_NOTES
    if group:
        assert GROUP_NOTES[case] in stderr, stderr
        assert "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);" in out_c.read_text()
        assert "get_group_id(0)" in out_c.read_text() and "&mdp_group" in out_c.read_text()
    else:
        assert "one work-group per tile" not in stderr and "barrier(" not in out_c.read_text()
    if case in RESIDENT:
        assert RESIDENT[case] in stderr, stderr
    assert "#pragma omp" not in out_c.read_text()
    assert ("get_group_id(0)" if group else "get_global_id(0)") in out_c.read_text()
    assert any("runs on the device: one launch per wavefront" in str(d["note"]) for d in _device_items(report))
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    assert _outputs(exe, runs) == reference, f"out.c kept in {tmp_path}"


def _write(tmp_path: Path, text: str) -> Path:
    src = tmp_path / "orig.c"
    src.write_text(text)
    return src


@needs_opencl
def test_arrays_copied_once(tmp_path: Path) -> None:
    """MDPOLY_PROFILE: the region copies the array in once and back once, whatever the number of
    launches; the kernels copy nothing."""
    out_c, _, _ = _mdpoly(CASES["seidel"][0], tmp_path, "opencl")
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    proc = run_step([str(exe)], env=dict(os.environ, MDPOLY_PROFILE="1"))
    assert "mdpoly-profile: resident uploads=1 downloads=1" in proc.stderr, proc.stderr


@needs_opencl
def test_failed_alias_check_runs_the_original(tmp_path: Path) -> None:
    """``a`` passed as a row of ``D`` itself: the run-time alias check fails, the nest as written
    runs (on the host), and the output is the original's."""
    text = EDIT.replace("kernel_edit(n, m, a, b, D);", "kernel_edit(n, m, &D[3][0], b, D);")
    runs = (("40", "50"), ("3", "2"))
    reference = _outputs(build_c(_write(tmp_path, text), tmp_path / "orig", {}, openmp=False), runs)
    out_c, stderr, _ = _mdpoly(text, tmp_path, "opencl")
    assert "runs on the device: one launch per wavefront" in stderr
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    proc = [run_step([str(exe), *args], env=dict(os.environ, MDPOLY_PROFILE="1")) for args in runs]
    assert [p.stdout for p in proc] == reference
    assert all("mdpoly-profile: resident uploads" not in p.stderr for p in proc)   # no region entered


def test_cost_model_keeps_small_wavefronts_on_the_host(tmp_path: Path) -> None:
    """Without forcing, the device's launches and set-up lose on a small sweep: the OpenMP
    wavefront runs on the host, and the remark says so and why; forced, it runs on the device."""
    text = SEIDEL_5.replace("#define N 150", "#define N 300")
    out_c, stderr, report = _mdpoly(text, tmp_path, "opencl", calibration=None)
    assert "#pragma omp for schedule(static)" in out_c.read_text() and "_wave(" not in out_c.read_text()
    assert "wavefront t,i,j skew i+t,j+t tiles 16x16x16]; device: host: device" in stderr and "set-up" in stderr, stderr
    nest = next(n for n in json.loads(report.read_text())["nests"] if "schedule" in n)
    inputs = nest["cost"]["device"]["inputs"]
    # tiles of i+t and j+t (1..302: 19 each) and of t (one): wavefronts 0..36, each a work-group
    # per tile, 31 inner wavefronts of 256 candidates on 256 threads: a point and a barrier each
    assert inputs["launches"] == 37 and inputs["barriers"] == 37 * 31 and inputs["path_ops"] == 37 * 31 * 2
    assert inputs["transfer_bytes"] == 2 * 300 * 300 * 8
    _, _, report = _mdpoly(text, tmp_path, "opencl", calibration="gpu_barrier_ns=1e12")
    nest = next(n for n in json.loads(report.read_text())["nests"] if "schedule" in n)
    inputs = nest["cost"]["device"]["inputs"]   # a thread per tile: its 16x16x16 points in turn
    assert inputs["launches"] == 37 and inputs["barriers"] == 0 and inputs["path_ops"] == 37 * 2 * 16 * 16 * 16
    out_c, stderr, _ = _mdpoly(text, tmp_path, "opencl")
    assert "_wave(" in out_c.read_text() and "device: device:" in stderr


@pytest.mark.skipif(nvrtc_unavailable() is not None, reason=str(nvrtc_unavailable()))
@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_cuda_kernels_compile(case: str, form: str, tmp_path: Path) -> None:
    out_c, stderr, _ = _mdpoly(CASES[case][0], tmp_path, "cuda", FORMS[form])
    assert _note(case, form) in stderr, stderr
    sources = {n: s for n, s in kernel_sources(out_c.read_text()).items() if n.endswith("_wave")}
    assert len(sources) == 1, sorted(sources)
    for name, source in sources.items():
        assert 'extern "C" __global__ void' in source
        assert ("__syncthreads();" in source) == (form == "group" and case in GROUP_NOTES)
        compile_for_sm90(source, name, tmp_path)


@pytest.mark.skipif(toolkit_unavailable() is not None, reason=str(toolkit_unavailable()))
@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("case", ["seidel", "nussinov"])
def test_cuda_host_code_compiles(case: str, form: str, tmp_path: Path) -> None:
    kit = find_cuda()
    assert kit is not None
    out_c, _, _ = _mdpoly(CASES[case][0], tmp_path, "cuda", FORMS[form])
    assert ("&mdp_most, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK" in out_c.read_text()) == (form == "group")
    assert "cuLaunchKernel" in out_c.read_text() and "mdp_cu_resident_enter_named" in out_c.read_text()
    run_step([c_compiler(), "-fsyntax-only", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-Wno-unused-variable",
              *kit.compile_flags(), str(out_c)])


@pytest.mark.gpu
@pytest.mark.skipif(toolkit_unavailable() is not None, reason=str(toolkit_unavailable()))
@pytest.mark.skipif(cuda_device_unavailable() is not None, reason=str(cuda_device_unavailable()))
@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_cuda_wavefront_matches_original_on_gpu(case: str, form: str, tmp_path: Path) -> None:
    """On a CUDA device, each form computes what the original computes, exactly."""
    kit = find_cuda()
    assert kit is not None
    text, runs, _ = CASES[case]
    reference = _outputs(build_c(_write(tmp_path, text), tmp_path / "orig", {}, openmp=False), runs)
    out_c, stderr, _ = _mdpoly(text, tmp_path, "cuda", FORMS[form])
    assert _note(case, form) in stderr, stderr
    obj = tmp_path / "cuda.o"
    run_step([c_compiler(), "-O2", *kit.compile_flags(), "-c", str(out_c), "-o", str(obj)])
    flags, stand_in = link_flags(kit, obj, tmp_path)
    assert not stand_in
    run_step([c_compiler(), str(obj), "-o", str(tmp_path / "cuda"), *flags, "-lm"])
    env = dict(os.environ, MDPOLY_CACHE_DIR=str(tmp_path / "cache"))
    assert _outputs(tmp_path / "cuda", runs, env) == reference, f"out.c kept in {tmp_path}"
