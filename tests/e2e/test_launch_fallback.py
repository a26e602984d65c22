"""Code planned for a larger device than the one it runs on stays correct: the call site asks
``<nest>_fits()`` (the device's limits against the compiled kernels' work-group sizes and local
memory) and runs the original C where the kernels cannot launch. On PoCL, whose work-group limit
``POCL_MAX_WORK_GROUP_SIZE`` lowers, differential against the original program; and the limits of
such a device are what generation plans with when it is the device found."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest
from e2e_harness import build_c, run_mdpoly, run_program
from test_opencl_examples import build_opencl, needs_opencl

from mdpoly.differential import compare_outputs

#: generating for (or tuning on) the OpenCL device found asks it through pyopencl
needs_pyopencl = pytest.mark.skipif(importlib.util.find_spec("pyopencl") is None,
                                    reason="pyopencl is not installed (pip install 'mdpoly[opencl]')")

PROGRAM = r"""
#include <stdio.h>
static float A[N][N], B[N][N], C[N][N];
int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) { A[i][j] = (float)((i + 2 * j) % 7) - 3.0f; B[i][j] = (float)((i * j + 1) % 5); }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < N; k++)
                acc += A[i][k] * B[k][j];
            C[i][j] = acc;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            printf("%.6g\n", C[i][j]);
    return 0;
}
"""
SIZES = {"N": 80}


def _run(exe: Path, **env: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "MDPOLY_PROFILE": "1", **env})
    assert proc.returncode == 0, proc.stderr
    return proc


@needs_opencl
def test_a_device_too_small_for_the_plan_runs_the_original(tmp_path: Path) -> None:
    src = tmp_path / "mm.c"
    src.write_text(PROGRAM)
    reference = run_program(build_c(src, tmp_path / "orig", SIZES, openmp=False))
    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, SIZES, extra=["-q", "--target", "opencl", "--no-tune", "--all-nests",
                                         "--device-limits", "cu=8,wg=256,lmem=32K"])
    text = out_c.read_text()
    assert "_fits()" in text and "mdp_local[0] = 16;" in text   # 16 x 16 work-items planned
    exe = build_opencl(out_c, tmp_path / "cl", SIZES)
    big = _run(exe)   # PoCL as it is: the kernels run
    assert compare_outputs(reference, big.stdout, rtol=1e-5, atol=1e-5) is None
    assert "kernel_ms=" in big.stderr and "the original code runs instead" not in big.stderr
    small = _run(exe, POCL_MAX_WORK_GROUP_SIZE="64")   # a device of 64 work-items per group
    assert compare_outputs(reference, small.stdout, rtol=1e-5, atol=1e-5) is None
    assert "mdpoly: note: the original code runs instead of kernel" in small.stderr, small.stderr
    assert "launch refused" not in small.stderr


@needs_opencl
@needs_pyopencl
def test_generation_plans_with_the_smaller_device_found(tmp_path: Path) -> None:
    src = tmp_path / "mm.c"
    src.write_text(PROGRAM)
    out_c, report = tmp_path / "out.c", tmp_path / "r.json"
    old = os.environ.get("POCL_MAX_WORK_GROUP_SIZE")
    os.environ["POCL_MAX_WORK_GROUP_SIZE"] = "64"
    try:
        run_mdpoly(src, out_c, SIZES, extra=["-q", "--target", "opencl", "--no-tune", "--all-nests",
                                             "--report", str(report)])
    finally:
        if old is None:
            os.environ.pop("POCL_MAX_WORK_GROUP_SIZE")
        else:
            os.environ["POCL_MAX_WORK_GROUP_SIZE"] = old
    limits = [n["limits"] for n in json.loads(report.read_text())["nests"] if "limits" in n]
    assert limits and all(x["source"] == "device" and x["max_work_group_size"] == 64 for x in limits)
    exe = build_opencl(out_c, tmp_path / "cl", SIZES)
    small = _run(exe, POCL_MAX_WORK_GROUP_SIZE="64")
    assert "the original code runs instead" not in small.stderr   # planned for it: the kernels run
    reference = run_program(build_c(src, tmp_path / "orig", SIZES, openmp=False))
    assert compare_outputs(reference, small.stdout, rtol=1e-5, atol=1e-5) is None
