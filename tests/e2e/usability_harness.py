"""Helpers for the issue-21 tests: run mdpoly with its defaults on a C file and read its report,
then build the output with ``-fopenmp`` and compare it with the sequential build of the original
at 1-4 threads."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from e2e_harness import MDPOLY_TIMEOUT_S, build_c, child_env, mdpoly_command, run_program

from mdpoly.differential import compare_outputs


def mdpoly(source: Path, out: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``mdpoly source -o out --no-tune --report out.json args`` (no ``--all-nests``): its process."""
    cmd = [*mdpoly_command(), str(source), "-o", str(out), "--no-tune", "--report", str(out.with_suffix(".json")),
           *args]
    return subprocess.run(cmd, env=child_env(**(env or {})), capture_output=True, text=True,
                          timeout=MDPOLY_TIMEOUT_S, check=False)


def report(out: Path) -> list[dict[str, Any]]:
    nests: list[dict[str, Any]] = json.loads(out.with_suffix(".json").read_text())["nests"]
    return nests


def statuses(out: Path) -> dict[int, tuple[str, str | None]]:
    """Line of each reported nest -> (status, code)."""
    return {n["line"]: (n["status"], n["code"]) for n in report(out)}


def assert_same_as_sequential(source: Path, out: Path, tmp: Path, threads: Sequence[int] = (1, 2, 3, 4)) -> None:
    """``out`` built with ``-fopenmp`` prints what ``source`` built without it prints, at each thread count."""
    reference = run_program(build_c(source, tmp / "orig", {}, openmp=False))
    parallel = build_c(out, tmp / "par", {}, openmp=True)
    for n in threads:
        mismatch = compare_outputs(reference, run_program(parallel, threads=n), rtol=1e-5, atol=1e-5)
        assert mismatch is None, f"OMP_NUM_THREADS={n} ({out}): {mismatch}"
