"""``OpenMPRunner.build``: a compiler that does not finish within ``compile_timeout`` fails the
build (``BuildFailed``) instead of holding the tuner, and the processes it started end with it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mdpoly.runtime.base import BuildFailed, BuildRequest
from mdpoly.runtime.openmp import OpenMPRunner


def test_compile_timeout_fails_the_build_and_ends_the_compiler(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    slow = tmp_path / "slowcc"
    # a "compiler" whose own child (as cc runs cc1) outlives a killed parent unless its group ends
    slow.write_text(f"#!/bin/sh\nsleep 30 &\necho $! > {pid_file}\nwait\n")
    slow.chmod(0o755)
    runner = OpenMPRunner(str(tmp_path / "work"))
    runner.compile_timeout = 1.0
    start = time.perf_counter()
    with pytest.raises(BuildFailed, match="longer than 1 s"):
        runner.build(BuildRequest("void f(void) {}\n", "f", (), compiler=str(slow)))
    assert time.perf_counter() - start < 10
    child = int(pid_file.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the compiler's child process still runs")


def test_build_within_the_timeout(tmp_path: Path) -> None:
    runner = OpenMPRunner(str(tmp_path / "work"))
    built = runner.build(BuildRequest("void f(void) {}\n", "f", ()))
    assert Path(built.artifact).is_file()
