"""C as real programs write it (issue 21): every ``c_examples/real/*.c`` through mdpoly, differentially.

Each program (a transformer step with a KV cache, an image pipeline, a 3-D heat stencil with
index temporaries, ..., see ``c_examples/real/README.md``) is built as written (``cc -O2``, no
OpenMP: its own ``#pragma omp`` lines are ignored, as in a sequential build) and through
``mdpoly --no-tune`` (and ``--no-tune --all-nests``, so that nests too small to repay threads
are transformed too), built with ``cc -O2 -fopenmp`` (the program's own pragmas now active next
to mdpoly's code) and run at 1 to 4 threads. Integer checksums must be equal, float checksums
within the program's tolerance (``benchmarks/real_c_programs.py``: maps tight, reassociated
reductions to their rounding). mdpoly must exit 0 and its ``--report`` must list every
outermost loop of every function, transformed or kept with a reason. How many nests are
transformed is printed, not asserted (``python benchmarks/real_c_coverage.py`` shows the table).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
from e2e_harness import REPO, StepFailed, build_c, child_env, mdpoly_available, mdpoly_command, run_program, run_step

pytestmark = pytest.mark.skipif(not mdpoly_available() or shutil.which("cc") is None,
                                reason="mdpoly code generation or a C compiler is missing")

THREADS = (1, 2, 3, 4)
MODES = {"no-tune": ("--no-tune",), "all-nests": ("--no-tune", "--all-nests")}


def _load_programs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_c_programs", REPO / "benchmarks" / "real_c_programs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module     # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


RC = _load_programs()
_REFERENCES: dict[str, str] = {}


def _reference(program: object, tmp: Path) -> str:
    """The sequential original's output (built once per program)."""
    name = program.name    # type: ignore[attr-defined]
    if name not in _REFERENCES:
        exe = build_c(program.path, tmp / "orig", {}, openmp=False)    # type: ignore[attr-defined]
        _REFERENCES[name] = run_program(exe)
    return _REFERENCES[name]


def test_every_program_is_listed() -> None:
    """A program added to ``c_examples/real`` gets tolerances and benchmark sizes in the table."""
    assert {p.stem for p in RC.REAL_DIR.glob("*.c")} == set(RC.PROGRAMS_BY_NAME)
    readme = (RC.REAL_DIR / "README.md").read_text()
    assert all(f"`{name}.c`" in readme for name in RC.PROGRAMS_BY_NAME)


def test_checksum_comparison_catches_a_wrong_value() -> None:
    """The comparator is strict where it must be: one map value off, one integer off."""
    prog = RC.PROGRAMS_BY_NAME["heat3d"]
    ref = RC.parse_output("checksum temperature 1.0522972751e+07 7.3654353728e+07 1.0522972751e+07\n"
                          "checksum energy 3.3877945022e+05 3.3877945022e+05 3.3877945022e+05\n")
    off = RC.parse_output("checksum temperature 1.0522973751e+07 7.3654353728e+07 1.0522972751e+07\n"
                          "checksum energy 3.3877945022e+05 3.3877945022e+05 3.3877945022e+05\n")
    assert RC.compare(ref, ref, prog) is None
    assert RC.compare(off, ref, prog) is not None
    ints = RC.parse_output("ichecksum edges 74350\n")
    assert RC.compare(RC.parse_output("ichecksum edges 74351\n"), ints, RC.PROGRAMS_BY_NAME["image_pipeline"])


def test_openmp_variant_from_markers() -> None:
    text = "int f(void)\n{\n    // BENCH-OMP: #pragma omp parallel for reduction(+:s)\n    for (;;) ;\n}\n"
    assert RC.openmp_source(text) == "int f(void)\n{\n    #pragma omp parallel for reduction(+:s)\n    for (;;) ;\n}\n"
    assert RC.openmp_source("#pragma omp parallel for\n") == "#pragma omp parallel for\n"
    assert RC.openmp_source("int x;\n") is None


@pytest.mark.parametrize("name", [p.name for p in RC.PROGRAMS])
def test_program_is_free_of_undefined_behaviour(name: str, tmp_path: Path) -> None:
    """Each program as written runs cleanly under ASan and UBSan (a valid reference)."""
    program = RC.PROGRAMS_BY_NAME[name]
    exe = tmp_path / "san"
    run_step(["cc", "-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", str(program.path),
              "-o", str(exe), "-lm"])
    proc = run_step([str(exe)], env=child_env(ASAN_OPTIONS="detect_leaks=1"))
    assert not proc.stderr.strip(), proc.stderr[-3000:]
    RC.parse_output(proc.stdout)


