"""The device limits untuned GPU code is planned with (``mdpoly.device_limits``): ``--device-limits``,
the device found at generation time (fake device queries here; PoCL where it is installed), and the
generic fallback; the report and the remark name them; code planned for a big GPU's limits runs
correctly on a smaller device (PoCL), differential against the original C."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mdh_examples import matmul

from mdpoly.device_limits import _QUERIED, parse_limits, planning_limits
from mdpoly.diagnostics import MdpolyError
from mdpoly.lower.gpu_defaults import default_gpu_params
from mdpoly.options import Options
from mdpoly.targets import CUDA, OPENCL, OPENMP

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from e2e_harness import build_c, run_mdpoly, run_program

H100 = {"max_compute_units": 132, "max_work_group_size": 1024, "max_work_item_sizes": (1024, 1024, 64),
        "local_mem_size": 48 * 1024, "preferred_wg_multiple": 32, "is_gpu": True, "async_copy": True,
        "local_mem_optin": 227 * 1024, "registers_per_block": 65536}


def _fake(name: str, info: dict[str, Any] | None, calls: list[int] | None = None) -> Any:
    def query(options: Options) -> tuple[str, dict[str, Any]]:
        if calls is not None:
            calls.append(1)
        if info is None:
            raise RuntimeError("no platform")
        return name, info
    return query


@pytest.fixture(autouse=True)
def _fresh_queries() -> Any:
    _QUERIED.clear()
    yield
    _QUERIED.clear()


def test_key_value_spec_parses_sizes_and_aliases() -> None:
    got = parse_limits("cu=132, wg=1024, items=1024x1024x64, lmem=48K, warp=32, gpu=1, async=0, name=H100")
    assert got == {"max_compute_units": 132, "max_work_group_size": 1024, "max_work_item_sizes": (1024, 1024, 64),
                   "local_mem_size": 49152, "preferred_wg_multiple": 32, "is_gpu": True, "async_copy": False,
                   "name": "H100"}
    assert parse_limits("lmem=1M")["local_mem_size"] == 1 << 20
    assert parse_limits("generic") is None


def test_json_file_spec(tmp_path: Path) -> None:
    f = tmp_path / "h200.json"
    f.write_text(json.dumps({"max_compute_units": 132, "local_mem_size": 49152, "max_work_item_sizes": [1024, 1024, 64],
                             "is_gpu": True}))
    got = parse_limits(str(f))
    assert got == {"max_compute_units": 132, "local_mem_size": 49152, "max_work_item_sizes": (1024, 1024, 64),
                   "is_gpu": True}


@pytest.mark.parametrize("spec", ["cu=x", "bogus=3", "cu", "gpu=maybe", "cu=0", "missing.json"])
def test_bad_specs_are_refused(spec: str) -> None:
    with pytest.raises(MdpolyError, match="--device-limits"):
        parse_limits(spec)


def test_a_found_device_replaces_the_generic_limits() -> None:
    calls: list[int] = []
    target = replace(OPENCL, limits=_fake("Fake GPU", H100, calls))
    got = planning_limits(target, Options(target="opencl"))
    assert got.source == "device" and got.name == "Fake GPU"
    assert (got.caps.compute_units, got.caps.local_mem_bytes, got.caps.max_work_group_size) == (132, 49152, 1024)
    assert got.caps.is_gpu and got.caps.max_work_item_sizes == (1024, 1024, 64)
    assert got.text().startswith("device limits of Fake GPU (132 compute units")
    report = got.to_report()
    assert report["source"] == "device" and report["compute_units"] == 132
    assert report["local_mem_optin"] == 227 * 1024 and report["registers_per_block"] == 65536
    planning_limits(target, Options(target="opencl"))
    assert len(calls) == 1   # asked once per process


def test_no_device_falls_back_to_the_generic_limits() -> None:
    target = replace(OPENCL, limits=_fake("", None))
    got = planning_limits(target, Options(target="opencl"))
    assert got.source == "generic" and got.caps == OPENCL.caps
    assert got.text().startswith("generic limits (no device found")


def test_given_limits_win_over_the_device() -> None:
    target = replace(CUDA, limits=_fake("Fake small GPU", {**H100, "max_compute_units": 20}))
    got = planning_limits(target, Options(target="cuda", device_limits="cu=66,lmem=32K"))
    assert got.source == "given" and got.caps.compute_units == 66 and got.caps.local_mem_bytes == 32 * 1024
    generic = planning_limits(target, Options(target="cuda", device_limits="generic"))
    assert generic.source == "generic" and generic.caps == CUDA.caps


def test_openmp_plans_without_device_limits() -> None:
    assert planning_limits(OPENMP, Options()).caps == OPENMP.caps


def test_untuned_defaults_follow_the_device() -> None:
    """A GEMV on a GPU-sized device gets the one-kernel GEMV rule (``is_gpu``, the device's units),
    which the generic OpenCL limits (a CPU-like 8-unit device) never give."""
    mdh = matmul(1, 2048, 1000)
    gpu = planning_limits(replace(OPENCL, limits=_fake("Fake GPU", H100)), Options(target="opencl")).caps
    assert default_gpu_params(mdh, gpu) != default_gpu_params(mdh, OPENCL.caps)


def _pocl() -> Any:
    try:
        import pyopencl as cl
        return next(d for p in cl.get_platforms() for d in p.get_devices() if "pthread" in d.name or "cpu" in
                    d.name.lower() or p.name == "Portable Computing Language")
    except Exception:  # noqa: BLE001 - no pyopencl / platform: skipped
        return None


@pytest.mark.skipif(_pocl() is None, reason="no PoCL OpenCL device")
def test_on_pocl_the_limits_come_from_the_device() -> None:
    dev = _pocl()
    got = planning_limits(OPENCL, Options(target="opencl", opencl_device=str(dev.name)))
    assert got.source == "device" and got.name == dev.name.strip()
    assert got.caps.compute_units == dev.max_compute_units
    assert got.caps.max_work_group_size == dev.max_work_group_size
    assert got.caps.local_mem_bytes == dev.local_mem_size
    assert not got.caps.is_gpu


MATMUL = r"""
#include <stdio.h>
static float A[M][K], B[K][N], C[M][N];
int main(void)
{
    unsigned s = 7u;
    for (int i = 0; i < M; i++) for (int k = 0; k < K; k++) { s = s * 1103515245u + 12345u; A[i][k] = (float)((s >> 8) & 0xFFFu) / 2048.0f - 1.0f; }
    for (int k = 0; k < K; k++) for (int j = 0; j < N; j++) { s = s * 1103515245u + 12345u; B[k][j] = (float)((s >> 8) & 0xFFFu) / 2048.0f - 1.0f; }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < K; k++)
                C[i][j] += A[i][k] * B[k][j];
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) printf("%.9g\n", C[i][j]);
    return 0;
}
"""

BIG = "cu=132,wg=1024,items=1024x1024x64,lmem=48K,warp=32,gpu=1,name=H100-like"


@pytest.mark.skipif(_pocl() is None, reason="no PoCL OpenCL device")
@pytest.mark.parametrize("sizes", [{"M": 1, "N": 301, "K": 1500}, {"M": 130, "N": 70, "K": 200}],
                         ids=["gemv", "matmul"])
def test_code_planned_for_a_big_gpu_runs_correctly_on_pocl(sizes: dict[str, int], tmp_path: Path) -> None:
    from mdpoly.differential import compare_outputs
    src = tmp_path / "prog.c"
    src.write_text(MATMUL)
    reference = run_program(build_c(src, tmp_path / "orig", sizes, openmp=False))
    out_c = tmp_path / "out.c"
    report = tmp_path / "r.json"
    proc = run_mdpoly(src, out_c, sizes, extra=["--target", "opencl", "--device-limits", BIG, "--report", str(report)])
    assert "planned with limits given by --device-limits" in proc.stderr
    nests = json.loads(report.read_text())["nests"]
    limits = next(n["limits"] for n in nests if "limits" in n and n["line"] == 9)
    assert limits["source"] == "given" and limits["compute_units"] == 132 and limits["is_gpu"]
    exe = tmp_path / "cl"
    from e2e_harness import c_compiler, define_flags, run_step
    run_step([c_compiler(), "-O2", *define_flags(sizes), str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    mismatch = compare_outputs(reference, run_program(exe), rtol=1e-4, atol=1e-4)
    assert mismatch is None, mismatch
