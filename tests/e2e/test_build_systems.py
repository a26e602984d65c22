"""``mdpoly-cc`` as CC in real build systems: make and CMake builds match the plain builds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from e2e_harness import EXAMPLES_DIR, child_env, have_tool, mdpoly_available, run_program, run_step, write_cc_shim

from mdpoly.differential import compare_outputs

RTOL, ATOL = 1e-4, 1e-5   # both projects contain float reductions
WARNING = "mdpoly-cc: warning:"


def check_no_fallback(build_log: str) -> None:
    """With mdpoly present, these simple sources must not fall back to the original code."""
    if mdpoly_available():
        assert WARNING not in build_log, build_log


@pytest.mark.skipif(not have_tool("make"), reason="make is not installed")
def test_make_project_with_mdpoly_cc(tmp_path: Path) -> None:
    plain, wrapped = tmp_path / "plain", tmp_path / "wrapped"
    shutil.copytree(EXAMPLES_DIR / "make_project", plain, ignore=shutil.ignore_patterns("app", "*.o", "*.d"))
    shutil.copytree(plain, wrapped)
    shim = write_cc_shim(tmp_path)

    run_step(["make"], cwd=plain)
    build = run_step(["make", f"CC={shim}"], cwd=wrapped, env=child_env())
    check_no_fallback(build.stderr)
    mismatch = compare_outputs(run_program(plain / "app"), run_program(wrapped / "app", threads=2),
                               rtol=RTOL, atol=ATOL)
    assert mismatch is None, str(mismatch)

    # Dependency files name the real sources, so a second make has nothing to do.
    for dep in wrapped.glob("*.d"):
        assert "mdpoly-cc-" not in dep.read_text(), dep.read_text()
    again = run_step(["make", f"CC={shim}"], cwd=wrapped, env=child_env())
    assert "up to date" in again.stdout
    (wrapped / "kernels.h").touch()
    rebuilt = run_step(["make", f"CC={shim}"], cwd=wrapped, env=child_env())
    assert "kernels.c" in rebuilt.stdout


@pytest.mark.skipif(not have_tool("cmake"), reason="cmake is not installed")
def test_cmake_project_with_mdpoly_cc(tmp_path: Path) -> None:
    source = EXAMPLES_DIR / "cmake_project"
    shim = write_cc_shim(tmp_path)
    outputs = {}
    for name, cc in (("plain", "cc"), ("wrapped", str(shim))):
        build = tmp_path / name
        env = child_env(CC=cc)
        run_step(["cmake", "-S", str(source), "-B", str(build)], env=env)
        log = run_step(["cmake", "--build", str(build)], env=env)
        if name == "wrapped":
            check_no_fallback(log.stdout + log.stderr)
        outputs[name] = run_program(build / "blur_app", threads=2)
    mismatch = compare_outputs(outputs["plain"], outputs["wrapped"], rtol=RTOL, atol=ATOL)
    assert mismatch is None, str(mismatch)
