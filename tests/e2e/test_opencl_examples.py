"""Differential tests of ``--target opencl``: every ``c_examples/*.c`` on a real OpenCL device.

Each example and size set (primes, tiny, one, a dot product long enough to span work-groups, the
7-deep ``mcc`` nest) is built as is and through ``mdpoly --target opencl``; ``out.c`` is built
with ``cc -O2 out.c -lOpenCL -lm``, run, and compared with the original's output (exact for
integers, max/min and ``++``; tolerance for float sums). Also: the host code's failure paths (no
platform, no matching device) exit non-zero with a clear message, and ``mdpoly-cc --target
opencl`` links. All of it is skipped, with the reason, when this machine cannot build and run an
OpenCL program (no ``CL/cl.h``, no ``libOpenCL``, or no device -- ``bash .ci/run`` installs PoCL).
The README's quick test command runs each example at its primes sizes; the other sizes are marked
``campaign`` (``pytest -m campaign``).
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

import pytest
from e2e_harness import (
    EXAMPLES_DIR,
    build_c,
    c_compiler,
    define_flags,
    mdpoly_available,
    run_mdpoly,
    run_program,
    run_step,
    write_cc_shim,
)
from test_examples import EXAMPLES, Example

from mdpoly.differential import compare_outputs

PROBE = r"""
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
int main(void) {
    cl_uint np = 0, nd = 0, total = 0, p;
    cl_platform_id plats[16];
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0) { puts("no OpenCL platform"); return 1; }
    for (p = 0; p < np && p < 16; ++p)
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) == CL_SUCCESS) total += nd;
    if (total == 0) { puts("no OpenCL device"); return 1; }
    printf("%u device(s)\n", total);
    return 0;
}
"""


@functools.lru_cache(maxsize=1)
def opencl_unavailable(tmp: str = "/tmp") -> str | None:
    """Why OpenCL programs cannot run here, or ``None`` when they can."""
    work = Path(tmp) / f"mdpoly-cl-probe-{os.getpid()}"
    work.mkdir(exist_ok=True)
    src, exe = work / "probe.c", work / "probe"
    src.write_text(PROBE)
    build = subprocess.run([c_compiler(), str(src), "-o", str(exe), "-lOpenCL"], capture_output=True, text=True)
    if build.returncode != 0:
        return f"cannot build an OpenCL program (CL/cl.h or libOpenCL missing): {build.stderr.strip()[-300:]}"
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        return f"no OpenCL device: {run.stdout.strip()} (install pocl-opencl-icd, as .ci/run does)"
    return None


needs_opencl = pytest.mark.skipif(opencl_unavailable() is not None or not mdpoly_available(),
                                  reason=str(opencl_unavailable() or "mdpoly code generation is not available"))

#: each example at its primes sizes in the quick set (README.md "Run the tests"), the other sizes a campaign
CASES = [pytest.param(ex, size_id, id=f"{ex.name}-{size_id}", marks=() if size_id == "primes" else pytest.mark.campaign)
         for ex in EXAMPLES for size_id in ex.size_sets]


def build_opencl(source: Path, exe: Path, defines: dict[str, int]) -> Path:
    run_step([c_compiler(), "-O2", *define_flags(defines), str(source), "-o", str(exe), "-lOpenCL", "-lm"])
    return exe


def opencl_out(example: Example, sizes: dict[str, int], tmp_path: Path) -> Path:
    out_c = tmp_path / "out.c"
    run_mdpoly(example.source, out_c, sizes, extra=["-q", "--target", "opencl"])
    return out_c


@needs_opencl
@pytest.mark.parametrize(("example", "size_id"), CASES)
def test_opencl_example_matches_original(example: Example, size_id: str, tmp_path: Path) -> None:
    sizes = example.size_sets[size_id]
    reference = run_program(build_c(example.source, tmp_path / "orig", sizes, openmp=False))
    out_c = opencl_out(example, sizes, tmp_path)
    if example.parallelizable:
        assert "__kernel void" in out_c.read_text(), f"{example.name}: no OpenCL kernel in {out_c}"
    got = run_program(build_opencl(out_c, tmp_path / "cl", sizes))
    mismatch = compare_outputs(reference, got, rtol=example.rtol, atol=example.atol)
    assert mismatch is None, f"{example.name} {sizes or 'default sizes'} (out.c kept in {tmp_path}): {mismatch}"


def _example(name: str) -> Example:
    return next(ex for ex in EXAMPLES if ex.name == name)


@needs_opencl
def test_dot_product_spans_work_groups(tmp_path: Path) -> None:
    """A long reduction uses several work-groups: per-group partials and the combine kernel."""
    ex, sizes = _example("dot"), {"N": 1000003}
    out_c = opencl_out(ex, sizes, tmp_path)
    text = out_c.read_text()
    assert "_combine" in text and "barrier(CLK_LOCAL_MEM_FENCE)" in text
    reference = run_program(build_c(ex.source, tmp_path / "orig", sizes, openmp=False))
    got = run_program(build_opencl(out_c, tmp_path / "cl", sizes))
    assert compare_outputs(reference, got, rtol=ex.rtol, atol=ex.atol) is None


@needs_opencl
def test_seven_deep_nest_folds_into_three_ndrange_dims(tmp_path: Path) -> None:
    ex, sizes = _example("mcc"), {"N": 2, "P": 7, "Q": 5, "K": 13, "C": 3, "R": 3, "S": 2}
    out_c = opencl_out(ex, sizes, tmp_path)
    assert "get_local_id(2)" in out_c.read_text() and "get_local_id(3)" not in out_c.read_text()
    reference = run_program(build_c(ex.source, tmp_path / "orig", sizes, openmp=False))
    got = run_program(build_opencl(out_c, tmp_path / "cl", sizes))
    assert compare_outputs(reference, got, rtol=ex.rtol, atol=ex.atol) is None


@needs_opencl
@pytest.mark.parametrize("selector", ["0", *(pytest.param(s, marks=pytest.mark.campaign) for s in ("pthread", "portable"))])
def test_device_selection_by_index_and_name(selector: str, tmp_path: Path) -> None:
    ex = _example("intsum")
    exe = build_opencl(opencl_out(ex, {"N": 5, "M": 7}, tmp_path), tmp_path / "cl", {"N": 5, "M": 7})
    reference = run_program(build_c(ex.source, tmp_path / "orig", {"N": 5, "M": 7}, openmp=False))
    env = dict(os.environ, MDPOLY_OPENCL_DEVICE=selector)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=120)
    if proc.returncode != 0 and "no OpenCL device matches" in proc.stderr and selector != "0":
        pytest.skip(f"the device here is not named like {selector!r}: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    assert compare_outputs(reference, proc.stdout) is None


@needs_opencl
@pytest.mark.parametrize(("env", "message"), [
    ({"MDPOLY_OPENCL_DEVICE": "no-such-device-xyz"}, "no OpenCL device matches MDPOLY_OPENCL_DEVICE"),
    ({"MDPOLY_OPENCL_DEVICE": "97"}, "no OpenCL device matches MDPOLY_OPENCL_DEVICE"),
    ({"OCL_ICD_VENDORS": "/nonexistent", "OCL_ICD_FILENAMES": ""}, "no OpenCL platform found"),
])
def test_missing_device_fails_loudly(env: dict[str, str], message: str, tmp_path: Path) -> None:
    ex = _example("saxpy_scalar")
    exe = build_opencl(opencl_out(ex, {"N": 11}, tmp_path), tmp_path / "cl", {"N": 11})
    proc = subprocess.run([str(exe)], capture_output=True, text=True, env=dict(os.environ, **env), timeout=120)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr
    assert proc.stderr.startswith("mdpoly: OpenCL error:")


@needs_opencl
def test_cc_wrapper_links_opencl(tmp_path: Path) -> None:
    shim = write_cc_shim(tmp_path)
    exe = tmp_path / "mv"
    run_step([str(shim), "--target", "opencl", "-q", "--all-nests", "--", "-O2", "-DI=37", "-DK=101",
              str(EXAMPLES_DIR / "matvec.c"), "-o", str(exe)])
    ex = _example("matvec")
    reference = run_program(build_c(ex.source, tmp_path / "orig", {"I": 37, "K": 101}, openmp=False))
    assert compare_outputs(reference, run_program(exe), rtol=ex.rtol, atol=ex.atol) is None


FRONTEND_CASES = sorted((Path(__file__).parent / "frontend_cases").glob("*.c"))


@needs_opencl
@pytest.mark.parametrize("source", [pytest.param(p, id=p.stem) for p in FRONTEND_CASES])
def test_opencl_frontend_cases_match_original(source: Path, tmp_path: Path) -> None:
    """The front end's harder inputs (aliasing guards, local accumulators with a finish expression)."""
    reference = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    run_mdpoly(source, out_c, {}, extra=["-q", "--target", "opencl"])
    got = run_program(build_opencl(out_c, tmp_path / "cl", {}))
    mismatch = compare_outputs(reference, got, rtol=1e-4, atol=1e-5)
    assert mismatch is None, f"{source.name} (out.c kept in {tmp_path}): {mismatch}"


