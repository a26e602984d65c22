"""Build-and-run helpers for the differential end-to-end tests: C sources -> program outputs.

Everything here shells out: ``cc`` builds the original and mdpoly's output, ``mdpoly`` runs as
its console script would (``sys.exit(mdpoly.cli.main())``) in a child process with this checkout
on ``PYTHONPATH``. Set ``MDPOLY_COMMAND`` to a command prefix (split like a shell line) to
test another mdpoly, e.g. an installed one; ``MDPOLY_E2E_CC`` picks the C compiler.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = REPO / "c_examples"
THREAD_COUNTS = (1, 2, 3)
RUN_TIMEOUT_S = 120
MDPOLY_TIMEOUT_S = 600


class StepFailed(AssertionError):
    """A build or run step failed; the message holds the command and its output."""


def c_compiler() -> str:
    return os.environ.get("MDPOLY_E2E_CC", "cc")


def mdpoly_command() -> list[str]:
    """The argv prefix that runs mdpoly."""
    override = os.environ.get("MDPOLY_COMMAND")
    if override:
        return shlex.split(override)
    return [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())"]


def mdpoly_available() -> bool:
    """True when an mdpoly that generates code exists to test (CLI and driver, or an override)."""
    if os.environ.get("MDPOLY_COMMAND"):
        return True
    return all(importlib.util.find_spec(name) is not None for name in ("mdpoly.cli", "mdpoly.driver"))


def child_env(**extra: str) -> dict[str, str]:
    """The environment for child processes: this checkout importable, plus ``extra``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def define_flags(defines: Mapping[str, int | str]) -> list[str]:
    return [f"-D{name}={value}" for name, value in defines.items()]


def run_step(cmd: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None,
             timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; raise :class:`StepFailed` (with command and output) unless it exits 0."""
    try:
        proc = subprocess.run(list(cmd), cwd=cwd, env=dict(env) if env is not None else None,
                              capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise StepFailed(f"timed out after {timeout}s: {shlex.join(cmd)}") from exc
    if proc.returncode != 0:
        raise StepFailed(f"exit {proc.returncode}: {shlex.join(cmd)}\n"
                         f"--- stdout (tail) ---\n{proc.stdout[-3000:]}\n--- stderr (tail) ---\n{proc.stderr[-3000:]}")
    return proc


def build_c(source: Path, exe: Path, defines: Mapping[str, int | str], *, openmp: bool,
            opt: str = "-O2") -> Path:
    """Compile one C file into ``exe`` (``-fopenmp`` when ``openmp``); return ``exe``."""
    cmd = [c_compiler(), opt, *define_flags(defines), str(source), "-o", str(exe), "-lm"]
    if openmp:
        cmd.insert(2, "-fopenmp")
    run_step(cmd)
    return exe


def run_mdpoly(source: Path, out: Path, defines: Mapping[str, int | str], *,
               extra: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """Run ``mdpoly source -o out -D ... --all-nests`` (plus ``extra``); raise unless it succeeds."""
    cmd = [*mdpoly_command(), str(source), "-o", str(out), "--target", "openmp", "--all-nests", "--no-tune"]
    for name, value in defines.items():
        cmd += ["-D", f"{name}={value}"]
    cmd += list(extra)
    proc = run_step(cmd, env=child_env(), timeout=MDPOLY_TIMEOUT_S)
    if not out.is_file():
        raise StepFailed(f"mdpoly exited 0 but wrote no {out}: {shlex.join(cmd)}\n{proc.stderr[-3000:]}")
    return proc


def assert_same_outputs(seq: Path, par: Path, arg_sets: Sequence[Sequence[str]], threads: Sequence[int]) -> None:
    """``par`` prints what ``seq`` prints for each argument list, at each thread count."""
    for args in arg_sets:
        expected = subprocess.run([str(seq), *args], check=True, capture_output=True, text=True).stdout
        for t in threads:
            got = subprocess.run([str(par), *args], check=True, capture_output=True, text=True,
                                 env={"OMP_NUM_THREADS": str(t)}).stdout
            assert got == expected, (list(args), t)


def run_program(exe: Path, *, threads: int | None = None, cwd: Path | None = None) -> str:
    """Run a built program (with ``OMP_NUM_THREADS=threads`` if given); return its stdout."""
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    return run_step([str(exe)], env=env, cwd=cwd).stdout


def write_cc_shim(directory: Path) -> Path:
    """Write an executable ``mdpoly-cc`` into ``directory`` that runs this checkout's wrapper."""
    shim = directory / "mdpoly-cc"
    shim.write_text("#!/bin/sh\n"
                    f"PYTHONPATH={shlex.quote(str(REPO))}${{PYTHONPATH:+:$PYTHONPATH}} "
                    f"exec {shlex.quote(sys.executable)} -m mdpoly.cc_wrapper \"$@\"\n")
    shim.chmod(0o755)
    return shim


def have_tool(name: str) -> bool:
    return shutil.which(name) is not None


def campaign_except(values: Iterable[Any], *quick: Any) -> list[Any]:
    """``values`` as parameters: those in ``quick`` run in the README's quick test command, the
    others are marked ``campaign`` (run by ``pytest -m campaign``, README.md "Run the tests")."""
    values = list(values)
    assert all(q in values for q in quick), (quick, values)
    return [pytest.param(v, marks=() if v in quick else pytest.mark.campaign) for v in values]
