"""Differential tests of ``--devices`` (one computation split over several devices).

On PoCL (the one CPU device listed twice or three times: a context and queue per slot), the
programs of ``device_cases/`` and ``mpi_cases/`` (integer or exactly representable data) must
print exactly what the sequential program prints, with the split over 2 and 3 slots, equal and
unequal shares, and a single slot; the float examples of ``c_examples/`` within the float
tolerance of ``test_examples``. The report says which dimension was split or why none was.
For CUDA (no GPU here) the generated host code must compile against the toolkit's headers and
the kernels with NVRTC; running it is the GPU machine's job (``scripts/multigpu_check.py``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from e2e_harness import (
    EXAMPLES_DIR,
    build_c,
    c_compiler,
    campaign_except,
    define_flags,
    mdpoly_command,
    run_mdpoly,
    run_step,
)
from test_opencl_examples import opencl_unavailable

from mdpoly.differential import compare_outputs

HERE = Path(__file__).resolve().parent
FLOAT_SUM = {"rtol": 1e-4, "atol": 1e-5}


def _transform(source: Path, tmp: Path, defines: dict[str, int], target: str, devices: str) -> tuple[Path, list[str]]:
    out, report = tmp / f"{source.stem}_{target}_dev.c", tmp / f"{source.stem}_{target}_dev.json"
    run_mdpoly(source, out, defines, extra=["--target", target, "--devices", devices, "--report", str(report)])
    return out, _notes(json.loads(report.read_text())["nests"])


def _notes(entries: list[dict]) -> list[str]:  # type: ignore[type-arg]
    notes: list[str] = []
    for e in entries:
        if e.get("devices"):
            notes.append(e["devices"])
        notes += _notes(e.get("schedule", []) + e.get("body", []))
    return notes


def _run(exe: Path, **env: str) -> str:
    return run_step([str(exe)], env={**os.environ, **env}).stdout


needs_opencl = pytest.mark.skipif(opencl_unavailable() is not None, reason=str(opencl_unavailable()))


@needs_opencl
@pytest.mark.parametrize("source", campaign_except([HERE / "device_cases" / "kernels.c", HERE / "mpi_cases" / "gathers.c",
                                                    HERE / "mpi_cases" / "reductions.c"], HERE / "mpi_cases" / "reductions.c"),
                         ids=lambda p: p.stem)
def test_cases_match_sequential_on_one_device_listed_several_times(source: Path, tmp_path: Path) -> None:
    expected = run_step([str(build_c(source, tmp_path / "seq", {}, openmp=False))]).stdout
    out_c, notes = _transform(source, tmp_path, {}, "opencl", "0,0")
    exe = tmp_path / "dev"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    for env in ({}, {"MDPOLY_DEVICES": "0,0,0"}, {"MDPOLY_DEVICE_SHARES": "1,3"}, {"MDPOLY_DEVICES": "1"}):
        assert _run(exe, **env) == expected, env
    assert any("split over the devices" in n for n in notes), notes
    if source.stem == "kernels":
        assert any("'i' (++) split over the devices; each device copies back its rows" in n for n in notes), notes
        assert any("'k' (+) split over the devices; partial results combined with '+'" in n for n in notes), notes
        assert any("output points gathered on the host" in n for n in notes), notes
        assert any("[devices-too-little-work]" in n for n in notes), notes


def _function(text: str, name: str) -> str:
    """The definition of generated function ``name``: its kernel source string, then the function."""
    start = text.index(f"static const char mdp_src_{name}[] =")
    return text[start:text.index("\n}\n", text.index(f"static void {name}(", start)) + 3]


def _kernel(text: str, name: str) -> list[str]:
    """The lines of generated function ``name``'s kernel source."""
    start = text.index(f"static const char mdp_src_{name}[] =")
    return text[start:text.index(";\n", start)].replace(name, "N").splitlines()


@needs_opencl
@pytest.mark.parametrize("source", campaign_except([HERE / "device_cases" / "kernels.c", HERE / "mpi_cases" / "reductions.c"],
                                                   HERE / "mpi_cases" / "reductions.c"), ids=lambda p: p.stem)