PROFILE_LINE = r"mdpoly-profile: (\w+) calls=(\d+) kernel_ms=([0-9.]+) transfer_ms=([0-9.]+)"


@needs_opencl
@pytest.mark.parametrize(("name", "sizes"), [("saxpy_scalar", {"N": 1001}), ("dot", {"N": 1000003})])
def test_profile_prints_kernel_and_transfer_time_per_nest(name: str, sizes: dict[str, int], tmp_path: Path) -> None:
    """``MDPOLY_PROFILE=1``: one ``mdpoly-profile:`` line per nest at exit; unset or ``0``: none."""
    import re

    ex = _example(name)
    out_c = opencl_out(ex, sizes, tmp_path)
    exe = build_opencl(out_c, tmp_path / "cl", sizes)
    reference = run_program(build_c(ex.source, tmp_path / "orig", sizes, openmp=False))
    for value in ("1", "0", None):
        env = {k: v for k, v in os.environ.items() if k != "MDPOLY_PROFILE"}
        if value is not None:
            env["MDPOLY_PROFILE"] = value
        proc = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert compare_outputs(reference, proc.stdout, rtol=ex.rtol, atol=ex.atol) is None
        lines = re.findall(PROFILE_LINE, proc.stderr)
        if value != "1":
            assert not lines, proc.stderr
            continue
        nests = re.findall(r'mdp_cl_profile_add\("(\w+)"', out_c.read_text())
        assert nests and sorted(line[0] for line in lines) == sorted(nests), proc.stderr
        for _, calls, kernel_ms, transfer_ms in lines:
            assert int(calls) >= 1 and float(kernel_ms) > 0 and float(transfer_ms) > 0
