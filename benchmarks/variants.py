"""Build and time the C variants of a benchmark kernel: source + sizes -> :class:`Measurement`.

Variants: the original at ``-O3 -march=native`` (sequential), the original with a plain
``#pragma omp parallel for`` on the kernel's outermost loop (the thesis's OpenMP baseline), and
mdpoly's output. A failing step yields a ``failed`` measurement with the reason, never an
exception.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KERNEL_BEGIN = "BENCH-KERNEL-BEGIN"
OMP_CLAUSE_MARK = "BENCH-OMP:"
CC = os.environ.get("CC", "cc")
OPT_FLAGS = ("-O3", "-march=native")
KERNELS_INCLUDE = Path(__file__).resolve().parent / "kernels"   # bench_common.h, for generated sources


@dataclass(frozen=True)
class Measurement:
    """One variant's result: ``status`` is ``ok``, ``failed`` or ``wrong`` (checksum differs)."""

    variant: str
    status: str
    seconds: float | None = None
    checksum: float | None = None
    detail: str = ""
    magnitude: float | None = None     # sum of the outputs' absolute values (scales the tolerance)


class StepError(Exception):
    """A build or run step failed; the message says which and why, briefly."""


def run_cmd(cmd: list[str], *, timeout: float, env: dict[str, str] | None = None) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired as exc:
        raise StepError(f"timeout after {timeout:g}s: {Path(cmd[0]).name}") from exc
    if proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
        raise StepError(f"{Path(cmd[0]).name} exit {proc.returncode}: {tail[:200]}")
    return proc.stdout


def insert_omp_pragma(text: str) -> str:
    """Put ``#pragma omp parallel for`` (or the ``BENCH-OMP:`` clause) before the kernel's first for."""
    lines = text.splitlines(keepends=True)
    clause = "parallel for"
    for start, line in enumerate(lines):
        if KERNEL_BEGIN in line:
            break
    else:
        raise StepError(f"no {KERNEL_BEGIN} marker")
    for number in range(start, len(lines)):
        line = lines[number]
        if OMP_CLAUSE_MARK in line:
            clause = line.split(OMP_CLAUSE_MARK, 1)[1].split("--")[0].strip(" */\n")
        if line.lstrip().startswith("for"):
            indent = line[: len(line) - len(line.lstrip())]
            lines.insert(number, f"{indent}#pragma omp {clause}\n")
            return "".join(lines)
    raise StepError("no for loop after the kernel marker")


def mdpoly_command() -> list[str]:
    override = os.environ.get("MDPOLY_COMMAND")
    if override:
        return shlex.split(override)
    return [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())"]


#: mdpoly's tuning flags per variant: ``mdpoly`` = heuristic defaults, ``mdpoly_tuned`` = auto-tuned
#: (the tuning cache makes reruns instant; ``MDPOLY_BENCH_TUNE`` overrides the budget flags).
TUNE_FLAGS = {"mdpoly": ("--no-tune",),
              "mdpoly_tuned": tuple(os.environ.get("MDPOLY_BENCH_TUNE", "--tune-time 60").split()),
              "opencl": ("--no-tune",),
              "opencl_tuned": tuple(os.environ.get("MDPOLY_BENCH_TUNE", "--tune-time 60").split())}

#: Variants rendered with ``--target opencl`` (run on the machine's OpenCL device, e.g. PoCL).
OPENCL_VARIANTS = ("opencl", "opencl_tuned")

#: What proves that mdpoly transformed the kernel, per target.
_TRANSFORMED_MARK = {"openmp": "#pragma omp", "opencl": "clEnqueueNDRangeKernel"}


def generate_mdpoly_source(source: Path, sizes: dict[str, int], out: Path, timeout: float,
                           flags: tuple[str, ...] = ("--no-tune",), target: str = "openmp") -> Path:
    cmd = [*mdpoly_command(), str(source), "-o", str(out), "--target", target, "-q", *flags]
    for name, value in sizes.items():
        cmd += ["-D", f"{name}={value}"]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    try:
        run_cmd(cmd, timeout=timeout, env=env)
    except StepError as exc:
        raise StepError(f"mdpoly: {exc}") from exc
    if not out.is_file():
        raise StepError("mdpoly wrote no output")
    if _TRANSFORMED_MARK[target] not in out.read_text():
        raise StepError("mdpoly left the kernel sequential")
    return out


def build(source: Path, sizes: dict[str, int], exe: Path, *, openmp: bool, reps: int, timeout: float,
          opencl: bool = False) -> Path:
    cmd = [CC, *OPT_FLAGS, *(["-fopenmp"] if openmp else []), f"-DREPS={reps}",
           *(f"-D{k}={v}" for k, v in sizes.items()), f"-I{source.parent}", f"-I{KERNELS_INCLUDE}",
           str(source), "-o", str(exe), *(["-lOpenCL"] if opencl else []), "-lm"]
    run_cmd(cmd, timeout=timeout)
    return exe


def time_program(exe: Path, timeout: float) -> tuple[float, float, float | None]:
    """Run a kernel program; return its (median seconds, checksum, magnitude)."""
    values = {}
    for line in run_cmd([str(exe)], timeout=timeout).splitlines():
        key, _, value = line.partition(" ")
        values[key] = float(value)
    if "median_s" not in values:
        raise StepError("program printed no median_s")
    return values["median_s"], values.get("checksum", float("nan")), values.get("magnitude")


def measure(variant: str, source: Path, sizes: dict[str, int], workdir: Path, *, reps: int,
            timeout: float) -> Measurement:
    """Build and time one C variant (``seq``, ``omp_for``, ``mdpoly`` or ``mdpoly_tuned``) of ``source``."""
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        if variant == "seq":
            exe = build(source, sizes, workdir / "seq", openmp=False, reps=reps, timeout=timeout)
        elif variant == "omp_for":
            variant_src = workdir / f"omp_for_{source.name}"
            variant_src.write_text(insert_omp_pragma(source.read_text()))
            exe = build(variant_src, sizes, workdir / "omp_for", openmp=True, reps=reps, timeout=timeout)
        elif variant in TUNE_FLAGS:
            opencl = variant in OPENCL_VARIANTS
            out = generate_mdpoly_source(source, sizes, workdir / f"{variant}_{source.name}", timeout,
                                         TUNE_FLAGS[variant], target="opencl" if opencl else "openmp")
            exe = build(out, sizes, workdir / variant, openmp=not opencl, opencl=opencl, reps=reps,
                        timeout=timeout)
        else:
            raise StepError(f"unknown variant {variant}")
        seconds, checksum, magnitude = time_program(exe, timeout)
    except StepError as exc:
        return Measurement(variant, "failed", detail=str(exc))
    return Measurement(variant, "ok", seconds, checksum, magnitude=magnitude)
