"""Parallel loops around sequential bodies on the GPU (``mdpoly.backends.device_schedule``, issue 23 item 1).

Each program in ``device_item_cases/`` has a ``PrivateLoop`` shape written for this test: an
ADI-like pair of column sweeps inside a time loop (resident over it), a row sweep with a
backward loop, a symm-like accumulation inside a host loop, deriche-like sweeps whose scalar
temporaries are read after the loops (the last iteration's values come back), float math.
Each runs as written and through ``--target opencl`` on PoCL, outputs compared exactly (no
reduction is reassociated in these parts); the report must say the loop runs on the device.
``--target cuda`` output is compiled (host code against the toolkit headers, kernels with
NVRTC) and, on a GPU machine (``-m gpu``), run and compared the same way.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from cuda_harness import compile_for_sm90, kernel_sources, nvrtc_unavailable, toolkit_unavailable
from e2e_harness import (
    build_c,
    c_compiler,
    child_env,
    mdpoly_available,
    mdpoly_command,
    run_mdpoly,
    run_program,
    run_step,
)
from test_cuda_examples import build_cuda
from test_opencl_examples import needs_opencl

from mdpoly.cuda_toolkit import find_cuda

CASES_DIR = Path(__file__).parent / "device_item_cases"

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

#: case -> the lines of the parallel loops and of the host statements that must run on the
#: device, a region note (or ""), and the region's copies in and back (MDPOLY_PROFILE; None: no region)
CASES: dict[str, tuple[tuple[int, ...], tuple[int, ...], str, tuple[int, int] | None]] = {
    "adi_like": ((9, 21), (), "v, p, q, u stay on the device over loop 't'", (4, 4)),
    "sweep": ((7,), (), "", None),
    # the second sweep is blocked for OpenMP; on the device it runs as written, one thread per 'j'
    "adi_blocked": ((11, 23), (), "u, v, p, q stay on the device over loop 't'", (4, 4)),
    "symm_like": ((9,), (), "B, A, C stay on the device over loop 'i'", (3, 1)),
    "deriche_like": ((9, 20), (), "", None),
    # the scalar sqrt statement runs as a one-thread kernel: A is not copied back around it
    "cholesky_like": ((), (8,), "A stay on the device over loop 'k' (copied in once before it: A; copied back "
                      "once after it: A); the statement", (1, 1)),
    # the same with the host loop declaring its iterator (for (int k = ...)), which the statement reads
    "cholesky_decl": ((), (8,), "A stay on the device over loop 'k'", (1, 1)),
    "lu_like": ((), (7, 8), "A, piv stay on the device over loop 'k'", (2, 2)),
    # the boundary row, too small to be a computation of its own, runs on the device (threads over
    # 'j'), so ey stays there; its loops' exit values come back (the function returns them)
    "fdtd_like": ((), (9,), "fict, ey, hz, ex stay on the device over loop 't'", (4, 3)),
    # the VLA input's overlap check spans the strided loop's trip count (the fuzzer's seed 91050)
    "strided_sweep": ((12,), (), "", None),
}
#: cases generated under the cost model (without --all-nests)
COSTED = {"fdtd_like"}
_RESIDENT = re.compile(r"mdpoly-profile: resident uploads=(\d+) downloads=(\d+)")


def _mdpoly(case: str, out_c: Path, extra: list[str]) -> str:
    """mdpoly's stderr on the case: with --all-nests (``run_mdpoly``), or under the cost model
    (its GPU half told that the device always pays, ``gpu_min_speedup=0``: these programs are far
    too small to repay a GPU context, and the device items are what is tested)."""
    if case not in COSTED:
        return run_mdpoly(CASES_DIR / f"{case}.c", out_c, {}, extra=extra).stderr
    cmd = [*mdpoly_command(), str(CASES_DIR / f"{case}.c"), "-o", str(out_c), "--no-tune", *extra]
    return run_step(cmd, env=child_env(MDPOLY_COST_CALIBRATION="gpu_min_speedup=0")).stderr


def _generate(case: str, target: str, tmp_path: Path) -> tuple[Path, str]:
    out_c = tmp_path / f"{case}_{target}.c"
    return out_c, _mdpoly(case, out_c, ["--target", target])


@pytest.mark.parametrize("case", sorted(CASES))
def test_report_says_the_loop_runs_on_the_device(case: str, tmp_path: Path) -> None:
    lines, statements, region, _ = CASES[case]
    report = tmp_path / "r.json"
    stderr = _mdpoly(case, tmp_path / "out.c", ["--target", "opencl", "--report", str(report)])
    for line in lines:
        assert f"the parallel loop at line {line} runs on the device, one thread per iteration" in stderr
    for line in statements:
        assert re.search(rf"(statement|computation) at line {line} (kept as written )?runs on the device", stderr)
    assert "copied back for the statement" not in stderr
    if region:
        assert region in stderr, stderr
    items = [d for n in json.loads(report.read_text())["nests"] for d in n.get("device_items", [])]
    assert sorted(d["line"] for d in items) == sorted(lines + statements)


@needs_opencl
@pytest.mark.parametrize("case", sorted(CASES))
def test_device_loop_matches_original_on_opencl(case: str, tmp_path: Path) -> None:
    reference = run_program(build_c(CASES_DIR / f"{case}.c", tmp_path / "orig", {}, openmp=False))
    out_c, _ = _generate(case, "opencl", tmp_path)
    assert "get_global_id(0)" in out_c.read_text()
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    proc = run_step([str(exe)], env=dict(os.environ, MDPOLY_PROFILE="1"))
    assert proc.stdout == reference, f"out.c kept in {tmp_path}"
    copies = CASES[case][3]
    assert _RESIDENT.findall(proc.stderr) == ([] if copies is None else [tuple(map(str, copies))]), proc.stderr


@pytest.mark.skipif(toolkit_unavailable() is not None, reason=str(toolkit_unavailable()))
@pytest.mark.parametrize("case", sorted(CASES))
def test_device_loop_cuda_output_compiles(case: str, tmp_path: Path) -> None:
    kit = find_cuda()
    assert kit is not None
    out_c, stderr = _generate(case, "cuda", tmp_path)
    lines, _statements, _region, _ = CASES[case]
    # a case of statements only (cholesky's sqrt) has no loop run one thread per iteration
    assert ("runs on the device, one thread per iteration" if lines else "runs on the device") in stderr
    text = out_c.read_text()
    run_step([c_compiler(), "-fsyntax-only", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-Wno-unused-variable",
              *kit.compile_flags(), str(out_c)])
    if nvrtc_unavailable() is None:
        sources = kernel_sources(text)
        assert any(("_dev" if lines else "_stmt") in name for name in sources), sorted(sources)
        for name, source in sources.items():
            compile_for_sm90(source, name, tmp_path)


@pytest.mark.gpu
@pytest.mark.skipif(toolkit_unavailable() is not None, reason=str(toolkit_unavailable()))
@pytest.mark.parametrize("case", sorted(CASES))
def test_device_loop_matches_original_on_cuda_gpu(case: str, tmp_path: Path) -> None:
    from cuda_harness import cuda_device_unavailable
    if cuda_device_unavailable() is not None:
        pytest.skip(str(cuda_device_unavailable()))
    reference = run_program(build_c(CASES_DIR / f"{case}.c", tmp_path / "orig", {}, openmp=False))
    out_c, _ = _generate(case, "cuda", tmp_path)
    exe = tmp_path / "cuda"
    assert not build_cuda(out_c, exe, {}, tmp_path)
    assert run_program(exe) == reference


@pytest.mark.skipif(nvrtc_unavailable() is not None, reason=str(nvrtc_unavailable()))
@pytest.mark.parametrize("case", sorted(CASES))
def test_device_item_cuda_kernels_compile(case: str, tmp_path: Path) -> None:
    """The CUDA kernels of the device items compile for sm_90 (NVRTC or nvcc), also where the
    toolkit lacks the headers the host code needs."""
    out_c, _ = _generate(case, "cuda", tmp_path)
    sources = {n: s for n, s in kernel_sources(out_c.read_text()).items() if n.endswith(("_dev", "_stmt"))}
    assert len(sources) == len(CASES[case][0]) + len(CASES[case][1]), sorted(sources)
    for name, source in sources.items():
        assert 'extern "C" __global__ void' in source
        compile_for_sm90(source, name, tmp_path)


#: The CUDA runtime helpers the device items' host functions call, as ``backends/c/cuda_host.h``
#: declares them (for a syntax check of those functions where the toolkit lacks ``nvrtc.h``).
_CUDA_HELPERS = """#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
extern int mdp_cu_profile;
void mdp_cu_check(CUresult err, const char *call);
void mdp_cu_profile_record(int which);
void mdp_cu_profile_add(const char *nest, int copied, double host_start, int launches);
double mdp_cu_now_ms(void);
void mdp_cu_gate_hold(void);
void mdp_cu_gate_open(void);
CUmodule mdp_cu_module(const char *source, const char *nest, int fmad);
CUfunction mdp_cu_function(CUmodule mod, const char *kernel);
void mdp_cu_launchable(CUfunction f, const char *kernel, const unsigned int block[3]);
void mdp_cu_buffer(CUdeviceptr *mem, size_t *cap, size_t bytes);
int mdp_cu_resident_find(const void *host, size_t bytes, CUdeviceptr *mem);
"""


@pytest.mark.skipif(find_cuda() is None, reason="no CUDA toolkit (cuda.h)")
@pytest.mark.parametrize("case", sorted(CASES))
def test_device_item_cuda_host_functions_compile(case: str, tmp_path: Path) -> None:
    """Each device item's CUDA host function, with the runtime's declarations and ``cuda.h``,
    compiles without warnings (the whole file needs ``nvrtc.h`` too, which some toolkits lack)."""
    kit = find_cuda()
    assert kit is not None
    out_c, _ = _generate(case, "cuda", tmp_path)
    text = out_c.read_text()
    funcs = re.findall(r"^static const char mdp_cu_src_(\w+_(?:dev|stmt)\d*)\[\] =\n.*?^}\n", text, re.M | re.S)
    assert len(funcs) == len(CASES[case][0]) + len(CASES[case][1]), funcs
    pieces = [m.group(0) for m in re.finditer(r"^static const char mdp_cu_src_\w+_(?:dev|stmt)\d*\[\] =\n.*?^}\n",
                                               text, re.M | re.S)]
    typedefs = re.findall(r"^(?:typedef|#define) .*$", CASES_DIR.joinpath(f"{case}.c").read_text(), re.M)
    src = tmp_path / "host.c"
    src.write_text(_CUDA_HELPERS + "\n".join(typedefs) + "\n" + "\n".join(pieces))
    run_step([c_compiler(), "-fsyntax-only", "-Wall", "-Werror", "-Wno-unused-function", *kit.compile_flags(),
              str(src)])


@needs_opencl
def test_device_items_copy_nothing_inside_regions(tmp_path: Path) -> None:
    """MDPOLY_PROFILE: the kernels of the items inside a data region move no data."""
    out_c, _ = _generate("cholesky_like", "opencl", tmp_path)
    exe = tmp_path / "cl"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    proc = run_step([str(exe)], env=dict(os.environ, MDPOLY_PROFILE="1"))
    lines = re.findall(r"mdpoly-profile: (\S+_stmt) calls=(\d+) kernel_ms=\S+ transfer_ms=(\S+)", proc.stderr)
    assert lines and all(int(calls) == 40 and float(ms) == 0.0 for _, calls, ms in lines), proc.stderr