def test_one_slot_calls_the_plain_code(source: Path, tmp_path: Path) -> None:
    """One slot on the plain code's device: each split computation calls the function the build
    without --devices generates (same kernels, parameters and copies), nothing of the slots; the
    slots' kernels have the plain kernels' parameters and index type."""
    expected = run_step([str(build_c(source, tmp_path / "seq", {}, openmp=False))]).stdout
    plain_c = tmp_path / "plain.c"
    run_mdpoly(source, plain_c, {}, extra=["--target", "opencl"])
    plain = plain_c.read_text()
    out_c, _ = _transform(source, tmp_path, {}, "opencl", "all")
    text = out_c.read_text()
    split = re.findall(r"static void (\w+)_rank\(int mdp_dev, int mdp_phase", text)
    assert split
    for name in split:
        wrapper = text[text.index(f"static void {name}("):]
        wrapper = wrapper[:wrapper.index("\n}\n")]
        branch = wrapper.index("if (mdp_md_cl_plain())")
        one = wrapper.index(f"{name}_one(", branch)
        assert one < wrapper.index("return;", one) < wrapper.index(f"{name}_rank(")
        assert "mdp_md_block" not in wrapper[:one] and "mdp_md_stage" not in wrapper[:one]
        assert _function(text, f"{name}_one").replace(f"{name}_one", name) == _function(plain, name)
        one_k, slot_k = _kernel(text, f"{name}_one"), _kernel(text, f"{name}_rank")
        assert [x for x in one_k if "#define MDP_" in x] == [x for x in slot_k if "#define MDP_" in x], name
        assert any("mdp_l = (int)" in x for x in one_k) == any("mdp_l = (int)" in x for x in slot_k), name
    exe = tmp_path / "dev"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    # "1": one slot on the device the plain code chooses (the first GPU, else the first device);
    # "0,": device 0, which is that device only where it is the first GPU or there is no GPU (PoCL
    # alone, as in CI; a GPU machine that also lists a CPU platform first runs the slot code there).
    plain_device = None
    for devices in ("1", "0,"):
        proc = subprocess.run([str(exe)], env={**os.environ, "MDPOLY_DEVICES": devices, "MDPOLY_PROFILE": "1",
                                               "MDPOLY_DEVICES_VERBOSE": "1"},
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == expected, devices
        slot = re.search(r"device slot 0: OpenCL device (\d+)", proc.stderr)
        assert slot, proc.stderr
        if devices == "1":
            plain_device = slot.group(1)
        elif slot.group(1) != plain_device:
            assert "_rank#" in proc.stderr and "_one calls=" not in proc.stderr, proc.stderr
            continue
        assert "_one calls=" in proc.stderr and "devices=1 calls=" in proc.stderr, proc.stderr
        assert "_rank#" not in proc.stderr, proc.stderr
        table = [x for x in proc.stderr.splitlines() if x.startswith("mdpoly-profile:")]
        assert table and len(set(table)) == len(table), proc.stderr   # printed once


EXAMPLES = {
    "matmul": {"M": 37, "N": 53, "K": 101},
    "matvec": {"I": 37, "K": 101},
    "dot": {"N": 1009},
    "mcc": {"N": 2, "P": 5, "Q": 7, "K": 13, "C": 11, "R": 3, "S": 2},
}


@needs_opencl
@pytest.mark.parametrize("name", campaign_except(sorted(EXAMPLES), "dot"))
def test_float_examples_within_tolerance_on_two_slots(name: str, tmp_path: Path) -> None:
    source = EXAMPLES_DIR / f"{name}.c"
    expected = run_step([str(build_c(source, tmp_path / "seq", EXAMPLES[name], openmp=False))]).stdout
    out_c, notes = _transform(source, tmp_path, EXAMPLES[name], "opencl", "0,0")
    exe = tmp_path / "dev"
    run_step([c_compiler(), "-O2", *define_flags(EXAMPLES[name]), str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    actual = _run(exe)
    assert compare_outputs(expected, actual, **FLOAT_SUM) is None
    assert len(actual.splitlines()) == len(expected.splitlines())
    assert any("split over the devices" in n for n in notes), notes


@needs_opencl
def test_profile_and_bad_device_lists(tmp_path: Path) -> None:
    source = HERE / "mpi_cases" / "gathers.c"
    out_c, _ = _transform(source, tmp_path, {}, "opencl", "all")
    exe = tmp_path / "dev"
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
    proc = subprocess.run([str(exe)], env={**os.environ, "MDPOLY_PROFILE": "1", "MDPOLY_DEVICES": "0,0"},
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "devices=2 calls=" in proc.stderr and "#1 calls=" in proc.stderr, proc.stderr
    for bad in ("99,0", "0", "two", "64"):
        proc = subprocess.run([str(exe)], env={**os.environ, "MDPOLY_DEVICES": bad}, capture_output=True, text=True)
        assert proc.returncode != 0 and "mdpoly: devices error" in proc.stderr, (bad, proc.stderr)


def test_cli_checks_the_device_list(tmp_path: Path) -> None:
    source = EXAMPLES_DIR / "matvec.c"
    for args, message in ((["--devices", "0,0"], "needs --target opencl or cuda"),
                          (["--target", "cuda", "--devices", "x"], "--devices expects"),
                          (["--target", "cuda", "--devices", "0"], "--devices expects"),
                          (["--target", "opencl", "--devices", "2", "--mpi"], "cannot be combined")):
        proc = subprocess.run([*mdpoly_command(), str(source), "-o", str(tmp_path / "o.c"), *args],
                              capture_output=True, text=True)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)


def test_without_the_flag_the_code_is_unchanged(tmp_path: Path) -> None:
    source = EXAMPLES_DIR / "matvec.c"
    plain, one = tmp_path / "plain.c", tmp_path / "one.c"
    run_mdpoly(source, plain, {}, extra=["--target", "opencl"])
    run_mdpoly(source, one, {}, extra=["--target", "opencl", "--devices", "1"])
    assert "mdp_md_" not in plain.read_text() and "mdp_md_cl_init(\"1\")" in one.read_text()


def test_cuda_host_code_and_kernels_compile(tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90, kernel_sources, nvrtc_unavailable, toolkit_unavailable

    from mdpoly.cuda_toolkit import find_cuda
    why = toolkit_unavailable() or nvrtc_unavailable()
    if why:
        pytest.skip(why)
    kit = find_cuda()
    assert kit is not None
    for source in (HERE / "device_cases" / "kernels.c", HERE / "mpi_cases" / "reductions.c"):
        out_c, notes = _transform(source, tmp_path, {}, "cuda", "all")
        assert any("split over the devices" in n for n in notes), notes
        proc = subprocess.run([c_compiler(), "-fsyntax-only", "-std=c99", "-Wall", "-Wno-unused-function", "-Werror",
                               *kit.compile_flags(), str(out_c)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
        text = out_c.read_text()
        assert "mdp_md_cu_init(\"all\")" in text and "cuLaunchKernel" in text
        assert re.search(r"if \(mdp_md_cu_plain\(\)\)\s*\{\s*mdp_t0 = mdp_md_now\(\);\s*\w+_one\(", text)
        sources = kernel_sources(text)
        assert sources
        for name, src in sources.items():
            compile_for_sm90(src, name, tmp_path)