#: the programs whose ``--no-tune`` run is in the README's quick test command; ``--all-nests`` and the
#: others are marked ``campaign`` (README.md "Run the tests")
QUICK = {"blocked_gemm", "heat3d", "kmeans", "lbm_d2q9", "nbody", "q8_matvec", "shallow_water", "transformer"}


@pytest.mark.parametrize(("name", "mode"), [
    pytest.param(p.name, mode, id=f"{p.name}-{mode}",
                 marks=() if mode == "no-tune" and p.name in QUICK else pytest.mark.campaign)
    for p in RC.PROGRAMS for mode in MODES])
def test_real_program(name: str, mode: str, tmp_path: Path) -> None:
    program = RC.PROGRAMS_BY_NAME[name]
    ref_text = _reference(program, tmp_path)
    ref = RC.parse_output(ref_text)

    out, report = tmp_path / "out.c", tmp_path / "report.json"
    cmd = [*mdpoly_command(), str(program.path), "-o", str(out), "--report", str(report), *MODES[mode]]
    try:
        proc = run_step(cmd, env=child_env(), timeout=600)
    except StepFailed as exc:
        pytest.fail(f"mdpoly failed on {name}.c:\n{exc}")
    cov = RC.coverage(RC.read_report(report), RC.outermost_loops(program.path))
    print(f"{name} [{mode}]: {cov.transformed}/{cov.reported} nests transformed, "
          f"{cov.parts_parallel}/{cov.parts} computations parallel; kept: {dict(cov.kept)}")
    assert not cov.missing, f"{name}.c: loops missing from --report: {cov.missing}\n{proc.stderr[-3000:]}"

    exe = build_c(out, tmp_path / "par", {}, openmp=True)
    for threads in THREADS:
        got = RC.parse_output(run_program(exe, threads=threads))
        diff = RC.compare(got, ref, program)
        assert diff is None, f"{name}.c [{mode}] at OMP_NUM_THREADS={threads}: {diff}\n{proc.stderr[-3000:]}"


#: the moment sums of lbm_d2q9's collision, and the same sums with the q loop reversed
_LBM_MOMENTS = "                for (int q = 0; q < Q; q++) {\n                    rho += f[q];"
_LBM_MOMENTS_REVERSED = "                for (int q = Q - 1; q >= 0; q--) {\n                    rho += f[q];"


def test_lbm_strict_fp_is_exact(tmp_path: Path) -> None:
    """lbm_d2q9 with ``--strict-fp``: every transformed nest is a map or an ordered sum, so every
    checksum equals the sequential original's (``TIGHT_RTOL``) at 1 to 4 threads; the ``uy``
    difference of the default build comes from reassociating the moment sums alone."""
    program = RC.PROGRAMS_BY_NAME["lbm_d2q9"]
    ref = RC.parse_output(_reference(program, tmp_path))
    out = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(program.path), "-o", str(out), "--no-tune", "--all-nests",
                     "--strict-fp"], env=child_env(), timeout=600)
    assert "--strict-fp forbids reassociating" in proc.stderr
    exact = RC.RealProgram(program.name, program.bench_args, tight=frozenset(ref.floats))
    exe = build_c(out, tmp_path / "par", {}, openmp=True)
    for threads in THREADS:
        diff = RC.compare(RC.parse_output(run_program(exe, threads=threads)), ref, exact)
        assert diff is None, f"lbm_d2q9.c --strict-fp at OMP_NUM_THREADS={threads}: {diff}"


def test_lbm_tolerance_covers_reassociation(tmp_path: Path) -> None:
    """The sequential original with its moment sums added in reverse order is within the
    program's tolerances (and outside the default 1e-4 for ``uy``): the looser ``uy`` bound is
    the rounding of a reassociated sum, not room for a wrong transformation."""
    program = RC.PROGRAMS_BY_NAME["lbm_d2q9"]
    ref = RC.parse_output(_reference(program, tmp_path))
    text = program.path.read_text()
    assert text.count(_LBM_MOMENTS) == 1
    src = tmp_path / "reversed.c"
    src.write_text(text.replace(_LBM_MOMENTS, _LBM_MOMENTS_REVERSED))
    got = RC.parse_output(run_program(build_c(src, tmp_path / "rev", {}, openmp=False)))
    assert RC.compare(got, ref, program) is None
    assert RC.compare(got, ref, RC.RealProgram(program.name, program.bench_args)) is not None
